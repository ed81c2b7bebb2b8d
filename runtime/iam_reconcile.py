"""An IAM Kind's reconcile and delete, on the Reconciler's store, GCP client and status rules.

kccgen.runtime.iam computes the part of the policy an object owns and does the
read-modify-write; this module turns its outcome into the object's status
(Ready with the reasons every Kind uses, ``observedGeneration``,
``externalRef`` naming the resource, IAMPartialPolicy's ``lastAppliedBindings``
and ``allBindings``, IAMPolicyMember's ``binding``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kccgen.contract import Owns, PolicyAdapter
from kccgen.runtime.gcp import GcpError, NotFound
from kccgen.runtime.iam import (
    Nothing,
    PolicyRefused,
    Target,
    Want,
    as_list,
    as_sets,
    merged,
    modify,
    read_policy,
    same,
    target_of,
    wanted,
)
from kccgen.runtime.refs import Reason, RefError

if TYPE_CHECKING:
    from kccgen.runtime.reconciler import Reconciler, Result

ANN_FORCE_ACQUIRE = "cnrm.cloud.google.com/force-acquire"
ANN_DELETION_POLICY = "cnrm.cloud.google.com/deletion-policy"
ANN_ACTUATION = "cnrm.cloud.google.com/actuation-mode"


def _ann(obj: Mapping[str, Any]) -> dict[str, str]:
    return dict((obj.get("metadata") or {}).get("annotations") or {})


def _audit(p: PolicyAdapter) -> bool:
    return p.owns in (Owns.POLICY, Owns.AUDIT_CONFIG)


def _paused(rec: Reconciler, obj: Mapping[str, Any]) -> bool:
    return rec.paused or _ann(obj).get(ANN_ACTUATION, "").lower() == "paused" or rec._namespace_paused(obj)


def _status(obj: dict[str, Any], p: PolicyAdapter, t: Target, w: Want, policy: Mapping[str, Any]) -> None:
    status = obj.setdefault("status", {})
    status["externalRef"] = t.external
    if p.owns is Owns.BINDINGS:
        status["lastAppliedBindings"] = as_list(w.add)
        status["allBindings"] = as_list(as_sets(policy.get("bindings")))
    if p.owns is Owns.MEMBER:
        ((role, _), members), = w.add.items()
        binding: dict[str, Any] = {"role": role, "member": next(iter(members))}
        cond = (obj.get("spec") or {}).get("condition")
        if cond:
            binding["condition"] = dict(cond)
        status["binding"] = binding


def reconcile(rec: Reconciler, original: Mapping[str, Any], p: PolicyAdapter) -> Result:
    obj = copy.deepcopy(dict(original))
    if _paused(rec, obj):
        return rec._finish(obj, False, "Paused", "actuation is paused: no GCP call was made", [])
    if (obj.get("metadata") or {}).get("deletionTimestamp"):
        return delete(rec, obj, p)
    try:
        t = target_of(obj, p, rec.store)
        w = wanted(obj, p, rec.store)
    except PolicyRefused as e:
        return rec._finish(obj, False, e.reason, str(e), [])
    except RefError as e:
        reason = e.reason.value if e.reason in (Reason.NOT_FOUND, Reason.NOT_READY) else "UpdateFailed"
        return rec._finish(obj, False, reason, str(e), [])
    verify_only = _ann(obj).get(ANN_FORCE_ACQUIRE, "").lower() == "true"
    try:
        if verify_only:
            live = read_policy(rec.gcp, t)
            if not same(merged(live, w), live):
                return rec._finish(obj, False, "UpdateFailed", f"force-acquire: the IAM policy of {t.external} does not hold what this {p.kind} says; nothing was written", [])
            _status(obj, p, t, w, live)
            return rec._finish(obj, True, "UpToDate", f"force-acquire: the IAM policy of {t.external} holds it", [])
        policy, wrote = modify(rec.gcp, t, lambda live: merged(live, w), _audit(p), dry_run=rec.dry_run)
    except NotFound:
        return rec._finish(obj, False, "UpdateFailed", f"{t.kind} {t.external} does not exist: its IAM policy cannot be read", [])
    except GcpError as e:
        return rec._finish(obj, False, "UpdateFailed", f"IAM policy of {t.external}: {e}", [])
    if rec.dry_run and wrote:
        changes = [("bindings", policy.get("bindings"), None)] + ([("auditConfigs", policy.get("auditConfigs"), None)] if _audit(p) else [])
        return rec._finish(obj, False, "WouldUpdate", f"would update the IAM policy of {t.external}", [], changes=changes)
    _status(obj, p, t, w, policy)
    what = "updated" if wrote else "up to date"
    return rec._finish(obj, True, "UpToDate", f"the IAM policy of {t.external} is {what}", [])


def delete(rec: Reconciler, original: Mapping[str, Any], p: PolicyAdapter) -> Result:
    """Take out exactly what the object owned (IAMPartialPolicy: what it last wrote)."""
    obj = copy.deepcopy(dict(original))
    if _paused(rec, obj):
        return rec._finish(obj, False, "Paused", "actuation is paused: not deleted", [])
    ann = _ann(obj)
    if ann.get(ANN_DELETION_POLICY, "").lower() == "abandon":
        return rec._finish(obj, True, "Abandoned", "deletion-policy abandon: the IAM policy was left as it is", [], deleted=True)
    if ann.get(ANN_FORCE_ACQUIRE, "").lower() == "true":
        return rec._finish(obj, True, "Released", "force-acquire: verify-only objects never write", [], deleted=True)
    status = obj.get("status") or {}
    if not status.get("externalRef"):
        return rec._finish(obj, True, "Deleted", "nothing to remove: it never wrote the policy", [], deleted=True)
    try:
        t = target_of(obj, p, rec.store)
    except (PolicyRefused, RefError):
        # the named object is gone (deleted first): its recorded name still says where
        recorded = _recorded(obj, p)
        if recorded is None:
            return rec._finish(obj, True, "Deleted", f"{status['externalRef']} is gone with its policy", [], deleted=True)
        t = recorded
    if p.owns is Owns.BINDINGS:
        w = Want(as_sets(status.get("lastAppliedBindings")), {})
    elif p.owns is Owns.MEMBER and status.get("binding"):
        b = status["binding"]
        w = Want(as_sets([{"role": b.get("role"), "members": [b.get("member")], "condition": b.get("condition")}]), {})
    else:
        try:
            w = wanted(obj, p, rec.store)
        except (PolicyRefused, RefError) as e:
            return rec._finish(obj, False, "DeleteFailed", f"cannot tell what it owned: {e}", [])
    try:
        _policy, wrote = modify(rec.gcp, t, lambda live: merged(live, w, removing=True), _audit(p), dry_run=rec.dry_run)
    except NotFound:
        return rec._finish(obj, True, "Deleted", f"{t.external} is gone with its policy", [], deleted=True)
    except GcpError as e:
        return rec._finish(obj, False, "DeleteFailed", f"IAM policy of {t.external}: {e}", [])
    if rec.dry_run:
        return rec._finish(obj, False, "WouldDelete", f"would remove its part of the IAM policy of {t.external}", [])
    return rec._finish(obj, True, "Deleted", f"removed its part of the IAM policy of {t.external}" if wrote else f"the IAM policy of {t.external} no longer held its part", [], deleted=True)


def _recorded(obj: Mapping[str, Any], p: PolicyAdapter) -> Target | None:
    """The target from ``status.externalRef`` and the reference's Kind, without the store."""
    from kccgen.runtime.identity import IdentityError

    ref = (obj.get("spec") or {}).get("resourceRef") or {}
    try:
        return target_of({**obj, "spec": {**(obj.get("spec") or {}), "resourceRef": {"kind": ref.get("kind"), "external": (obj.get("status") or {}).get("externalRef")}}}, p, Nothing())
    except (PolicyRefused, RefError, IdentityError, KeyError):
        return None
