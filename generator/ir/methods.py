"""IR stage: a Kind's methods and their shapes (kccgen.contract).

Which Discovery method plays each role, how update sends the change, how
delete and operations work (how create passes the ID: generator/ir/creates.py,
on the same ShapeCtx, generator/ir/shape_context.py). Inference follows Google's
standard methods; a kind config's ``methods:`` names what inference cannot
tell. A method that fits no variant raises :class:`UnsupportedShape`, and the
Kind is not generated: an adapter that "works" while sending the wrong
request is worse than none.
"""

from __future__ import annotations

import re
from dataclasses import replace

from kccgen.contract import (
    PROJECT_NUMBER,
    CreateEntry,
    CreateServiceAssigned,
    DeleteAtPath,
    DeleteByVerb,
    DeleteEntry,
    DeleteShape,
    FingerprintGuard,
    Guard,
    IamMethods,
    Lro,
    MetagenerationGuard,
    NoCreate,
    NoDelete,
    NoGuard,
    NoUpdate,
    OperationGetter,
    ParentEntry,
    ReadByList,
    UpdateEntry,
    UpdateMaskInBody,
    UpdateMaskInQuery,
    UpdateMerge,
    UpdateReplace,
    UpdateShape,
)
from kccgen.discovery.document import (
    DiscoveryDoc,
    Method,
    Resource,
    iter_resources,
    request_mask,
)
from kccgen.discovery.errors import SpecError, json_path
from kccgen.discovery.operations import operation_style
from kccgen.discovery.paths import param_templates, rest_prefix
from kccgen.generator.ir.creates import (
    configured_create,
    id_in_body,
    infer_create,
    placeholders,
    value_params,
    with_finder,
)
from kccgen.generator.ir.model import MethodIR, Methods
from kccgen.generator.ir.routes import routed_update
from kccgen.generator.ir.shape_context import CONTROL_PARAMS, ShapeCtx, UnsupportedShape, verb_body
from kccgen.generator.spec.kinds import (
    CreateMethod,
    DeleteMethod,
    GetMethod,
    KindConfig,
    UpdateMethod,
)

# compute networks.patch, in its two phrasings over the years:
# "Only routingConfig can be modified." (2026) and
# "Only the following fields can be modified: routingConfig.routingMode." (2023)
_NAMES = r"[A-Za-z][A-Za-z0-9.]*(?:\s*,\s*[A-Za-z][A-Za-z0-9.]*)*(?:,?\s+and\s+[A-Za-z][A-Za-z0-9.]*)?"
_ALLOWLIST = re.compile(
    r"Only\s+(?:the\s+following\s+fields\s+can\s+be\s+(?:modified|updated|patched):\s*(" + _NAMES + r")"
    r"|(" + _NAMES + r")\s+can\s+be\s+(?:modified|updated|patched))"
)

_ROLES = {"get": ("get",), "create": ("create", "insert"), "update": ("patch", "update"), "delete": ("delete",)}

_Ctx = ShapeCtx
__all__ = ["CONTROL_PARAMS", "UnsupportedShape", "iam_methods", "id_in_body", "resolve_methods"]


def _operations(doc: DiscoveryDoc) -> tuple[tuple[str, OperationGetter], ...]:
    """Every ``*operations.get`` of the document, by accessor path."""
    out = []
    for dotted, res in iter_resources(doc):
        get = res.methods.get("get")
        if dotted.lower().endswith("operations") and get is not None:
            pattern = next((p.pattern for p in get.parameters.values() if p.location == "path" and p.pattern), "") or _named_pattern(get)
            out.append((dotted, OperationGetter(tuple(dotted.split(".")), param_templates(get), pattern or "")))
    return tuple(out)


def _named_pattern(get: Method) -> str:
    """An operations.get of simple parameters (appengine's v1/apps/{appsId}/operations/{operationsId}):
    the operation names it serves, each parameter a named group the runtime fills from the name."""
    path = get.flat_path or get.path
    rest = path[len(rest_prefix(path)) :]
    if "{+" in rest or not rest or not all(p.location != "path" or "{" + n + "}" in rest for n, p in get.parameters.items()):
        return ""
    return "^" + re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(rest)) + "$"


