"""The runtime operator: kopf handlers for every generated Kind, one loop per object.

``kccctl operator`` runs it. The Kinds come from the registry (filtered by a
``--crd-pattern``, kccgen.patterns); each gets the same three handlers, and no
Kind has code of its own:

* ``on.event`` keeps an in-memory copy of every watched object (the
  reconciler's ObjectStore: references resolve without an API call) and wakes
  the object's loop when its spec (generation) or annotations change, and the
  objects waiting on it when it becomes Ready: a dependency that appears is
  noticed at once, not on the next resync;
* a daemon per object reconciles through :class:`Reconciler` (the rules of
  docs/design.md §5, shared with ``kccctl apply``), writes ``status`` through the status
  subresource, then sleeps: the resync interval with jitter (0.5-1.5×) when
  Ready, ``cnrm.cloud.google.com/reconcile-interval-in-seconds`` when set (0:
  only on change), exponential backoff (250 ms to 2 min) after a failure;
* ``on.delete`` holds the ``cnrm.cloud.google.com/finalizer`` finalizer until
  the GCP resource is deleted (or abandoned: ``deletion-policy: abandon``, a
  force-acquired object, or the Kind's CRD being deleted, the deletion
  defender's rule: uninstalling never deletes GCP resources).

Bounded work: a pool of threads runs reconciles (``workers``), each Kind at
most ``per_kind`` at a time, at most ``reconcile_qps`` reconciles a second in
all, and the GCP client keeps ``gcp_qps`` per API and project. Every write to
the cluster carries field manager ``kccgen``: kopf's own (finalizers) by the
session's user agent, ours by ``fieldManager``. Pausing: the object's or its
namespace's ``cnrm.cloud.google.com/actuation-mode: Paused``, or the operator's
``--actuation-mode Paused``.

The test server (tools/envtest) has no core API: without Events the events are
logged, without Namespaces namespace annotations are not read; one log line
says so at start.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import hashlib
import json
import logging
import os
import random
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from kccgen.patterns import selects
from kccgen.runtime.election import (
    RENEW_S,
    RETRY_S,
    Elector,
    holder_alive,
    holder_identity,
    lease_name,
    lease_namespace,
)
from kccgen.runtime.gcp import Gcp
from kccgen.runtime.local import named_references
from kccgen.runtime.managed import ssa_owners
from kccgen.runtime.owners import Claims
from kccgen.runtime.reconciler import (
    ANN_CREATE_PENDING,
    ANN_STREAK,
    MANAGER,
    Event,
    Reconciler,
    Result,
)
from kccgen.runtime.refs import CLUSTER_SCOPED, PROJECT_ID_ANNOTATION, Reason, RefError
from kccgen.runtime.registry import kind_index, resource_of

__all__ = ["ANN_INTERVAL", "FINALIZER", "KindInfo", "Operator", "OperatorError", "Settings", "served_kinds"]

log = logging.getLogger("kccgen.operator")

FINALIZER = "cnrm.cloud.google.com/finalizer"
ANN_INTERVAL = "cnrm.cloud.google.com/reconcile-interval-in-seconds"
USER_AGENT = "kccgen/0.1.0"  # the API server names the field manager of kopf's own patches after it
BACKOFF_MIN_S = 0.25
BACKOFF_MAX_S = 120.0
# An object waiting for a dependency is woken by the dependency's events; the
# timer only covers what no watch of this instance sees (another instance's Kind).
WAIT_FALLBACK_S = 10.0
# Reasons after which the object waits for something to change (a dependency,
# the user) rather than retrying soon.
WAITING = frozenset({"DependencyNotFound", "DependencyNotReady"})
SETTLED = frozenset({"UpToDate", "Paused", "DriftDetected", "ResourceNotFound"})
SHUTDOWN_WAIT_S = 30.0
# Every request to the API server ends: without a timeout the client waits for
# ever on a connection the server (or a network between) dropped silently.
KUBE_TIMEOUT_S = 30.0
# While GCP answers nothing, failed objects retry at least this often; the first
# answer after the outage wakes them all (Operator._wake_backed_off).
OUTAGE_BACKOFF_MAX_S = 4.0  # at a stop, how long the reconciles in flight may take to finish
# The reconciler's own annotations, and kopf's: a change to them is not the user's.
OWN_ANNOTATION_PREFIXES = ("kccgen.dev/", "kopf.zalando.org/")


class Superseded(RuntimeError):
    """The object changed between the read and a guarded write: read it again."""


#: Where the operator stores a create intent: in status, so that the status
#: write recording the created resource (externalRef) also removes it. The
#: reconciler reads and writes the intent as the annotation kccctl's state
#: keeps; objects from before this field keep theirs in the annotation.
STATUS_INTENT = "createPending"


def _for_reconcile(obj: dict[str, Any], streak: str | None) -> dict[str, Any]:
    """``obj`` as the reconciler reads it: with the update streak this instance
    keeps for it (never stored in the cluster) and a stored create intent."""
    meta = dict(obj.get("metadata") or {})
    anns = {k: v for k, v in (meta.get("annotations") or {}).items() if k != ANN_STREAK}
    if streak:
        anns[ANN_STREAK] = streak
    intent = (obj.get("status") or {}).get(STATUS_INTENT)
    if intent and ANN_CREATE_PENDING not in anns:
        anns[ANN_CREATE_PENDING] = intent
    return {**obj, "metadata": {**meta, "annotations": anns}}


class OperatorError(RuntimeError):
    """The operator cannot start; the message is one line for stderr."""


@dataclass(frozen=True)
class KindInfo:
    kind: str
    group: str
    version: str
    plural: str


def served_kinds(pattern: str | None = None) -> list[KindInfo]:
    """The generated Kinds the pattern selects, from the registry (generated/kinds.json)."""
    out = []
    for kind in kind_index():
        group, version, plural = resource_of(kind)
        if selects(pattern, kind, group):
            out.append(KindInfo(kind, group, version, plural))
    return out


@dataclass
class Settings:
    """What ``kccctl operator`` takes; the same meaning as for ``kccctl apply``."""

    endpoint: str | None = None
    project: str | None = None
    crd_pattern: str | None = None
    namespaces: tuple[str, ...] = ()  # empty: every namespace
    kubeconfig: str | None = None
    host_paths: bool = False  # each API under its own host on the endpoint (mockgcp)
    workers: int = 16
    per_kind: int = 4
    reconcile_qps: float = 50.0
    gcp_qps: float = 20.0
    resync_s: float = 600.0
    paused: bool = False
    health_port: int | None = 8080  # /healthz /readyz /metrics; None: off, 0: any free port
    health_host: str = "127.0.0.1"  # --metrics-bind; the bundle's pod binds 0.0.0.0 for its probes
    webhook_port: int | None = None
    webhook_host: str = "0.0.0.0"
    webhook_service: str | None = None
    webhook_namespace: str | None = None
    webhook_config: str | None = None
    seed: int | None = None
    leader_elect: bool = True  # where the server has Leases: one instance of an installation acts
    lease_namespace: str | None = None  # default: the pod's namespace, else "default"


def interval_of(obj: Mapping[str, Any], default: float) -> float | None:
    """Seconds until the next resync of a Ready object: the annotation when set and valid
    (0: none), else the default; None means no periodic resync."""
    raw = ((obj.get("metadata") or {}).get("annotations") or {}).get(ANN_INTERVAL)
    if raw is not None:
        try:
            value = float(str(raw).strip())
        except ValueError:
            value = -1.0
        if value == 0:
            return None
        if value > 0:
            return value
        log.warning("%s: %s=%r is not a number of seconds; using %ss", _ref(obj), ANN_INTERVAL, raw, default)
    return default if default > 0 else None


def backoff_s(failures: int) -> float:
    """250 ms doubling to 2 min: the n-th consecutive failure's wait."""
    return min(BACKOFF_MAX_S, BACKOFF_MIN_S * 2.0 ** max(0, failures - 1))


