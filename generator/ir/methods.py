"""IR stage: method shapes (how create passes the ID, update style, LRO style)."""

from __future__ import annotations

import re

from kccgen.discovery.document import DiscoveryDoc, JsonSchema, Method, Resource, iter_resources
from kccgen.discovery.errors import SpecError, json_path
from kccgen.discovery.paths import collection_param, param_templates
from kccgen.generator.ir.model import LroStyle, MethodIR, Methods
from kccgen.generator.spec.kinds import KindConfig

# compute networks.patch, in its two phrasings over the years:
# "Only routingConfig can be modified." (2026) and
# "Only the following fields can be modified: routingConfig.routingMode." (2023)
_NAMES = r"[A-Za-z][A-Za-z0-9.]*(?:\s*,\s*[A-Za-z][A-Za-z0-9.]*)*(?:,?\s+and\s+[A-Za-z][A-Za-z0-9.]*)?"
_ALLOWLIST = re.compile(
    r"Only\s+(?:the\s+following\s+fields\s+can\s+be\s+(?:modified|updated|patched):\s*(" + _NAMES + r")"
    r"|(" + _NAMES + r")\s+can\s+be\s+(?:modified|updated|patched))"
)

_ROLES = {"get": ("get",), "create": ("create", "insert"), "update": ("patch", "update"), "delete": ("delete",)}


def lro_style(doc: DiscoveryDoc, response: str | None) -> LroStyle:
    """Recognise an operation by its shape, not by the API's name."""
    if response is None:
        return "none"
    props = doc.schemas[response].properties
    if {"done", "response", "metadata"} <= set(props):
        return "google.longrunning"
    if "targetLink" in props and "progress" in props:
        return "compute"
    if "zoneContext" in props or (response == "Operation" and doc.name == "dns"):
        return "dns"
    return "none"


def _operation_getters(doc: DiscoveryDoc) -> tuple[tuple[tuple[str, ...], tuple[tuple[str, str], ...], str], ...]:
    """Every ``*operations.get`` of the document, with what selects it."""
    out = []
    for dotted, res in iter_resources(doc):
        get = res.methods.get("get")
        if dotted.lower().endswith("operations") and get is not None:
            pattern = next((p.pattern for p in get.parameters.values() if p.location == "path" and p.pattern), "")
            out.append((tuple(dotted.split(".")), param_templates(get), pattern or ""))
    return tuple(out)


def _method(doc: DiscoveryDoc, verb: str, name: str, m: Method) -> MethodIR:
    req = m.request.ref if m.request else None
    resp = m.response.ref if m.response else None
    return MethodIR(
        verb=verb,
        name=name,
        id=m.id,
        http_method=m.http_method,
        path=m.path,
        flat_path=m.flat_path or m.path,
        request=req,
        response=resp,
        path_params=tuple(sorted(k for k, p in m.parameters.items() if p.location == "path")),
        query_params=tuple(sorted(k for k, p in m.parameters.items() if p.location == "query")),
        lro=lro_style(doc, resp),
        param_templates=param_templates(m),
    )


def _is_mask(node: JsonSchema) -> bool:
    return node.type == "string" and node.format == "google-fieldmask"


def resolve_methods(file: str, index: int, cfg: KindConfig, doc: DiscoveryDoc, res: Resource) -> tuple[Methods, str]:
    """Return the Kind's method shapes and its resource schema id (the get response)."""
    found: dict[str, MethodIR] = {}
    for verb, names in _ROLES.items():
        for n in names:
            if n in res.methods:
                found[verb] = _method(doc, verb, n, res.methods[n])
                break
    get = found.get("get")
    if get is None or get.response is None:
        raise SpecError(file, json_path("kinds", index, "resource"), f"{cfg.kind}: {doc.key} resource {cfg.resource!r} has no get method returning a schema")
    schema = get.response
    create, update = found.get("create"), found.get("update")

    create_style = "none"
    create_id = wrapper = None
    if create is not None:
        if create.request is not None and create.request != schema:
            create_style = "wrapper"
            for pname, prop in doc.schemas[create.request].properties.items():
                if prop.ref == schema:
                    wrapper = pname
                elif pname.endswith("Id") and prop.type == "string":
                    create_id = pname
        elif create.http_method == "PUT":
            create_style = "put-name"
        else:
            # The ID parameter is named after the collection (schemas -> schemaId);
            # other *Id parameters (requestId, clientOperationId) are not it.
            collection = create.flat_path.rstrip("/").split("/")[-1]
            id_param = f"{collection_param(collection)}Id"
            if id_param in create.query_params:
                create_style, create_id = "id-query", id_param
            elif cfg.id_generation == "service":
                create_style = "service-generated"
            else:
                create_style = "name-in-body"

    update_style = "none"
    mask = upd_wrapper = None
    if update is not None:
        if update.request is not None and update.request != schema:
            update_style = "wrapper-mask"
            for pname, prop in doc.schemas[update.request].properties.items():
                if prop.ref == schema:
                    upd_wrapper = pname
                elif _is_mask(prop):
                    mask = pname
        elif "updateMask" in update.query_params:
            update_style, mask = "mask-query", "updateMask"
        else:
            update_style = "whole-resource"
    rprops = doc.schemas[schema].properties
    fingerprint = "fingerprint" if update_style == "whole-resource" and "fingerprint" in rprops else None
    precondition = None
    if update is not None and "ifMetagenerationMatch" in update.query_params:
        precondition = "ifMetagenerationMatch"
    allow: tuple[str, ...] | None = None
    allow_src: str | None = None
    if update is not None:
        raw = res.methods[update.name].description or ""
        m = _ALLOWLIST.search(raw)
        if m:
            listed = re.split(r"\s*,\s*|\s+and\s+", (m.group(1) or m.group(2)).rstrip("."))
            allow = tuple(sorted(n for n in listed if n and n.split(".")[0] in doc.schemas[schema].properties))
            allow_src = f"{update.id}: {' '.join(m.group(0).split())!r}"
    return (
        Methods(
            get=get,
            create=create,
            update=update,
            delete=found.get("delete"),
            create_style=create_style,  # type: ignore[arg-type]
            create_id_param=create_id,
            create_wrapper_field=wrapper,
            update_style=update_style,  # type: ignore[arg-type]
            update_mask=mask,
            update_wrapper_field=upd_wrapper,
            fingerprint_field=fingerprint,
            precondition_param=precondition,
            custom_methods=tuple(sorted(set(res.methods) - {x.name for x in found.values()})),
            operation_getters=_operation_getters(doc) if any(x.lro != "none" for x in found.values()) else (),
            update_allowlist=allow or None,
            update_allowlist_source=allow_src if allow else None,
        ),
        schema,
    )
