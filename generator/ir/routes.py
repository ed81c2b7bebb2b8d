"""IR stage: an update split over verbs (kind config ``update: {shape: routed}``).

GKE changes a cluster one field per call: ``update`` with one ``desired…``
field of ``ClusterUpdate``, or a ``set…`` verb (``setResourceLabels`` with the
label fingerprint). Each route names a field of the resource, the method
changing it and where its value goes in the request; every name is checked
against the document here, so a route to a method, request field or resource
field the document lacks fails generation with its file and JSON path.
"""

from __future__ import annotations

from kccgen.contract import Route, UpdateRouted
from kccgen.discovery.document import DiscoveryDoc, JsonSchema, Method, Resource
from kccgen.discovery.errors import SpecError, json_path
from kccgen.generator.ir.model import MethodIR
from kccgen.generator.spec.kinds import KindConfig, UpdateMethod


def _node(doc: DiscoveryDoc, schema: str, dotted: str) -> JsonSchema | None:
    """The property at a dotted path of ``schema`` (through $refs); None if absent."""
    node: JsonSchema | None = doc.schemas.get(schema)
    for part in dotted.split("."):
        if node is not None and node.ref:
            node = doc.schemas.get(node.ref)
        node = node.properties.get(part) if node is not None else None
    return node


def _shape(doc: DiscoveryDoc, n: JsonSchema | None) -> tuple[object, ...]:
    """What a value must look like at ``n``: its $ref, or its type down through lists and maps."""
    if n is None:
        return ()
    if n.ref:
        return ("ref", n.ref)
    if n.format in _INTEGERS:  # an int32 and an int64 (its JSON a string) carry one number
        return ("integer",)
    inner = n.items if n.type == "array" else n.additional_properties if n.type == "object" and n.additional_properties is not None else None
    return (n.type, n.format or "", _shape(doc, inner) if inner is not None else ())


_INTEGERS = frozenset({"int32", "int64", "uint32", "uint64"})


def _write_only(n: JsonSchema) -> bool:
    return bool(n.read_only) or (n.description or "").lstrip().startswith(("Output only", "[Output only]"))


def _method_ir(doc: DiscoveryDoc, dotted: str, name: str, m: Method) -> MethodIR:
    from kccgen.generator.ir.methods import _method  # methods imports this module

    return _method(doc, dotted, "update", name, m)


