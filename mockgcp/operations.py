"""Long-running operations in the four styles the documents use.

The style is read from the method's response schema (mockgcp.shapes.lro_style):
google.longrunning (``{name, metadata, done, response|error}``), compute
(``{status: RUNNING..DONE, progress, targetLink}``) and DNS (``{status:
pending..done, zoneContext}``), and GKE's (compute's look, a short name under the
resource's location, a google.rpc.Status error). An operation is done after ``lro_polls`` polls;
the change it makes is stored at once (or never, with an injected ``lro_error``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from kccgen.contract import located_parent
from kccgen.mockgcp.apis import rfc3339
from kccgen.mockgcp.catalog import Api, Collection
from kccgen.mockgcp.errors import ApiError, not_found
from kccgen.mockgcp.shapes import LroStyle
from kccgen.mockgcp.state import Operation

if TYPE_CHECKING:
    from kccgen.mockgcp.engine import MockGCP

_GRPC_INTERNAL = 13
_USER = "mockgcp@example.iam.gserviceaccount.com"


@dataclass
class Response:
    status: int
    body: Any = None  # dict, or None for no body (204)


def now() -> datetime:
    return datetime.now(UTC)


def respond(
    eng: MockGCP, api: Api, coll: Collection, action: str, key: str, resource: dict[str, Any],
    lro_error: str | None, style: LroStyle, old: dict[str, Any] | None = None,
) -> Response:
    """The answer to a write: the resource itself, or an operation that resolves to it."""
    if style == "none":
        if lro_error is not None:
            raise ApiError(500, lro_error)
        return Response(200, copy.deepcopy(resource))
    op = start(eng, api, coll, action, key, resource, lro_error, style, old)
    return Response(200, copy.deepcopy(op.body))


def _ops_prefix(api: Api, key: str) -> str:
    """Where google.longrunning operations live for a resource: the longest
    operations.get name pattern the resource's name starts with."""
    for rx, _ in api.operation_prefixes:
        m = rx.match(key)
        if m:
            return m.group(0)
    return "/".join(key.split("/")[:2])


def _ops_name(prefix: str, oid: str) -> str:
    return f"{prefix}/operations/{oid}" if prefix else f"operations/{oid}"


def _compute_body(eng: MockGCP, api: Api, action: str, key: str, resource: dict[str, Any], old: dict[str, Any] | None, t: datetime) -> tuple[str, dict[str, Any]]:
    st, base, when = eng.state, api.profile.self_link_base, api.profile.time_text(t)
    name = f"operation-{int(t.timestamp() * 1000)}-{st.token(6).lower()}-{st.token(4).lower()}-{st.token(4).lower()}"
    parts = key.split("/")
    scope = "/".join(parts[:4]) if len(parts) > 3 and parts[2] in ("regions", "zones") else "/".join(parts[:2]) + "/global"
    op_key = f"{scope}/operations/{name}"
    body: dict[str, Any] = {
        "kind": "compute#operation",
        "id": st.digits(19),
        "name": name,
        "operationType": action if action != "create" else "insert",
        "targetLink": resource.get("selfLink") or (old or {}).get("selfLink") or base + key,
        "targetId": str(resource.get("id") or (old or {}).get("id") or ""),
        "status": "RUNNING",
        "user": _USER,
        "progress": 0,
        "insertTime": when,
        "startTime": when,
        "selfLink": base + op_key,
    }
    if "/regions/" in scope:
        body["region"] = base + "/".join(parts[:4])
    return op_key, body


def _located_body(eng: MockGCP, api: Api, action: str, key: str, resource: dict[str, Any], t: datetime) -> tuple[str, dict[str, Any]]:
    """GKE: a short name, stored under the resource's location; compute's look
    (status, selfLink, targetLink) with a google.rpc.Status error."""
    scope = located_parent(key)
    name = f"operation-{int(t.timestamp() * 1000)}-{eng.state.token(8).lower()}"
    base = f"https://{api.doc.root_url.split('//', 1)[-1].rstrip('/')}/{api.doc.version}/" if api.doc.root_url else ""
    verb = {"create": "CREATE_CLUSTER", "delete": "DELETE_CLUSTER"}.get(action, "UPDATE_CLUSTER")
    if "/nodePools/" in key:
        verb = {"create": "CREATE_NODE_POOL", "delete": "DELETE_NODE_POOL", "setSize": "SET_NODE_POOL_SIZE"}.get(action, "UPGRADE_NODES")
    return f"{scope}/operations/{name}", {
        "name": name,
        "operationType": verb,
        "status": "RUNNING",
        "selfLink": base + f"{scope}/operations/{name}",
        "targetLink": base + key,
        "startTime": rfc3339(t),
        **({"location": scope.rsplit("/", 1)[-1]} if "/locations/" in scope else {}),
    }


