"""Emit ``surface/<unit>.json``: the public surface of each Kind.

Users' manifests set spec paths and rely on their types, their references and
whether a change applies; the record lets the next generation tell a breaking
change from an additive one (generator/surface.py). It follows the CRD's spec
schema (the same walk over the Kind's KRM models, refs and recursion cut where
the CRD cuts them) and the mutability table's ``updatable``. Keys are sorted
and each path is one line, so a regeneration's diff reads path by path.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from kccgen.generator.ir.model import AliasIR, KindIR, MutabilityIR, ObjectIR, TypeIR
from kccgen.generator.ir.mutability import type_label

# Beside generated/, not in it: the generator reads it, the runtime never does,
# so it is not installed and not counted in generated/'s size per Kind.
SURFACE_DIR = "surface"


def parent_path(path: str) -> str:
    """``spec.a[].b`` -> ``spec.a``, ``spec.m.*.b`` -> ``spec.m``, ``spec.a`` -> ``spec``."""
    p = path.rsplit(".", 1)[0] if "." in path else ""
    while p.endswith("[]") or p.endswith(".*"):
        p = p[:-2]
    return p


def _container_suffix(t: TypeIR) -> tuple[TypeIR, str]:
    """The element type under arrays and maps, and the path suffix to it (``[]``, ``.*``)."""
    suffix = ""
    while t.kind in ("array", "map") and t.item is not None:
        suffix += "[]" if t.kind == "array" else ".*"
        t = t.item
    return t, suffix


def _aliased(path: str, aliases: Iterable[AliasIR]) -> str | None:
    """The path an alias field stands for (``spec.diskRef`` -> ``spec.sourceDiskRef``)."""
    for a in aliases:
        field = f"spec.{a.field}"
        if a.target and (path == field or path.startswith((field + ".", field + "["))):
            return f"spec.{a.target}{path.removeprefix(field)}"
    return None


def _mutable(path: str, rows: dict[str, MutabilityIR], aliases: tuple[AliasIR, ...]) -> bool:
    """Whether a change to ``path`` applies: its mutability row's ``updatable``; a
    path without a row (an alias, a secret's ``valueFrom``) takes its alias
    target's row or its nearest ancestor's; none at all: mutable."""
    for p in (_aliased(path, aliases), path):
        while p:
            row = rows.get(p)
            if row is not None:
                return row.updatable
            p = parent_path(p)
    return True


def kind_surface(k: KindIR) -> tuple[tuple[str, ...], dict[str, tuple[str, str, bool, str, bool]]]:
    """One Kind's record: served versions and, per spec path, (type, reference
    target, mutable, the API field it sends where that is not the path itself,
    deprecated: an alias kept for a path the API renamed)."""
    ref_classes = {cls for _, cls in k.ref_imports}
    rows = {m.path: m for m in k.mutability if m.path.startswith("spec.")}
    paths: dict[str, tuple[str, str, bool, str, bool]] = {}
    deprecated = {f"spec.{a.field}" for a in k.aliases if a.deprecated}

    alias_api = {f"spec.{a.field}": a.api_field for a in k.aliases if a.api_field}

    def api(path: str) -> str:
        row = rows.get(path)
        own = path.removeprefix("spec.")
        sent = row.api_path if row is not None and row.api_path else alias_api.get(path, "")
        return sent if sent != own else ""

    def walk(obj: ObjectIR, prefix: str, stack: tuple[str, ...]) -> None:
        for f in obj.fields:
            path = f"{prefix}.{f.name}"
            leaf, suffix = _container_suffix(f.type)
            is_ref = leaf.kind == "object" and leaf.ref in ref_classes
            target = (leaf.ref or "").removesuffix("Ref") if is_ref else ""
            paths[path] = (type_label(f.type), target, _mutable(path, rows, k.aliases), api(path), path in deprecated)
            if leaf.kind == "object" and leaf.ref is not None and not is_ref and leaf.ref not in stack:
                walk(k.krm_models.object(leaf.ref), path + suffix, (*stack, leaf.ref))

    walk(k.spec, "spec", (k.spec.name,))
    return tuple(sorted(k.served_versions)), dict(sorted(paths.items()))


def kind_sources(k: KindIR) -> tuple[str, str]:
    """Where a Kind comes from, as JSON paths into its Discovery document: the
    resource (``pubsub.v1#/resources/projects/resources/topics``) and its schema
    (``pubsub.v1#/schemas/Topic``). A changelog names them as each change's cause."""
    doc = k.api.doc_key
    return f"{doc}#/resources/" + "/resources/".join(k.resource.split(".")), f"{doc}#/schemas/{k.resource_schema}"


def path_value(type_: str, ref: str, mutable: bool, api: str = "", deprecated: bool = False) -> str:
    """A path's entry: ``object ref=KMSCryptoKey api=kmsKeyName``, ``string immutable``, ``array<string>``."""
    return type_ + (f" ref={ref}" if ref else "") + ("" if mutable else " immutable") + (f" api={api}" if api else "") + (" deprecated" if deprecated else "")


def parse_path_value(value: str) -> tuple[str, str, bool, str, bool]:
    """(type, reference target or "", mutable, API field or "", deprecated) from a path's entry; ValueError when malformed."""
    type_, *marks = value.split(" ")
    refs = [m.removeprefix("ref=") for m in marks if m.startswith("ref=")]
    apis = [m.removeprefix("api=") for m in marks if m.startswith("api=")]
    if not type_ or len(refs) > 1 or len(apis) > 1 or any(m not in ("immutable", "deprecated") and not m.startswith(("ref=", "api=")) for m in marks):
        raise ValueError(f"not a path entry: {value!r}")
    return type_, (refs[0] if refs else ""), "immutable" not in marks, (apis[0] if apis else ""), "deprecated" in marks


FORMAT = (
    "kccgen's record of each Kind's public surface (generator/emit/surface.py): served versions, and per spec path "
    "(lists [], map values .*) its type, ' ref=<Kind>' for a reference, ' immutable' when a change does not apply, "
    "' api=<field>' for the API field it sends where that is not the path, ' deprecated' for an alias kept for a path the API renamed; resource and schema: where the Kind is in its Discovery document"
)


def surface_source(kinds: tuple[KindIR, ...]) -> str:
    """The unit's record as JSON: keys sorted, one line per path."""
    out = ["{", f" {json.dumps('format')}: {json.dumps(FORMAT)},", ' "kinds": {']
    for i, k in enumerate(sorted(kinds, key=lambda k: k.kind)):
        served, paths = kind_surface(k)
        lines = [f"    {json.dumps(p)}: {json.dumps(path_value(*v))}" for p, v in paths.items()]
        resource, schema = kind_sources(k)
        out.append(f"  {json.dumps(k.kind)}: {{")
        out.append('   "paths": {' + ("\n" + ",\n".join(lines) + "\n   }," if lines else "},"))
        out.append(f'   "resource": {json.dumps(resource)},')
        out.append(f'   "schema": {json.dumps(schema)},')
        out.append(f'   "servedVersions": {json.dumps(list(served))}')
        out.append("  }" + ("," if i < len(kinds) - 1 else ""))
    out += [" }", "}"]
    return "\n".join(out) + "\n"


def surface_path(unit: str) -> str:
    return f"{SURFACE_DIR}/{unit}.json"
