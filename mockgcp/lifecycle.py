"""Create, get, list and delete: the standard methods' semantics.

A create is read from the request it comes with (mockgcp.shapes.create_shape):
the ID from the URL of a PUT, ``?<x>Id=``, the request's ``<x>Id`` field, the
body's ``name``, or assigned by the service where the documents (or
overrides.yaml) say so; the resource from the body, a wrapper field, or the
fields of a flat create request the resource schema has.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kccgen.discovery.document import Method, schema_path
from kccgen.mockgcp.apis import CreateInputs
from kccgen.mockgcp.catalog import Api, Collection, Route
from kccgen.mockgcp.errors import already_exists, invalid, not_found, precondition
from kccgen.mockgcp.operations import Response, now, respond
from kccgen.mockgcp.shapes import CreateShape, create_shape, lro_style
from kccgen.mockgcp.singletons import default, is_settings
from kccgen.mockgcp.state import State

if TYPE_CHECKING:
    from kccgen.mockgcp.engine import MockGCP


@dataclass(frozen=True)
class Call:
    """One request routed to a collection's method."""

    api: Api
    coll: Collection
    route: Route
    path: str  # URL path without the leading "/"
    query: dict[str, list[str]]
    body: Any
    lro_error: str | None  # an injected fault: the operation ends in this error

    @property
    def method(self) -> Method:
        return self.route.method

    @property
    def key(self) -> str:
        key = self.coll.key(self.path)
        # users.update?name=app, autoscalers.patch?autoscaler=a: the path stops at the
        # collection and the resource's ID travels in the query parameter named after
        # the get path's last placeholder
        if self.route.role in ("update", "delete") and "get" in self.coll.methods:
            mine, got = self.method.path.split(":", 1)[0], self.coll.get.path.split(":", 1)[0]
            if mine.startswith(got + "/") and "/" not in mine[len(got) + 1 :]:
                return key.rsplit("/", 1)[0]  # a verb segment after the name: compute's {policy}/delete
            own = self.method.path.split(":", 1)[0].rsplit("/", 1)[-1]
            last = self.coll.get.path.split(":", 1)[0].rsplit("/", 1)[-1]
            name = last.strip("{}+")
            if not own.startswith("{") and last.startswith("{") and name in self.method.parameters and self.param(name):
                key = f"{key}/{self.param(name)}"
        return key

    @property
    def store_key(self) -> str:
        return State.store_key(self.api.key, self.key)

    def param(self, name: str) -> str | None:
        vals = self.query.get(name)
        return vals[0] if vals else None


def project_of(key: str, query: dict[str, list[str]] | None = None) -> str:
    parts = key.split("/")
    if len(parts) > 1 and parts[0] == "projects":
        return parts[1]
    if query and query.get("project"):
        return query["project"][0]
    return "unknown-project"


def check_metageneration(c: Call, stored: dict[str, Any]) -> None:
    """storage's ``ifMetagenerationMatch``, checked when sent."""
    want = c.param("ifMetagenerationMatch") if "ifMetagenerationMatch" in c.method.parameters else None
    if want and want != str(stored.get("metageneration")):
        raise precondition("Precondition Failed")


def get(eng: MockGCP, c: Call) -> Response:
    res = eng.state.resources.get(c.store_key)
    if res is None and is_settings(c.coll):
        res = default(c.api, c.coll.schema, c.key)  # settings exist before anything is written
    if res is None:
        res = c.api.profile.standing(c.coll.schema, c.key, c.api.key)
    if res is None:
        raise not_found(c.key)
    return Response(200, copy.deepcopy(res))


def list_(eng: MockGCP, c: Call) -> Response:
    prefix = f"{c.api.key}|{c.key}/"
    items = []
    for k in sorted(eng.state.resources):
        if k.startswith(prefix) and "/" not in k[len(prefix) :] and c.api.profile.listed(eng.state.meta.get(k, {}), c.query):
            items.append(copy.deepcopy(eng.state.resources[k]))
    resp_schema = c.method.response.ref if c.method.response else None
    field_name = "items"
    kind = None
    if resp_schema:
        props = c.api.doc.schemas[resp_schema].properties
        for name, prop in props.items():
            if prop.type == "array" and prop.items is not None and prop.items.ref == c.coll.schema:
                field_name = name
        kind = props["kind"].default if "kind" in props else None
    out: dict[str, Any] = {field_name: items} if items else {}
    if kind:  # compute#networkList, storage#buckets: the list schema's own kind
        out["kind"] = kind
    return Response(200, out)


