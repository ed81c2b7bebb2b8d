"""The registry of generated adapters, and the mapping between spec and API payloads.

An adapter is data: a kccgen.contract.Adapter (which Discovery methods, how
their parameters are filled from the identity, how the ID and the update mask
travel, the LRO style) plus the tables of the Kind's reference and mutability
modules. The mapping from spec to API payload is written once here; the
requests are built in kccgen.runtime.requests.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import functools
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from kccgen.contract import Adapter, Canonical, PolicyAdapter, template_value
from kccgen.runtime.identity import identity_for
from kccgen.runtime.refs import RefField, bare_external, choices_of, iter_field, references_of
from kccgen.runtime.requests import with_path

_ADAPTERS: dict[str, Adapter] = {}
_POLICIES: dict[str, PolicyAdapter] = {}


def register_adapter(spec: Adapter) -> None:
    _ADAPTERS[spec.kind] = spec


def register_policy_adapter(spec: PolicyAdapter) -> None:
    _POLICIES[spec.kind] = spec


def _load(kind: str) -> None:
    if kind not in _ADAPTERS and kind not in _POLICIES:
        import importlib

        from kccgen.runtime.registry import module_for

        importlib.import_module(module_for(kind, "_adapter"))


def adapter_for(kind: str) -> Adapter:
    """The Kind's resource adapter; KeyError for an IAM Kind (``policy_for``), which has none."""
    _load(kind)
    if kind in _POLICIES:
        raise KeyError(f"{kind} is an IAM Kind: it manages a policy, not a resource")
    return _ADAPTERS[kind]


def policy_for(kind: str) -> PolicyAdapter | None:
    """The IAM Kind's adapter, or None for a Kind that manages a resource."""
    try:
        _load(kind)
    except KeyError:
        return None
    return _POLICIES.get(kind)


# --- spec <-> API ------------------------------------------------------------------


def _split(path: str) -> list[str]:
    return path.split(".")


def rename_at(obj: Any, path: str, to_path: str, convert: Any) -> None:
    """Replace the field at ``path`` (with [] steps) by ``to_path``'s last key,
    converting the value; the two paths differ in their last key only (an API
    field and the KRM field standing for it, either way)."""
    kparts, aparts = _split(path), _split(to_path)

    def walk(node: Any, kp: list[str], ap: list[str]) -> None:
        if not isinstance(node, dict):
            return
        head = kp[0]
        key = head.removesuffix("[]")
        if len(kp) == 1:
            if key in node:
                value = node.pop(key)
                node[ap[0].removesuffix("[]")] = convert(value)
            return
        child = node.get(key)
        if head.endswith("[]") and isinstance(child, list):
            for item in child:
                walk(item, kp[1:], ap[1:])
        else:
            walk(child, kp[1:], ap[1:])

    walk(obj, kparts, aparts)


def ref_value_to_api(ref: RefField, external: str) -> str:
    """How the API spells a reference: the canonical externalRef unless the field says otherwise."""
    if ref.value_of is not None:  # a value, not a name (RefField.value_of)
        return external
    if ref.api_format and "{}" in ref.api_format:  # the name behind a prefix: pubsub.googleapis.com/{}
        return ref.api_format.replace("{}", external)
    if ref.api_format:
        if "/" not in external and bare_external(ref, {"external": external}):
            return external  # the short name the API keeps, given so
        params = identity_for(ref.target).parse(external)
        return ref.api_format.format(**params)
    return external


def canonical_value(c: Canonical, value: Any, values: Mapping[str, str] | None) -> Any:
    """``value`` as the service spells it: its case, and a short name expanded
    (with the identity's ``values``; left short when one is missing)."""
    if not isinstance(value, str) or not value:
        return value
    if c.case == "upper":
        value = value.upper()
    elif c.case == "lower":
        value = value.lower()
    if c.expand and "/" not in value and values is not None:
        with contextlib.suppress(KeyError):
            value = c.expand.replace("{}", "{__value__}").format_map({**values, "__value__": value})
    return value


