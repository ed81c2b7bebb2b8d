"""The Discovery documents as mockgcp sees them: APIs, routes and collections.

A route is (HTTP method, regex over ``servicePath + path``) -> the Discovery
method. A collection is a Discovery resource whose ``get`` returns a schema;
its field facts (output-only, immutable, input-only) come from the schema's
prose plus mockgcp's own override table, and nothing else: mockgcp never
reads the generator's kind configs, so it can disagree with the generator.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kccgen.discovery.behaviours import Behaviour, classify, service_assigned_id
from kccgen.discovery.document import DiscoveryDoc, Method, iter_resources, parse_discovery
from kccgen.discovery.paths import collection_param, rest_prefix, url_regex
from kccgen.documents import document_paths, read_document
from kccgen.mockgcp.apis import Profile, profile_for
from kccgen.mockgcp.overrides import OVERRIDES_FILE, Override, check_override, load_overrides
from kccgen.mockgcp.owners import PathOwners
from kccgen.mockgcp.routing import RouteIndex, segments

#: Discovery method name -> the standard role mockgcp gives it.
ROLES = {"get": "get", "create": "create", "insert": "create", "patch": "update", "update": "update", "delete": "delete", "list": "list"}

_PLACEHOLDER = re.compile(r"^\{\+?([A-Za-z][A-Za-z0-9_]*)\}$")


@dataclass(frozen=True)
class Route:
    api: str  # doc key, e.g. pubsub.v1
    method: Method
    http: str
    regex: re.Pattern[str]
    specificity: int
    resource: str  # dotted Discovery resource path, e.g. projects.topics
    verb: str  # get, create, patch, getIamPolicy...
    segments: tuple[str, ...] = ()  # the template cut for the route index (mockgcp.routing)

    @property
    def role(self) -> str | None:
        """get/create/update/delete/list for a standard method; None for a custom one."""
        return ROLES.get(self.verb)


@dataclass(frozen=True)
class Collection:
    api: str
    resource: str  # projects.topics
    schema: str  # Topic: what get returns
    prefix: str  # REST prefix before resource names: "v1/", "compute/v1/", "storage/v1/"
    methods: Mapping[str, Method]  # every method of the resource, by Discovery name
    output_only: frozenset[str] = frozenset()
    immutable: frozenset[str] = frozenset()
    input_only: frozenset[str] = frozenset()  # taken on write, never returned by GET
    service_assigned: str = ""  # why the service picks IDs ("" when the client does)
    # The resource field a POST-to-collection create names the resource by
    # (dotted: bigquery's datasetReference.datasetId); see body_id_field.
    id_field: str = "name"
    requires: tuple[tuple[str, str], ...] = ()  # field -> collection its value must name (overrides.yaml)
    required: frozenset[str] = frozenset()  # top-level fields a create must carry (overrides.yaml)
    id_fields: tuple[str, ...] = ()  # fields that name it together (dns rrsets: name, type); see trailing_id_fields
    defaults: tuple[tuple[str, str], ...] = ()  # field -> JSON value the service sets on create (overrides.yaml)

    @property
    def get(self) -> Method:
        return self.methods["get"]

    def method(self, role: str) -> Method | None:
        """The resource's method for a role (``create`` is ``insert`` in compute)."""
        return next((m for name, m in sorted(self.methods.items()) if ROLES.get(name) == role), None)

    def key(self, path: str) -> str:
        """Resource name relative to the API prefix: projects/p/topics/t, b/bucket."""
        rel = path[len(self.prefix) :] if path.startswith(self.prefix) else path
        return rel.split(":", 1)[0]


@dataclass
class Api:
    doc: DiscoveryDoc
    profile: Profile
    collections: dict[str, Collection] = field(default_factory=dict)  # by resource path
    # Where google.longrunning operations live, longest first: (regex, prefix)
    # from each operations.get's name pattern (projects/*/locations/*).
    operation_prefixes: list[tuple[re.Pattern[str], str]] = field(default_factory=list)
    # Whether the document has any operations.get: without one a client cannot
    # poll, so the service's operations are answered done.
    pollable: bool = False
    # mockgcp.limits.ApiLimits, worked out on the first request that needs them.
    limits: object = field(default=None, repr=False, compare=False)

    @property
    def key(self) -> str:
        return self.doc.key

    @property
    def legacy_errors(self) -> bool:
        return self.profile.legacy_errors


