"""Build the IR from loaded specs, in named stages.

select_kinds -> api_models -> identity -> methods -> krm_projection.
Each stage only reads what earlier stages produced; the result is frozen.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.diagnostics import Reporter, SpecError, json_path
from generator.ir.api_models import build_api_models
from generator.ir.behaviours import Behaviour as B
from generator.ir.identity import choose_asset_format, resolve_identity, rest_template
from generator.ir.krm import KrmProjector, identity_fields, override_facts
from generator.ir.methods import resolve_methods
from generator.ir.model import IR, ApiModule, FieldIR, KindIR, Methods, ModelSet, ObjectIR
from generator.naming import api_module, plural_kind, snake
from generator.spec.discovery import DiscoveryDoc, Resource
from generator.spec.kinds import KindConfig, KindsFile
from generator.spec.loader import Specs


@dataclass(frozen=True)
class Selected:
    file: str
    index: int
    kfile: KindsFile
    cfg: KindConfig
    doc: DiscoveryDoc
    resource: Resource


def select_kinds(specs: Specs) -> list[Selected]:
    """Stage 1: resolve every configured Kind to its Discovery resource."""
    out: list[Selected] = []
    seen: dict[str, str] = {}
    for file, kf in specs.kinds:
        key = f"{kf.api}.{kf.version}"
        if key not in specs.discovery:
            where = sorted(specs.discovery_files.values())
            ddir = where[0].rsplit("/", 1)[0] if where else "the discovery directory"
            raise SpecError(file, "/version", f"no Discovery document {key} in {ddir} (have: {', '.join(sorted(specs.discovery))})")
        doc = specs.discovery[key]
        for i, cfg in enumerate(kf.kinds):
            if cfg.kind in seen:
                raise SpecError(file, json_path("kinds", i, "kind"), f"Kind {cfg.kind} is already defined in {seen[cfg.kind]}")
            seen[cfg.kind] = file
            res = doc.resource(cfg.resource, file, json_path("kinds", i, "resource"))
            out.append(Selected(file, i, kf, cfg, doc, res))
    return sorted(out, key=lambda s: s.cfg.kind)


def _package(kf: KindsFile, cfg: KindConfig) -> str:
    return f"{snake(kf.service)}/{cfg.krm_version}"


def build_ir(specs: Specs, reporter: Reporter | None = None) -> IR:
    reporter = reporter or Reporter()
    selected = select_kinds(specs)

    # Stage 2: method shapes and resource schemas.
    shapes: dict[str, tuple[Methods, str]] = {}
    for s in selected:
        shapes[s.cfg.kind] = resolve_methods(s.file, s.index, s.cfg, s.doc, s.resource)

    # Stage 3: API payload models, one module per (document, KRM package).
    groups: dict[tuple[str, str], list[Selected]] = {}
    for s in selected:
        groups.setdefault((s.doc.key, _package(s.kfile, s.cfg)), []).append(s)
    api_modules: dict[tuple[str, str], ApiModule] = {}
    class_of: dict[tuple[str, str], dict[str, str]] = {}
    for (dkey, pkg), members in sorted(groups.items()):
        doc = members[0].doc
        roots: set[str] = set()
        create_ids: set[str] = set()
        for s in members:
            m, schema = shapes[s.cfg.kind]
            roots.add(schema)
            for mi in (m.get, m.create, m.update, m.delete):
                if mi is not None:
                    roots.update(x for x in (mi.request, mi.response) if x)
            if m.create is not None:
                create_ids.add(m.create.id)
        models, names = build_api_models(doc, roots, reporter, frozenset(create_ids))
        api_modules[(dkey, pkg)] = ApiModule(doc.name, doc.version, dkey, doc.revision, api_module(doc.name, doc.version), pkg, models)
        class_of[(dkey, pkg)] = names

    # Stage 4: identity (templates of all Kinds first, for parent inference).
    prelim: dict[str, str] = {}
    for s in selected:
        m, schema = shapes[s.cfg.kind]
        rest = rest_template(m.get.flat_path)
        row, _ = choose_asset_format(specs.asset_names.for_type(s.cfg.asset_type or f"{s.doc.host}/{schema}"), rest)
        prelim[s.cfg.kind] = row.template if row else rest

    kinds: list[KindIR] = []
    for s in selected:
        m, schema = shapes[s.cfg.kind]
        raw_get = _raw_method(s.resource, m.get.name)
        identity = resolve_identity(s.file, s.index, s.cfg, s.doc, raw_get, schema, specs.asset_names, prelim)
        for d in identity.disagreements:
            reporter.warn(f"{s.file}#{json_path('kinds', s.index)}", "identity", f"{s.cfg.kind}: {d}")

        # Stage 5: KRM projection.
        mod = api_modules[(s.doc.key, _package(s.kfile, s.cfg))]
        res_class = class_of[(s.doc.key, _package(s.kfile, s.cfg))][schema]
        overrides = override_facts(s.cfg, s.file)
        api_res = mod.models.object(res_class)
        known = {f.name for f in api_res.fields}
        for path in sorted(overrides):
            if path.split(".")[0] not in known:
                raise SpecError(s.file, json_path("kinds", s.index, "fields", path), f"{s.cfg.kind}: {schema} has no field {path.split('.')[0]!r}")
        proj = KrmProjector(s.cfg.kind, mod.models, res_class, overrides)
        drop = frozenset(f.name for f in api_res.fields if f.name == "name" or B.IDENTIFIER in f.behaviours)
        spec_name = proj.project(res_class, "spec", "", drop)
        obs_name = proj.project(res_class, "observed", "", drop)
        assert spec_name is not None
        id_fields, ref_objs = identity_fields(s.cfg.kind, identity)
        spec_obj = proj.objects[spec_name]
        spec_obj = ObjectIR(spec_obj.name, spec_obj.description, (*id_fields, *spec_obj.fields), spec_obj.source, open=False)
        if obs_name is None:
            obs_obj = ObjectIR(f"{s.cfg.kind}ObservedState", f"The observed state of the {s.cfg.kind}.", (), api_res.source)
        else:
            obs_obj = proj.objects[obs_name]
        objs = {o.name: o for o in proj.objects.values()}
        objs[spec_obj.name] = spec_obj
        objs[obs_obj.name] = obs_obj
        for r in ref_objs:
            objs[r.name] = r
        krm_models = ModelSet(tuple(objs[k] for k in sorted(objs)), proj.model_set().enums)
        api_fields = tuple(
            FieldIR(f.name, f.type, f.description, proj.facts(f, f.name), f.source, f.deprecated) for f in api_res.fields
        )
        short = s.cfg.short_names or (f"gcp{s.cfg.kind.lower()}", f"gcp{plural_kind(s.cfg.kind)}")
        kinds.append(
            KindIR(
                kind=s.cfg.kind,
                group=s.kfile.group,
                version=s.cfg.krm_version,
                plural=plural_kind(s.cfg.kind),
                short_names=tuple(short),
                package=_package(s.kfile, s.cfg),
                api=mod,
                resource=s.cfg.resource,
                resource_schema=res_class,
                description=s.cfg.description or api_res.description,
                identity=identity,
                methods=m,
                api_fields=api_fields,
                spec=spec_obj,
                observed_state=obs_obj,
                krm_models=krm_models,
                config_file=s.file,
            )
        )
    return IR(
        api_modules=tuple(api_modules[k] for k in sorted(api_modules)),
        kinds=tuple(kinds),
        diagnostics=tuple(str(d) for d in reporter.sorted()),
    )


def _raw_method(res: Resource, name: str):  # type: ignore[no-untyped-def]
    return res.methods[name]


__all__ = ["ApiModule", "FieldIR", "build_ir", "select_kinds"]