def method_location(doc: DiscoveryDoc, dotted: str, name: str) -> str:
    """``pubsub.v1#/resources/projects/resources/topics/methods/create``."""
    parts = [x for seg in dotted.split(".") for x in ("resources", seg)]
    return f"{doc.key}#{json_path(*parts, 'methods', name)}"


def _method(doc: DiscoveryDoc, dotted: str, verb: str, name: str, m: Method) -> MethodIR:
    resp = m.response.ref if m.response else None
    return MethodIR(
        verb=verb,
        name=name,
        id=m.id,
        location=method_location(doc, dotted, name),
        http_method=m.http_method,
        path=m.path,
        flat_path=m.flat_path or m.path,
        request=m.request.ref if m.request else None,
        response=resp,
        path_params=tuple(sorted(k for k, p in m.parameters.items() if p.location == "path")),
        query_params=tuple(sorted(k for k, p in m.parameters.items() if p.location == "query")),
        lro=operation_style(doc, resp),
        param_templates=param_templates(m),
    )


def _pick(ctx: _Ctx, res: Resource, role: str, named: str | None) -> MethodIR | None:
    """The method playing ``role``: the one the config names, else the standard name."""
    if named is not None:
        if named not in res.methods:
            have = ", ".join(sorted(res.methods))
            raise ctx.error(role, f"{ctx.doc.key} {ctx.dotted} has no method {named!r} (have: {have})", "method")
        return _method(ctx.doc, ctx.dotted, role, named, res.methods[named])
    for n in _ROLES[role]:
        if n in res.methods:
            return _method(ctx.doc, ctx.dotted, role, n, res.methods[n])
    return None


# --- update --------------------------------------------------------------------------------


def _guard(ctx: _Ctx, update: MethodIR, named: str | None = None) -> Guard:
    if named == "metageneration" or (named is None and "ifMetagenerationMatch" in update.query_params):
        return MetagenerationGuard()
    if named == "fingerprint" or (named is None and "fingerprint" in ctx.doc.schemas[ctx.schema].properties):
        return FingerprintGuard()
    return NoGuard()


def _mask_param(ctx: _Ctx, raw: Method) -> str | None:
    return next((n for n, p in sorted(raw.parameters.items()) if p.location == "query" and (n == "updateMask" or p.format == "google-fieldmask")), None)


def infer_update(ctx: _Ctx, update: MethodIR | None, raw: Method | None) -> UpdateShape:
    if update is None or raw is None:
        return NoUpdate()
    call = update.call()
    if update.request is not None and update.request != ctx.schema:
        props = ctx.doc.schemas[update.request].properties
        resource_field = next((n for n, p in sorted(props.items()) if p.ref == ctx.schema), None)
        found = request_mask(ctx.doc, update.request)
        mask = found[0] if found is not None else None
        if resource_field is not None and mask is None and update.http_method in ("PATCH", "PUT"):
            # the whole resource, wrapped: contentwarehouse's UpdateRuleSetRequest{ruleSet}
            return UpdateReplace(call, _guard(ctx, update), resource_field=resource_field)
        if resource_field is None or mask is None:
            raise UnsupportedShape(update.location, f"{update.request} does not carry both the {ctx.schema} and a field mask")
        return UpdateMaskInBody(call, resource_field, mask)
    if update.http_method not in ("PATCH", "PUT"):
        raise UnsupportedShape(update.location, f"an update by {update.http_method} is neither a PATCH nor a PUT of the resource")
    mask_param = _mask_param(ctx, raw)
    if mask_param is not None:
        return UpdateMaskInQuery(call, mask_param)
    if update.http_method == "PATCH":
        return UpdateMerge(call, _guard(ctx, update))
    return UpdateReplace(call, _guard(ctx, update))


