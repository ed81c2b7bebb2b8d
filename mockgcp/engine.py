"""The emulator's semantics, independent of HTTP.

``MockGCP.handle(method, path, query, body)`` routes a request through the
Discovery route table and applies the standard semantics of the method's
shape (DESIGN §3): create by PUT on the name, by ``?<id>Id=``, by name in the
body, by wrapper request, or with a service-generated numeric ID; get, list,
delete; update with a mask in the query or the body, or a whole resource;
long-running operations in the google.longrunning, compute and DNS styles.
"""

from __future__ import annotations

import base64
import copy
import functools
import json
import random
import re
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from kccgen import data_dir
from kccgen.mockgcp import quirks
from kccgen.mockgcp.errors import ApiError, already_exists, invalid, not_found, precondition
from kccgen.mockgcp.faults import Fault, FaultSet
from kccgen.mockgcp.routes import Api, Collection, Route, load_apis

DEFAULTS_FILE = Path(__file__).resolve().parent / "defaults.json"

# Parsing the Discovery documents takes most of a second; the route table and
# collections are never mutated after loading, so engines share them.
_load_apis = functools.lru_cache(maxsize=4)(load_apis)

# Preferred values for an output-only state/status enum on a fresh resource.
_READY_STATES = ("READY", "ACTIVE", "ENABLED", "AVAILABLE", "RUNNING", "CREATED", "SUCCEEDED")
_TIME_FIELDS = ("createTime", "updateTime", "creationTime", "timeCreated", "updated", "revisionCreateTime")
_KIND_RX = re.compile(r"\b[Aa]lways\s+([a-z]+#[A-Za-z]+)")
_GRPC_INTERNAL = 13
_PICK = object()  # handle(): pick the fault here


@dataclass
class Response:
    status: int
    body: Any = None  # dict, or None for no body (204)


@dataclass
class Operation:
    """A long-running operation and what it resolves to."""

    api: str
    style: str  # google.longrunning | compute | dns
    key: str  # the operation's own name/path, the store key
    body: dict[str, Any]
    polls_left: int
    result: dict[str, Any] | None = None  # the resource (or {}) once done
    error: str | None = None
    done_body: dict[str, Any] = field(default_factory=dict)


def _now() -> datetime:
    return datetime.now(UTC)


def rfc3339(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond:06d}Z"


def compute_time(t: datetime) -> str:
    """compute writes local time with an offset and milliseconds."""
    local = t.astimezone(timezone(timedelta(hours=-7)))
    return local.strftime("%Y-%m-%dT%H:%M:%S.") + f"{local.microsecond // 1000:03d}-07:00"


def _camel(path: str) -> str:
    return ".".join(re.sub(r"_([a-z])", lambda m: m.group(1).upper(), p) for p in path.split("."))


