"""How many GCP requests each reconcile makes, against the least it could make.

Every scenario runs the real ``kccgen.runtime.reconciler.Reconciler`` through
``kccgen.runtime.gcp.Gcp`` against mockgcp served in-process (``MockServer`` on
127.0.0.1, a fresh one per row), and counts the requests in mockgcp's request
log. Set-up (dependencies, the resource to acquire) runs before the log is
cleared, so only the measured reconcile is counted.

    .venv/bin/python bench/calls.py           # rewrites bench/calls.md
    .venv/bin/python bench/calls.py --check   # exits 1 when bench/calls.md is stale

The output is deterministic: mockgcp is seeded, operation names and generated
numbers are replaced by placeholders (``kccgen.mockgcp.normalize.call_sequence``),
and nothing depends on time. ``tests/test_calls_table.py`` recomputes the
up-to-date and verify-only rows live.

``CASES`` (one realistic object per Kind, with the objects it refers to) is
shared with ``bench/run.py``.
"""

from __future__ import annotations

import argparse
import copy
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script: mockgcp is not an installed package
    sys.path.insert(0, str(REPO))

from kccgen.contract import CreateServiceAssigned  # noqa: E402
from kccgen.mockgcp.engine import MockGCP  # noqa: E402
from kccgen.mockgcp.normalize import call_sequence  # noqa: E402
from kccgen.mockgcp.server import MockServer  # noqa: E402
from kccgen.runtime.adapter import adapter_for  # noqa: E402
from kccgen.runtime.gcp import Gcp  # noqa: E402
from kccgen.runtime.reconciler import ANN_FORCE_ACQUIRE, Reconciler, Result  # noqa: E402
from kccgen.runtime.refs import PROJECT_ID_ANNOTATION, InMemoryStore  # noqa: E402
from tools.reports import write_or_check  # noqa: E402

OUT = REPO / "bench" / "calls.md"
PROJECT = "bench-project"
NAMESPACE = "default"
LRO_POLLS = 1  # mockgcp's default: an operation is done on its first poll
ABSENT_SERVICE_ID = "4242424242424242424"  # a service-generated ID nobody created
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})

GROUPS = {
    "ArtifactRegistryRepository": "artifactregistry",
    "ComputeNetwork": "compute",
    "ComputeSubnetwork": "compute",
    "DNSManagedZone": "dns",
    "KMSCryptoKey": "kms",
    "KMSKeyRing": "kms",
    "MonitoringAlertPolicy": "monitoring",
    "MonitoringNotificationChannel": "monitoring",
    "PubSubSchema": "pubsub",
    "PubSubSubscription": "pubsub",
    "PubSubTopic": "pubsub",
    "SecretManagerSecret": "secretmanager",
    "SpannerInstance": "spanner",
    "StorageBucket": "storage",
}


def manifest(
    kind: str, name: str, spec: dict[str, Any], annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": NAMESPACE, "generation": 1}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {
        "apiVersion": f"{GROUPS[kind]}.cnrm.cloud.google.com/v1beta1",
        "kind": kind,
        "metadata": meta,
        "spec": copy.deepcopy(spec),
    }


@dataclass(frozen=True)
class Case:
    """One Kind: a realistic object (shaped like Config Connector's test
    fixtures), the objects it refers to, and the changes the scenarios make.

    ``update``: a mutable field (dotted spec path) and its new value, or None
    when the Kind has no update method. ``drift``: a field that makes a
    verify-only object differ from the live resource (may be immutable:
    force-acquire never writes), or None when no readable field can differ.
    """

    kind: str
    name: str
    spec: dict[str, Any]
    deps: tuple[dict[str, Any], ...] = ()
    update: tuple[str, Any] | None = None
    drift: tuple[str, Any] | None = None

    def obj(self) -> dict[str, Any]:
        return manifest(self.kind, self.name, self.spec)


