"""Scenario scaffolding: realistic manifests for the 14 Kinds, and a harness that
reconciles them against mockgcp and reads back the exact HTTP exchanges.

Stable on purpose (other test modules import it):

* ``PROJECT``, ``NAMESPACE``, ``namespace_object()``;
* ``manifest(kind)``: a fresh KRM object for ``kind`` (``MANIFESTS`` holds the specs);
* ``PARENTS[kind]``: the Kinds that must exist (reconciled, with
  ``status.externalRef``) before ``kind`` can be created;
* ``Harness``: a MockServer + Gcp + InMemoryStore; ``reconcile(obj)`` runs the
  Reconciler and stores the result, ``calls()`` / ``writes()`` read the mock's
  request log (``mark()`` / ``since`` to look at one step), ``raw(api)`` is a
  discovery client that changes GCP behind the controller's back.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kccgen.mockgcp.engine import MockGCP
from kccgen.mockgcp.httplog import HttpLogEntry
from kccgen.mockgcp.normalize import call_sequence
from kccgen.mockgcp.server import MockServer
from kccgen.runtime.gcp import Gcp
from kccgen.runtime.reconciler import Reconciler, Result
from kccgen.runtime.refs import PROJECT_ID_ANNOTATION, InMemoryStore

PROJECT = "p"
NAMESPACE = "ns"
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
FORCE_ACQUIRE = "cnrm.cloud.google.com/force-acquire"

API_VERSIONS = {
    "ArtifactRegistryRepository": "artifactregistry.cnrm.cloud.google.com/v1beta1",
    "ComputeNetwork": "compute.cnrm.cloud.google.com/v1beta1",
    "ComputeSubnetwork": "compute.cnrm.cloud.google.com/v1beta1",
    "DNSManagedZone": "dns.cnrm.cloud.google.com/v1beta1",
    "KMSCryptoKey": "kms.cnrm.cloud.google.com/v1beta1",
    "KMSKeyRing": "kms.cnrm.cloud.google.com/v1beta1",
    "MonitoringAlertPolicy": "monitoring.cnrm.cloud.google.com/v1beta1",
    "MonitoringNotificationChannel": "monitoring.cnrm.cloud.google.com/v1beta1",
    "PubSubSchema": "pubsub.cnrm.cloud.google.com/v1beta1",
    "PubSubSubscription": "pubsub.cnrm.cloud.google.com/v1beta1",
    "PubSubTopic": "pubsub.cnrm.cloud.google.com/v1beta1",
    "SecretManagerSecret": "secretmanager.cnrm.cloud.google.com/v1beta1",
    "SpannerInstance": "spanner.cnrm.cloud.google.com/v1beta1",
    "StorageBucket": "storage.cnrm.cloud.google.com/v1beta1",
}

#: metadata.name per Kind (buckets are global: a name unlikely to clash).
NAMES = {
    "ArtifactRegistryRepository": "repo1",
    "ComputeNetwork": "net1",
    "ComputeSubnetwork": "subnet1",
    "DNSManagedZone": "zone1",
    "KMSCryptoKey": "key1",
    "KMSKeyRing": "ring1",
    "MonitoringAlertPolicy": "policy1",
    "MonitoringNotificationChannel": "channel1",
    "PubSubSchema": "schema1",
    "PubSubSubscription": "sub1",
    "PubSubTopic": "topic1",
    "SecretManagerSecret": "secret1",
    "SpannerInstance": "spanner1",
    "StorageBucket": "kccgen-scenario-bucket",
}

#: Specs shaped like Config Connector's test fixtures (../shared/compat/kcc/fixtures),
#: with our API field names.
MANIFESTS: dict[str, dict[str, Any]] = {
    "ArtifactRegistryRepository": {
        "location": "us-west1",
        "format": "DOCKER",
        "mode": "STANDARD_REPOSITORY",
        "description": "test repository description",
        "labels": {"label-one": "value-one"},
        "dockerConfig": {"immutableTags": False},
    },
    "ComputeNetwork": {
        "autoCreateSubnetworks": False,
        "enableUlaInternalIpv6": False,
        "description": "scenario network",
        "mtu": 1460,
        "routingConfig": {"routingMode": "REGIONAL"},
    },
    "ComputeSubnetwork": {
        "region": "us-central1",
        "ipCidrRange": "10.2.0.0/16",
        "networkRef": {"name": "net1"},
        "privateIpGoogleAccess": False,
        "logConfig": {"enable": True, "aggregationInterval": "INTERVAL_5_SEC", "flowSampling": 0.5},
    },
    "DNSManagedZone": {
        "dnsName": "cnrm-dns-example.com.",
        "description": "Example DNS zone",
        "visibility": "private",
        "labels": {"label-one": "value-one"},
        "privateVisibilityConfig": {"networks": [{"networkRef": {"name": "net1"}}]},
    },
    "KMSCryptoKey": {
        "keyRingRef": {"name": "ring1"},
        "purpose": "ENCRYPT_DECRYPT",
        "versionTemplate": {"algorithm": "GOOGLE_SYMMETRIC_ENCRYPTION", "protectionLevel": "SOFTWARE"},
        "rotationPeriod": "172800s",
        "importOnly": False,
        "labels": {"key-one": "value-one"},
    },
    "KMSKeyRing": {"location": "us-central1"},
    "MonitoringAlertPolicy": {
        "displayName": "Test Alert Policy",
        "enabled": True,
        "severity": "WARNING",
        "combiner": "OR",
        "notificationChannelRefs": [{"name": "channel1"}],
        "conditions": [
            {
                "displayName": "Very high CPU usage",
                "conditionThreshold": {
                    "filter": 'metric.type="compute.googleapis.com/instance/cpu/utilization" AND resource.type="gce_instance"',
                    "thresholdValue": 0.9,
                    "comparison": "COMPARISON_GT",
                    "duration": "900s",
                    "trigger": {"count": 1},
                    "aggregations": [{"perSeriesAligner": "ALIGN_MAX", "alignmentPeriod": "60s", "crossSeriesReducer": "REDUCE_MEAN"}],
                },
            }
        ],
        "documentation": {"content": "Introduction to alerting", "mimeType": "text/markdown"},
        "userLabels": {"team": "sre"},
    },
    "MonitoringNotificationChannel": {
        "type": "email",
        "displayName": "On-call",
        "description": "Sends notifications to the on-call address",
        "labels": {"email_address": "oncall@example.com"},
        "enabled": True,
        "userLabels": {"key-one": "value-one"},
    },
    "PubSubSchema": {
        "type": "PROTOCOL_BUFFER",
        "definition": 'syntax = "proto3";\nmessage Results {\nstring message_request = 1;\nstring message_response = 2;\n}',
    },
    "PubSubSubscription": {
        "topicRef": {"name": "topic1"},
        "ackDeadlineSeconds": 20,
        "labels": {"team": "billing"},
        "messageRetentionDuration": "86400s",
        "retryPolicy": {"minimumBackoff": "10s", "maximumBackoff": "600s"},
    },
    "PubSubTopic": {
        "labels": {"team": "checkout"},
        "messageRetentionDuration": "86600s",
    },
    "SecretManagerSecret": {
        "replication": {"userManaged": {"replicas": [{"location": "us-central1"}]}},
        "labels": {"label-one": "value-one"},
        "annotations": {"purpose": "scenario"},
    },
    "SpannerInstance": {
        "config": f"projects/{PROJECT}/instanceConfigs/regional-us-west1",
        "displayName": "Spanner Instance Sample",
        "nodeCount": 1,
        "labels": {"label-one": "value-one"},
    },
    "StorageBucket": {
        "location": "US",
        "storageClass": "STANDARD",
        "labels": {"label-one": "value-one"},
        "versioning": {"enabled": False},
        "softDeletePolicy": {"retentionDurationSeconds": "604800"},
    },
}

#: Kinds (in creation order) whose objects a Kind's manifest refers to by name.
PARENTS: dict[str, tuple[str, ...]] = {
    "ComputeSubnetwork": ("ComputeNetwork",),
    "DNSManagedZone": ("ComputeNetwork",),
    "KMSCryptoKey": ("KMSKeyRing",),
    "MonitoringAlertPolicy": ("MonitoringNotificationChannel",),
    "PubSubSubscription": ("PubSubTopic",),
}


#: Where each Kind's REST paths start (the externalRef follows; storage: ``b/``).
REST_PREFIX = {
    "ArtifactRegistryRepository": "v1/",
    "ComputeNetwork": "compute/v1/",
    "ComputeSubnetwork": "compute/v1/",
    "DNSManagedZone": "dns/v1/",
    "KMSCryptoKey": "v1/",
    "KMSKeyRing": "v1/",
    "MonitoringAlertPolicy": "v3/",
    "MonitoringNotificationChannel": "v3/",
    "PubSubSchema": "v1/",
    "PubSubSubscription": "v1/",
    "PubSubTopic": "v1/",
    "SecretManagerSecret": "v1/",
    "SpannerInstance": "v1/",
    "StorageBucket": "storage/v1/b/",
}


def rest_path(kind: str, external_ref: str) -> str:
    """The REST path (with leading /) of a resource: where GET and PATCH go."""
    return f"/{REST_PREFIX[kind]}{external_ref}"


def namespace_object(project: str = PROJECT, namespace: str = NAMESPACE) -> dict[str, Any]:
    return {"kind": "Namespace", "metadata": {"name": namespace, "annotations": {PROJECT_ID_ANNOTATION: project}}}


def manifest(kind: str, name: str | None = None, annotations: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    """A fresh object for ``kind``; keyword arguments replace top-level spec fields
    (``None`` leaves the field out)."""
    body = copy.deepcopy(MANIFESTS[kind])
    body.update(copy.deepcopy(spec))
    body = {k: v for k, v in body.items() if v is not None}
    meta: dict[str, Any] = {"name": name or NAMES[kind], "namespace": NAMESPACE, "generation": 1}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": API_VERSIONS[kind], "kind": kind, "metadata": meta, "spec": body}


def with_spec(obj: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A copy of ``obj`` (status kept) with top-level spec fields replaced, generation bumped."""
    out = copy.deepcopy(obj)
    out["spec"].update(copy.deepcopy(changes))
    out["metadata"]["generation"] = int(out["metadata"].get("generation") or 1) + 1
    return out