def spec_to_api(spec: dict[str, Any], adapter: Adapter, resolved: dict[str, Any], values: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The API payload a spec asks for. ``resolved``: concrete spec path -> externalRef(s),
    or a sensitive field's string (kccgen.runtime.secrets);
    ``values``: the identity's values, to expand short names (Adapter.canonical)."""
    # FIX: a null in the spec (``labels:`` with nothing after it) is an unset
    # field, as the Kubernetes API server prunes it; it was sent as null, which a
    # merge patch (storage, compute, dns) reads as "delete this field".
    out: dict[str, Any] = _drop_nulls(copy.deepcopy({k: v for k, v in spec.items() if k not in adapter.krm_only}))
    for ref in references_of(adapter.kind):
        if ref.parent or ref.union or ref.path in adapter.krm_only:
            continue
        for where, _ in list(iter_field(spec, ref.path)):
            ext = resolved.get(f"spec.{where}")
            if ext is None:
                continue
            api_value: Any = [ref_value_to_api(ref, e) for e in ext] if isinstance(ext, list) else ref_value_to_api(ref, ext)
            _set_concrete(out, where, ref.api_path.rsplit(".", 1)[-1].removesuffix("[]"), api_value)
    for group in choices_of(adapter.kind).values():
        _set_choices(spec, out, group, resolved)
    for path in adapter.secrets:
        # the string a {value | valueFrom} object stands for; unresolved (a caller that
        # read no Secret: the webhook's live check) it is left out, never sent as the object
        last = path.rsplit(".", 1)[-1].removesuffix("[]")
        for where, _ in list(iter_field(spec, path)):
            with contextlib.suppress(KeyError, IndexError, TypeError):
                if f"spec.{where}" in resolved:
                    text = resolved[f"spec.{where}"]
                    if path in adapter.byte_secrets:  # JSON carries bytes base64-encoded
                        text = base64.b64encode(str(text).encode()).decode()
                    _replace_concrete(out, where, last, text)
                else:
                    node, key, pos = _concrete(out, where)
                    if pos is None:
                        node.pop(key, None)
    for so in adapter.secret_objects:
        # a Secret's keys in place of its secretRef; never the reference itself
        for where, _ in list(iter_field(spec, so.field)):
            with contextlib.suppress(KeyError, IndexError, TypeError):
                node, key, pos = _concrete(out, where)
                target = node[key] if pos is None else node[key][pos]
                if isinstance(target, dict) and target.pop(so.ref, None) is not None:
                    for sub, _ in so.keys:
                        if f"spec.{where}.{sub}" in resolved:
                            target[sub] = resolved[f"spec.{where}.{sub}"]
    for p in adapter.int64_paths:
        map_leaf(out, _split(p), _to_str)
    for c in adapter.canonical:
        if c.field in out:
            out[c.field] = canonical_value(c, out[c.field], values)
        elif "." in c.field:  # below a top-level field: {} steps into a map's values, [] into a list's
            _map_path(out, c.field.split("."), functools.partial(canonical_value, c, values=values))
    if adapter.fixed and values is not None:
        # fields the identity fills (servicenetworking's network): what the API takes, from the identity
        for path, template in adapter.fixed:
            out = with_path(out, path, template_value(template, dict(values)))
    return out


def _map_path(node: Any, parts: list[str], fn: Callable[[Any], Any]) -> None:
    head = parts[0]
    key = head.removesuffix("[]").removesuffix("{}")
    if not isinstance(node, dict) or key not in node:
        return
    if len(parts) == 1:
        node[key] = fn(node[key])
        return
    child = node[key]
    kids = child if head.endswith("[]") and isinstance(child, list) else child.values() if head.endswith("{}") and isinstance(child, dict) else [child]
    for kid in kids:
        _map_path(kid, parts[1:], fn)


def _set_choices(spec: Mapping[str, Any], out: dict[str, Any], refs: tuple[RefField, ...], resolved: Mapping[str, Any]) -> None:
    """A oneOf field's object (each item's, for a list) replaced by what it names:
    the resolved reference of its key, or a literal key's string. The KRM field
    may be renamed (``ipAddress`` for ``IPAddress``): the API key takes its place."""
    container = refs[0].choice[0]
    api_key = refs[0].api_path.rsplit(".", 1)[-1].removesuffix("[]")
    if not container:
        # flattened: the keys are spec fields themselves (Project's folderRef, organizationRef)
        for ref in refs:
            out.pop(ref.choice[1], None)
            ext = resolved.get(f"spec.{ref.choice[1]}")
            if ext is not None:
                out[api_key] = ref_value_to_api(ref, str(ext))
        for key in refs[0].literals:
            out.pop(key, None)
            if isinstance(spec.get(key), str):
                out[api_key] = spec[key]
        return
    for where, choice in list(iter_field(spec, container)):
        if not isinstance(choice, Mapping):
            continue
        value: Any = None
        for ref in refs:
            key = ref.choice[1]
            ext = resolved.get(f"spec.{where}.{key}")
            if key in choice and ext is not None:
                value = ref_value_to_api(ref, str(ext))
        for key in refs[0].literals:
            if isinstance(choice.get(key), str):
                value = choice[key]
        if value is not None:
            _replace_concrete(out, where, api_key, value)


def _replace_concrete(obj: dict[str, Any], where: str, api_key: str, value: Any) -> None:
    """Set the concrete KRM path ``where`` (a.b[1] or a.b) to ``value``, its last
    key spelled ``api_key``."""
    node, last, pos = _concrete(obj, where)
    if pos is None:
        node.pop(last, None)
        node[api_key] = value
    else:
        items = node.pop(last)
        items[pos] = value
        node[api_key] = items


def _drop_nulls(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _drop_nulls(v) for k, v in node.items() if v is not None}
    if isinstance(node, list):
        return [_drop_nulls(v) for v in node]
    return node


def _concrete(obj: dict[str, Any], where: str) -> tuple[Any, str, int | None]:
    """The node holding the last step of a concrete path (``a.b[1].c``), that
    step's key and its list index (None for a plain key)."""
    parts: list[tuple[str, int | None]] = []
    for seg in where.split("."):
        if "[" in seg:
            name, index = seg[:-1].split("[")
            parts.append((name, int(index)))
        else:
            parts.append((seg, None))
    node: Any = obj
    for name, pos in parts[:-1]:
        node = node[name] if pos is None else node[name][pos]
    return node, parts[-1][0], parts[-1][1]


def _set_concrete(obj: dict[str, Any], where: str, api_key: str, value: Any) -> None:
    """Replace the concrete KRM ref path (a.b[1].topicRef) by the API key with value."""
    node, last, _ = _concrete(obj, where)
    node.pop(last, None)
    node[api_key] = value


def map_leaf(node: Any, parts: list[str], fn: Callable[[Any], Any]) -> None:
    """Apply ``fn`` to the value at ``parts`` (``[]`` steps into lists): to a
    scalar, to each item of a list, to each value of a map."""
    if not parts or not isinstance(node, dict):
        return
    head = parts[0].removesuffix("[]")
    if head not in node:
        return
    if len(parts) == 1:
        v = node[head]
        if isinstance(v, list):
            node[head] = [fn(x) for x in v]
        elif isinstance(v, dict):
            if parts[0] == head:
                node[head] = {k: fn(x) for k, x in v.items()}
        else:
            node[head] = fn(v)
        return
    child = node[head]
    for item in child if isinstance(child, list) else [child]:
        map_leaf(item, parts[1:], fn)


def _to_str(v: Any) -> Any:
    """An int64 as proto3 JSON spells it."""
    return str(v) if isinstance(v, int) and not isinstance(v, bool) else v


def leaves(obj: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted path, value) for every leaf; lists and maps of scalars are leaves."""
    if (isinstance(obj, dict) and obj and not all(not isinstance(v, dict | list) for v in obj.values())) or (isinstance(obj, dict) and not prefix):
        for k, v in obj.items():
            yield from leaves(v, f"{prefix}.{k}" if prefix else k)
    else:
        yield prefix, obj
