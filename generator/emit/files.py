"""Assemble every generated file: path -> content, in a fixed order."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from kccgen.generator.emit.adapters import (
    adapter_source,
    operations_home,
    operations_source,
    shared_operations,
)
from kccgen.generator.emit.crds import crd_path, crd_source, spec_required
from kccgen.generator.emit.mutability import mutability_source
from kccgen.generator.emit.references import reference_module_path, reference_source
from kccgen.generator.emit.surface import surface_path, surface_source
from kccgen.generator.emit.types import api_module_source, docstring_safe, kind_module_source
from kccgen.generator.ir.model import IR, ApiModule, KindIR, TargetKind, unit_names
from kccgen.generator.ir.secrets import SECRET_CLASSES, SECRET_MODULE, SECRET_VALUE
from kccgen.generator.naming import kind_types_module
from kccgen.generator.render import drop_classes, render, render_text, split_imports, used_imports

# (output path, module-level render function, its argument): picklable, so
# the CLI can spread the codegen-heavy jobs over processes.
Job = tuple[str, Callable[[Any], str], Any]


def _init_file(title: str) -> str:
    return render("__init__.py.j2", title=title)


def _api_file(arg: tuple[ApiModule, list[str]]) -> str:
    mod, kinds = arg
    imports, body = split_imports(api_module_source(mod))
    return render(
        "<api>_<apiversion>_api.py.j2",
        doc_key=mod.doc_key,
        revision=mod.revision,
        kinds=sorted(kinds),
        imports=imports,
        body=body,
    )


def shared_enums(k: KindIR) -> tuple[str, ...]:
    """Enums of the Kind module that its API module already defines, identically:
    the KRM projection reuses the API's enums, so the module imports them."""
    api = {e.name: e for e in k.api.models.enums}
    return tuple(sorted(e.name for e in k.krm_models.enums if api.get(e.name) == e))


def _kind_file(k: KindIR) -> str:
    imports, body = split_imports(kind_module_source(k))
    shared = shared_enums(k)
    secret = SECRET_CLASSES if k.secrets else ()
    body = drop_classes(body, {cls for _, cls in k.ref_imports} | set(shared) | set(secret))
    pkg = "kccgen.generated." + k.package.replace("/", ".")
    extra = {
        *(f"from {mod} import {cls}" for mod, cls in k.ref_imports),
        *(f"from {SECRET_MODULE} import {SECRET_VALUE}" for _ in secret[:1]),
        *(f"from {pkg}.{k.api.module} import {', '.join(shared)}" for _ in shared[:1]),
        "from typing import Annotated, ClassVar, Literal",
        "from pydantic import Field",
        "from kccgen.runtime.krm import KRMObject, KRMStatus",
        f"from {pkg} import {k.api.module}",
    }
    merged = sorted(set(imports) | extra)
    imports2, _ = split_imports("\n".join(merged) + "\n")
    first_line = docstring_safe((k.description.splitlines() or [k.kind])[0].strip()) or k.kind
    slots = {
        "kind": k.kind,
        "group": k.group,
        "version": k.version,
        # the apiVersions a manifest may carry: ours, then Config Connector's names (kccVersions)
        "api_versions": ", ".join(f'"{k.group}/{v}"' for v in k.served_versions),
        "config_file": k.config_file,
        "doc_key": k.api.doc_key,
        "resource": k.resource,
        "resource_schema": k.resource_schema,
        "api_module": k.api.module,
        "api_alias": f"{k.kind}API",
        "body": body,
        "description_line": f"{k.kind}: {first_line}",
        "spec_required": spec_required(k),
    }
    # Imports the module no longer uses (StrEnum once every enum is imported) go.
    text = render_text("<kind>_types.py.j2", imports=[], **slots)
    return render("<kind>_types.py.j2", imports=used_imports(imports2, text), **slots)


@dataclass(frozen=True)
class Unit:
    """One API's share of generated/ (or the shared part: package roots and
    references to Kinds we do not generate), with the slice of the IR its files
    read: its module, its Kinds and the targets they reference. A worker gets a
    slice, never the whole IR, and the slice's digest keys the render cache."""

    name: str  # the Discovery document key, or "_shared"
    ir: IR
    packages: tuple[str, ...]


def _packages(module: ApiModule) -> set[str]:
    parts = module.package.split("/")
    return {"generated/" + "/".join(parts[: i + 1]) for i in range(len(parts))}


