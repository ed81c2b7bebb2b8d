"""Fields GET never returns that a routed update can change (``Route.write_only``).

GKE's node pool size is its instance groups', not a field of the NodePool: the
spec's ``nodeCount`` is sent through ``setSize`` and never read back. The
value last applied is kept in the object's ``kccgen.dev/applied-write-only``
annotation (JSON), so a spec that differs from it is one call, and an equal
one none. An object without the annotation (acquired, or applied before it
existed) sends the value once: the service may hold anything.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kccgen.contract import APPLIED_ANNOTATION, Adapter, write_only_routes


def _applied(obj: Mapping[str, Any]) -> dict[str, Any] | None:
    raw = ((obj.get("metadata") or {}).get("annotations") or {}).get(APPLIED_ANNOTATION)
    try:
        got = json.loads(raw) if raw else None
    except ValueError:
        return None  # hand-edited into nonsense: unknown, so sent again
    return got if isinstance(got, dict) else None


def pending(obj: Mapping[str, Any], a: Adapter, desired: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """(field, wanted, last applied) for each write-only field the spec sets to another value."""
    applied = _applied(obj)
    out = []
    for r in write_only_routes(a.update):
        want = desired.get(r.field)
        if want is not None and (applied is None or applied.get(r.field) != want):
            out.append((r.field, want, None if applied is None else applied.get(r.field)))
    return out


def record(obj: dict[str, Any], a: Adapter, desired: Mapping[str, Any]) -> None:
    """Keep the write-only values ``desired`` holds as the ones applied (none: no annotation)."""
    routes = write_only_routes(a.update)
    if not routes:
        return
    values = {r.field: desired[r.field] for r in routes if desired.get(r.field) is not None}
    anns = obj.setdefault("metadata", {}).setdefault("annotations", {})
    if values:
        anns[APPLIED_ANNOTATION] = json.dumps(values, sort_keys=True, separators=(",", ":"))
    else:
        anns.pop(APPLIED_ANNOTATION, None)
