"""The requests a reconcile sends, built from the adapter's kccgen.contract shapes.

Every shape is handled by an exhaustive ``match``: a new variant in the
contract without a case here fails type checking (``assert_never``), so an
adapter can never fall back to a request of the wrong shape.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, assert_never

from kccgen.contract import (
    Adapter,
    Call,
    CreateAtPath,
    CreateByStatement,
    CreateByVerb,
    CreateEntry,
    CreateServiceAssigned,
    CreateWithIdParam,
    CreateWithNameInBody,
    CreateWrapped,
    DeleteAtPath,
    DeleteByVerb,
    DeleteEntry,
    FingerprintGuard,
    Guard,
    MetagenerationGuard,
    NoCreate,
    NoDelete,
    NoGuard,
    NoUpdate,
    UpdateEntry,
    UpdateMaskInBody,
    UpdateMaskInQuery,
    UpdateMerge,
    UpdateReplace,
    UpdateRouted,
    Where,
    route_of,
    template_value,
    write_only_routes,
)
from kccgen.runtime.mutability import by_api_path, is_map


@dataclass(frozen=True)
class Request:
    """One call: the method, its body (None: no body) and query parameters beyond the identity."""

    call: Call
    body: dict[str, Any] | None
    params: dict[str, Any] = field(default_factory=dict)


def with_path(body: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    """``body`` with ``value`` at a dotted path, copying (never mutating) the objects on the way."""
    head, _, rest = dotted.partition(".")
    if not rest:
        return {**body, head: value}
    inner = body.get(head)
    return {**body, head: with_path(inner if isinstance(inner, dict) else {}, rest, value)}


def at_path(body: Any, dotted: str) -> Any:
    """The value at a dotted path of a response, or None."""
    for part in dotted.split("."):
        if not isinstance(body, dict):
            return None
        body = body.get(part)
    return body


def create_request(a: Adapter, payload: dict[str, Any], rid: str, full_name: str | None, values: Mapping[str, str] | None = None) -> Request | None:
    """The create for ``payload`` (the spec as an API resource, create-only inputs
    included under their API names); None when the resource cannot be created.

    ``rid``: the resource ID (empty for a service-assigned one); ``full_name``: its
    identity, for a create at the resource's own path; ``values``: the
    identity's values, for a verb's fixed body.
    """
    shape = a.create
    if isinstance(shape, NoCreate):
        return None
    payload = dict(payload)
    for r in write_only_routes(a.update):  # the update verb's, not the resource's (GKE's nodeCount)
        value = payload.pop(r.field, None)
        if value is not None and r.create_as and payload.get(r.create_as) is None:
            payload[r.create_as] = value
    query = {i.field: payload.pop(i.field) for i in shape.inputs if i.where is Where.QUERY and i.field in payload}
    beside = {i.field: payload.pop(i.field) for i in shape.inputs if i.where is Where.BODY and i.field in payload}
    match shape:
        case CreateAtPath(call=call, name_field=name_field):
            body = {**payload, **beside}
            if name_field is not None:
                body[name_field] = full_name
            return Request(call, body, query)
        case CreateWithIdParam(call=call, id_param=id_param):
            return Request(call, {**payload, **beside}, {id_param: rid, **query})
        case CreateWithNameInBody(call=call, name_field=name_field, full_name=full, request_fields=taken):
            if taken is not None:  # a request of its own: only the resource fields it takes
                payload = {k: v for k, v in payload.items() if k in taken}
            if not rid and not full:  # no ID of its own: the body's fields are the identity (rrsets/{name}/{type})
                return Request(call, {**payload, **beside}, query)
            given = _get(payload, name_field)
            if given is not None and str(given) == (full_name if full else rid):
                return Request(call, {**payload, **beside}, query)  # already there, in its own type (a rule's integer priority)
            return Request(call, {**with_path(payload, name_field, full_name if full else rid), **beside}, query)
        case CreateWrapped(call=call, id_field=id_field, resource_field=resource_field, full_name=full):
            # the ID beside the resource, or (a dotted path into it) inside it: GKE's cluster.name
            return Request(call, with_path({resource_field: payload, **beside}, id_field, full_name if full else rid), query)
        case CreateServiceAssigned(call=call, request_fields=taken, resource_field=wrapper):
            if taken is not None:  # a request of its own: only the resource fields it takes
                payload = {k: v for k, v in payload.items() if k in taken}
            if taken == () and not wrapper and not beside:  # a create with no request body (storage's hmacKeys.create)
                return Request(call, None, query)
            return Request(call, {wrapper: payload, **beside} if wrapper else {**payload, **beside}, query)
        case CreateByVerb(call=call, body=fixed, takes_body=takes_body):
            # the verb makes the resource be: its body is its fixed fields, not the spec
            return Request(call, verb_body(fixed, values or {}) if takes_body else None, query)
        case CreateByStatement(call=call, statement_field=field, statements=statements, dialect_field=dialect, request_fields=taken):
            chosen = dict(statements)
            template = (chosen.get(str(payload.get(dialect) or "")) if dialect else None) or chosen.get("", "")
            body = {k: v for k, v in payload.items() if k in taken}
            return Request(call, {**body, **beside, field: template.replace("{id}", rid)}, query)
        case CreateEntry(entry=entry):
            # the entry itself: runtime.entries puts it into the parent's list
            return Request(entry.call, {**payload, **beside, entry.key: rid}, query)
        case _:
            assert_never(shape)


def update_requests(a: Adapter, desired: dict[str, Any], actual: dict[str, Any], paths: list[str]) -> list[Request] | None:
    """The calls that update the changed fields (``paths``): one, or one per route
    of a routed update, in the routes' order; None when the API has no update."""
    if isinstance(a.update, UpdateRouted):
        return routed_requests(a.update, desired, actual, paths)
    req = update_request(a, desired, actual, paths)
    return None if req is None else [req]