def annotate(obj: dict[str, Any], key: str, value: str | None) -> dict[str, Any]:
    """A copy of ``obj`` with one annotation set (``None``: removed)."""
    out = copy.deepcopy(obj)
    anns = out["metadata"].setdefault("annotations", {})
    if value is None:
        anns.pop(key, None)
    else:
        anns[key] = value
    return out


def path_of(entry: HttpLogEntry) -> str:
    return entry.url.split("://", 1)[-1].split("/", 1)[-1].split("?", 1)[0]


def query_of(entry: HttpLogEntry) -> dict[str, list[str]]:
    from urllib.parse import parse_qs, urlsplit

    return parse_qs(urlsplit(entry.url).query)


class Harness:
    """mockgcp + the reconciler, with the request log as the thing to assert on."""

    def __init__(self, server: MockServer) -> None:
        self.server = server
        self.gcp = Gcp(server.base_url, lro_interval=0, sleep=lambda s: None)
        self.store = InMemoryStore([namespace_object()], default_namespace=NAMESPACE)
        self._clients: dict[str, Any] = {}

    # --- acting ---------------------------------------------------------------------

    def reconcile(self, obj: dict[str, Any]) -> Result:
        result = Reconciler(self.gcp, self.store).reconcile(obj)
        if not result.deleted:
            self.store.add(result.obj)
        return result

    def delete(self, obj: dict[str, Any]) -> Result:
        return Reconciler(self.gcp, self.store).delete(obj)

    def create(self, kind: str, **spec: Any) -> Result:
        """Create ``kind`` (its parents first); asserts every step is Ready."""
        for parent in PARENTS.get(kind, ()):
            if self.store.get(parent, NAMESPACE, NAMES[parent]) is None:
                self.create(parent)
        r = self.reconcile(manifest(kind, **spec))
        assert r.ready, (kind, r.reason, r.message)
        return r

    def raw(self, api: str) -> Any:
        """A discovery client on mockgcp: a user changing GCP outside the controller."""
        if api not in self._clients:
            self._clients[api] = self.server.client(api)
        return self._clients[api]

    def stored(self, api: str, key: str) -> dict[str, Any]:
        """mockgcp's stored resource (``"pubsub.v1"``, ``"projects/p/topics/t"``), to
        make it answer the way the real service spells a value."""
        return self.server.engine.resources[f"{api}|{key}"]

    # --- reading the log --------------------------------------------------------------

    @property
    def log(self) -> list[HttpLogEntry]:
        return list(self.server.log)

    def mark(self) -> int:
        """The current log position; pass it as ``since`` to look at one step."""
        return len(self.server.log)

    def entries(self, since: int = 0) -> list[HttpLogEntry]:
        return list(self.server.log)[since:]

    def calls(self, since: int = 0) -> list[str]:
        """``METHOD path -> status`` per exchange (ids and operation names normalised)."""
        return call_sequence(self.entries(since))

    def requests(self, since: int = 0) -> list[str]:
        """``METHOD /path -> status`` per exchange, exactly as sent (no placeholders)."""
        return [f"{e.method} /{path_of(e)} -> {e.status_code}" for e in self.entries(since)]

    def writes(self, since: int = 0) -> list[HttpLogEntry]:
        return [e for e in self.entries(since) if e.method in WRITE_METHODS]


@contextmanager
def running_mock(lro_polls: int = 1) -> Iterator[MockServer]:
    """A MockServer that stops at once: ``MockServer.start`` serves with
    ``serve_forever``'s default 0.5 s poll, which ``stop()`` waits out."""
    import threading

    s = MockServer(MockGCP(lro_polls=lro_polls))
    t = threading.Thread(target=s.httpd.serve_forever, kwargs={"poll_interval": 0.01}, name="mockgcp", daemon=True)
    t.start()
    try:
        yield s
    finally:
        s.stop()
        t.join()


@contextmanager
def harness(lro_polls: int = 1) -> Iterator[Harness]:
    with running_mock(lro_polls) as s:
        yield Harness(s)
