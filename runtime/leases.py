"""Leases on GCP resources across installations, Config Connector's way.

Two installations (two clusters, or a cluster and a kccctl state) that name
one resource cannot see each other's objects; only the resource is shared.
Where the resource has a labels map the update method can change, an object
whose management-conflict-prevention policy is ``resource`` holds a lease on
it: the labels ``cnrm-lease-holder-id`` (its installation's ID) and
``cnrm-lease-expiration`` (unix seconds), written with the create, and renewed
within an update the reconcile makes anyway or, once less than 20 of the 40
minutes remain, alone. An object that finds another holder's unexpired lease
is refused by name and writes nothing. The labels are never the user's: they
are left out of every diff, and an update that sends the labels keeps
another holder's lease as it was.

As in Config Connector the policy is the object's annotation
``cnrm.cloud.google.com/management-conflict-prevention-policy`` (``none`` or
``resource``), else its Namespace's, else ``none`` (Config Connector turned
the default off because renewals flipped objects to not Ready; here a renewal
never changes the Ready condition). Taking a resource over is explicit: a
force-acquire object (verify only, seeds/force-acquire) that finds the spec
matching records the holder it verified against, and once force-acquire is
removed that object's reconcile writes its own lease over that holder's.
Releasing on abandon removes our labels, so another installation may acquire
the resource at once instead of after the expiry.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kccgen.contract import Adapter, TypeKind
from kccgen.runtime.mutability import by_api_path

ANN_POLICY = "cnrm.cloud.google.com/management-conflict-prevention-policy"
ANN_TAKEOVER = "kccgen.dev/lease-takeover"  # the holder a force-acquire verification accepted
HOLDER_LABEL = "cnrm-lease-holder-id"
EXPIRATION_LABEL = "cnrm-lease-expiration"
LEASE_S = 40 * 60  # Config Connector's TimeToLeaseExpiration
RENEW_S = 20 * 60  # renew once less than this remains (TimeToLeaseRenewal)
POLICIES = ("none", "resource")


class LeaseError(ValueError):
    """A policy that cannot apply to this object: the message names the annotation."""


def now() -> float:
    """The clock leases are measured by (tests move it)."""
    return time.time()


def label_field(a: Adapter) -> str:
    """The API's labels map when the update can change it and GET returns it; else ""."""
    return _label_field(a.kind)


@functools.cache
def _label_field(kind: str) -> str:
    """Per Kind, once: every GET passes through ``strip``."""
    row = by_api_path(kind).get("labels")
    if row is None or row.path != "spec.labels" or row.type.kind is not TypeKind.MAP or not row.updatable or not row.readable:
        return ""
    return "labels"


def policy(obj: Mapping[str, Any], namespace: Mapping[str, Any] | None, a: Adapter) -> str:
    """The object's policy: its annotation, else its Namespace's, else ``none``.
    An invalid value, or ``resource`` on a Kind without updatable labels, is refused."""
    anns = (obj.get("metadata") or {}).get("annotations") or {}
    ns_anns = ((namespace or {}).get("metadata") or {}).get("annotations") or {}
    own = anns.get(ANN_POLICY)
    value = str(own if own is not None else ns_anns.get(ANN_POLICY, "none")).strip().lower()
    where = "the object's" if own is not None else "its Namespace's"
    if value not in POLICIES:
        raise LeaseError(f"{where} annotation {ANN_POLICY}={value!r} is not one of {', '.join(POLICIES)}")
    if value == "resource" and not label_field(a):
        if own is None:
            return "none"  # a Namespace default applies where it can, as in Config Connector
        raise LeaseError(f"kind {a.kind} does not support {ANN_POLICY}=resource: its resource has no labels the update can change")
    return value


@dataclass(frozen=True)
class Lease:
    holder: str
    expires: int  # unix seconds

    def labels(self) -> dict[str, str]:
        return {HOLDER_LABEL: self.holder, EXPIRATION_LABEL: str(self.expires)}

    def left_s(self) -> float:
        return self.expires - now()


def found(a: Adapter, resource: Any) -> Lease | None:
    """The lease on a resource as read (before ``strip``), or None."""
    field = label_field(a)
    labels = resource.get(field) if field and isinstance(resource, dict) else None
    if not isinstance(labels, dict) or HOLDER_LABEL not in labels:
        return None
    try:
        expires = int(str(labels.get(EXPIRATION_LABEL, "0")))
    except ValueError:
        expires = 0  # unreadable: expired, as Config Connector reads it
    return Lease(str(labels[HOLDER_LABEL]), expires)


def strip(a: Adapter, resource: Any) -> Any:
    """The resource without lease labels: they are never the user's, so never drift."""
    field = label_field(a)
    if not field or not isinstance(resource, dict):
        return resource
    labels = resource.get(field)
    if not isinstance(labels, dict) or not (HOLDER_LABEL in labels or EXPIRATION_LABEL in labels):
        return resource
    rest = {k: v for k, v in labels.items() if k not in (HOLDER_LABEL, EXPIRATION_LABEL)}
    return {**resource, field: rest} if rest else {k: v for k, v in resource.items() if k != field}


@dataclass(frozen=True)
class Plan:
    """What the reconcile does about the lease: ``refused`` (a message), or
    ``write`` (the lease to write: None when the current one stands)."""

    refused: str = ""
    write: Lease | None = None
    taken_from: str = ""  # the holder whose unexpired lease this write replaces


def fresh(holder: str) -> Lease:
    return Lease(holder, int(now()) + LEASE_S)


def plan(current: Lease | None, holder: str, takeover: str = "") -> Plan:
    """Obtain, renew, keep or refuse (Config Connector's softObtain)."""
    if current is None or current.left_s() <= 0:
        return Plan(write=fresh(holder))
    if current.holder == holder:
        return Plan(write=fresh(holder) if current.left_s() < RENEW_S else None)
    if takeover and takeover == current.holder:
        return Plan(write=fresh(holder), taken_from=current.holder)
    return Plan(refused=refusal(current))


def refusal(current: Lease) -> str:
    return (
        f"the resource is under lease by {current.holder!r} for another {int(current.left_s())}s "
        f"(labels {HOLDER_LABEL}/{EXPIRATION_LABEL}): another installation manages it. "
        f"Stop managing it there, or take it over: verify it with the annotation cnrm.cloud.google.com/force-acquire: \"true\", "
        f"then remove that annotation"
    )


def with_lease(a: Adapter, body: dict[str, Any], base: Mapping[str, str] | None, lease: Lease) -> dict[str, Any]:
    """``body`` whose labels are ``base`` (or its own) plus the lease's."""
    field = label_field(a)
    labels = dict(base if base is not None else body.get(field) or {})
    labels.update(lease.labels())
    return {**body, field: labels}
