"""Externally managed fields (seeds/manage-fields-externally.txt): what a reconcile enforces.

``cnrm.cloud.google.com/state-into-spec: absent`` (the default) leaves fields
the user did not set alone; ``merge`` writes the service's values of unset
readable fields into spec on the first reconcile and enforces them after; with
server-side apply, ``metadata.managedFields`` says which fields the user owns,
and fields only this controller owns take the live value.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kccgen.contract import Adapter, Behaviour
from kccgen.runtime.mutability import mutability_of
from kccgen.runtime.refs import references_of
from kccgen.runtime.secrets import without_secrets

ANN_STATE_INTO_SPEC = "cnrm.cloud.google.com/state-into-spec"
# The spec fields ``merge`` took from GCP: a later manifest that leaves them out
# keeps them (as kubectl apply keeps fields it never set), so they stay enforced.
ANN_MERGED = "kccgen.dev/merged-fields"


def note_merged(obj: dict[str, Any], user_spec: Mapping[str, Any]) -> None:
    """Record which fields of ``obj``'s spec merge added to what the user wrote."""
    anns = (obj.get("metadata") or {}).get("annotations") or {}
    if str(anns.get(ANN_STATE_INTO_SPEC, "absent")).lower() != "merge":
        return
    added = {k for k in obj.get("spec") or {} if k not in user_spec}
    known = {f for f in str(anns.get(ANN_MERGED, "")).split(",") if f}
    if added - known:
        obj["metadata"]["annotations"][ANN_MERGED] = ",".join(sorted(known | added))


def keep_merged(obj: dict[str, Any], previous: Mapping[str, Any]) -> None:
    """A re-applied manifest under ``merge`` keeps the merged fields it leaves out."""
    anns = (obj.get("metadata") or {}).get("annotations") or {}
    if str(anns.get(ANN_STATE_INTO_SPEC, "absent")).lower() != "merge":
        return
    prev_anns = (previous.get("metadata") or {}).get("annotations") or {}
    prev_spec = previous.get("spec") or {}
    spec = dict(obj.get("spec") or {})  # the manifest's own dict stays as loaded
    for f in str(prev_anns.get(ANN_MERGED, "")).split(","):
        if f and f not in spec and f in prev_spec:
            spec[f] = copy.deepcopy(prev_spec[f])
    if spec != (obj.get("spec") or {}):
        obj["spec"] = spec


def managed_spec(obj: Mapping[str, Any], a: Adapter, spec: dict[str, Any], actual: Mapping[str, Any], manager: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(spec to enforce, spec to write back) under the object's externally-managed-fields mode."""
    anns = (obj.get("metadata") or {}).get("annotations") or {}
    mode = str(anns.get(ANN_STATE_INTO_SPEC, "absent")).lower()
    managed = (obj.get("metadata") or {}).get("managedFields")
    if managed:
        readable_top = _readable_top(a)
        ours = {f for f, m in ssa_owners(managed).items() if m == {manager}}
        enforce = {k: v for k, v in spec.items() if k not in ours or k in a.krm_only}
        writeback = dict(spec)
        for k in ours:
            row = readable_top.get(k)
            if row is not None and row.api_path in actual and k not in a.secrets:
                writeback[k] = without_secrets(a, {k: actual[row.api_path]})[k]
        if mode == "merge":
            # Server-side apply and merge: fields nobody set are populated from
            # GCP, owned by us, and kept equal to GCP from then on (the seed's
            # "updated continuously"); a field a user applies is theirs again.
            for k, v in merge_into_spec(a, enforce, actual).items():
                writeback.setdefault(k, v)
        return enforce, writeback
    if mode == "merge" and not (obj.get("status") or {}).get("externalRef"):
        merged = merge_into_spec(a, spec, actual)
        return merged, merged
    return spec, spec


def _readable_top(a: Adapter) -> dict[str, Any]:
    """Top-level spec fields GET returns (never identity), by spec name."""
    table = mutability_of(a.kind)
    return {p.split(".")[1]: r for p, r in table.items() if p.count(".") == 1 and p.startswith("spec.") and r.readable and r.api_path and not r.identity}


def merge_into_spec(a: Adapter, spec: dict[str, Any], actual: Mapping[str, Any]) -> dict[str, Any]:
    """``state-into-spec: merge``: readable fields the user did not set, taken from GCP
    (never references, identity or output-only fields)."""
    readable_top = _readable_top(a)
    ref_api = {r.api_path.split(".")[0].removesuffix("[]") for r in references_of(a.kind) if not r.parent}
    merged = dict(spec)
    for k, row in readable_top.items():
        api = row.api_path or ""
        if k not in merged and api in actual and api not in ref_api and Behaviour.OUTPUT_ONLY not in row.behaviours:
            merged[k] = copy.deepcopy(actual[api])
    # never a secret's value from GCP into spec (nor a string where the object goes)
    return {**spec, **without_secrets(a, {k: v for k, v in merged.items() if k not in spec})}


def ssa_owners(managed_fields: list[Mapping[str, Any]]) -> dict[str, set[str]]:
    """Top-level spec field -> managers owning it, from fieldsV1 (``f:spec`` -> ``f:<field>``)."""
    owners: dict[str, set[str]] = {}
    for entry in managed_fields:
        fields = ((entry.get("fieldsV1") or {}).get("f:spec")) or {}
        for key in fields:
            if key.startswith("f:"):
                owners.setdefault(key[2:], set()).add(str(entry.get("manager", "")))
    return owners
