"""Config Connector's spellings of our field names, derived from its CRD paths.

Config Connector's direct Kinds spell the API's names Go's way: ``imageURI``
for ``imageUri``, ``ruleID`` for ``ruleId``, ``sizeGB`` for ``sizeGb``,
``graphQLOperationGroup`` for ``graphqlOperationGroup``. Its users' manifests
use those names, so each is served as an alias (stage 8), moved to our field
before anything reads the spec. The evidence is data: every spec path of
Config Connector's CRD (``fields`` in specs/kcc/evidence.yaml); no Kind needs a
kind-config entry. A path is respelled only where it differs from one of ours
in letter case alone, under a parent both spell alike: a renamed parent's own
sub-fields come with it (the alias has our type), and one respelled below a
renamed parent is left to a kind config (it would need ``items``).

Config Connector's types are one per API message, so a class respelled on one
path is respelled on every path of ours that reaches it: the alias classes
(``...Kcc``) are shared, and the runtime moves the value wherever one is.
"""

from __future__ import annotations

from collections.abc import Iterator

from kccgen.generator.ir.model import FieldIR, ModelSet, ObjectIR, TypeIR
from kccgen.generator.spec.claims import KindEvidence
from kccgen.generator.spec.kinds import AliasConfig

REASON = "Config Connector's spelling of the API field (its CRD's path, specs/kcc/evidence.yaml fields)"


def _object(t: TypeIR, objects: dict[str, ObjectIR]) -> tuple[ObjectIR | None, bool]:
    """The class a field's type holds, and whether it is a list's element."""
    if t.kind == "array" and t.item is not None and t.item.kind == "object":
        return objects.get(t.item.ref or ""), True
    if t.kind == "object":
        return objects.get(t.ref or ""), False
    return None, False


def _paths_to(spec: ObjectIR, objects: dict[str, ObjectIR]) -> Iterator[tuple[str, str, ObjectIR]]:
    """(KRM path, API path, class) of every object reachable from the spec through
    objects and lists (not maps: an alias cannot step into one), each class once per chain."""
    stack: list[tuple[ObjectIR, str, str, frozenset[str]]] = [(spec, "", "", frozenset({spec.name}))]
    while stack:
        obj, krm, api, seen = stack.pop()
        yield krm, api, obj
        for f in obj.fields:
            child, listed = _object(f.type, objects)
            if child is None or child.name in seen:
                continue
            step = "[]" if listed else ""
            k = f"{krm}.{f.name}{step}" if krm else f"{f.name}{step}"
            a = f"{api}.{f.api_name or f.name}{step}" if api else f"{f.api_name or f.name}{step}"
            stack.append((child, k, a, seen | {child.name}))


def _class_at(spec: ObjectIR, objects: dict[str, ObjectIR], path: str) -> ObjectIR | None:
    """The class at a KRM path (``a.b[]``), None where it is no object of ours."""
    obj: ObjectIR | None = spec
    for part in path.split(".") if path else ():
        name = part.removesuffix("[]")
        f = next((g for g in obj.fields if g.name == name), None) if obj is not None else None
        if f is None:
            return None
        child, listed = _object(f.type, objects)
        if listed != part.endswith("[]"):
            return None
        obj = child
    return obj


def _krm_paths(spec: ObjectIR, objects: dict[str, ObjectIR]) -> set[str]:
    out: set[str] = set()
    for krm, _, obj in _paths_to(spec, objects):
        out |= {f"{krm}.{f.name}" if krm else f.name for f in obj.fields}
    return out


def krm_paths(spec: ObjectIR, models: ModelSet) -> set[str]:
    """Every spec path our CRD takes (relative to spec, ``[]`` list items; maps not
    entered), in Config Connector's evidence notation."""
    return _krm_paths(spec, {o.name: o for o in models.objects})


def _recursive(objects: dict[str, ObjectIR]) -> frozenset[str]:
    """The classes that reach themselves through their fields (a metadata template's arrayItems)."""

    def children(name: str) -> set[str]:
        o = objects.get(name)
        out: set[str] = set()
        for f in o.fields if o is not None else ():
            t: TypeIR | None = f.type
            while t is not None and t.kind in ("array", "map"):
                t = t.item
            if t is not None and t.kind == "object" and t.ref:
                out.add(t.ref)
        return out

    looped: set[str] = set()
    for name in objects:
        seen, todo = set(), list(children(name))
        while todo:
            c = todo.pop()
            if c == name:
                looped.add(name)
                break
            if c not in seen:
                seen.add(c)
                todo += children(c)
    return frozenset(looped)


def kcc_spellings(kcc: KindEvidence | None, spec: ObjectIR, models: ModelSet, configured: tuple[AliasConfig, ...]) -> tuple[AliasConfig, ...]:
    """The aliases for Config Connector's case-only respellings of our spec fields,
    in path order; none that a kind config already lists or that would take the
    place of a field of ours."""
    if kcc is None or not kcc.fields:
        return ()
    objects = {o.name: o for o in models.objects}
    ours = _krm_paths(spec, objects)
    looped = _recursive(objects)
    taken = {a.field for a in configured} | {a.api_field for a in configured if a.api_field}
    # (class, Config Connector's leaf) -> our field: one respelling per class
    renames: dict[tuple[str, str], FieldIR] = {}
    for path in sorted(set(kcc.fields) - ours, key=lambda p: (p.count("."), p)):
        if "*" in path:
            continue
        parent, _, leaf = path.rpartition(".")
        if parent and parent.removesuffix("[]") not in ours:
            continue  # under a field we lack or spell otherwise
        holder = _class_at(spec, objects, parent)
        if holder is None or holder.name in looped or any(f.name == leaf for f in holder.fields):
            continue  # (a class that holds itself: its alias copy would move where the CRD cuts the recursion)
        same = [f for f in holder.fields if f.name.lower() == leaf.lower()]
        if len(same) == 1:
            renames[(holder.name, leaf)] = same[0]
    out: dict[str, AliasConfig] = {}
    for krm, api, obj in _paths_to(spec, objects):
        for (cls, leaf), f in sorted(renames.items()):
            if cls != obj.name:
                continue
            field = f"{krm}.{leaf}" if krm else leaf
            api_field = f"{api}.{f.api_name or f.name}" if api else (f.api_name or f.name)
            if field in taken or api_field in taken or field in out:
                continue
            out[field] = AliasConfig.model_validate({"field": field, "apiField": api_field, "reason": REASON})
    return tuple(out[k] for k in sorted(out))
