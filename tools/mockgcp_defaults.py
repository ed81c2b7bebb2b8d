"""Derive mockgcp's server-side defaults from Config Connector's recorded traffic.

``python -m tools.mockgcp_defaults`` reads every ``_http.log`` under
``<repo>/../shared/compat/kcc/fixtures`` (``--fixtures`` to point elsewhere)
and writes ``mockgcp/defaults.json``: ``{doc key: {schema: {field: value}}}``,
e.g. ``{"pubsub.v1": {"Subscription": {"ackDeadlineSeconds": 10}}}``.
``--check`` only compares with the committed file (exit 1 on a difference).
The engine (``MockGCP._apply_defaults``) applies these values on create to
fields the request did not set.

The recordings are read only here, at derivation time: they are not copied
into the repository and nothing reads them at run time. Only the derived
default values below are committed.

How a default is derived
------------------------

1. **Which exchanges.** Every HTTP exchange is routed through the pinned
   Discovery documents (``kccgen.mockgcp.catalog``), the way the engine routes
   it (host ignored, path only; hosts mockgcp does not serve are skipped). An
   exchange is a *recorded create* when it is a successful (2xx) call of the
   create method (``create``/``insert``) of any collection mockgcp serves, in
   any log (a topic created as another Kind's dependency counts too); the
   generator's kind configs are not read. One gRPC create is understood as well
   (``GRPC_CREATES``: monitoring's AlertPolicyService/CreateAlertPolicy, the
   only way MonitoringAlertPolicy is recorded); other gRPC entries are skipped.
2. **Request and response resource.** The request resource is the body, or its
   wrapper field for wrapper creates (spanner's ``CreateInstanceRequest.instance``,
   ``alertPolicy`` for the gRPC create). The response resource is the create's
   response body when the create method is not long-running; for a
   long-running create (google.longrunning, compute operations) it is the
   resource as first returned by a successful GET of the created resource
   later in the same log (the GET right after the operation completes). The
   created resource's name is worked out from the create as mockgcp reads it
   (``kccgen.mockgcp.shapes.create_shape``: name in the path, ``?<id>Id=``,
   the request's ``<id>Id`` field, name in the body, or, service-assigned,
   the response's ``name``) and matched against the GET's path. Enum values
   recorded as numbers (Config Connector's direct controllers ask for
   ``$alt=json;enum-encoding=int``) are turned back into names with the
   Discovery enum list (``decode_enums``: number n is ``enum[n]``), in request
   and response alike. That assumes the list is in proto-number order from 0,
   which holds for every enum that ends up in defaults.json (artifactregistry
   ``Repository.mode``, spanner ``Instance.edition``/``instanceType``/
   ``defaultBackupScheduleType``, checked against the protos) but not for all
   (cloudkms ``CryptoKeyVersion.state`` lists PENDING_GENERATION, number 5,
   second): check a new int-decoded default before trusting it.
3. **Candidate fields.** A top-level field of the response resource is a
   candidate default when

   * the request resource does not have it;
   * it is not ``name`` (identity);
   * it is a property of the collection's Discovery schema (a field the pinned
     document does not know cannot be classified and is skipped);
   * it is not output-only per ``kccgen.discovery.behaviours.classify(description,
     read_only)`` (the engine fills output-only fields itself);
   * the engine does not already fill it for that very request: the create
     request is replayed against a scratch ``MockGCP`` with no defaults and
     any field it adds on its own (``kind``, ``selfLink``, ``etag``,
     ``location``/``locationType``/``owner`` of buckets, DNS ``nameServers``,
     a subnetwork's ``gatewayAddress``...) is the engine's business, since a
     recorded value there would depend on the recorded input;
   * its value is not a recording placeholder: a string containing ``${``
     (``${projectId}``, ``${uniqueId}``...) or one of the recorder's
     normalised constants (``RECORDER_PLACEHOLDERS``: the fixed timestamp,
     all-zero IDs, ``abcdef0123A=`` etags...). Inside an object value such
     sub-fields, and sub-fields the classifier calls output-only, are dropped;
     an object holding nothing but placeholders is skipped, while one emptied
     by dropping output-only sub-fields (or recorded empty) is kept as ``{}``,
     since the service does return the object.

   One level of nesting: when both request and response carry an object field
   (and the schema describes it as an object: a ``$ref`` or inline schema), each
   sub-field of the response object the request object does not have is a
   candidate under the same rules (classified against the sub-schema), and is
   stored as ``{field: {sub-field: value}}``; the engine merges such an object
   into the one the user sent, key by key. The engine also adds that object
   whole when the user did not send the field, so sub-field defaults are
   kept only when that is right by the recordings too: the field is itself a
   recorded default (step 3), or every recorded create of the schema answered
   with the object (the service always returns it; ``iamConfiguration`` of a
   bucket). Otherwise they are dropped (``autoclass.terminalStorageClass``
   only appears when the user enabled autoclass).
4. **Choosing the value.** Each (doc key, schema, field) collects one value per
   recorded create. The most common value wins; ties are broken by the
   smallest canonical JSON text (``json.dumps(sort_keys=True)``), so the
   output does not depend on file order. A field observed at top level and
   as nested sub-fields gets the top-level object with the nested sub-fields
   added where it lacks them.
5. **Output.** Doc keys, schemas and fields sorted; JSON with sorted keys and
   two-space indentation, a trailing newline. The same recordings and the
   same engine (step 3 asks it which fields it fills) give the same bytes;
   tests/test_mockgcp_fidelity.py fails when the committed file is stale.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from kccgen.discovery.behaviours import Behaviour, classify
from kccgen.discovery.document import JsonSchema, Method
from kccgen.mockgcp.catalog import Api, Collection, Route, load_apis
from kccgen.mockgcp.httplog import HttpLogEntry, read_http_log
from kccgen.mockgcp.shapes import create_shape, lro_style

REPO = Path(__file__).resolve().parent.parent
SPECS = REPO / "specs"
DEFAULT_FIXTURES = REPO.parent / "shared" / "compat" / "kcc" / "fixtures"
OUT = REPO / "mockgcp" / "defaults.json"

#: Values Config Connector's recorder writes in place of run-specific ones.
RECORDER_PLACEHOLDERS: frozenset[str] = frozenset(
    {
        "2024-04-01T12:34:56.123456Z",
        "000000000000000000000",
        "abcdef0123A=",
        "abcdef0123A",
        "12345678901234",
        "123456789",
        "revision-id-placeholder",
        "user@example.com",
    }
)

#: gRPC creates understood: method -> (doc key, Discovery resource, wrapper field).
GRPC_CREATES: dict[str, tuple[str, str, str]] = {
    "/google.monitoring.v3.AlertPolicyService/CreateAlertPolicy": ("monitoring.v3", "projects.alertPolicies", "alertPolicy"),
}


@dataclass(frozen=True)
class RecordedCreate:
    """One successful create of one of our Kinds' resources, as recorded."""

    source: str  # log path (relative to the fixtures) and entry number
    api: str
    resource: str
    request: dict[str, Any]  # the resource the request carried
    response: dict[str, Any]  # the resource the service answered with
    method: str
    path: str
    query: dict[str, list[str]]
    body: Any


