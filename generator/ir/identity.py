"""IR stage: a Kind's identity (externalRef template, parents, resource ID).

The template comes from the asset-inventory table (the newest format that
matches the REST get path); it is cross-checked against the get method's
path and its ``name`` pattern, and every disagreement is reported.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import replace

from kccgen.discovery.document import DiscoveryDoc, Method
from kccgen.discovery.errors import SpecError, json_path
from kccgen.discovery.paths import (
    collection_param,
    pattern_template,
    rest_prefix,
    rest_template,
    shape,
)
from kccgen.generator.ir.model import Identity, IdentityParam, ParentForm
from kccgen.generator.naming import PARENT_FORMS, pascal, singular
from kccgen.generator.spec.asset_names import AssetName, AssetNameTable
from kccgen.generator.spec.claims import KindEvidence
from kccgen.generator.spec.kinds import KindConfig

LOCATION_PARAMS = ("location", "region", "zone")


def kcc_location(identity: Identity, kcc: KindEvidence | None, api_fields: frozenset[str] = frozenset()) -> Identity:
    """The ``{location}`` parameter as Config Connector has it, for a Kind that carries
    its name: its KRM field is KCC's ``region`` (or ``zone``) where KCC's spec has that
    and no ``location`` (RedisInstance, CloudFunctionsFunction); and where KCC does not
    require ``spec.location`` and every name template of its evidence with a location
    with a literal location names ``locations/global`` (APIGatewayAPI, APIKeysKey), the field is optional and
    ``global`` when unset."""
    if kcc is None:
        return identity
    spec = set(kcc.spec)
    # the literal locations KCC's templates name ({} and {location} name none)
    literal = {m.group(1) for n in kcc.names for m in re.finditer(r"(?:^|/)locations/([^/{}]+)", n.template)}
    only_global = literal == {"global"} and "spec.location" not in kcc.required
    params = []
    own = {p.krm_field for p in identity.params if p.covered_by is None}
    for p in identity.params:
        if p.covered_by is not None and p.in_template:
            # KCC's projectRef or location beside the parent ref that covers it
            # (PrivateCACertificateAuthority's location beside caPoolRef); not where
            # the field is the Kind's own or an API field of the same name
            field = "projectRef" if p.name == "project" else next((n for n in (p.name, "location") if p.name in LOCATION_PARAMS and n in spec), None)
            if field is not None and field in spec and field not in own and field not in api_fields:
                p = replace(p, beside=field)
                own.add(field)
        if p.name == "location" and p.role == "location" and p.ref_kind is None and p.covered_by is None and p.in_template and p.krm_field == "location":
            theirs = [n for n in ("region", "zone") if n in spec]
            if "location" not in spec and len(theirs) == 1:
                p = replace(p, krm_field=theirs[0])
            elif only_global:
                p = replace(p, default="global")
        params.append(p)
    return replace(identity, params=tuple(params))


def choose_asset_format(rows: tuple[AssetName, ...], rest: str) -> tuple[AssetName | None, bool]:
    """Newest row matching the REST shape; else the newest row (mismatch=True)."""
    if not rows:
        return None, False
    matching = [r for r in rows if shape(r.template) == shape(rest)]
    if matching:
        return max(matching, key=lambda r: r.index), False
    return max(rows, key=lambda r: r.index), True


def asset_rows(assets: AssetNameTable, cfg: KindConfig, doc: DiscoveryDoc, schema_id: str, rest: str) -> tuple[str, tuple[AssetName, ...]]:
    """The asset type of a Kind and its rows: the configured type; else
    ``<host>/<schema>``; else ``<host>/<Singular resource name>``; else the one
    asset type of the service whose format has the REST path's shape."""
    if cfg.asset_type:
        return cfg.asset_type, assets.for_type(cfg.asset_type)
    by_schema = f"{doc.host}/{schema_id}"
    rows = assets.for_type(by_schema)
    if rows:
        return by_schema, rows
    by_name = f"{doc.host}/{pascal(singular(cfg.resource.rsplit('.', 1)[-1]))}"
    rows = assets.for_type(by_name)
    if any(shape(r.template) == shape(rest) for r in rows):
        return by_name, rows
    same_shape = {r.asset_type for r in assets.for_domain(doc.host) if shape(r.template) == shape(rest)}
    if len(same_shape) == 1:
        (only,) = same_shape
        return only, assets.for_type(only)
    return by_schema, ()


