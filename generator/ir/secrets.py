"""IR stage: Config Connector's sensitive fields, ``{value | valueFrom.secretKeyRef}``.

KCC spells a secret string (a password, a private key, a raw disk key) as an
object: ``value`` holds it literally, ``valueFrom.secretKeyRef`` names a key of
a Kubernetes Secret in the object's namespace; exactly one is set. Which fields
these are comes from KCC's CRDs (``sensitive`` in specs/kcc/evidence.yaml) or
a kind config's ``sensitive:`` entry. The stage runs on the finished KRM model:
the field's mutability row keeps the API's string type (the runtime resolves
the object to that string before the request), only the KRM type changes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from itertools import pairwise

from kccgen.generator.ir.model import FieldIR, ModelSet, ObjectIR, TypeIR
from kccgen.generator.spec.claims import KindEvidence
from kccgen.generator.spec.kinds import KindConfig

SECRET_VALUE = "SensitiveValue"
SECRET_FROM = "SensitiveValueFrom"
SECRET_KEY_REF = "SecretKeyRef"
#: The classes every Kind with a sensitive field shares: kccgen.runtime.krm defines
#: them (with the exactly-one check), the generated types module imports them.
SECRET_CLASSES = (SECRET_KEY_REF, SECRET_VALUE, SECRET_FROM)
SECRET_MODULE = "kccgen.runtime.krm"
SENSITIVE_NOTE = "Sensitive: give `value`, or `valueFrom.secretKeyRef` (a key of a Secret in the object's namespace)."

def secret_objects() -> tuple[ObjectIR, ...]:
    """The three classes, as the CRD schema and codegen need them."""
    s = TypeIR("string")
    src = "kccgen: Config Connector's sensitive field"
    key_ref = ObjectIR(
        SECRET_KEY_REF,
        "Reference to a value with the given key in the given Secret in the resource's namespace.",
        (
            FieldIR("key", s, "Key that identifies the value to be extracted.", (), src, required=True),
            FieldIR("name", s, "Name of the Secret to extract a value from.", (), src, required=True),
        ),
        src,
    )
    source = ObjectIR(SECRET_FROM, "Source for the field's value.", (FieldIR("secretKeyRef", TypeIR("object", ref=SECRET_KEY_REF), "Reference to a value with the given key in the given Secret in the resource's namespace.", (), src, required=True),), src)
    value = ObjectIR(
        SECRET_VALUE,
        "A sensitive string: given literally (value) or read from a Secret (valueFrom); exactly one is set.",
        (
            FieldIR("value", s, "Value of the field. Cannot be used if 'valueFrom' is specified.", (), src),
            FieldIR("valueFrom", TypeIR("object", ref=SECRET_FROM), "Source for the field's value. Cannot be used if 'value' is specified.", (), src),
        ),
        src,
        exactly_one=("value", "valueFrom"),
    )
    return key_ref, source, value


def requested(cfg: KindConfig, kcc: KindEvidence | None) -> dict[str, str]:
    """KRM spec path (``a.b``, ``a[].b``) -> why it is sensitive."""
    out = {p.removeprefix("spec."): "Config Connector's CRD" for p in (kcc.sensitive if kcc is not None else ())}
    if cfg.sensitive is not None:
        out.update(dict.fromkeys(cfg.sensitive.fields, f"kind config: {cfg.sensitive.reason}"))
    return out


def _locate(spec: ObjectIR, objs: dict[str, ObjectIR], path: str) -> tuple[list[tuple[str, str]], TypeIR] | str:
    """The (class, field) steps a KRM path takes (``x[]`` steps into a list's items,
    ``*`` into a map's values) and the type it ends at, or why it reaches no field."""
    cls, parts, i = spec.name, path.split("."), 0
    steps: list[tuple[str, str]] = []
    while True:
        part = parts[i]
        o = objs.get(cls)
        f = next((x for x in o.fields if x.name == part.removesuffix("[]")), None) if o is not None else None
        if f is None:
            return f"no field {part!r} there"
        steps.append((cls, f.name))
        t: TypeIR | None = f.type
        if part.endswith("[]"):
            t = f.type.item if f.type.kind == "array" else None
        i += 1
        if i < len(parts) and parts[i] == "*" and t is not None:
            t, i = (t.item if t.kind == "map" else None), i + 1
        if t is None:
            return f"{part} is no list or map"
        if i == len(parts):
            return steps, t
        if t.kind != "object" or t.ref is None:
            return f"{part} holds no object"
        cls = t.ref


def _retarget(t: TypeIR, ref: str) -> TypeIR:
    """``t`` (an object, or a list or map of them) naming class ``ref`` instead."""
    return replace(t, item=_retarget(t.item, ref)) if t.item is not None else replace(t, ref=ref)


@dataclass(frozen=True)
class Secrets:
    spec: ObjectIR
    models: ModelSet
    paths: tuple[str, ...]  # every KRM spec path holding a SensitiveValue, [] for list items
    skipped: tuple[tuple[str, str], ...] = ()  # (wanted path, why it stays as it is)


def apply_secrets(spec: ObjectIR, models: ModelSet, wanted: dict[str, str]) -> Secrets:
    """Each wanted string field becomes a SensitiveValue; one that is no string field
    of the spec (Config Connector's own names, a list, an object) is left as it is,
    in ``skipped``. Only the wanted paths change: a class other paths share is
    copied for them."""
    objs = {o.name: o for o in models.objects}
    objs[spec.name] = spec
    chains: dict[str, tuple[list[tuple[str, str]], str]] = {}  # path -> its steps, why
    skipped: list[tuple[str, str]] = []
    for path, why in sorted(wanted.items()):
        at = _locate(spec, objs, path)
        if isinstance(at, str):
            skipped.append((path, f"sensitive field spec.{path} ({why}): {at}; left as it is"))
        elif at[1].kind != "string":
            skipped.append((path, f"sensitive field spec.{path} ({why}) is a {at[1].kind}, not a string; left as it is"))
        else:
            chains[path] = (at[0], why)
    clash = [c for c in SECRET_CLASSES if c in objs]
    if clash:
        why = f"the Kind already has a class {', '.join(clash)}; left as a string"
        skipped += [(p, f"sensitive field spec.{p}: {why}") for p in chains]
        chains = {}
    if not chains:
        return Secrets(spec, models, (), tuple(skipped))
    # Only the wanted paths: a class shared with paths Config Connector keeps plain
    # (ComputeSnapshot's sourceInstantSnapshotEncryptionKey beside its
    # snapshotEncryptionKey) is copied as <Class>Sensitive for the wanted ones.
    uses = _uses(spec, objs)
    for steps, why in chains.values():
        leaf_cls, leaf = steps[-1]
        if {f"{u}.{leaf}" if u else leaf for u in uses.get(leaf_cls, {""})} <= set(chains):
            current = leaf_cls  # every path through the class is wanted: change it in place
        else:
            current = steps[0][0]
            for (_, fname), (nxt, _) in pairwise(steps):
                if len(uses.get(nxt, ())) > 1:
                    clone = f"{nxt}Sensitive"
                    objs.setdefault(clone, replace(objs[nxt], name=clone))
                    o = objs[current]
                    objs[current] = replace(o, fields=tuple(replace(f, type=_retarget(f.type, clone)) if f.name == fname else f for f in o.fields))
                    nxt = clone
                current = nxt
        o = objs[current]
        objs[current] = replace(
            o,
            fields=tuple(
                replace(f, type=TypeIR("object", ref=SECRET_VALUE), description=f"{f.description} {SENSITIVE_NOTE}".strip(), source=f"{f.source} (sensitive: {why})")
                if f.name == leaf and f.type.kind == "string"
                else f
                for f in o.fields
            ),
        )
    for o in secret_objects():
        objs[o.name] = o
    new_spec = objs[spec.name]
    return Secrets(new_spec, ModelSet(tuple(objs[k] for k in sorted(objs)), models.enums), tuple(sorted(_paths(new_spec, objs))), tuple(skipped))


def _object_fields(spec: ObjectIR, objs: dict[str, ObjectIR]) -> Iterator[tuple[str, str]]:
    """(KRM path from spec, class) of every object-typed field, once per path (no cycles)."""

    def walk(o: ObjectIR, prefix: str, stack: tuple[str, ...]) -> Iterator[tuple[str, str]]:
        for f in o.fields:
            path, t = f"{prefix}{f.name}", f.type
            while t.kind in ("array", "map") and t.item is not None:
                path += "[]" if t.kind == "array" else ".*"
                t = t.item
            if t.kind != "object" or t.ref is None:
                continue
            yield path, t.ref
            if t.ref in objs and t.ref not in stack:
                yield from walk(objs[t.ref], f"{path}.", (*stack, t.ref))

    return walk(spec, "", (spec.name,))


def _uses(spec: ObjectIR, objs: dict[str, ObjectIR]) -> dict[str, set[str]]:
    """Class -> the KRM paths (from spec) of the fields holding it."""
    out: dict[str, set[str]] = {}
    for path, cls in _object_fields(spec, objs):
        if cls in objs:
            out.setdefault(cls, set()).add(path)
    return out


def _paths(spec: ObjectIR, objs: dict[str, ObjectIR]) -> set[str]:
    """The KRM paths of the sensitive fields."""
    return {path for path, cls in _object_fields(spec, objs) if cls == SECRET_VALUE}
