"""Config Connector's older field names, moved to the spec fields they stand for.

A generated adapter lists its Kind's aliases (kccgen.contract.Alias, data
from the kind config). The reconciler canonicalizes the spec once, before
references, identity, diff or requests read it, so a manifest written with
``spec.routingMode`` sends exactly what one with
``spec.routingConfig.routingMode`` sends. No Kind has code of its own here.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from kccgen.contract import Adapter, Alias, Form

_DROP = object()  # an alias value mapped to "send nothing"


class AliasConflict(ValueError):
    """An alias and the field it stands for are both set (the CRD's CEL rule refuses it too)."""


def canonical_spec(a: Adapter, spec: Mapping[str, Any] | None) -> dict[str, Any]:
    """``spec`` with every alias replaced by its target field (a deep copy)."""
    out: dict[str, Any] = copy.deepcopy(dict(spec or {}))
    made: set[str] = set()  # lists the aliases made, which ``append`` aliases extend
    for alias in a.aliases:  # first: an alias may fill the message a form's true stands for
        _move(out, alias, "spec.", made)
    for form in a.forms:
        _reform(out, form, form.path.split("."), "spec.")
    return out


def _reform(node: dict[str, Any], form: Form, parts: list[str], where: str) -> None:
    """Config Connector's other form of a field (a JSON string, ``true``) as the API's."""
    head, step = parts[0].removesuffix("[]"), parts[0].endswith("[]")
    if head not in node:
        return
    if len(parts) > 1:
        value = node[head]
        for i, elem in enumerate(value if step and isinstance(value, list) else [value] if not step else []):
            if isinstance(elem, dict):
                _reform(elem, form, parts[1:], f"{where}{head}[{i}]." if step else f"{where}{head}.")
        return
    value = node[head]
    if form.form == "true" and isinstance(value, bool):
        if value:
            node[head] = {}
        else:
            del node[head]  # false: the message is not set
    elif form.form == "list" and isinstance(value, list):
        node[head] = {form.list_field: value}
    elif form.form == "json" and isinstance(value, str):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError as e:
            raise AliasConflict(f"{where}{head}: not JSON ({e.msg} at line {e.lineno} column {e.colno}); write the object, or JSON of it") from None
        node[head] = {form.list_field: parsed} if isinstance(parsed, list) and form.list_field else parsed


def _move(node: dict[str, Any], alias: Alias, where: str, made: set[str] | None = None) -> None:
    if "[]." in alias.field:  # into each element of a list: the target shares the path up to it
        head, _, rest = alias.field.partition("[].")
        elems = _walk(node, head.split(".")[:-1])
        items = elems.get(head.rsplit(".", 1)[-1]) if elems is not None else None
        for i, elem in enumerate(items if isinstance(items, list) else []):
            if isinstance(elem, dict):
                sub = dataclasses.replace(alias, field=rest, target=alias.target.removeprefix(f"{head}[]."))
                _move(elem, sub, f"{where}{head}[{i}].")
        return
    parts = alias.field.split(".")
    parent = _walk(node, parts[:-1])
    if parent is None or parts[-1] not in parent:
        return
    value = _convert(alias, parent.pop(parts[-1]), where)
    if value is _DROP or not alias.target:  # no target: accepted, sent nowhere
        return
    if alias.element:  # one element of the target list (its ``into`` field)
        value = [{alias.into: value} if alias.into else value]
    elif alias.into:  # one field of the target object: an ID as a reference's external
        value = {alias.into: value}
    for elem in value if alias.fixed and isinstance(value, list) else ():
        if isinstance(elem, dict):
            elem.update(alias.fixed)
    tparts = alias.target.split(".")
    holder = node
    for p in tparts[:-1]:
        nxt = holder.get(p)
        if nxt is None or nxt is True:  # true: Config Connector's form of the message the alias fills
            nxt = holder[p] = {}
        if not isinstance(nxt, dict):
            raise AliasConflict(f"{where}{alias.target}: {p} is not an object, cannot hold {where}{alias.field}")
        holder = nxt
    if tparts[-1] in holder and holder[tparts[-1]] is True and isinstance(value, dict):
        pass  # ``automatic: true`` beside ``auto: {...}``: the message true stands for, as the alias fills it
    elif tparts[-1] in holder:
        if alias.append and made is not None and alias.target in made and isinstance(value, list):
            holder[tparts[-1]].extend(value)  # after the elements an earlier alias put there
            return
        raise AliasConflict(f"{where}{alias.field} is Config Connector's name for {where}{alias.target}: set one of the two, not both")
    holder[tparts[-1]] = value
    if made is not None:
        made.add(alias.target)


def _walk(node: dict[str, Any], parts: list[str]) -> dict[str, Any] | None:
    for p in parts:
        nxt = node.get(p)
        if not isinstance(nxt, dict):
            return None
        node = nxt
    return node


def _convert(alias: Alias, value: Any, where: str) -> Any:
    if alias.values:
        for have, want in alias.values:
            if value == have and type(value) is type(have):
                return _DROP if want is None else _thawed(want)
        return value  # not in the map: the CRD's enum refuses it before we get here
    if alias.items and isinstance(value, dict):  # an object item: moves inside it
        for item in alias.items:
            _move(value, item, f"{where}{alias.field}.")
    if isinstance(value, list) and (alias.items or alias.keyed_by):
        for i, elem in enumerate(value):
            if isinstance(elem, dict):
                for item in alias.items:
                    _move(elem, item, f"{where}{alias.field}[{i}].")
        if alias.keyed_by:
            return _keyed(alias, value, where)
    return value


def _keyed(alias: Alias, value: list[Any], where: str) -> dict[str, Any]:
    """A list alias's elements as the map entries they stand for, keyed by their ``keyed_by`` field."""
    out: dict[str, Any] = {}
    for i, elem in enumerate(value):
        key = elem.pop(alias.keyed_by, None) if isinstance(elem, dict) else None
        if not isinstance(key, str) or not key:
            raise AliasConflict(f"{where}{alias.field}[{i}].{alias.keyed_by}: required, it keys the entry of {where}{alias.target}")
        if key in out:
            raise AliasConflict(f"{where}{alias.field}[{i}].{alias.keyed_by}: {key!r} is set twice")
        out[key] = elem
    return out


def _thawed(v: Any) -> Any:
    """An object target value, kept as (key, value) pairs in the adapter, as a dict."""
    return {k: _thawed(x) for k, x in v} if isinstance(v, tuple) else v