# --- Kinds and routing ------------------------------------------------------------------


def find_route(routes: Sequence[Route], http: str, path: str) -> tuple[Route, dict[str, str]] | None:
    """The engine's routing: first route (most specific) whose regex matches."""
    for r in routes:
        if r.http == http:
            m = r.regex.match(path)
            if m:
                return r, m.groupdict()
    return None


def served_hosts(apis: dict[str, Api]) -> dict[str, str]:
    return {a.doc.host: k for k, a in apis.items()}


def split_url(url: str) -> tuple[str, str, dict[str, list[str]]]:
    """(host, path without leading slash, query) of a recorded URL."""
    u = urlsplit(url)
    return u.hostname or "", u.path.lstrip("/"), parse_qs(u.query, keep_blank_values=True)


def created_key(api: Api, coll: Collection, method: Method, path: str, query: dict[str, list[str]], body: Any, response: Any) -> str | None:
    """The relative name of the resource a create makes, as mockgcp reads the request (None when unknown)."""
    rel = coll.key(path)
    shape = create_shape(api.doc, coll, method)
    body = body if isinstance(body, dict) else {}
    if shape.id_from == "url":
        return rel
    if shape.id_from == "query" and shape.id_field:
        rid = (query.get(shape.id_field) or [""])[0]
        return f"{rel}/{rid}" if rid else None
    if shape.id_from == "request" and shape.id_field:
        rid = body.get(shape.id_field)
        return f"{rel}/{rid}" if isinstance(rid, str) and rid else None
    if shape.id_from == "body-name":
        name = body.get("name")
        return f"{rel}/{name}" if isinstance(name, str) and name else None
    if isinstance(response, dict) and isinstance(response.get("name"), str):
        return str(response["name"])  # service-assigned
    return None