_NETWORK = manifest(
    "ComputeNetwork",
    "dep-network",
    {"autoCreateSubnetworks": False, "routingConfig": {"routingMode": "REGIONAL"}},
)
_KEYRING = manifest("KMSKeyRing", "dep-keyring", {"location": "us-central1"})
_TOPIC = manifest("PubSubTopic", "dep-topic", {"labels": {"team": "billing"}})
_DEAD_LETTER = manifest("PubSubTopic", "dep-dead-letter", {})
_CHANNEL = manifest(
    "MonitoringNotificationChannel",
    "dep-channel",
    {"type": "email", "displayName": "on-call", "labels": {"email_address": "oncall@example.com"}},
)
_SCHEMA = 'syntax = "proto3";\nmessage Results {\nstring message_request = 1;\nstring message_response = 2;\n}'
_CPU_FILTER = (
    'metric.type="compute.googleapis.com/instance/cpu/utilization" AND resource.type="gce_instance"'
)

CASES: tuple[Case, ...] = (
    Case(
        "ArtifactRegistryRepository",
        "bench-repo",
        {
            "location": "us-west1",
            "format": "DOCKER",
            "mode": "STANDARD_REPOSITORY",
            "description": "container images",
            "labels": {"env": "prod", "team": "platform"},
            "dockerConfig": {"immutableTags": True},
        },
        update=("description", "container images (v2)"),
        drift=("description", "someone else's repository"),
    ),
    Case(
        "ComputeNetwork",
        "bench-network",
        {
            "autoCreateSubnetworks": False,
            "description": "bench network",
            "mtu": 1460,
            "routingConfig": {"routingMode": "REGIONAL"},
        },
        update=("routingConfig.routingMode", "GLOBAL"),
        drift=("mtu", 1500),
    ),
    Case(
        "ComputeSubnetwork",
        "bench-subnet",
        {
            "region": "us-central1",
            "ipCidrRange": "10.2.0.0/16",
            "networkRef": {"name": "dep-network"},
            "privateIpGoogleAccess": False,
            "description": "bench subnet",
            "secondaryIpRanges": [{"rangeName": "pods", "ipCidrRange": "10.64.0.0/14"}],
            "logConfig": {
                "enable": True,
                "aggregationInterval": "INTERVAL_5_SEC",
                "flowSampling": 0.5,
            },
        },
        deps=(_NETWORK,),
        update=("logConfig.flowSampling", 0.75),
        drift=("ipCidrRange", "10.3.0.0/16"),
    ),
    Case(
        "DNSManagedZone",
        "bench-zone",
        {
            "dnsName": "bench.example.com.",
            "description": "private zone",
            "visibility": "private",
            "labels": {"env": "prod"},
            "privateVisibilityConfig": {"networks": [{"networkRef": {"name": "dep-network"}}]},
        },
        deps=(_NETWORK,),
        update=("description", "private zone (v2)"),
        drift=("description", "someone else's zone"),
    ),
    Case(
        "KMSCryptoKey",
        "bench-key",
        {
            "keyRingRef": {"name": "dep-keyring"},
            "purpose": "ENCRYPT_DECRYPT",
            "rotationPeriod": "172800s",
            "versionTemplate": {
                "algorithm": "GOOGLE_SYMMETRIC_ENCRYPTION",
                "protectionLevel": "SOFTWARE",
            },
            "labels": {"team": "security"},
            "importOnly": False,
        },
        deps=(_KEYRING,),
        update=("rotationPeriod", "259200s"),
        drift=("rotationPeriod", "86400s"),
    ),
    Case("KMSKeyRing", "bench-keyring", {"location": "us-central1"}),
    Case(
        "MonitoringAlertPolicy",
        "bench-alert",
        {
            "displayName": "High CPU",
            "combiner": "OR",
            "enabled": True,
            "notificationChannelRefs": [{"name": "dep-channel"}],
            "documentation": {
                "content": "CPU above 90% for a minute.",
                "mimeType": "text/markdown",
            },
            "userLabels": {"team": "ops"},
            "conditions": [
                {
                    "displayName": "cpu > 90%",
                    "conditionThreshold": {
                        "filter": _CPU_FILTER,
                        "comparison": "COMPARISON_GT",
                        "duration": "60s",
                        "thresholdValue": 0.9,
                        "aggregations": [
                            {"alignmentPeriod": "60s", "perSeriesAligner": "ALIGN_MEAN"}
                        ],
                    },
                }
            ],
        },
        deps=(_CHANNEL,),
        update=("displayName", "Very high CPU"),
        drift=("enabled", False),
    ),
    Case(
        "MonitoringNotificationChannel",
        "bench-channel",
        {
            "type": "email",
            "displayName": "ops",
            "description": "ops mailing list",
            "labels": {"email_address": "ops@example.com"},
            "userLabels": {"team": "ops"},
            "enabled": True,
        },
        update=("displayName", "ops (primary)"),
        drift=("enabled", False),
    ),
    Case(
        "PubSubSchema",
        "bench-schema",
        {"type": "PROTOCOL_BUFFER", "definition": _SCHEMA},
        drift=("definition", _SCHEMA.replace("message_response", "message_reply")),
    ),
    Case(
        "PubSubSubscription",
        "bench-subscription",
        {
            "topicRef": {"name": "dep-topic"},
            "ackDeadlineSeconds": 20,
            "labels": {"team": "billing"},
            "enableMessageOrdering": True,
            "expirationPolicy": {"ttl": "2678400s"},
            "retryPolicy": {"minimumBackoff": "10s", "maximumBackoff": "600s"},
            "deadLetterPolicy": {
                "deadLetterTopicRef": {"name": "dep-dead-letter"},
                "maxDeliveryAttempts": 5,
            },
        },
        deps=(_TOPIC, _DEAD_LETTER),
        update=("ackDeadlineSeconds", 30),
        drift=("ackDeadlineSeconds", 60),
    ),
    Case(
        "PubSubTopic",
        "bench-topic",
        {
            "labels": {"env": "prod", "team": "checkout"},
            "messageRetentionDuration": "86600s",
            "messageStoragePolicy": {"allowedPersistenceRegions": ["us-central1", "us-east1"]},
        },
        update=("messageRetentionDuration", "172800s"),
        drift=("messageRetentionDuration", "3600s"),
    ),
    Case(
        "SecretManagerSecret",
        "bench-secret",
        {
            "replication": {"automatic": {}},
            "labels": {"env": "prod"},
            "annotations": {"owner": "team-a"},
            "topics": [{"topicRef": {"name": "dep-topic"}}],
        },
        deps=(_TOPIC,),
        update=("versionDestroyTtl", "86400s"),
        drift=("replication", {"userManaged": {"replicas": [{"location": "us-east1"}]}}),
    ),
    Case(
        "SpannerInstance",
        "bench-spanner",
        {
            "config": "regional-us-west1",
            "displayName": "Spanner Sample",
            "processingUnits": 100,
            "labels": {"env": "prod"},
        },
        update=("displayName", "Spanner Sample (v2)"),
        drift=("processingUnits", 1000),
    ),
    Case(
        "StorageBucket",
        "bench-bucket",
        {
            "location": "US",
            "storageClass": "STANDARD",
            "labels": {"env": "prod"},
            "versioning": {"enabled": True},
            "lifecycle": {"rule": [{"action": {"type": "Delete"}, "condition": {"age": 7}}]},
            "softDeletePolicy": {"retentionDurationSeconds": "604800"},
            "iamConfiguration": {"uniformBucketLevelAccess": {"enabled": True}},
        },
        update=("versioning.enabled", False),
        drift=("storageClass", "NEARLINE"),
    ),
)
CASE_BY_KIND = {c.kind: c for c in CASES}


