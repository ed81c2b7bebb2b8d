"""The emulator's semantics, independent of HTTP.

``MockGCP.handle(method, path, query, body)`` routes a request through the
Discovery route table (mockgcp.catalog), refuses a body its request schema
does not allow (mockgcp.bodies), and applies the standard semantics of the
method the request was routed to: create, get, list and delete
(mockgcp.lifecycle), update (mockgcp.update), long-running operations
(mockgcp.operations) and IAM policies. What one API does differently is its
profile (mockgcp/apis/); state lives in mockgcp.state.
"""

from __future__ import annotations

import copy
import functools
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, cast

from kccgen import data_dir
from kccgen.mockgcp import lifecycle, limits, operations, singletons, switches, update
from kccgen.mockgcp.bodies import check_body
from kccgen.mockgcp.catalog import Api, Catalog, Collection, Route
from kccgen.mockgcp.errors import ApiError, invalid, not_found, precondition
from kccgen.mockgcp.faults import Fault, FaultSet
from kccgen.mockgcp.lifecycle import Call
from kccgen.mockgcp.limitdata import limits as limits_table
from kccgen.mockgcp.operations import Response
from kccgen.mockgcp.populate import DEFAULTS_FILE, apply_defaults, load_defaults, populate
from kccgen.mockgcp.state import Operation, State

__all__ = ["DEFAULTS_FILE", "MockGCP", "Operation", "Response"]

# Parsing a Discovery document takes tens of milliseconds; routes and
# collections are never mutated after loading, so engines share the catalog.
_catalog = functools.lru_cache(maxsize=4)(Catalog)
_PICK = object()  # handle(): pick the fault here
_CONTAINERS = frozenset({"projects", "folders", "organizations", "billingAccounts"})
_IAM = ("getIamPolicy", "setIamPolicy", "testIamPermissions")