def _facts(doc: DiscoveryDoc, schema: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """Top-level output-only, immutable and input-only fields of a schema (from Discovery prose)."""
    out, imm, inp = set(), set(), set()
    for name, prop in doc.schemas[schema].properties.items():
        beh = {f.behaviour for f in classify(prop.description, prop.read_only)}
        if Behaviour.OUTPUT_ONLY in beh:
            out.add(name)
        if Behaviour.IMMUTABLE in beh:
            imm.add(name)
        if Behaviour.INPUT_ONLY in beh:
            inp.add(name)
    return frozenset(out), frozenset(imm), frozenset(inp)


_TOP_LEVEL_OPS = ("^operations/[^/]+$", "^operations/.*$", "^operations/.+$")


def _operation_prefixes(get: Method) -> list[tuple[re.Pattern[str], str]]:
    """(regex, prefix) of the names an operations.get serves: ``projects/[^/]+/locations/[^/]+``
    for ``^projects/[^/]+/locations/[^/]+/operations/[^/]+$``; "" for the top-level
    ``^operations/.*$`` (bigtableadmin, apikeys, cloudresourcemanager)."""
    out = []
    for p in get.parameters.values():
        if p.location == "path" and p.pattern and p.pattern.endswith("/operations/[^/]+$"):
            pre = p.pattern.removeprefix("^").removesuffix("/operations/[^/]+$")
            out.append((re.compile("^" + pre), pre))
        elif p.location == "path" and p.pattern in _TOP_LEVEL_OPS:
            out.append((re.compile("^"), ""))
    return out


def trailing_id_fields(doc: DiscoveryDoc, schema: str, get: Method) -> tuple[str, ...]:
    """The resource's fields that name it together, when its get path ends in
    more than one placeholder, each a string field of the resource (dns's
    ``rrsets/{name}/{type}``); empty otherwise."""
    props = doc.schemas[schema].properties
    segs = (get.flat_path or get.path).split(":", 1)[0].split("/")
    out: list[str] = []
    for seg in reversed(segs):
        m = _PLACEHOLDER.match(seg)
        if not m or m.group(1) not in props or props[m.group(1)].type != "string":
            break
        out.insert(0, m.group(1))
    return tuple(out) if len(out) > 1 else ()


def body_id_field(doc: DiscoveryDoc, schema: str, get: Method) -> str:
    """The field of the resource that names it when a create carries no ID in
    its URL or query: the one named after the get path's last parameter
    (admin's ``{+orgUnitPath}``, dns's ``{responsePolicy}`` -> ``responsePolicyName``,
    its ``rules/{responsePolicyRule}`` -> ``ruleName``,
    bigquery's ``{+datasetId}`` inside ``datasetReference``), unless that parameter
    is just the collection's singular and the resource has a ``name`` (compute's
    ``{address}``: Address.address is the IP, Address.name the ID); else ``name``;
    else ``id``, which the service fills in."""
    props = doc.schemas[schema].properties
    segs = get.path.split(":", 1)[0].split("/")
    last = next((i for i in range(len(segs) - 1, -1, -1) if _PLACEHOLDER.match(segs[i])), None)
    m = _PLACEHOLDER.match(segs[last]) if last is not None else None
    ph = m.group(1) if m else ""
    prev = segs[last - 1] if last else ""
    generic = bool(prev) and ph == collection_param(prev) and "name" in props
    if ph and ph != "name" and not generic:
        # dns's rules/{responsePolicyRule}: ResponsePolicyRule.ruleName, after the collection
        for c in (ph, f"{ph}Name", f"{collection_param(prev)}Name" if prev else ""):
            if c in props and props[c].type == "string":
                return c
            if c in props and props[c].type == "integer" and service_assigned_id(props[c].description, props[c].read_only):
                return c  # a number the service assigns (Apps Script's versionNumber)
        for pname, prop in sorted(props.items()):
            ref = doc.schemas.get(prop.ref) if prop.ref else None
            if pname.endswith("Reference") and ref is not None and ph in ref.properties:
                return f"{pname}.{ph}"
    if "name" in props:
        return "name"
    if ph == "name" and get.flat_path:  # v1/{+name}: the collection is in the flat path
        flat = get.flat_path.split(":", 1)[0].split("/")
        prev = flat[-2] if len(flat) > 1 and _PLACEHOLDER.match(flat[-1]) else prev
    # no name: a field named after the collection (firebasehosting's Domain.domainName, ml's Job.jobId)
    singular = collection_param(prev) if prev and not _PLACEHOLDER.match(prev) else ""
    for own in (f"{singular}Name", f"{singular}Id") if singular else ():
        if own in props and props[own].type == "string":
            return own
    return "id" if "id" in props else "name"


def _service_assigned(doc: DiscoveryDoc, schema: str, id_field: str) -> str:
    """Why the service picks the ID in ``id_field`` ("" when the client does): an
    ``id`` the body names it by, or a field the prose calls output only or assigned."""
    if id_field == "id":
        return f"{doc.key} {schema}.id: no other field names the resource"
    prop = doc.schemas[schema].properties.get(id_field)
    why = service_assigned_id(prop.description, prop.read_only) if prop is not None else ""
    return f"{doc.key} {schema}.{id_field}: {why}" if why else ""


def _apply(coll: Collection, overrides: list[Override]) -> Collection:
    imm, out, sa, req, must = set(coll.immutable), set(coll.output_only), coll.service_assigned, dict(coll.requires), set(coll.required)
    dflt = dict(coll.defaults)
    idf = next((o.id_field for o in overrides if o.id_field), coll.id_field)
    if idf != coll.id_field:
        sa = ""  # the field an override names the client sends, unless it also says serviceAssignedId
    for o in overrides:
        must |= o.required
        dflt.update(o.defaults)
        imm |= o.immutable
        out = (out | o.output_only) - o.settable
        imm |= o.settable  # taken on create only: no update carries them
        req.update(o.requires)
        if o.service_assigned_id:
            sa = sa or f"{o.where}: {o.reason}"
    return Collection(
        coll.api, coll.resource, coll.schema, coll.prefix, coll.methods, frozenset(out), frozenset(imm), coll.input_only, sa, idf, tuple(sorted(req.items())), frozenset(must),
        coll.id_fields,
        tuple(sorted(dflt.items())),
    )


def _load_api(key: str, doc: DiscoveryDoc) -> tuple[Api, list[Route]]:
    """One document: its collections (with Discovery's facts) and its routes."""
    api = Api(doc, profile_for(doc.name))
    routes: list[Route] = []
    for dotted, res in iter_resources(doc):
        for verb, m in sorted(res.methods.items()):
            rx, spec = url_regex(doc.service_path, m)
            routes.append(Route(doc.key, m, m.http_method, rx, spec, dotted, verb, tuple(segments(doc.service_path, m))))
        if dotted.split(".")[-1] == "operations" and "get" in res.methods:
            api.operation_prefixes += _operation_prefixes(res.methods["get"])
            api.pollable = True
        get = res.methods.get("get")
        if get is None or get.response is None or get.response.ref is None:
            continue
        schema = get.response.ref
        out_only, imm, inp = _facts(doc, schema)
        prefix = doc.service_path + rest_prefix(get.flat_path or get.path)
        segs = (get.flat_path or get.path).split("/")
        if len(segs) > 2 and segs[1] in ("{" + segs[0] + "}", "{" + segs[0] + "Id}") and segs[2].startswith("{"):
            prefix += segs[0] + "/"  # any-parent path v1/{v1}/{v1Id1}/services/..: names start after v1/
        idf = body_id_field(doc, schema, get)
        api.collections[dotted] = Collection(
            doc.key, dotted, schema, prefix, dict(res.methods), out_only, imm, inp, _service_assigned(doc, schema, idf), idf,
            id_fields=trailing_id_fields(doc, schema, get),
        )
    api.operation_prefixes.sort(key=lambda x: -len(x[1]))
    return api, routes


_ROOT = re.compile(rb'"rootUrl"\s*:\s*"([^"]*)"')
_SERVICE_PATH = re.compile(rb'"servicePath"\s*:\s*"([^"]*)"')


class Catalog:
    """Every pinned document (vendored or locked), each parsed on first use.

    Parsing all ~325 documents takes tens of seconds, so an API is loaded when a
    request first names it (by host) or a caller asks for it. The host index is
    read from each file's ``rootUrl``/``servicePath`` without parsing the rest.
    The override table is checked against an API when that API loads; an
    override naming a document that is not pinned fails at once.
    """

    def __init__(self, specs: Path, overrides_file: Path = OVERRIDES_FILE) -> None:
        self.specs = specs
        self.paths = document_paths(specs)
        self.vendored = tuple(p.stem for p in sorted((specs / "discovery").glob("*.json")))
        self.overrides = load_overrides(overrides_file)
        for o in self.overrides:
            if o.api not in self.paths:
                check_override(o, {k: {} for k in self.paths}, {})  # raises the "no Discovery document" error
        self.apis: dict[str, Api] = {}
        self.routes: dict[str, list[Route]] = {}
        self._hosts: dict[str, list[tuple[str, str]]] | None = None
        self._lock = threading.RLock()
        self._indexes: dict[tuple[str, ...], RouteIndex] = {}
        # Un-prefixed URLs (``v1/projects/...``, as before hosts were routed) reach
        # the vendored APIs first; a path none of them serves goes to the one
        # pinned document that serves it (``owners``). Which APIs happen to be
        # loaded never changes where a request goes.
        self.shared = self.index(self.vendored)
        self._owners: PathOwners | None = None

    def index(self, keys: tuple[str, ...]) -> RouteIndex:
        """The route index of some APIs (one host's), built once."""
        with self._lock:
            if keys not in self._indexes:
                for k in keys:
                    self.api(k)
                self._indexes[keys] = RouteIndex(r for k in keys for r in self.routes[k])
            return self._indexes[keys]

    def keys(self) -> list[str]:
        return list(self.paths)

    def owners(self, http: str, path: str) -> list[str]:
        """The pinned documents, other than the vendored ones, that serve an
        un-prefixed ``path`` best (mockgcp.owners): one to route to, or several
        that only a host can tell apart."""
        with self._lock:
            if self._owners is None:
                self._owners = PathOwners({k: p for k, p in self.paths.items() if k not in self.vendored})
        return self._owners.owners(http, path)

    def api(self, key: str) -> Api:
        """The API of a document key, parsed (and its overrides applied) on first use."""
        with self._lock:
            if key not in self.apis:
                if key not in self.paths:
                    raise KeyError(key)
                doc = parse_discovery(read_document(self.specs, key), str(self.paths[key]))
                api, routes = _load_api(key, doc)
                mine = [o for o in self.overrides if o.api == key]
                fields = {(key, r): frozenset(doc.schemas[c.schema].properties) for r, c in api.collections.items()}
                by_res: dict[str, list[Override]] = {}
                for o in mine:
                    check_override(o, {key: api.collections}, fields)
                    by_res.setdefault(o.resource, []).append(o)
                for res, os_ in by_res.items():
                    api.collections[res] = _apply(api.collections[res], os_)
                self.apis[key] = api
                self.routes[key] = sorted(routes, key=lambda r: (-r.specificity, r.api, r.resource, r.verb))
            return self.apis[key]

    def hosts(self) -> dict[str, list[tuple[str, str]]]:
        """API host -> [(servicePath, doc key)], longest servicePath first."""
        with self._lock:
            if self._hosts is None:
                out: dict[str, list[tuple[str, str]]] = {}
                for key, path in self.paths.items():
                    head = path.read_bytes()
                    root, sp = _ROOT.search(head), _SERVICE_PATH.search(head)
                    host = (root.group(1).decode() if root else "").split("//", 1)[-1].rstrip("/")
                    out.setdefault(host, []).append((sp.group(1).decode() if sp else "", key))
                for v in out.values():
                    v.sort(key=lambda x: (-len(x[0]), x[1]))
                self._hosts = out
            return self._hosts

    def host_of(self, key: str) -> tuple[str, str]:
        """(host, servicePath) of a document, from the index (no parse)."""
        for host, entries in self.hosts().items():
            for sp, k in entries:
                if k == key:
                    return host, sp
        raise KeyError(key)


def load_apis(specs: Path, overrides_file: Path = OVERRIDES_FILE) -> tuple[dict[str, Api], list[Route]]:
    """The vendored documents (``specs/discovery``), parsed at once: the APIs and
    their route table, most specific first. mockgcp serves more (Catalog); tools
    and tests that look at the curated APIs use this."""
    cat = Catalog(specs, overrides_file)
    apis = {k: cat.api(k) for k in cat.vendored}
    for o in cat.overrides:
        if o.api not in apis:
            cat.api(o.api)  # a pinned document beyond the vendored ones: its overrides checked as it loads
    routes = sorted((r for k in apis for r in cat.routes[k]), key=lambda r: (-r.specificity, r.api, r.resource, r.verb))
    return apis, routes