def _ref(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    return f"{obj.get('kind')} {ns + '/' if ns else ''}{meta.get('name')}"


def _one_line(e: Exception) -> str:
    """An error as one line; for the API server's, its status and message."""
    body = getattr(e, "body", None)
    if body:
        try:
            msg = json.loads(body).get("message")
        except (ValueError, AttributeError):
            msg = None
        if msg:
            return f"{getattr(e, 'status', '')} {getattr(e, 'reason', '')}: {str(msg).splitlines()[0]}"[:300]
    return (str(e).splitlines() or [""])[0][:300]


def _key(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    meta = obj.get("metadata") or {}
    ns = "" if obj.get("kind") in CLUSTER_SCOPED else str(meta.get("namespace") or "default")
    return str(obj.get("kind")), ns, str(meta.get("name"))


def _ready(obj: Mapping[str, Any]) -> bool:
    conds = (obj.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conds)


def _user_annotations(obj: Mapping[str, Any]) -> dict[str, str]:
    anns = (obj.get("metadata") or {}).get("annotations") or {}
    return {k: v for k, v in anns.items() if not k.startswith(OWN_ANNOTATION_PREFIXES) and k != "kubectl.kubernetes.io/last-applied-configuration"}


class Metrics:
    """Prometheus metrics in a registry of their own (tests run several operators)."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge

        self.registry = CollectorRegistry()
        self.reconciles = Counter("kccgen_reconciles", "reconciles by Kind and outcome (the Ready reason)", ["kind", "reason"], registry=self.registry)
        self.errors = Counter("kccgen_reconcile_errors", "reconciles that did not reach Ready, by Kind and reason", ["kind", "reason"], registry=self.registry)
        self.gcp_calls = Counter("kccgen_gcp_calls", "requests sent to GCP by API, method and HTTP verb", ["api", "method", "verb"], registry=self.registry)
        self.queue = Gauge("kccgen_queue_depth", "objects waiting for a worker", registry=self.registry)
        self.running = Gauge("kccgen_reconciles_in_flight", "reconciles running now", registry=self.registry)
        self.objects = Gauge("kccgen_objects", "objects watched", registry=self.registry)
        self.writes = Counter("kccgen_kube_writes", "writes to the Kubernetes API by kind of write", ["what"], registry=self.registry)

    def gcp(self, what: str, verb: str) -> None:
        """``what`` is the GCP client's ``<document> <resource chain>.<method>``."""
        api, _, method = what.partition(" ")
        self.gcp_calls.labels(api, method, verb).inc()

    def text(self) -> bytes:
        from prometheus_client import generate_latest

        return bytes(generate_latest(self.registry))


class RateLimiter:
    """A token bucket for the event loop: at most ``qps`` acquisitions a second."""

    def __init__(self, qps: float) -> None:
        self.qps = qps
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def acquire(self) -> None:
        if self.qps <= 0:
            return
        async with self._lock:
            now = time.monotonic()
            slot = max(now, self._next)
            self._next = slot + 1.0 / self.qps
        if slot > now:
            await asyncio.sleep(slot - now)


class Cluster:
    """Synchronous writes and reads for the reconcile threads (the kubernetes client),
    each write with field manager ``kccgen``."""

    def __init__(self, api_client: Any, kinds: Mapping[str, KindInfo], metrics: Metrics) -> None:
        from kubernetes import client

        # Any: the client's typed answers for custom objects are plain ``object``.
        self.api: Any = client.CustomObjectsApi(api_client)
        self.core: Any = client.CoreV1Api(api_client)
        self.ext: Any = client.ApiextensionsV1Api(api_client)
        self.kinds = kinds
        self.metrics = metrics
        self.has_events = False
        self.has_namespaces = False

    def discover_core(self) -> None:
        """Which core resources this server has (the test server has none)."""
        try:
            names = {r.name for r in self.core.get_api_resources().resources or []}
        except Exception as e:  # the server answers 404 on /api/v1 without a core API
            log.info("the server has no core API (%s)", str(e).splitlines()[0][:120])
            names = set()
        self.has_events = "events" in names
        self.has_namespaces = "namespaces" in names
        if not self.has_events:
            log.info("the Events API is absent: events are logged, not posted")
        if not self.has_namespaces:
            log.info("the Namespaces API is absent: namespace annotations (project-id, actuation-mode) are not read")

    def _info(self, obj: Mapping[str, Any]) -> KindInfo:
        return self.kinds[str(obj["kind"])]

    def get(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        from kubernetes.client.exceptions import ApiException

        try:
            if kind == "Namespace":
                if not self.has_namespaces:
                    return None
                return dict(self.api.api_client.sanitize_for_serialization(self.core.read_namespace(name, _request_timeout=KUBE_TIMEOUT_S)))
            if kind == "Secret":  # a sensitive field's value (kccgen.runtime.secrets); never cached
                return dict(self.api.api_client.sanitize_for_serialization(self.core.read_namespaced_secret(name, namespace, _request_timeout=KUBE_TIMEOUT_S)))
            info = self.kinds.get(kind)
            if info is None:
                if kind not in kind_index():
                    return None
                info = KindInfo(kind, *resource_of(kind))
            got = self.api.get_namespaced_custom_object(info.group, info.version, namespace, info.plural, name, _request_timeout=KUBE_TIMEOUT_S)
            return dict(got)
        except ApiException as e:
            if e.status == 404:
                return None
            raise

    def patch_annotations(self, obj: Mapping[str, Any], changes: Mapping[str, str | None], *, guarded: bool = False) -> dict[str, Any]:
        """A merge patch of our annotations (None removes one); ``guarded``: only
        on the version read (``resourceVersion`` precondition, 409 otherwise)."""
        info = self._info(obj)
        meta = obj["metadata"]
        body: dict[str, Any] = {"metadata": {"annotations": dict(changes)}}
        if guarded and meta.get("resourceVersion"):
            body["metadata"]["resourceVersion"] = meta["resourceVersion"]
        stored = dict(
            self.api.patch_namespaced_custom_object(
                info.group, info.version, meta["namespace"], info.plural, meta["name"], body, field_manager=MANAGER, _request_timeout=KUBE_TIMEOUT_S, _content_type="application/merge-patch+json"
            )
        )
        self.metrics.writes.labels("annotations").inc()  # counted when taken: a refused (409) write is none
        return stored

    def apply_status(self, obj: Mapping[str, Any], status: Mapping[str, Any], *, guarded: bool = False) -> dict[str, Any]:
        """Server-side apply of the whole status through the status subresource:
        what we stop writing (an observedState field gone) is removed. ``guarded``:
        only on the version read (``resourceVersion`` precondition, 409 otherwise)."""
        info = self._info(obj)
        meta = obj["metadata"]
        body: dict[str, Any] = {"apiVersion": f"{info.group}/{info.version}", "kind": info.kind, "metadata": {"name": meta["name"], "namespace": meta["namespace"]}, "status": status}
        if guarded and meta.get("resourceVersion"):
            body["metadata"]["resourceVersion"] = meta["resourceVersion"]
        stored = dict(
            self.api.patch_namespaced_custom_object_status(
                info.group, info.version, meta["namespace"], info.plural, meta["name"], body,
                field_manager=MANAGER, force=True, _request_timeout=KUBE_TIMEOUT_S, _content_type="application/apply-patch+yaml",
            )
        )
        self.metrics.writes.labels("status").inc()
        return stored

    def apply_spec(self, obj: Mapping[str, Any], spec: Mapping[str, Any]) -> dict[str, Any] | None:
        """Server-side apply of the spec fields state-into-spec merge adds, as
        ``kccgen``, without force: a field a user owns is never taken (409: skipped)."""
        from kubernetes.client.exceptions import ApiException

        info = self._info(obj)
        meta = obj["metadata"]
        body = {"apiVersion": f"{info.group}/{info.version}", "kind": info.kind, "metadata": {"name": meta["name"], "namespace": meta["namespace"]}, "spec": spec}
        self.metrics.writes.labels("spec").inc()
        try:
            return dict(
                self.api.patch_namespaced_custom_object(
                    info.group, info.version, meta["namespace"], info.plural, meta["name"], body,
                    field_manager=MANAGER, _request_timeout=KUBE_TIMEOUT_S, _content_type="application/apply-patch+yaml",
                )
            )
        except ApiException as e:
            if e.status == 409:
                log.warning("%s: state-into-spec merge not written, another manager owns a field: %s", _ref(obj), e.body)
                return None
            raise

    def release_finalizers(self, info: KindInfo, finalizer: str, namespaces: tuple[str, ...]) -> int:
        """Remove ``finalizer`` from every object of a Kind (in ``namespaces``, or all);
        a merge patch of the list with the object's resourceVersion as precondition."""
        from kubernetes.client.exceptions import ApiException

        def listing() -> list[dict[str, Any]]:
            if namespaces:
                return [o for ns in namespaces for o in self.api.list_namespaced_custom_object(info.group, info.version, ns, info.plural, _request_timeout=KUBE_TIMEOUT_S).get("items") or []]
            return list(self.api.list_cluster_custom_object(info.group, info.version, info.plural, _request_timeout=KUBE_TIMEOUT_S).get("items") or [])

        items = _again(listing)
        released = 0
        for o in items:
            meta = o.get("metadata") or {}
            fins = list(meta.get("finalizers") or [])
            if finalizer not in fins:
                continue
            body = {"metadata": {"finalizers": [f for f in fins if f != finalizer], "resourceVersion": meta.get("resourceVersion")}}
            try:
                self.api.patch_namespaced_custom_object(
                    info.group, info.version, meta["namespace"], info.plural, meta["name"], body, field_manager=MANAGER, _request_timeout=KUBE_TIMEOUT_S, _content_type="application/merge-patch+json"
                )
                self.metrics.writes.labels("finalizer").inc()
                released += 1
            except ApiException as e:
                log.warning("%s %s/%s: finalizer not released (%s); the next CRD event retries", info.kind, meta.get("namespace"), meta.get("name"), e.reason)
        return released

    def crd_deleting(self, kind: str) -> bool:
        """Whether the Kind's CRD is being deleted (Config Connector being uninstalled)."""
        info = self.kinds[kind]
        try:
            crd = self.ext.read_custom_resource_definition(f"{info.plural}.{info.group}", _request_timeout=KUBE_TIMEOUT_S)
        except Exception:
            return False
        return crd.metadata.deletion_timestamp is not None

    def post_event(self, obj: Mapping[str, Any], ev: Event) -> None:
        """An Event on the object when the server has the Events API, else a log line."""
        if not self.has_events:
            log.info("event %s %s %s: %s", _ref(obj), ev.type, ev.reason, ev.message)
            return
        from kubernetes import client

        meta = obj["metadata"]
        now = datetime.now(UTC)
        body = client.CoreV1Event(
            metadata=client.V1ObjectMeta(generate_name=f"{meta['name']}.", namespace=meta["namespace"]),
            involved_object=client.V1ObjectReference(
                api_version=obj.get("apiVersion"), kind=obj.get("kind"), name=meta["name"], namespace=meta["namespace"], uid=meta.get("uid")
            ),
            reason=ev.reason, message=ev.message[:1024], type=ev.type, first_timestamp=now, last_timestamp=now, count=1,
            source=client.V1EventSource(component="kccgen"), reporting_component="kccgen", reporting_instance="kccgen",
        )
        try:
            self.core.create_namespaced_event(meta["namespace"], body, field_manager=MANAGER, _request_timeout=KUBE_TIMEOUT_S)
            self.metrics.writes.labels("event").inc()
        except Exception as e:
            log.warning("event on %s not posted: %s", _ref(obj), str(e).splitlines()[0][:200])


class Cache:
    """The reconciler's ObjectStore: every watched object, kept by the watch; a Kind
    this instance does not watch (another instance's service) is read from the server."""

    def __init__(self, cluster: Cluster | None, watched: set[str], default_project: str | None = None) -> None:
        self.default_namespace = "default"
        self.default_project = default_project
        self.cluster = cluster
        self.watched = watched
        self._objects: dict[tuple[str, str, str], dict[str, Any]] = {}
        self._lock = threading.Lock()
        self.claims = Claims()  # resources claimed by objects before their status names them

    def objects(self) -> list[dict[str, Any]]:
        """Every watched object of a generated Kind (for one owner per resource)."""
        with self._lock:
            return [o for k, o in self._objects.items() if k[0] != "Namespace"]

    def put(self, obj: Mapping[str, Any]) -> None:
        with self._lock:
            self._objects[_key(obj)] = dict(obj)

    def drop(self, key: tuple[str, str, str]) -> None:
        with self._lock:
            self._objects.pop(key, None)
        self.claims.release((key[0], key[1] or self.default_namespace, key[2]))

    def peek(self, key: tuple[str, str, str]) -> dict[str, Any] | None:
        with self._lock:
            return self._objects.get(key)

    def __len__(self) -> int:
        with self._lock:
            return len(self._objects)

    def get(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        if kind == "Namespace":
            return self._namespace(name)
        if kind == "Secret":  # read when a reconcile needs it: no Secret is watched or kept
            try:
                return self.cluster.get(kind, namespace, name) if self.cluster is not None else None
            except Exception as e:  # RBAC, or a server without the core API
                raise RefError(Reason.NOT_FOUND, kind, f"Secret {namespace}/{name} cannot be read ({str(e).splitlines()[0][:120]})") from e
        key = (kind, "" if kind in CLUSTER_SCOPED else namespace, name)
        with self._lock:
            found = self._objects.get(key)
        if found is not None or kind in self.watched or self.cluster is None:
            return found
        try:
            return self.cluster.get(kind, namespace, name)
        except Exception as e:  # RBAC: the bundle grants only the instance's own Kinds
            raise RefError(Reason.NOT_FOUND, kind, f"{kind} {namespace}/{name} cannot be read by this operator instance ({str(e).splitlines()[0][:120]}): its --crd-pattern does not cover {kind}") from e

    def lease_holder(self, namespace: str) -> str:
        """The ID this installation's objects in ``namespace`` hold leases with
        (kccgen.runtime.leases): the Namespace's UID, as Config Connector uses a
        per-namespace ID; on a server without Namespaces, one derived from the
        server's address and the namespace (the same for every replica)."""
        uid = str(((self._namespace(namespace) or {}).get("metadata") or {}).get("uid") or "")
        if uid:
            return uid
        host = self.cluster.api.api_client.configuration.host if self.cluster is not None else ""
        return "kccgen-" + hashlib.sha256(f"{host}/{namespace}".encode()).hexdigest()[:24]

    def _namespace(self, name: str) -> Mapping[str, Any] | None:
        """The Namespace (watched when the server has them), with the operator's
        ``--project`` as its project-id when it names none."""
        with self._lock:
            found = self._objects.get(("Namespace", "", name))
        if found is None and self.cluster is not None and self.cluster.has_namespaces:
            # Not watched, or the watch has not delivered it yet: an object
            # reconciled first would take the operator's --project instead of
            # the namespace's project-id and create the resource elsewhere.
            found = self.cluster.get("Namespace", "", name)
        if not self.default_project:
            return found
        anns = dict(((found or {}).get("metadata") or {}).get("annotations") or {})
        if anns.get(PROJECT_ID_ANNOTATION):
            return found
        anns[PROJECT_ID_ANNOTATION] = self.default_project
        base = dict(found or {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        return {**base, "metadata": {**(base.get("metadata") or {}), "annotations": anns}}


@dataclass
class _Slot:
    """One object's loop: what wakes it, and what it last did."""

    wake: asyncio.Event = field(default_factory=asyncio.Event)
    failures: int = 0
    generation: Any = None
    annotations: dict[str, str] = field(default_factory=dict)
    inflight: asyncio.Future[Any] | None = None
    reconciles: int = 0


class Operator:
    """Handlers for the selected Kinds, the reconcile pool and the health/metrics server."""

    def __init__(self, settings: Settings, *, gcp: Gcp | None = None, api_client: Any = None) -> None:
        self.settings = settings
        self.kinds = {k.kind: k for k in served_kinds(settings.crd_pattern)}
        self.metrics = Metrics()
        self.gcp = gcp or Gcp(settings.endpoint, qps=settings.gcp_qps or None, host_paths=settings.host_paths, keep_calls=False, seed=settings.seed)
        if self.gcp.on_request is None:
            self.gcp.on_request = self.metrics.gcp
        self.gcp.keep_calls = False
        self.api_client = api_client
        self.cluster: Cluster | None = None
        self.cache = Cache(None, set(self.kinds), settings.project)
        self.pool = ThreadPoolExecutor(max(1, settings.workers), thread_name_prefix="reconcile")
        self.rng = random.Random(settings.seed)
        self.slots: dict[tuple[str, str, str], _Slot] = {}
        self.waiters: dict[tuple[str, str, str], set[tuple[str, str, str]]] = defaultdict(set)
        self.ready_flag: asyncio.Event | None = None
        self._per_kind: dict[str, asyncio.Semaphore] = {}
        self._limiter: RateLimiter | None = None
        self._waiting = 0
        self.holder = holder_identity()
        self.elector: Elector | None = None
        self._lost = False  # this term's Lease was lost (not a stop)
        # Kept here, not in the object: the version _persist wrote (the write-back
        # compares with it, so the intent goes in the next patch) and each
        # object's update streak (an update costs one status write, no annotation).
        self._persisted: dict[tuple[str, str, str], dict[str, Any]] = {}
        self._reading: dict[tuple[str, str, str], dict[str, Any]] = {}  # the object as the reconcile read it
        self._intent_in_status: dict[str, bool] = {}  # per Kind: whether its CRD stores status.createPending
        self._streaks: dict[tuple[str, str, str], str] = {}

    @property
    def standby(self) -> bool:
        """Waiting to lead: healthy, not reconciling."""
        return self.elector is not None and not self.elector.leading

    # --- set-up ----------------------------------------------------------------------

    def _connect(self) -> None:
        if self.api_client is None:
            from kubernetes import client, config

            cfg = client.Configuration()
            if self.settings.kubeconfig or not _in_cluster():
                config.load_kube_config(config_file=self.settings.kubeconfig, client_configuration=cfg)  # type: ignore[no-untyped-call]
            else:
                config.load_incluster_config(client_configuration=cfg)  # type: ignore[no-untyped-call]
            cfg.retries = 3  # urllib3's: reads again after a dropped connection
            self.api_client = client.ApiClient(cfg)
            self.api_client.user_agent = USER_AGENT
        self.cluster = Cluster(self.api_client, self.kinds, self.metrics)
        self.cluster.discover_core()
        self.cache = Cache(self.cluster, set(self.kinds) | ({"Namespace"} if self.cluster.has_namespaces else set()), self.settings.project)

    def registry(self) -> Any:
        """A kopf registry with the login handler and one handler set per Kind."""
        import kopf

        reg = kopf.OperatorRegistry()
        kopf.on.login(registry=reg)(self._login)
        kopf.on.startup(registry=reg)(self._startup)
        for info in self.kinds.values():
            kopf.on.event(info.group, info.version, info.plural, registry=reg)(self._on_event)
            kopf.daemon(info.group, info.version, info.plural, registry=reg, cancellation_timeout=SHUTDOWN_WAIT_S, initial_delay=None)(self._daemon)
            kopf.on.delete(info.group, info.version, info.plural, registry=reg, id="delete")(self._on_delete)
        if self.cluster is not None and self.cluster.has_namespaces:
            kopf.on.event("", "v1", "namespaces", registry=reg)(self._on_namespace)
        kopf.on.event("apiextensions.k8s.io", "v1", "customresourcedefinitions", registry=reg)(self._on_crd)
        return reg

    async def _login(self, settings: Any, **_: Any) -> Any:
        """kopf's connection, with our user agent: the API server names the field
        manager of kopf's patches (the finalizer) after it, so they are ``kccgen``'s."""
        import aiohttp
        import kopf

        if self.settings.kubeconfig:
            os.environ["KUBECONFIG"] = self.settings.kubeconfig
        info = (
            kopf.login_with_service_account(settings=settings) if _in_cluster() and not self.settings.kubeconfig else kopf.login_with_kubeconfig(settings=settings)
        )
        if info is None:
            raise kopf.LoginError("no kubeconfig and no in-cluster service account")
        headers = {**info.as_http_headers(), "User-Agent": USER_AGENT}
        session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0, ssl=info.as_ssl_context()), headers=headers)
        return kopf.AiohttpSession(aiohttp_session=session, server=info.server, default_namespace=info.default_namespace)

    async def _startup(self, settings: Any, **_: Any) -> None:
        import kopf

        settings.persistence.finalizer = FINALIZER
        # Handler progress in annotations: a status.kopf field would be pruned by
        # the structural schemas, and the status is the reconciler's.
        settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix="kopf.zalando.org")
        settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(prefix="kopf.zalando.org")
        settings.posting.enabled = False  # events are ours (Cluster.post_event), and optional
        settings.peering.standalone = True  # namespaced instances split the work, not peering
        settings.watching.server_timeout = 300
        settings.batching.worker_limit = max(64, self.settings.workers * 4)
        settings.networking.request_timeout = 60

    # --- events ----------------------------------------------------------------------

    async def _on_event(self, event: Mapping[str, Any], body: Any, **_: Any) -> None:
        obj = dict(body)
        key = _key(obj)
        if event.get("type") == "DELETED":
            self.cache.drop(key)
            self.slots.pop(key, None)
            self._wake_waiters(key)
            self.metrics.objects.set(len(self.cache))
            return
        before = self.cache.peek(key)
        self.cache.put(copy.deepcopy(obj))
        self.metrics.objects.set(len(self.cache))
        slot = self.slots.get(key)
        if slot is not None and slot.generation is not None:
            meta = obj.get("metadata") or {}
            if meta.get("generation") != slot.generation or _user_annotations(obj) != slot.annotations:
                slot.wake.set()
        if before is None or _ready(obj) != _ready(before):
            self._wake_waiters(key)

    async def _on_namespace(self, event: Mapping[str, Any], body: Any, **_: Any) -> None:
        obj = {"apiVersion": "v1", "kind": "Namespace", **dict(body)}
        key = _key(obj)
        before = self.cache.peek(key)
        if event.get("type") == "DELETED":
            self.cache.drop(key)
        else:
            self.cache.put(obj)
        if before is None or _user_annotations(before) != _user_annotations(obj):
            name = key[2]
            for k, slot in list(self.slots.items()):
                if k[1] == name:
                    slot.wake.set()

    async def _on_crd(self, body: Any, **_: Any) -> None:
        """The deletion defender: a CRD of ours being deleted (the operator being
        uninstalled) deletes its objects; their GCP resources stay. kopf stops
        watching a Kind whose CRD terminates, so on.delete would never run: the
        finalizers are released here."""
        meta = body.get("metadata") or {}
        names = {f"{k.plural}.{k.group}": k for k in self.kinds.values()}
        info = names.get(str(meta.get("name")))
        if info is None or not meta.get("deletionTimestamp"):
            return
        await asyncio.get_running_loop().run_in_executor(self.pool, self._release_all, info)

    def _release_all(self, info: KindInfo) -> None:
        assert self.cluster is not None
        released = self.cluster.release_finalizers(info, FINALIZER, self.settings.namespaces)
        if released:
            log.warning("the CRD of %s is being deleted: %d object(s) released, their GCP resources left in place", info.kind, released)

    def _wake_backed_off(self) -> None:
        """GCP answers again: every object backing off from a failure retries now
        (the reconcile limiter spreads them), instead of after its backoff."""
        woken = 0
        for slot in self.slots.values():
            if slot.failures and not slot.wake.is_set():
                slot.failures = 0
                slot.wake.set()
                woken += 1
        if woken:
            log.info("GCP answers again: %d object(s) backing off retry now", woken)

    def _wake_waiters(self, key: tuple[str, str, str]) -> None:
        for waiter in self.waiters.pop(key, set()):
            slot = self.slots.get(waiter)
            if slot is not None:
                slot.wake.set()

    # --- the loop of one object ------------------------------------------------------

    async def _daemon(self, body: Any, stopped: Any, **_: Any) -> None:
        key = _key(dict(body))
        slot = self.slots.setdefault(key, _Slot())
        while not stopped:
            obj = self.cache.peek(key) or dict(body)
            if (obj.get("metadata") or {}).get("deletionTimestamp"):
                return  # on.delete takes it from here
            slot.wake.clear()
            result = await self._run(key, slot, obj, delete=False)
            await self._sleep(slot, stopped, self._next_wait(slot, result, obj))

    def _next_wait(self, slot: _Slot, result: Result | None, obj: Mapping[str, Any]) -> float | None:
        """How long the object sleeps unless woken: backoff after a failure, a long
        fallback while it waits for a dependency (whose events wake it), else its
        resync interval (the default jittered, so resyncs spread out)."""
        if result is not None and result.reason in WAITING:
            slot.failures += 1
            return min(BACKOFF_MAX_S, WAIT_FALLBACK_S * 2.0 ** (slot.failures - 1))
        if result is None or (not result.ready and result.reason not in SETTLED):
            slot.failures += 1
            if self.gcp.failing:  # GCP unreachable: retried often enough to see it back soon
                return min(backoff_s(slot.failures), OUTAGE_BACKOFF_MAX_S)
            return backoff_s(slot.failures)
        slot.failures = 0
        anns = (result.obj.get("metadata") or {}).get("annotations") or {}
        interval = interval_of(result.obj, self.settings.resync_s)
        if interval is None or ANN_INTERVAL in anns:
            return interval
        return interval * (0.5 + self.rng.random())

    async def _sleep(self, slot: _Slot, stopped: Any, seconds: float | None) -> None:
        """Until woken, stopped, or ``seconds`` pass (None: until woken or stopped).
        A stop ends the sleep at once: the daemon returns before kopf would cancel it."""
        if stopped or slot.wake.is_set():
            return
        waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(slot.wake.wait())]
        if hasattr(stopped, "wait"):
            waits.append(asyncio.ensure_future(stopped.wait()))
        try:
            await asyncio.wait(waits, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()

    async def _run(self, key: tuple[str, str, str], slot: _Slot, obj: dict[str, Any], *, delete: bool) -> Result | None:
        """One reconcile (or delete) in the pool, within the Kind's and the global limits."""
        kind = key[0]
        sem = self._per_kind.setdefault(kind, asyncio.Semaphore(max(1, self.settings.per_kind)))
        if self._limiter is None:
            self._limiter = RateLimiter(self.settings.reconcile_qps)
        self._queued(+1)
        queued = True
        try:
            async with sem:
                await self._limiter.acquire()
                self._queued(-1)
                queued = False
                meta = obj.get("metadata") or {}
                slot.generation = meta.get("generation")
                slot.annotations = _user_annotations(obj)
                fut = asyncio.get_running_loop().run_in_executor(self.pool, self._reconcile_sync, obj, delete)
                slot.inflight = fut
                self.metrics.running.inc()
                try:
                    # Shielded: a daemon cancelled mid-reconcile (the object is being
                    # deleted) leaves the thread to finish; on.delete waits for it.
                    result: Result | None = await asyncio.shield(fut)
                finally:
                    self.metrics.running.dec()
        finally:
            if queued:
                self._queued(-1)
        slot.reconciles += 1
        if result is not None and result.ready:
            # Its waiters may have looked at it before this status was written; the
            # watch event that follows finds the cache already Ready and wakes nobody.
            self._wake_waiters(key)
        if result is not None:
            self.metrics.reconciles.labels(kind, result.reason).inc()
            if not result.ready:
                self.metrics.errors.labels(kind, result.reason).inc()
            if result.reason in WAITING:
                for d in named_references(result.obj):
                    self.waiters[d].add(key)
                    dep = self.cache.peek(d)
                    if dep is not None and _ready(dep):
                        slot.wake.set()  # became Ready while we were reconciling
        return result

    def _queued(self, n: int) -> None:
        self._waiting += n
        self.metrics.queue.set(self._waiting)

    def _reconcile_sync(self, obj: dict[str, Any], delete: bool) -> Result | None:
        """In a pool thread: reconcile, then write what changed back to the cluster."""
        key = _key(obj)
        self._persisted.pop(key, None)
        self._reading[key] = obj
        try:
            return self._reconcile_read(key, obj, delete)
        finally:
            self._reading.pop(key, None)

    def _reconcile_read(self, key: tuple[str, str, str], obj: dict[str, Any], delete: bool) -> Result | None:
        assert self.cluster is not None
        reconciler = Reconciler(self.gcp, self.cache, paused=self.settings.paused, persist=self._persist, holder=self.holder, acting=self._acting)
        work = _for_reconcile(obj, self._streaks.get(key))
        try:
            if delete:
                if self.cluster.crd_deleting(str(obj["kind"])):
                    return Result(obj, True, "Abandoned", "the Kind's CRD is being deleted: the GCP resource is left in place", [], deleted=True)
                result = reconciler.delete(work)
            else:
                result = reconciler.reconcile(work)
        except Superseded as e:  # most often kopf's finalizer, added since the read
            log.debug("%s", e)
            slot = self.slots.get(key)
            if slot is not None:
                slot.failures = max(0, slot.failures - 1)  # not a failure: read again soon
            return None
        except Exception as e:
            self._failure_log(obj, "reconcile failed", e)
            return None
        streak = ((result.obj.get("metadata") or {}).get("annotations") or {}).get(ANN_STREAK)
        if streak:
            self._streaks[key] = streak
        else:
            self._streaks.pop(key, None)
        try:
            self._write_back(obj, result, delete)
        except Exception as e:
            self._failure_log(obj, "writing the outcome failed", e)
            return None
        return result

    def _acting(self, other: str) -> bool:
        """Whether the writer of another create intent may still be sending it: not
        when this instance leads (the one before stopped before its lease ran
        out), nor when it was a process of this host that has exited."""
        if self.elector is not None and self.elector.leading:
            return False
        return holder_alive(other)

    def _failure_log(self, obj: Mapping[str, Any], what: str, e: Exception) -> None:
        """One line naming the object and the error; the traceback at debug only
        (kccgen.runtime.logs holds back repeats)."""
        log.warning("%s: %s: %s: %s", _ref(obj), what, type(e).__name__, _one_line(e))
        log.debug("%s: %s", _ref(obj), what, exc_info=e)

    def _persist(self, obj: dict[str, Any]) -> None:
        """The create-pending intent, written before a create whose ID the service
        picks: an operator restarted after the POST finds it and never creates twice.
        Written only on the version the reconcile read: of two instances that both
        act (no election, or a lost lease), one writes it, the other meets a
        conflict and re-reads instead of sending the POST too."""
        from kubernetes.client.exceptions import ApiException

        assert self.cluster is not None
        intent = ((obj.get("metadata") or {}).get("annotations") or {}).get(ANN_CREATE_PENDING)
        kind = str(obj.get("kind"))
        stored: dict[str, Any] | None = None
        try:
            if self._intent_in_status.get(kind, True):
                read = self._reading.get(_key(obj)) or obj
                try:
                    stored = self.cluster.apply_status(obj, {**(read.get("status") or {}), STATUS_INTENT: intent}, guarded=True)
                    self._intent_in_status[kind] = (stored.get("status") or {}).get(STATUS_INTENT) == intent
                except ApiException as e:
                    # Server-side apply refuses a field the schema lacks ("field
                    # not declared in schema", 500); a plain write would prune it.
                    if STATUS_INTENT not in str(e.body or ""):
                        raise
                    self._intent_in_status[kind] = False
                if not self._intent_in_status[kind]:
                    # An older CRD (the bundle not re-applied): the annotation keeps the intent.
                    log.warning("%s: the installed CRD has no status.%s (an older bundle): create intents are kept in the annotation %s", kind, STATUS_INTENT, ANN_CREATE_PENDING)
                    if stored is not None:  # on the version just written
                        obj = {**obj, "metadata": {**obj["metadata"], "resourceVersion": (stored.get("metadata") or {}).get("resourceVersion")}}
            if not self._intent_in_status[kind]:
                stored = self.cluster.patch_annotations(obj, {ANN_CREATE_PENDING: intent}, guarded=True)
        except ApiException as e:
            if e.status == 409:
                # Re-read now: the watch may have put an older version in the
                # cache after our own last write.
                meta = obj.get("metadata") or {}
                fresh = self.cluster.get(str(obj.get("kind")), str(meta.get("namespace")), str(meta.get("name")))
                if fresh is not None:
                    self.cache.put(fresh)
                raise Superseded(f"{_ref(obj)} changed since it was read; the create is not sent, it is read again") from e
            raise
        assert stored is not None
        self.cache.put(stored)
        self._persisted[_key(obj)] = stored

    def _write_back(self, obj: Mapping[str, Any], result: Result, delete: bool) -> None:
        assert self.cluster is not None
        new = result.obj
        # Compared with what is stored: the intent _persist wrote is removed here,
        # in the status write that records the created resource.
        stored = self._persisted.pop(_key(obj), None) or obj
        old_anns = (stored.get("metadata") or {}).get("annotations") or {}
        new_anns = {k: v for k, v in ((new.get("metadata") or {}).get("annotations") or {}).items() if k != ANN_STREAK}
        # The intent lives in status where the CRD has the field (known from a
        # write this run, or from the stored object); else in the annotation.
        in_status = self._intent_in_status.get(str(obj.get("kind"))) or STATUS_INTENT in (stored.get("status") or {})
        intent = new_anns.pop(ANN_CREATE_PENDING, None) if in_status else None
        changes: dict[str, str | None] = {k: new_anns.get(k) for k in set(old_anns) | set(new_anns) if old_anns.get(k) != new_anns.get(k)}
        latest: dict[str, Any] | None = None
        if changes:
            latest = self.cluster.patch_annotations(obj, changes)
        old_spec = obj.get("spec") or {}
        new_spec = new.get("spec") or {}
        if not delete and new_spec != old_spec:
            # Our whole applied configuration each time: the fields we own
            # (state-into-spec merge), with their values now; a field we leave
            # out of an apply would be released, and removed if nobody else owns it.
            ours = {k for k, m in ssa_owners((obj.get("metadata") or {}).get("managedFields") or []).items() if m == {MANAGER}}
            mine = {k: v for k, v in new_spec.items() if k in ours or k not in old_spec}
            if mine:
                latest = self.cluster.apply_spec(obj, mine) or latest
        if delete and result.deleted:
            for ev in result.events:
                self.cluster.post_event(obj, ev)
            return
        status = {k: v for k, v in (new.get("status") or {}).items() if k != STATUS_INTENT}
        if intent:
            status[STATUS_INTENT] = intent
        if status != (stored.get("status") or {}):
            recorded = status.get("externalRef")
            if recorded and recorded != (stored.get("status") or {}).get("externalRef"):
                latest = self._record(latest or stored, status)
            else:
                latest = self.cluster.apply_status(obj, status)
            for ev in result.events:
                self.cluster.post_event(obj, ev)
        if latest is not None:
            self.cache.put(latest)

    def _record(self, base: Mapping[str, Any], status: Mapping[str, Any]) -> dict[str, Any]:
        """The status write that first records a resource (``externalRef``), made
        on the version last read or written: a version changed since (kopf's
        finalizer, a spec edit) is read again and the write retried on it; a
        version where another writer recorded another resource is never
        overwritten (the election and the guarded intent keep that from happening)."""
        from kubernetes.client.exceptions import ApiException

        assert self.cluster is not None
        ext = status["externalRef"]
        for _ in range(3):
            try:
                return self.cluster.apply_status(base, status, guarded=True)
            except ApiException as e:
                if e.status != 409:
                    raise
            meta = base.get("metadata") or {}
            fresh = self.cluster.get(str(base.get("kind")), str(meta.get("namespace")), str(meta.get("name")))
            if fresh is None:
                raise Superseded(f"{_ref(base)} was deleted before {ext} was recorded")
            theirs = (fresh.get("status") or {}).get("externalRef")
            if theirs and theirs != ext:
                raise RuntimeError(f"another writer recorded {theirs} while this one recorded {ext}: {ext} is not this object's; delete it if it is unused")
            base = fresh
        raise Superseded(f"{_ref(base)} kept changing: {ext} is recorded at the next reconcile")

    # --- deletion --------------------------------------------------------------------

    async def _on_delete(self, body: Any, retry: int, **_: Any) -> None:
        import kopf

        obj = dict(body)
        key = _key(obj)
        slot = self.slots.get(key) or _Slot()
        if slot.inflight is not None and not slot.inflight.done():
            await asyncio.shield(slot.inflight)  # never delete while a create is in flight
        current = self.cache.peek(key) or obj
        # kopf's body has the deletionTimestamp; the cache may be a step behind.
        current = {**current, "metadata": {**(current.get("metadata") or {}), **(obj.get("metadata") or {})}}
        result = await self._run(key, slot, current, delete=True)
        if result is not None and result.deleted:
            self.slots.pop(key, None)
            return
        reason = "the reconcile raised" if result is None else f"{result.reason}: {result.message}"
        raise kopf.TemporaryError(f"not deleted yet ({reason})", delay=backoff_s(retry + 1))

    # --- running ---------------------------------------------------------------------

    async def run(self, stop_flag: asyncio.Event | None = None, ready: asyncio.Event | None = None) -> None:
        """Run until ``stop_flag`` is set (or SIGINT/SIGTERM in the main thread)."""
        import kopf

        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(None, self._connect)
        except Exception as e:  # no kubeconfig, a bad one, or no server answering
            where = self.settings.kubeconfig or os.environ.get("KUBECONFIG") or "the in-cluster service account or ~/.kube/config"
            raise OperatorError(f"cannot connect to the cluster with {where}: {str(e).splitlines()[0][:300]}") from e
        self.ready_flag = ready or asyncio.Event()
        def recovered() -> None:  # from a reconcile thread
            loop.call_soon_threadsafe(self._wake_backed_off)

        self.gcp.on_recover = recovered
        runners = []
        if self.settings.health_port is not None:
            runners.append(await self._serve_health())
        if self.settings.webhook_port is not None:
            runners.append(await self._serve_webhook())
        elect = self.settings.leader_elect and await loop.run_in_executor(None, Elector.available, self.api_client)
        if elect:
            self.elector = Elector(self.api_client, lease_namespace(self.settings.lease_namespace), lease_name(self.settings.crd_pattern, self.settings.namespaces), self.holder)
        elif self.settings.leader_elect:
            log.info("the server has no coordination.k8s.io Leases: no leader election (create intents still carry resourceVersion preconditions)")
        try:
            # One round per term as leader: a lost Lease (the API server gone
            # longer than the renew deadline, or another instance took it)
            # stops reconciling, and the instance stands by to lead again.
            while True:
                stop = asyncio.Event()  # kopf's: the caller's stop flag, or the lease lost
                watchers = [asyncio.create_task(_chain(stop_flag, stop))] if stop_flag is not None else []
                try:
                    if self.elector is not None:
                        if not await self._await_lead(stop):
                            return
                        watchers.append(asyncio.create_task(self._keep_lead(stop)))
                    log.info("watching %d Kinds%s", len(self.kinds), f" in namespaces {', '.join(self.settings.namespaces)}" if self.settings.namespaces else "")
                    await kopf.operator(
                        insights=self._insights(),
                        registry=self.registry(),
                        clusterwide=not self.settings.namespaces,
                        namespaces=list(self.settings.namespaces),
                        standalone=True,
                        stop_flag=stop,
                        ready_flag=self.ready_flag,
                    )
                finally:
                    for w in watchers:
                        w.cancel()
                    # The reconciles in flight finish (a create's answer is recorded)
                    # before a follower may lead.
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(loop.run_in_executor(None, functools.partial(self.pool.shutdown, wait=True, cancel_futures=True)), timeout=SHUTDOWN_WAIT_S)
                    if self.elector is not None:
                        await loop.run_in_executor(None, self.elector.release)
                lost = self.elector is not None and self._lost
                if not lost or (stop_flag is not None and stop_flag.is_set()):
                    return
                log.warning("reconciling stopped: the lease was lost; standing by to lead again")
                self._new_term()
        finally:
            for r in runners:
                await r.cleanup()

    def _new_term(self) -> None:
        """Fresh per-term state: the next term's kopf lists every object again."""
        self._lost = False
        self.pool = ThreadPoolExecutor(max(1, self.settings.workers), thread_name_prefix="reconcile")
        self.slots.clear()
        self.waiters.clear()
        self._persisted.clear()

    async def _await_lead(self, stop: asyncio.Event) -> bool:
        """Until this instance holds the Lease (True) or is stopped (False)."""
        assert self.elector is not None
        loop = asyncio.get_running_loop()
        told = ""
        with _signals_set(loop, stop):
            while not stop.is_set():
                if await loop.run_in_executor(None, self.elector.step):
                    return True
                if self.elector.other != told:
                    told = self.elector.other
                    log.info("standby: lease %s/%s held by %s", self.elector.namespace, self.elector.name, told)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), timeout=RETRY_S)
        return False

    async def _keep_lead(self, stop: asyncio.Event) -> None:
        """Renew the Lease; when it is lost, stop reconciling at once."""
        assert self.elector is not None
        loop = asyncio.get_running_loop()
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=RENEW_S)
            if stop.is_set():
                return
            if not await loop.run_in_executor(None, self.elector.step):
                self._lost = True
                stop.set()
                return

    def _insights(self) -> Any:
        """kopf's view of the cluster, with the namespaces to watch given up front.
        kopf (1.45) waits for the Namespaces API before it starts any watch, even
        cluster-wide: on a server without a core API (tools/envtest) nothing would
        ever be watched. The exact names (or None: cluster-wide) are what kopf
        itself falls back to when it may not list namespaces. Private API of the
        pinned kopf; tests/test_operator.py fails if it moves."""
        from kopf._cogs.structs.references import Insights

        insights = Insights()
        watched: set[Any] = set(self.settings.namespaces) if self.settings.namespaces else {None}
        insights.namespaces.update(watched)
        insights.ready_namespaces.set()
        return insights

    async def _serve_health(self) -> Any:
        from aiohttp import web

        async def healthz(_: web.Request) -> web.Response:
            return web.Response(text="ok\n")

        async def readyz(_: web.Request) -> web.Response:
            if self.standby:  # a follower is ready to take over: a rollout may go on
                return web.Response(text="standby\n")
            ok = self.ready_flag is not None and self.ready_flag.is_set()
            return web.Response(text="ok\n" if ok else "starting\n", status=200 if ok else 503)

        async def metrics(_: web.Request) -> web.Response:
            return web.Response(body=self.metrics.text(), content_type="text/plain")

        app = web.Application()
        app.router.add_get("/healthz", healthz)
        app.router.add_get("/readyz", readyz)
        app.router.add_get("/metrics", metrics)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, self.settings.health_host, self.settings.health_port or 0)
        await site.start()
        self.health_port = _bound_port(site)
        log.info("health and metrics on http://%s:%d (/healthz /readyz /metrics)", self.settings.health_host, self.health_port)
        return runner

    async def _serve_webhook(self) -> Any:
        from kccgen.runtime import webhook

        names = ["localhost", "127.0.0.1"]
        if self.settings.webhook_service and self.settings.webhook_namespace:
            svc, ns = self.settings.webhook_service, self.settings.webhook_namespace
            names += [f"{svc}.{ns}.svc", f"{svc}.{ns}.svc.cluster.local"]
        certs = webhook.make_certificates(names)
        hook = webhook.Webhook(self.cache, self.gcp)
        runner, port = await webhook.start(hook, certs, self.settings.webhook_host, self.settings.webhook_port or 0)
        self.webhook_port = port
        self.webhook_ca = certs.ca_pem
        if self.settings.webhook_config:
            await asyncio.get_running_loop().run_in_executor(None, self._publish_ca, certs.ca_pem)
        log.info("admission webhook on https://%s:%d/validate", self.settings.webhook_host, port)
        return runner

    def _publish_ca(self, ca_pem: bytes) -> None:
        """Write the webhook certificate's CA into the ValidatingWebhookConfiguration."""
        from kubernetes import client

        from kccgen.runtime import webhook

        api: Any = client.AdmissionregistrationV1Api(self.api_client)
        try:
            cfg = api.read_validating_webhook_configuration(self.settings.webhook_config)
        except Exception as e:
            log.warning("webhook configuration %s not updated: %s", self.settings.webhook_config, str(e).splitlines()[0][:200])
            return
        body = webhook.ca_bundle_patch(ca_pem, [w.name for w in cfg.webhooks or []])
        api.patch_validating_webhook_configuration(self.settings.webhook_config, body, field_manager=MANAGER)


