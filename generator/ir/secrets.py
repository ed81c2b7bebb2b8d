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

from kccgen.contract import KRM_ONLY_SOURCE, SecretObject
from kccgen.generator.ir.model import FieldIR, ModelSet, MutabilityIR, ObjectIR, TypeIR
from kccgen.generator.ir.mutability import field_type, type_label
from kccgen.generator.spec.claims import KindEvidence
from kccgen.generator.spec.kinds import KindConfig, SecretObjectConfig

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
    byte_paths: tuple[str, ...] = ()  # the wanted ones whose API field is bytes (format byte): sent base64-encoded


def apply_secrets(spec: ObjectIR, models: ModelSet, wanted: dict[str, str]) -> Secrets:
    """Each wanted string field becomes a SensitiveValue; one that is no string field
    of the spec (Config Connector's own names, a list, an object) is left as it is,
    in ``skipped``. Only the wanted paths change: a class other paths share is
    copied for them."""
    objs = {o.name: o for o in models.objects}
    objs[spec.name] = spec
    chains: dict[str, tuple[list[tuple[str, str]], str]] = {}  # path -> its steps, why
    skipped: list[tuple[str, str]] = []
    byte_paths: list[str] = []
    for path, why in sorted(wanted.items()):
        at = _locate(spec, objs, path)
        if isinstance(at, str):
            skipped.append((path, f"sensitive field spec.{path} ({why}): {at}; left as it is"))
        elif at[1].kind != "string":
            skipped.append((path, f"sensitive field spec.{path} ({why}) is a {at[1].kind}, not a string; left as it is"))
        else:
            chains[path] = (at[0], why)
            if at[1].format == "byte":
                byte_paths.append(path)
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
    return Secrets(new_spec, ModelSet(tuple(objs[k] for k in sorted(objs)), models.enums), tuple(sorted(_paths(new_spec, objs))), tuple(skipped), tuple(sorted(byte_paths)))


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


SECRET_OBJECT_REF = "SecretObjectRef"


def secret_object_ref() -> ObjectIR:
    """The ``secretRef`` class: a Secret in the object's namespace, by name."""
    s = TypeIR("string")
    src = "kccgen: Config Connector's secretRef"
    return ObjectIR(
        SECRET_OBJECT_REF,
        "A Kubernetes Secret whose keys hold the values.",
        (
            FieldIR("name", s, "The `metadata.name` field of a Kubernetes `Secret`.", (), src, required=True),
            FieldIR("namespace", s, "The `metadata.namespace` field of a Kubernetes `Secret` (the object's own when unset).", (), src),
        ),
        src,
    )


@dataclass(frozen=True)
class SecretObjects:
    spec: ObjectIR
    models: ModelSet
    mutability: tuple[MutabilityIR, ...]
    objects: tuple[SecretObject, ...]
    problems: tuple[tuple[str, str], ...]  # (configured path, what is wrong)


def apply_secret_objects(spec: ObjectIR, models: ModelSet, mutability: tuple[MutabilityIR, ...], configs: dict[str, SecretObjectConfig]) -> SecretObjects:
    """Each configured object field gets a ``secretRef`` (a Secret whose keys give
    its string sub-fields), at most one of the two spellings per sub-field; a
    KRM-only mutability row per new path, changed as its sub-fields are."""
    objs = {o.name: o for o in models.objects}
    objs[spec.name] = spec
    rows = list(mutability)
    found: list[SecretObject] = []
    problems: list[tuple[str, str]] = []
    for path, c in sorted(configs.items()):
        at = _locate(spec, objs, path)
        if isinstance(at, str) or at[1].kind != "object" or at[1].ref not in objs:
            problems.append((path, at if isinstance(at, str) else f"{path} holds no object"))
            continue
        cls = objs[str(at[1].ref)]
        have = {f.name: f for f in cls.fields}
        bad = sorted(k for k in c.keys if k not in have or have[k].type.kind != "string")
        if bad or c.field in have:
            problems.append((path, f"{cls.name} has no string field {', '.join(bad)}" if bad else f"{cls.name} already has a field {c.field!r}"))
            continue
        desc = f"A Secret whose keys give {', '.join(f'{k} (key {v!r})' for k, v in sorted(c.keys.items()))}: set it, or those fields. {c.reason}"
        ref = FieldIR(c.field, TypeIR("object", ref=SECRET_OBJECT_REF), desc, (), f"kind config secretObjects.{path}")
        objs[cls.name] = replace(cls, fields=(*cls.fields, ref), at_most_one=(*cls.at_most_one, *((c.field, k) for k in sorted(c.keys))))
        found.append(SecretObject(path, tuple(sorted(c.keys.items())), c.field))
        like = next((r for r in rows if r.path == f"spec.{path}.{sorted(c.keys)[0]}"), None)
        for sub, t in ((c.field, TypeIR("object", ref=SECRET_OBJECT_REF)), (f"{c.field}.name", TypeIR("string")), (f"{c.field}.namespace", TypeIR("string"))):
            rows.append(
                MutabilityIR(
                    path=f"spec.{path}.{sub}",
                    api_path=None,
                    type=type_label(t),
                    field_type=field_type(t),
                    behaviours=(),
                    facts=(),
                    identity=False,
                    updatable=like.updatable if like is not None else False,
                    updatable_source=f"as {', '.join(f'{path}.{k}' for k in sorted(c.keys))}, which it fills" if like is not None else "no row for the fields it fills",
                    readable=False,
                    readable_source=KRM_ONLY_SOURCE,
                )
            )
    if found:
        objs[SECRET_OBJECT_REF] = secret_object_ref()
    return SecretObjects(objs[spec.name], ModelSet(tuple(objs[k] for k in sorted(objs)), models.enums), tuple(rows), tuple(found), tuple(problems))