def _collections(template: str) -> set[str]:
    """The collection words of a template: literals followed by a placeholder."""
    segs = template.split("/")
    return {a for a, b in itertools.pairwise(segs) if not a.startswith("{") and b.startswith("{")}


def rest_is_identity(row: AssetName | None, mismatch: bool, derived: bool, rest: str) -> bool:
    """The path the API answers at is a derived Kind's identity: the table has
    no row for it; or a row of another shape, where the path is plain (compute's
    regional disks, certificatemanager's any-location maps) or the row has every
    collection of the path and more (dns rrsets under ``locations/``, which the
    API has not)."""
    if row is None:
        return True
    mine, theirs = _collections(rest), _collections(row.template)
    return mismatch and derived and (plain_template(rest) or (mine < theirs))


def plain_template(template: str) -> bool:
    """Literal and placeholder segments alternate, starting with a literal
    (``projects/{project}/disks/{disk}``), unlike a multi-parent REST path
    (``v1/{v1}/{v1Id1}/feeds/{feed}``)."""
    # locations/global is a fixed location (connectors' managed zones), as compute's global/ is
    segs = [s for s in template.replace("/locations/global/", "/global/").split("/") if s not in SINGLETON_SEGMENTS]
    return len(segs) % 2 == 0 and all(s.startswith("{") == (i % 2 == 1) for i, s in enumerate(segs))


_DOCUMENTED = re.compile(r"(?<![\w/])((?:[a-z][A-Za-z]*/\[[A-Z0-9_]+\]/?)+|(?:[a-z][A-Za-z]*/\{[A-Za-z0-9_]+\}/?)+)")


def described_template(get: Method, rest: str) -> str | None:
    """The one name format the get method's path parameter documents
    (``projects/[PROJECT_ID_OR_NUMBER]/services/[SERVICE_ID]``) as a template, when
    it fits the any-parent REST path ``rest``; None when it lists several parents
    (folders, organizations: the caller keeps failing closed) or none fits."""
    segs = rest.split("/")
    found: set[str] = set()
    for name, param in sorted(get.parameters.items()):
        if param.location != "path" or "{+" + name + "}" not in get.path:
            continue
        for m in _DOCUMENTED.finditer(param.description or ""):
            parts = m.group(1).rstrip("/").split("/")
            out = ["{" + collection_param(parts[i - 1]) + "}" if p.startswith(("[", "{")) else p for i, p in enumerate(parts)]
            tail = segs[len(segs) - len(out) :] if len(out) <= len(segs) else []
            if tail and all(t.startswith("{") or t == o for t, o in zip(tail, out, strict=True)):
                found.add("/".join(out))
    return found.pop() if len(found) == 1 else None


def fits_tail(template: str, rest: str) -> bool:
    """``template`` (projects/{project}/services/{service}) is the tail of the
    any-parent REST path ``rest`` (v1/{v1}/{v1Id1}/services/{service})."""
    segs, out = rest.split("/"), template.split("/")
    tail = segs[len(segs) - len(out) :] if len(out) <= len(segs) else []
    return bool(tail) and all(t.startswith("{") or t == o for t, o in zip(tail, out, strict=True))


def rest_of(get: Method, formats: tuple[str, ...] = ()) -> tuple[str, str]:
    """(template, routing prefix) of the path the get method answers at. An
    any-parent path (monitoring's ``v3/{v3}/{v3Id1}/services/{service}``) whose name
    parameter documents one format takes that format (``projects/{project}/...``);
    failing that, the one asset-inventory format of ``formats`` that fits it
    (serviceusage's ``projects/{project}/services/{service}``)."""
    # a get by custom verb on the name (aiplatform's voices/{voicesId}:get) reads the name
    path = re.sub(r"(\})\:[A-Za-z]+$", r"\1", get.flat_path or get.path)
    rest, prefix = rest_template(path), rest_prefix(path)
    described = None if plain_template(rest) else described_template(get, rest)
    if described is None and not plain_template(rest):
        fitting = {f for f in formats if plain_template(f) and fits_tail(f, rest)}
        described = fitting.pop() if len(fitting) == 1 else None
    if described is None:
        return rest, prefix
    segs = rest.split("/")
    return described, prefix + "".join(s + "/" for s in segs[: len(segs) - len(described.split("/"))])