def _again(call: Callable[[], Any], attempts: int = 3) -> Any:
    """``call()``, again after a dropped connection (a pooled connection the
    server closed while idle): the request was not answered, reading is safe."""
    import urllib3

    for attempt in range(attempts):
        try:
            return call()
        except urllib3.exceptions.ProtocolError:
            if attempt == attempts - 1:
                raise
            time.sleep(0.2 * (attempt + 1))
    raise AssertionError("unreachable")


async def _chain(source: asyncio.Event, target: asyncio.Event) -> None:
    await source.wait()
    target.set()


@contextlib.contextmanager
def _signals_set(loop: asyncio.AbstractEventLoop, flag: asyncio.Event) -> Any:
    """SIGINT/SIGTERM set ``flag`` while kopf (which handles them itself) is not running yet."""
    import signal

    added = []
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, flag.set)
                added.append(sig)
    try:
        yield
    finally:
        for sig in added:
            loop.remove_signal_handler(sig)


def _bound_port(site: Any) -> int:
    server = getattr(site, "_server", None)
    sockets = getattr(server, "sockets", None) or []
    return int(sockets[0].getsockname()[1]) if sockets else 0


def _in_cluster() -> bool:
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST")) and os.path.exists("/var/run/secrets/kubernetes.io/serviceaccount/token")


def settings_summary(s: Settings) -> str:
    """One line for the log: what this instance reconciles."""
    return json.dumps({"crd_pattern": s.crd_pattern or "*", "namespaces": list(s.namespaces) or "all", "paused": s.paused, "resync_s": s.resync_s}, sort_keys=True)
