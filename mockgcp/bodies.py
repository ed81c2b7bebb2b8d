"""Strict request bodies, as Google's APIs parse them.

A real API parses a JSON body into its request message and refuses a field
the message does not define with 400 INVALID_ARGUMENT. mockgcp does the same
against the method's Discovery request schema, at every depth the schema
describes (maps and ``any`` values take anything), so an adapter that sends a
field, or a whole body, of the wrong shape fails here as it would on GCP.
Proto JSON also accepts a field's original (snake_case) name; such keys are
renamed to the JSON name the rest of mockgcp reads.
"""

from __future__ import annotations

from typing import Any

from kccgen.discovery.document import DiscoveryDoc, JsonSchema, Method
from kccgen.mockgcp.apis import camel, snake
from kccgen.mockgcp.catalog import Api, Collection
from kccgen.mockgcp.errors import unknown_field


def _whole(method: Method, coll: Collection | None, request: str) -> bool:
    """Whether the body is the whole request message (HTTP rule ``body: "*"``)."""
    if request.endswith("Request"):
        return True
    own_name = coll is not None and request == coll.schema and (method.flat_path or method.path) == (coll.get.flat_path or coll.get.path)
    return own_name


def check_body(api: Api, method: Method, coll: Collection | None, body: Any) -> Any:
    """``body`` with JSON field names, or ApiError 400 for a field the request schema lacks."""
    request = method.request.ref if method.request else None
    if request is None or not isinstance(body, dict):
        return body
    whole = _whole(method, coll, request)
    at = api.profile.body_field(request, whole)
    bound = _path_fields(api.doc, method, request) if whole and not at else frozenset()
    extra = {k: v for k, v in body.items() if k in bound}
    checked = _walk(api.doc, api.doc.schemas[request], {k: v for k, v in body.items() if k not in bound}, at or "", 0)
    return {**extra, **checked} if extra else checked


def _path_fields(doc: DiscoveryDoc, method: Method, request: str) -> frozenset[str]:
    """Request-message fields the URL binds, which Discovery leaves out of the
    request schema: spanner CreateInstanceRequest.parent, pubsub
    CreateSnapshotRequest.name. A body sent whole may carry them too. A path
    parameter that the wrapped resource has (UpdateTopicRequest's ``name`` is
    ``topic.name``) binds that nested field instead, not a top-level one."""
    props = doc.schemas[request].properties
    nested: set[str] = set()
    for p in props.values():
        if p.ref is not None:
            nested |= set(doc.schemas[p.ref].properties)
    return frozenset(n for n, p in method.parameters.items() if p.location == "path" and n not in props and n not in nested)


def _resolve(doc: DiscoveryDoc, node: JsonSchema) -> JsonSchema:
    while node.ref is not None:
        node = doc.schemas[node.ref]
    return node


def _join(at: str, name: str) -> str:
    return f"{at}.{name}" if at else name


def _walk(doc: DiscoveryDoc, node: JsonSchema, value: Any, at: str, depth: int) -> Any:
    node = _resolve(doc, node)
    if depth > 64 or node.type == "any":
        return value
    if isinstance(value, dict):
        if node.properties:
            out: dict[str, Any] = {}
            for k, v in value.items():
                name = k if k in node.properties else camel(k)
                if name not in node.properties:
                    raise unknown_field(k, at)
                out[name] = _walk(doc, node.properties[name], v, _join(at, snake(name)), depth + 1)
            return out
        if node.additional_properties is not None:
            extra = node.additional_properties
            return {k: _walk(doc, extra, v, f"{at}[{k}]", depth + 1) for k, v in value.items()}
        return value
    if isinstance(value, list) and node.items is not None:
        items = node.items
        return [_walk(doc, items, v, f"{at}[{i}]", depth + 1) for i, v in enumerate(value)]
    return value
