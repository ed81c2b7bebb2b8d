"""IR stage: per field path, what the runtime may compare, change and enforce.

For every spec and status path of a Kind (nested and list paths included)
this records the behaviours with their provenance, whether the update method
can change the field (and why), whether GET returns it, and whether it is
part of the identity. Immutability and input-only are inherited downwards:
a field inside an immutable message cannot change either.
"""

from __future__ import annotations

import re
from typing import assert_never

from kccgen.contract import (
    FieldType,
    FingerprintGuard,
    MetagenerationGuard,
    NoGuard,
    NoUpdate,
    TypeKind,
    UpdateEntry,
    UpdateMaskInBody,
    UpdateMaskInQuery,
    UpdateMerge,
    UpdateReplace,
    UpdateRouted,
    route_of,
)
from kccgen.discovery.behaviours import Behaviour as B
from kccgen.discovery.behaviours import Fact
from kccgen.generator.ir.model import (
    FieldIR,
    Identity,
    Methods,
    ModelSet,
    MutabilityIR,
    ObjectIR,
    TypeIR,
)


def field_type(t: TypeIR) -> FieldType:
    return FieldType(TypeKind(t.kind), t.format, field_type(t.item) if t.item is not None else None)


def type_label(t: TypeIR) -> str:
    if t.kind == "array" and t.item is not None:
        return f"array<{type_label(t.item)}>"
    if t.kind == "map" and t.item is not None:
        return f"map<{type_label(t.item)}>"
    if t.kind == "string" and t.format:
        return f"string({t.format})"
    return t.kind


def _update_source(m: Methods, api_path: str) -> str:
    u = m.update
    assert u is not None
    shape = m.update_shape
    match shape:
        case UpdateMaskInQuery(mask_param=mask):
            return f"{u.id} ({u.http_method}) with {mask}={api_path}"
        case UpdateMaskInBody(resource_field=field, mask_field=mask):
            return f"{u.id} ({u.http_method}) body {u.request}.{field} with {mask}={api_path}"
        case UpdateMerge(guard=guard) | UpdateReplace(guard=guard):
            match guard:
                case FingerprintGuard(field=token):
                    extra = f", {token} must match"
                case MetagenerationGuard(param=param):
                    extra = f", {param}"
                case NoGuard():
                    extra = ""
                case _:
                    assert_never(guard)
            return f"{u.id} ({u.http_method}) sends the whole resource{extra}"
        case UpdateEntry(entry=entry):
            return f"{u.id} ({u.http_method}) sends the parent's whole {entry.field} list with this entry changed"
        case UpdateRouted():
            r = route_of(shape, api_path)
            assert r is not None
            if r.verbs:  # the value picks the method
                ids = {x.name: x.id for x in m.route_methods}
                return "by value: " + ", ".join(f"{v} {ids.get(c.method, c.method)}" for v, c in r.verbs)
            via = next((x for x in m.route_methods if x.name == r.call.method), u)
            return f"{via.id} ({via.http_method}) with {via.request}.{r.into}" + (f", {', '.join(t for t, _ in r.tokens)} from GET" if r.tokens else "")
        case NoUpdate():
            raise AssertionError("no update method")
        case _:
            assert_never(shape)


# "updated using setPrivateIpGoogleAccess", "expanded after creation using
# expandIpCidrRange" (compute wraps text and sometimes loses the space).
_OTHER_METHOD = re.compile(r"\b(?:updated|expanded|changed|modified)\s+(?:after\s+creation\s+)?using\s*([a-z][A-Za-z]+)")


def _other_method(description: str, methods: Methods) -> tuple[str, str] | None:
    """(method id, quoted phrase) when a description says another method changes the field."""
    assert methods.update is not None
    for m in _OTHER_METHOD.finditer(description or ""):
        name = m.group(1)
        if name != methods.update.name and name in methods.custom_methods:
            return methods.update.id.rsplit(".", 1)[0] + "." + name, " ".join(m.group(0).split())
    return None


def _allowed(api_path: str, allow: tuple[str, ...]) -> bool:
    """In the allow-list: the path itself, a field under it, or a parent holding one."""
    p = api_path.replace("[]", "")
    return any(p == a or p.startswith(a + ".") or a.startswith(p + ".") for a in allow)