def request_resource(api: Api, coll: Collection, method: Method, body: Any) -> dict[str, Any]:
    """The resource a create request carries: the body, its wrapper field, or a flat request's resource fields."""
    if not isinstance(body, dict):
        return {}
    shape = create_shape(api.doc, coll, method)
    if shape.body == "wrapper" and shape.resource_field:
        inner = body.get(shape.resource_field)
        return dict(inner) if isinstance(inner, dict) else {}
    return {k: v for k, v in body.items() if k not in shape.inputs}


# --- the recorded creates ---------------------------------------------------------------


def iter_logs(fixtures: Path) -> list[Path]:
    return sorted(fixtures.rglob("_http.log"))


def recorded_creates(
    fixtures: Path, apis: dict[str, Api], routes: Sequence[Route]
) -> Iterator[RecordedCreate]:
    hosts = served_hosts(apis)
    for log in iter_logs(fixtures):
        entries = read_http_log(log)
        rel = log.relative_to(fixtures).parent.as_posix()
        for i, e in enumerate(entries):
            rc = _create_at(entries, i, e, apis, routes, hosts, f"{rel}#{i + 1}")
            if rc is not None:
                yield rc


def _create_at(
    entries: list[HttpLogEntry],
    i: int,
    e: HttpLogEntry,
    apis: dict[str, Api],
    routes: Sequence[Route],
    hosts: dict[str, str],
    source: str,
) -> RecordedCreate | None:
    if not e.ok:
        return None
    if e.is_grpc:
        spec = GRPC_CREATES.get(e.url)
        if spec is None or not isinstance(e.request_json, dict) or not isinstance(e.response_json, dict):
            return None
        api_key, resource, wrapper = spec
        gschema = apis[api_key].doc.schemas[apis[api_key].collections[resource].schema]
        req = e.request_json.get(wrapper)
        req = decode_enums(apis[api_key], gschema, dict(req) if isinstance(req, dict) else {})
        resp = decode_enums(apis[api_key], gschema, dict(e.response_json))
        return RecordedCreate(source, api_key, resource, req, resp, "GRPC", e.url, {}, e.request_json)
    host, path, query = split_url(e.url)
    if host not in hosts:
        return None
    found = find_route(routes, e.method, path)
    if found is None:
        return None
    route = found[0]
    api = apis[route.api]
    coll = api.collections.get(route.resource)
    if coll is None or route.role != "create":
        return None
    schema = api.doc.schemas[coll.schema]
    req = decode_enums(api, schema, request_resource(api, coll, route.method, e.request_json))
    if lro_style(api.doc, route.method) == "none":
        resp = e.response_json
    else:
        key = created_key(api, coll, route.method, path, query, e.request_json, None)
        resp = _first_get(entries[i + 1 :], coll, key, routes, hosts, route.api)
    if not isinstance(resp, dict):
        return None
    resp = decode_enums(apis[route.api], schema, resp)
    return RecordedCreate(source, route.api, route.resource, req, resp, e.method, path, query, e.request_json)


def _first_get(
    later: list[HttpLogEntry], coll: Collection, key: str | None, routes: Sequence[Route], hosts: dict[str, str], api: str
) -> dict[str, Any] | None:
    """The created resource as the first successful GET after the create returns it."""
    if key is None:
        return None
    for e in later:
        if e.is_grpc or e.method != "GET" or not e.ok:
            continue
        host, path, _ = split_url(e.url)
        if hosts.get(host) != api:
            continue
        found = find_route(routes, "GET", path)
        if found is None or found[0].resource != coll.resource or found[0].role != "get":
            continue
        if coll.key(path) == key and isinstance(e.response_json, dict):
            return dict(e.response_json)
    return None


