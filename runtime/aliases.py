"""Config Connector's older field names, moved to the spec fields they stand for.

A generated adapter lists its Kind's aliases (kccgen.contract.Alias, data
from the kind config). The reconciler canonicalizes the spec once, before
references, identity, diff or requests read it, so a manifest written with
``spec.routingMode`` sends exactly what one with
``spec.routingConfig.routingMode`` sends. No Kind has code of its own here.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kccgen.contract import Adapter, Alias

_DROP = object()  # an alias value mapped to "send nothing"


class AliasConflict(ValueError):
    """An alias and the field it stands for are both set (the CRD's CEL rule refuses it too)."""


def canonical_spec(a: Adapter, spec: Mapping[str, Any] | None) -> dict[str, Any]:
    """``spec`` with every alias replaced by its target field (a deep copy)."""
    out: dict[str, Any] = copy.deepcopy(dict(spec or {}))
    made: set[str] = set()  # lists the aliases made, which ``append`` aliases extend
    for alias in a.aliases:
        _move(out, alias, "spec.", made)
    return out


def _move(node: dict[str, Any], alias: Alias, where: str, made: set[str] | None = None) -> None:
    parts = alias.field.split(".")
    parent = _walk(node, parts[:-1])
    if parent is None or parts[-1] not in parent:
        return
    value = _convert(alias, parent.pop(parts[-1]), where)
    if value is _DROP or not alias.target:
        return
    if alias.element:
        value = [{alias.into: value} if alias.into else value]
    for elem in value if alias.fixed and isinstance(value, list) else ():
        if isinstance(elem, dict):
            elem.update(alias.fixed)
    tparts = alias.target.split(".")
    holder = node
    for p in tparts[:-1]:
        nxt = holder.get(p)
        if nxt is None:
            nxt = holder[p] = {}
        if not isinstance(nxt, dict):
            raise AliasConflict(f"{where}{alias.target}: {p} is not an object, cannot hold {where}{alias.field}")
        holder = nxt
    if tparts[-1] in holder:
        if alias.append and made is not None and alias.target in made and isinstance(value, list):
            holder[tparts[-1]].extend(value)
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
                return _DROP if want is None else want
        return value  # not in the map: the CRD's enum refuses it before we get here
    if alias.items and alias.element and isinstance(value, dict):
        for item in alias.items:
            _move(value, item, f"{where}{alias.field}.")
    elif alias.items and isinstance(value, list):
        out = []
        for i, elem in enumerate(value):
            if isinstance(elem, dict):
                for item in alias.items:
                    _move(elem, item, f"{where}{alias.field}[{i}].")
            out.append(elem)
        return out
    return value