def _child(t: TypeIR) -> tuple[str | None, str]:
    """Object class reachable through arrays/maps, and the path suffix to it."""
    suffix = ""
    while t.kind in ("array", "map") and t.item is not None:
        if t.kind == "array":
            suffix += "[]"
        else:
            suffix += ".*"
        t = t.item
    return (t.ref if t.kind == "object" else None), suffix


def build_mutability(
    kind: str,
    resource: str,
    models: ModelSet,
    spec: ObjectIR,
    observed: ObjectIR,
    methods: Methods,
    identity: Identity,
    ref_classes: frozenset[str],
) -> tuple[MutabilityIR, ...]:
    rows: list[MutabilityIR] = []
    id_fields = {p.krm_field for p in identity.params if p.covered_by is None} | {p.beside for p in identity.params if p.beside} | set(identity.parent_fields)

    def row(
        f: FieldIR, path: str, api_path: str | None, in_status: bool, inherited: tuple[Fact, ...], identity_field: bool
    ) -> tuple[Fact, ...]:
        facts = tuple(sorted(set(f.facts) | set(inherited)))
        beh = {x.behaviour for x in facts}
        if in_status:
            updatable, usrc = False, "status: written by the controller from GET"
        elif identity_field:
            updatable, usrc = False, f"identity ({identity.template})"
        elif methods.update is None:
            updatable, usrc = False, f"no update method for {resource}"
        elif B.OUTPUT_ONLY in beh:
            updatable, usrc = False, "output-only"
        elif B.IMMUTABLE in beh:
            why = next(x.source for x in facts if x.behaviour is B.IMMUTABLE)
            updatable, usrc = False, f"immutable ({why})"
        elif (other := _other_method(f.description, methods)) is not None:
            method, phrase = other
            updatable, usrc = False, f"changed through {method}, not {methods.update.id} (description:{phrase!r})"
        elif isinstance(methods.update_shape, UpdateRouted) and route_of(methods.update_shape, api_path or "") is None:
            routed = sorted(r.field for r in methods.update_shape.routes if r.field.startswith((api_path or "\0") + "."))
            updatable, usrc = False, (f"no route: only {', '.join(routed)} under it have one" if routed else "no route: no method of the API changes it")
        elif methods.update_allowlist is not None and not _allowed(api_path or "", methods.update_allowlist):
            updatable, usrc = False, f"not in the update allow-list ({methods.update_allowlist_source})"
        else:
            updatable, usrc = True, _update_source(methods, api_path or f.name)
        if B.INPUT_ONLY in beh:
            readable, rsrc = False, f"input-only ({next(x.source for x in facts if x.behaviour is B.INPUT_ONLY)}): GET never returns it"
        elif api_path is None:
            readable, rsrc = False, "KRM-only field: not part of the API resource"
        else:
            readable, rsrc = True, f"{methods.get.id} returns {api_path}"
        rows.append(
            MutabilityIR(
                path=path,
                api_path=api_path,
                type=type_label(f.type),
                field_type=field_type(f.type),
                behaviours=tuple(sorted(b.value for b in beh)),
                facts=facts,
                identity=identity_field,
                updatable=updatable,
                updatable_source=usrc,
                readable=readable,
                readable_source=rsrc,
            )
        )
        return tuple(x for x in facts if x.behaviour in (B.IMMUTABLE, B.INPUT_ONLY))

    def walk(obj: ObjectIR, prefix: str, api_prefix: str, in_status: bool, inherited: tuple[Fact, ...], stack: tuple[str, ...]) -> None:
        for f in obj.fields:
            path = f"{prefix}.{f.name}"
            top = prefix in ("spec", "status.observedState")
            identity_field = top and not in_status and f.name in id_fields
            api_name = f.api_name
            api_path = None if api_name is None else (f"{api_prefix}.{api_name}" if api_prefix else api_name)
            passed = row(f, path, api_path, in_status, inherited, identity_field)
            child, suffix = _child(f.type)
            if child is None or child in ref_classes or child in stack:
                continue
            inherit = tuple(Fact(x.behaviour, f"inherited from {path} ({x.source})") for x in passed if not x.source.startswith("inherited"))
            inherit += tuple(x for x in passed if x.source.startswith("inherited"))
            walk(
                models.object(child),
                path + suffix,
                (api_path + suffix) if api_path is not None else "",
                in_status,
                inherit,
                (*stack, child),
            )

    walk(spec, "spec", "", False, (), (spec.name,))
    walk(observed, "status.observedState", "", True, (), (observed.name,))
    return tuple(rows)
