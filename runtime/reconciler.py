"""One reconcile of a KRM object, in the order docs/design.md §5 gives, for every Kind.

1. actuation paused -> no GCP call;
2. identity from status.externalRef, checked against the spec;
3. deletion (``deletion-policy: abandon`` releases without a DELETE);
4. references resolved with no GCP call (DependencyNotFound/NotReady);
5. GET; any error but 404 fails the reconcile;
6. ``force-acquire: "true"``: verify only, never create/update/delete;
7. absent: create (service-generated IDs are only acquired by resourceID).
   A create whose ID the service picks is announced first (``kccgen.dev/
   create-pending``, persisted before the POST) and sent once. After a lost
   answer, or an intent left by an interrupted run, the collection is listed
   and the resource looked for: by the one-time label the create carried
   (``kccgen-create``), else by content among resources no other object
   claims. Found: adopted; surely absent: created; anything else is
   ``CreateOutcomeUnknown``, never a second resource. A user-named create that
   meets 409 acquires;
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
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from kccgen.contract import (
    REQUEST_TOKEN,
    Adapter,
    CreateByVerb,
    CreateServiceAssigned,
    Lro,
    Present,
    UpdateRouted,
    template_value,
)
from kccgen.runtime import companions, entries, iam_reconcile, leases, writeonly
from kccgen.runtime.adapter import adapter_for, policy_for, spec_to_api
from kccgen.runtime.aliases import AliasConflict, canonical_spec
from kccgen.runtime.diff import diff
from kccgen.runtime.gcp import (
    AlreadyExists,
    Gcp,
    GcpError,
    NotFound,
    OperationFailed,
    Transient,
    with_project_number,
)
from kccgen.runtime.identity import IdentityError, identity_for
from kccgen.runtime.locations import LocationError, located, restored
from kccgen.runtime.managed import ANN_STATE_INTO_SPEC, managed_spec, merge_into_spec, note_merged
from kccgen.runtime.mutability import by_api_path, mutability_of
from kccgen.runtime.owners import Who, describe, owner
from kccgen.runtime.refs import (
    ObjectStore,
    Reason,
    RefError,
    identity_from_spec,
    resolve_object,
)
from kccgen.runtime.requests import (
    Request,
    at_path,
    create_request,
    delete_request,
    update_request,
    update_requests,
)
from kccgen.runtime.secrets import (
    ANN_SECRET_DIGEST,
    REDACTED,
    api_paths,
    masked,
    redacted,
    resolve_secrets,
    secret_digest,
    without_secrets,
)

__all__ = ["ANN_CREATE_PENDING", "ANN_FORCE_ACQUIRE", "ANN_STREAK", "MAX_STREAK", "Event", "Reconciler", "Result", "diff"]

ANN_FORCE_ACQUIRE = "cnrm.cloud.google.com/force-acquire"
ANN_DELETION_POLICY = "cnrm.cloud.google.com/deletion-policy"
ANN_ACTUATION = "cnrm.cloud.google.com/actuation-mode"
ANN_STREAK = "kccgen.dev/update-streak"  # path=count of consecutive updates of the same change
# Set (and persisted) before a create whose ID the service picks, removed once its
# outcome is known: still there on the next reconcile, the earlier create may exist.
ANN_CREATE_PENDING = "kccgen.dev/create-pending"  # "<sent at> <token>[ <holder>]"
# The label a service-named create carries (where the resource has a labels
# map) with the intent's token, to be recognised in a listing. It stays on the
# resource, as Config Connector's managed-by-cnrm does, and is never diffed.
CREATE_LABEL = "kccgen-create"
# A create through an operation may not be listed before the operation ends:
# absent from the listing this soon after it was sent proves nothing.
SETTLE_GRACE_S = 600
# How long an intent written by another live writer (an operator instance that
# lost the lead mid-create) is left to it: longer than a create request may take
# (SendOnce's 120 s timeout), so its answer is in before we look for the resource.
INTENT_GRACE_S = 150
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
    # A dry run's plan: (spec path, desired, live) per field it would write.
    changes: list[tuple[str, Any, Any]] = field(default_factory=list)


def _outcome_unknown(a: Adapter, since: str) -> str:
    # Never advise deleting and re-applying: after a real lost answer that
    # leaks the resource, and done twice it makes a duplicate.
    return (
        f"a create of this {a.kind} was sent at {since} and its outcome is unknown (lost answer or interrupted run), "
        f"so it is not sent again; every reconcile looks for the resource again and adopts it once found. "
        f"If you know its ID, set spec.resourceID to it (acquired); only if you know it was not made, "
        f"remove the annotation {ANN_CREATE_PENDING} and the create is sent again"
    )


def _set_annotation(obj: dict[str, Any], key: str, value: str | None) -> None:
    """Set one of our annotations, or drop it (None); no empty map is left behind."""
    meta = obj.setdefault("metadata", {})
    anns = dict(meta.get("annotations") or {})
    if value is None:
        anns.pop(key, None)
    else:
        anns[key] = value
    if anns:
        meta["annotations"] = anns
    else:
        meta.pop("annotations", None)


def _unix(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _settled(obj: dict[str, Any]) -> None:
    """The create's outcome is known: drop the create-pending intent."""
    _set_annotation(obj, ANN_CREATE_PENDING, None)


def without_create_label(a: Adapter, resource: Any) -> Any:
    """The resource without our create label: it is not the user's, so never drift."""
    shape = a.create
    if isinstance(shape, CreateServiceAssigned) and shape.label_field and isinstance(resource, dict):
        labels = resource.get(shape.label_field)
        if isinstance(labels, dict) and CREATE_LABEL in labels:
            labels = {k: v for k, v in labels.items() if k != CREATE_LABEL}
            resource = {**resource, shape.label_field: labels} if labels else {k: v for k, v in resource.items() if k != shape.label_field}
    return resource


def without_marks(a: Adapter, resource: Any) -> Any:
    """The resource as the user's fields see it: without our create label and
    without lease labels (kccgen.runtime.leases), neither of which is the user's."""
    return leases.strip(a, without_create_label(a, resource))


