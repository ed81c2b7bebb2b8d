"""The operator on a real API server: ``kccctl operator`` against the envtest
server (tests/support/envtest.py) and mockgcp, objects written with the
Kubernetes Python client, as a user or a GitOps tool would.

One operator serves namespace ``main`` for most tests; others run for what
needs their own process (paused operator, restart in the middle of a create),
each limited to its own namespace, so instances never overlap (the namespaced
mode of Config Connector). Every request reaches mockgcp, whose log says which
GCP calls each behaviour costs.
"""

from __future__ import annotations

import copy
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kccgen.mockgcp.server import MockServer
from kccgen.runtime.adapter import adapter_for
from kccgen.runtime.managed import ssa_owners
from kccgen.runtime.operator import ANN_INTERVAL, FINALIZER, STATUS_INTENT
from kccgen.runtime.reconciler import ANN_CREATE_PENDING
from kccgen.runtime.requests import delete_call
from tests.support import envtest as support
from tests.support.admission_reviews import admission_review
from tests.support.envtest import Kube as Kubectl
from tests.support.operator import (
    KCCCTL,
    Kube,
    OperatorProcess,
    crd_file,
    gvp,
    object_set,
    ready_condition,
)

PROJECT = "op-project"
MAIN = "main"
# Kinds of nine APIs; subscriptions and crypto keys refer to topics and key rings.
KINDS = (
    "ArtifactRegistryRepository",
    "ComputeNetwork",
    "ComputeSubnetwork",
    "DNSManagedZone",
    "KMSCryptoKey",
    "MonitoringNotificationChannel",
    "PubSubSchema",
    "PubSubSubscription",
    "SecretManagerSecret",
    "SpannerInstance",
    "StorageBucket",
)
PARENTS = ("KMSKeyRing", "PubSubTopic")
PATTERN = ";".join(KINDS + PARENTS)
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    """An API server of this module's own, with an audit log of every request:
    the last test checks each request the operator made against the bundle's RBAC."""
    work = tmp_path_factory.mktemp("operator-server")
    audit = tmp_path_factory.mktemp("audit")
    (audit / "policy.yaml").write_text("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  omitStages: [RequestReceived]\n")
    flags = f"--audit-log-path={audit / 'audit.log'} --audit-policy-file={audit / 'policy.yaml'} --audit-log-mode=blocking"
    with support.running(work, flags) as kube:
        files = [crd_file(k) for k in KINDS + PARENTS]
        errors = kube.apply_files(files)
        names = {f.name.removesuffix(".yaml") for f in files}
        established = kube.established(names)
        assert all(established.get(n) for n in names), errors
        yield kube


def _audit_log(server: Kubectl) -> Path:
    return next(server.kubeconfig.parent.parent.glob("audit*/audit.log"))


@pytest.fixture(scope="module")
def kube(server: Kubectl) -> Kube:
    return Kube(server.kubeconfig)


@pytest.fixture(scope="module")
def mock() -> Iterator[MockServer]:
    with MockServer() as m:
        yield m