def set_path(spec: dict[str, Any], dotted: str, value: Any) -> None:
    node = spec
    *parents, last = dotted.split(".")
    for p in parents:
        node = node.setdefault(p, {})
    node[last] = copy.deepcopy(value)


def validate_cases() -> None:
    """Every object (and dependency) parses with its Kind's generated model."""
    from kccgen.runtime.registry import types_modules

    models = types_modules()
    for c in CASES:
        for o in (c.obj(), *c.deps):
            getattr(models[o["kind"]], o["kind"]).model_validate(o)


# --- running against mockgcp ---------------------------------------------------------


class Harness:
    """mockgcp in-process, a Gcp client with no LRO sleep, and an object store."""

    def __init__(self, server: MockServer) -> None:
        self.server = server
        self.gcp = Gcp(server.base_url, lro_interval=0)
        self.store = InMemoryStore(default_namespace=NAMESPACE)
        self.store.add(
            {
                "kind": "Namespace",
                "metadata": {"name": NAMESPACE, "annotations": {PROJECT_ID_ANNOTATION: PROJECT}},
            }
        )

    def apply(self, obj: dict[str, Any]) -> Result:
        result = Reconciler(self.gcp, self.store).reconcile(obj)
        self.store.add(result.obj)
        return result

    def delete(self, obj: dict[str, Any]) -> Result:
        return Reconciler(self.gcp, self.store).delete(obj)

    def ready(self, obj: dict[str, Any]) -> dict[str, Any]:
        r = self.apply(obj)
        if not r.ready:
            raise RuntimeError(
                f"set-up: {obj['kind']}/{obj['metadata']['name']}: {r.reason}: {r.message}"
            )
        return r.obj

    def measure(self, step: Callable[[], Result]) -> tuple[Result, list[str]]:
        self.server.clear_log()
        result = step()
        return result, call_sequence(list(self.server.log))


