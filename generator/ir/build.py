"""Build the IR from loaded specs, in named stages.

select_kinds -> api_models -> identity -> methods -> krm_projection.
Each stage only reads what earlier stages produced; the result is frozen.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kccgen.discovery.behaviours import Behaviour as B
from kccgen.discovery.document import DiscoveryDoc, Resource
from kccgen.discovery.errors import SpecError, json_path
from kccgen.discovery.paths import rest_template
from kccgen.generator.diagnostics import Reporter
from kccgen.generator.ir.api_models import build_api_models
from kccgen.generator.ir.identity import choose_asset_format, resolve_identity
from kccgen.generator.ir.krm import KrmProjector, identity_fields, override_facts, ref_placeholder
from kccgen.generator.ir.methods import resolve_methods
from kccgen.generator.ir.model import (
    IR,
    ApiModule,
    FieldIR,
    Identity,
    KindIR,
    Methods,
    ModelSet,
    ObjectIR,
    TargetKind,
)
from kccgen.generator.ir.mutability import build_mutability
from kccgen.generator.ir.references import TargetIndex, infer_references
from kccgen.generator.naming import api_module, plural_kind, snake
from kccgen.generator.spec.kinds import KindConfig, KindsFile
from kccgen.generator.spec.loader import Specs


@dataclass(frozen=True)
class Selected:
    file: str
    index: int
    kfile: KindsFile
    cfg: KindConfig
    doc: DiscoveryDoc
    resource: Resource


def select_kinds(specs: Specs, strict: bool = True, reporter: Reporter | None = None) -> list[Selected]:
    """Stage 1: resolve every configured Kind to its Discovery resource.

    ``strict=False`` (used to read older Discovery documents for the lag
    report) skips a Kind whose document or resource is missing, with a warning.
    """
    out: list[Selected] = []
    seen: dict[str, str] = {}
    for file, kf in specs.kinds:
        key = f"{kf.api}.{kf.version}"
        if key not in specs.discovery:
            where = sorted(specs.discovery_files.values())
            ddir = where[0].rsplit("/", 1)[0] if where else "the discovery directory"
            err = SpecError(file, "/version", f"no Discovery document {key} in {ddir} (have: {', '.join(sorted(specs.discovery))})")
            if strict:
                raise err
            if reporter is not None:
                reporter.warn(file, "lenient", str(err))
            continue
        doc = specs.discovery[key]
        for i, cfg in enumerate(kf.kinds):
            if cfg.kind in seen:
                raise SpecError(file, json_path("kinds", i, "kind"), f"Kind {cfg.kind} is already defined in {seen[cfg.kind]}")
            seen[cfg.kind] = file
            try:
                res = doc.resource(cfg.resource, file, json_path("kinds", i, "resource"))
            except SpecError as e:
                if strict:
                    raise
                if reporter is not None:
                    reporter.warn(file, "lenient", str(e))
                continue
            out.append(Selected(file, i, kf, cfg, doc, res))
    return sorted(out, key=lambda s: s.cfg.kind)


def _package(kf: KindsFile, cfg: KindConfig) -> str:
    return f"{snake(kf.service)}/{cfg.krm_version}"


def build_ir(specs: Specs, reporter: Reporter | None = None, strict: bool = True) -> IR:
    """The IR of ``specs``. ``strict=False`` turns kind-config mismatches with the
    Discovery documents into warnings: the lag report reads older documents
    with today's kind configs, where such mismatches are expected."""
    reporter = reporter or Reporter()

    def problem(err: SpecError) -> None:
        if strict:
            raise err
        reporter.warn(f"{err.file}#{err.path}", "lenient", err.message)

    selected = select_kinds(specs, strict, reporter)

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
    identities = {}
    for s in selected:
        m, schema = shapes[s.cfg.kind]
        raw_get = s.resource.methods[m.get.name]
        identity = resolve_identity(s.file, s.index, s.cfg, s.doc, raw_get, schema, specs.asset_names, prelim)
        for d in identity.disagreements:
            reporter.warn(f"{s.file}#{json_path('kinds', s.index)}", "identity", f"{s.cfg.kind}: {d}")
        identities[s.cfg.kind] = identity
    targets = _targets(specs, selected, identities)
    index = TargetIndex(targets, specs.asset_names)
    by_kind = {t.kind: t for t in targets}

    kinds: list[KindIR] = []
    for s in selected:
        m, schema = shapes[s.cfg.kind]
        identity = identities[s.cfg.kind]
        pkg = _package(s.kfile, s.cfg)
        mod = api_modules[(s.doc.key, pkg)]
        res_class = class_of[(s.doc.key, pkg)][schema]
        overrides = override_facts(s.cfg, s.file)
        api_res = mod.models.object(res_class)
        known = {f.name for f in api_res.fields}
        for path in sorted(overrides):
            if path.split(".")[0] not in known:
                problem(SpecError(s.file, json_path("kinds", s.index, "fields", path), f"{s.cfg.kind}: {schema} has no field {path.split('.')[0]!r}"))
                overrides.pop(path)
        drop = frozenset(f.name for f in api_res.fields if f.name == "name" or B.IDENTIFIER in f.behaviours)

        # Stage 5: references.
        inf = infer_references(s.cfg.kind, mod.models, res_class, s.cfg, index, overrides, drop)
        for msg in inf.bad_targets:
            problem(SpecError(s.file, json_path("kinds", s.index, "references", msg.split(":")[0], "target"), f"{s.cfg.kind}: {msg}"))
        for p in inf.unused_config:
            problem(SpecError(s.file, json_path("kinds", s.index, "references", p), f"{s.cfg.kind}: {p!r} is not a string field of {schema} reachable from spec (list steps are written field[])"))
        if inf.unclassified:
            problem(SpecError(
                s.file,
                json_path("kinds", s.index, "references"),
                f"{s.cfg.kind}: {len(inf.unclassified)} field(s) look like references but are not classified; "
                f"add references.<path>: {{target: <Kind>|none, reason: ...}}: " + "; ".join(inf.unclassified),
            ))

        # Stage 6: KRM projection.
        proj = KrmProjector(s.cfg.kind, mod.models, res_class, overrides, inf.decisions)
        spec_name = proj.project(res_class, "spec", "", drop)
        obs_name = proj.project(res_class, "observed", "", drop)
        assert spec_name is not None
        id_fields, parent_refs = identity_fields(s.cfg.kind, identity)
        spec_obj = proj.objects[spec_name]
        spec_obj = ObjectIR(spec_obj.name, spec_obj.description, (*id_fields, *spec_obj.fields), spec_obj.source, open=False)
        if obs_name is None:
            obs_obj = ObjectIR(f"{s.cfg.kind}ObservedState", f"The observed state of the {s.cfg.kind}.", (), api_res.source)
        else:
            obs_obj = proj.objects[obs_name]
        for r in parent_refs:
            if r.target not in by_kind:
                raise SpecError(
                    s.file,
                    json_path("kinds", s.index, "parents"),
                    f"{s.cfg.kind}: parent {r.krm_path} refers to {r.target}, which is neither a generated Kind "
                    f"nor declared in {specs.external_kinds_file}",
                )
        references = [
            replace(r, external_only=not (by_kind[r.target].ours or by_kind[r.target].by_name)) for r in parent_refs
        ] + sorted(inf.references, key=lambda r: r.krm_path)
        ref_classes = sorted(proj.ref_classes | {f"{r.target}Ref" for r in parent_refs})
        objs = {o.name: o for o in proj.objects.values()}
        objs[spec_obj.name] = spec_obj
        objs[obs_obj.name] = obs_obj
        for rc in ref_classes:
            objs[rc] = ref_placeholder(rc.removesuffix("Ref"))
        krm_models = ModelSet(tuple(objs[k] for k in sorted(objs)), proj.model_set().enums)

        # Stage 7: mutability table.
        mutability = build_mutability(s.cfg.kind, f"{s.doc.key} {s.cfg.resource}", krm_models, spec_obj, obs_obj, m, identity, frozenset(ref_classes))
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
                package=pkg,
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
                references=tuple(references),
                mutability=mutability,
                ref_imports=tuple(sorted((by_kind[c.removesuffix("Ref")].ref_module, c) for c in ref_classes)),
            )
        )
    return IR(
        api_modules=tuple(api_modules[k] for k in sorted(api_modules)),
        kinds=tuple(kinds),
        diagnostics=tuple(str(d) for d in reporter.sorted()),
        targets=targets,
    )