def identity_rest(assets: AssetNameTable, cfg: KindConfig, doc: DiscoveryDoc, get: Method, schema_id: str) -> tuple[str, str]:
    """``rest_of`` the get method, offered the asset-inventory formats of the
    Kind's asset type (configured, by schema, else by resource name)."""
    rest, prefix = rest_of(get)
    if cfg.identity:  # a list read: no get path names the resource; the kind config does
        return cfg.identity, rest_prefix(get.flat_path or get.path)
    if plain_template(rest):
        return rest, prefix
    by_name = f"{doc.host}/{pascal(singular(cfg.resource.rsplit('.', 1)[-1]))}"
    rows = assets.for_type(cfg.asset_type or f"{doc.host}/{schema_id}") or assets.for_type(by_name)
    return rest_of(get, tuple(r.template for r in rows))


#: Literal scope words between a parent and a collection (compute's
#: ``projects/{project}/global/addresses/{address}``): not a collection of their own.
SINGLETON_SEGMENTS = frozenset({"global"})


def resolve_identity(
    file: str,
    index: int,
    cfg: KindConfig,
    doc: DiscoveryDoc,
    get: Method,
    schema_id: str,
    assets: AssetNameTable,
    templates_by_kind: dict[str, str],
    derived: bool = False,
    all_templates: dict[str, str] | None = None,
) -> Identity:
    """The Kind's identity template and how each placeholder appears in the spec.

    A parent placeholder whose collection no Kind owns (or which two Kinds own)
    is an error for a curated Kind, so a person names it; a derived Kind keeps
    it as a plain string field instead, failing closed rather than guessing.
    """
    rest, path_prefix = identity_rest(assets, cfg, doc, get, schema_id)
    asset_type, rows = asset_rows(assets, cfg, doc, schema_id, rest)
    row, mismatch = choose_asset_format(rows, rest)
    disagreements: list[str] = []
    if cfg.identity:
        template, source = cfg.identity, "rest"
        if row is not None and row.template != template:
            disagreements.append(f"asset-inventory {row.format!r} leaves out what the kind config's identity {template!r} names")
            row = None
    elif row is None:
        template, source = rest, "rest"
        disagreements.append(f"{asset_type} is not in the asset-inventory table; using the REST path {rest!r}")
    elif rest_is_identity(row, mismatch, derived, rest):
        template, source = rest, "rest"
        disagreements.append(f"asset-inventory {row.format!r} does not match the REST get path {rest!r}; using the REST path")
    else:
        template, source = row.template, "asset-inventory"
        if mismatch:
            disagreements.append(f"asset-inventory {row.format!r} does not match the REST get path {rest!r}")
        elif row.template != rest:
            disagreements.append(f"asset-inventory {row.format!r} names placeholders differently from the REST get path {rest!r}")
    # Cross-check with the get method's reserved-expansion name pattern (a list
    # read's parameters name the parent, not the resource).
    for pname, param in sorted(get.parameters.items()) if not cfg.identity else ():
        if param.location == "path" and param.pattern and "{+" + pname + "}" in get.path:
            pt = pattern_template(param.pattern)
            if pt is not None and shape(pt) != shape(template):
                disagreements.append(f"get parameter {pname!r} pattern {param.pattern!r} does not match template {template!r}")
    placeholders = [s[1:-1] for s in template.split("/") if s.startswith("{")]
    if not placeholders:
        raise SpecError(file, json_path("kinds", index, "resource"), f"identity template {template!r} has no placeholders")
    params: list[IdentityParam] = []
    # A name that ends in a literal (projects/{project}/policy, .../settings) is a
    # settings object: one per parent, with no ID of its own.
    singleton = not template.rstrip("/").split("/")[-1].startswith("{")
    for i, ph in enumerate(placeholders):
        # a kind config naming the last placeholder a parent (compute projects/{project}
        # as the project a Shared VPC host Kind manages) makes the Kind its parent's one object
        if i == len(placeholders) - 1 and not singleton and ph not in cfg.parents:
            params.append(IdentityParam(ph, "id", "resourceID"))
            continue
        pc = cfg.parents.get(ph)
        if pc is not None:
            if pc.kind is None:
                params.append(IdentityParam(ph, "location", pc.field, default=pc.default))
            else:
                params.append(IdentityParam(ph, "parent", pc.field, pc.kind))
        elif ph == "project":
            params.append(IdentityParam(ph, "parent", "projectRef", "Project"))
        elif ph in LOCATION_PARAMS:
            params.append(IdentityParam(ph, "location", ph))
        else:
            prefix = "/".join(template.split("/")[: template.split("/").index("{" + ph + "}") + 1])
            owners = sorted(k for k, t in templates_by_kind.items() if t == prefix)
            if len(owners) != 1 and derived:
                params.append(IdentityParam(ph, "location", ph))
                continue
            if len(owners) > 1:
                raise SpecError(
                    file,
                    json_path("kinds", index, "parents"),
                    f"{cfg.kind}: the identity parameter {ph!r} could refer to {', '.join(owners)}; "
                    f"add parents.{ph}: {{field: {ph}Ref, kind: <Kind>}}",
                )
            if not owners:
                raise SpecError(
                    file,
                    json_path("kinds", index, "parents"),
                    f"{cfg.kind}: cannot tell which Kind the identity parameter {ph!r} refers to; "
                    f"add parents.{ph}: {{field: {ph}Ref, kind: <Kind>}}",
                )
            params.append(IdentityParam(ph, "parent", f"{ph}Ref", owners[0]))
    # A parent whose own template is a prefix of ours already names every
    # param before it (keyRingRef -> projects/p/locations/l/keyRings/k), so
    # those params get no spec field of their own, as in Config Connector.
    segs = template.split("/")
    known = {**(all_templates or {}), **templates_by_kind}
    for i, p in enumerate(params):
        if p.role == "parent" and p.ref_kind is not None and p.ref_kind in known:
            end = segs.index("{" + p.name + "}") + 1
            parent = known[p.ref_kind]
            # its template ends the run of ours up to its placeholder: a prefix
            # (keyRings under projects/locations), or a tail of one
            # (services/{service}/projects/{project}/global/networks/{network})
            start = end - len(parent.split("/"))
            if start >= 0 and "/".join(segs[start:end]) == parent:
                inside = {x.strip("{}") for x in segs[start:end] if x.startswith("{")}
                params[:i] = [
                    IdentityParam(q.name, q.role, q.krm_field, q.ref_kind, q.in_template, covered_by=p.krm_field) if q.name in inside else q
                    for q in params[:i]
                ]
    for ph, pc in sorted(cfg.parents.items()):
        if ph not in placeholders:
            params.insert(0, IdentityParam(ph, "parent" if pc.kind else "location", pc.field, pc.kind, in_template=False))
    forms: tuple[ParentForm, ...] = ()
    if cfg.parent_forms:
        if template.startswith("projects/{project}/"):
            forms = tuple(ParentForm(c, *PARENT_FORMS[c]) for c in cfg.parent_forms)
        else:
            disagreements.append(f"parent forms {', '.join(cfg.parent_forms)} left out: the identity {template!r} does not start with projects/{{project}}/")
    return Identity(
        asset_type=asset_type,
        asset_format=row.format if row else None,
        template=template,
        template_source=source,  # type: ignore[arg-type]
        rest_template=rest,
        get_path=get.path,
        params=tuple(params),
        id_generation=cfg.id_generation,
        project_number=bool(row and row.project_number),
        disagreements=tuple(disagreements),
        domain=row.domain if row else doc.host,
        rest_host=doc.host,
        rest_prefix=doc.service_path + path_prefix,
        extra_forms=cfg.external_forms,
        parent_forms=forms,
    )
