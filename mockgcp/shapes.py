"""What a create or update request means, read from the method it was routed to.

mockgcp works this out per request from the Discovery method alone (its HTTP
verb, parameters and request schema), with its own small rules; it does not
share the generator's inference, so a generated adapter that sends the wrong
shape fails here as it would against the real API.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from kccgen.contract import Lro
from kccgen.discovery.behaviours import Behaviour, classify, service_assigned_id
from kccgen.discovery.document import DiscoveryDoc, Method, request_mask
from kccgen.discovery.operations import method_operation_style
from kccgen.discovery.paths import collection_param
from kccgen.mockgcp.catalog import Collection

OUTPUT_ONLY = Behaviour.OUTPUT_ONLY
LroStyle = Lro  # compares equal to "none", "compute"...: a StrEnum

# Query parameters named like an ID that only control the call.
_CONTROL_ID = re.compile(r"^(?:request|clientOperation|operation|parent)Id$")
_ID_PARAM = re.compile(r"^[a-z][A-Za-z0-9]*Id$")


@dataclass(frozen=True)
class CreateShape:
    """Where a create request carries the new resource's ID and its fields."""

    # url: PUT on the resource's own name; query: ?<x>Id=; request: the request
    # message's <x>Id field; body-name: the body's `name`; service: assigned;
    # body-or-service: the resource's own <x>Id when the body has one, else assigned.
    id_from: Literal["url", "query", "request", "body-name", "service", "body-or-service"]
    id_field: str | None = None  # the query parameter or request field with the ID
    # resource: the body is the resource; wrapper: one request field holds it
    # (spanner CreateInstanceRequest.instance); flat: the body's fields the
    # resource schema also has are the resource, the rest are inputs
    # (pubsub CreateSnapshotRequest {subscription, labels, tags}).
    body: Literal["resource", "wrapper", "flat"] = "resource"
    resource_field: str | None = None
    inputs: tuple[str, ...] = ()


@dataclass(frozen=True)
class UpdateShape:
    """Where an update request carries the resource and its field mask."""

    resource_field: str | None  # wrapper (UpdateTopicRequest.topic); None: the body is the resource
    mask_in: Literal["query", "body", "none"]
    mask: str | None  # updateMask, fieldMask...
    mask_doc: str  # the mask's description: "Required", "replaces the existing policy"...
    replace: bool  # without a mask: PUT replaces the resource, PATCH merges (RFC 7386)


def request_schema(method: Method) -> str | None:
    return method.request.ref if method.request else None


def id_query_param(method: Method) -> str | None:
    """The ``?<x>Id=`` parameter naming a new resource: the one named after the
    collection (repositories -> repositoryId), else the only ID-like one that
    does not just control the call (requestId, clientOperationId, parentId)."""
    found = sorted(n for n, p in method.parameters.items() if p.location == "query" and _ID_PARAM.match(n) and not _CONTROL_ID.match(n))
    segment = (method.flat_path or method.path).rstrip("/").split("/")[-1]
    named = f"{collection_param(segment)}Id"
    if named in found:
        return named
    return found[0] if len(found) == 1 else None


