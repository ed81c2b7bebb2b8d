"""The Discovery documents as mockgcp sees them: APIs, routes and collections.

A route is (HTTP method, regex over ``servicePath + path``) -> the Discovery
method. A collection is a Discovery resource whose ``get`` returns a schema;
its field facts (output-only, immutable, input-only) come from the schema's
prose plus mockgcp's own override table, and nothing else: mockgcp never
reads the generator's kind configs, so it can disagree with the generator.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kccgen.discovery.behaviours import Behaviour, classify
from kccgen.discovery.document import DiscoveryDoc, Method, iter_resources, load_discovery
from kccgen.discovery.paths import rest_prefix, url_regex
from kccgen.mockgcp.apis import Profile, profile_for
from kccgen.mockgcp.overrides import OVERRIDES_FILE, Override, check_override, load_overrides

#: Discovery method name -> the standard role mockgcp gives it.
ROLES = {"get": "get", "create": "create", "insert": "create", "patch": "update", "update": "update", "delete": "delete", "list": "list"}

# The schema's `name` says the service picks the ID: monitoring's "[ALERT_POLICY_ID]
# is assigned by Cloud Monitoring", "automatically assigned by the server", "generated".
_SERVICE_ASSIGNED = re.compile(r"\bis assigned by\b|\bautomatically assigned by the server\b|\bsystem-assigned\b|\bgenerated\b", re.IGNORECASE)


@dataclass(frozen=True)
class Route:
    api: str  # doc key, e.g. pubsub.v1
    method: Method
    http: str
    regex: re.Pattern[str]
    specificity: int
    resource: str  # dotted Discovery resource path, e.g. projects.topics
    verb: str  # get, create, patch, getIamPolicy...

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


def _operation_prefixes(get: Method) -> list[tuple[re.Pattern[str], str]]:
    out = []
    for p in get.parameters.values():
        if p.location == "path" and p.pattern and p.pattern.endswith("/operations/[^/]+$"):
            pre = p.pattern.removeprefix("^").removesuffix("/operations/[^/]+$")
            out.append((re.compile("^" + pre), pre))
    return out


def _service_assigned(doc: DiscoveryDoc, schema: str) -> str:
    name = doc.schemas[schema].properties.get("name")
    m = _SERVICE_ASSIGNED.search((name.description or "") if name else "")
    return f"{doc.key} {schema}.name: {m.group(0)!r}" if m else ""


def _apply(coll: Collection, overrides: list[Override]) -> Collection:
    imm, out, sa = set(coll.immutable), set(coll.output_only), coll.service_assigned
    for o in overrides:
        imm |= o.immutable
        out |= o.output_only
        if o.service_assigned_id:
            sa = sa or f"{o.where}: {o.reason}"
    return Collection(coll.api, coll.resource, coll.schema, coll.prefix, coll.methods, frozenset(out), frozenset(imm), coll.input_only, sa)


def load_apis(specs: Path, overrides_file: Path = OVERRIDES_FILE) -> tuple[dict[str, Api], list[Route]]:
    """Every document under ``specs/discovery``: the APIs and the route table, most specific first."""
    apis: dict[str, Api] = {}
    routes: list[Route] = []
    for p in sorted((specs / "discovery").glob("*.json")):
        doc = load_discovery(p)
        api = apis[doc.key] = Api(doc, profile_for(doc.name))
        for dotted, res in iter_resources(doc):
            for verb, m in sorted(res.methods.items()):
                rx, spec = url_regex(doc.service_path, m)
                routes.append(Route(doc.key, m, m.http_method, rx, spec, dotted, verb))
            if dotted.split(".")[-1] == "operations" and "get" in res.methods:
                api.operation_prefixes += _operation_prefixes(res.methods["get"])
            get = res.methods.get("get")
            if get is None or get.response is None or get.response.ref is None:
                continue
            schema = get.response.ref
            out_only, imm, inp = _facts(doc, schema)
            prefix = doc.service_path + rest_prefix(get.flat_path or get.path)
            api.collections[dotted] = Collection(
                doc.key, dotted, schema, prefix, dict(res.methods), out_only, imm, inp, _service_assigned(doc, schema)
            )
    table = load_overrides(overrides_file)
    fields = {(k, r): frozenset(a.doc.schemas[c.schema].properties) for k, a in apis.items() for r, c in a.collections.items()}
    by_coll: dict[tuple[str, str], list[Override]] = {}
    for o in table:
        check_override(o, {k: a.collections for k, a in apis.items()}, fields)
        by_coll.setdefault((o.api, o.resource), []).append(o)
    for (key, resource), os_ in by_coll.items():
        apis[key].collections[resource] = _apply(apis[key].collections[resource], os_)
    for api in apis.values():
        api.operation_prefixes.sort(key=lambda x: -len(x[1]))
    routes.sort(key=lambda r: (-r.specificity, r.api, r.resource, r.verb))
    return apis, routes