def routed_requests(shape: UpdateRouted, desired: dict[str, Any], actual: dict[str, Any], paths: list[str]) -> list[Request]:
    """One request per route a changed path falls under: the route's field's whole
    desired value at its ``into``, its tokens from the live resource. A path above
    the routed fields (an object the live resource lacks) takes each route under
    it that the spec sets. A path with no route raises ValueError: the
    mutability check refuses such a change before any call."""
    todo: set[int] = set()
    for p in paths:
        r = route_of(shape, p)
        if r is not None:
            todo.add(shape.routes.index(r))
            continue
        under = [i for i, x in enumerate(shape.routes) if x.field.startswith(p.replace("[]", "") + ".") and _get(desired, x.field) is not None]
        if not under:
            raise ValueError(f"{p}: no method of the API changes it")
        todo.update(under)
    out = []
    for i in sorted(todo):
        r = shape.routes[i]
        want = _get(desired, r.field)
        call = r.call
        if r.verbs:
            call = next((c for v, c in r.verbs if v == str(want)), None)  # type: ignore[assignment]
            if call is None:
                raise ValueError(f"{r.field}: no method of the API sets it to {want!r} (have: {', '.join(v for v, _ in r.verbs)})")
        body = with_path({}, r.into, copy.deepcopy(want)) if r.into else {}
        for into, live in r.tokens:
            token = _get(actual, live)
            if token is not None:
                body = with_path(body, into, token)
        out.append(Request(call, body))
    return out


def update_request(a: Adapter, desired: dict[str, Any], actual: dict[str, Any], paths: list[str]) -> Request | None:
    """One update carrying only the changed fields (``paths``); None when the API has no update.
    A routed update's paths must fall under one route (``update_requests`` sends several)."""
    shape = a.update
    changed = _pick(desired, paths)
    mask = ",".join(paths)
    for path, _ in a.fixed:  # the identity's fields name what a PATCH to ``connections/-`` changes
        value = _get(desired, path)
        if value is not None:
            changed = with_path(changed, path, value)
    match shape:
        case UpdateMaskInQuery(call=call, mask_param=mask_param):
            return Request(call, changed, {mask_param: mask})
        case UpdateMaskInBody(call=call, resource_field=resource_field, mask_field=mask_field):
            # the mask may sit in an options object beside the resource (updateOptions.updateMask)
            return Request(call, with_path({resource_field: changed}, mask_field, mask))
        case UpdateMerge(call=call, guard=guard):
            return _guarded(call, guard, _merge_patch(a, desired, actual, changed, paths), actual)
        case UpdateReplace(call=call, guard=guard, resource_field=wrapper):
            req = _guarded(call, guard, _replaced(desired, actual, paths), actual)
            return replace(req, body={wrapper: req.body}) if wrapper else req
        case UpdateEntry(entry=entry):
            # the whole entry, changed: runtime.entries replaces it in the parent's list
            return Request(entry.call, _replaced(desired, actual, paths))
        case UpdateRouted():
            reqs = routed_requests(shape, desired, actual, paths)
            if len(reqs) > 1:
                raise ValueError(f"{', '.join(paths)}: {len(reqs)} calls, not one")
            return reqs[0] if reqs else None
        case NoUpdate():
            return None
        case _:
            assert_never(shape)