def _spec_fields(i: Identity) -> tuple[tuple[str, str, str], ...]:
    """Where each template param comes from in spec (for identity_from_spec)."""
    by_field = {p.krm_field: p.ref_kind or "" for p in i.params}
    out = []
    for p in i.params:
        if not p.in_template:
            continue
        field = p.covered_by or p.krm_field
        out.append((p.name, field, by_field.get(field, "")))
    return tuple(out)


def ref_module(package: str, kind: str) -> str:
    return f"kccgen.generated.{package.replace('/', '.')}.{kind.lower()}_reference"


def _targets(specs: Specs, selected: list[Selected], identities: dict[str, Identity]) -> tuple[TargetKind, ...]:
    """Every Kind a reference can point at: ours, then specs/external-kinds.yaml."""
    out: list[TargetKind] = []
    for s in selected:
        i = identities[s.cfg.kind]
        rest_t = i.rest_template
        out.append(
            TargetKind(
                kind=s.cfg.kind,
                template=i.template,
                domain=i.domain,
                ours=True,
                by_name=True,
                ref_module=ref_module(_package(s.kfile, s.cfg), s.cfg.kind),
                rest_host=i.rest_host,
                rest_prefix=i.rest_prefix,
                rest_template=rest_t if rest_t != i.template else "",
                extra_forms=i.extra_forms,
                spec_fields=_spec_fields(i),
                id_generation=i.id_generation,
            )
        )
    ours = {t.kind for t in out}
    for n, ek in enumerate(specs.external_kinds.kinds):
        where = json_path("kinds", n)
        if ek.kind in ours:
            raise SpecError(specs.external_kinds_file, where, f"{ek.kind} is generated by kccgen; remove it from external kinds")
        rows = specs.asset_names.for_type(ek.asset_type)
        if not rows:
            raise SpecError(specs.external_kinds_file, f"{where}/assetType", f"asset type {ek.asset_type!r} is not in the asset-inventory table")
        row = max(rows, key=lambda r: r.index)
        if ek.asset_format is not None:
            chosen = [r for r in rows if r.format == ek.asset_format]
            if not chosen:
                formats = ", ".join(r.format for r in rows)
                raise SpecError(specs.external_kinds_file, f"{where}/assetFormat", f"{ek.asset_format!r} is not a format of {ek.asset_type} (have: {formats})")
            row = chosen[0]
        out.append(
            TargetKind(
                kind=ek.kind,
                template=row.template,
                domain=row.domain,
                ours=False,
                by_name=ek.by_name,
                ref_module=ref_module("external", ek.kind),
                extra_forms=ek.external_forms,
                reason=ek.reason,
            )
        )
    return tuple(sorted(out, key=lambda t: t.kind))



def _raw_method(res: Resource, name: str):  # type: ignore[no-untyped-def]
    return res.methods[name]


__all__ = ["ApiModule", "FieldIR", "build_ir", "select_kinds"]