def read_raw(gcp: Gcp, a: Adapter, values: dict[str, str]) -> Any:
    """The live resource (one GET) with its marks (``read_live`` without them).
    A read through an operation (serviceusage's generateServiceIdentity) is
    waited for; an on/off resource that is off (``Adapter.present``) is absent."""
    values = with_project_number(gcp, a, values)
    if entries.entry_of(a) is not None:
        return entries.read(gcp, a, values)
    if a.read_list is not None:
        return read_listed(gcp, a, values)
    try:
        live = gcp.call(a, a.get, values)
    except GcpError as e:
        if any(e.code == status and text in e.message for status, text in a.absent):
            raise NotFound(404, f"{a.kind}: {e.message}") from None  # the read's way of saying so
        raise
    if a.get.lro is not Lro.NONE:
        live = gcp.wait(a, a.get, live, values)
    if a.present is not None and not is_present(a.present, live, values):
        raise NotFound(404, f"{a.kind}: {a.present.field} is {at_path(live, a.present.field)!r}, not {' or '.join(a.present.values)}")
    return viewed(a, live)


def read_live(gcp: Gcp, a: Adapter, values: dict[str, str]) -> Any:
    """The live resource (one GET), as the user's fields see it (``without_marks``)."""
    return without_marks(a, read_raw(gcp, a, values))


def send(gcp: Gcp, a: Adapter, req: Request, values: dict[str, str], *, role: str, idempotent: bool = True) -> Any:
    """Send one create, update or delete and wait for it; the answer's resource.
    An entry of a parent's list is written through the parent (runtime.entries)."""
    if entries.entry_of(a) is not None:
        return entries.write(gcp, a, values, None if role == "delete" else req.body, create=role == "create")
    op = gcp.call(a, req.call, values, req.body, req.params, idempotent=idempotent)
    return gcp.wait(a, req.call, op, values)


def viewed(a: Adapter, resource: Any) -> Any:
    """The part of an answer the spec describes (``Adapter.view``); the answer itself without one."""
    if not a.view or not isinstance(resource, dict):
        return resource
    part = at_path(resource, a.view)
    return part if isinstance(part, dict) else {}


def read_listed(gcp: Gcp, a: Adapter, values: dict[str, str]) -> dict[str, Any]:
    """The one listed item whose fields hold the identity's values (``Adapter.read_list``):
    none is an absent resource; two are a doubt the reconciler must not settle."""
    rl = a.read_list
    assert rl is not None
    want = [(f, template_value(t, values)) for f, t in rl.match]
    hits = [i for i in gcp.list_all(a, a.get, values, rl.items_field) if all(at_path(i, f) == v for f, v in want)]
    where = ", ".join(f"{f}={v}" for f, v in want)
    if not hits:
        raise NotFound(404, f"{a.kind}: {a.doc} {'.'.join(a.resource)}.{a.get.method} lists none with {where}")
    if len(hits) > 1:
        raise GcpError(409, f"{a.kind}: {a.doc} {'.'.join(a.resource)}.{a.get.method} lists {len(hits)} with {where}: cannot tell which is this object's")
    return hits[0]


def is_present(p: Present, live: Any, values: dict[str, str]) -> bool:
    """Whether an on/off resource is on: its state field holds one of the values."""
    return at_path(live, p.field) in {template_value(v, values) for v in p.values}


_TIME = "%Y-%m-%dT%H:%M:%SZ"  # the timestamps of conditions and create intents


def _age_s(since: str) -> float:
    try:
        return (datetime.now(UTC) - datetime.strptime(since, _TIME).replace(tzinfo=UTC)).total_seconds()
    except ValueError:
        return float("inf")


def _spec_path(a: Adapter, api_path: str) -> str:
    """Where the manifest says it: ``spec.topicRef`` for the API's ``topic``
    (the mutability table maps them); an API path it does not know stays as is."""
    row = by_api_path(a.kind).get(re.sub(r"\[\d+\]", "", api_path))
    return row.path if row is not None else api_path


def _now() -> str:
    return datetime.now(UTC).strftime(_TIME)


def _conflict(ext: str, other: Who) -> str:
    return (
        f"{ext} is managed by {describe(other)}, which acquired it first: this object is not reconciled "
        f"and never writes it, and deleting it leaves the resource alone. Delete this object, or give it another resourceID"
    )


def _intent(value: str) -> tuple[str, str, str]:
    """(sent at, token, holder) of a create-pending intent; older ones have no holder."""
    parts = value.split(" ")
    return parts[0], parts[1] if len(parts) > 1 else "", parts[2] if len(parts) > 2 else ""


def _ann(obj: Mapping[str, Any]) -> dict[str, str]:
    return dict((obj.get("metadata") or {}).get("annotations") or {})


Tree = dict[str, "Tree"]


@functools.cache
def _observed_tree(kind: str) -> Tree:
    """The Kind's ``status.observedState`` rows as a tree of keys (``items[]`` a list's
    elements): what the CRD declares there, so nothing else is written to it."""
    root: Tree = {}
    for path in mutability_of(kind):
        if path.startswith("status.observedState."):
            node = root
            for part in path.removeprefix("status.observedState.").split("."):
                node = node.setdefault(part, {})
    return root


def observed_part(value: Any, tree: Tree) -> Any:
    """``value`` pruned to ``tree``: a leaf keeps its whole value, an object with rows
    under it keeps only those (a SQL instance's ``settings`` holds the spec's ``tier``,
    which its observed state does not declare: the API server refuses the status)."""
    if not isinstance(value, Mapping):
        return copy.deepcopy(value)
    out: dict[str, Any] = {}
    for k, v in value.items():
        if k in tree:
            out[k] = copy.deepcopy(v) if not tree[k] else observed_part(v, tree[k])
        elif f"{k}[]" in tree and isinstance(v, list):
            sub = tree[f"{k}[]"]
            out[k] = [copy.deepcopy(x) if not sub else observed_part(x, sub) for x in v]
        elif "*" in tree:  # a map's values (nodeTypeConfigs.*.nodeCount)
            out[k] = copy.deepcopy(v) if not tree["*"] else observed_part(v, tree["*"])
    return out


