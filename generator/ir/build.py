"""Build the IR from loaded specs, in named stages.

select_kinds -> resolve_shapes -> resolve_identities -> (per API unit) build_api_module ->
(per Kind) create_view -> references -> krm_projection -> mutability.
Each stage only reads what earlier stages produced; the result is frozen.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Protocol

from kccgen.contract import (
    Companion,
    CreateAtPath,
    CreateServiceAssigned,
    IamTarget,
    Present,
    Where,
    create_inputs,
    id_field,
    template_scope,
    write_only_routes,
)
from kccgen.discovery.behaviours import Behaviour as B
from kccgen.discovery.behaviours import Fact
from kccgen.discovery.document import DiscoveryDoc, Method, Resource, iter_resources
from kccgen.discovery.errors import SpecError, did_you_mean, json_path
from kccgen.documents import LOCK_NAME, preferred, split_key
from kccgen.generator.cache import digest
from kccgen.generator.diagnostics import Diagnostic, Reporter
from kccgen.generator.ir.aliases import build_aliases
from kccgen.generator.ir.api_models import build_api_models
from kccgen.generator.ir.candidates import derive
from kccgen.generator.ir.canonical import build_canonical
from kccgen.generator.ir.companions import resolve_companion
from kccgen.generator.ir.forms import build_forms
from kccgen.generator.ir.identity import (
    asset_rows,
    choose_asset_format,
    identity_rest,
    kcc_location,
    resolve_identity,
    rest_is_identity,
)
from kccgen.generator.ir.krm import KrmProjector, identity_fields, override_facts, ref_placeholder
from kccgen.generator.ir.locations import build_locations
from kccgen.generator.ir.methods import UnsupportedShape, iam_methods, resolve_methods
from kccgen.generator.ir.model import (
    IR,
    ApiModule,
    CachedUnit,
    Candidate,
    FieldIR,
    Identity,
    KindIR,
    MemoHit,
    Methods,
    ModelSet,
    ObjectIR,
    ReferenceIR,
    SkippedKind,
    TargetKind,
    TypeIR,
    unit_names,
)
from kccgen.generator.ir.mutability import build_mutability
from kccgen.generator.ir.params import align_params, aligned_templates
from kccgen.generator.ir.references import (
    TargetIndex,
    infer_references,
    kcc_ref_index,
    kcc_ref_name,
)
from kccgen.generator.ir.secrets import apply_secret_objects, apply_secrets, requested
from kccgen.generator.ir.spellings import kcc_spellings
from kccgen.generator.kcc import (
    Subject,
    api_fields,
    check_claims,
    parent_form_templates,
    resource_subject,
    service_of,
)
from kccgen.generator.naming import api_module, pascal, plural_kind, snake
from kccgen.generator.spec.claims import KindEvidence
from kccgen.generator.spec.kinds import KindConfig, KindsFile
from kccgen.generator.spec.loader import Documents, Specs

Problem = Callable[[SpecError], None]


@dataclass(frozen=True)
class Selected:
    file: str
    index: int
    kfile: KindsFile
    cfg: KindConfig
    doc: DiscoveryDoc
    resource: Resource
    # Config Connector's Kind this is (a claim in specs/kcc/claims.yaml): its
    # group, plural and versions are the Kind's.
    kcc: KindEvidence | None = None

    @property
    def service(self) -> str:
        return service_of(self.kcc.group) if self.kcc is not None else self.kfile.service_name

    @property
    def group(self) -> str:
        return self.kcc.group if self.kcc is not None else self.kfile.group

    @property
    def package(self) -> str:
        return f"{snake(self.service)}/{self.cfg.krm_version}"

    @property
    def auto(self) -> bool:
        """Derived by an auto kind file, not an entry a person wrote (index -1)."""
        return self.index < 0

    @property
    def where(self) -> str:
        """Where the Kind is configured, for messages."""
        if self.auto and self.cfg.resource in self.kfile.overrides:
            return f"{self.file}#{json_path('overrides', self.cfg.resource)}"
        if self.auto:
            return f"{self.file} (auto: {self.doc.key} {self.cfg.resource})"
        return f"{self.file}#{json_path('kinds', self.index)}"


@dataclass(frozen=True)
class Shaped:
    """A selected Kind with its methods and resource schema (stage 2)."""

    sel: Selected
    methods: Methods
    schema: str


def _family(specs: Specs, file: str, kf: KindsFile) -> str:
    """The API family a kind file reads (Admin SDK's ``directory``; "" for most APIs)."""
    from kccgen.documents import split_key

    if kf.version is not None:
        return split_key(f"{kf.api}.{kf.version}")[1]
    families = sorted({split_key(k)[1] for k in specs.discovery if split_key(k)[0] == kf.api})
    if len(families) > 1:
        raise SpecError(file, "/version", f"name the version of {kf.api}: it has several families ({', '.join(f or '(none)' for f in families)})")
    return families[0] if families else ""


def doc_keys(specs: Specs, file: str, kf: KindsFile) -> list[str]:
    """Every pinned GA and beta document of a kind file's API, in the order a
    derived Kind's resource is read from them (newest GA first, then betas)."""
    from kccgen.documents import api_documents

    keys = api_documents(specs.discovery, kf.api, _family(specs, file, kf))
    if not kf.versions:
        return keys
    for i, v in enumerate(kf.versions):
        if f"{kf.api}.{v}" not in specs.discovery:
            raise SpecError(file, json_path("versions", i), f"no Discovery document {kf.api}.{v} is pinned (have: {', '.join(keys) or 'none'})")
    return [k for k in keys if k.split(".", 1)[1] in kf.versions]


def doc_key(specs: Specs, file: str, kf: KindsFile) -> str:
    """The document a kind file's listed Kinds read: its version, else the newest
    GA one pinned (else the newest beta, for an API with no GA document)."""
    if kf.version is not None:
        return f"{kf.api}.{kf.version}"
    from kccgen.documents import is_ga

    keys = doc_keys(specs, file, kf)
    if not keys:
        have = ", ".join(k for k in specs.discovery if k.split(".")[0] == kf.api) or "none"
        raise SpecError(file, "/version", f"name the version of {kf.api}: no GA or beta document pinned (have: {have})")
    return next((k for k in keys if is_ga(k)), keys[0])


def _curated(specs: Specs) -> dict[tuple[str, str], tuple[str, str]]:
    # a Kind that reads a resource through a custom method (a claim's via) does not own it
    return {(kf.api, c.resource): (c.kind, file) for file, kf in specs.kinds for c in kf.kinds if not _via(specs, c.kind)}


def _without(shaped: list[Shaped], failed: list[SkippedKind]) -> list[Shaped]:
    """``shaped`` less the Kinds that failed a stage (built again without them)."""
    gone = {f.kind for f in failed}
    return [sh for sh in shaped if sh.sel.cfg.kind not in gone]


def _via(specs: Specs, kind: str) -> str | None:
    claim = specs.claims.served.get(kind)
    return claim.via if claim is not None else None


def _kcc_version_problems(file: str, kf: KindsFile, configs: list[KindConfig]) -> list[SpecError]:
    """``kccVersions`` may name only Kinds of its file, each under a version it does not already have."""
    own = {c.kind: c.krm_version for c in configs}
    out = []
    for version, names in sorted(kf.kcc_versions.items()):
        for i, name in enumerate(names):
            where = json_path("kccVersions", version, i)
            if name not in own:
                out.append(SpecError(file, where, f"{name} is not a Kind of {kf.api}{did_you_mean(name, own)}"))
            elif own[name] == version:
                out.append(SpecError(file, where, f"{name} is already served as {version}"))
    return out


def select_kinds(specs: Specs, strict: bool = True, reporter: Reporter | None = None, rows: list[Candidate] | None = None) -> list[Selected]:
    """Stage 1: resolve every configured Kind to its Discovery resource.

    Auto kind files derive their Kinds here (``candidates.derive``); ``rows``
    collects a row per resource of their documents. ``strict=False`` (used to
    read older Discovery documents for the lag report) skips a Kind whose
    document or resource is missing, with a warning.
    """
    out: list[Selected] = []
    seen: dict[str, str] = {}
    curated = _curated(specs)
    for file, kf in specs.kinds:
        try:
            key = doc_key(specs, file, kf)
        except SpecError as e:
            if strict:
                raise
            if reporter is not None:  # an older client that did not ship this API yet
                reporter.warn(file, "lenient", str(e))
            continue
        if key not in specs.discovery:
            where = sorted(specs.discovery_files.values())
            ddir = where[0].rsplit("/", 1)[0] if where else "the discovery directory"
            same = [k for k in sorted(specs.discovery) if k.split(".")[0] == kf.api]
            err = SpecError(file, "/version", f"no Discovery document {key} in {ddir} (have: {', '.join(same) or f'no {kf.api} document'})")
            if strict:
                raise err
            if reporter is not None:
                reporter.warn(file, "lenient", str(err))
            continue
        doc = specs.discovery[key]
        configs = list(kf.kinds)
        keys = [key, *(k for k in doc_keys(specs, file, kf) if k != key)] if kf.version is not None else doc_keys(specs, file, kf)
        claimed = {c.resource: c for c in specs.claims.served.values() if c.api == kf.api and c.via is None and (c.version is None or f"{c.api}.{c.version}" in keys)}
        for n, cfg in enumerate(kf.kinds):
            c = claimed.get(cfg.resource) if not _via(specs, cfg.kind) else None
            if c is not None and c.kind != cfg.kind:
                raise SpecError(file, json_path("kinds", n, "kind"), f"{cfg.kind}: {specs.claims.file} names {kf.api} {cfg.resource} {c.kind}, Config Connector's Kind")
        if kf.auto:
            versions = {r: c.version for r, c in claimed.items() if c.version is not None}
            derived, derived_rows = derive(file, kf, [specs.discovery[k] for k in keys], curated, {r: c.kind for r, c in claimed.items()}, versions)
            configs += derived
            if rows is not None:
                rows.extend(derived_rows)
        for err in _kcc_version_problems(file, kf, configs):
            if strict:
                raise err
            if reporter is not None:
                reporter.warn(file, "lenient", str(err))
        for n, cfg in enumerate(configs):
            i = n if n < len(kf.kinds) else -1  # derived Kinds have no entry to point at
            if cfg.kind in seen:
                raise SpecError(file, json_path("kinds", i, "kind"), f"Kind {cfg.kind} is already defined in {seen[cfg.kind]}")
            seen[cfg.kind] = file
            kdoc = doc
            if cfg.version is not None and f"{kf.api}.{cfg.version}" != key:
                vkey = f"{kf.api}.{cfg.version}"
                if vkey not in specs.discovery:
                    err = SpecError(file, json_path("kinds", i, "version"), f"no Discovery document {vkey} is pinned")
                    if strict:
                        raise err
                    if reporter is not None:
                        reporter.warn(file, "lenient", str(err))
                    continue
                kdoc = specs.discovery[vkey]
            try:
                res = kdoc.resource(cfg.resource, file, json_path("kinds", i, "resource"))
            except SpecError as e:
                if strict:
                    raise
                if reporter is not None:
                    reporter.warn(file, "lenient", str(e))
                continue
            c = claimed.get(cfg.resource)
            if (c is None or c.kind != cfg.kind) and _via(specs, cfg.kind):  # a Kind reading the resource through a custom method
                c = specs.claims.served[cfg.kind]
            out.append(Selected(file, i, kf, cfg, kdoc, res, specs.evidence.kinds.get(c.kind) if c is not None and c.kind == cfg.kind else None))
    return sorted(out, key=lambda s: s.cfg.kind)


def resolve_shapes(selected: list[Selected]) -> tuple[list[Shaped], list[SkippedKind]]:
    """Stage 2: method shapes. A method no contract variant describes skips its Kind."""
    shaped: list[Shaped] = []
    skipped: list[SkippedKind] = []
    for s in selected:
        try:
            methods, schema = resolve_methods(s.file, s.index, s.cfg, s.doc, s.resource)
        except UnsupportedShape as e:
            skipped.append(SkippedKind(s.cfg.kind, s.where, e.location, e.reason, s.auto))
            continue
        shaped.append(Shaped(s, methods, schema))
    return shaped, skipped


def _query_inputs(sh: Shaped) -> tuple[str, ...]:
    return tuple(i.field for i in create_inputs(sh.methods.create_shape) if i.where is Where.QUERY)


def build_api_module(gkey: tuple[str, str], members: list[Shaped], reporter: Reporter) -> tuple[ApiModule, dict[str, str]]:
    """Stage 3: the API payload models of one (document, KRM package).

    Returns the module and its schema id (or create method id, for its query
    inputs) -> class name.
    """
    dkey, pkg = gkey
    doc = members[0].sel.doc
    roots: set[str] = set()
    create_ids: set[str] = set()
    params = []
    for sh in members:
        m = sh.methods
        roots.add(sh.schema)
        for mi in (m.get, m.create, m.update, m.delete):
            if mi is not None:
                roots.update(x for x in (mi.request, mi.response) if x)
        verbs = {r.call.method for r in write_only_routes(m.update_shape)}  # their fields join the spec
        roots.update(x.request for x in m.route_methods if x.name in verbs and x.request)
        if m.create is not None:
            create_ids.add(m.create.id)
            names = _query_inputs(sh)
            if names:
                raw = sh.sel.resource.methods[m.create.name]
                params.append((f"{pascal(sh.schema)}{pascal(m.create.name)}Parameters", raw, names, m.create.location))
    models, names_of = build_api_models(doc, roots, reporter, frozenset(create_ids), params)
    return ApiModule(doc.name, doc.version, dkey, doc.revision, api_module(doc.name, doc.version), pkg, models), names_of


def _failure(sh: Shaped, e: Exception) -> SkippedKind:
    """A derived Kind the generator could not build, and why."""
    return SkippedKind(sh.sel.cfg.kind, sh.sel.where, f"{sh.sel.doc.key}#{json_path('resources', sh.sel.cfg.resource)}", f"{type(e).__name__}: {e}", True)


def _raw_get(sh: Shaped) -> Method:
    """The Discovery get method of a shaped Kind: its resource's, or (kind config
    ``get.resource``) the other resource's it reads through."""
    owner = sh.methods.get.owner
    res = sh.sel.doc.resource(".".join(owner), sh.sel.file, "") if owner else sh.sel.resource
    return res.methods[sh.methods.get.name]


def resolve_identities(specs: Specs, shaped: list[Shaped], reporter: Reporter, failed: list[SkippedKind]) -> dict[str, Identity]:
    """Stage 4: identity templates (all Kinds' templates first, for parent inference).
    A derived Kind whose identity cannot be resolved goes to ``failed``."""
    prelim: dict[str, str] = {}
    for sh in shaped:
        rest, _ = identity_rest(specs.asset_names, sh.sel.cfg, sh.sel.doc, _raw_get(sh), sh.schema)
        row, mismatch = choose_asset_format(asset_rows(specs.asset_names, sh.sel.cfg, sh.sel.doc, sh.schema, rest)[1], rest)
        prelim[sh.sel.cfg.kind] = rest if sh.sel.cfg.identity or row is None or rest_is_identity(row, mismatch, sh.sel.auto, rest) else row.template
    # A parent is a resource of the same service (AIP-122: a relative name is
    # relative to its own service): firebaseappcheck's services/{service} is no
    # MonitoringService, though both are projects/{project}/services/{service}.
    by_host: dict[str, dict[str, str]] = {}
    for sh in shaped:
        by_host.setdefault(sh.sel.doc.host, {})[sh.sel.cfg.kind] = prelim[sh.sel.cfg.kind]
    identities = {}
    external = {ek.kind: ek for ek in specs.external_kinds.kinds}
    for sh in shaped:
        s = sh.sel
        raw_get = _raw_get(sh)
        try:
            identity = resolve_identity(
                s.file, s.index, s.cfg, s.doc, raw_get, sh.schema, specs.asset_names, by_host[s.doc.host], derived=s.auto, all_templates=prelim
            )
        except Exception as e:
            if not s.auto:
                raise
            failed.append(_failure(sh, e))
            continue
        # Config Connector's name for the location field, and its default
        identity = kcc_location(identity, s.kcc, frozenset(s.doc.schemas[sh.schema].properties if sh.schema in s.doc.schemas else ()))
        ext = external.get(s.cfg.kind)
        if ext is not None and ext.external_forms:
            # An external entry for a Kind generated now (Project, Folder) stays the
            # fallback, and the spellings it accepts (a bare project ID) stay accepted.
            identity = replace(identity, extra_forms=tuple(dict.fromkeys((*identity.extra_forms, *ext.external_forms))))
        if isinstance(sh.methods.create_shape, CreateServiceAssigned) and identity.id_generation != "service":
            # The create carries no ID (aiplatform's output-only name, calendar's
            # id): the ID exists only once the service answers.
            identity = replace(identity, id_generation="service")
        for d in identity.disagreements:
            # A derived Kind outside the asset table is the common case, not news:
            # coverage shows where each template came from.
            if not (s.auto and "is not in the asset-inventory table" in d):
                reporter.warn(s.where, "identity", f"{s.cfg.kind}: {d}")
        identities[s.cfg.kind] = identity
    return identities


def create_view(sh: Shaped, mod: ApiModule, classes: dict[str, str]) -> tuple[ModelSet, ObjectIR]:
    """The resource as the KRM projection sees it: plus the create-only inputs
    (request fields beside the resource, query parameters), immutable and never
    returned by GET; minus, for a create request that lists the resource fields
    it takes, the settability of the others (the service sets them)."""
    m = sh.methods
    res = mod.models.object(classes[sh.schema])
    fields = list(res.fields)
    shape = m.create_shape
    assert m.create is not None or not create_inputs(shape)
    if isinstance(shape, CreateAtPath) and shape.request_fields is not None and m.create is not None:
        why = f"not in {m.create.request} ({m.create.id}): set by the service"
        fields = [
            f if f.name in shape.request_fields or f.name == "name" or f.output_only else replace(f, facts=tuple(sorted({*f.facts, Fact(B.OUTPUT_ONLY, why)})))
            for f in fields
        ]
    for inp in create_inputs(shape):
        assert m.create is not None
        if inp.where is Where.QUERY:
            holder = mod.models.object(classes[m.create.id])
            what = f"create-only: {m.create.id} query parameter {inp.field}"
        else:
            assert m.create.request is not None
            holder = mod.models.object(classes[m.create.request])
            what = f"create-only: {m.create.request}.{inp.field} ({m.create.id})"
        f = next(x for x in holder.fields if x.name == inp.field)
        facts = {x for x in f.facts if x.behaviour not in (B.OUTPUT_ONLY, B.REQUIRED)} | {Fact(B.IMMUTABLE, what), Fact(B.INPUT_ONLY, what)}
        facts |= {x for x in f.facts if x.behaviour is B.REQUIRED}
        same = next((i for i, x in enumerate(fields) if x.name == f.name and not x.output_only), None)
        if same is not None:  # the resource's own field too (storage's serviceAccountEmail): set once, read back
            kept = {x for x in fields[same].facts if x.behaviour not in (B.OUTPUT_ONLY, B.IMMUTABLE)}
            # the parameter's own prose ("Required.", "Optional.") describes it, not the field
            own = {Fact(B.IMMUTABLE, what)} | {x for x in facts if x.behaviour is B.REQUIRED and x.source == what}
            fields[same] = replace(fields[same], facts=tuple(sorted(kept | own)))
            continue
        fields.append(replace(f, facts=tuple(sorted(facts))))
    for r in write_only_routes(m.update_shape):
        # a field of the update verb's request only (GKE's nodeCount): GET never returns it
        verb = next(x for x in m.route_methods if x.name == r.call.method)
        assert verb.request is not None
        f = next(x for x in mod.models.object(classes[verb.request]).fields if x.name == r.into)
        what = f"write-only: {verb.request}.{r.into} ({verb.id}); GET never returns it, the value last applied is kept in the object"
        facts = {x for x in f.facts if x.behaviour not in (B.OUTPUT_ONLY, B.REQUIRED, B.IMMUTABLE)} | {Fact(B.INPUT_ONLY, what)}
        fields.append(replace(f, name=r.field, api_name=r.field if f.api_name is not None else None, facts=tuple(sorted(facts))))
    view = replace(res, fields=tuple(fields))
    objects = tuple(view if o.name == res.name else o for o in mod.models.objects)
    return ModelSet(objects, mod.models.enums), view


def build_kind(
    sh: Shaped,
    mod: ApiModule,
    classes: dict[str, str],
    identity: Identity,
    index: TargetIndex,
    by_kind: dict[str, TargetKind],
    external_kinds_file: str,
    problem: Problem,
    companions: tuple[Companion, ...] = (),
    reporter: Reporter | None = None,
) -> KindIR:
    """Stages 5-10 for one Kind: references, KRM projection, mutability, aliases,
    locations, secrets."""
    s, m = sh.sel, align_params(sh.methods, identity.template)
    models, api_res = create_view(sh, mod, classes)
    res_class = api_res.name
    overrides = override_facts(s.cfg, s.file)
    known = {f.name for f in api_res.fields}
    if s.cfg.spec_fields is not None:
        # a Kind managing one aspect of a larger resource: its other fields are status only
        for name in sorted(known - set(s.cfg.spec_fields) - set(overrides)):
            overrides[name] = (Fact(B.OUTPUT_ONLY, f"specFields:{s.file}: not one of {', '.join(s.cfg.spec_fields) or 'no field'}"),)
    for path in sorted(overrides):
        if path.split(".")[0] not in known:
            problem(SpecError(s.file, json_path("kinds", s.index, "fields", path), f"{s.cfg.kind}: {sh.schema} has no field {path.split('.')[0]!r}"))
            overrides.pop(path)
    # The ID field is spec.resourceID (or the service's), never a second spec field.
    id_top = "name" if "." in id_field(m.create_shape) else id_field(m.create_shape)
    drop = frozenset(f.name for f in api_res.fields if f.name in ("name", id_top) or B.IDENTIFIER in f.behaviours)
    # A body field that repeats an identity parent (Apigee AppGroup's ``organization``)
    # would be a second spec field of the same name: the identity's reference says it.
    id_fields, parent_refs = identity_fields(s.cfg.kind, identity, {f.name: f.type for f in api_res.fields})
    parents = {r.krm_path for r in parent_refs}
    # (unless a kind config makes it a reference of its own: a peering's ``network`` is the peer)
    own = frozenset(p for p, r in s.cfg.references.items() if r.target != "none")
    drop |= {f.name for f in api_res.fields if f"{f.name}Ref" in parents and f.name not in own}
    # So does one Config Connector names as the parent's field (Dataproc's body
    # ``projectId``, KCC's projectRef): the identity's reference says it.
    kcc_top = kcc_ref_index(s.kcc)
    top_names = frozenset(f.name for f in api_res.fields)
    drop |= {f.name for f in api_res.fields if f.name not in own and (theirs := kcc_ref_name(kcc_top, "", f.name, False, top_names)) is not None and theirs[0] in parents}

    # Stage 5: references.
    inf = infer_references(s.cfg.kind, models, res_class, s.cfg, index, overrides, drop, identity.domain, s.kcc, frozenset(p.krm_field for p in identity.params))
    for msg in inf.bad_targets:
        problem(SpecError(s.file, json_path("kinds", s.index, "references", msg.split(":")[0], "target"), f"{s.cfg.kind}: {msg}"))
    for p in inf.unused_config:
        problem(SpecError(s.file, json_path("kinds", s.index, "references", p), f"{s.cfg.kind}: {p!r} is not a string field of {sh.schema} reachable from spec (list steps are written field[])"))
    if inf.unclassified and s.auto:
        # Fail closed: without a kind-config decision the field stays a plain
        # string; coverage lists it with its candidates.
        pass
    elif inf.unclassified:
        problem(SpecError(
            s.file,
            json_path("kinds", s.index, "references"),
            f"{s.cfg.kind}: {len(inf.unclassified)} field(s) look like references but are not classified; "
            f"add references.<path>: {{target: <Kind>|none, reason: ...}}: " + "; ".join(inf.unclassified),
        ))

    # Stage 6: KRM projection.
    proj = KrmProjector(s.cfg.kind, models, res_class, overrides, inf.decisions, frozenset({id_field(m.create_shape).split(".")[0]}))
    spec_name = proj.project(res_class, "spec", "", drop)
    obs_name = proj.project(res_class, "observed", "", drop)
    assert spec_name is not None
    spec_obj = proj.objects[spec_name]
    paired, paired_refs = companion_fields(s.cfg.kind, companions, by_kind, external_kinds_file, s.file)
    spec_obj = replace(spec_obj, fields=(*id_fields, *spec_obj.fields, *paired), open=False)
    if obs_name is None:
        obs_obj = ObjectIR(f"{s.cfg.kind}ObservedState", f"The observed state of the {s.cfg.kind}.", (), api_res.source)
    else:
        obs_obj = proj.objects[obs_name]
    for r in parent_refs:
        if r.target not in by_kind:
            raise SpecError(
                s.file,
                json_path("kinds", s.index, "parents"),
                f"{s.cfg.kind}: parent {r.krm_path} refers to {r.target}, which is neither a generated Kind nor declared in {external_kinds_file}",
            )
    references: list[ReferenceIR] = [
        replace(r, external_only=not (by_kind[r.target].ours or by_kind[r.target].by_name)) for r in (*parent_refs, *paired_refs)
    ] + _one_per_path(inf.references)
    ref_classes = sorted(proj.ref_classes | {f"{r.target}Ref" for r in (*parent_refs, *paired_refs)})
    objs = {o.name: o for o in proj.objects.values()}
    objs[spec_obj.name] = spec_obj
    objs[obs_obj.name] = obs_obj
    for rc in ref_classes:
        objs[rc] = ref_placeholder(rc.removesuffix("Ref"))
    krm_models = ModelSet(tuple(objs[k] for k in sorted(objs)), proj.model_set().enums)

    # Stage 7: mutability table.
    # A oneOf field's row is the API field: its keys are KRM-only choices, like a ref's.
    opaque = frozenset(ref_classes) | proj.choice_classes
    mutability = build_mutability(s.cfg.kind, f"{s.doc.key} {s.cfg.resource}", krm_models, spec_obj, obs_obj, m, identity, opaque)
    for c in companions:  # written by its own call, read by its own GET (runtime/companions.py)
        how = f"{c.doc} {'.'.join(c.resource)}.{c.update.method} sets {c.api_field}"
        mutability = tuple(
            replace(r, updatable=True, updatable_source=how) if r.path == f"spec.{c.field}" or r.path.startswith(f"spec.{c.field}.") else r for r in mutability
        )
    # Stage 8: Config Connector's older field names, after the mutability
    # table (which describes API fields only).
    base: tuple[str | int, ...] = ("overrides", s.cfg.resource) if s.auto else ("kinds", s.index)
    spelled = kcc_spellings(s.kcc, spec_obj, krm_models, s.cfg.aliases)
    aliased = build_aliases(s.cfg.kind, s.file, base, s.cfg.aliases, spec_obj, krm_models, spelled)
    spec_obj, krm_models = aliased.spec, aliased.models
    formed = build_forms(s.cfg.kind, s.file, base, s.cfg.forms, spec_obj, krm_models)
    spec_obj, krm_models = formed.spec, formed.models
    # Stage 9: Config Connector's spec.location over several scopes.
    located = build_locations(s.cfg.kind, s.file, s.kfile.locations, identity, by_kind[s.cfg.kind].variants, spec_obj, krm_models, mutability)
    spec_obj, krm_models, mutability = located.spec, located.models, located.mutability
    # Stage 10: secrets as Config Connector spells them; the mutability rows keep the API's string.
    sec = apply_secrets(spec_obj, krm_models, requested(s.cfg, s.kcc))
    spec_obj, krm_models = sec.spec, sec.models
    for path, msg in sec.skipped:
        if s.cfg.sensitive is not None and path in s.cfg.sensitive.fields:
            problem(SpecError(s.file, json_path(*base, "sensitive", "fields"), f"{s.cfg.kind}: {msg}"))
        elif reporter is not None:
            reporter.warn(s.where, "sensitive", f"{s.cfg.kind}: {msg}")
    # Stage 11: object fields read from one Secret's keys (Config Connector's credential.secretRef).
    sobj = apply_secret_objects(spec_obj, krm_models, mutability, s.cfg.secret_objects)
    spec_obj, krm_models, mutability = sobj.spec, sobj.models, sobj.mutability
    for path, msg in sobj.problems:
        problem(SpecError(s.file, json_path(*base, "secretObjects", path), f"{s.cfg.kind}: secretObjects.{path}: {msg}"))
    api_fields = tuple(FieldIR(f.name, f.type, f.description, proj.facts(f, f.name), f.source, f.deprecated) for f in api_res.fields)
    short = s.cfg.short_names or (f"gcp{s.cfg.kind.lower()}", f"gcp{plural_kind(s.cfg.kind)}")
    return KindIR(
        kind=s.cfg.kind,
        group=s.group,
        version=s.cfg.krm_version,
        plural=s.kcc.plural if s.kcc is not None else plural_kind(s.cfg.kind),
        short_names=tuple(short),
        package=s.package,
        api=mod,
        resource=s.cfg.resource,
        resource_schema=classes[sh.schema],
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
        unresolved=tuple(inf.unclassified) if s.auto else (),
        aliases=aliased.aliases,
        forms=formed.forms,
        canonical=build_canonical(
            api_fields, identity.template, frozenset(r.api_path for r in references), s.cfg.canonical, s.file, ("kinds", s.index)
        ),
        kcc_versions=_kcc_versions(s),
        locations=located.locations,
        companions=companions,
        present=_present(s, api_res),
        example_id=s.cfg.example_id or "",
        fixed=tuple(sorted(s.cfg.fixed.items())),
        secrets=sec.paths,
        byte_secrets=sec.byte_paths,
        secret_objects=sobj.objects,
    )


def _present(s: Selected, resource: ObjectIR) -> Present | None:
    """An on/off resource's state field (kind config ``present:``), checked against its schema."""
    p = s.cfg.present
    if p is None:
        return None
    top = p.field.split(".", 1)[0]
    if not any(f.name == top for f in resource.fields):
        base: tuple[str | int, ...] = ("overrides", s.cfg.resource) if s.auto else ("kinds", s.index)
        raise SpecError(s.file, json_path(*base, "present", "field"), f"{s.cfg.kind}: {resource.name} has no field {top!r}")
    return Present(p.field, p.values)


def companion_fields(
    kind: str, companions: tuple[Companion, ...], by_kind: dict[str, TargetKind], external_kinds_file: str, file: str
) -> tuple[list[FieldIR], list[ReferenceIR]]:
    """The spec fields of a Kind's companions: KRM-only (not sent in its body),
    a reference where the value names a Kind (Project's billingAccountRef)."""
    fields: list[FieldIR] = []
    refs: list[ReferenceIR] = []
    for c in companions:
        where = f"{c.doc} {'.'.join(c.resource)}.{c.api_field}"
        desc = f"Kept in {where}, not in the {kind}: read with {c.get.method} and set with {c.update.method}; left alone when unset."
        source = f"companion:{file}: {c.field}"
        if c.target:
            if c.target not in by_kind:
                raise SpecError(file, "", f"{kind}: companion {c.field} names {c.target}, which is neither a generated Kind nor declared in {external_kinds_file}")
            fields.append(FieldIR(c.field, TypeIR("object", ref=f"{c.target}Ref"), f"A reference to a {c.target}. {desc}", (Fact(B.OPTIONAL, source),), source))
            refs.append(ReferenceIR(api_path=c.field, krm_path=c.field, target=c.target, many=False, external_only=False, source=source))
        elif c.append_only:  # a list of strings the service only appends to (Spanner's DDL statements)
            desc = f"Kept in {where}: read with {c.get.method}; statements added at its end are sent with {c.update.method}, and none can be removed or changed; left alone when unset."
            fields.append(FieldIR(c.field, TypeIR("array", item=TypeIR("string")), desc, (Fact(B.OPTIONAL, source),), source))
        else:
            fields.append(FieldIR(c.field, TypeIR("string"), desc, (Fact(B.OPTIONAL, source),), source))
    return fields, refs


def _kcc_versions(s: Selected) -> tuple[str, ...]:
    """The version names the Kind's CRD serves beside its own: Config Connector's
    (its claim's evidence) and a kind file's ``kccVersions`` entry."""
    named = {v for v, names in s.kfile.kcc_versions.items() if s.cfg.kind in names}
    if s.kcc is not None:
        named |= set(s.kcc.versions)
    return tuple(sorted(named - {s.cfg.krm_version}))


class UnitMemo(Protocol):
    """What the last run knew of each API unit, by the digest of the unit's build
    inputs (see ``_unit_key``): generator/cache.py keeps it beside the render cache."""

    salt: str  # the generator's own digest: a code change is a different key

    def lookup(self, name: str, key: str) -> MemoHit | None: ...

    def record(self, name: str, key: str, failures: tuple[SkippedKind, ...], diagnostics: tuple[Diagnostic, ...]) -> None: ...


def build_ir(specs: Specs, reporter: Reporter | None = None, strict: bool = True, memo: UnitMemo | None = None, collect: list[SpecError] | None = None) -> IR:
    """The IR of ``specs``. ``strict=False`` turns kind-config mismatches with the
    Discovery documents into warnings: the lag report reads older documents
    with today's kind configs, where such mismatches are expected.

    With ``memo`` (``kccgen generate``), an API unit whose build inputs are those
    of the last run is not built: it is listed in ``IR.cached`` and its files come
    from the render cache. A one-document change then builds one unit, not 200.

    With ``collect`` (``kccgen bump``), a kind-config problem is appended there and
    the build goes on as if it were lenient, so one run lists every decision a
    maintainer must make, not the first; the IR is then for reporting only."""
    if memo is not None and (not strict or collect is not None):
        raise ValueError("the unit memo needs strict mode: lenient problems are warnings it does not keep")
    rep = reporter or Reporter()

    def problem(err: SpecError) -> None:
        if collect is not None:
            collect.append(err)
            return
        if strict:
            raise err
        rep.warn(f"{err.file}#{err.path}", "lenient", err.message)

    rows: list[Candidate] = []
    specs_key = _specs_key(specs) if memo is not None else ""
    selected = select_kinds(specs, strict, rep, rows)
    shaped, skipped = resolve_shapes(selected)
    # A derived (auto) Kind that the generator cannot build is skipped with the
    # reason, and the Kinds are built again without it, so no other Kind refers
    # to a Kind that is not there. Curated Kinds still fail the run.
    while True:
        failed: list[SkippedKind] = []
        identities = resolve_identities(specs, shaped, rep, failed)
        if failed:
            skipped, shaped = skipped + failed, _without(shaped, failed)
            continue
        for err in _check_claims(specs, selected, shaped, identities):
            problem(err)
        targets = _targets(specs, shaped, identities, rep)
        paired = _companions(specs, shaped, identities, failed)
        if failed:
            skipped, shaped = skipped + failed, _without(shaped, failed)
            continue
        index = TargetIndex(targets, specs.asset_names)
        by_kind = {t.kind: t for t in targets}
        groups: dict[tuple[str, str], list[Shaped]] = {}
        for sh in shaped:
            groups.setdefault((sh.sel.doc.key, sh.sel.package), []).append(sh)
        names = unit_names(groups)
        context = _context_key(specs_key, targets, memo.salt) if memo is not None else ""
        modules: dict[tuple[str, str], ApiModule] = {}
        kinds: list[KindIR] = []
        cached: list[CachedUnit] = []
        for gkey, members in sorted(groups.items()):
            key = _unit_key(specs, context, members, identities) if memo is not None else ""
            hit = memo.lookup(names[gkey], key) if memo is not None else None
            if hit is not None and (hit.failures or hit.kinds is not None):
                rep.extend(hit.diagnostics)
                failed += hit.failures  # known from the last run: this pass is redone without them
                if hit.kinds is not None and not hit.failures:
                    cached.append(CachedUnit(*gkey, names[gkey], key, hit.kinds))
                continue
            sub = Reporter()
            module, class_of = build_api_module(gkey, members, sub)
            modules[gkey] = module
            fails: list[SkippedKind] = []
            for sh in members:
                build = partial(
                    build_kind, sh, module, class_of, identities[sh.sel.cfg.kind], index, by_kind, specs.external_kinds_file, problem, paired.get(sh.sel.cfg.kind, ()), sub
                )
                if not sh.sel.auto:
                    kinds.append(build())
                    continue
                try:
                    kinds.append(build())
                except Exception as e:  # any failure skips a derived Kind, with the reason
                    fails.append(_failure(sh, e))
            rep.extend(sub.items)
            failed += fails
            if memo is not None:
                memo.record(names[gkey], key, tuple(fails), tuple(sub.items))
        if not failed:
            break
        skipped += failed
        gone = {f.kind for f in failed}
        shaped = [sh for sh in shaped if sh.sel.cfg.kind not in gone]
    _check_list_kinds([(k.group, k.kind, k.config_file) for k in kinds] + [k for u in cached for k in u.kinds])
    iam_targets = external_iam_targets(specs, targets, rep)
    return IR(
        api_modules=tuple(modules[k] for k in sorted(modules)),
        kinds=tuple(kinds),
        cached=tuple(cached),
        diagnostics=tuple(str(d) for d in rep.sorted()),
        targets=targets,
        skipped=tuple(sorted(skipped, key=lambda s: s.kind)),
        candidates=tuple(rows),
        iam_targets=iam_targets,
    )


def external_iam_targets(specs: Specs, targets: tuple[TargetKind, ...], rep: Reporter) -> tuple[IamTarget, ...]:
    """The ``iam:`` entries of specs/external-kinds.yaml, checked against their
    documents: a resource without both policy methods fails the run; a document
    not pinned (an older spec set, a test slice) leaves the entry out, with a warning."""
    out = []
    by_kind = {t.kind: t for t in targets}
    for i, ek in enumerate(specs.external_kinds.kinds):
        if ek.iam is None:
            continue
        where = json_path("kinds", i, "iam")
        if ek.iam.document not in specs.discovery or ek.kind not in by_kind:
            rep.warn(f"{specs.external_kinds_file}#{where}", "iam", f"{ek.kind}: no pinned document {ek.iam.document!r}: IAM Kinds cannot name it")
            continue
        doc = specs.discovery[ek.iam.document]
        res = dict(iter_resources(doc)).get(ek.iam.resource)
        iam = iam_methods(doc, ek.iam.resource, res) if res is not None else None
        if res is None or iam is None:
            raise SpecError(specs.external_kinds_file, where, f"{ek.kind}: {ek.iam.document} {ek.iam.resource!r} has no getIamPolicy and setIamPolicy")
        template = by_kind[ek.kind].template
        full = template.split("/")
        g = aligned_templates(res.methods["getIamPolicy"].path, iam.get.params, full) or iam.get.params
        st = aligned_templates(res.methods["setIamPolicy"].path, iam.set.params, full) or iam.set.params
        iam = replace(iam, get=replace(iam.get, params=g), set=replace(iam.set, params=st))
        out.append(IamTarget(ek.kind, ek.iam.document, tuple(ek.iam.resource.split(".")), template, iam))
    return tuple(sorted(out, key=lambda t: t.kind))


def _companions(specs: Specs, shaped: list[Shaped], identities: dict[str, Identity], failed: list[SkippedKind]) -> dict[str, tuple[Companion, ...]]:
    """Each Kind's ``companions:``, checked against the other API's document; a
    derived Kind whose entry does not hold is skipped with the reason."""
    out: dict[str, tuple[Companion, ...]] = {}
    for sh in shaped:
        s = sh.sel
        if not s.cfg.companions:
            continue
        base: tuple[str | int, ...] = ("overrides", s.cfg.resource) if s.auto else ("kinds", s.index)
        try:
            out[s.cfg.kind] = tuple(
                resolve_companion(specs, c, identities[s.cfg.kind].template, s.file, (*base, "companions", i)) for i, c in enumerate(s.cfg.companions)
            )
        except SpecError as e:
            if not s.auto:
                raise
            failed.append(_failure(sh, e))
    return out


def _check_claims(specs: Specs, selected: list[Selected], shaped: list[Shaped], identities: dict[str, Identity]) -> list[SpecError]:
    """Every claim of specs/kcc/claims.yaml against what it names: a generated
    Kind in all its forms, else the resource in the API's documents."""
    if not specs.claims.served:
        return []
    # the Kind built from a claimed resource, whatever it is named (a claim checked before it names anything)
    def via(kind: str) -> bool:
        c = specs.claims.served.get(kind)
        return c is not None and c.via is not None

    # a Kind claimed `via` a method reads a resource another Kind owns: found by its name
    by_resource = {(sh.sel.kfile.api, sh.sel.cfg.resource, sh.sel.doc.version): sh for sh in shaped if sh.sel.cfg.kind in identities and not via(sh.sel.cfg.kind)}
    by_kind = {sh.sel.cfg.kind: sh for sh in shaped if sh.sel.cfg.kind in identities and via(sh.sel.cfg.kind)}
    subjects: dict[str, Subject] = {}
    for kind, c in specs.claims.served.items():
        sh = by_kind.get(kind) if c.via else next(
            (x for (api, res, version), x in sorted(by_resource.items()) if api == c.api and res == c.resource and (c.version is None or version == c.version)), None
        )
        if sh is None:
            continue
        s = sh.sel
        i = identities[s.cfg.kind]
        forms = [i.template, *([i.rest_template] if i.rest_template else []), *i.extra_forms]
        forms += parent_form_templates(i.template, s.cfg.parent_forms)
        if s.cfg.identity and (rest := resource_subject(kind, s.doc, s.cfg.resource, s.resource)) is not None:
            forms += [t for t in rest.templates if t not in forms]  # a list read: the collection's own paths
        if s.kfile.locations is not None:
            forms += [identities[v].template for v in s.kfile.locations.kinds.get(kind, {}).values() if v in identities]
        fields = [*api_fields(s.doc, s.resource, sh.schema), *(p for f in forms for p in re.findall(r"\{(\w+)\}", f))]
        fields += [a.field for a in s.cfg.aliases if "." not in a.field] + [r.field for r in s.cfg.references.values() if r.field] + [k for r in s.cfg.references.values() for k in r.one_of]
        fields += [c.field for c in s.cfg.companions]
        subjects[kind] = Subject(s.cfg.kind, s.doc.key, s.cfg.resource, tuple(forms), tuple(fields), s.doc.host)
    unbuilt: dict[str, Subject | str] = {}
    apis = {kf.api for _, kf in specs.kinds}
    for kind, c in sorted(specs.claims.served.items()):
        if kind in subjects:
            continue
        if c.api not in apis:
            unbuilt[kind] = f"claims {c}, but no kind file reads the {c.api} API"
            continue
        found = None
        for key in preferred(k for k in specs.discovery if split_key(k)[0] == c.api and (c.version is None or k == f"{c.api}.{c.version}")):
            try:
                found = (specs.discovery[key], specs.discovery[key].resource(c.resource))
                break
            except SpecError:
                continue
        if found is None:
            unbuilt[kind] = f"claims {c}, a resource no pinned document of {c.api} has"
            continue
        sub = resource_subject(kind, found[0], c.resource, found[1])
        if sub is not None:
            unbuilt[kind] = sub
    return check_claims(specs.claims, specs.evidence, subjects, unbuilt)


def _one_per_path(refs: tuple[ReferenceIR, ...] | list[ReferenceIR]) -> list[ReferenceIR]:
    """Inferred references sorted by path, one per path: two signals can find the same
    field (ComputeDisk's sourceImage); the first target by name wins, deterministically."""
    out: dict[str, ReferenceIR] = {}
    for r in sorted(refs, key=lambda r: (r.krm_path, r.target)):
        out.setdefault(r.krm_path, r)
    return list(out.values())


def _specs_key(specs: Specs) -> str:
    """The specs files every unit's build reads besides its own document and kind
    file (asset names, external and retired Kinds): read once per run."""
    h = hashlib.sha256(f"{specs.external_kinds_file}\0".encode())
    for p in sorted(specs.root.rglob("*")):
        rel = p.relative_to(specs.root).as_posix()
        if p.is_file() and rel.split("/")[0] not in ("discovery", "kinds") and rel != LOCK_NAME and "__pycache__" not in rel:
            h.update(f"{rel}\0".encode() + p.read_bytes() + b"\0")
    return h.hexdigest()


def _context_key(specs_key: str, targets: tuple[TargetKind, ...], salt: str) -> str:
    """What every unit's build reads besides its own Kinds: the generator (``salt``),
    the reference targets (they change when a pass drops a failed Kind) and the specs."""
    return hashlib.sha256(f"{salt}\0{digest(targets)}\0{specs_key}".encode()).hexdigest()


def _unit_key(specs: Specs, context: str, members: list[Shaped], identities: dict[str, Identity]) -> str:
    """The digest of everything one unit's build reads: ``context``, its document's
    bytes, and per Kind its kind file, config, methods and identity."""
    doc = members[0].sel.doc
    docs = specs.discovery
    sha = docs.sha256(doc.key) if isinstance(docs, Documents) else hashlib.sha256(doc.model_dump_json().encode()).hexdigest()
    h = hashlib.sha256(f"{context}\0{sha}\0".encode())
    files: dict[int, str] = {}
    for sh in members:
        s = sh.sel
        kf = files.setdefault(id(s.kfile), s.kfile.model_dump_json())
        h.update(f"{s.file}\0{s.index}\0{kf}\0{s.cfg.model_dump_json()}\0{sh.schema}\0".encode())
        h.update(digest((sh.methods, identities[s.cfg.kind])).encode())
    return h.hexdigest()


def _check_list_kinds(kinds: list[tuple[str, str, str]]) -> None:
    """A Kind named like another Kind's listKind (``<Kind>List``) in its group: the API
    server never establishes the first CRD (NamesAccepted false), so name one of them.
    ``kinds`` holds (group, Kind, config file) of every Kind, built or cached."""
    by_group = {(group, kind): file for group, kind, file in kinds}
    for group, kind, _ in kinds:
        file = by_group.get((group, f"{kind}List"))
        if file is not None:
            raise SpecError(file, "/overrides", f"Kind {kind}List is the listKind of {kind} in {group}: give it another name (overrides.<resource>.kind)")


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


def _variants(sh: Shaped, identities: dict[str, Identity], reporter: Reporter | None) -> tuple[tuple[str, str], ...]:
    """(scope, Kind) of the generated Kinds serving a Kind's other scopes (kind file
    ``locations:``). Each must be generated here at the scope the entry names; one
    that was skipped is left out with a warning (its scope is then refused by name)."""
    s = sh.sel
    cfg = s.kfile.locations
    if cfg is None or s.cfg.kind not in cfg.kinds:
        return ()
    where = json_path("locations", "kinds", s.cfg.kind)
    own, _ = template_scope(identities[s.cfg.kind].template)
    if not own:
        raise SpecError(s.file, where, f"{s.cfg.kind}: its template {identities[s.cfg.kind].template} has no global/, regions/ or zones/ scope for spec.{cfg.field} to select")
    out: list[tuple[str, str]] = []
    for scope, kind in sorted(cfg.kinds[s.cfg.kind].items()):
        if scope == own:
            raise SpecError(s.file, f"{where}/{scope}", f"{s.cfg.kind} is the {own} Kind itself; list only its other scopes")
        if kind not in identities:
            if reporter is not None:
                reporter.warn(f"{s.file}#{where}/{scope}", "locations", f"{kind} is not generated: {s.cfg.kind} refuses location scope {scope}")
            continue
        got, _ = template_scope(identities[kind].template)
        if got != scope:
            raise SpecError(s.file, f"{where}/{scope}", f"{kind} ({identities[kind].template}) is not a {scope} resource")
        out.append((scope, kind))
    return tuple(out)


def ref_module(package: str, kind: str) -> str:
    return f"kccgen.generated.{package.replace('/', '.')}.{kind.lower()}_reference"


def _targets(specs: Specs, shaped: list[Shaped], identities: dict[str, Identity], reporter: Reporter | None = None) -> tuple[TargetKind, ...]:
    """Every Kind a reference can point at: ours, then specs/external-kinds.yaml."""
    out: list[TargetKind] = []
    for sh in shaped:
        s = sh.sel
        i = identities[s.cfg.kind]
        variants = _variants(sh, identities, reporter)
        out.append(
            TargetKind(
                kind=s.cfg.kind,
                template=i.template,
                domain=i.domain,
                ours=True,
                by_name=True,
                ref_module=ref_module(s.package, s.cfg.kind),
                rest_host=i.rest_host,
                rest_prefix=i.rest_prefix,
                rest_template=i.rest_template if i.rest_template != i.template else "",
                extra_forms=i.extra_forms,
                spec_fields=_spec_fields(i),
                beside=tuple((p.name, p.beside, "Project" if p.beside == "projectRef" else "") for p in i.params if p.beside),
                spec_defaults=tuple((p.krm_field, p.default) for p in i.params if p.default is not None and p.covered_by is None),
                id_generation=i.id_generation,
                variants=variants,
            )
        )
    ours = {t.kind for t in out}
    if reporter is not None:
        for kfile, file in {id(sh.sel.kfile): (sh.sel.kfile, sh.sel.file) for sh in shaped}.values():
            for kind in sorted(set(kfile.locations.kinds if kfile.locations else ()) - ours):
                reporter.warn(f"{file}#{json_path('locations', 'kinds', kind)}", "locations", f"{kind} is not a generated Kind: its entry is not used")
    for n, ek in enumerate(specs.external_kinds.kinds):
        where = json_path("kinds", n)
        if ek.kind in ours:
            # The generated Kind is the target; the entry stays as the fallback
            # for a regeneration in which the Kind cannot be generated.
            if reporter is not None:
                reporter.warn(f"{specs.external_kinds_file}#{where}", "external", f"{ek.kind} is generated by kccgen; the entry is not used")
            continue
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


__all__ = ["ApiModule", "FieldIR", "build_ir", "select_kinds"]