def configured_update(ctx: _Ctx, update: MethodIR | None, raw: Method | None, u: UpdateMethod) -> UpdateShape:
    if u.shape == "none":
        return NoUpdate()
    if u.shape == "routed":
        raise AssertionError("a routed update is built by generator.ir.routes")
    if update is None or raw is None:
        raise ctx.error("update", f"shape {u.shape!r} needs a method", "method")
    call = update.call()
    if u.shape == "mask-in-query":
        if u.mask is None or u.mask not in update.query_params:
            raise ctx.error("update", f"mask {u.mask!r} is not a query parameter of {update.id}", "mask")
        return UpdateMaskInQuery(call, u.mask)
    if u.shape == "mask-in-body":
        props = ctx.doc.schemas[update.request].properties if update.request else {}
        for key, value in (("mask", u.mask), ("resourceField", u.resource_field)):
            if value is None or value not in props:
                raise ctx.error("update", f"{key} {value!r} is not a field of {update.request}", key)
        assert u.mask is not None and u.resource_field is not None
        return UpdateMaskInBody(call, u.resource_field, u.mask)
    guard = _guard(ctx, update, u.guard) if u.guard else NoGuard()
    return UpdateMerge(call, guard) if u.shape == "merge" else UpdateReplace(call, guard)


def configured_delete(ctx: _Ctx, delete: MethodIR | None, d: DeleteMethod) -> DeleteShape:
    """The delete shape a kind config names, checked against the document."""
    if d.shape == "none":
        return NoDelete()
    if delete is None:
        raise ctx.error("delete", f"shape {d.shape!r} needs a method", "method")
    if d.shape == "at-path":
        return infer_delete(ctx, delete)
    flags = tuple(sorted(d.flags.items()))
    verb_body(ctx, "delete", delete, dict.fromkeys(d.flags, ""))
    return DeleteByVerb(delete.call(), verb_body(ctx, "delete", delete, d.body), d.switch or "", flags, delete.request is not None)


def infer_delete(ctx: _Ctx, delete: MethodIR | None) -> DeleteShape:
    if delete is None:
        return NoDelete()
    if delete.http_method == "POST" and re.search(r"[:/]delete$", delete.path) and delete.request is not None:
        # a delete verb on the resource's own name whose request is all optional
        # (contentwarehouse's documents:delete {requestMetadata}, compute's
        # globalVmExtensionPolicies/{p}/delete {rollout options}): sent empty
        needed = sorted(n for n, p in ctx.doc.schemas[delete.request].properties.items() if re.match(r"\s*Required\b", p.description or ""))
        if not needed:
            return DeleteByVerb(delete.call())
    if delete.http_method != "DELETE" or delete.request is not None:
        raise UnsupportedShape(delete.location, f"a delete by {delete.http_method}{' with a body' if delete.request else ''} is not a DELETE of the resource path")
    return DeleteAtPath(delete.call())


def _allowlist(doc: DiscoveryDoc, schema: str, update: MethodIR | None, raw: Method | None) -> tuple[tuple[str, ...] | None, str | None]:
    """Fields the update method's description limits it to, with the phrase."""
    if update is None or raw is None:
        return None, None
    m = _ALLOWLIST.search(raw.description or "")
    if not m:
        return None, None
    listed = re.split(r"\s*,\s*|\s+and\s+", (m.group(1) or m.group(2)).rstrip("."))
    allow = tuple(sorted(n for n in listed if n and n.split(".")[0] in doc.schemas[schema].properties))
    return (allow, f"{update.id}: {' '.join(m.group(0).split())!r}") if allow else (None, None)


def _with_params(m: MethodIR | None, conf: GetMethod | CreateMethod | UpdateMethod | DeleteMethod | None) -> MethodIR | None:
    """The method with the kind config's parameter templates beside (or over) the path's:
    servicenetworking's ``connections/-`` and ``force``, a list's ``network`` filter."""
    if m is None or conf is None or not conf.params:
        return m
    merged = {**dict(m.param_templates), **conf.params}
    return replace(m, param_templates=tuple(sorted(merged.items())))