def create_shape(doc: DiscoveryDoc, coll: Collection, method: Method) -> CreateShape:
    req = request_schema(method)
    body: Literal["resource", "wrapper", "flat"] = "resource"
    wrapper = req_id = None
    cannot_name = False
    inputs: tuple[str, ...] = ()
    segment = (method.flat_path or method.path).rstrip("/").split("/")[-1].split(":")[0]  # the collection created in
    if req is not None and req != coll.schema:
        props = doc.schemas[req].properties
        wrapper = next((n for n, p in sorted(props.items()) if p.ref == coll.schema), None)
        # not a field that "has no effect" (dlp's deprecated locationId beside storedInfoTypeId)
        # nor a deprecated spelling of the URL's parent (GKE's CreateNodePoolRequest.clusterId)
        req_id = next(
            (n for n, p in sorted(props.items()) if n.endswith("Id") and p.type == "string" and "has no effect" not in (p.description or "") and not (p.description or "").lstrip().startswith("Deprecated")),
            None,
        )
        if wrapper is not None:
            body = "wrapper"
        else:
            body = "flat"
            have = doc.schemas[coll.schema].properties
            inputs = tuple(sorted(n for n in props if n not in have))
            # a flat request names the resource by the field named after the collection
            # (licensing's userId), never by another *Id (Apps Script's parentId, its folder)
            req_id = req_id if req_id == f"{collection_param(segment)}Id" else None
            # nor can it carry the resource's own ID field: the service picks it (below)
            cannot_name = req_id is None and coll.id_field.split(".")[0] not in props
    shape = CreateShape("body-name", body=body, resource_field=wrapper, inputs=inputs)
    get = coll.methods.get("get")
    if method.http_method == "PUT" or (get is not None and method.path.split(":")[0] == get.path.split(":")[0]):
        return _with(shape, "url")  # at its own path (a POST there makes a singleton: content's checkoutsettings)
    q = id_query_param(method)
    if q is not None:
        return _with(shape, "query", q)
    if req_id is not None:
        return _with(shape, "request", req_id)
    if cannot_name:
        return _with(shape, "service")
    if wrapper is not None:
        # the wrapped resource's own <x>Id names it: merchant's {promotion: {promotionId: id}}
        own = f"{collection_param(segment)}Id"
        prop = doc.schemas[coll.schema].properties.get(own)
        if prop is not None and prop.type == "string" and not service_assigned_id(prop.description, prop.read_only):
            return _with(shape, "request", f"{wrapper}.{own}")
    if coll.service_assigned and body == "resource":
        # The service writes `name`, the caller chooses `<x>Id` in the body:
        # cloudresourcemanager's projects.create takes projectId (its name is
        # projects/NUMBER, and GET answers at projects/PROJECT_ID too).
        segment = (method.flat_path or method.path).rstrip("/").split("/")[-1]
        own = f"{collection_param(segment)}Id"
        prop = doc.schemas[coll.schema].properties.get(own)
        if prop is not None and prop.type == "string" and not (prop.read_only or any(f.behaviour is OUTPUT_ONLY for f in classify(prop.description))):
            return _with(shape, "body-or-service", own)  # sent: the ID; else the service's
    # monitoring says "do not include the name field": a name sent is ignored.
    return _with(shape, "service" if coll.service_assigned else "body-name")


def _with(shape: CreateShape, id_from: Literal["url", "query", "request", "body-name", "service", "body-or-service"], id_field: str | None = None) -> CreateShape:
    return CreateShape(id_from, id_field, shape.body, shape.resource_field, shape.inputs)


def update_shape(doc: DiscoveryDoc, coll: Collection, method: Method) -> UpdateShape:
    put = method.http_method == "PUT"
    req = request_schema(method)
    if req is not None and req != coll.schema:
        props = doc.schemas[req].properties
        wrapper = next((n for n, p in sorted(props.items()) if p.ref == coll.schema), None)
        # the mask, or one in an options object beside the resource (contentwarehouse's updateOptions.updateMask)
        found = request_mask(doc, req)
        if wrapper is not None:
            if found is None:
                return UpdateShape(wrapper, "none", None, "", put)
            return UpdateShape(wrapper, "body", found[0], found[1].description or "", put)
    for name, p in sorted(method.parameters.items()):
        if p.location == "query" and (name == "updateMask" or p.format == "google-fieldmask"):
            return UpdateShape(None, "query", name, p.description or "", put)
    return UpdateShape(None, "none", None, "", put)


def lro_style(doc: DiscoveryDoc, method: Method) -> LroStyle:
    """How the method answers (kccgen.discovery.operations reads the response schema)."""
    return method_operation_style(doc, method)


def short_names(doc: DiscoveryDoc, coll: Collection) -> bool:
    """Whether the resource's ``name`` holds its ID alone (compute, storage, dns:
    the client names it in the body) rather than its full resource name."""
    create = coll.method("create")
    return create is not None and create_shape(doc, coll, create).id_from == "body-name"