# --- candidates ---------------------------------------------------------------------------


def is_placeholder(value: Any) -> bool:
    return isinstance(value, str) and ("${" in value or value in RECORDER_PLACEHOLDERS)


def output_only(prop: JsonSchema) -> bool:
    return Behaviour.OUTPUT_ONLY in {f.behaviour for f in classify(prop.description, prop.read_only)}


def _sub_schema(api: Api, prop: JsonSchema) -> JsonSchema | None:
    """The object schema of a property: a named ($ref) schema or an inline one."""
    if prop.ref:
        return api.doc.schemas.get(prop.ref)
    return prop if prop.properties else None


def decode_enums(api: Api, node: JsonSchema | None, value: Any, depth: int = 0) -> Any:
    """Enum values recorded as numbers (``$alt=json;enum-encoding=int``) -> names.

    Number n is taken as ``enum[n]``: right when the document lists the proto
    enum in number order from 0 (``*_UNSPECIFIED``), as for the enums in
    defaults.json; see the module docstring for the exception."""
    if node is None or depth > 20:
        return value
    if node.ref:
        return decode_enums(api, api.doc.schemas.get(node.ref), value, depth + 1)
    if node.enum and isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(node.enum):
        return node.enum[value]
    if isinstance(value, list) and node.items is not None:
        return [decode_enums(api, node.items, v, depth + 1) for v in value]
    if isinstance(value, dict):
        if node.properties:
            return {k: decode_enums(api, node.properties.get(k), v, depth + 1) for k, v in value.items()}
        if node.additional_properties is not None:
            return {k: decode_enums(api, node.additional_properties, v, depth + 1) for k, v in value.items()}
    return value


def clean(api: Api, prop: JsonSchema, value: Any) -> Any:
    """The value without placeholder / output-only sub-fields (one object level deep,
    placeholders at any depth); None when nothing usable is left."""
    if is_placeholder(value):
        return None
    if isinstance(value, list):
        if any(_has_placeholder(v) for v in value):
            return None
        return copy.deepcopy(value)
    if not isinstance(value, dict):
        return copy.deepcopy(value)
    sub = _sub_schema(api, prop)
    out: dict[str, Any] = {}
    dropped_output_only = False
    for k, v in value.items():
        sp = sub.properties.get(k) if sub is not None else None
        if sp is not None and output_only(sp):
            dropped_output_only = True
            continue
        if _has_placeholder(v):
            v = _strip_placeholders(v)
            if v is None:
                continue
        out[k] = copy.deepcopy(v)
    if not out and value and not dropped_output_only:
        return None  # nothing but placeholders
    return out


def _has_placeholder(v: Any) -> bool:
    if isinstance(v, dict):
        return any(_has_placeholder(x) for x in v.values())
    if isinstance(v, list):
        return any(_has_placeholder(x) for x in v)
    return is_placeholder(v)


def _strip_placeholders(v: Any) -> Any:
    if is_placeholder(v):
        return None
    if isinstance(v, list):
        return None if any(_has_placeholder(x) for x in v) else v
    if isinstance(v, dict):
        out = {k: s for k, x in v.items() if (s := _strip_placeholders(x)) is not None}
        return out or None
    return v


def engine_filled(rc: RecordedCreate) -> set[str]:
    """Top-level fields a scratch engine (no defaults) adds on its own to this create."""
    if rc.method == "GRPC":
        return set()
    from kccgen.mockgcp.engine import MockGCP  # the engine loads defaults.json: import late

    eng = MockGCP(SPECS, lro_polls=0)
    eng.defaults = {}
    try:
        _, resp = eng.handle(rc.method, rc.path, rc.query, copy.deepcopy(rc.body), fault=None)
    except Exception:  # an engine bug must not stop the derivation
        return set()
    if resp.status >= 300:
        print(f"mockgcp refuses the recorded create {rc.source}: {resp.status} {resp.body}", file=sys.stderr)
        return set()
    api = eng.apis[rc.api]
    coll = api.collections[rc.resource]
    found = eng.route(rc.method, rc.path)
    key = created_key(api, coll, found[0].method, rc.path, rc.query, rc.body, resp.body) if found else None
    stored = eng.resources.get(f"{rc.api}|{key}") if key else None
    if stored is None:  # service-assigned: the only resource of that collection
        prefix = f"{rc.api}|{coll.key(rc.path)}/"
        stored = next((v for k, v in sorted(eng.resources.items()) if k.startswith(prefix)), None)
    if stored is None:
        return set()
    return set(stored) - set(rc.request)