class LazyApis(Mapping[str, Api]):
    """Doc key -> Api over every pinned document; an API is parsed when first read."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def __getitem__(self, key: str) -> Api:
        return self.catalog.api(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self.catalog.paths)

    def __len__(self) -> int:
        return len(self.catalog.paths)

    def __contains__(self, key: object) -> bool:
        return key in self.catalog.paths


class MockGCP:
    """In-memory GCP for the APIs in ``specs/discovery``."""

    def __init__(self, specs: Path | None = None, *, lro_polls: int = 1, seed: int = 0) -> None:
        self.specs = specs or data_dir("specs")
        self.catalog = _catalog(self.specs)
        self.apis = LazyApis(self.catalog)
        self.lro_polls = lro_polls
        self.state = State(seed)
        self.faults = FaultSet(seed)
        self.lock = threading.RLock()
        self.defaults = load_defaults()
        limits_table()  # a broken limits.yaml fails here, at start, not on a request

    # The stores, as tests and tools read (and poke) them.
    @property
    def resources(self) -> dict[str, dict[str, Any]]:
        return self.state.resources

    @property
    def meta(self) -> dict[str, dict[str, Any]]:
        return self.state.meta

    @property
    def policies(self) -> dict[str, dict[str, Any]]:
        return self.state.policies

    @property
    def operations(self) -> dict[str, Operation]:
        return self.state.operations

    def dump(self) -> dict[str, Any]:
        with self.lock:
            return self.state.dump()

    def load(self, state: dict[str, Any]) -> None:
        with self.lock:
            self.state.load(state)

    # --- routing -----------------------------------------------------------------

    def scope(self, path: str, host: str | None = None) -> tuple[tuple[str, ...], str]:
        """(the APIs a request may address, its path relative to their host).

        Each API answers at its own host, as the real ones do, on one port: as
        the first path segment (``/pubsub.googleapis.com/v1/projects/...``, what
        ``MockServer.endpoint`` gives clients) or as the ``Host`` header. Several
        documents can share a host (www.googleapis.com); their servicePath tells
        them apart. A path without a host is routed over the vendored APIs, as
        before hosts were routed; () means that.
        """
        first, _, rest = path.partition("/")
        if "." in first and first in self.catalog.hosts():
            host, path = first, rest
        elif host is None or host.split(":", 1)[0] not in self.catalog.hosts():
            return (), path
        entries = self.catalog.hosts()[host.split(":", 1)[0]]
        keys = tuple(k for sp, k in entries if path.startswith(sp))
        return keys, path

    def route(self, http: str, path: str, host: str | None = None) -> tuple[Route, dict[str, str]] | None:
        """The Discovery method for a request (``path``: relative to its host; see
        ``scope``). Within one host routes never collide; on un-prefixed paths
        several APIs can have the same URL template (artifactregistry and cloudkms
        both serve ``GET v1/projects/*/locations/*/operations/*``), so when equally
        good routes of different APIs match, the API holding that operation or
        resource wins. An un-prefixed path no vendored API serves goes to the
        one pinned document that does (``Catalog.owners``), and one that another
        API holds (a workflows operation at cloudkms's template) goes there."""
        keys, path = self.scope(path, host)
        index = self.catalog.index(keys) if keys else self.catalog.shared
        found = index.match(http, path)
        if not keys:
            with self.lock:
                held = self._holder(path) if not any(self._holds(r.api, path) for r, _ in found) else None
            if held is not None:
                found = self.catalog.index((held,)).match(http, path) or found
            elif not found:
                owners = self.catalog.owners(http, path)
                if len(owners) == 1:  # the one API that serves this path; several: see handle()
                    found = self.catalog.index(tuple(owners)).match(http, path)
        if len(found) > 1:
            with self.lock:
                for r, params in found:
                    if self._holds(r.api, path):
                        return r, params
        return found[0] if found else None

    def _holder(self, path: str) -> str | None:
        """The API that has an operation or resource at ``path``, if any does."""
        rel = path.split(":", 1)[0]
        for k, o in self.operations.items():
            if rel.endswith("/" + o.key):
                return k.split("|", 1)[0]
        for k in self.resources:
            api, _, name = k.partition("|")
            if rel.endswith("/" + name):
                return api
        return None

    def _unrouted(self, http: str, path: str, host: str | None) -> str:
        """Why no method serves a request: none does, or (a path without a host)
        several APIs do, and the host prefix says which."""
        owners = self.catalog.owners(http, path) if not self.scope(path, host)[0] else []
        if len(owners) < 2:
            return f"mockgcp: no Discovery method for {http} /{path}"
        hosts = sorted({self.catalog.host_of(k)[0] for k in owners})
        shown = " or ".join(f"/{h}/{path}" for h in hosts[:6]) + (f" or {len(hosts) - 6} more" if len(hosts) > 6 else "")
        return (
            f"mockgcp: several APIs serve {http} /{path} ({', '.join(owners)}): "
            f"put the API's host first in the path, {shown} (kccctl: --host-paths)"
        )

    def _holds(self, api: str, path: str) -> bool:
        """Whether ``api`` has an operation or resource at (or under) ``path``."""
        rel = path.split(":", 1)[0]
        prefix = api + "|"
        if any(k.startswith(prefix) and rel.endswith("/" + o.key) for k, o in self.operations.items()):
            return True
        return any(k.startswith(prefix) and rel.endswith("/" + k.split("|", 1)[1]) for k in self.resources)

    def pick_fault(self, http: str, path: str, host: str | None = None) -> Fault | None:
        _, rel = self.scope(path.lstrip("/"), host)
        found = self.route(http, path.lstrip("/"), host)
        return None if found is None else self.faults.pick(found[0].api, found[0].method.id, "/" + rel)

    # --- one request ----------------------------------------------------------------

    def handle(
        self, http: str, path: str, query: dict[str, list[str]], body: Any, fault: Fault | object | None = _PICK, host: str | None = None
    ) -> tuple[Route | None, Response]:
        """Serve one request. ``fault``: already picked by the server (which
        applied its latency/drop), or picked here for in-process use."""
        found = self.route(http, path.lstrip("/"), host)
        _, path = self.scope(path.lstrip("/"), host)
        if found is None:
            return None, Response(404, ApiError(404, self._unrouted(http, path, host)).body(False))
        route = found[0]
        api = self.apis[route.api]
        if fault is _PICK:
            fault = self.faults.pick(route.api, route.method.id, "/" + path)  # rules see the URL path
        assert fault is None or isinstance(fault, Fault)
        if fault is not None and fault.status is not None:
            msg = fault.message or f"mockgcp: injected {fault.status}"
            return route, Response(fault.status, ApiError(fault.status, msg).body(api.legacy_errors))
        try:
            with self.lock:
                out = self._dispatch(api, route, path, query, body, fault.lro_error if fault else None)
        except ApiError as e:
            return route, Response(e.code, e.body(api.legacy_errors))
        return route, out

    def _dispatch(self, api: Api, route: Route, path: str, query: dict[str, list[str]], body: Any, lro_error: str | None) -> Response:
        coll = api.collections.get(route.resource)
        body = check_body(api, route.method, coll, body)
        limits.check_request(api, route, path, body, api.key in self.catalog.vendored)
        if route.resource.split(".")[-1].lower().endswith("operations") and route.verb in ("get", "wait"):
            return operations.poll(self, api, path)
        if route.verb in _IAM:
            return self._iam(api, route, path, query, body)
        if (own := api.profile.serve(self, api, route, path, query, body, lro_error)) is not None:
            return cast(Response, own)
        if route.method.id in api.profile.switches:
            return switches.serve(self, api, route, path, lro_error)
        if route.role is None and (answer := switches.computed(self, api, route, path, lro_error)) is not None:
            return answer
        settings = singletons.custom_role(api, route)
        if settings is not None:
            return singletons.serve(self, api, route, path, body, settings)
        if coll is None or route.role is None:
            raise ApiError(501, f"mockgcp does not implement {route.method.id}")
        c = Call(api, coll, route, path, query, body, lro_error)
        if route.role == "get":
            return lifecycle.get(self, c)
        if route.role == "list":
            return lifecycle.list_(self, c)
        if route.role == "create":
            return lifecycle.create(self, c)
        if route.role == "update":
            return update.update(self, c)
        return lifecycle.delete(self, c)

    # --- hooks the semantics modules call (tests may wrap them) -----------------------

    def apply_defaults(self, api: Api, coll: Collection, resource: dict[str, Any]) -> None:
        apply_defaults(self.defaults, api, coll, resource)

    def _populate(
        self, api: Api, coll: Collection, key: str, res: dict[str, Any], project: str, created: bool, old: dict[str, Any] | None = None
    ) -> None:
        """Output-only fields the real service fills in. ``old``: the stored resource on update."""
        populate(self.state, api, coll, key, res, project, created, old, operations.now())

    # --- IAM ---------------------------------------------------------------------------

    def _iam(self, api: Api, route: Route, path: str, query: dict[str, list[str]], body: Any) -> Response:
        """IAM as the services answer it: an etag that changes on every write; a
        write carrying another etag refused (409 ABORTED; 412 on the legacy
        APIs), so a read-modify-write that lost a race starts again; conditional
        bindings only with policy version 3, asked for and written; the update
        mask (default ``bindings,etag``) says what a write replaces."""
        key = path.split(":", 1)[0]
        # b/{bucket}/iam, .../backendBuckets/{resource}/getIamPolicy: the resource is the path
        # without the method path's literal tail
        segs = route.method.path.split(":", 1)[0].split("/")
        tail = next((i for i, seg in enumerate(reversed(segs)) if seg.startswith("{")), 0)
        if tail:
            key = "/".join(key.split("/")[:-tail])
            path = "/".join(path.split(":", 1)[0].split("/")[:-tail])
        for coll in api.collections.values():
            if path.startswith(coll.prefix):
                key = coll.key(path)
                break
        sk = State.store_key(api.key, key)
        top = len(key.split("/")) == 2 and key.split("/")[0] in _CONTAINERS
        if sk not in self.resources and not top:  # a project, folder or organization is taken to exist
            raise not_found(key)
        stored = self.policies.get(sk, {"etag": "ACAB"})  # as the services answer for a policy never set
        conditional = any("condition" in b for b in stored.get("bindings") or [])
        if route.verb == "getIamPolicy":
            asked = ((body or {}).get("options") or {}).get("requestedPolicyVersion")
            for name in ("options.requestedPolicyVersion", "optionsRequestedPolicyVersion"):
                asked = query.get(name, [asked])[0] if name in query else asked
            version = int(asked or 0) if str(asked or 0).isdigit() else -1
            if version not in (0, 1, 3):
                raise invalid(f"Invalid requested policy version: {asked}. Valid versions are 0, 1 and 3.")
            if conditional and version < 3:
                raise invalid("The policy has conditional role bindings: request policy version 3 (options.requestedPolicyVersion).")
            return Response(200, copy.deepcopy(stored))
        if route.verb == "setIamPolicy":
            # the request is a SetIamPolicyRequest {policy, updateMask}, or the Policy itself (storage)
            request = route.method.request.ref if route.method.request is not None else ""
            unwrapped = "policy" not in (api.doc.schemas[request].properties if request in api.doc.schemas else {})
            if unwrapped:
                body = {"policy": body or {}}
            policy = dict((body or {}).get("policy") or {})
            if policy.get("etag") not in (None, "", stored.get("etag")):
                msg = "There were concurrent policy changes. Please retry the whole read-modify-write with exponential backoff."
                raise precondition(msg) if api.legacy_errors else ApiError(409, msg, "ABORTED")
            fields = [f.strip() for f in str((body or {}).get("updateMask") or "bindings,etag").split(",") if f.strip()]
            new = {k: v for k, v in stored.items() if k not in fields}
            new.update({k: policy[k] for k in fields if k in policy and k != "etag"})
            if any("condition" in b for b in new.get("bindings") or []):
                if int(policy.get("version") or 0) < 3:
                    raise invalid("A policy with conditional role bindings must be version 3.")
                new["version"] = 3
            else:  # a version-3 write without conditions is stored (and answered) as version 1
                new["version"] = 1
            if not new.get("bindings"):
                new.pop("bindings", None)
            new["etag"] = self.state.token(6)
            self.policies[sk] = new
            return Response(200, copy.deepcopy(new))
        return Response(200, {"permissions": list((body or {}).get("permissions") or [])})
