"""One reconcile of a KRM object, in the order DESIGN §5 gives, for every Kind.

1. actuation paused -> no GCP call;
2. identity from status.externalRef, checked against the spec;
3. deletion (``deletion-policy: abandon`` releases without a DELETE);
4. references resolved with no GCP call (DependencyNotFound/NotReady);
5. GET; any error but 404 fails the reconcile;
6. ``force-acquire: "true"``: verify only, never create/update/delete;
7. absent: create (service-generated IDs are only acquired by resourceID);
8. present: acquire, diff over the fields the user manages, refuse
   immutable changes by name, else one update with only the changes;
9. externally managed fields: ``state-into-spec`` absent (default) / merge,
   and server-side apply ownership from ``metadata.managedFields``.

Adapters are data (generated ``<kind>_adapter.py``); every rule is here.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from kccgen.contract import Adapter, Behaviour, CreateServiceAssigned, FieldType, TypeKind
from kccgen.runtime.adapter import adapter_for, spec_to_api
from kccgen.runtime.gcp import Gcp, GcpError, NotFound, OperationFailed
from kccgen.runtime.identity import IdentityError, identity_for
from kccgen.runtime.mutability import by_api_path, is_map, mutability_of
from kccgen.runtime.refs import (
    ObjectStore,
    Reason,
    RefError,
    identity_from_spec,
    references_of,
    resolve_object,
)
from kccgen.runtime.requests import create_request, delete_call, update_request

ANN_FORCE_ACQUIRE = "cnrm.cloud.google.com/force-acquire"
ANN_DELETION_POLICY = "cnrm.cloud.google.com/deletion-policy"
ANN_STATE_INTO_SPEC = "cnrm.cloud.google.com/state-into-spec"
ANN_ACTUATION = "cnrm.cloud.google.com/actuation-mode"
ANN_STREAK = "kccgen.dev/update-streak"  # path=count of consecutive updates of the same change
MANAGER = "kccgen"
MAX_STREAK = 3  # the same change written this many times in a row: the service keeps reverting it


@dataclass
class Event:
    type: str  # Normal | Warning
    reason: str
    message: str


@dataclass
class Result:
    obj: dict[str, Any]
    ready: bool
    reason: str
    message: str
    events: list[Event] = field(default_factory=list)
    deleted: bool = False


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _ann(obj: Mapping[str, Any]) -> dict[str, str]:
    return dict((obj.get("metadata") or {}).get("annotations") or {})


class Reconciler:
    def __init__(self, gcp: Gcp, store: ObjectStore, *, paused: bool = False, manager: str = MANAGER) -> None:
        self.gcp = gcp
        self.store = store
        self.paused = paused
        self.manager = manager

    # --- outcome helpers --------------------------------------------------------------

    def _finish(self, obj: dict[str, Any], ready: bool, reason: str, message: str, events: list[Event], **kw: Any) -> Result:
        status = obj.setdefault("status", {})
        gen = (obj.get("metadata") or {}).get("generation")
        old = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
        new_status = "True" if ready else "False"
        cond = {"type": "Ready", "status": new_status, "reason": reason, "message": message}
        cond["lastTransitionTime"] = old["lastTransitionTime"] if old and old.get("status") == new_status and old.get("lastTransitionTime") else _now()
        if gen is not None:
            cond["observedGeneration"] = gen
            status["observedGeneration"] = gen
        status["conditions"] = [cond]
        events.append(Event("Normal" if ready else "Warning", reason, message))
        return Result(obj, ready, reason, message, events, **kw)

    def _namespace_paused(self, obj: Mapping[str, Any]) -> bool:
        ns = str((obj.get("metadata") or {}).get("namespace") or getattr(self.store, "default_namespace", "default"))
        ns_obj = self.store.get("Namespace", "", ns) or {}
        return _ann(ns_obj).get(ANN_ACTUATION, "").lower() == "paused"

    # --- entry points -------------------------------------------------------------------

    def reconcile(self, original: Mapping[str, Any]) -> Result:
        obj = copy.deepcopy(dict(original))
        events: list[Event] = []
        kind = str(obj.get("kind"))
        ann = _ann(obj)
        if self.paused or ann.get(ANN_ACTUATION, "").lower() == "paused" or self._namespace_paused(obj):
            return self._finish(obj, False, "Paused", "actuation is paused: no GCP call was made", events)
        a = adapter_for(kind)
        if (obj.get("metadata") or {}).get("deletionTimestamp"):
            return self.delete(obj)
        try:
            ext = self._identity(obj, a)
        except RefError as e:
            return self._finish(obj, False, e.reason.value if e.reason in (Reason.NOT_FOUND, Reason.NOT_READY) else "UpdateFailed", str(e), events)
        except (IdentityError, ValueError) as e:
            return self._finish(obj, False, "UpdateFailed", str(e), events)
        try:
            resolved = resolve_object(obj, self.store)
        except RefError as e:
            reason = e.reason.value if e.reason in (Reason.NOT_FOUND, Reason.NOT_READY) else "UpdateFailed"
            return self._finish(obj, False, reason, str(e), events)
        actual: dict[str, Any] | None = None
        if ext is not None:
            try:
                actual = self.gcp.call(a, a.get, self._values(obj, a, ext))
            except NotFound:
                actual = None
            except GcpError as e:
                return self._finish(obj, False, "UpdateFailed", f"GET {ext} failed: {e}", events)
        spec = dict(obj.get("spec") or {})
        if ann.get(ANN_FORCE_ACQUIRE, "").lower() == "true":
            return self._verify(obj, a, ext, spec, resolved, actual, events)
        if actual is None:
            return self._create(obj, a, ext, spec, resolved, events)
        return self._update(obj, a, ext, spec, resolved, actual, events)

    def delete(self, original: Mapping[str, Any]) -> Result:
        """Delete (or abandon) the GCP resource; deletion never needs non-parent refs."""
        obj = copy.deepcopy(dict(original))
        events: list[Event] = []
        a = adapter_for(str(obj.get("kind")))
        if self.paused or _ann(obj).get(ANN_ACTUATION, "").lower() == "paused" or self._namespace_paused(obj):
            return self._finish(obj, False, "Paused", "actuation is paused: not deleted", events)
        if _ann(obj).get(ANN_DELETION_POLICY, "").lower() == "abandon":
            return self._finish(obj, True, "Abandoned", "deletion-policy abandon: the GCP resource was left in place", events, deleted=True)
        if _ann(obj).get(ANN_FORCE_ACQUIRE, "").lower() == "true":
            return self._finish(obj, True, "Released", "force-acquire: verify-only objects never delete GCP resources", events, deleted=True)
        try:
            ext = self._identity(obj, a)
        except (RefError, IdentityError, ValueError) as e:
            return self._finish(obj, False, "DeleteFailed", f"cannot identify the resource to delete: {e}", events)
        call = delete_call(a)
        if ext is None:
            return self._finish(obj, True, "Deleted", "nothing to delete", events, deleted=True)
        if call is None:
            return self._finish(obj, True, "Abandoned", f"{a.doc} has no delete method for {a.kind}: {ext} was left in place", events, deleted=True)
        values = self._values(obj, a, ext)
        try:
            op = self.gcp.call(a, call, values)
            self.gcp.wait(a, call, op, values)
        except NotFound:
            pass
        except GcpError as e:
            return self._finish(obj, False, "DeleteFailed", f"DELETE {ext} failed: {e}", events)
        return self._finish(obj, True, "Deleted", f"deleted {ext}", events, deleted=True)

    # --- identity ---------------------------------------------------------------------

    def _identity(self, obj: dict[str, Any], a: Adapter) -> str | None:
        """status.externalRef when set (the spec must agree); else from spec."""
        ident = identity_for(a.kind)
        status = obj.get("status") or {}
        from_spec = identity_from_spec(obj, self.store)
        ext = status.get("externalRef")
        if ext:
            ext = ident.normalize(str(ext))
            if from_spec is not None and from_spec != ext:
                raise ValueError(
                    f"spec names {from_spec} but status.externalRef is {ext}: identity fields cannot move a resource; "
                    "recreate the object to point it elsewhere"
                )
            return str(ext)
        return from_spec

    def _values(self, obj: dict[str, Any], a: Adapter, ext: str | None) -> dict[str, str]:
        """Template values for method parameters: the identity, plus the project when
        it is not part of the identity (a bucket's insert takes ?project=)."""
        ident = identity_for(a.kind)
        values = dict(ident.parse(ext)) if ext else {}
        if "project" not in values:
            project = self._project(obj)
            if project:
                values["project"] = project
        return values

    def _project(self, obj: dict[str, Any]) -> str | None:
        ref = (obj.get("spec") or {}).get("projectRef")
        ns = str((obj.get("metadata") or {}).get("namespace") or getattr(self.store, "default_namespace", "default"))
        if ref:
            from kccgen.runtime.refs import resolve_ref

            return identity_for("Project").parse(resolve_ref(ref, "Project", ns, self.store, "spec.projectRef"))["project"]
        from kccgen.runtime.refs import _project_from_annotations

        return _project_from_annotations(obj, self.store, ns)

    def _parent_values(self, obj: dict[str, Any], a: Adapter) -> dict[str, str]:
        """Identity values known before create for a service-generated ID (no ID yet)."""
        ident = identity_for(a.kind)
        values: dict[str, str] = {}
        spec = obj.get("spec") or {}
        from kccgen.runtime.refs import resolve_ref

        ns = str((obj.get("metadata") or {}).get("namespace") or getattr(self.store, "default_namespace", "default"))
        for param, fld, target in ident.spec_fields:
            if fld == "resourceID":
                continue
            if target:
                ref = spec.get(fld)
                if ref is None and target == "Project":
                    project = self._project(obj)
                    if project:
                        values[param] = project
                    continue
                parsed = identity_for(target).parse(resolve_ref(ref, target, ns, self.store, f"spec.{fld}"))
                values[param] = parsed.get(param, "")
            elif spec.get(fld):
                values[param] = str(spec[fld])
        return values

    # --- observed state -------------------------------------------------------------

    def _observe(self, obj: dict[str, Any], a: Adapter, resource: Mapping[str, Any] | None, ext: str) -> None:
        status = obj.setdefault("status", {})
        status["externalRef"] = ext
        if resource is None:
            return
        table = mutability_of(a.kind)
        top = {p.split(".")[2] for p in table if p.startswith("status.observedState.")}
        observed = {k: copy.deepcopy(v) for k, v in resource.items() if k in top}
        status["observedState"] = observed

    def _external_from(self, a: Adapter, resource: Mapping[str, Any], values: dict[str, str]) -> str:
        ident = identity_for(a.kind)
        name = str(resource.get("name", ""))
        if a.name_is_full and name:
            return ident.normalize(name)
        vals = {**values, a.id_param: name or values.get(a.id_param, "")}
        return ident.format(**{k: v for k, v in vals.items() if k in ident.params})

    # --- verify only (force-acquire) ------------------------------------------------

    def _verify(
        self, obj: dict[str, Any], a: Adapter, ext: str | None, spec: dict[str, Any], resolved: dict[str, Any], actual: dict[str, Any] | None, events: list[Event]
    ) -> Result:
        if actual is None or ext is None:
            what = ext or f"{a.kind} without a resourceID"
            return self._finish(obj, False, "ResourceNotFound", f"force-acquire: {what} does not exist in GCP; it is never created in verify-only mode", events)
        desired = spec_to_api(spec, a, resolved)
        diffs = diff(desired, actual, a, check_mutability=False)
        self._observe(obj, a, actual, ext)
        if diffs:
            lines = "; ".join(f"{p}: desired {json.dumps(d, sort_keys=True)}, actual {json.dumps(x, sort_keys=True)}" for p, d, x in diffs)
            return self._finish(obj, False, "DriftDetected", f"force-acquire: {ext} differs from spec in {len(diffs)} field(s): {lines}", events)
        return self._finish(obj, True, "UpToDate", f"force-acquire: {ext} matches spec (verified, nothing written)", events)

    # --- create ---------------------------------------------------------------------

    def _create(
        self, obj: dict[str, Any], a: Adapter, ext: str | None, spec: dict[str, Any], resolved: dict[str, Any], events: list[Event]
    ) -> Result:
        status = obj.get("status") or {}
        service_assigned = isinstance(a.create, CreateServiceAssigned)
        if service_assigned and spec.get("resourceID") and not status.get("externalRef"):
            return self._finish(obj, False, "ResourceNotFound", f"{ext} does not exist: a service-generated ID in spec.resourceID can only acquire, never create", events)
        values = self._values(obj, a, ext) if ext else self._parent_values(obj, a)
        if "project" not in values and (p := self._project(obj)):
            values["project"] = p
        req = create_request(a, spec_to_api(spec, a, resolved), values.get(a.id_param, ""), ext)
        if req is None:
            return self._finish(obj, False, "UpdateFailed", f"{a.kind} has no create method: it can only be acquired", events)
        try:
            # FIX: a create the service names is not retried after an ambiguous
            # failure (5xx, dropped connection): a second POST makes a duplicate.
            op = self.gcp.call(a, req.call, values, req.body, req.params, idempotent=not service_assigned)
            result = self.gcp.wait(a, req.call, op, values)
        except OperationFailed as e:
            return self._finish(obj, False, "UpdateFailed", f"create of {ext or a.kind} failed: {e.message}", events)
        except GcpError as e:
            return self._finish(obj, False, "UpdateFailed", f"create of {ext or a.kind} failed: {e}", events)
        new_ext: str | None = ext
        if isinstance(result, dict) and result.get("name"):
            new_ext = self._external_from(a, result, values)
        if result is None and new_ext is not None:  # compute/dns operations carry no resource
            result = self.gcp.call(a, a.get, self._values(obj, a, new_ext))
        assert new_ext is not None
        if _ann(obj).get(ANN_STATE_INTO_SPEC, "absent").lower() == "merge" and isinstance(result, dict):
            # merge: the first reconcile writes the service's values of unset
            # readable fields into spec; later reconciles enforce them.
            obj["spec"] = merge_into_spec(a, spec, result)
        self._observe(obj, a, result, new_ext)
        events.append(Event("Normal", "Created", f"created {new_ext}"))
        return self._finish(obj, True, "UpToDate", f"created {new_ext}", events)

    # --- acquire / update ---------------------------------------------------------------

    def _managed(self, obj: dict[str, Any], a: Adapter, spec: dict[str, Any], actual: dict[str, Any], resolved: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """(spec to enforce, spec to write back) under the externally-managed-fields mode."""
        mode = _ann(obj).get(ANN_STATE_INTO_SPEC, "absent").lower()
        table = mutability_of(a.kind)
        readable_top = {p.split(".")[1]: r for p, r in table.items() if p.count(".") == 1 and p.startswith("spec.") and r.readable and r.api_path and not r.identity}
        managed = (obj.get("metadata") or {}).get("managedFields")
        if managed:
            owners = ssa_owners(managed)
            ours = {f for f, m in owners.items() if m == {self.manager}}
            enforce = {k: v for k, v in spec.items() if k not in ours or k in a.krm_only}
            writeback = dict(spec)
            for k in ours:
                row = readable_top.get(k)
                if row is not None and row.api_path in actual:
                    writeback[k] = copy.deepcopy(actual[row.api_path])
            return enforce, writeback
        if mode == "merge" and not (obj.get("status") or {}).get("externalRef"):
            merged = merge_into_spec(a, spec, actual)
            return merged, merged
        return spec, spec

    def _update(
        self, obj: dict[str, Any], a: Adapter, ext: str | None, spec: dict[str, Any], resolved: dict[str, Any], actual: dict[str, Any], events: list[Event]
    ) -> Result:
        assert ext is not None
        enforce, writeback = self._managed(obj, a, spec, actual, resolved)
        if writeback != spec:
            obj["spec"] = writeback
        desired = spec_to_api(enforce, a, resolved)
        diffs = diff(desired, actual, a, check_mutability=True)
        acquired = not (obj.get("status") or {}).get("externalRef")
        if not diffs:
            self._observe(obj, a, actual, ext)
            self._streak(obj, [])
            if acquired:
                events.append(Event("Normal", "Acquired", f"acquired {ext}"))
            return self._finish(obj, True, "UpToDate", f"{ext} is up to date", events)
        table = by_api_path(a.kind)
        frozen = [(p, table[p]) for p, _, _ in diffs if p in table and not table[p].updatable]
        if frozen:
            names = ", ".join(f"{row.path} ({row.updatable_source})" for _, row in frozen)
            self._observe(obj, a, actual, ext)
            return self._finish(obj, False, "UpdateFailed", f"cannot change immutable field(s) of {ext}: {names}", events)
        streak = self._streak(obj, diffs)
        if streak > MAX_STREAK:  # written MAX_STREAK times already, reverted each time
            paths = ", ".join(p for p, _, _ in diffs)
            self._observe(obj, a, actual, ext)
            return self._finish(obj, False, "UpdateFailed", f"{paths} of {ext} changed back {streak - 1} times after our updates: the service keeps setting another value; stopped updating", events)
        req = update_request(a, desired, actual, [p for p, _, _ in diffs])
        if req is None:
            return self._finish(obj, False, "UpdateFailed", f"{a.kind} has no update method; changed: {', '.join(p for p, _, _ in diffs)}", events)
        values = self._values(obj, a, ext)
        try:
            op = self.gcp.call(a, req.call, values, req.body, req.params)
            result = self.gcp.wait(a, req.call, op, values)
        except OperationFailed as e:
            return self._finish(obj, False, "UpdateFailed", f"update of {ext} failed: {e.message}", events)
        except GcpError as e:
            return self._finish(obj, False, "UpdateFailed", f"update of {ext} failed: {e}", events)
        self._observe(obj, a, result if isinstance(result, dict) and result else {**actual, **desired}, ext)
        events.append(Event("Normal", "Updated", f"updated {', '.join(p for p, _, _ in diffs)} of {ext}"))
        return self._finish(obj, True, "UpToDate", f"updated {ext}", events)

    def _streak(self, obj: dict[str, Any], diffs: list[tuple[str, Any, Any]]) -> int:
        """How many consecutive reconciles had to write this same change (paths
        and desired values): a new desired value starts a new count."""
        meta = obj.setdefault("metadata", {})
        anns = meta.setdefault("annotations", {})
        key = ""
        if diffs:
            import hashlib

            change = json.dumps(sorted((p, d) for p, d, _ in diffs), sort_keys=True, default=str)
            key = ",".join(sorted(p for p, _, _ in diffs)) + "@" + hashlib.sha256(change.encode()).hexdigest()[:12]
        prev = anns.get(ANN_STREAK, "")
        count = int(prev.rsplit("=", 1)[1]) + 1 if key and prev.rsplit("=", 1)[0] == key and "=" in prev else (1 if key else 0)
        if count:
            anns[ANN_STREAK] = f"{key}={count}"
        else:
            anns.pop(ANN_STREAK, None)
            if not anns:
                meta.pop("annotations", None)
        return count


# --- diff and update bodies -------------------------------------------------------------


def merge_into_spec(a: Adapter, spec: dict[str, Any], actual: Mapping[str, Any]) -> dict[str, Any]:
    """``state-into-spec: merge``: readable fields the user did not set, taken from GCP
    (never references, identity or output-only fields)."""
    table = mutability_of(a.kind)
    readable_top = {
        p.split(".")[1]: r
        for p, r in table.items()
        if p.count(".") == 1 and p.startswith("spec.") and r.readable and r.api_path and not r.identity
    }
    ref_api = {r.api_path.split(".")[0] for r in references_of(a.kind) if not r.parent}
    merged = dict(spec)
    for k, row in readable_top.items():
        api = row.api_path or ""
        if k not in merged and api in actual and api not in ref_api and Behaviour.OUTPUT_ONLY not in row.behaviours:
            merged[k] = copy.deepcopy(actual[api])
    return merged


@functools.cache
def _ref_targets(kind: str) -> dict[str, tuple[str, bool]]:
    return {r.api_path.replace("[]", ""): (r.target, r.many) for r in references_of(kind) if not r.parent}


# FIX (scenario tests): values that are the same but spelled differently were
# diffs, so an up-to-date object was "updated" on every reconcile (or refused as
# an immutable change). Each rule below is a documented equivalence, not a
# field being skipped.
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
    fmt = typ.leaf().format if typ is not None else None
    if isinstance(d, str) and isinstance(x, str) and d != x:
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
    never returns, are never compared. An absent live value equals a desired
    zero value: proto3 JSON (and compute's JSON) leave out fields holding their
    default (recorded traffic: KMS omits ``importOnly: false``, compute
    ``enableUlaInternalIpv6: false``). Durations and timestamps compare as values.
    """
    refs = _ref_targets(a.kind)
    rows = by_api_path(a.kind)
    out: list[tuple[str, Any, Any]] = []

    def canon(target: str, v: Any) -> Any:
        try:
            return identity_for(target).normalize(str(v))
        except IdentityError:
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
        if row is not None and not row.readable:
            return
        if isinstance(d, dict) and path not in refs and not is_map(row) and isinstance(x, dict):
            for k, v in d.items():
                walk(v, x.get(k), f"{path}.{k}" if path else k)
            return
        if not same(d, x, path):
            out.append((path, d, x))

    walk(desired, actual, "")
    return out


def ssa_owners(managed_fields: list[Mapping[str, Any]]) -> dict[str, set[str]]:
    """Top-level spec field -> managers owning it, from fieldsV1 (``f:spec`` -> ``f:<field>``)."""
    owners: dict[str, set[str]] = {}
    for entry in managed_fields:
        fields = ((entry.get("fieldsV1") or {}).get("f:spec")) or {}
        for key in fields:
            if key.startswith("f:"):
                owners.setdefault(key[2:], set()).add(str(entry.get("manager", "")))
    return owners