@contextmanager
def mock_server() -> Iterator[MockServer]:
    """One mockgcp server for many rows (stopping a server takes half a second)."""
    with MockServer(MockGCP(lro_polls=LRO_POLLS, seed=0)) as server:
        yield server


@contextmanager
def harness(server: MockServer) -> Iterator[Harness]:
    """A fresh, seeded mockgcp state on ``server``, and an empty request log."""
    server.engine = MockGCP(lro_polls=LRO_POLLS, seed=0)
    server.clear_log()
    yield Harness(server)


def resource_id(obj: dict[str, Any]) -> str:
    """The last segment of status.externalRef: what spec.resourceID takes."""
    return str(obj["status"]["externalRef"]).rsplit("/", 1)[-1]


def verify_only(
    case: Case, name: str, rid: str, spec: dict[str, Any] | None = None
) -> dict[str, Any]:
    o = manifest(
        case.kind, name, spec if spec is not None else case.spec, {ANN_FORCE_ACQUIRE: "true"}
    )
    o["spec"]["resourceID"] = rid
    return o


# --- scenarios -----------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    scenario: str
    kind: str
    reason: str  # the Ready condition's reason after the measured reconcile
    calls: tuple[str, ...]  # "METHOD path -> status", normalized
    minimum: tuple[tuple[str, int], ...]  # (HTTP method, count), sorted
    note: str = ""  # why the minimum differs by Kind (shown with the explanation)

    @property
    def made(self) -> Counter[str]:
        return Counter(c.split(" ", 1)[0] for c in self.calls)

    @property
    def writes(self) -> int:
        return sum(n for m, n in self.made.items() if m in WRITES)

    @property
    def equal(self) -> bool:
        return dict(self.made) == dict(self.minimum)


def _min(**counts: int) -> tuple[tuple[str, int], ...]:
    return tuple(sorted((m, n) for m, n in counts.items() if n))


def _write_method(calls: list[str], default: str = "POST") -> str:
    return next((c.split(" ", 1)[0] for c in calls if c.split(" ", 1)[0] in WRITES), default)


def scenario_create(server: MockServer, case: Case) -> Row:
    with harness(server) as h:
        for d in case.deps:
            h.ready(d)
        r, calls = h.measure(lambda: h.apply(case.obj()))
    a = adapter_for(case.kind)
    if isinstance(a.create, CreateServiceAssigned):
        return Row(
            "create",
            case.kind,
            r.reason,
            tuple(calls),
            _min(POST=1),
            "service-generated ID: nothing to GET before the create",
        )
    return Row(
        "create", case.kind, r.reason, tuple(calls), _min(GET=1, **{_write_method(calls): 1})
    )