class Reconciler:
    def __init__(
        self,
        gcp: Gcp,
        store: ObjectStore,
        *,
        paused: bool = False,
        manager: str = MANAGER,
        persist: Callable[[dict[str, Any]], object] | None = None,
        dry_run: bool = False,
        holder: str = "",
        acting: Callable[[str], bool] | None = None,
    ) -> None:
        """``persist`` durably records an object before a create whose ID the
        service picks (the create-pending intent): after a crash or a lost
        answer, the next reconcile knows a resource may exist and never
        creates a second one. ``dry_run``: GETs only; what would be written
        is the result (WouldCreate, WouldUpdate, WouldDelete with ``changes``).
        ``holder`` names this writer where others may run at once (operator
        instances); ``acting(other)`` says whether another holder may still be
        acting on its intent (alive, not elected away): a recent one is theirs
        to settle."""
        self.gcp = gcp
        self.dry_run = dry_run
        self.store = store
        self.paused = paused
        self.manager = manager
        self.persist = persist
        self.holder = holder
        self.acting = acting

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

    def _at_location(self, original: Mapping[str, Any], step: Callable[[Reconciler, Mapping[str, Any]], Result]) -> Result | None:
        """``step`` run on ``original`` as the Kind serving its ``spec.location``, with
        the user's Kind and spelling put back (and persisted so); None when the object
        names no location. Raises LocationError for a location no Kind serves."""
        as_located = located(original)
        if as_located is None:
            return None
        sub = self
        if self.persist is not None:
            sub, persist = copy.copy(self), self.persist
            sub.persist = lambda o: persist(restored(original, as_located, o))
        result = step(sub, as_located)
        return replace(result, obj=restored(original, as_located, result.obj))

    # --- entry points -------------------------------------------------------------------

    def reconcile(self, original: Mapping[str, Any]) -> Result:
        """One reconcile; Config Connector aliases in the spec are moved to their
        fields first, and the object keeps the spec as the user wrote it."""
        if (policy := policy_for(str(original.get("kind")))) is not None:
            return iam_reconcile.reconcile(self, original, policy)
        a = adapter_for(str(original.get("kind")))
        if a.locations is not None:
            try:
                done = self._at_location(original, Reconciler.reconcile)
            except LocationError as e:
                return self._finish(copy.deepcopy(dict(original)), False, "UpdateFailed", str(e), [])
            if done is not None:
                return done
        if not a.aliases and not a.forms:
            return self._guarded(original)
        user_spec = original.get("spec")
        try:
            canon = canonical_spec(a, user_spec)
        except AliasConflict as e:
            return self._finish(copy.deepcopy(dict(original)), False, "UpdateFailed", str(e), [])
        result = self._guarded({**original, "spec": canon})
        if result.obj.get("spec") == canon:  # not rewritten (state-into-spec merge, SSA)
            if user_spec is None:
                result.obj.pop("spec", None)
            else:
                result.obj["spec"] = copy.deepcopy(user_spec)
        return result

    def _guarded(self, original: Mapping[str, Any]) -> Result:
        """An identity that cannot be read fails this object with its reason, never the
        whole run (an apply of many objects, the operator's worker)."""
        try:
            return self._reconcile(original)
        except IdentityError as e:
            return self._finish(copy.deepcopy(dict(original)), False, "UpdateFailed", str(e), [])

    def _reconcile(self, original: Mapping[str, Any]) -> Result:
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
            resolved.update(resolve_secrets(obj, a, self.store))
        except RefError as e:
            reason = e.reason.value if e.reason in (Reason.NOT_FOUND, Reason.NOT_READY) else "UpdateFailed"
            return self._finish(obj, False, reason, str(e), events)
        verify_only = ann.get(ANN_FORCE_ACQUIRE, "").lower() == "true"  # never writes: owns nothing, may look at anything
        if ext is not None and not verify_only and (other := self._owner(obj, a, ext)) is not None:
            return self._finish(obj, False, "ManagementConflict", _conflict(ext, other), events)
        try:
            holder = self._lease_holder(obj, a)
        except leases.LeaseError as e:
            return self._finish(obj, False, "UpdateFailed", str(e), events)
        actual: dict[str, Any] | None = None
        current: leases.Lease | None = None
        if ext is not None:
            try:
                raw = read_raw(self.gcp, a, self._values(obj, a, ext))
                current, actual = leases.found(a, raw), without_marks(a, raw)
            except NotFound:
                actual = None
            except GcpError as e:
                return self._finish(obj, False, "UpdateFailed", f"GET {ext} failed: {e}", events)
        spec = dict(obj.get("spec") or {})
        if actual is not None:
            _settled(obj)  # the resource is known: no create of it is pending any more
        if verify_only:
            return self._verify(obj, a, ext, spec, resolved, actual, events, holder=holder, current=current)
        if actual is None:
            return self._create(obj, a, ext, spec, resolved, events, holder=holder)
        return self._update(obj, a, ext, spec, resolved, actual, events, holder=holder, current=current)

    def _release(self, obj: dict[str, Any], a: Adapter) -> str:
        """Our lease removed from an abandoned resource, so another installation may
        take it at once; a note for the message ("" when there was none to remove)."""
        try:
            holder = self._lease_holder(obj, a)
            ext = self._identity(obj, a) if holder else None
            if ext is None:
                return ""
            values = self._values(obj, a, ext)
            raw = read_raw(self.gcp, a, values)
            current = leases.found(a, raw)
            if current is None or current.holder != holder:
                return ""
            field = leases.label_field(a)
            actual = without_marks(a, raw)
            req = update_request(a, {**actual, field: actual.get(field) or {}}, raw, [field])
            if req is None:
                return ""
            self.gcp.wait(a, req.call, self.gcp.call(a, req.call, values, req.body, req.params), values)
        except (leases.LeaseError, RefError, IdentityError, ValueError, GcpError, OperationFailed) as e:
            return f"; its lease was not released ({e}): it expires on its own within {leases.LEASE_S // 60} minutes"
        return "; its lease was released"

    def _lease_holder(self, obj: Mapping[str, Any], a: Adapter) -> str:
        """This installation's lease holder ID when the object's policy is
        ``resource`` (kccgen.runtime.leases), else ""."""
        ns = str((obj.get("metadata") or {}).get("namespace") or getattr(self.store, "default_namespace", "default"))
        if leases.policy(obj, self.store.get("Namespace", "", ns), a) != "resource":
            return ""
        holder_of = getattr(self.store, "lease_holder", None)
        holder = str(holder_of(ns) or "") if holder_of is not None else ""
        if not holder:
            raise leases.LeaseError(f"{leases.ANN_POLICY}=resource: this runtime has no installation ID to hold a lease with")
        return holder

    def delete(self, original: Mapping[str, Any]) -> Result:
        """Delete (or abandon) the GCP resource; deletion never needs non-parent refs.
        An object of a Kind over several location scopes is deleted as the Kind
        serving its ``spec.location``."""
        if (policy := policy_for(str(original.get("kind")))) is not None:
            return iam_reconcile.delete(self, original, policy)
        a = adapter_for(str(original.get("kind")))
        if a.locations is not None:
            try:
                done = self._at_location(original, Reconciler.delete)
            except LocationError as e:
                obj = copy.deepcopy(dict(original))
                if not (obj.get("status") or {}).get("externalRef"):  # never reconciled: nothing in GCP
                    return self._finish(obj, True, "Deleted", f"nothing to delete: {e}", [], deleted=True)
                return self._finish(obj, False, "DeleteFailed", f"cannot identify the resource to delete: {e}", [])
            if done is not None:
                return done
        obj = copy.deepcopy(dict(original))
        events: list[Event] = []
        if self.paused or _ann(obj).get(ANN_ACTUATION, "").lower() == "paused" or self._namespace_paused(obj):
            return self._finish(obj, False, "Paused", "actuation is paused: not deleted", events)
        if _ann(obj).get(ANN_DELETION_POLICY, "").lower() == "abandon":
            note = "" if self.dry_run else self._release(obj, a)
            return self._finish(obj, True, "Abandoned", f"deletion-policy abandon: the GCP resource was left in place{note}", events, deleted=True)
        if _ann(obj).get(ANN_FORCE_ACQUIRE, "").lower() == "true":
            return self._finish(obj, True, "Released", "force-acquire: verify-only objects never delete GCP resources", events, deleted=True)
        try:
            ext = self._identity(obj, a)
        except RefError as e:
            # The parent's object is gone (deleted first, as kubectl delete -f does
            # in file order): status.externalRef still names the resource.
            known = (obj.get("status") or {}).get("externalRef")
            if not known:
                return self._finish(obj, False, "DeleteFailed", f"cannot identify the resource to delete: {e}", events)
            try:
                ext = str(identity_for(a.kind).normalize(str(known)))
            except IdentityError as ie:
                return self._finish(obj, False, "DeleteFailed", f"cannot identify the resource to delete: {e}; status.externalRef: {ie}", events)
            events.append(Event("Normal", "ParentGone", f"{e}; deleting {ext} by its status.externalRef"))
        except (IdentityError, ValueError) as e:
            return self._finish(obj, False, "DeleteFailed", f"cannot identify the resource to delete: {e}", events)
        if ext is None:
            return self._finish(obj, True, "Deleted", "nothing to delete", events, deleted=True)
        if (other := self._owner(obj, a, ext)) is not None:
            return self._finish(obj, True, "Abandoned", f"{ext} is managed by {describe(other)}: left in place for it", events, deleted=True)
        try:
            values = self._values(obj, a, ext)
        except GcpError as e:  # a project number to look up (servicenetworking)
            return self._finish(obj, False, "DeleteFailed", f"cannot delete {ext}: {e}", events)
        try:
            holder = self._lease_holder(obj, a)
            current = leases.found(a, read_raw(self.gcp, a, values)) if holder else None
        except leases.LeaseError:
            current = None
        except NotFound:
            current = None
        except GcpError as e:
            return self._finish(obj, False, "DeleteFailed", f"cannot read the lease on {ext}: {e}", events)
        if current is not None and current.holder != holder and current.left_s() > 0:
            return self._finish(obj, True, "Abandoned", f"{ext}: {leases.refusal(current).split(':')[0]}: left in place for its holder", events, deleted=True)
        req = delete_request(a, _ann(obj), values)
        if isinstance(req, str):
            return self._finish(obj, True, "Abandoned", f"{req}: {ext} was left in place", events, deleted=True)
        if self.dry_run:
            return self._finish(obj, False, "WouldDelete", f"would delete {ext}", events)
        try:
            send(self.gcp, a, req, values, role="delete")
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
        return with_project_number(self.gcp, a, values)

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
        spec = obj.get("spec") or {}
        ident = identity_for(a.kind).form_for_spec(spec)
        values: dict[str, str] = {}
        from kccgen.runtime.refs import covering_ref

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
                parsed = covering_ref(obj, self.store, ident, fld, target, ref)
                values[param] = parsed.get(param, "")
            elif ident.spec_value(spec, fld):
                values[param] = str(ident.spec_value(spec, fld))
        return with_project_number(self.gcp, a, values)

    # --- observed state -------------------------------------------------------------

    def _observe(self, obj: dict[str, Any], a: Adapter, resource: Mapping[str, Any] | None, ext: str) -> None:
        status = obj.setdefault("status", {})
        status["externalRef"] = ext
        if resource is None:
            return
        observed = observed_part(resource, _observed_tree(a.kind))
        status["observedState"] = without_secrets(a, observed)  # diskEncryptionKey's sha256, not its rawKey

    def _external_from(self, a: Adapter, resource: Mapping[str, Any], values: dict[str, str]) -> str:
        ident = identity_for(a.kind).form_for(values)
        name = str(at_path(resource, a.id_field) or "")
        if a.id_field == "name" and a.name_is_full and name:
            return ident.normalize(name)
        if "/" in name:
            # FIX: a derived adapter may expect a short ID where the service answers
            # with the full name (monitoring groups, snoozes): a name that parses as
            # the identity is the identity; never a "segment" with slashes in it.
            try:
                return ident.normalize(name)
            except IdentityError:
                pass
        vals = {**values, a.id_param: name or values.get(a.id_param, "")}
        return ident.format(**{k: v for k, v in vals.items() if k in ident.params})

    # --- verify only (force-acquire) ------------------------------------------------

    def _verify(
        self, obj: dict[str, Any], a: Adapter, ext: str | None, spec: dict[str, Any], resolved: dict[str, Any], actual: dict[str, Any] | None, events: list[Event],
        *, holder: str = "", current: leases.Lease | None = None,
    ) -> Result:
        if actual is None or ext is None:
            what = ext or f"{a.kind} without a resourceID"
            return self._finish(obj, False, "ResourceNotFound", f"force-acquire: {what} does not exist in GCP; it is never created in verify-only mode", events)
        values = self._values(obj, a, ext)
        desired = spec_to_api(spec, a, resolved, values)
        diffs = redacted(a, diff(desired, actual, a, check_mutability=False))
        self._observe(obj, a, actual, ext)
        if a.companions:
            try:
                diffs += [(f"spec.{p.companion.field}", p.desired, p.actual) for p in companions.pending(self.gcp, a, values, spec, resolved)]
            except GcpError as e:
                return self._finish(obj, False, "UpdateFailed", f"force-acquire: reading a paired resource of {ext} failed: {e}", events)
        # Another installation's lease: a match is the explicit take-over, done by
        # the first reconcile after force-acquire is removed (kccgen.runtime.leases).
        theirs = current if holder and current is not None and current.holder != holder and current.left_s() > 0 else None
        _set_annotation(obj, leases.ANN_TAKEOVER, theirs.holder if theirs is not None and not diffs else None)
        if diffs:
            lines = "; ".join(f"{_spec_path(a, p)}: desired {json.dumps(d, sort_keys=True)}, actual {json.dumps(x, sort_keys=True)}" for p, d, x in diffs)
            return self._finish(obj, False, "DriftDetected", f"force-acquire: {ext} differs from spec in {len(diffs)} field(s): {lines}", events)
        held = f"; it is under lease by {theirs.holder!r}: remove force-acquire to take it over" if theirs is not None else ""
        return self._finish(obj, True, "UpToDate", f"force-acquire: {ext} matches spec (verified, nothing written){held}", events)

    # --- create ---------------------------------------------------------------------

    def _create(
        self, obj: dict[str, Any], a: Adapter, ext: str | None, spec: dict[str, Any], resolved: dict[str, Any], events: list[Event], *, holder: str = ""
    ) -> Result:
        status = obj.get("status") or {}
        # the service picks the ID (a connection named by its network has none to pick)
        service_assigned = isinstance(a.create, CreateServiceAssigned) and bool(a.id_param)
        if service_assigned and spec.get("resourceID"):
            # Absent, whether never there or deleted since it was acquired: a
            # create would make another resource under another ID, which the
            # object's resourceID would then contradict.
            gone = " any more (deleted outside kccgen?)" if status.get("externalRef") else ""
            return self._finish(
                obj,
                False,
                "ResourceNotFound",
                f"{ext} does not exist{gone}: a service-generated ID in spec.resourceID can only acquire, never create; remove spec.resourceID to create a new one",
                events,
            )
        values = self._values(obj, a, ext) if ext else self._parent_values(obj, a)
        if "project" not in values and (p := self._project(obj)):
            values["project"] = p
        req = create_request(a, spec_to_api(spec, a, resolved, values), values.get(a.id_param, ""), ext, values)
        if req is None:
            return self._finish(obj, False, "UpdateFailed", f"{a.kind} has no create method: it can only be acquired", events)
        if holder and isinstance(req.body, dict) and not getattr(a.create, "resource_field", ""):
            # A wrapped create's body is not the resource: the first update leases it.
            req = replace(req, body=leases.with_lease(a, req.body, None, leases.fresh(holder)))
        pending = service_assigned and not status.get("externalRef")
        if self.dry_run:
            what = ext or f"a {a.kind} (the service picks its ID)"
            first = "look for the resource of an earlier create whose outcome is unknown, else " if pending and _ann(obj).get(ANN_CREATE_PENDING) else ""
            changes = [(f"spec.{k}", v, None) for k, v in sorted(masked(a, spec).items())]
            return self._finish(obj, False, "WouldCreate", f"would {first}create {what}", events, changes=changes)
        if pending:
            assert isinstance(a.create, CreateServiceAssigned)
            intent = _ann(obj).get(ANN_CREATE_PENDING)
            since, _, other = _intent(intent or "")
            theirs = bool(intent and other and other != self.holder and self.acting is not None and self.acting(other))
            if theirs and _age_s(since) < INTENT_GRACE_S:
                return self._finish(
                    obj, False, "CreatePending", f"{other} sent the create of this {a.kind} at {since}; its outcome is awaited (looked for from {INTENT_GRACE_S}s after)", events
                )
            if intent:
                looked = self._look_for_created(obj, a, spec, resolved, values, intent, "the outcome of an earlier create is unknown", events)
                if looked is not None:
                    return looked
            token = secrets.token_hex(8)
            _set_annotation(obj, ANN_CREATE_PENDING, " ".join(x for x in (_now(), token, self.holder) if x))
            # the one-time label goes on the resource: inside a wrapper, if the request has one
            marked = req.body.get(a.create.resource_field) if a.create.resource_field and isinstance(req.body, dict) else req.body
            if a.create.label_field and isinstance(marked, dict):
                marked[a.create.label_field] = {**(marked.get(a.create.label_field) or {}), CREATE_LABEL: token}
            if self.persist is not None:
                self.persist(obj)  # before the POST: a crash after it leaves the intent behind
        # a create's idempotency key (drive's ?requestId=): the intent's token, so a
        # resent create is the same request to the service
        intent_token = _intent(_ann(obj).get(ANN_CREATE_PENDING) or "")[1] if pending else ""
        keyed = {**values, REQUEST_TOKEN: intent_token or secrets.token_hex(8)}
        try:
            result = send(self.gcp, a, req, keyed, role="create", idempotent=not service_assigned)
        except OperationFailed as e:
            _settled(obj)
            return self._finish(obj, False, "UpdateFailed", f"create of {ext or a.kind} failed: {e.message}", events)
        except Transient as e:
            if pending and e.processed:  # the service may have created it: never send the POST again
                looked = self._look_for_created(obj, a, spec, resolved, values, _ann(obj)[ANN_CREATE_PENDING], f"create of {a.kind} got no clear answer ({e})", events)
                if looked is not None:
                    return looked
                return self._finish(obj, False, "UpdateFailed", f"create of {a.kind} got no clear answer ({e}), and it made nothing (not listed): the next reconcile creates it", events)
            _settled(obj)
            return self._finish(obj, False, "UpdateFailed", f"create of {ext or a.kind} failed: {e}", events)
        except AlreadyExists as e:
            if ext is None:
                _settled(obj)
                return self._finish(obj, False, "UpdateFailed", f"create of {a.kind} failed: {e}", events)
            # Absent at the GET, present at the create: most often our own earlier
            # attempt whose answer was lost. Config Connector acquires a resource
            # of the same name; so does this, through the update path.
            try:
                raw = read_raw(self.gcp, a, self._values(obj, a, ext))
            except GcpError as ge:
                return self._finish(obj, False, "UpdateFailed", f"create of {ext} failed: {e}; GET after it failed: {ge}", events)
            events.append(Event("Normal", "Acquired", f"{ext} already exists: acquired"))
            return self._update(obj, a, ext, spec, resolved, without_marks(a, raw), events, holder=holder, current=leases.found(a, raw))
        except GcpError as e:
            _settled(obj)
            return self._finish(obj, False, "UpdateFailed", f"create of {ext or a.kind} failed: {e}", events)
        _settled(obj)
        if isinstance(a.create, CreateServiceAssigned) and a.create.answer_field and isinstance(result, dict):
            # the resource inside the answer; what is beside it (sqladmin's private key) is dropped here
            result = at_path(result, a.create.answer_field)
        result = without_marks(a, result)
        if isinstance(a.create, CreateByVerb):
            result = None  # the verb answers with its own response: read the resource itself
        new_ext: str | None = ext
        if isinstance(result, dict) and at_path(result, a.id_field):
            try:
                new_ext = self._external_from(a, result, values)
            except IdentityError as e:
                if ext is None:  # named by the service, in a form we cannot read: say so, never guess
                    return self._finish(obj, False, "UpdateFailed", f"created a {a.kind}, but the name in the answer cannot be read: {e}", events)
                # named by us: the answer spells the name another way (monitoring's v3/projects/...)
                events.append(Event("Normal", "Created", f"created {ext}; the answer names it {at_path(result, a.id_field)!r}"))
        if result is None and new_ext is not None:  # compute/dns operations carry no resource
            try:
                result = read_live(self.gcp, a, self._values(obj, a, new_ext))
            except GcpError as e:
                # Created, not yet read: the externalRef is kept, so the next
                # reconcile reads it (and never creates it again).
                self._observe(obj, a, None, new_ext)
                events.append(Event("Normal", "Created", f"created {new_ext}"))
                return self._finish(obj, False, "UpdateFailed", f"created {new_ext}, but reading it back failed: {e}", events)
        if new_ext is None:
            # a service-named create whose answer names nothing: nothing to track
            return self._finish(obj, False, "UpdateFailed", f"create of {a.kind} answered no {a.id_field}: the new resource cannot be named", events)
        result = viewed(a, result)
        if _ann(obj).get(ANN_STATE_INTO_SPEC, "absent").lower() == "merge" and isinstance(result, dict):
            # merge: the first reconcile writes the service's values of unset
            # readable fields into spec; later reconciles enforce them.
            obj["spec"] = merge_into_spec(a, spec, result)
            note_merged(obj, spec)
        self._observe(obj, a, result, new_ext)
        _set_annotation(obj, ANN_SECRET_DIGEST, secret_digest(obj, a, resolved) or None)
        writeonly.record(obj, a, spec_to_api(spec, a, resolved, values))
        events.append(Event("Normal", "Created", f"created {new_ext}"))
        failed = self._sync_companions(a, self._values(obj, a, new_ext), spec, resolved, events)
        if failed:
            return self._finish(obj, False, "UpdateFailed", f"created {new_ext}, but {failed}", events)
        return self._finish(obj, True, "UpToDate", f"created {new_ext}", events)

    # --- a create whose outcome is unknown -----------------------------------------------

    def _look_for_created(
        self, obj: dict[str, Any], a: Adapter, spec: dict[str, Any], resolved: dict[str, Any], values: dict[str, str], intent: str, why: str, events: list[Event]
    ) -> Result | None:
        """Settle a create-pending intent: the reconcile's result when the resource
        was found (adopted, then updated as any acquired one) or cannot be told
        apart; None when the create surely made nothing (create it now)."""
        since, token, _ = _intent(intent)
        found, unknown = self._find_created(obj, a, spec_to_api(spec, a, resolved, values), values, since, token)
        if unknown:
            return self._finish(obj, False, "CreateOutcomeUnknown", f"{why}; {unknown}. " + _outcome_unknown(a, since), events)
        _settled(obj)
        if found is None:
            events.append(Event("Normal", "CreateNotFound", f"the create sent at {since} made no {a.kind}"))
            return None
        ext = self._external_from(a, found, values)
        events.append(Event("Normal", "Adopted", f"the create sent at {since} made {ext}: adopted"))
        try:
            actual = read_live(self.gcp, a, self._values(obj, a, ext))
        except GcpError as e:
            self._observe(obj, a, None, ext)
            return self._finish(obj, False, "UpdateFailed", f"found {ext}, made by the create sent at {since}, but reading it failed: {e}", events)
        return self._update(obj, a, ext, spec, resolved, actual, events)

    def _find_created(
        self, obj: dict[str, Any], a: Adapter, desired: dict[str, Any], values: dict[str, str], since: str, token: str
    ) -> tuple[dict[str, Any] | None, str]:
        """(the resource, "") when listed; (None, "") when surely absent; (None, why) when it cannot be told."""
        shape = a.create
        assert isinstance(shape, CreateServiceAssigned)
        where = f"{a.doc} {'.'.join(a.resource)}"
        if shape.find is None:
            return None, f"{where} has no list method to look for it in"
        try:
            items = self.gcp.list_all(a, shape.find, values, shape.items_field)
        except GcpError as e:
            return None, f"listing {where} to look for it failed: {e}"
        others: list[dict[str, Any]] = []
        if token and shape.label_field:
            hits = [i for i in items if (i.get(shape.label_field) or {}).get(CREATE_LABEL) == token]
        else:
            # No label: the resource is the one listed with our content that no
            # other object owns; a stranger (changed since, or made by hand) is a doubt.
            rows = by_api_path(a.kind)
            if not any(k in rows and rows[k].readable for k in desired):
                # nothing the create sent is read back (a secret version's payload):
                # any listed one could be it, so none is taken for it
                return None, f"nothing {where} answers tells a {a.kind} made by this object from another"
            claimed = self._claimed(obj, a)
            free = [i for i in items if self._external_from(a, i, values) not in claimed]
            hits = [i for i in free if not diff(desired, without_create_label(a, i), a, check_mutability=False)]
            others = [i for i in free if not any(i is h for h in hits)]

        def names(xs: list[dict[str, Any]]) -> str:
            return ", ".join(sorted(self._external_from(a, i, values) for i in xs)[:5])

        if len(hits) == 1:
            return hits[0], ""
        if hits:
            return None, f"{len(hits)} listed resources could be it ({names(hits)})"
        if others:
            return None, f"none listed has its content, but {len(others)} that no object owns could be it, changed since ({names(others)})"
        if shape.call.lro is not Lro.NONE and _age_s(since) < SETTLE_GRACE_S:
            return None, f"it is not listed, but its operation may still be running (looked again after {SETTLE_GRACE_S}s)"
        return None, ""

    def _owner(self, obj: Mapping[str, Any], a: Adapter, ext: str) -> Who | None:
        """Another object that owns ``ext`` (kccgen.runtime.owners), or None."""
        objects = getattr(self.store, "objects", None)
        if objects is None:
            return None
        here = (a.doc, a.resource)

        def same(kind: str) -> bool:
            try:
                other = adapter_for(kind)
            except Exception:  # not a generated Kind
                return False
            return (other.doc, other.resource) == here

        key = f"{a.doc} {'.'.join(a.resource)} {ext}"
        default = getattr(self.store, "default_namespace", "default")
        # verify-only objects never write: they own nothing
        writers = (o for o in objects() if _ann(o).get(ANN_FORCE_ACQUIRE, "").lower() != "true")
        return owner(writers, getattr(self.store, "claims", None), obj, ext, key, same, default)

    def _claimed(self, obj: Mapping[str, Any], a: Adapter) -> set[str]:
        """externalRefs other objects of the Kind hold (a store that can list them)."""
        objects = getattr(self.store, "objects", None)
        if objects is None:
            return set()
        default = getattr(self.store, "default_namespace", "default")

        def key(o: Mapping[str, Any]) -> tuple[str, str]:
            meta = o.get("metadata") or {}
            return str(meta.get("namespace") or default), str(meta.get("name"))

        out = set()
        for o in objects():
            ext = (o.get("status") or {}).get("externalRef")
            if o.get("kind") == a.kind and ext and key(o) != key(obj):
                out.add(str(ext))
        return out

    # --- acquire / update ---------------------------------------------------------------

    def _update(
        self, obj: dict[str, Any], a: Adapter, ext: str | None, spec: dict[str, Any], resolved: dict[str, Any], actual: dict[str, Any], events: list[Event],
        *, holder: str = "", current: leases.Lease | None = None,
    ) -> Result:
        assert ext is not None
        lease = leases.plan(current, holder, _ann(obj).get(leases.ANN_TAKEOVER, "")) if holder else leases.Plan()
        if lease.refused:
            return self._finish(obj, False, "ManagementConflict", f"{ext}: {lease.refused}", events)
        _set_annotation(obj, leases.ANN_TAKEOVER, None)  # taken over, or no longer needed
        enforce, writeback = managed_spec(obj, a, spec, actual, self.manager)
        if writeback != spec:
            obj["spec"] = writeback
            note_merged(obj, spec)
        values = self._values(obj, a, ext)  # once: the mapping expands short names with it, the update is sent with it
        desired = leases.strip(a, spec_to_api(enforce, a, resolved, values))
        diffs = redacted(a, diff(desired, actual, a, check_mutability=True))
        digest = secret_digest(obj, a, resolved)
        recorded = _ann(obj).get(ANN_SECRET_DIGEST)
        if digest and recorded and digest != recorded:
            # a Secret changed: the service never answers its value, so the digest says it
            have = {p for p, _, _ in diffs}
            diffs += [(p, REDACTED, REDACTED) for p in sorted(api_paths(a)) if p not in have and at_path(desired, p) is not None]
        diffs += writeonly.pending(obj, a, desired)  # GET never returns them: compared with the values last applied
        acquired = not (obj.get("status") or {}).get("externalRef")
        if not diffs and (lease.write is None or self.dry_run):
            self._observe(obj, a, actual, ext)
            self._streak(obj, [])
            if acquired:
                events.append(Event("Normal", "Acquired", f"acquired {ext}"))
            if a.companions:
                try:
                    todo = companions.pending(self.gcp, a, values, enforce, resolved)
                except GcpError as e:
                    return self._finish(obj, False, "UpdateFailed", f"reading a paired resource of {ext} failed: {e}", events)
                if todo and self.dry_run:
                    changes = [(f"spec.{p.companion.field}", p.desired, p.actual) for p in todo]
                    return self._finish(obj, False, "WouldUpdate", f"would update {', '.join(c[0] for c in changes)} of {ext}", events, changes=changes)
                failed = self._write_companions(a, values, todo, events)
                if failed:
                    return self._finish(obj, False, "UpdateFailed", f"{ext}: {failed}", events)
            if not self.dry_run:
                _set_annotation(obj, ANN_SECRET_DIGEST, digest or None)
                writeonly.record(obj, a, desired)
            return self._finish(obj, True, "UpToDate", f"{ext} is up to date", events)
        table = by_api_path(a.kind)
        frozen = [(p, table[p]) for p, _, _ in diffs if p in table and not table[p].updatable]
        if frozen:
            names = ", ".join(f"{row.path} ({row.updatable_source})" for _, row in frozen)
            self._observe(obj, a, actual, ext)
            return self._finish(obj, False, "UpdateFailed", f"cannot change immutable field(s) of {ext}: {names}", events)
        before = _ann(obj).get(ANN_STREAK)
        streak = self._streak(obj, diffs)
        if streak > MAX_STREAK:  # written MAX_STREAK times already, reverted each time
            paths = ", ".join(_spec_path(a, p) for p, _, _ in diffs)
            self._observe(obj, a, actual, ext)
            return self._finish(obj, False, "UpdateFailed", f"{paths} of {ext} changed back {streak - 1} times after our updates: the service keeps setting another value; stopped updating", events)
        sent = [p for p, _, _ in diffs]
        field = leases.label_field(a)
        if lease.write is not None:  # obtained, renewed or taken over with this update
            desired = leases.with_lease(a, desired, desired.get(field) if field in desired else actual.get(field) or {}, lease.write)
            sent += [] if field in sent else [field]
        elif current is not None and field:
            # Labels sent (or a whole resource replaced) keep the lease as it stands.
            desired = leases.with_lease(a, desired, desired.get(field) if field in desired else actual.get(field) or {}, current)
            actual = leases.with_lease(a, actual, None, current)
        try:
            reqs = update_requests(a, desired, actual, sent)
        except ValueError as e:  # a routed update with no method for the value asked (a version's DESTROYED)
            self._observe(obj, a, actual, ext)
            return self._finish(obj, False, "UpdateFailed", f"cannot change {ext}: {e}", events)
        if self.dry_run and reqs is not None:
            _set_annotation(obj, ANN_STREAK, before)
            changes = [(_spec_path(a, p), d, x) for p, d, x in diffs]
            return self._finish(obj, False, "WouldUpdate", f"would update {', '.join(c[0] for c in changes)} of {ext}", events, changes=changes)
        if reqs is None:
            return self._finish(obj, False, "UpdateFailed", f"{a.kind} has no update method; changed: {', '.join(_spec_path(a, p) for p, _, _ in diffs)}", events)
        result: Any = None
        for i, req in enumerate(reqs):  # a routed update: one call per route, each waited for
            try:
                result = send(self.gcp, a, req, values, role="update")
            except (OperationFailed, GcpError) as e:
                # Not applied, so not reverted either: the streak counts only writes
                # the service took and then changed back.
                _set_annotation(obj, ANN_STREAK, before)
                why = e.message if isinstance(e, OperationFailed) else str(e)
                done = f" ({i} of {len(reqs)} calls made; the next reconcile sends the rest)" if i else ""
                return self._finish(obj, False, "UpdateFailed", f"update of {ext} failed: {why}{done}", events)
        if len(reqs) > 1 or isinstance(a.update, UpdateRouted):
            result = None  # a verb answers with an operation, not the resource: observe what was asked
        result = without_marks(a, viewed(a, result))
        _set_annotation(obj, ANN_SECRET_DIGEST, digest or None)  # written: what the resource now holds
        writeonly.record(obj, a, desired)
        self._observe(obj, a, result if isinstance(result, dict) and result else without_marks(a, {**actual, **desired}), ext)
        if lease.taken_from:
            events.append(Event("Normal", "LeaseTakenOver", f"{ext}: took over the lease {lease.taken_from!r} held (verified with force-acquire)"))
        if diffs:
            events.append(Event("Normal", "Updated", f"updated {', '.join(_spec_path(a, p) for p, _, _ in diffs)} of {ext}"))
        elif acquired:
            events.append(Event("Normal", "Acquired", f"acquired {ext}"))
        failed = self._sync_companions(a, values, enforce, resolved, events)
        if failed:
            return self._finish(obj, False, "UpdateFailed", f"updated {ext}, but {failed}", events)
        if not diffs:  # the lease alone: not a change of the user's
            return self._finish(obj, True, "UpToDate", f"{ext} is up to date (lease held until {_unix(lease.write.expires) if lease.write else '?'})", events)
        return self._finish(obj, True, "UpToDate", f"updated {ext}", events)

    # --- fields kept in a paired resource (Adapter.companions) ------------------------

    def _sync_companions(self, a: Adapter, values: dict[str, str], spec: dict[str, Any], resolved: dict[str, Any], events: list[Event]) -> str:
        """Read and, where they differ, write the companions the spec sets; "" when done, else why not."""
        if not a.companions:
            return ""
        try:
            todo = companions.pending(self.gcp, a, values, spec, resolved)
        except GcpError as e:
            return f"reading a paired resource failed: {e}"
        return self._write_companions(a, values, todo, events)

    def _write_companions(self, a: Adapter, values: dict[str, str], todo: list[companions.Pending], events: list[Event]) -> str:
        for p in todo:
            try:
                companions.write(self.gcp, a, p, values)
            except companions.AppendOnly as e:
                return f"cannot change spec.{p.companion.field}: {e}"
            except (OperationFailed, GcpError) as e:
                why = e.message if isinstance(e, OperationFailed) else str(e)
                return f"setting spec.{p.companion.field} ({p.companion.doc} {p.companion.update.method}) failed: {why}"
            events.append(Event("Normal", "Updated", f"set spec.{p.companion.field} through {p.companion.doc} {p.companion.update.method}"))
        return ""

    def _streak(self, obj: dict[str, Any], diffs: list[tuple[str, Any, Any]]) -> int:
        """How many consecutive reconciles had to write this same change (paths
        and desired values): a new desired value starts a new count."""
        key = ""
        if diffs:
            import hashlib

            change = json.dumps(sorted((p, d) for p, d, _ in diffs), sort_keys=True, default=str)
            key = ",".join(sorted(p for p, _, _ in diffs)) + "@" + hashlib.sha256(change.encode()).hexdigest()[:12]
        prev = _ann(obj).get(ANN_STREAK, "")
        count = int(prev.rsplit("=", 1)[1]) + 1 if key and prev.rsplit("=", 1)[0] == key and "=" in prev else (1 if key else 0)
        _set_annotation(obj, ANN_STREAK, f"{key}={count}" if count else None)
        return count


# --- diff and update bodies -------------------------------------------------------------