@pytest.fixture(scope="module")
def operator(server: Kubectl, mock: MockServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[OperatorProcess]:
    log = tmp_path_factory.mktemp("operator") / "operator.log"
    op = OperatorProcess(server.kubeconfig, mock.base_url, log, ("--crd-pattern", PATTERN, "--project", PROJECT, "--namespace", MAIN, "--webhook-port", "0")).start()
    yield op
    code = op.stop()
    assert code == 0, f"SIGTERM: exit {code}\n{op.tail()}"


def _requests(mock: MockServer, needle: str, since: int = 0) -> list[str]:
    """``METHOD url`` of the mock's exchanges since ``since`` whose URL or body names ``needle``."""
    return [f"{e.method} {e.url}" for e in list(mock.log)[since:] if needle in e.url or needle in (e.request_body or "")]


def _held(mock: MockServer, kind: str, external: str) -> str:
    """mockgcp's key of the resource ``external`` names (its store keys the REST
    path, a bucket's ``b/<name>``), or ``<external>?`` when it holds none."""
    doc = adapter_for(kind).doc
    last = external.rsplit("/", 1)[-1]
    for key in mock.engine.resources:
        api, _, path = key.partition("|")
        if api == doc and (path == external or path.endswith("/" + external) or (path.rsplit("/", 1)[-1] == last and "/" not in external)):
            return key
    return external + "?"


def _topic(name: str, ns: str = MAIN, **annotations: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": ns}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "pubsub.cnrm.cloud.google.com/v1beta1", "kind": "PubSubTopic", "metadata": meta, "spec": {"projectRef": {"external": f"projects/{PROJECT}"}}}


def test_fifty_objects_with_references_become_ready_and_delete_cleanly(kube: Kube, mock: MockServer, operator: OperatorProcess) -> None:
    objs = object_set(KINDS, 4, MAIN, PROJECT, prefix="f")
    kinds = {o["kind"] for o in objs}
    assert len(objs) >= 50 and len(kinds) >= 10, (len(objs), kinds)
    abandoned = objs[0]
    abandoned["metadata"]["annotations"] = {"cnrm.cloud.google.com/deletion-policy": "abandon"}
    for o in reversed(objs):  # dependents first: they wait for their references, then proceed
        kube.apply(o)
    live: dict[tuple[str, str], dict[str, Any]] = {}
    for o in objs:
        got = kube.wait_ready(o["kind"], MAIN, o["metadata"]["name"], timeout=120)
        assert got["status"]["observedGeneration"] == got["metadata"]["generation"]
        assert FINALIZER in got["metadata"].get("finalizers", []), got["metadata"]
        assert got["status"].get("externalRef"), got["status"]
        live[(o["kind"], o["metadata"]["name"])] = got
    names = {_held(mock, k, g["status"]["externalRef"]) for (k, _), g in live.items()}
    missing = {n for n in names if n.endswith("?")}
    assert not missing, f"Ready objects whose resources mockgcp does not hold: {sorted(missing)[:5]}"
    assert operator.metric_sum("kccgen_reconciles_total", reason="UpToDate") >= len(objs)
    assert operator.metric_sum("kccgen_gcp_calls_total", verb="GET") >= len(objs)

    for o in objs:
        kube.delete(o["kind"], MAIN, o["metadata"]["name"])
    for o in objs:
        kube.wait_gone(o["kind"], MAIN, o["metadata"]["name"], timeout=120)
    kept = {
        _held(mock, k, g["status"]["externalRef"])
        for (k, n), g in live.items()
        if (k, n) == (abandoned["kind"], abandoned["metadata"]["name"]) or delete_call(adapter_for(k)) is None
    }
    left = names & set(mock.engine.resources)
    assert left == kept, f"left in mockgcp: {sorted(left - kept)[:5]}; expected abandoned: {sorted(kept)}"


def test_a_dependency_becoming_ready_wakes_the_objects_waiting_for_it(kube: Kube, operator: OperatorProcess) -> None:
    sub = {
        "apiVersion": "pubsub.cnrm.cloud.google.com/v1beta1",
        "kind": "PubSubSubscription",
        "metadata": {"name": "waits", "namespace": MAIN},
        "spec": {"projectRef": {"external": f"projects/{PROJECT}"}, "topicRef": {"name": "waited-for"}},
    }
    kube.apply(sub)
    kube.wait_reason("PubSubSubscription", MAIN, "waits", "DependencyNotFound")
    time.sleep(1)  # several retries: the fallback wait has grown past what is measured below
    kube.apply(_topic("waited-for"))
    topic = kube.wait_ready("PubSubTopic", MAIN, "waited-for")
    got = kube.wait_ready("PubSubSubscription", MAIN, "waits", timeout=20)
    # Woken by the topic's event, not by the fallback timer (WAIT_FALLBACK_S and more).
    slack = _seconds(ready_condition(got)["lastTransitionTime"]) - _seconds(ready_condition(topic)["lastTransitionTime"])
    assert slack < 5, f"the subscription became Ready {slack}s after its topic"


def _seconds(stamp: str) -> float:
    from datetime import datetime

    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").timestamp()


def test_seed_rules_through_the_api_server(kube: Kube, mock: MockServer, operator: OperatorProcess) -> None:
    """One case of each seed document, driven by writes to the API server:
    externalRef (an existing resource is acquired: one GET, externalRef set, no
    write), references (an ``external`` reference needs no object; a missing one
    names the object), force-acquire (absent: ResourceNotFound, never created),
    externally managed fields (``absent``: a label added in GCP is neither
    enforced nor written back into spec)."""
    topics = mock.client("pubsub").projects().topics()
    topics.create(name=f"projects/{PROJECT}/topics/existing", body={}).execute()
    mark = len(mock.log)
    kube.apply(_topic("existing"))
    got = kube.wait_ready("PubSubTopic", MAIN, "existing")
    assert got["status"]["externalRef"] == f"projects/{PROJECT}/topics/existing"
    assert [r.split(" ")[0] for r in _requests(mock, "topics/existing", mark)] == ["GET"]

    sub = {
        "apiVersion": "pubsub.cnrm.cloud.google.com/v1beta1", "kind": "PubSubSubscription",
        "metadata": {"name": "by-external", "namespace": MAIN},
        "spec": {"projectRef": {"external": f"projects/{PROJECT}"}, "topicRef": {"external": f"projects/{PROJECT}/topics/existing"}},
    }
    kube.apply(sub)
    assert kube.wait_ready("PubSubSubscription", MAIN, "by-external")["status"]["externalRef"].endswith("/subscriptions/by-external")
    sub["metadata"]["name"], sub["spec"]["topicRef"] = "by-missing-name", {"name": "no-such-topic"}
    kube.apply(sub)
    got = kube.wait_reason("PubSubSubscription", MAIN, "by-missing-name", "DependencyNotFound")
    assert "PubSubTopic main/no-such-topic" in ready_condition(got)["message"], ready_condition(got)

    mark = len(mock.log)
    kube.apply(_topic("never-made", **{"cnrm.cloud.google.com/force-acquire": "true"}))
    kube.wait_reason("PubSubTopic", MAIN, "never-made", "ResourceNotFound")
    assert {r.split(" ")[0] for r in _requests(mock, "topics/never-made", mark)} == {"GET"}

    topics.patch(name=f"projects/{PROJECT}/topics/existing", body={"topic": {"labels": {"added": "in-gcp"}}, "updateMask": "labels"}).execute()
    kube.patch_annotations("PubSubTopic", MAIN, "existing", {ANN_INTERVAL: "1"})
    mark = len(mock.log)
    time.sleep(2.5)
    assert {r.split(" ")[0] for r in _requests(mock, "topics/existing", mark)} == {"GET"}
    got = kube.get("PubSubTopic", MAIN, "existing") or {}
    assert "labels" not in got.get("spec", {}) and ready_condition(got)["status"] == "True"


def test_pause_per_object_makes_no_gcp_call_until_resumed(kube: Kube, mock: MockServer, operator: OperatorProcess) -> None:
    mark = len(mock.log)
    kube.apply(_topic("paused-topic", **{"cnrm.cloud.google.com/actuation-mode": "Paused"}))
    kube.wait_reason("PubSubTopic", MAIN, "paused-topic", "Paused")
    time.sleep(1)
    assert _requests(mock, "paused-topic", mark) == []
    kube.patch_annotations("PubSubTopic", MAIN, "paused-topic", {"cnrm.cloud.google.com/actuation-mode": "Reconciling"})
    kube.wait_ready("PubSubTopic", MAIN, "paused-topic")
    assert [r.split(" ")[0] for r in _requests(mock, "paused-topic", mark)] == ["GET", "PUT"]


def test_reconcile_interval_annotation_sets_the_resync_and_zero_turns_it_off(kube: Kube, mock: MockServer, operator: OperatorProcess) -> None:
    kube.apply(_topic("every-second", **{ANN_INTERVAL: "1"}))
    kube.apply(_topic("never-again", **{ANN_INTERVAL: "0"}))
    kube.apply(_topic("default-interval"))
    for name in ("every-second", "never-again", "default-interval"):
        kube.wait_ready("PubSubTopic", MAIN, name)
    mark = len(mock.log)
    time.sleep(4.5)
    every = _requests(mock, "topics/every-second", mark)
    assert 3 <= len(every) <= 6 and all(r.startswith("GET ") for r in every), every
    assert _requests(mock, "topics/never-again", mark) == []
    assert _requests(mock, "topics/default-interval", mark) == []


def test_force_acquire_verifies_on_every_resync_and_never_writes(kube: Kube, mock: MockServer, operator: OperatorProcess) -> None:
    mock.client("pubsub").projects().topics().create(name=f"projects/{PROJECT}/topics/verified", body={"labels": {"team": "a"}}).execute()
    mark = len(mock.log)
    obj = _topic("verified", **{"cnrm.cloud.google.com/force-acquire": "true", ANN_INTERVAL: "1"})
    obj["spec"]["labels"] = {"team": "a"}
    kube.apply(obj)
    kube.wait_ready("PubSubTopic", MAIN, "verified")
    time.sleep(2.5)
    obj["spec"]["labels"] = {"team": "b"}
    kube.apply(obj)
    got = kube.wait_reason("PubSubTopic", MAIN, "verified", "DriftDetected")
    assert "labels" in ready_condition(got)["message"], ready_condition(got)
    sent = _requests(mock, "topics/verified", mark)
    assert len(sent) >= 3 and {r.split(" ")[0] for r in sent} == {"GET"}, sent
    kube.delete("PubSubTopic", MAIN, "verified")
    kube.wait_gone("PubSubTopic", MAIN, "verified")
    assert f"pubsub.v1|projects/{PROJECT}/topics/verified" in mock.engine.resources  # released, never deleted


def test_an_immutable_change_reaching_the_controller_is_update_failed_naming_the_field(kube: Kube, mock: MockServer, operator: OperatorProcess) -> None:
    schema = {
        "apiVersion": "pubsub.cnrm.cloud.google.com/v1beta1",
        "kind": "PubSubSchema",
        "metadata": {"name": "frozen", "namespace": MAIN},
        "spec": {"projectRef": {"external": f"projects/{PROJECT}"}, "type": "AVRO", "definition": '{"type":"record","name":"A","fields":[]}'},
    }
    kube.apply(schema)
    kube.wait_ready("PubSubSchema", MAIN, "frozen")
    mark = len(mock.log)
    schema["spec"]["definition"] = '{"type":"record","name":"B","fields":[]}'
    kube.apply(schema)
    got = kube.wait_reason("PubSubSchema", MAIN, "frozen", "UpdateFailed")
    assert "spec.definition" in ready_condition(got)["message"], ready_condition(got)
    assert not [r for r in _requests(mock, "schemas/frozen", mark) if r.split(" ")[0] in WRITES]


def test_the_operators_webhook_refuses_an_immutable_change_at_admission(kube: Kube, operator: OperatorProcess) -> None:
    """What the API server would send the operator's webhook for that change (the
    test server calls no webhooks): the stored object as ``oldObject``."""
    old = kube.get("PubSubSchema", MAIN, "frozen") or {}
    assert ready_condition(old), "runs after the controller test, on its object"
    new = copy.deepcopy(old)
    new["spec"]["definition"] = '{"type":"record","name":"C","fields":[]}'
    new["metadata"]["generation"] += 1
    answer = operator.review(admission_review("UPDATE", new, old))["response"]
    assert answer["allowed"] is False and "spec.definition" in answer["status"]["message"], answer
    new["metadata"].setdefault("annotations", {})["cnrm.cloud.google.com/force-acquire"] = "true"
    assert operator.review(admission_review("UPDATE", new, old))["response"]["allowed"] is True


def test_state_into_spec_merge_writes_through_server_side_apply_and_never_takes_a_users_field(kube: Kube, mock: MockServer, operator: OperatorProcess) -> None:
    """The seed's server-side apply behaviour: fields the user left out are
    populated from GCP, owned by ``kccgen``, and follow GCP; a field the user
    applies is theirs and enforced."""
    name = "merged-bucket"
    anns = {"cnrm.cloud.google.com/state-into-spec": "merge", ANN_INTERVAL: "1", "cnrm.cloud.google.com/project-id": PROJECT}
    obj = {"apiVersion": "storage.cnrm.cloud.google.com/v1beta1", "kind": "StorageBucket", "metadata": {"name": name, "namespace": MAIN, "annotations": anns}, "spec": {"location": "US"}}
    kube.apply(obj)
    got = kube.wait("StorageBucket", MAIN, name, lambda o: "rpo" in ((o or {}).get("spec") or {}), 30, "populated")
    assert got is not None and got["spec"]["rpo"] == "DEFAULT", got["spec"]
    owners = ssa_owners(got["metadata"]["managedFields"])
    assert owners["rpo"] == {"kccgen"} and owners["location"] == {"kubectl-test"}, owners
    mark = len(mock.log)
    mock.client("storage").buckets().patch(bucket=name, body={"rpo": "ASYNC_TURBO"}).execute()
    kube.wait("StorageBucket", MAIN, name, lambda o: ((o or {}).get("spec") or {}).get("rpo") == "ASYNC_TURBO", 20, "following GCP")
    assert [r for r in _requests(mock, f"/b/{name}", mark) if r.startswith("PATCH")] == ["PATCH https://storage.googleapis.com/storage/v1/b/merged-bucket?alt=json"]  # ours: none
    obj["spec"]["rpo"] = "DEFAULT"
    kube.apply(obj)  # the user takes the field (force, as kubectl apply --server-side --force-conflicts)
    deadline = time.monotonic() + 20
    while mock.client("storage").buckets().get(bucket=name).execute().get("rpo") != "DEFAULT":
        assert time.monotonic() < deadline, "the user's value was not enforced"
        time.sleep(0.2)
    got = kube.wait_ready("StorageBucket", MAIN, name)
    assert ssa_owners(got["metadata"]["managedFields"])["rpo"] == {"kubectl-test"}


def test_operator_paused_makes_no_gcp_call(server: Kubectl, kube: Kube, mock: MockServer, tmp_path: Path) -> None:
    op = OperatorProcess(server.kubeconfig, mock.base_url, tmp_path / "paused.log", ("--crd-pattern", "PubSubTopic", "--project", PROJECT, "--namespace", "paused", "--actuation-mode", "Paused")).start()
    try:
        mark = len(mock.log)
        kube.apply(_topic("held", ns="paused"))
        kube.wait_reason("PubSubTopic", "paused", "held", "Paused")
        assert _requests(mock, "topics/held", mark) == []
        assert op.metric_sum("kccgen_gcp_calls_total") == 0
    finally:
        assert op.stop() == 0, op.tail()
    assert kube.get("PubSubTopic", MAIN, "held") is None  # the main operator's namespace is another


def test_a_restart_in_the_middle_of_a_create_never_creates_twice(server: Kubectl, kube: Kube, mock: MockServer, tmp_path: Path) -> None:
    """kill -9 while the create of a notification channel (the service picks its
    ID) is in flight: the create-pending intent, written before the POST, makes
    the next operator look for it, find it and adopt it."""
    ns = "restart"
    args = ("--crd-pattern", "MonitoringNotificationChannel", "--project", PROJECT, "--namespace", ns)
    fault = mock.engine.faults.add(api="monitoring.*", method="*.notificationChannels.create", latency_ms=3000, times=1)
    obj = object_set(["MonitoringNotificationChannel"], 1, ns, PROJECT, prefix="r")[0]
    name = obj["metadata"]["name"]
    first = OperatorProcess(server.kubeconfig, mock.base_url, tmp_path / "first.log", args).start()
    mark = len(mock.log)
    kube.apply(obj)
    # The intent is in status (the write recording the created resource removes it).
    kube.wait("MonitoringNotificationChannel", ns, name, lambda o: bool(((o or {}).get("status") or {}).get(STATUS_INTENT)), 20, "create-pending")
    deadline = time.monotonic() + 30
    while fault.fired < 1:  # the POST is in mockgcp, held by the fault's latency
        assert time.monotonic() < deadline, "the create never reached mockgcp"
        time.sleep(0.05)
    first.kill()
    deadline = time.monotonic() + 10
    while fault.fired < 1 or not [e for e in list(mock.log)[mark:] if e.method == "POST"]:
        assert time.monotonic() < deadline, "the create never reached mockgcp"
        time.sleep(0.1)
    second = OperatorProcess(server.kubeconfig, mock.base_url, tmp_path / "second.log", args).start()
    try:
        got = kube.wait_ready("MonitoringNotificationChannel", ns, name, timeout=60)
    finally:
        assert second.stop() == 0, second.tail()
    posts = [e for e in list(mock.log)[mark:] if e.method == "POST"]
    assert len(posts) == 1, [e.url for e in posts]
    channels = [k for k in mock.engine.resources if "/notificationChannels/" in k]
    assert sum(1 for k in channels if k.endswith(got["status"]["externalRef"])) == 1
    assert ANN_CREATE_PENDING not in (got["metadata"].get("annotations") or {})
    assert STATUS_INTENT not in got["status"]


def test_a_create_costs_the_intent_and_one_outcome_write(server: Kubectl, kube: Kube, mock: MockServer, tmp_path: Path) -> None:
    """A channel (the service picks its ID) is created with two writes of ours:
    the guarded intent, then the status recording externalRef, which also
    removes the intent (issue 27, point 5); no annotation patch at all."""
    ns = "costs"
    args = ("--crd-pattern", "MonitoringNotificationChannel", "--project", PROJECT, "--namespace", ns)
    obj = object_set(["MonitoringNotificationChannel"], 1, ns, PROJECT, prefix="c")[0]
    op = OperatorProcess(server.kubeconfig, mock.base_url, tmp_path / "op.log", args).start()
    try:
        kube.apply(obj)
        got = kube.wait_ready("MonitoringNotificationChannel", ns, obj["metadata"]["name"], timeout=60)
        writes = {w: op.metric_sum("kccgen_kube_writes_total", what=w) for w in ("annotations", "status", "spec")}
    finally:
        assert op.stop() == 0, op.tail()
    assert STATUS_INTENT not in got["status"] and ANN_CREATE_PENDING not in (got["metadata"].get("annotations") or {})
    assert writes == {"annotations": 0, "status": 2, "spec": 0}, writes


def test_a_failing_object_backs_off_instead_of_hot_looping(kube: Kube, mock: MockServer, operator: OperatorProcess) -> None:
    """GCP refuses every GET of one topic: its reconciles back off (250 ms, 0.5 s,
    1 s, 2 s, ...), so in 6 s it is read a handful of times, not hundreds."""
    mock.engine.faults.add(api="pubsub.*", method="*.topics.get", path="topics/refused", status=403, message="denied")
    mark = len(mock.log)
    kube.apply(_topic("refused"))
    got = kube.wait_reason("PubSubTopic", MAIN, "refused", "UpdateFailed")
    assert "denied" in ready_condition(got)["message"], ready_condition(got)
    time.sleep(6)
    gets = _requests(mock, "topics/refused", mark)
    assert 3 <= len(gets) <= 8 and all(g.startswith("GET ") for g in gets), gets
    assert operator.metric_sum("kccgen_reconcile_errors_total", kind="PubSubTopic", reason="UpdateFailed") >= 3
    mock.engine.faults.clear()
    kube.wait_ready("PubSubTopic", MAIN, "refused", timeout=20)


def test_a_crd_being_deleted_releases_its_objects_and_their_resources_stay(server: Kubectl, kube: Kube, mock: MockServer, operator: OperatorProcess) -> None:
    """The deletion defender's rule: uninstalling (deleting a CRD) deletes its
    objects but never their GCP resources. kopf stops watching a terminating
    CRD, so the operator releases the finalizers from the CRD's own event.

    The test server cannot hold a terminating CRD with objects: with its
    admission chain off, any patch of such an object panics in the server
    (forbidCreateAdmission wraps no delegate; tools/envtest), so the finalizer
    could never be removed there by anyone. The CRD event is given to the
    operator's handler directly, with the CRD the server stores plus a
    deletionTimestamp; everything else is the real server and mockgcp."""
    import asyncio

    from kccgen.runtime.operator import Operator, Settings

    ns = "uninstall"  # no operator process watches it: kopf would put the finalizer back
    mock.client("pubsub").projects().topics().create(name=f"projects/{PROJECT}/topics/outlives-its-crd", body={}).execute()
    obj = _topic("outlives-its-crd", ns=ns)
    obj["metadata"]["finalizers"] = [FINALIZER]
    kube.apply(obj)
    crd = json.loads(server.kubectl("get", "crd", crd_file("PubSubTopic").name.removesuffix(".yaml"), "-o", "json").stdout)
    crd["metadata"]["deletionTimestamp"] = "2026-11-27T00:00:00Z"
    local = Operator(Settings(crd_pattern="PubSubTopic", namespaces=(ns,), kubeconfig=str(server.kubeconfig), health_port=None, endpoint=mock.base_url))
    local._connect()
    mark = len(mock.log)
    asyncio.run(local._on_crd(body=crd))
    got = kube.get("PubSubTopic", ns, "outlives-its-crd") or {}
    assert FINALIZER not in (got["metadata"].get("finalizers") or []), got["metadata"]
    kube.delete("PubSubTopic", ns, "outlives-its-crd")
    kube.wait_gone("PubSubTopic", ns, "outlives-its-crd")
    assert _requests(mock, "outlives-its-crd", mark) == []
    assert f"pubsub.v1|projects/{PROJECT}/topics/outlives-its-crd" in mock.engine.resources
    crd["metadata"].pop("deletionTimestamp")
    obj["metadata"]["name"] = "keeps-its-finalizer"
    kube.apply(obj)
    asyncio.run(local._on_crd(body=crd))  # not being deleted: nothing released
    assert FINALIZER in (kube.get("PubSubTopic", ns, "keeps-its-finalizer") or {})["metadata"]["finalizers"]
    kube.api.patch_namespaced_custom_object(*gvp("PubSubTopic")[:2], ns, gvp("PubSubTopic")[2], "keeps-its-finalizer", {"metadata": {"finalizers": []}}, _content_type="application/merge-patch+json")
    kube.delete("PubSubTopic", ns, "keeps-its-finalizer")


def test_objects_of_other_namespaces_are_left_to_their_own_operator(kube: Kube, mock: MockServer, operator: OperatorProcess) -> None:
    mark = len(mock.log)
    kube.apply(_topic("not-mine", ns="elsewhere"))
    time.sleep(2)
    got = kube.get("PubSubTopic", "elsewhere", "not-mine")
    assert got is not None and not got.get("status") and FINALIZER not in (got["metadata"].get("finalizers") or [])
    assert _requests(mock, "not-mine", mark) == []
    kube.delete("PubSubTopic", "elsewhere", "not-mine")


def test_bad_start_up_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """A pattern that selects nothing, a malformed one, a kubeconfig that is not
    one: a line naming it, exit 2, no traceback."""
    bad = tmp_path / "kubeconfig"
    bad.write_text("not: [a kubeconfig")
    for args, needle in (
        (["--crd-pattern", "nosuchservice"], "selects no Kind"),
        (["--crd-pattern", "a/b/c"], "more than one '/'"),
        (["--kubeconfig", str(bad)], str(bad)),
    ):
        out = subprocess.run([str(KCCCTL), "operator", "--endpoint", "http://127.0.0.1:9/", "--health-port", "-1", *args], capture_output=True, text=True, timeout=60, check=False)
        assert out.returncode == 2 and needle in out.stderr and "Traceback" not in out.stderr, (args, out.stderr[-2000:])


def test_health_and_metrics_endpoints(operator: OperatorProcess) -> None:
    assert operator._get("/healthz") == (200, "ok\n")
    assert operator._get("/readyz")[0] == 200
    names = {n.split("{", 1)[0] for n in operator.metrics()}
    assert {"kccgen_reconciles_total", "kccgen_gcp_calls_total", "kccgen_queue_depth", "kccgen_objects"} <= names, names


def test_the_bundles_rbac_covers_every_request_the_operator_made(server: Kubectl) -> None:
    """Runs last: every request the operator processes of this module made (user
    agent ``kccgen/``), read from the server's audit log, is allowed by the
    ClusterRole that ``kccgen bundle --crd-pattern`` writes for their Kinds, and
    nothing the operator never asks for is granted. The test server itself
    enforces no RBAC (its client is system:masters), so this is the check."""
    import yaml

    from kccgen.generator.bundle import Options, build, generated_dir

    rbac = list(yaml.safe_load_all(build(generated_dir(Path(".")), Options(pattern=PATTERN))["rbac.yaml"]))
    rules = next(o for o in rbac if o["kind"] == "ClusterRole")["rules"]
    used: set[tuple[str, str, str]] = set()
    for line in _audit_log(server).read_text().splitlines():
        event = json.loads(line)
        ref = event.get("objectRef")
        if not str(event.get("userAgent", "")).startswith("kccgen/") or not ref:
            continue  # discovery (/apis, /version) is every authenticated user's
        resource = ref["resource"] + (f"/{ref['subresource']}" if ref.get("subresource") else "")
        group = ref.get("apiGroup", "")
        used.add((group, resource, event["verb"]))
        allowed = any(
            group in r["apiGroups"] and resource in r["resources"] and event["verb"] in r["verbs"]
            and (not r.get("resourceNames") or ref.get("name") in r["resourceNames"])
            for r in rules
        )
        assert allowed, f"the bundle's ClusterRole does not allow {event['verb']} {group or 'core'}/{resource} ({event['requestURI']})"
    assert {v for _, _, v in used} >= {"list", "watch", "patch"}, used
    # Leases: this server has none (tests/test_operator_peers.py elects on one that has)
    granted_verbs = {v for r in rules if "leases" not in r["resources"] for v in r["verbs"]}
    unused = granted_verbs - {v for _, _, v in used} - {"get", "create"}  # get: reads of one object; create: Events (none on this server)
    assert not unused, f"granted but never used: {unused}"