def _resource_and_key(eng: MockGCP, c: Call, shape: CreateShape, body: dict[str, Any]) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(the new resource's name, its fields, a flat request's other inputs)."""
    rel = c.key
    if shape.body == "wrapper":
        inner = body.get(shape.resource_field or "")
        resource = dict(inner) if isinstance(inner, dict) else {}
        inputs: dict[str, Any] = {}
    elif shape.body == "flat":
        resource = {k: v for k, v in body.items() if k not in shape.inputs}
        inputs = {k: v for k, v in body.items() if k in shape.inputs}
    else:
        resource, inputs = dict(body), {}
    if shape.id_from == "url":
        return rel, resource, inputs
    if shape.id_from == "query" and shape.id_field:
        rid = c.param(shape.id_field)
        if not rid:
            raise invalid(f"{shape.id_field} must be specified.")
        return f"{rel}/{rid}", resource, inputs
    if shape.id_from == "request" and shape.id_field:
        rid = _at(body, shape.id_field)
        if not isinstance(rid, str) or not rid:
            raise invalid(f"{shape.id_field} must be specified.")
        return f"{rel}/{rid}", resource, inputs
    if shape.id_from == "body-or-service" and shape.id_field and isinstance(body.get(shape.id_field), str) and body[shape.id_field]:
        return f"{rel}/{body[shape.id_field]}", resource, inputs
    if shape.id_from in ("service", "body-or-service"):
        return f"{rel}/{eng.state.digits(19)}", resource, inputs
    several = c.coll.id_fields
    if several:  # rrsets/{name}/{type}: the body's fields name it together
        missing = [f for f in several if not isinstance(resource.get(f), str) or not resource[f]]
        if missing:
            raise invalid(f"Required field 'resource.{missing[0]}' not specified")
        return "/".join([rel, *(str(resource[f]) for f in several)]), resource, inputs
    field = c.coll.id_field
    name = _at(resource, field)
    if isinstance(name, int) and not isinstance(name, bool):
        name = str(name)
    if not isinstance(name, str) or not name:
        raise invalid(f"Required field 'resource.{field}' not specified")
    if "/" in name:
        # AIP-style APIs (cloudscheduler, translate) take the full resource name in
        # the body: it must name one resource directly under the request's parent.
        parent, _, rid = name.rpartition("/")
        if parent != rel or not rid:
            raise invalid(f"resource.{field} {name!r} does not name a resource in {rel}")
        return name, resource, inputs
    return f"{rel}/{name}", resource, inputs


def _at(body: dict[str, Any], dotted: str) -> Any:
    node: Any = body
    for part in dotted.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node


def create(eng: MockGCP, c: Call) -> Response:
    body = {} if c.body is None else c.body  # KMS keyRings.create sends no body at all (recorded traffic)
    if not isinstance(body, dict):
        raise invalid("Request body must be a JSON object.")
    shape = create_shape(c.api.doc, c.coll, c.method)
    key, resource, inputs = _resource_and_key(eng, c, shape, body)
    props = c.api.doc.schemas[c.coll.schema].properties
    for pname, p in sorted(c.method.parameters.items()):
        # a query parameter named like a field of the resource sets it, as the service
        # does (storage's hmacKeys.create?serviceAccountEmail=, compute's ?sourceImage=)
        if p.location == "query" and pname in props and c.query.get(pname) and pname not in resource:
            resource[pname] = c.query[pname][0]
    sk = State.store_key(c.api.key, key)
    if sk in eng.state.resources:
        raise already_exists(key)
    for f in c.coll.output_only:
        resource.pop(f, None)
    missing = sorted(f for f in c.coll.required if resource.get(f) in (None, "", [], {}))
    if missing:
        raise invalid(f"Missing required field(s): {', '.join(missing)}.")
    for f, target in c.coll.requires:  # as the service answers: the named resource must exist
        named = resource.get(f)
        if isinstance(named, str) and named and eng.state.find(c.api.key, c.api.collections[target].key(named)) is None:
            raise not_found(named.rsplit("/", 1)[-1])
    project = project_of(key, c.query)
    t = now()
    if shape.body == "flat":
        c.api.profile.on_create(CreateInputs(c.api.doc, c.coll.schema, key, resource, inputs, t, lambda k: eng.state.find(c.api.key, k)))
    eng.apply_defaults(c.api, c.coll, resource)
    for f, value in c.coll.defaults:  # overrides.yaml: what the service sets when the create has none
        resource.setdefault(f, json.loads(value))
    eng._populate(c.api, c.coll, key, resource, project, True)
    for f in c.coll.input_only:
        resource.pop(f, None)  # taken on write (ttl -> expireTime), never returned by GET
    if c.lro_error is None:
        eng.state.resources[sk] = resource
        eng.state.meta[sk] = {"project": project}
    answer = respond(eng, c.api, c.coll, "create", key, resource, c.lro_error, lro_style(c.api.doc, c.method))
    wrapped = c.method.response.ref if c.method.response and c.method.response.ref != c.coll.schema and lro_style(c.api.doc, c.method) == "none" else None
    custom = c.api.profile.create_answer(c.method.id, answer.body) if wrapped and isinstance(answer.body, dict) else None
    if custom is not None:
        return Response(answer.status, custom)
    at = schema_path(c.api.doc, wrapped, c.coll.schema) if wrapped else None
    if at:  # the answer holds the resource at the one path of its schema
        held: Any = answer.body
        for part in reversed(at.split(".")):
            held = {part: held}
        return Response(answer.status, held)
    return answer


def delete(eng: MockGCP, c: Call) -> Response:
    old = eng.state.resources.get(c.store_key)
    if old is None:
        raise not_found(c.key)
    check_metageneration(c, old)  # storage buckets.delete takes ifMetagenerationMatch too
    if c.lro_error is None:
        del eng.state.resources[c.store_key]
        eng.state.meta.pop(c.store_key, None)
        eng.state.policies.pop(c.store_key, None)
    style = lro_style(c.api.doc, c.method)
    if style == "none":
        status = c.api.profile.delete_status if c.method.response is None else 200
        return Response(status, None if status == 204 else {})
    return respond(eng, c.api, c.coll, "delete", c.key, {}, c.lro_error, style, old=old)