def delete_call(a: Adapter) -> Call | None:
    """The method that deletes the resource; None when deleting the object abandons it."""
    shape = a.delete
    match shape:
        case DeleteAtPath(call=call):
            return call
        case DeleteByVerb(call=call):
            return call
        case DeleteEntry(entry=entry):
            return entry.call
        case NoDelete():
            return None
        case _:
            assert_never(shape)


def delete_request(a: Adapter, annotations: Mapping[str, str], values: Mapping[str, str]) -> Request | str:
    """The delete to send, or why none is (the resource is left as it is)."""
    shape = a.delete
    match shape:
        case DeleteAtPath(call=call):
            return Request(call, None)
        case DeleteByVerb(call=call, body=fixed, switch=switch, flags=flags, takes_body=takes_body):
            if switch and annotations.get(switch, "true").strip().lower() == "false":
                return f"{switch}: false: {a.kind} left as it is"
            body = verb_body(fixed, values)
            for path, annotation in flags:
                if annotations.get(annotation, "").strip().lower() == "true":
                    body = with_path(body, path, True)
            return Request(call, body if takes_body else None)
        case DeleteEntry(entry=entry):
            return Request(entry.call, None)  # runtime.entries removes the entry from the parent's list
        case NoDelete():
            return f"{a.doc} has no delete method for {a.kind}"
        case _:
            assert_never(shape)


def verb_body(fixed: tuple[tuple[str, str], ...], values: Mapping[str, str]) -> dict[str, Any]:
    """A custom method's fixed request fields, the identity's values filled in."""
    body: dict[str, Any] = {}
    for path, template in fixed:
        body = with_path(body, path, template_value(template, dict(values)))
    return body


def _guarded(call: Call, guard: Guard, body: dict[str, Any], actual: Mapping[str, Any]) -> Request:
    """The optimistic-concurrency token of a whole-resource write, from the live resource."""
    match guard:
        case FingerprintGuard(field=token):
            if token in actual:
                body[token] = actual[token]
            return Request(call, body)
        case MetagenerationGuard(param=param, field=token):
            return Request(call, body, {param: actual[token]} if token in actual else {})
        case NoGuard():
            return Request(call, body)
        case _:
            assert_never(guard)


def _merge_patch(a: Adapter, desired: dict[str, Any], actual: dict[str, Any], changed: dict[str, Any], paths: list[str]) -> dict[str, Any]:
    """Changed top-level fields merged over the live values, so server-set nested
    fields survive; a map key removed from the spec is sent as null, which a
    merge patch (RFC 7386) reads as "delete it" (it would otherwise stay)."""
    body = {k: _merge(actual.get(k), v) for k, v in changed.items()}
    rows = by_api_path(a.kind)
    for p in paths:
        if is_map(rows.get(p)):
            want, have = _get(desired, p), _get(actual, p)
            gone = {k: None for k in (have if isinstance(have, dict) else {}) if k not in (want or {})}
            _put(body, p, {**gone, **copy.deepcopy(want or {})})
    return body


def _replaced(desired: dict[str, Any], actual: dict[str, Any], paths: list[str]) -> dict[str, Any]:
    """The live resource with the changed fields (``paths``) set to the desired values."""
    body = copy.deepcopy(actual)
    for p in paths:
        _put(body, p, copy.deepcopy(_get(desired, p)))
    return body


def _pick(obj: Mapping[str, Any], paths: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for p in paths:
        parts = p.split(".")
        src: Any = obj
        for part in parts:
            src = src.get(part) if isinstance(src, Mapping) else None
        cur = out
        for part in parts[:-1]:
            cur = cur.setdefault(part, {})
        cur[parts[-1]] = copy.deepcopy(src)
    return out


def _get(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = obj.get(part) if isinstance(obj, Mapping) else None
    return obj


def _put(obj: dict[str, Any], path: str, value: Any) -> None:
    parts = path.split(".")
    for part in parts[:-1]:
        obj = obj.setdefault(part, {})
    obj[parts[-1]] = value


def _merge(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        out = copy.deepcopy(base)
        for k, v in over.items():
            out[k] = _merge(out.get(k), v)
        return out
    return copy.deepcopy(over)