def _read_list(ctx: _Ctx, res: Resource, get: MethodIR | None, items: str, match: dict[str, str]) -> ReadByList:
    """A list read (kind config ``get: {items, match}``), checked against the document:
    the list answer must have ``items`` as a list of the resource's schema."""
    where = json_path("overrides", ctx.cfg.resource, "methods", "get", "items")
    if get is None:
        raise SpecError(ctx.file, where, f"{ctx.cfg.kind}: a list read needs methods.get naming the list method")
    answer = res.methods[get.name].response
    raw = ctx.doc.schemas.get(answer.ref) if answer is not None and answer.ref else None
    field = raw.properties.get(items) if raw is not None else None
    if field is None or field.type != "array" or field.items is None or field.items.ref != get.response:
        raise SpecError(ctx.file, where, f"{ctx.cfg.kind}: {get.id} answers no list {items!r} of {get.response}")
    if not match:
        raise SpecError(ctx.file, where, f"{ctx.cfg.kind}: a list read needs match: the item fields that hold the identity's values")
    return ReadByList(items, tuple(sorted(match.items())))


def _view(ctx: _Ctx, res: Resource, get: MethodIR | None, view: str) -> str:
    """The dotted path of the get answer that holds the resource's schema (kind config
    ``get: {schema, view}``), checked against the document."""
    where = json_path("overrides", ctx.cfg.resource, "methods", "get", "view")
    answer = res.methods[get.name].response if get is not None else None
    node = ctx.doc.schemas.get(answer.ref) if answer is not None and answer.ref else None
    for step in view.split("."):
        prop = node.properties.get(step) if node is not None else None
        node = ctx.doc.schemas.get(prop.ref) if prop is not None and prop.ref else None
    if get is None or node is None or node.id != get.response:
        raise SpecError(ctx.file, where, f"{ctx.cfg.kind}: the get answer has no {get.response if get else 'schema'} at {view!r}")
    return view


def entry_methods(file: str, index: int, cfg: KindConfig, doc: DiscoveryDoc, res: Resource) -> tuple[Methods, str]:
    """An entry of the parent's list (kind config ``entryOf``), checked against the
    document: the parent's get answers a schema whose ``field`` is a list of
    objects with ``key``, and ``method`` writes the parent on the get's path."""
    ec = cfg.entry_of
    assert ec is not None
    pre = _Ctx(file, index, cfg, doc, cfg.resource, "")

    def error(what: str, msg: str) -> SpecError:
        return SpecError(file, json_path("overrides", cfg.resource, "entryOf", what), f"{cfg.kind}: {msg}")

    get = _pick(pre, res, "get", None)
    if get is None or get.response is None:
        raise error("field", f"{doc.key} {cfg.resource} has no get returning a schema to hold the entries")
    parent = doc.schemas[get.response]
    prop = parent.properties.get(ec.field)
    item = prop.items.ref if prop is not None and prop.type == "array" and prop.items is not None else None
    if item is None or item not in doc.schemas:
        raise error("field", f"{get.response} has no list of objects {ec.field!r}")
    if ec.key not in doc.schemas[item].properties:
        raise error("key", f"{item} (the {get.response}.{ec.field} entries) has no field {ec.key!r}")
    if not cfg.identity:
        raise error("field", "an entry has no path of its own: name its identity (identity: .../{id})")
    write = _pick(pre, res, "update", ec.method)
    if write is None or write.http_method not in ("PATCH", "PUT") or write.request != get.response:
        raise error("method", f"{doc.key} {cfg.resource}.{ec.method} does not write the {get.response} on its path (a PATCH or PUT of it)")
    if placeholders(write.param_templates) - placeholders(get.param_templates):
        raise error("method", f"{write.id} takes parameters the parent's get does not name")
    guard: Guard = FingerprintGuard() if "fingerprint" in parent.properties else NoGuard()
    entry = ParentEntry(write.call(), ec.field, ec.key, guard)
    rid = cfg.identity.rstrip("/").rsplit("/", 1)[-1]
    methods = Methods(
        get=replace(get, response=item),
        create=write,
        update=write,
        delete=write,
        create_shape=CreateEntry(entry),
        update_shape=UpdateEntry(entry),
        delete_shape=DeleteEntry(entry),
        update_allowlist=None,
        update_allowlist_source=None,
        custom_methods=tuple(sorted(set(res.methods) - {get.name, write.name})),
        operations=_operations(doc) if any(x.lro is not Lro.NONE for x in (get, write)) else (),
        read_list=ReadByList(ec.field, ((ec.key, rid),)),
        iam=None,
    )
    return methods, item


