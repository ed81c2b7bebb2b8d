"""Resources a service always has, turned on and off by custom methods.

A project's services exist whether or not they are enabled: serviceusage's
``services.get`` answers ``"state": "DISABLED"`` for one never enabled, and
``:enable`` / ``:disable`` flip it (Config Connector's recorded traffic,
serviceusage/v1beta1/service). compute's ``projects.enableXpnHost`` does the same
to a project's ``xpnProjectStatus``. The API's :class:`Profile` names the methods
(``switches``) and what its get answers before any was called (``standing``).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from kccgen.mockgcp.catalog import Api, Route
from kccgen.mockgcp.errors import ApiError, not_found
from kccgen.mockgcp.operations import Response, respond
from kccgen.mockgcp.shapes import lro_style
from kccgen.mockgcp.state import State

if TYPE_CHECKING:
    from kccgen.mockgcp.engine import MockGCP


def target(route: Route, path: str) -> str:
    """The URL path of the resource a custom method acts on: without ``:verb``
    (AIP-136) or compute's trailing ``/verb`` segment."""
    base = path.split(":", 1)[0]
    return base.removesuffix("/" + route.verb)


def computed(eng: MockGCP, api: Api, route: Route, path: str, lro_error: str | None) -> Response | None:
    """A custom method whose answer the profile computes (``Profile.computed``),
    as the method answers: the value, or an operation that resolves to it."""
    coll = api.collections.get(route.resource)
    if coll is None:
        return None
    key = coll.key(target(route, path))
    out = api.profile.computed(route.method.id, key)
    if out is None:
        return None
    return respond(eng, api, coll, route.verb, key, out, lro_error, lro_style(api.doc, route.method))


def serve(eng: MockGCP, api: Api, route: Route, path: str, lro_error: str | None) -> Response:
    """Set the switch's field on the stored (or standing) resource and answer as
    the method does: the resource, or an operation that resolves to it."""
    coll = api.collections.get(route.resource)
    if coll is None:
        raise ApiError(501, f"mockgcp does not implement {route.method.id}")
    field, value = api.profile.switches[route.method.id]
    key = coll.key(target(route, path))
    sk = State.store_key(api.key, key)
    current = eng.state.resources.get(sk) or api.profile.standing(coll.schema, key, api.key)
    if current is None:
        raise not_found(key)
    new = {k: v for k, v in copy.deepcopy(current).items() if k != field}
    if value is not None:  # None: the field is left out, as proto3 JSON leaves out a default
        new[field] = value
    eng.state.resources[sk] = new
    style = lro_style(api.doc, route.method)
    return respond(eng, api, coll, route.verb, key, api.profile.switched(route.method.id, new), lro_error, style, old=current)