@dataclass(frozen=True)
class Observation:
    api: str
    schema: str
    field: str
    sub: str | None  # a sub-field of ``field`` (one level of nesting), or None
    value: Any
    source: str


def observations(rc: RecordedCreate, api: Api, coll: Collection, filled: set[str]) -> Iterator[Observation]:
    props = api.doc.schemas[coll.schema].properties
    for f, v in sorted(rc.response.items()):
        prop = props.get(f)
        if f == "name" or prop is None or output_only(prop):
            continue
        if f not in rc.request:
            if f in filled:
                continue
            cv = clean(api, prop, v)
            if cv is not None:
                yield Observation(rc.api, coll.schema, f, None, cv, rc.source)
            continue
        req_v = rc.request[f]
        sub = _sub_schema(api, prop)
        if not (isinstance(v, dict) and isinstance(req_v, dict) and sub is not None):
            continue
        for k, sv in sorted(v.items()):
            sp = sub.properties.get(k)
            if k in req_v or sp is None or output_only(sp):
                continue
            cv = clean(api, sp, sv)
            if cv is not None:
                yield Observation(rc.api, coll.schema, f, k, cv, rc.source)


def _canon(v: Any) -> str:
    return json.dumps(v, sort_keys=True, separators=(",", ":"))


def choose(values: list[Any]) -> Any:
    """Most common value; ties go to the smallest canonical JSON text."""
    counts = Counter(_canon(v) for v in values)
    best = min(counts, key=lambda c: (-counts[c], c))
    return json.loads(best)


def derive(fixtures: Path = DEFAULT_FIXTURES, specs: Path = SPECS) -> dict[str, dict[str, dict[str, Any]]]:
    apis, routes = load_apis(specs)
    top: dict[tuple[str, str, str], list[Any]] = defaultdict(list)
    nested: dict[tuple[str, str, str], dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    creates: Counter[tuple[str, str]] = Counter()
    present: Counter[tuple[str, str, str]] = Counter()
    for rc in recorded_creates(fixtures, apis, routes):
        api = apis[rc.api]
        coll = api.collections[rc.resource]
        creates[(rc.api, coll.schema)] += 1
        for f in rc.response:
            present[(rc.api, coll.schema, f)] += 1
        for o in observations(rc, api, coll, engine_filled(rc)):
            if o.sub is None:
                top[(o.api, o.schema, o.field)].append(o.value)
            else:
                nested[(o.api, o.schema, o.field)][o.sub].append(o.value)
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for key in sorted(set(top) | set(nested)):
        api_key, schema, f = key
        if key in top:
            value: Any = choose(top[key])
        elif present[key] == creates[(api_key, schema)]:
            value = {}  # the service always answers with the object
        else:
            continue  # sub-field defaults alone would add the object to every create
        if key in nested:
            if not isinstance(value, dict):
                continue  # a scalar default wins over sub-fields of objects
            for sub in sorted(nested[key]):
                value.setdefault(sub, choose(nested[key][sub]))
        out.setdefault(api_key, {}).setdefault(schema, {})[f] = value
    return out


def render(defaults: dict[str, dict[str, dict[str, Any]]]) -> str:
    return json.dumps(defaults, indent=2, sort_keys=True) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.mockgcp_defaults", description=__doc__.split("\n", 1)[0])
    ap.add_argument("--fixtures", type=Path, default=DEFAULT_FIXTURES, help="Config Connector fixtures directory")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--check", action="store_true", help="compare with the committed file instead of writing")
    args = ap.parse_args(argv)
    if not args.fixtures.is_dir():
        print(f"fixtures not found: {args.fixtures}", file=sys.stderr)
        return 2
    text = render(derive(args.fixtures))
    if args.check:
        current = args.out.read_text() if args.out.exists() else ""
        if current != text:
            print(f"{args.out} is out of date: run python -m tools.mockgcp_defaults", file=sys.stderr)
            return 1
        return 0
    args.out.write_text(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
