"""Settings objects: resources that always exist, read and written, never created.

Two forms in the documents. A collection with get and patch (or update) and
no create (``projects.locations.settings``): its GET answers the settings even
before anything was written, and an update writes them. And a pair of custom
methods on another resource, ``get<Noun>`` / ``update<Noun>`` (or ``set<Noun>``):
cloudbilling's ``projects.getBillingInfo`` at ``projects/P/billingInfo``,
binaryauthorization's ``projects.getPolicy`` at ``projects/P/policy``. mockgcp
keeps each under its URL path, starting from ``{name}`` where the schema has one.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from kccgen.discovery.paths import rest_prefix
from kccgen.mockgcp.catalog import Api, Collection, Route
from kccgen.mockgcp.errors import invalid
from kccgen.mockgcp.operations import Response
from kccgen.mockgcp.state import State

if TYPE_CHECKING:
    from kccgen.mockgcp.engine import MockGCP

_IAM = frozenset({"getIamPolicy", "setIamPolicy"})


def is_settings(coll: Collection) -> bool:
    """A collection with get and an update, and no create: one object per parent."""
    return coll.method("create") is None and coll.method("update") is not None


def default(api: Api, schema: str | None, key: str) -> dict[str, Any]:
    """The settings as the service answers before anything was written."""
    props = api.doc.schemas[schema].properties if schema and schema in api.doc.schemas else {}
    return {"name": key} if "name" in props else {}


def custom_role(api: Api, route: Route) -> str | None:
    """``get`` / ``update`` for a ``get<Noun>`` / ``update<Noun>`` (``set<Noun>``) pair
    of custom methods; None for any other method."""
    verb, method = route.verb, route.method
    if route.role is not None or verb in _IAM:
        return None
    try:
        methods = api.doc.resource(route.resource).methods
    except Exception:
        return None
    if verb.startswith("get") and method.http_method == "GET" and method.response is not None:
        noun = verb[3:]
        return "get" if noun and any(f"{p}{noun}" in methods for p in ("update", "set")) else None
    for p in ("update", "set"):
        if verb.startswith(p) and f"get{verb[len(p):]}" in methods and method.http_method in ("PUT", "PATCH", "POST"):
            return "update"
    return None


def serve(eng: MockGCP, api: Api, route: Route, path: str, body: Any, role: str) -> Response:
    """One read or write of a custom-method settings object."""
    prefix = rest_prefix(route.method.path)
    key = (path[len(prefix) :] if path.startswith(prefix) else path).split(":", 1)[0]
    sk = State.store_key(api.key, key)
    resource_schema = route.method.response.ref if role == "get" and route.method.response else (route.method.request.ref if route.method.request else None)
    current = eng.state.resources.get(sk) or default(api, resource_schema, key)
    if role == "get":
        return Response(200, copy.deepcopy(current))
    if not isinstance(body, dict):
        raise invalid("Request body must be a JSON object.")
    new = {**current, **{k: copy.deepcopy(v) for k, v in body.items() if k != "name"}}
    eng.state.resources[sk] = new
    answer = route.method.response.ref if route.method.response else None
    if answer in ("Operation", "GoogleLongrunningOperation"):
        return Response(200, {"name": f"operations/{eng.state.token(8)}", "done": True, "response": copy.deepcopy(new)})
    return Response(200, copy.deepcopy(new))