def scenario_up_to_date(server: MockServer, case: Case) -> Row:
    with harness(server) as h:
        for d in case.deps:
            h.ready(d)
        obj = h.ready(case.obj())
        r, calls = h.measure(lambda: h.apply(obj))
    return Row("up-to-date", case.kind, r.reason, tuple(calls), _min(GET=1))


def scenario_update(server: MockServer, case: Case) -> Row | None:
    if case.update is None:
        return None
    with harness(server) as h:
        for d in case.deps:
            h.ready(d)
        obj = h.ready(case.obj())
        obj = copy.deepcopy(obj)
        set_path(obj["spec"], *case.update)
        obj["metadata"]["generation"] += 1
        r, calls = h.measure(lambda: h.apply(obj))
    a = adapter_for(case.kind)
    return Row(
        f"update ({type(a.update).__name__})",
        case.kind,
        r.reason,
        tuple(calls),
        _min(GET=1, **{_write_method(calls, "PATCH"): 1}),
    )


def scenario_after_update(server: MockServer, case: Case) -> Row | None:
    """The reconcile after an update: the change reached GCP, so nothing is written again."""
    if case.update is None:
        return None
    with harness(server) as h:
        for d in case.deps:
            h.ready(d)
        obj = copy.deepcopy(h.ready(case.obj()))
        set_path(obj["spec"], *case.update)
        obj["metadata"]["generation"] += 1
        updated = h.ready(obj)
        r, calls = h.measure(lambda: h.apply(updated))
    return Row("up-to-date after update", case.kind, r.reason, tuple(calls), _min(GET=1))


def scenario_acquire(server: MockServer, case: Case) -> Row:
    """The resource exists (created by another object); a new object names it by resourceID."""
    with harness(server) as h:
        for d in case.deps:
            h.ready(d)
        seed = h.ready(manifest(case.kind, f"{case.name}-origin", case.spec))
        o = manifest(case.kind, f"{case.name}-adopter", case.spec)
        o["spec"]["resourceID"] = resource_id(seed)
        r, calls = h.measure(lambda: h.apply(o))
    return Row("acquire", case.kind, r.reason, tuple(calls), _min(GET=1))


def scenario_force_acquire_absent(server: MockServer, case: Case) -> Row:
    with harness(server) as h:
        for d in case.deps:
            h.ready(d)
        rid = (
            ABSENT_SERVICE_ID
            if isinstance(adapter_for(case.kind).create, CreateServiceAssigned)
            else f"{case.name}-absent"
        )
        r, calls = h.measure(lambda: h.apply(verify_only(case, f"{case.name}-verify", rid)))
    return Row("force-acquire (absent)", case.kind, r.reason, tuple(calls), _min(GET=1))


def scenario_force_acquire_equal(server: MockServer, case: Case) -> Row:
    with harness(server) as h:
        for d in case.deps:
            h.ready(d)
        live = h.ready(case.obj())
        r, calls = h.measure(
            lambda: h.apply(verify_only(case, f"{case.name}-verify", resource_id(live)))
        )
    return Row("force-acquire (equal)", case.kind, r.reason, tuple(calls), _min(GET=1))


def scenario_force_acquire_differs(server: MockServer, case: Case) -> Row | None:
    if case.drift is None:
        return None
    with harness(server) as h:
        for d in case.deps:
            h.ready(d)
        live = h.ready(case.obj())
        spec = copy.deepcopy(case.spec)
        set_path(spec, *case.drift)
        r, calls = h.measure(
            lambda: h.apply(verify_only(case, f"{case.name}-verify", resource_id(live), spec))
        )
    return Row("force-acquire (differs)", case.kind, r.reason, tuple(calls), _min(GET=1))


def scenario_delete(server: MockServer, case: Case) -> Row:
    with harness(server) as h:
        for d in case.deps:
            h.ready(d)
        obj = h.ready(case.obj())
        r, calls = h.measure(lambda: h.delete(obj))
    return Row("delete", case.kind, r.reason, tuple(calls), _min(DELETE=1))


