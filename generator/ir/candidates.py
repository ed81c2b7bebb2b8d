"""Stage 1 for ``auto`` kind files: every resource of a document is a candidate.

Each resource either becomes a Kind (named by Config Connector's convention,
``naming.kind_name``) or is excluded with the reason, so ``kccgen coverage``
can account for every resource of every pinned document. Exclusions here are
decided from the methods alone; later stages may still skip a Kind whose
methods fit no contract shape (``build.resolve_shapes``), again with a reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kccgen.discovery.document import DiscoveryDoc, Method, Resource, iter_resources
from kccgen.discovery.errors import SpecError, json_path
from kccgen.discovery.paths import pattern_template
from kccgen.generator.ir.model import Candidate
from kccgen.generator.naming import PARENT_FIELDS, kind_name, service_prefix, singular
from kccgen.generator.spec.kinds import DerivedOverride, KindConfig, KindsFile

_IAM = frozenset({"getIamPolicy", "setIamPolicy", "testIamPermissions"})
# Parents a resource can hang under beside projects; the projects form is the
# Kind, and an other form with the same methods becomes one of its parents.
_OTHER_PARENTS = tuple(PARENT_FIELDS)
_STANDARD = ("get", "create", "insert", "patch", "update", "delete")
AUTO_KRM_VERSION = "v1alpha1"  # unreviewed Kinds: alpha, as Config Connector labels new Kinds


def method_exclusion(res: Resource, dotted: str) -> str | None:
    """Why a resource cannot be a Kind, from its methods alone; None when it can."""
    m = res.methods
    leaf = dotted.rsplit(".", 1)[-1]
    if not m:
        return "no methods: a path segment of other resources"
    if leaf == "operations" or (m.get("get") and m["get"].response and m["get"].response.ref in ("Operation", "GoogleLongrunningOperation")):
        return "long-running operation collection"
    if "get" not in m:
        if set(m) <= _IAM:
            return "IAM policy methods only (IAM Kinds are separate)"
        return "no get method"
    if m["get"].response is None:
        return "get returns no schema"
    if "create" not in m and "insert" not in m:
        if ("patch" in m or "update" in m) and is_settings_path(m["get"]):
            return None  # a settings object: a Kind that reads and updates it, never creates it
        if "patch" in m or "update" in m:
            return "no create method: created by the service (or by a custom verb), then updatable"
        return "no create method: read-only or created by the service"
    return None


def is_settings_path(get: Method) -> bool:
    """Whether the get method's name ends in a literal (``projects/{p}/policy``,
    ``.../settings``): one object per parent, with no ID of its own."""
    path = get.flat_path or get.path
    for name, p in sorted(get.parameters.items()):
        if p.location == "path" and "{+" + name + "}" in get.path and p.pattern and get.path.rstrip("/").endswith("{+" + name + "}"):
            template = pattern_template(p.pattern)
            if template is not None:
                return not template.rsplit("/", 1)[-1].startswith("{")
    return not path.split(":", 1)[0].rstrip("/").rsplit("/", 1)[-1].startswith("{")


_LOCATIONS = frozenset({"locations", "regions", "zones"})
_PARENTS = frozenset({"projects", *_OTHER_PARENTS})


def form_key(dotted: str) -> tuple[str, ...]:
    """The resource without where it lives: ``projects.locations.jobs``,
    ``projects.regions.jobs``, ``projects.jobs`` and ``folders.locations.jobs``
    are forms of one resource, ``jobs``. Only a segment that something hangs
    under is a place: the ``folders`` collection itself is a resource
    (Folder), not another form of ``projects``, and Dataplex's
    ``lakes.zones`` is a resource, not another form of ``lakes``."""
    parts = dotted.split(".")
    last = len(parts) - 1
    return tuple(p for i, p in enumerate(parts) if i == last or not (p in _LOCATIONS or (i == 0 and p in _PARENTS)))


def _form_rank(dotted: str) -> tuple[int, int, str]:
    """Which form becomes the Kind: under projects first, located (``locations``)
    before regional/zonal/global, then the shorter path."""
    parts = dotted.split(".")
    return (0 if parts[0] == "projects" else 1, 0 if "locations" in parts else 1 if _LOCATIONS & set(parts) else 2, dotted)


def parent_form_of(best: str, other: str, resources: dict[str, Resource]) -> str | None:
    """The parent collection (``folders``) when ``other`` is ``best`` under another
    top-level parent with the same standard methods: same HTTP verbs, paths,
    parameter names, request and response schemas. Then one Kind serves both,
    the runtime swapping the parent in every name; any difference keeps ``other``
    a separate, excluded form (its calls could not be rewritten safely)."""
    head, _, rest = best.partition(".")
    top, _, orest = other.partition(".")
    if head != "projects" or top not in _OTHER_PARENTS or orest != rest:
        return None
    a, b = resources[best].methods, resources[other].methods
    for name in _STANDARD:
        ma, mb = a.get(name), b.get(name)
        if (ma is None) != (mb is None):
            return None
        if ma is None or mb is None:
            continue
        same = (
            ma.http_method == mb.http_method
            and ma.path == mb.path
            and set(ma.parameters) == set(mb.parameters)
            and (ma.request.ref if ma.request else None) == (mb.request.ref if mb.request else None)
            and (ma.response.ref if ma.response else None) == (mb.response.ref if mb.response else None)
        )
        if not same:
            return None
    return top


def _schema(res: Resource) -> str | None:
    """The message name the get method returns (refines the Kind's noun)."""
    get = res.methods.get("get")
    return get.response.ref if get is not None and get.response is not None else None


def _path_parts(dotted: str) -> list[str]:
    parts = dotted.split(".")
    return [p for i, p in enumerate(parts) if i == len(parts) - 1 or (p not in _LOCATIONS and p not in _PARENTS)]


def _disambiguate(
    names: dict[str, str], resources: list[str], prefix: str, rank: dict[str, int] | None = None, fixed: frozenset[str] = frozenset()
) -> dict[str, str]:
    """Kind names for resources whose singular names collide: the one with the
    shortest path (if one is shortest) keeps the name, as Config Connector names
    the top-level resource (``DiscoveryEngineControl`` for ``dataStores.controls``
    beside ``collections.dataStores.controls``); the others take the singular of
    their parent collections too (``ApigeeDeveloperApp``, ``ApigeeAppgroupApp``),
    until the names differ or the paths run out. Across documents, the path
    read from the most preferred one (``rank``: the newest GA first) keeps the
    name before any shorter one, so another document never renames a Kind.
    A name in ``fixed`` (a claim's or an override's) is taken: no derived
    resource keeps it."""
    order = rank or {}
    depth = dict.fromkeys(resources, 1)
    out = dict(names)
    for _ in range(8):
        clash: dict[str, list[str]] = {}
        for r in resources:
            clash.setdefault(out[r], []).append(r)
        bad = [rs for name, rs in clash.items() if len(rs) > 1 or name in fixed]
        if not bad:
            break
        for rs in bad:
            size = {r: (order.get(r, 0), len(_path_parts(r))) for r in rs}
            shortest = [r for r in rs if size[r] == min(size.values())]
            for r in rs:
                if len(shortest) == 1 and r == shortest[0] and out[r] not in fixed:
                    continue
                if depth[r] >= len(_path_parts(r)):
                    continue
                depth[r] += 1
                out[r] = prefix + "".join(kind_name("", singular(p)) for p in _path_parts(r)[-depth[r] :])
    return out


def _refine(names: dict[str, str], resources: dict[str, Resource], prefix: str, named: dict[str, str]) -> dict[str, str]:
    """Names the disambiguation left unqualified take the get schema's noun
    (``naming.resource_noun``: ``LoggingLogBucket``), unless two would then
    share a name; collisions are decided on the collection names first, so a
    sibling's schema never hides one (``ApigeeEnvgroupAttachment``)."""
    out = {d: kind_name(prefix, d.rsplit(".", 1)[-1], _schema(resources[d])) if n == kind_name(prefix, d.rsplit(".", 1)[-1]) else n for d, n in names.items()}
    taken: dict[str, int] = {}
    for n in [*out.values(), *named.values()]:
        taken[n] = taken.get(n, 0) + 1
    return {d: names[d] if taken[n] > 1 else n for d, n in out.items()}


def merged_resources(docs: Sequence[DiscoveryDoc]) -> tuple[dict[str, tuple[DiscoveryDoc, Resource]], dict[str, tuple[str, ...]]]:
    """One resource per dotted path over an API's documents, ``docs`` in order
    of preference (``versions.preferred``: the newest GA first, then betas):
    a path is read from the first document that has it with standard methods,
    else from the first that has it at all. Also returns, per path, the keys of
    every document that has it."""
    served: dict[str, tuple[DiscoveryDoc, Resource]] = {}
    having: dict[str, list[str]] = {}
    for doc in docs:
        for dotted, res in iter_resources(doc):
            having.setdefault(dotted, []).append(doc.key)
            cur = served.get(dotted)
            if cur is None or (method_exclusion(cur[1], dotted) is not None and method_exclusion(res, dotted) is None):
                served[dotted] = (doc, res)
    return served, {d: tuple(keys) for d, keys in having.items()}


def derive(
    file: str,
    kf: KindsFile,
    docs: DiscoveryDoc | Sequence[DiscoveryDoc],
    curated: dict[tuple[str, str], tuple[str, str]],
    claimed: Mapping[str, str] | None = None,
    pinned_versions: Mapping[str, str] | None = None,
) -> tuple[list[KindConfig], list[Candidate]]:
    """The derived Kind configs of an auto file, and a row for every resource.

    ``docs``: the API's pinned documents, most preferred first (one document
    is the same as a list of one); each resource is read from the first that
    has it (``merged_resources``), and its config names that document's version.
    ``curated`` maps (API name, resource path) to (Kind, kind file) for every
    resource a ``kinds:`` entry makes a curated Kind of (in any version).
    ``claimed`` maps a resource path to the Config Connector Kind that a claim
    (specs/kcc/claims.yaml) says it is: that resource is a Kind of that name,
    whichever form of the resource it is; ``pinned_versions`` (resource path ->
    document version) reads a claimed resource from the document whose schema
    is Config Connector's rather than the newest.
    """
    docs = [docs] if isinstance(docs, DiscoveryDoc) else list(docs)
    claimed = dict(claimed or {})
    primary = docs[0]
    prefix = kf.kind_prefix or service_prefix(kf.service_name, primary.canonical_name, primary.title)
    resources_of, having = merged_resources(docs)
    for dotted, pin in sorted((pinned_versions or {}).items()):
        doc = next((d for d in docs if d.version == pin), None)
        if doc is None or dotted not in {p for p, _ in iter_resources(doc)}:
            raise SpecError(file, "", f"specs/kcc/claims.yaml pins {primary.name}.{pin} {dotted}, which no document of this file has")
        resources_of[dotted] = (doc, doc.resource(dotted))
    if kf.only:
        # a file for more Kinds of resources another file serves names its Kinds itself
        # (overrides.<resource>.kind, claimed `via` a method); the rest is the other file's
        claimed = {}
        for i, r in enumerate(kf.only):
            if r not in resources_of:
                raise SpecError(file, json_path("only", i), f"{primary.key} has no resource {r!r}")
        resources_of = {d: v for d, v in resources_of.items() if d in kf.only}
    for section, keys in (("exclude", kf.exclude), ("overrides", kf.overrides)):
        for r in sorted(keys):
            if r not in resources_of:
                where = primary.key if len(docs) == 1 else f"none of {', '.join(d.key for d in docs)}"
                raise SpecError(file, json_path(section, r), f"{where} has no resource {r!r}" if len(docs) == 1 else f"{where} has resource {r!r}")
    rows: list[Candidate] = []
    resources = {d: res for d, (_, res) in resources_of.items()}
    doc_of = {d: doc for d, (doc, _) in resources_of.items()}

    def row(dotted: str, kind: str, tier: str, reason: str = "") -> Candidate:
        key = doc_of[dotted].key
        return Candidate(key, dotted, kind, file, tier, reason, tuple(k for k in having[dotted] if k != key))

    usable: list[str] = []
    for dotted in sorted(claimed):
        ov = kf.overrides.get(dotted)
        if ov is not None and ov.kind and ov.kind != claimed[dotted]:
            raise SpecError(file, json_path("overrides", dotted, "kind"), f"{ov.kind}: specs/kcc/claims.yaml names {dotted} {claimed[dotted]}, Config Connector's Kind; drop the kind here")
    pinned_paths = set(kf.overrides) | set(claimed)
    for dotted, res in resources.items():
        ov = kf.overrides.get(dotted)
        name = claimed.get(dotted) or (ov.kind if ov is not None and ov.kind else kind_name(prefix, dotted.rsplit(".", 1)[-1], _schema(res)))
        # a kind config naming the get or the create method (iam's createPolicy) makes it a Kind
        why = None if ov is not None and (ov.methods.get is not None or ov.methods.create is not None) else method_exclusion(res, dotted)
        # a file of more Kinds of a resource (only:) names its own Kind beside a curated one
        another = bool(kf.only) and ov is not None and bool(ov.kind) and ov.kind != curated.get((primary.name, dotted), ("", ""))[0]
        if (primary.name, dotted) in curated and not another:
            kind, cfile = curated[(primary.name, dotted)]
            if cfile == file and not why:
                rows.append(row(dotted, kind, "curated"))
            else:
                rows.append(row(dotted, name, "excluded", f"curated as {kind} ({cfile})"))
        elif why is not None:
            rows.append(row(dotted, name, "excluded", why) if res.methods else row(dotted, "", "excluded", why))
        elif dotted in kf.exclude:
            rows.append(row(dotted, name, "excluded", kf.exclude[dotted]))
        else:
            usable.append(dotted)
    # One Kind per resource: its other forms (global, regional, folder-level)
    # are listed against the form that is the Kind.
    curated_forms = {form_key(d): kind for (api, d), (kind, _) in curated.items() if api == primary.name}
    forms: dict[tuple[str, ...], list[str]] = {}
    for dotted in usable:
        fk = form_key(dotted)
        if fk in curated_forms and dotted not in pinned_paths:
            name = kind_name(prefix, dotted.rsplit(".", 1)[-1], _schema(resources[dotted]))
            rows.append(row(dotted, name, "excluded", f"another form of the curated {curated_forms[fk]}"))
            continue
        forms.setdefault(fk, []).append(dotted)
    rank = {d.key: i for i, d in enumerate(docs)}
    chosen: list[str] = []
    parent_forms: dict[str, list[str]] = {}
    for group in forms.values():
        pinned = sorted(d for d in group if d in pinned_paths)
        # the most preferred document first, then where the form lives
        best = pinned[0] if pinned else min(group, key=lambda d: (rank[doc_of[d].key], _form_rank(d)))
        chosen.append(best)
        for other in group:
            if other == best:
                continue
            if other in pinned_paths:
                chosen.append(other)
                continue
            name = kind_name(prefix, other.rsplit(".", 1)[-1], _schema(resources[other]))
            top = parent_form_of(best, other, resources) if doc_of[best] is doc_of[other] else None
            if top is not None:
                parent_forms.setdefault(best, []).append(top)
                rows.append(row(other, name, "excluded", f"the {top} form of {best}: served by its Kind, whose {PARENT_FIELDS[top]} picks it"))
                continue
            rows.append(row(other, name, "excluded", f"another form of {best} (one Kind per resource; its locations are a field)"))
    named: dict[str, str] = {}
    for d in chosen:
        given = claimed.get(d) or (kf.overrides[d].kind if d in kf.overrides else None)
        if given:
            named[d] = given
    auto_named = [d for d in chosen if d not in named]
    by_rank = {d: rank[doc_of[d].key] for d in auto_named}
    # A derived name that a claim or an override gives another resource (Config
    # Connector's ApigeeRegistryArtifact is the project-level artifacts) goes
    # one parent deeper, as a collision among derived names does.
    fixed = frozenset(named.values())
    plain = {d: kind_name(prefix, d.rsplit(".", 1)[-1]) for d in auto_named}
    names = {**_refine(_disambiguate(plain, auto_named, prefix, by_rank, fixed), resources, prefix, named), **named}
    owner = {n: d for d, n in named.items()}
    for d in [d for d in auto_named if names[d] in fixed]:
        # its path ran out before its name differed: a path to the claimed resource
        # (Discovery Engine's default-collection dataStores), unless a kind file names it
        rows.append(row(d, names[d], "excluded", f"another form of {owner[names[d]]} ({names[d]}): one Kind per resource; name it under overrides if it is another"))
        chosen.remove(d)
    # Names still shared once the paths ran out, across documents: the older
    # document's resource is an earlier model of the preferred one (Talent's v3
    # projects.companies, v4's projects.tenants.companies), not a second Kind.
    keeper: dict[str, str] = {}
    for d in sorted(auto_named, key=lambda d: (by_rank[d], d)):
        first = keeper.setdefault(names[d], d)
        if first != d and by_rank[first] < by_rank[d]:
            rows.append(row(d, names[d], "excluded", f"an earlier model of {doc_of[first].key} {first} (both would be {names[d]}): one Kind per resource"))
            chosen.remove(d)
    configs: list[KindConfig] = []
    seen: dict[str, str] = {}
    for dotted in sorted(chosen):
        version = doc_of[dotted].version if len(docs) > 1 else None
        cfg = _config(names[dotted], dotted, kf.overrides.get(dotted), tuple(sorted(parent_forms.get(dotted, ()))), version)
        if cfg.kind in seen:
            raise SpecError(
                file,
                json_path("overrides", dotted),
                f"{primary.key}: resources {seen[cfg.kind]!r} and {dotted!r} would both be Kind {cfg.kind}; "
                "name one under overrides (<resource>: {kind: <Name>, reason: ...}) or exclude it with a reason",
            )
        seen[cfg.kind] = dotted
        configs.append(cfg)
        rows.append(row(dotted, cfg.kind, "generated"))
    return configs, sorted(rows, key=lambda r: r.resource)


def _config(kind: str, resource: str, ov: DerivedOverride | None, parent_forms: tuple[str, ...] = (), version: str | None = None) -> KindConfig:
    forms: dict[str, Any] = {"parent_forms": parent_forms} if parent_forms else {}
    if version is not None:
        forms["version"] = version
    if ov is None:
        return KindConfig(kind=kind, resource=resource, krm_version=AUTO_KRM_VERSION, **forms)
    return KindConfig(
        kind=kind,
        resource=resource,
        krm_version=AUTO_KRM_VERSION,
        **forms,
        asset_type=ov.asset_type,
        id_generation=ov.id_generation or "user",
        parents=ov.parents,
        fields=ov.fields,
        references=ov.references,
        methods=ov.methods,
        aliases=ov.aliases,
        forms=ov.forms,
        canonical=ov.canonical,
        companions=ov.companions,
        present=ov.present,
        example_id=ov.example_id,
        spec_fields=ov.spec_fields,
        identity=ov.identity,
        fixed=ov.fixed,
        sensitive=ov.sensitive,
        entry_of=ov.entry_of,
        external_forms=ov.external_forms,
        secret_objects=ov.secret_objects,
    )