def routed_update(
    file: str, index: int, cfg: KindConfig, doc: DiscoveryDoc, res: Resource, schema: str, u: UpdateMethod
) -> tuple[UpdateRouted, tuple[MethodIR, ...]]:
    """The routes (explicit first, in order; then those read off ``desired``, by
    field) and the methods they call."""

    def error(where: tuple[str | int, ...], msg: str) -> SpecError:
        at = ("kinds", index) if index >= 0 else ("overrides", cfg.resource)  # a derived Kind's settings are its override
        return SpecError(file, json_path(*at, "methods", "update", *where), f"{cfg.kind}: {msg}")

    def method(name: str, where: tuple[str | int, ...]) -> Method:
        if name not in res.methods:
            raise error((*where, "method"), f"{doc.key} {cfg.resource} has no method {name!r} (have: {', '.join(sorted(res.methods))})")
        m = res.methods[name]
        if m.request is None or not m.request.ref:
            raise error((*where, "method"), f"{m.id} takes no request body to carry a value")
        return m

    routes: list[Route] = []
    used: list[MethodIR] = []
    for i, r in enumerate(u.routes):
        if r.by_value:
            # the desired value picks the method (a secret version's state: enable / disable)
            have = _node(doc, schema, r.field)
            if have is None:
                raise error(("routes", i, "field"), f"{schema} has no field {r.field!r}")
            if r.method or r.into or r.write_only or r.tokens:
                raise error(("routes", i, "byValue"), "byValue names a method per value: no method, into, tokens or writeOnly beside it")
            verbs = []
            for value, name in sorted(r.by_value.items()):
                if have.enum and value not in have.enum:
                    raise error(("routes", i, "byValue", value), f"{value!r} is not a value of {schema}.{r.field} (have: {', '.join(have.enum)})")
                mi = _method_ir(doc, cfg.resource, name, method(name, ("routes", i, "byValue", value)))
                verbs.append((value, mi.call()))
                used.append(mi)
            routes.append(Route(r.field, verbs[0][1], "", verbs=tuple(verbs)))
            continue
        if r.method is None:
            raise error(("routes", i, "method"), "a route names its method (or byValue, a method per value)")
        m = method(r.method, ("routes", i))
        request = m.request.ref if m.request is not None and m.request.ref else ""
        have = _node(doc, schema, r.field)
        want = _node(doc, request, r.into)
        if want is None:
            raise error(("routes", i, "into"), f"{request} has no field {r.into!r}")
        if r.write_only:
            # a field of the request only: the Kind's spec gets it (generator.ir.build.create_view)
            if have is not None or "." in r.field or "." in r.into:
                raise error(("routes", i, "field"), f"a writeOnly field is a top-level field of {request} and none of {schema}: {r.field!r}")
            if not r.reason:
                raise error(("routes", i, "reason"), "a writeOnly route says why the field is not the resource's")
            if r.create_as is not None and _shape(doc, _node(doc, schema, r.create_as)) != _shape(doc, want):
                raise error(("routes", i, "createAs"), f"{schema} has no field {r.create_as!r} taking a {request}.{r.into} value")
        elif r.create_as is not None:
            raise error(("routes", i, "createAs"), "createAs is for a writeOnly route")
        else:
            if have is None:
                raise error(("routes", i, "field"), f"{schema} has no field {r.field!r}")
            if _shape(doc, want) != _shape(doc, have):
                raise error(("routes", i, "into"), f"{request}.{r.into} does not take a {schema}.{r.field} value")
        for into, live in sorted(r.tokens.items()):
            if _node(doc, request, into) is None or _node(doc, schema, live) is None:
                raise error(("routes", i, "tokens"), f"token {into!r} <- {live!r}: not a field of {request} and of {schema}")
        mi = _method_ir(doc, cfg.resource, r.method, m)
        routes.append(Route(r.field, mi.call(), r.into, tuple(sorted(r.tokens.items())), r.write_only, r.create_as or ""))
        used.append(mi)
    explicit = {r.field for r in routes}
    if u.desired is not None:
        d = u.desired
        m = method(d.method, ("desired",))
        request = m.request.ref if m.request is not None and m.request.ref else ""
        holder = _node(doc, request, d.into)
        target = doc.schemas.get(holder.ref) if holder is not None and holder.ref else None
        if target is None:
            raise error(("desired", "into"), f"{request} has no object field {d.into!r}")
        props = doc.schemas[schema].properties
        unknown = sorted(set(d.skip) - set(props))
        if unknown:
            raise error(("desired", "skip"), f"{schema} has no field {unknown[0]!r}")
        mi = _method_ir(doc, cfg.resource, d.method, m)
        call = mi.call()
        found = []
        for name, p in sorted(target.properties.items()):
            if not name.startswith(d.prefix) or len(name) == len(d.prefix):
                continue
            rest = name[len(d.prefix):]
            field = rest[0].lower() + rest[1:]
            have = props.get(field)
            if have is None or field in explicit or field in d.skip or _write_only(have) or _shape(doc, have) != _shape(doc, p):
                continue
            found.append(Route(field, call, f"{d.into}.{name}"))
        if not found:
            raise error(("desired", "prefix"), f"{request}.{d.into} has no field {d.prefix}<Field> for a field of {schema}")
        routes += found
        used.append(mi)
    if not routes:
        raise error(("routes",), "a routed update names at least one route")
    return UpdateRouted(tuple(routes)), tuple({m.name: m for m in used}.values())