SCENARIOS: tuple[Callable[[MockServer, Case], Row | None], ...] = (
    scenario_create,
    scenario_up_to_date,
    scenario_update,
    scenario_after_update,
    scenario_acquire,
    scenario_force_acquire_absent,
    scenario_force_acquire_equal,
    scenario_force_acquire_differs,
    scenario_delete,
)
VERIFY_ONLY = (
    scenario_force_acquire_absent,
    scenario_force_acquire_equal,
    scenario_force_acquire_differs,
)
EXPECTED_REASON = {
    "create": "UpToDate",
    "up-to-date": "UpToDate",
    "acquire": "UpToDate",
    "force-acquire (absent)": "ResourceNotFound",
    "force-acquire (equal)": "UpToDate",
    "force-acquire (differs)": "DriftDetected",
    "delete": "Deleted",
}


def run_all(
    cases: tuple[Case, ...] = CASES,
    scenarios: tuple[Callable[[MockServer, Case], Row | None], ...] = SCENARIOS,
) -> list[Row]:
    rows: list[Row] = []
    with mock_server() as server:
        for scenario in scenarios:
            for case in sorted(cases, key=lambda c: c.kind):
                row = scenario(server, case)
                if row is not None:
                    rows.append(row)
    return rows


# --- explaining the difference from the minimum ----------------------------------------


def _is_poll(call: str) -> bool:
    return call.startswith("GET ") and "/operations/" in call


def explain(row: Row) -> str:
    """Why the calls made differ from the minimum, from what each extra call is."""
    parts: list[str] = []
    if row.note:
        parts.append(row.note)
    expected = EXPECTED_REASON.get(row.scenario, "UpToDate")
    if row.reason != expected:
        parts.append(f"**outcome {row.reason}, expected {expected}**")
    if row.equal:
        return "; ".join(parts)
    a = adapter_for(row.kind)
    polls = [c for c in row.calls if _is_poll(c)]
    rest = [c for c in row.calls if not _is_poll(c)]
    shape = {"create": a.create, "delete": a.delete}.get(
        row.scenario, a.update if row.scenario.startswith("update") else None
    )
    call = getattr(shape, "call", None)  # NoCreate / NoUpdate / NoDelete have none
    style = call.lro if call is not None else "none"
    if polls:
        what = {
            "google.longrunning": "a google.longrunning Operation (its `response` carries the resource)",
            "compute": "a compute Operation",
            "dns": "a dns#operation",
        }.get(style, "an operation")
        parts.append(
            f"+{len(polls)} operation poll(s): the API answers with {what}, polled until `done` "
            "(the number of polls is mockgcp's lro_polls here; on real GCP, however long the operation takes) "
            "- required to report the outcome"
        )
    extra = Counter(c.split(" ", 1)[0] for c in rest) - Counter(dict(row.minimum))
    missing = Counter(dict(row.minimum)) - Counter(c.split(" ", 1)[0] for c in rest)
    if (
        extra.get("GET")
        and row.scenario == "create"
        and style in ("compute", "dns")
        and rest
        and rest[-1].startswith("GET ")
    ):
        parts.append(
            f"+1 GET after the operation: a {style} operation carries no resource (only its targetLink), "
            "so status.observedState needs a GET - required unless observedState is left empty"
        )
        extra["GET"] -= 1
    leftover = +extra
    if leftover or +missing:
        detail = ", ".join(f"{n} more {m}" for m, n in sorted(leftover.items()))
        detail += (", " if detail and +missing else "") + ", ".join(
            f"{n} fewer {m}" for m, n in sorted((+missing).items())
        )
        parts.append(f"**unexplained: {detail}**")
    return "; ".join(parts)


def _fmt_counts(counts: Counter[str] | dict[str, int]) -> str:
    items = sorted((m, n) for m, n in dict(counts).items() if n)
    return ", ".join(f"{m} {n}" for m, n in items) or "none"


def _fmt_calls(calls: tuple[str, ...]) -> str:
    return "<br>".join(f"`{c}`" for c in calls) or "(none)"