class MockGCP:
    """In-memory GCP for the APIs in ``specs/discovery``."""

    def __init__(self, specs: Path | None = None, *, lro_polls: int = 1, seed: int = 0) -> None:
        self.specs = specs or data_dir("specs")
        self.apis, self.routes = _load_apis(self.specs)
        self.lro_polls = lro_polls
        self.rng = random.Random(seed)
        self.faults = FaultSet(seed)
        self.lock = threading.RLock()
        self.resources: dict[str, dict[str, Any]] = {}  # "api|key" -> resource
        self.meta: dict[str, dict[str, Any]] = {}  # internal facts: project of a bucket...
        self.policies: dict[str, dict[str, Any]] = {}
        self.operations: dict[str, Operation] = {}
        self.defaults: dict[str, dict[str, dict[str, Any]]] = (
            json.loads(DEFAULTS_FILE.read_text()) if DEFAULTS_FILE.exists() else {}
        )
        self._ops_prefixes: dict[str, list[tuple[re.Pattern[str], str]]] = {}

    # --- state dump/load ---------------------------------------------------------

    def dump(self) -> dict[str, Any]:
        with self.lock:
            return {
                "resources": copy.deepcopy(self.resources),
                "meta": copy.deepcopy(self.meta),
                "policies": copy.deepcopy(self.policies),
                "operations": {
                    k: copy.deepcopy(
                        {"api": o.api, "style": o.style, "key": o.key, "body": o.body, "polls_left": o.polls_left, "result": o.result, "error": o.error, "done_body": o.done_body}
                    )
                    for k, o in self.operations.items()
                },
            }

    def load(self, state: dict[str, Any]) -> None:
        with self.lock:
            self.resources = copy.deepcopy(state.get("resources", {}))
            self.meta = copy.deepcopy(state.get("meta", {}))
            self.policies = copy.deepcopy(state.get("policies", {}))
            # FIX: the operation's own key is the store key without its "api|"
            # prefix (it used to be restored with the prefix, so no loaded
            # operation could be polled).
            self.operations = {
                k: Operation(
                    v["api"], v["style"], v.get("key") or k.split("|", 1)[1], copy.deepcopy(v["body"]), v["polls_left"],
                    copy.deepcopy(v.get("result")), v.get("error"), copy.deepcopy(v.get("done_body", {})),
                )
                for k, v in state.get("operations", {}).items()
            }

    # --- ids ---------------------------------------------------------------------

    def _digits(self, n: int) -> str:
        return str(self.rng.randint(10 ** (n - 1), 10**n - 1))

    def _token(self, n: int = 12) -> str:
        return base64.urlsafe_b64encode(self.rng.randbytes(n)).decode().rstrip("=")

    # --- routing -----------------------------------------------------------------

    def route(self, http: str, path: str) -> tuple[Route, dict[str, str]] | None:
        """The Discovery method for a request. All APIs share one port and several
        have the same URL template (artifactregistry and cloudkms both serve
        ``GET v1/projects/*/locations/*/operations/*``), so when equally good
        routes of different APIs match, the API holding that operation or
        resource wins (FIX: AR used to answer KMS operation polls with 404)."""
        found: list[tuple[Route, dict[str, str]]] = []
        for r in self.routes:
            if found and r.specificity < found[0][0].specificity:
                break  # routes are sorted by specificity: no equally good match is left
            if r.http != http:
                continue
            m = r.regex.match(path)
            if m and (not found or r.regex.pattern == found[0][0].regex.pattern):
                found.append((r, m.groupdict()))
        if len(found) > 1:
            with self.lock:
                for r, params in found:
                    if self._holds(r.api, path):
                        return r, params
        return found[0] if found else None

    def _holds(self, api: str, path: str) -> bool:
        """Whether ``api`` has an operation or resource at (or under) ``path``."""
        rel = path.split(":", 1)[0]
        if any(k.startswith(api + "|") and rel.endswith("/" + o.key) for k, o in self.operations.items()):
            return True
        return any(k.startswith(api + "|") and rel.endswith("/" + k.split("|", 1)[1]) for k in self.resources)

    def pick_fault(self, http: str, path: str) -> Fault | None:
        found = self.route(http, path.lstrip("/"))
        return None if found is None else self.faults.pick(found[0].api, found[0].method.id, "/" + path.lstrip("/"))

    def handle(
        self, http: str, path: str, query: dict[str, list[str]], body: Any, fault: Fault | object | None = _PICK
    ) -> tuple[Route | None, Response]:
        """Serve one request. ``fault``: already picked by the server (which
        applied its latency/drop), or picked here for in-process use."""
        path = path.lstrip("/")
        found = self.route(http, path)
        if found is None:
            return None, Response(404, ApiError(404, f"mockgcp: no Discovery method for {http} /{path}").body(False))
        route, params = found
        api = self.apis[route.api]
        if fault is _PICK:
            # FIX: match rules against the URL path as the server does (with its
            # leading "/"); in-process calls used to match without it.
            fault = self.faults.pick(route.api, route.method.id, "/" + path)
        assert fault is None or isinstance(fault, Fault)
        if fault is not None and fault.status is not None:
            msg = fault.message or f"mockgcp: injected {fault.status}"
            return route, Response(fault.status, ApiError(fault.status, msg).body(api.legacy_errors))
        try:
            with self.lock:
                out = self._dispatch(api, route, path, params, query, body, fault.lro_error if fault else None)
        except ApiError as e:
            return route, Response(e.code, e.body(api.legacy_errors))
        return route, out

    def _dispatch(
        self, api: Api, route: Route, path: str, params: dict[str, str], query: dict[str, list[str]], body: Any, lro_error: str | None
    ) -> Response:
        verb = route.verb
        if route.resource.split(".")[-1].lower().endswith("operations") and verb in ("get", "wait"):
            return self._get_operation(api, path, params)
        if verb in ("getIamPolicy", "setIamPolicy", "testIamPermissions"):
            return self._iam(api, route, path, verb, body)
        coll = api.collections.get(route.resource)
        if coll is None:
            raise ApiError(501, f"mockgcp does not implement {route.method.id}")
        m = coll.methods
        if m.get.name == verb:
            return Response(200, self._get(api, coll, self._key(coll, path)))
        if m.create is not None and m.create.name == verb:
            return self._create(api, coll, path, query, body, lro_error)
        if m.update is not None and m.update.name == verb:
            return self._update(api, coll, path, query, body, lro_error)
        if verb == "update" and m.update is not None and "update" in route.method.id:
            return self._update(api, coll, path, query, body, lro_error, replace=True)
        if m.delete is not None and m.delete.name == verb:
            return self._delete(api, coll, path, query, lro_error)
        if verb == "list":
            return self._list(api, coll, route, path, query)
        raise ApiError(501, f"mockgcp does not implement {route.method.id}")

    # --- keys --------------------------------------------------------------------

    @staticmethod
    def _key(coll: Collection, path: str) -> str:
        """Resource name relative to the API prefix: projects/p/topics/t, b/bucket."""
        rel = path[len(coll.prefix) :] if path.startswith(coll.prefix) else path
        return rel.split(":", 1)[0]

    @staticmethod
    def _project(key: str, query: dict[str, list[str]] | None = None) -> str:
        parts = key.split("/")
        if len(parts) > 1 and parts[0] == "projects":
            return parts[1]
        if query and query.get("project"):
            return query["project"][0]
        return "unknown-project"

    def _store_key(self, api: str, key: str) -> str:
        return f"{api}|{key}"

    # --- get / list --------------------------------------------------------------

    def _get(self, api: Api, coll: Collection, key: str) -> dict[str, Any]:
        res = self.resources.get(self._store_key(api.key, key))
        if res is None:
            raise not_found(key)
        return copy.deepcopy(res)

    def _list(self, api: Api, coll: Collection, route: Route, path: str, query: dict[str, list[str]]) -> Response:
        rel = self._key(coll, path)
        prefix = f"{api.key}|{rel}/"
        items = []
        for k in sorted(self.resources):
            if not k.startswith(prefix) or "/" in k[len(prefix) :]:
                continue
            if api.key == "storage.v1" and query.get("project") and self.meta.get(k, {}).get("project") != query["project"][0]:
                continue  # buckets are global: storage lists a project's buckets by ?project=
            items.append(copy.deepcopy(self.resources[k]))
        resp_schema = route.method.response.ref if route.method.response else None
        field_name = "items"
        if resp_schema:
            for name, prop in api.doc.schemas[resp_schema].properties.items():
                if prop.type == "array" and prop.items is not None and prop.items.ref == coll.schema:
                    field_name = name
        out: dict[str, Any] = {}
        if items:
            out[field_name] = items
        if api.doc.name in ("compute", "storage", "dns"):
            # FIX: the list kind is the response schema's (compute#networkList,
            # storage#buckets); it was derived from the collection name
            # (compute#networksList, storage#bucketsList).
            kind_prop = api.doc.schemas[resp_schema].properties.get("kind") if resp_schema else None
            out["kind"] = (kind_prop.default if kind_prop is not None and kind_prop.default else None) or f"{api.doc.name}#{coll.resource.split('.')[-1]}List"
        return Response(200, out)

    # --- create ------------------------------------------------------------------

    def _create(self, api: Api, coll: Collection, path: str, query: dict[str, list[str]], body: Any, lro_error: str | None) -> Response:
        m = coll.methods
        if body is None:
            body = {}  # KMS keyRings.create sends no body at all (recorded traffic)
        if not isinstance(body, dict):
            raise invalid("Request body must be a JSON object.")
        rel = self._key(coll, path)
        style = m.create_style
        resource: dict[str, Any]
        if style == "put-name":
            key, resource = rel, dict(body)
        elif style == "id-query":
            assert m.create_id_param is not None
            rid = (query.get(m.create_id_param) or [""])[0]
            if not rid:
                raise invalid(f"{m.create_id_param} must be specified.")
            key, resource = f"{rel}/{rid}", dict(body)
        elif style == "wrapper":
            assert m.create_wrapper_field is not None and m.create_id_param is not None
            wid = body.get(m.create_id_param)
            resource = dict(body.get(m.create_wrapper_field) or {})
            if not wid:
                raise invalid(f"{m.create_id_param} must be specified.")
            key = f"{rel}/{wid}"
        elif style == "service-generated":
            key, resource = f"{rel}/{self._digits(19)}", dict(body)
        else:  # name-in-body
            name = body.get("name")
            if not isinstance(name, str) or not name:
                raise invalid("Required field 'resource.name' not specified")
            key, resource = f"{rel}/{name}", dict(body)
        sk = self._store_key(api.key, key)
        if sk in self.resources:
            raise already_exists(key)
        for f in coll.output_only:
            if f not in ("name",):
                resource.pop(f, None)
        project = self._project(key, query)
        self._apply_defaults(api, coll, resource)
        self._populate(api, coll, key, resource, project, created=True)
        for f in coll.input_only:
            resource.pop(f, None)  # taken on write (ttl -> expireTime above), never returned by GET
        if lro_error is None:
            self.resources[sk] = resource
            self.meta[sk] = {"project": project}
        return self._respond(api, coll, "create", key, resource, lro_error, m.create.lro if m.create else "none")

    def _apply_defaults(self, api: Api, coll: Collection, resource: dict[str, Any]) -> None:
        for field_name, value in (self.defaults.get(api.key, {}).get(coll.schema, {})).items():
            if field_name not in resource:
                resource[field_name] = copy.deepcopy(value)
            elif isinstance(value, dict) and isinstance(resource[field_name], dict):
                for k, v in value.items():
                    resource[field_name].setdefault(k, copy.deepcopy(v))

    def _populate(
        self, api: Api, coll: Collection, key: str, res: dict[str, Any], project: str, created: bool, old: dict[str, Any] | None = None
    ) -> None:
        """Output-only fields the real service fills in. ``old``: the stored resource on update."""
        props = api.doc.schemas[coll.schema].properties
        now = _now()
        short = key.rsplit("/", 1)[-1]
        if "name" in props:
            res["name"] = short if coll.methods.create_style == "name-in-body" else key
        if api.doc.name == "compute":
            if created:
                res["id"] = self._digits(19)
                res["creationTimestamp"] = compute_time(now)
            res["selfLink"] = quirks.compute_self_link(key)
            if "selfLinkWithId" in props:
                res["selfLinkWithId"] = quirks.compute_self_link(key.rsplit("/", 1)[0] + "/" + str(res.get("id", "")))
            quirks.compute_expand_links(res, project)
            quirks.compute_scope_link(res, key)
            if coll.schema == "Subnetwork":
                quirks.compute_subnetwork_gateway(res)
            if "fingerprint" in props:
                res["fingerprint"] = self._token(8)
        elif api.doc.name == "storage":
            if created:
                res["id"] = short
                res["timeCreated"] = rfc3339(now)
                res["generation"] = self._digits(16)
                res["metageneration"] = "1"
                quirks.storage_bucket_defaults(res, project)
            res["selfLink"] = quirks.STORAGE_BASE + key
            res["updated"] = rfc3339(now)
            res["etag"] = self._token(6)
        elif api.doc.name == "dns" and created:
            res["id"] = self._digits(19)
            res["creationTime"] = rfc3339(now)
            if coll.schema == "ManagedZone" and res.get("visibility", "public") == "public":
                res.setdefault("nameServers", quirks.dns_name_servers(key))
        for f in _TIME_FIELDS:
            if f in props and f in coll.output_only and (created or f in ("updateTime", "updated")):
                res[f] = rfc3339(now)
        if "etag" in props and api.doc.name != "storage" and ("etag" in coll.output_only or api.doc.name in ("secretmanager", "monitoring")):
            res["etag"] = f'"{self._token(9)}"' if api.doc.name == "secretmanager" else self._token(9)
        kind_prop = props.get("kind")
        if kind_prop is not None:
            m = _KIND_RX.search(kind_prop.description or "")
            # FIX: dns.v1 has no description for kind, only "default": "dns#managedZone".
            kind = m.group(1) if m else (kind_prop.default if kind_prop.read_only and "#" in (kind_prop.default or "") else None)
            if kind:
                res["kind"] = kind
        for f in ("state", "status"):
            prop = props.get(f)
            if quirks.state_omitted(api.key, coll.schema, f, res):
                continue
            if created and prop is not None and f in coll.output_only and prop.enum:
                res[f] = next((v for v in _READY_STATES if v in prop.enum), prop.enum[min(1, len(prop.enum) - 1)])
        # Output-only fields Discovery's prose does not mark (quirks.FILLERS).
        quirks.fill_outputs(
            api.doc.name,
            created,
            quirks.Fill(coll.schema, res, key, old, now, rfc3339(now), lambda: self._digits(19), lambda: self._token(8)),
        )

    # --- update ------------------------------------------------------------------

    def _mask_param_doc(self, coll: Collection) -> str:
        upd = coll.methods.update
        assert upd is not None
        raw = self.apis[coll.api]
        res = raw.doc
        for part in coll.resource.split("."):
            res = res.resources[part]  # type: ignore[assignment]
        method = res.methods[upd.name]
        if coll.methods.update_style == "mask-query":
            p = method.parameters.get("updateMask")
            return (p.description or "") if p else ""
        if coll.methods.update_style == "wrapper-mask" and upd.request:
            prop = raw.doc.schemas[upd.request].properties.get(coll.methods.update_mask or "")
            return (prop.description or "") if prop else ""
        return ""

    def _valid_path(self, api: Api, schema: str, path: str) -> bool:
        node = api.doc.schemas[schema]
        parts = path.split(".")
        for i, part in enumerate(parts):
            prop = node.properties.get(part)
            if prop is None:
                return bool(node.additional_properties) and i > 0
            if i == len(parts) - 1:
                return True
            while prop.items is not None:
                prop = prop.items
            if prop.ref is None:
                return prop.additional_properties is not None or prop.type == "object"
            node = api.doc.schemas[prop.ref]
        return True

    def _update(
        self, api: Api, coll: Collection, path: str, query: dict[str, list[str]], body: Any, lro_error: str | None, replace: bool = False
    ) -> Response:
        m = coll.methods
        key = self._key(coll, path)
        sk = self._store_key(api.key, key)
        current = self.resources.get(sk)
        if current is None:
            raise not_found(key)
        if not isinstance(body, dict):
            raise invalid("Request body must be a JSON object.")
        patch = body
        mask: list[str] | None = None
        if m.update_style == "wrapper-mask":
            patch = body.get(m.update_wrapper_field or "") or {}
            raw_mask = body.get(m.update_mask or "")
            mask = [p for p in raw_mask.split(",") if p] if isinstance(raw_mask, str) else None
        elif m.update_style == "mask-query" and query.get("updateMask"):
            mask = [p for p in query["updateMask"][0].split(",") if p]
        if m.precondition_param and query.get(m.precondition_param) and query[m.precondition_param][0] != str(current.get("metageneration")):
            raise precondition("Precondition Failed")
        if m.fingerprint_field and not replace:
            supplied = patch.get(m.fingerprint_field)
            if supplied != current.get(m.fingerprint_field):
                raise precondition(
                    "Invalid value for field 'resource.fingerprint': "
                    f"'{supplied}'. Supplied fingerprint does not match current fingerprint."
                )
        new = copy.deepcopy(current)
        writable = {k: v for k, v in patch.items() if k not in coll.output_only and k != "name"}
        if mask is not None:
            mask = [_camel(p.strip()) for p in mask]
            for p in mask:
                if not self._valid_path(api, coll.schema, p):
                    raise invalid(f"Invalid update_mask provided: field {p!r} does not exist in {coll.schema}.")
            for p in mask:
                _set_path(new, p, _get_path(patch, p))
        elif m.update_style in ("mask-query", "wrapper-mask"):
            doc = self._mask_param_doc(coll)
            if re.search(r"\bRequired\b", doc):
                raise invalid(f"{m.update_mask or 'updateMask'} is required.")
            if re.search(r"replace|all fields", doc, re.IGNORECASE):
                new = {**{k: v for k, v in current.items() if k in coll.output_only or k == "name"}, **writable}
            else:
                new.update(writable)
        elif replace:
            new = {**{k: v for k, v in current.items() if k in coll.output_only or k == "name"}, **writable}
        else:  # whole-resource PATCH: JSON merge patch (RFC 7386)
            # FIX: compute, storage and dns PATCH merge nested objects
            # ({"routingConfig": {"routingMode": ...}} keeps the other
            # routingConfig fields); it used to replace top-level values.
            _merge_patch(new, writable)
        project = self._project(key, query)
        self._populate(api, coll, key, new, project, created=False, old=current)
        # FIX: checked after _populate, which normalizes what compute
        # normalizes (a partial "regions/r" becomes the full URL it stored);
        # checked before, an unchanged partial reference failed as a change.
        for f in sorted(coll.immutable):
            if new.get(f) != current.get(f):
                raise invalid(f"Field '{f}' is immutable and cannot be changed (resource={key}).")
        if m.precondition_param and "metageneration" in new:
            new["metageneration"] = str(int(current.get("metageneration", "1")) + 1)
        for f in coll.input_only:
            new.pop(f, None)  # taken on write, never returned by GET
        if lro_error is None:
            self.resources[sk] = new
        return self._respond(api, coll, "patch" if not replace else "update", key, new, lro_error, m.update.lro if m.update else "none", old=current)

    # --- delete ------------------------------------------------------------------

    def _delete(self, api: Api, coll: Collection, path: str, query: dict[str, list[str]], lro_error: str | None) -> Response:
        key = self._key(coll, path)
        sk = self._store_key(api.key, key)
        if sk not in self.resources:
            raise not_found(key)
        old = self.resources[sk]
        # FIX: storage buckets.delete takes ifMetagenerationMatch too; it was ignored.
        pre = coll.methods.precondition_param
        if pre and query.get(pre) and query[pre][0] != str(old.get("metageneration")):
            raise precondition("Precondition Failed")
        if lro_error is None:
            del self.resources[sk]
            self.meta.pop(sk, None)
            self.policies.pop(sk, None)
        lro = coll.methods.delete.lro if coll.methods.delete else "none"
        if lro == "none":
            status = quirks.delete_status(api.key)
            return Response(status, None if status == 204 else {})
        return self._respond(api, coll, "delete", key, {}, lro_error, lro, old=old)

    # --- IAM -----------------------------------------------------------------------

    def _iam(self, api: Api, route: Route, path: str, verb: str, body: Any) -> Response:
        key = path.split(":", 1)[0]
        for coll in api.collections.values():
            if path.startswith(coll.prefix):
                key = self._key(coll, path)
                break
        sk = self._store_key(api.key, key)
        if sk not in self.resources:
            raise not_found(key)
        if verb == "getIamPolicy":
            return Response(200, self.policies.get(sk, {"etag": "ACAB"}))
        if verb == "setIamPolicy":
            policy = dict((body or {}).get("policy") or {})
            policy["etag"] = self._token(6)
            policy.setdefault("version", 1)
            self.policies[sk] = policy
            return Response(200, policy)
        return Response(200, {"permissions": list((body or {}).get("permissions") or [])})

    # --- long-running operations --------------------------------------------------

    def _respond(
        self, api: Api, coll: Collection, action: str, key: str, resource: dict[str, Any], lro_error: str | None, lro: str, old: dict[str, Any] | None = None
    ) -> Response:
        if lro == "none":
            if lro_error is not None:
                raise ApiError(500, lro_error)
            return Response(200, copy.deepcopy(resource))
        op = self._new_operation(api, coll, action, key, resource, lro_error, lro, old)
        return Response(200, copy.deepcopy(op.body))

    def _ops_prefix(self, api: Api, key: str) -> str:
        """Where google.longrunning operations live for a resource (from operations.get patterns)."""
        if api.key not in self._ops_prefixes:
            pats = []
            for r in self.routes:
                if r.api == api.key and r.verb == "get" and r.resource.split(".")[-1] == "operations":
                    for p in r.method.parameters.values():
                        if p.location == "path" and p.pattern and p.pattern.endswith("/operations/[^/]+$"):
                            pre = p.pattern.removeprefix("^").removesuffix("/operations/[^/]+$")
                            pats.append((re.compile("^" + pre), pre))
            pats.sort(key=lambda x: -len(x[1]))
            self._ops_prefixes[api.key] = pats
        for rx, _ in self._ops_prefixes[api.key]:
            m = rx.match(key)
            if m:
                return m.group(0)
        return "/".join(key.split("/")[:2])

    def _new_operation(
        self, api: Api, coll: Collection, action: str, key: str, resource: dict[str, Any], lro_error: str | None, lro: str, old: dict[str, Any] | None
    ) -> Operation:
        now = _now()
        result = copy.deepcopy(resource)
        if lro == "compute":
            name = f"operation-{int(now.timestamp() * 1000)}-{self._token(6).lower()}-{self._token(4).lower()}-{self._token(4).lower()}"
            parts = key.split("/")
            scope = "/".join(parts[:4]) if len(parts) > 3 and parts[2] in ("regions", "zones") else "/".join(parts[:2]) + "/global"
            op_key = f"{scope}/operations/{name}"
            target = resource.get("selfLink") or (old or {}).get("selfLink") or quirks.compute_self_link(key)
            body: dict[str, Any] = {
                "kind": "compute#operation",
                "id": self._digits(19),
                "name": name,
                "operationType": action if action != "create" else "insert",
                "targetLink": target,
                "targetId": str(resource.get("id") or (old or {}).get("id") or ""),
                "status": "RUNNING",
                "user": "mockgcp@example.iam.gserviceaccount.com",
                "progress": 0,
                "insertTime": compute_time(now),
                "startTime": compute_time(now),
                "selfLink": quirks.compute_self_link(op_key),
            }
            if "/regions/" in scope:
                body["region"] = quirks.compute_self_link("/".join(parts[:4]))
        elif lro == "dns":
            oid = self._digits(8)
            op_key = f"{key}/operations/{oid}"
            body = {
                "kind": "dns#operation",
                "id": oid,
                "startTime": rfc3339(now),
                "status": "pending",
                "type": "update" if action != "delete" else "delete",
                "user": "mockgcp@example.iam.gserviceaccount.com",
                "zoneContext": {"oldValue": copy.deepcopy(old or {}), "newValue": copy.deepcopy(resource)},
            }
        else:
            op_key = f"{self._ops_prefix(api, key)}/operations/{self._token(12).lower()}"
            body = {
                "name": op_key,
                # proto3 JSON drops false booleans: a pending operation has no "done".
                "metadata": quirks.lro_metadata(api.doc.name, api.doc.version, coll.schema, action, resource, rfc3339(now)),
            }
        op = Operation(api.key, lro, op_key, body, self.lro_polls, result if action != "delete" else {}, lro_error)
        self._finish_if_due(op, coll.schema)
        self.operations[f"{api.key}|{op_key}"] = op
        op.done_body = {"schema": coll.schema}
        return op

    def _finish_if_due(self, op: Operation, schema: str) -> None:
        if op.polls_left > 0:
            return
        now = _now()
        b = op.body
        if op.style == "compute":
            b["status"], b["progress"], b["endTime"] = "DONE", 100, compute_time(now)
            if op.error:
                b["error"] = {"errors": [{"code": "RESOURCE_OPERATION_ERROR", "message": op.error}]}
                b["httpErrorStatusCode"], b["httpErrorMessage"] = 400, "BAD REQUEST"
        elif op.style == "dns":
            b["status"] = "done"
            if op.error:
                b["error"] = {"errors": [{"code": "RESOURCE_OPERATION_ERROR", "message": op.error}]}
        else:
            b["done"] = True
            if op.error:
                b["error"] = {"code": _GRPC_INTERNAL, "message": op.error}
            else:
                api = self.apis[op.api].doc
                typ = "google.protobuf.Empty" if not op.result else f"{quirks.proto_package(api.name, api.version, schema)}.{schema}"
                b["response"] = {"@type": f"type.googleapis.com/{typ}", **(op.result or {})}

    def _get_operation(self, api: Api, path: str, params: dict[str, str]) -> Response:
        op = None
        for k, o in self.operations.items():
            if k.startswith(api.key + "|") and (path.endswith(o.key) or path.rstrip("/").endswith("/" + o.body.get("name", "\0"))):
                op = o
                break
        if op is None:
            raise not_found(path)
        if op.polls_left > 0:
            op.polls_left -= 1
            self._finish_if_due(op, op.done_body.get("schema", ""))
        return Response(200, copy.deepcopy(op.body))


def _get_path(obj: dict[str, Any], path: str) -> Any:
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _set_path(obj: dict[str, Any], path: str, value: Any) -> None:
    parts = path.split(".")
    cur = obj
    for part in parts[:-1]:
        nxt = cur.get(part)
        if not isinstance(nxt, dict):
            if value is None:
                return
            nxt = cur[part] = {}
        cur = nxt
    if value is None:
        cur.pop(parts[-1], None)
    else:
        cur[parts[-1]] = copy.deepcopy(value)


def _merge_patch(target: dict[str, Any], patch: dict[str, Any]) -> None:
    """RFC 7386 JSON merge patch: objects merge recursively, null deletes, anything else replaces."""
    for k, v in patch.items():
        if v is None:
            target.pop(k, None)
        elif isinstance(v, dict) and isinstance(target.get(k), dict):
            _merge_patch(target[k], v)
        else:
            target[k] = copy.deepcopy(v)