def units(ir: IR) -> list[Unit]:
    """The IR cut per API document, in a fixed order."""
    by_kind = {t.kind: t for t in ir.targets}
    # One document can feed two packages (curated v1beta1 and derived v1alpha1 Kinds of
    # one API): each package is its own unit, holding only its Kinds, under its own name.
    members: dict[tuple[str, str], list[KindIR]] = {}
    for k in ir.kinds:
        members.setdefault((k.api.doc_key, k.api.package), []).append(k)
    # Cached units (not built this run) still count in the names of their document's units.
    names = unit_names([(m.doc_key, m.package) for m in ir.api_modules] + [(u.doc_key, u.package) for u in ir.cached])
    out = []
    for m in sorted(ir.api_modules, key=lambda m: (m.doc_key, m.package)):
        kinds = tuple(members.get((m.doc_key, m.package), ()))
        needed = {k.kind for k in kinds} | {cls.removesuffix("Ref") for k in kinds for _, cls in k.ref_imports}
        targets = tuple(by_kind[n] for n in sorted(needed) if n in by_kind)
        name = names[(m.doc_key, m.package)]
        out.append(Unit(name, IR(api_modules=(m,), kinds=kinds, targets=targets), tuple(sorted(_packages(m)))))
    external = tuple(t for t in ir.targets if not t.ours)
    shared = {"generated"} | ({"generated/external"} if external else set())
    out.append(Unit("_shared", IR(api_modules=(), kinds=(), targets=external), tuple(sorted(shared))))
    return out


def unit_jobs(u: Unit) -> Iterator[Job]:
    """Every file of one unit as a deferred job."""
    ir = u.ir
    for p in u.packages:
        title = "Generated Config Connector Kinds." if p == "generated" else f"Generated package {p.removeprefix('generated/')}."
        yield f"{p}/__init__.py", _init_file, title
    for m in ir.api_modules:
        yield f"generated/{m.package}/{m.module}.py", _api_file, (m, [k.kind for k in ir.kinds])
    for k in ir.kinds:
        yield f"generated/{k.package}/{kind_types_module(k.kind)}.py", _kind_file, k
    own = {k.kind for k in ir.kinds}
    for t in ir.targets:
        if t.kind in own or (not t.ours and not ir.kinds):
            yield reference_module_path(t), _reference_file, (ir, t)
    for k in ir.kinds:
        yield f"generated/{k.package}/{k.lower}_mutability.py", mutability_source, k
    for k in ir.kinds:
        yield crd_path(k), _crd_file, (ir, k)
    if ir.kinds:
        yield surface_path(u.name), surface_source, ir.kinds
    ops_module = ""  # where the unit's operation getters live, when its Kinds share them
    if shared_operations(ir.kinds) is not None:
        ops_path, ops_module = operations_home(ir.kinds)
        yield ops_path, operations_source, ir.kinds
    for k in ir.kinds:
        yield f"generated/{k.package}/{k.lower}_adapter.py", adapter_source, (k, ops_module)


def render_unit(u: Unit) -> dict[str, str]:
    """A unit's files, unformatted (the caller formats them with ruff)."""
    return {path: fn(arg) for path, fn, arg in unit_jobs(u)}


def jobs(ir: IR) -> Iterator[Job]:
    """Every file as a deferred job, each reading only its unit's slice."""
    for u in units(ir):
        yield from unit_jobs(u)


INDEX_PATH = "generated/kinds.json"


def index_entries(kinds: Iterable[KindIR]) -> dict[str, dict[str, Any]]:
    """Each Kind's entry in ``generated/kinds.json``."""
    return {
        k.kind: {
            "apiVersion": f"{k.group}/{k.version}",
            "servedVersions": list(k.served_versions),
            "crd": crd_path(k).removeprefix("generated/"),
            "module": f"{k.package.replace('/', '.')}.{k.lower}",
        }
        for k in kinds
    }


def index_source(ir: IR, cached: Mapping[str, Any] | None = None, policies: Mapping[str, Any] | None = None) -> str:
    """``generated/kinds.json``: every generated Kind -> its module stem, apiVersion and
    CRD file, so the runtime can list and find Kinds without importing a thousand
    modules (it imports one Kind's modules when that Kind is used). ``cached``: the
    entries of the Kinds of ``ir.cached`` units, kept by the render cache."""
    entries = {**(cached or {}), **index_entries(ir.kinds)}
    if set(entries) != ir.kind_names:
        raise RuntimeError(f"kinds.json: index entries do not match the Kinds ({len(entries)} entries, {len(ir.kind_names)} Kinds)")
    entries.update(policies or {})  # the IAM Kinds, which no document builds (generator/emit/policies.py)
    return json.dumps(entries, indent=1, sort_keys=True) + "\n"


def _crd_file(arg: tuple[IR, KindIR]) -> str:
    return crd_source(*arg)


def _reference_file(arg: tuple[IR, TargetKind]) -> str:
    return reference_source(*arg)