def resolve_methods(file: str, index: int, cfg: KindConfig, doc: DiscoveryDoc, res: Resource) -> tuple[Methods, str]:
    """Return the Kind's methods with their shapes, and its resource schema id (the get response).

    Raises SpecError for a kind config that contradicts the document and
    UnsupportedShape for a method no contract variant describes.
    """
    if cfg.entry_of is not None:
        return entry_methods(file, index, cfg, doc, res)
    pre = _Ctx(file, index, cfg, doc, cfg.resource, "")
    mc = cfg.methods
    reader = res
    if mc.get is not None and mc.get.resource is not None:  # a method of another resource (the parent's get)
        reader = doc.resource(mc.get.resource, file, json_path("overrides" if index < 0 else "kinds", cfg.resource if index < 0 else index, "methods", "get", "resource"))
    get = _with_params(_pick(pre, reader, "get", mc.get.method if mc.get else None), mc.get)
    if get is not None and reader is not res and mc.get is not None and mc.get.resource is not None:
        get = replace(get, owner=tuple(mc.get.resource.split(".")), location=method_location(doc, mc.get.resource, get.name))
    if get is not None and mc.get is not None and mc.get.resource_schema is not None:
        # the read answers with an operation that resolves to the resource
        if mc.get.resource_schema not in doc.schemas:
            raise SpecError(file, json_path("kinds", index, "methods", "get", "schema"), f"{cfg.kind}: {doc.key} has no schema {mc.get.resource_schema!r}")
        get = replace(get, response=mc.get.resource_schema)
    if get is None or get.response is None:
        raise SpecError(file, json_path("kinds", index, "resource"), f"{cfg.kind}: {doc.key} resource {cfg.resource!r} has no get method returning a schema")
    segs = get.path.split(":", 1)[0].split("/")
    at = next((i for i in range(len(segs) - 1, -1, -1) if re.fullmatch(r"\{\+?[^}]+\}", segs[i])), None)
    placeholder = segs[at].strip("{}+") if at is not None else ""
    collection = segs[at - 1] if at else ""
    if placeholder == "name" and get.flat_path != get.path:
        # v1/{+name}: the collection is in the flat path (sites/{sitesId}/domains/{domainsId})
        flat = get.flat_path.split(":", 1)[0].split("/")
        collection = flat[-2] if len(flat) > 1 and flat[-1].startswith("{") else collection
    ctx = _Ctx(file, index, cfg, doc, cfg.resource, get.response, placeholder, "" if collection.startswith("{") else collection, get.path)
    owner = res
    if mc.create is not None and mc.create.resource is not None:  # a method of another resource (the parent's)
        owner = doc.resource(mc.create.resource, file, json_path("overrides" if index < 0 else "kinds", cfg.resource if index < 0 else index, "methods", "create", "resource"))
    create = _with_params(_pick(ctx, owner, "create", mc.create.method if mc.create else None), mc.create)
    if create is not None and owner is not res and mc.create is not None and mc.create.resource is not None:
        create = replace(create, owner=tuple(mc.create.resource.split(".")), location=method_location(doc, mc.create.resource, create.name))
    update = _with_params(_pick(ctx, res, "update", mc.update.method if mc.update else None), mc.update)
    delete = _with_params(_pick(ctx, res, "delete", mc.delete.method if mc.delete else None), mc.delete)
    read_list = None
    if mc.get is not None and mc.get.items:
        read_list = _read_list(pre, reader, get, mc.get.items, mc.get.match)
    view = _view(pre, reader, get, mc.get.view) if mc.get is not None and mc.get.view else ""
    raw_create = owner.methods[create.name] if create else None
    if create is not None and raw_create is not None:
        # what the runtime holds: the identity, the project (reconciler._values), its number
        known = placeholders(get.param_templates) | set(cfg.parents) | {"project", PROJECT_NUMBER}
        create = value_params(create, raw_create, known, set(mc.create.params) if mc.create else set())
    raw_update = res.methods[update.name] if update else None
    create_shape = configured_create(ctx, create, raw_create, mc.create) if mc.create else infer_create(ctx, create, raw_create)
    if isinstance(create_shape, CreateServiceAssigned):
        create_shape = with_finder(ctx, res, create_shape)
    route_methods: tuple[MethodIR, ...] = ()
    update_shape: UpdateShape
    if mc.update is not None and mc.update.shape == "routed":
        update_shape, route_methods = routed_update(file, index, cfg, doc, res, ctx.schema, mc.update)
        update = next((m for m in route_methods if m.name == (mc.update.method or "update")), route_methods[0])
    else:
        update_shape = configured_update(ctx, update, raw_update, mc.update) if mc.update else infer_update(ctx, update, raw_update)
    delete_shape = configured_delete(ctx, delete, mc.delete) if mc.delete is not None else infer_delete(ctx, delete)
    if isinstance(create_shape, NoCreate):
        create = None
    if isinstance(update_shape, NoUpdate):
        update = None
    if isinstance(delete_shape, NoDelete):
        delete = None
    found = [x for x in (get, create, update, delete, *route_methods) if x is not None]
    allow, allow_src = _allowlist(doc, ctx.schema, update, raw_update) if not route_methods else (None, None)
    return (
        Methods(
            get=get,
            create=create,
            update=update,
            delete=delete,
            create_shape=create_shape,
            update_shape=update_shape,
            delete_shape=delete_shape,
            update_allowlist=allow,
            update_allowlist_source=allow_src,
            custom_methods=tuple(sorted(set(res.methods) - {x.name for x in found})),
            operations=_operations(doc) if any(x.lro is not Lro.NONE for x in found) else (),
            read_list=read_list,
            view=view,
            # a Kind read through another method of the resource (a policy's getRule) or from
            # its list (a network's peerings) is a part of it: the policy is the resource's
            iam=iam_methods(doc, cfg.resource, res) if get.name == "get" and read_list is None else None,
            iam_paths=(res.methods['getIamPolicy'].path, res.methods['setIamPolicy'].path) if 'getIamPolicy' in res.methods and 'setIamPolicy' in res.methods else (),
            route_methods=route_methods,
            absent=tuple(sorted(mc.get.absent.items())) if mc.get is not None else (),
        ),
        ctx.schema,
    )


