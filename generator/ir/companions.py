"""IR stage: spec fields kept in a paired resource of another API (kind config ``companions:``).

Config Connector's Project has ``billingAccountRef``; the billing account is no
field of cloudresourcemanager's Project but of cloudbilling's
``projects/{project}/billingInfo``. A companion names that resource, its read
and write methods and the field, and the generator checks them against the
other API's document: both methods take the Kind's own name, the write sends
what the read answers, and that schema has the field.
"""

from __future__ import annotations

from kccgen.contract import Call, Companion
from kccgen.discovery.document import DiscoveryDoc
from kccgen.discovery.errors import SpecError, json_path
from kccgen.discovery.operations import operation_style
from kccgen.discovery.paths import param_templates
from kccgen.documents import preferred, split_key
from kccgen.generator.ir.params import _segments, aligned_templates
from kccgen.generator.spec.kinds import CompanionConfig
from kccgen.generator.spec.loader import Specs


def _doc_with(specs: Specs, api: str, resource: str) -> DiscoveryDoc | None:
    for key in preferred(k for k in specs.discovery if split_key(k)[0] == api):
        doc = specs.discovery[key]
        try:
            doc.resource(resource)
        except SpecError:
            continue
        return doc
    return None


def resolve_companion(specs: Specs, c: CompanionConfig, template: str, file: str, where: tuple[str | int, ...]) -> Companion:
    """The contract value of one ``companions:`` entry of a Kind whose identity is ``template``."""

    def error(key: str, message: str) -> SpecError:
        return SpecError(file, json_path(*where, key), message)

    doc = _doc_with(specs, c.api, c.resource)
    if doc is None:
        raise error("resource", f"no pinned document of {c.api} has a resource {c.resource!r}")
    res = doc.resource(c.resource)
    calls: list[Call] = []
    for key, name in (("get", c.get), ("update", c.update)):
        m = res.methods.get(name)
        if m is None:
            raise error(key, f"{doc.key} {c.resource} has no method {name!r} (have: {', '.join(sorted(res.methods))})")
        segs = _segments(m.path)
        suffix = segs[max((i for i, s in enumerate(segs) if s.startswith("{")), default=-1) + 1 :]
        params = aligned_templates(m.path, param_templates(m), [*template.split("/"), *suffix])
        if params is None:
            raise error(key, f"{m.id} ({m.path}) does not take the name {template}")
        calls.append(Call(method=name, params=params, lro=operation_style(doc, m.response.ref if m.response else None)))
    get, upd = res.methods[c.get], res.methods[c.update]
    schema = get.response.ref if get.response is not None else None
    if schema is None or c.api_field not in doc.schemas[schema].properties:
        raise error("apiField", f"{c.get} answers {schema or 'nothing'}, which has no field {c.api_field!r}")
    if c.append_only:
        # the write takes the added entries in its own request's field of that name
        req = doc.schemas.get(upd.request.ref or "") if upd.request is not None else None
        field = req.properties.get(c.api_field) if req is not None else None
        if field is None or field.type != "array" or doc.schemas[schema].properties[c.api_field].type != "array":
            raise error("update", f"{upd.id} takes no list {c.api_field!r} to append {schema}.{c.api_field} entries to")
    elif upd.request is None or upd.request.ref != schema:
        raise error("update", f"{upd.id} does not take the {schema} that {get.id} answers")
    return Companion(c.field, doc.key, tuple(c.resource.split(".")), calls[0], calls[1], c.api_field, c.target or "", c.append_only)
