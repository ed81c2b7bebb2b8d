"""What differs between the desired API payload and the live resource, field by field.

Only fields the user set are compared (state-into-spec absent); values that
are the same but spelled differently (durations, timestamps, references in
another accepted form, proto3 defaults left out) are no difference. Every
equivalence below is documented, not a field being skipped.
"""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from kccgen.contract import Adapter, FieldType, TypeKind
from kccgen.runtime.identity import IdentityError, identity_for
from kccgen.runtime.mutability import by_api_path, is_map
from kccgen.runtime.refs import references_of
from kccgen.runtime.secrets import api_paths


@functools.cache
def _ref_targets(kind: str) -> dict[str, tuple[tuple[str, ...], bool]]:
    """API path -> (Kinds it may name, a list of names). A oneOf field names one of
    several Kinds; a list of oneOf items compares as a list of names."""
    out: dict[str, tuple[tuple[str, ...], bool]] = {}
    for r in references_of(kind):
        if r.parent:
            continue
        path = r.api_path.replace("[]", "")
        targets, _ = out.get(path, ((), False))
        out[path] = ((*targets, r.target), r.many or (r.union and r.api_path.endswith("[]")))
    return out


# Values that are the same but spelled differently were diffs, so an up-to-date
# object was "updated" on every reconcile (found by the scenario tests).
_DURATION = re.compile(r"^(-?\d+(?:\.\d+)?)s$")
_INSTANT = re.compile(r"^(\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def _instant(v: str) -> tuple[datetime, Decimal] | None:
    """An RFC 3339 timestamp as (UTC second, fraction): nanoseconds and offsets kept exact."""
    m = _INSTANT.match(v)
    if not m:
        return None
    zone = "+00:00" if m.group(3) in ("Z", "z") else m.group(3)
    try:
        t = datetime.fromisoformat(m.group(1).replace("t", "T") + zone).astimezone(UTC)
    except ValueError:
        return None
    return t, Decimal(m.group(2) or "0")


def _same_scalar(d: Any, x: Any, typ: FieldType | None = None) -> bool:
    if isinstance(d, bool) or isinstance(x, bool):
        return d is x or d == x
    if (isinstance(d, int | float) and isinstance(x, str)) or (isinstance(x, int | float) and isinstance(d, str)):
        return str(d) == str(x)
    if isinstance(d, str) and isinstance(x, str) and d != x and typ is not None:
        fmt = typ.leaf().format
        # google-duration: "600s" and "600.000s" are one duration (APIs answer with
        # 0, 3, 6 or 9 fractional digits); timestamps: the same instant whatever
        # the offset or fractional digits ("...T00:00:00Z" == "...T00:00:00.000Z").
        if fmt == "google-duration" and (md := _DURATION.match(d)) and (mx := _DURATION.match(x)):
            return Decimal(md.group(1)) == Decimal(mx.group(1))
        if fmt in ("google-datetime", "date-time") and (td := _instant(d)) and (tx := _instant(x)):
            return td == tx
    return bool(d == x)


def _is_zero(v: Any, typ: FieldType | None = None) -> bool:
    """The proto3 default of a scalar or list: false, 0, "", [], and an enum's
    ``*_UNSPECIFIED`` (objects: see ``diff``)."""
    if isinstance(v, str) and typ is not None and typ.kind is TypeKind.ENUM:
        return v == "" or v.endswith("_UNSPECIFIED")
    if isinstance(v, str) and typ is not None and typ.leaf().format in ("int64", "uint64"):
        return v.strip() in ("", "0")
    return v is False or v == "" or v == [] or (isinstance(v, int | float) and not isinstance(v, bool) and v == 0)


def diff(desired: Any, actual: Any, a: Adapter, check_mutability: bool) -> list[tuple[str, Any, Any]]:
    """Fields the user set whose live value differs: (api path, desired, actual).

    Objects compare only the keys the user set (state-into-spec absent); lists,
    maps (labels: a removed key is a change) and scalars compare whole;
    references compare canonically (compute answers full URLs), in list items
    too; a reorder of a Refs list is not a change; input-only fields, which GET
    never returns, are never compared, nor secrets (``Adapter.secrets``, ``secret_objects``) it leaves out. An absent live value equals a desired
    zero value: proto3 JSON (and compute's JSON) leave out fields holding their
    default (recorded traffic: KMS omits ``importOnly: false``, compute
    ``enableUlaInternalIpv6: false``). Durations and timestamps compare as values.
    """
    refs = _ref_targets(a.kind)
    rows = by_api_path(a.kind)
    # a secret GET does not return (a password) is no change: it cannot be compared
    secret = api_paths(a)
    out: list[tuple[str, Any, Any]] = []

    def canon(targets: tuple[str, ...], v: Any) -> Any:
        for target in targets:
            try:
                return identity_for(target).normalize(str(v))
            except IdentityError:
                continue
        return v

    def zero(d: Any, path: str) -> bool:
        """An unset live value is this: {} for a map, an object of zero fields."""
        row = rows.get(path)
        if isinstance(d, dict):
            return not d if is_map(row) else all(zero(v, f"{path}.{k}" if path else k) for k, v in d.items())
        return _is_zero(d, row.type if row else None)

    def same(d: Any, x: Any, path: str) -> bool:
        """Whether the live value x already is what d asks for; path: API path without []."""
        row = rows.get(path)
        if row is not None and not row.readable:
            return True
        if x is None and zero(d, path):
            return True
        if path in refs:
            target, many = refs[path]
            if many and isinstance(d, list):
                return isinstance(x, list) and sorted(str(canon(target, v)) for v in d) == sorted(str(canon(target, v)) for v in x)
            return bool(canon(target, d) == canon(target, x))
        if isinstance(d, dict):
            if not isinstance(x, dict):
                return False
            if is_map(row) and set(d) != set(x):
                return False
            child = f"{path}.*" if is_map(row) else None
            return all(same(v, x.get(k), child or (f"{path}.{k}" if path else k)) for k, v in d.items())
        if isinstance(d, list):
            return isinstance(x, list) and len(d) == len(x) and all(same(i, j, path) for i, j in zip(d, x, strict=True))
        return _same_scalar(d, x, row.type if row else None)

    def walk(d: Any, x: Any, path: str) -> None:
        row = rows.get(path)
        if (row is not None and not row.readable) or (path in secret and x is None):
            return
        if isinstance(d, dict) and path not in refs and not is_map(row) and isinstance(x, dict):
            for k, v in d.items():
                walk(v, x.get(k), f"{path}.{k}" if path else k)
            return
        if not same(d, x, path):
            out.append((path, d, x))

    walk(desired, actual, "")
    return out