def _dns_body(eng: MockGCP, action: str, key: str, resource: dict[str, Any], old: dict[str, Any] | None, t: datetime) -> tuple[str, dict[str, Any]]:
    oid = eng.state.digits(8)
    return f"{key}/operations/{oid}", {
        "kind": "dns#operation",
        "id": oid,
        "startTime": rfc3339(t),
        "status": "pending",
        "type": "update" if action != "delete" else "delete",
        "user": _USER,
        "zoneContext": {"oldValue": copy.deepcopy(old or {}), "newValue": copy.deepcopy(resource)},
    }


def start(
    eng: MockGCP, api: Api, coll: Collection, action: str, key: str, resource: dict[str, Any],
    lro_error: str | None, style: LroStyle, old: dict[str, Any] | None,
) -> Operation:
    t = now()
    if style == "compute":
        op_key, body = _compute_body(eng, api, action, key, resource, old, t)
    elif style == "dns":
        op_key, body = _dns_body(eng, action, key, resource, old, t)
    elif style == "located":
        op_key, body = _located_body(eng, api, action, key, resource, t)
    else:
        op_key = _ops_name(_ops_prefix(api, key), eng.state.token(12).lower())
        # proto3 JSON drops false booleans: a pending operation has no "done".
        body = {"name": op_key, "metadata": api.profile.lro_metadata(api.doc, coll.schema, action, resource, rfc3339(t))}
    # A google.longrunning operation of an API with no operations.get is answered done.
    polls = eng.lro_polls if style != "google.longrunning" or api.pollable else 0
    op = Operation(api.key, style, op_key, body, polls, copy.deepcopy(resource) if action != "delete" else {}, lro_error)
    op.done_body = {"schema": coll.schema}
    finish_if_due(eng, op)
    eng.state.operations[eng.state.store_key(api.key, op_key)] = op
    prune(eng)
    return op


#: Finished operations kept for late polls; older ones are dropped, so a long
#: run does not grow without bound (a poll of a dropped one answers 404).
KEEP_FINISHED = 256


def prune(eng: MockGCP) -> None:
    """Drop all but the ``KEEP_FINISHED`` newest finished operations (dicts keep insertion order)."""
    ops = eng.state.operations
    finished = [k for k, o in ops.items() if o.polls_left <= 0]
    for k in finished[: max(0, len(finished) - KEEP_FINISHED)]:
        del ops[k]


def finish_if_due(eng: MockGCP, op: Operation) -> None:
    if op.polls_left > 0:
        return
    api = eng.apis[op.api]
    b, t = op.body, now()
    if op.style == "compute":
        b["status"], b["progress"], b["endTime"] = "DONE", 100, api.profile.time_text(t)
        if op.error:
            b["error"] = {"errors": [{"code": "RESOURCE_OPERATION_ERROR", "message": op.error}]}
            b["httpErrorStatusCode"], b["httpErrorMessage"] = 400, "BAD REQUEST"
    elif op.style == "located":
        b["status"], b["endTime"] = "DONE", rfc3339(t)
        if op.error:
            b["error"] = {"code": _GRPC_INTERNAL, "message": op.error}
            b["statusMessage"] = op.error
    elif op.style == "dns":
        b["status"] = "done"
        if op.error:
            b["error"] = {"errors": [{"code": "RESOURCE_OPERATION_ERROR", "message": op.error}]}
    else:
        b["done"] = True
        if op.error:
            b["error"] = {"code": _GRPC_INTERNAL, "message": op.error}
        else:
            schema = op.done_body.get("schema", "")
            typ = "google.protobuf.Empty" if not op.result else f"{api.profile.proto_package(api.doc, schema)}.{schema}"
            b["response"] = {"@type": f"type.googleapis.com/{typ}", **(op.result or {})}


def poll(eng: MockGCP, api: Api, path: str) -> Response:
    """operations.get (or wait): one poll, counted down towards done."""
    prefix = api.key + "|"
    for k, o in eng.state.operations.items():
        if k.startswith(prefix) and (path.endswith(o.key) or path.rstrip("/").endswith("/" + o.body.get("name", "\0"))):
            if o.polls_left > 0:
                o.polls_left -= 1
                finish_if_due(eng, o)
            return Response(200, copy.deepcopy(o.body))
    raise not_found(path)
