"""One active operator instance per installation: leader election over a Lease.

Two instances (two replicas, or the surge pod of a rolling update) that both
reconcile the same objects double every write and, for a create whose ID the
service picks, can make two resources. The instance that holds the
``coordination.k8s.io/v1`` Lease reconciles; the others wait, healthy, and take
over when it stops renewing. The rules are client-go's: a holder renews every
``RENEW_S`` and stops acting when it could not renew for ``DEADLINE_S``, less
than the ``LEASE_S`` a follower waits (timed by its own clock from the last
change it saw, so clock skew does not matter) before it takes the Lease.
Every change is a replace with the read ``resourceVersion``: of two instances
trying at once, one wins and the other sees a conflict. A clean shutdown
releases the Lease, so a rolling hand-over takes one retry period, not a lease.

A server without the coordination API (tools/envtest's default) has no
election: every instance reconciles, and the create guards (the intent written
with a resourceVersion precondition, kccgen.runtime.reconciler) still keep one
resource per object.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

log = logging.getLogger("kccgen.election")

LEASE_S = 15  # a follower takes an unrenewed Lease after this long
RENEW_S = 2.0  # the holder renews this often
DEADLINE_S = 10.0  # the holder stops acting when it could not renew for this long
RETRY_S = 1.0  # a follower looks this often
REQUEST_TIMEOUT_S = 4.0  # one Lease request: a hung one must not outlast the deadline
_SA_NAMESPACE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"


def lease_name(crd_pattern: str | None, namespaces: tuple[str, ...]) -> str:
    """One Lease per installation: instances that split the work (other Kinds,
    other namespaces) elect apart; replicas of one installation share it."""
    if not crd_pattern and not namespaces:
        return "kccgen-operator"
    digest = hashlib.sha256(f"{crd_pattern or '*'}|{','.join(sorted(namespaces))}".encode()).hexdigest()[:10]
    return f"kccgen-operator-{digest}"


def lease_namespace(given: str | None) -> str:
    """The flag's, else the pod's own namespace, else ``default``."""
    if given:
        return given
    try:
        with open(_SA_NAMESPACE, encoding="utf-8") as f:
            return f.read().strip() or "default"
    except OSError:
        return "default"


class Elector:
    """The Lease, read and written synchronously (the kubernetes client); the
    operator calls :meth:`step` from a thread every ``RETRY_S``/``RENEW_S``."""

    def __init__(self, api_client: Any, namespace: str, name: str, holder: str, clock: Callable[[], float] = time.monotonic) -> None:
        from kubernetes import client

        self.api: Any = client.CoordinationV1Api(api_client)
        self.namespace = namespace
        self.name = name
        self.holder = holder
        self.clock = clock
        self.leading = False
        self.renewed_at = 0.0  # our clock, at the last successful acquire or renew
        self._seen: tuple[str, float] = ("", 0.0)  # (resourceVersion, our clock when first seen)
        self.other = ""  # the holder we wait for, for the log

    @staticmethod
    def available(api_client: Any) -> bool:
        """Whether the server serves Leases."""
        from kubernetes import client

        try:
            names = {r.name for r in client.CoordinationV1Api(api_client).get_api_resources().resources or []}
        except Exception:
            return False
        return "leases" in names

    def _spec(self, transitions: int, acquired: datetime | None) -> Any:
        from kubernetes import client

        now = datetime.now(UTC)
        return client.V1LeaseSpec(
            holder_identity=self.holder, lease_duration_seconds=LEASE_S, acquire_time=acquired or now, renew_time=now, lease_transitions=transitions
        )

    def step(self) -> bool:
        """One round: create, renew or take the Lease if we may. Whether we lead."""
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        now = self.clock()
        try:
            lease = self.api.read_namespaced_lease(self.name, self.namespace, _request_timeout=REQUEST_TIMEOUT_S)
        except ApiException as e:
            if e.status != 404:
                return self._failed(now, e)
            body = client.V1Lease(metadata=client.V1ObjectMeta(name=self.name, namespace=self.namespace), spec=self._spec(0, None))
            try:
                self.api.create_namespaced_lease(self.namespace, body, _request_timeout=REQUEST_TIMEOUT_S)
            except ApiException as ce:
                return self._failed(now, ce)
            return self._won(now)
        except Exception as e:  # the server is unreachable
            return self._failed(now, e)
        spec = lease.spec or client.V1LeaseSpec()
        rv = str(lease.metadata.resource_version)
        if rv != self._seen[0]:
            self._seen = (rv, now)
        mine = spec.holder_identity == self.holder
        duration = float(spec.lease_duration_seconds or LEASE_S)
        free = not spec.holder_identity or now - self._seen[1] >= duration
        if not mine and not free:
            self.other = str(spec.holder_identity)
            return self._lost(f"held by {spec.holder_identity}")
        transitions = int(spec.lease_transitions or 0) + (0 if mine else 1)
        lease.spec = self._spec(transitions, spec.acquire_time if mine else None)
        try:
            self.api.replace_namespaced_lease(self.name, self.namespace, lease, _request_timeout=REQUEST_TIMEOUT_S)  # the read resourceVersion: a precondition
        except Exception as e:
            return self._failed(now, e)
        return self._won(now)

    def _won(self, now: float) -> bool:
        if not self.leading:
            log.info("leading: lease %s/%s acquired by %s", self.namespace, self.name, self.holder)
        self.leading, self.renewed_at = True, now
        return True

    def _lost(self, why: str) -> bool:
        if self.leading:
            log.warning("lease %s/%s lost (%s): stopping", self.namespace, self.name, why)
        self.leading = False
        return False

    def _failed(self, now: float, e: Exception) -> bool:
        """A failed read or write: a holder keeps leading until its deadline."""
        if self.leading and now - self.renewed_at < DEADLINE_S:
            log.debug("lease %s/%s not renewed yet: %s", self.namespace, self.name, str(e).splitlines()[0][:200])
            return True
        return self._lost(f"not renewed for {DEADLINE_S:.0f}s: {str(e).splitlines()[0][:200]}")

    def release(self) -> None:
        """Give the Lease up at a clean stop, so a follower takes it at once."""
        if not self.leading:
            return
        self.leading = False
        try:
            lease = self.api.read_namespaced_lease(self.name, self.namespace, _request_timeout=REQUEST_TIMEOUT_S)
            if lease.spec is None or lease.spec.holder_identity != self.holder:
                return
            lease.spec.holder_identity = None
            lease.spec.lease_duration_seconds = 1
            self.api.replace_namespaced_lease(self.name, self.namespace, lease, _request_timeout=REQUEST_TIMEOUT_S)
            log.info("lease %s/%s released", self.namespace, self.name)
        except Exception as e:
            log.info("lease %s/%s not released (%s): a follower takes it after %ds", self.namespace, self.name, str(e).splitlines()[0][:200], LEASE_S)


def holder_identity() -> str:
    """This process: the pod's name (its hostname) and the pid, unique among the
    instances that may run at once."""
    return f"{os.environ.get('HOSTNAME') or os.uname().nodename}_{os.getpid()}"


def holder_alive(holder: str) -> bool:
    """False only when ``holder`` was a process of this host that is gone (an
    instance restarted in place); another host's process may be alive."""
    host, _, pid = holder.rpartition("_")
    if host != (os.environ.get("HOSTNAME") or os.uname().nodename) or not pid.isdigit():
        return True
    if int(pid) == os.getpid():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
