"""Config Connector's ``spec.location``: one Kind over several location scopes.

A generated adapter with ``locations`` (kccgen.contract.Locations) stands for
several API collections: Config Connector's ComputeAddress is regional with
``location: us-central1`` and global with ``location: global``, where compute
has ``addresses`` and ``globalAddresses``, generated as ComputeAddress and
ComputeGlobalAddress. :func:`located` gives the object as the Kind that serves
its scope, so the reconciler runs that Kind's generated methods, identity and
mutability table unchanged; :func:`restored` puts the user's Kind and spelling
back on the result. No Kind needs code of its own.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kccgen.contract import Locations, location_scope, template_scope
from kccgen.runtime.adapter import adapter_for
from kccgen.runtime.identity import identity_for

_SCOPE_NAMES = {"global": "the global scope", "region": "a region", "zone": "a zone"}


class LocationError(ValueError):
    """A ``spec.location`` no generated Kind serves, or set beside the field it names."""


def _scope_field(kind: str) -> str:
    """The spec field holding the region or zone of ``kind``'s template ("" if global)."""
    _, param = template_scope(adapter_for(kind).template)
    if not param:
        return ""
    return next((f for p, f, _t in identity_for(kind).spec_fields if p == param), param)


def located(obj: Mapping[str, Any]) -> dict[str, Any] | None:
    """``obj`` as the Kind serving its ``spec.location`` (with the region or zone
    field filled in and ``location`` dropped); None when the Kind has no
    locations or the field is unset. Raises LocationError naming the field."""
    kind = str(obj.get("kind"))
    loc = adapter_for(kind).locations
    spec = obj.get("spec")
    if loc is None or not isinstance(spec, Mapping) or spec.get(loc.field) is None:
        return None
    value = spec[loc.field]
    if not isinstance(value, str) or not value.strip():
        raise LocationError(f"spec.{loc.field}: {value!r} is not a location (global, a region or a zone)")
    if loc.param and spec.get(loc.param) is not None:
        raise LocationError(f"spec.{loc.field} is Config Connector's name for spec.{loc.param}: set one of the two, not both")
    scope = location_scope(value)
    target = kind if scope == loc.scope else loc.kind_for(scope)
    if target is None:
        served = " or ".join(_SCOPE_NAMES[s] for s in loc.scopes())
        raise LocationError(f"spec.{loc.field}: {value!r} names {_SCOPE_NAMES[scope]}; a {kind} lives in {served}")
    out_spec = {k: copy.deepcopy(v) for k, v in spec.items() if k != loc.field}
    field = loc.param if target == kind else _scope_field(target)
    if field:
        out_spec[field] = value
    return {**copy.deepcopy(dict(obj)), "kind": target, "apiVersion": adapter_for(target).api_version, "spec": out_spec}


def restored(original: Mapping[str, Any], as_located: Mapping[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """``result`` (the reconciled ``as_located``) with the user's Kind, apiVersion and
    spec back; a spec the reconcile rewrote (state-into-spec merge) keeps its
    new fields, spelled with ``location`` again."""
    out = dict(result)
    out["kind"], out["apiVersion"] = original.get("kind"), original.get("apiVersion")
    loc: Locations | None = adapter_for(str(original.get("kind"))).locations
    assert loc is not None
    if out.get("spec") == as_located.get("spec"):
        out["spec"] = copy.deepcopy(original.get("spec"))
        return out
    spec = dict(out.get("spec") or {})
    kind = str(as_located.get("kind"))
    field = loc.param if kind == original.get("kind") else _scope_field(kind)
    if field:
        spec.pop(field, None)
    spec[loc.field] = (original.get("spec") or {}).get(loc.field)
    out["spec"] = spec
    return out