def iam_methods(doc: DiscoveryDoc, dotted: str, res: Resource) -> IamMethods | None:
    """The resource's policy methods as the contract spells them, read from the
    document: where the read asks for a policy version, whether the write wraps
    the policy and takes a mask, whether the Policy has audit configs. None
    without both methods (IAM Kinds then refuse the resource by name)."""
    get, put = res.methods.get("getIamPolicy"), res.methods.get("setIamPolicy")
    if get is None or put is None or put.request is None:
        return None
    query = {k for k, p in get.parameters.items() if p.location == "query"}
    version_param = next((q for q in ("options.requestedPolicyVersion", "optionsRequestedPolicyVersion") if q in query), "")
    get_req = doc.schemas.get(get.request.ref or "") if get.request is not None else None
    in_body = get_req is not None and "options" in (get_req.properties or {})
    set_req = doc.schemas.get(put.request.ref or "")
    set_props = set((set_req.properties or {}) if set_req is not None else {})
    wrapped = "policy" in set_props
    policy = doc.schemas.get(put.response.ref or "") if put.response is not None else None
    return IamMethods(
        get=_method(doc, dotted, "iamGet", "getIamPolicy", get).call(),
        set=_method(doc, dotted, "iamSet", "setIamPolicy", put).call(),
        version_param=version_param,
        version_in_body=in_body and not version_param,
        wrapped=wrapped,
        update_mask=wrapped and "updateMask" in set_props,
        audit_configs="auditConfigs" in ((policy.properties or {}) if policy is not None else {}),
    )