def render(rows: list[Row]) -> str:
    equal = sum(r.equal for r in rows)
    unexplained = [r for r in rows if "unexplained" in explain(r) or "**outcome" in explain(r)]
    lines = [
        "# GCP requests per reconcile",
        "",
        "<!-- Generated by `.venv/bin/python bench/calls.py`; do not edit. -->",
        "",
        "Each row runs one reconcile of `kccgen.runtime.reconciler.Reconciler` against mockgcp",
        f"(in-process, `MockGCP(lro_polls={LRO_POLLS})`, `Gcp(endpoint, lro_interval=0)`) and counts the",
        "requests in mockgcp's request log. Set-up (referenced objects, the resource to",
        "acquire) is not counted. Objects are in `bench/calls.py` (`CASES`), shaped like",
        "Config Connector's test fixtures.",
        "",
        "**Minimum possible** is what the scenario cannot do with less:",
        "",
        "| Scenario | Minimum | Why |",
        "|---|---|---|",
        "| create | GET 1 + the create write 1 (service-generated IDs: the write only) | the GET tells absent from present; a service-generated ID has nothing to GET |",
        "| up-to-date | GET 1 | one read to compare; no write |",
        "| update | GET 1 + the update write 1 | one read to diff, one write carrying only the changes |",
        "| up-to-date after update | GET 1 | the update reached GCP: the next reconcile writes nothing |",
        "| acquire | GET 1 | the resource matches the spec: read, adopt, no write |",
        "| force-acquire (absent, equal, differs) | GET 1, 0 writes | verify-only: never creates, updates or deletes |",
        "| delete | DELETE 1 | status.externalRef names the resource: no GET needed |",
        "",
        "Operation polls are never in the minimum; where the API answers with a",
        "long-running operation the explanation says so. Real GCP needs as many polls as",
        f"the operation takes; mockgcp finishes an operation on poll {LRO_POLLS}.",
        "",
        "## Summary",
        "",
        f"- {len(rows)} rows; **{equal}** make exactly the minimum; {len(rows) - equal} make more, each explained below.",
        f"- Rows whose extra calls are not explained by an operation the API returns, or whose outcome is unexpected: **{len(unexplained)}**"
        + (
            "."
            if not unexplained
            else ": " + ", ".join(f"{r.scenario} {r.kind}" for r in unexplained) + "."
        ),
        f"- Up-to-date re-reconcile: {sum(1 for r in rows if r.scenario == 'up-to-date' and r.equal)} of "
        f"{sum(1 for r in rows if r.scenario == 'up-to-date')} Kinds make exactly 1 GET.",
        f"- Verify-only (force-acquire) rows with any write: {sum(1 for r in rows if r.scenario.startswith('force-acquire') and r.writes)}.",
        "",
        "## Table",
        "",
        "| Scenario | Kind | Outcome | Calls made (by method) | Minimum possible | Equal? | Explanation |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.scenario} | {r.kind} | {r.reason} | {_fmt_counts(r.made)} | {_fmt_counts(dict(r.minimum))} | "
            f"{'yes' if r.equal else 'no'} | {explain(r) or '—'} |"
        )
    lines += [
        "",
        "## Call sequences",
        "",
        "| Scenario | Kind | Requests (path -> status) |",
        "|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r.scenario} | {r.kind} | {_fmt_calls(r.calls)} |")
    lines += [
        "",
        "Kinds not in a scenario: KMSKeyRing and PubSubSchema have no update method (no",
        "update row); KMSKeyRing has no readable spec field outside its identity, so a",
        "verify-only object cannot differ from the live key ring (no force-acquire (differs) row).",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--check", action="store_true", help="exit 1 if bench/calls.md differs from a fresh run"
    )
    p.add_argument("--output", type=Path, default=OUT)
    args = p.parse_args(argv)
    validate_cases()
    text = render(run_all())
    code = write_or_check(args.output, text, args.check, ".venv/bin/python bench/calls.py")
    if args.check:
        if code == 0:
            print(f"{args.output} is current")
        return code
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
