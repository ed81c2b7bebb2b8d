"""``kccctl`` against emulators that are not ours: Google's Pub/Sub emulator and
gcp-storage-emulator.

Each emulator runs once per module (a fixture starts and stops it; the Pub/Sub
emulator in its own process group, gcp-storage-emulator in a thread of this
process, so nothing outlives the tests). ``kccctl apply``/``delete``/``get``
run as a user runs them, in a subprocess, with ``--endpoint`` pointing at the
emulator. The emulators are read and written directly (plain HTTP, no
kccgen code) to set up resources to acquire and to check what kccctl did.

Scenarios, per emulator: create, update, acquire (the resource exists; the
manifest names it by ``spec.resourceID``), force-acquire (verify only: equal
-> Ready, different -> DriftDetected, absent -> ResourceNotFound, and never a
write, checked by reading the resource before and after) and delete.

Neither emulator is real GCP. Every difference these scenarios run into is a
``Difference`` below (what the emulator does, what real GCP does, how the test
adapts); a test checks that each still shows on the emulator, so the list
cannot go stale silently, and where Config Connector's recordings of real
traffic can back the real-GCP side, a test checks them too.

Without the Pub/Sub emulator (or Java) the Pub/Sub tests skip with
"Pub/Sub emulator not found: ..."; without gcp-storage-emulator the storage
tests skip with "gcp-storage-emulator not installed: ...".
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from kccgen.mockgcp.httplog import HttpLogEntry, read_http_log
from kccgen.runtime.reconciler import MAX_STREAK
from tests.conftest import COMPAT, REPO
from tests.support.emulators import PubSubEmulator, free_port, running_pubsub_emulator
from tests.test_pubsub_emulator_parity import EMULATOR_DIFFERENCES as PARITY_DIFFERENCES
from tests.test_pubsub_emulator_parity import TOPIC_LABELS_PATCHABLE, RealGcp, _check_fact

PROJECT = "kccgen-emulators"
FORCE_ACQUIRE = {"cnrm.cloud.google.com/force-acquire": "true"}
STORAGE_RECORDINGS = COMPAT / "fixtures" / "basic" / "storage"


# --- plain HTTP to the emulators (no kccgen code) ------------------------------------


def http(method: str, url: str, body: Any = None) -> tuple[int, Any]:
    """(status, JSON body or {} or the raw text) of one request."""
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json"} if data is not None else {}
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            status, text = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        status, text = e.code, e.read().decode()
    if not text.strip():
        return status, {}
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text


def read(url: str) -> dict[str, Any] | None:
    """The resource at url, or None on 404."""
    status, body = http("GET", url)
    if status == 404:
        return None
    assert status == 200, f"GET {url}: {status} {body}"
    assert isinstance(body, dict)
    return body


# --- kccctl in a subprocess ------------------------------------------------------------


@dataclass(frozen=True)
class CliRun:
    code: int
    stdout: str
    stderr: str

    def row(self, name: str) -> list[str]:
        """The table row (KIND NAME READY REASON EXTERNALREF) of object ``name``."""
        for line in self.stdout.splitlines():
            cols = line.split()
            if len(cols) >= 4 and cols[1] == name:
                return cols
        raise AssertionError(f"no row for {name} in:\n{self.stdout}{self.stderr}")


class Kccctl:
    """``python -m kccgen.runtime.cli`` with one state directory and endpoint."""

    def __init__(self, endpoint: str, workdir: Path) -> None:
        self.endpoint = endpoint
        self.workdir = workdir
        self.state = workdir / "state"
        self._n = 0

    def _run(self, *args: str) -> CliRun:
        r = subprocess.run(
            [sys.executable, "-m", "kccgen.runtime.cli", *args],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert "Traceback" not in r.stderr, r.stderr
        return CliRun(r.returncode, r.stdout, r.stderr)

    def _file(self, docs: tuple[dict[str, Any], ...]) -> Path:
        self._n += 1
        path = self.workdir / f"manifest-{self._n}.yaml"
        path.write_text(yaml.safe_dump_all(list(docs), sort_keys=True), encoding="utf-8")
        return path

    def _verb(self, verb: str, docs: tuple[dict[str, Any], ...]) -> CliRun:
        return self._run(
            verb,
            "-f",
            str(self._file(docs)),
            "--state",
            str(self.state),
            "--endpoint",
            self.endpoint,
            "--project",
            PROJECT,
        )

    def apply(self, *docs: dict[str, Any]) -> CliRun:
        return self._verb("apply", docs)

    def delete(self, *docs: dict[str, Any]) -> CliRun:
        return self._verb("delete", docs)

    def get(self, kind: str, name: str) -> dict[str, Any]:
        r = self._run("get", kind, name, "-o", "yaml", "--state", str(self.state))
        assert r.code == 0, r.stderr
        obj = yaml.safe_load(r.stdout)
        assert isinstance(obj, dict)
        return obj

    def ready(self, kind: str, name: str) -> tuple[str, str, str]:
        """(status, reason, message) of the object's Ready condition."""
        obj = self.get(kind, name)
        cond = next(c for c in obj["status"]["conditions"] if c["type"] == "Ready")
        return cond["status"], cond["reason"], cond["message"]


def manifest(
    kind: str, name: str, spec: dict[str, Any], annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    group = {"PubSubTopic": "pubsub", "PubSubSubscription": "pubsub", "StorageBucket": "storage"}
    meta: dict[str, Any] = {"name": name}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {
        "apiVersion": f"{group[kind]}.cnrm.cloud.google.com/v1beta1",
        "kind": kind,
        "metadata": meta,
        "spec": spec,
    }


# --- differences from real GCP ---------------------------------------------------------


@dataclass(frozen=True)
class Difference:
    """Where an emulator departs from real GCP in what these scenarios do.

    ``shows`` returns None when the emulator still behaves as described, else
    what it did instead; ``real`` names the evidence for real GCP's behaviour.
    """

    id: str
    emulator: str
    real: str
    adaptation: str
    shows: Callable[[str], str | None]  # emulator base URL -> problem or None


def _pubsub_mask_refused(collection: str, body: dict[str, Any]) -> Callable[[str], str | None]:
    def shows(base: str) -> str | None:
        name = f"diff-{collection}-{free_port()}"
        topic = f"{base}v1/projects/{PROJECT}/topics/{name}"
        status, _ = http("PUT", topic, {"labels": {"a": "b"}})
        assert status == 200
        url = topic
        if collection == "subscriptions":
            url = f"{base}v1/projects/{PROJECT}/subscriptions/{name}"
            status, _ = http(
                "PUT", url, {"topic": f"projects/{PROJECT}/topics/{name}", "labels": {"a": "b"}}
            )
            assert status == 200
        status, answer = http("PATCH", url, body)
        if status != 400 or "labels is not a known" not in json.dumps(answer):
            return f"PATCH updateMask=labels answered {status} {answer}"
        return None

    return shows


def _bucket(base: str, name: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    status, answer = http(
        "POST", f"{base}storage/v1/b?project={PROJECT}", {"name": name, **(body or {})}
    )
    assert status == 200, answer
    assert isinstance(answer, dict)
    return answer


def _insert_drops_fields(base: str) -> str | None:
    sent = {
        "labels": {"team": "a"},
        "storageClass": "NEARLINE",
        "location": "EU",
        "versioning": {"enabled": True},
    }
    got = _bucket(base, f"diff-insert-{free_port()}", sent)
    kept = sorted(k for k, v in sent.items() if got.get(k) == v)
    return f"insert kept {kept}" if kept else None


def _precondition_ignored(base: str) -> str | None:
    name = f"diff-precondition-{free_port()}"
    _bucket(base, name)
    status, answer = http(
        "PATCH", f"{base}storage/v1/b/{name}?ifMetagenerationMatch=999", {"labels": {"x": "y"}}
    )
    return (
        None
        if status == 200
        else f"PATCH with a stale ifMetagenerationMatch answered {status} {answer}"
    )


def _bucket_fields(base: str) -> str | None:
    got = read(f"{base}storage/v1/b/{_bucket(base, f'diff-fields-{free_port()}')['name']}") or {}
    problems = [f"returns {f}" for f in ("rpo", "generation") if f in got]
    problems += [f"omits {f}" for f in ("acl", "defaultObjectAcl") if f not in got]
    return "; ".join(problems) or None


def _self_link(base: str) -> str | None:
    link = str(_bucket(base, f"diff-selflink-{free_port()}").get("selfLink", ""))
    return None if link.startswith("/storage/v1/b/") else f"selfLink is {link!r}"


def _null_label_kept(base: str) -> str | None:
    name = _bucket(base, f"diff-null-label-{free_port()}")["name"]
    http("PATCH", f"{base}storage/v1/b/{name}", {"labels": {"keep": "1", "gone": "2"}})
    # Real GCP (merge, null removes): {"keep": "1"}. The emulator replaces the map, null kept.
    status, answer = http("PATCH", f"{base}storage/v1/b/{name}", {"labels": {"gone": None}})
    labels = answer.get("labels") if isinstance(answer, dict) else None
    if labels == {"gone": None}:
        return None
    return f"PATCH labels={{'gone': null}} answered {status} labels={labels}"


def _delete_status(base: str) -> str | None:
    name = _bucket(base, f"diff-delete-{free_port()}")["name"]
    status, _ = http("DELETE", f"{base}storage/v1/b/{name}")
    return None if status == 200 else f"DELETE answered {status}"


PUBSUB_DIFFERENCES: tuple[Difference, ...] = (
    Difference(
        "topic-labels-mask",
        "topics.patch refuses updateMask=labels (400 'labels is not a known Topic field'); "
        "listed in tests/test_pubsub_emulator_parity.py EMULATOR_DIFFERENCES",
        "accepts it: pubsubtopic's recorded PATCH (updateMask labels,messageRetentionDuration,...) answers 200",
        "the topic update changes messageRetentionDuration; a label change is asserted to fail with the emulator's message",
        _pubsub_mask_refused("topics", {"topic": {"labels": {"a": "c"}}, "updateMask": "labels"}),
    ),
    Difference(
        "subscription-labels-mask",
        "subscriptions.patch refuses updateMask=labels too (400 'labels is not a known Subscription field'); "
        "not in the parity test's table, which patches only ackDeadlineSeconds on subscriptions",
        "accepts it: basicpubsubsubscription's recorded PATCH (updateMask ackDeadlineSeconds,enableExactlyOnceDelivery,labels) answers 200",
        "the subscription update changes ackDeadlineSeconds; a label change is asserted to fail with the emulator's message",
        _pubsub_mask_refused(
            "subscriptions", {"subscription": {"labels": {"a": "c"}}, "updateMask": "labels"}
        ),
    ),
)
SUBSCRIPTION_LABELS_PATCHABLE = RealGcp("subscriptions", "labels", "mask-accepted")

STORAGE_DIFFERENCES: tuple[Difference, ...] = (
    Difference(
        "insert-keeps-only-name",
        "buckets.insert keeps only `name`: labels, storageClass, location, versioning... in the body are "
        "dropped (the bucket gets US / STANDARD / no labels)",
        "insert creates the bucket as asked: every recorded storagebucket POST answers with the labels it sent",
        "after `kccctl apply` creates a bucket, the next apply PATCHes the dropped fields "
        "(metageneration 1 -> 2); on real GCP it would be up to date with no write",
        _insert_drops_fields,
    ),
    Difference(
        "precondition-ignored",
        "buckets.patch ignores ifMetagenerationMatch (a stale value still answers 200 and writes)",
        "412 Precondition Failed (conditionNotMet) when the metageneration differs "
        "(documented request precondition; KCC's recordings never send one)",
        "kccctl sends ifMetagenerationMatch with every bucket PATCH, but a lost update cannot be "
        "shown here; no test relies on the 412",
        _precondition_ignored,
    ),
    Difference(
        "bucket-fields",
        "a bucket has no rpo and no generation, and has acl and defaultObjectAcl ([])",
        "every recorded GET of a bucket has rpo and generation, and none has acl/defaultObjectAcl "
        "(default projection noAcl)",
        "none needed: only fields the spec sets are compared; status.observedState differs",
        _bucket_fields,
    ),
    Difference(
        "relative-self-link",
        "selfLink is a path (/storage/v1/b/NAME)",
        "https://www.googleapis.com/storage/v1/b/NAME in every recording",
        "none needed: selfLink is output-only",
        _self_link,
    ),
    Difference(
        "delete-status",
        "buckets.delete answers 200 with an empty body",
        "204 No Content in every recording",
        "none needed: both are success to the client",
        _delete_status,
    ),
    Difference(
        "null-label-kept",
        "buckets.patch stores a label sent as null ({'gone': null} stays in labels) instead of "
        "removing it, and replaces the labels map instead of merging it",
        "a PATCH merges labels and a null value removes the key (the client libraries' "
        "'remove bucket label' samples send the key as null; googleapis/google-cloud-python#3711)",
        "removing a label from the spec cannot converge: kccctl sends the key as null, the emulator keeps "
        "it, and after MAX_STREAK writes of the same change the reconciler's repeated-update guard stops with UpdateFailed "
        "(asserted in test_storage_label_removal_meets_null_labels)",
        _null_label_kept,
    ),
)


# --- fixtures ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pubsub_emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PubSubEmulator]:
    yield from running_pubsub_emulator(tmp_path_factory.mktemp("pubsub-emulator"))


@pytest.fixture(scope="module")
def storage_emulator() -> Iterator[str]:
    """gcp-storage-emulator, in memory, in a thread of this process; its base URL."""
    if importlib.util.find_spec("gcp_storage_emulator") is None:
        pytest.skip(
            "gcp-storage-emulator not installed: the 'gcp_storage_emulator' module is missing "
            "(it is in the dev extra: make setup)"
        )
    from gcp_storage_emulator.server import create_server

    port = free_port()
    server = create_server("127.0.0.1", port, in_memory=True)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.stop()


@pytest.fixture
def ps(pubsub_emulator: PubSubEmulator, tmp_path: Path) -> Kccctl:
    return Kccctl(pubsub_emulator.base_url, tmp_path)


@pytest.fixture
def gcs(storage_emulator: str, tmp_path: Path) -> Kccctl:
    return Kccctl(storage_emulator, tmp_path)


def topic_url(k: Kccctl, topic: str) -> str:
    return f"{k.endpoint}v1/projects/{PROJECT}/topics/{topic}"


def sub_url(k: Kccctl, sub: str) -> str:
    return f"{k.endpoint}v1/projects/{PROJECT}/subscriptions/{sub}"


def bucket_url(k: Kccctl, bucket: str) -> str:
    return f"{k.endpoint}storage/v1/b/{bucket}"


# --- Pub/Sub: topics and subscriptions through kccctl -----------------------------------


def _topic(name: str, **spec: Any) -> dict[str, Any]:
    return manifest(
        "PubSubTopic",
        name,
        {"labels": {"team": "checkout"}, "messageRetentionDuration": "86600s", **spec},
    )


def _sub(name: str, topic: str, **spec: Any) -> dict[str, Any]:
    return manifest(
        "PubSubSubscription",
        name,
        {
            "topicRef": {"name": topic},
            "ackDeadlineSeconds": 20,
            "labels": {"team": "billing"},
            **spec,
        },
    )


def test_pubsub_create_then_reapply_is_up_to_date(ps: Kccctl) -> None:
    topic, sub = _topic("ps-create"), _sub("ps-create-sub", "ps-create")
    r = ps.apply(topic, sub)
    assert r.code == 0, r.stdout + r.stderr
    assert r.row("ps-create")[2:5] == ["True", "UpToDate", f"projects/{PROJECT}/topics/ps-create"]
    assert r.row("ps-create-sub")[2:5] == [
        "True",
        "UpToDate",
        f"projects/{PROJECT}/subscriptions/ps-create-sub",
    ]
    live_topic = read(topic_url(ps, "ps-create"))
    live_sub = read(sub_url(ps, "ps-create-sub"))
    assert live_topic == {
        "name": f"projects/{PROJECT}/topics/ps-create",
        "labels": {"team": "checkout"},
        "messageRetentionDuration": "86600s",
    }
    assert live_sub is not None
    assert live_sub["topic"] == f"projects/{PROJECT}/topics/ps-create"
    assert (live_sub["ackDeadlineSeconds"], live_sub["labels"]) == (20, {"team": "billing"})
    assert ps.ready("PubSubTopic", "ps-create")[1] == "UpToDate"

    again = ps.apply(topic, sub)
    assert again.code == 0, again.stdout + again.stderr
    assert "updated" not in ps.ready("PubSubTopic", "ps-create")[2]
    assert ps.ready("PubSubSubscription", "ps-create-sub")[2].endswith("is up to date")
    assert read(topic_url(ps, "ps-create")) == live_topic
    assert read(sub_url(ps, "ps-create-sub")) == live_sub


def test_pubsub_update_changes_mutable_fields(ps: Kccctl) -> None:
    assert ps.apply(_topic("ps-update"), _sub("ps-update-sub", "ps-update")).code == 0
    # Emulator difference topic-labels-mask / subscription-labels-mask: labels
    # cannot be patched here, so the updates change other mutable fields.
    r = ps.apply(
        _topic("ps-update", messageRetentionDuration="172800s"),
        _sub("ps-update-sub", "ps-update", ackDeadlineSeconds=30),
    )
    assert r.code == 0, r.stdout + r.stderr
    assert ps.ready("PubSubTopic", "ps-update")[2] == f"updated projects/{PROJECT}/topics/ps-update"
    assert (
        ps.ready("PubSubSubscription", "ps-update-sub")[2]
        == f"updated projects/{PROJECT}/subscriptions/ps-update-sub"
    )
    live_topic = read(topic_url(ps, "ps-update")) or {}
    live_sub = read(sub_url(ps, "ps-update-sub")) or {}
    assert live_topic["messageRetentionDuration"] == "172800s"
    assert live_topic["labels"] == {"team": "checkout"}  # untouched
    assert live_sub["ackDeadlineSeconds"] == 30
    assert live_sub["labels"] == {"team": "billing"}  # untouched
    assert ps.get("PubSubTopic", "ps-update")["metadata"]["generation"] == 2


@pytest.mark.parametrize("kind", ["PubSubTopic", "PubSubSubscription"])
def test_pubsub_label_update_meets_the_emulator_refusal(ps: Kccctl, kind: str) -> None:
    """Emulator differences topic-labels-mask and subscription-labels-mask, as kccctl sees them."""
    name = f"ps-labels-{kind.lower()}"
    topic = _topic(name)
    docs = [topic] if kind == "PubSubTopic" else [topic, _sub(f"{name}-sub", name)]
    assert ps.apply(*docs).code == 0
    changed = (
        [topic, _sub(f"{name}-sub", name, labels={"team": "payments"})]
        if kind == "PubSubSubscription"
        else [_topic(name, labels={"team": "payments"})]
    )
    target = name if kind == "PubSubTopic" else f"{name}-sub"
    url = topic_url(ps, name) if kind == "PubSubTopic" else sub_url(ps, target)
    before = read(url)
    r = ps.apply(*changed)
    assert r.code == 1, r.stdout + r.stderr
    status, reason, message = ps.ready(kind, target)
    assert (status, reason) == ("False", "UpdateFailed")
    noun = "Topic" if kind == "PubSubTopic" else "Subscription"
    assert f"labels is not a known {noun} field" in message, message
    assert read(url) == before


SUBSCRIPTION_FIELD_CHANGES = {
    # field -> (spec change, the emulator's refusal)
    "topicRef": (
        {"topicRef": {"name": "{name}-other"}},
        "the topic field in the Subscription is not mutable",
    ),
    "enableMessageOrdering": (
        {"enableMessageOrdering": True},
        "the enable_message_ordering field in the Subscription is not mutable",
    ),
}


def _immutable_change(
    ps: Kccctl, field: str
) -> tuple[str, str, dict[str, Any] | None, dict[str, Any] | None]:
    """Create a subscription, change ``field``; (reason, message, live before, live after)."""
    name = f"ps-immutable-{field.lower()}"
    topics = [_topic(name), _topic(f"{name}-other")]
    assert ps.apply(*topics, _sub(f"{name}-sub", name)).code == 0
    before = read(sub_url(ps, f"{name}-sub"))
    change = json.loads(json.dumps(SUBSCRIPTION_FIELD_CHANGES[field][0]).replace("{name}", name))
    r = ps.apply(*topics, _sub(f"{name}-sub", name, **change))
    assert r.code == 1, r.stdout + r.stderr
    # Refused at admission, as an API server refuses it: the stored object (and its
    # Ready condition) stays as it was; kccctl's row and message say why.
    row = next(ln.split() for ln in r.stdout.splitlines() if ln.startswith("PubSubSubscription ") and f"{name}-sub" in ln)
    message = next(ln for ln in r.stdout.splitlines() if ln.startswith(f"PubSubSubscription/{name}-sub: "))
    assert row[2] == "False", r.stdout
    return row[3], message, before, read(sub_url(ps, f"{name}-sub"))


@pytest.mark.parametrize("field", sorted(SUBSCRIPTION_FIELD_CHANGES))
def test_pubsub_subscription_immutable_field_is_not_changed(ps: Kccctl, field: str) -> None:
    """The service refuses to change these fields; the subscription stays as it was."""
    reason, message, before, after = _immutable_change(ps, field)
    assert reason == "Invalid", message
    assert after == before


@pytest.mark.parametrize("field", sorted(SUBSCRIPTION_FIELD_CHANGES))
def test_pubsub_subscription_immutable_field_is_refused_by_name(ps: Kccctl, field: str) -> None:
    """kccctl's admission refuses by name, before any GCP call (the mutability table
    marks these fields immutable: specs/kinds/pubsub.yaml), instead of sending a
    PATCH the service refuses."""
    reason, message, _, _ = _immutable_change(ps, field)
    assert reason == "Invalid", message
    assert SUBSCRIPTION_FIELD_CHANGES[field][1] not in message, message
    assert f"spec.{field}: cannot be changed" in message, message


def test_pubsub_consecutive_edits_of_one_field_all_apply(ps: Kccctl) -> None:
    """Three user edits of one field in a row are three changes, not a service reverting one."""
    topic = _topic("ps-edits")
    assert ps.apply(topic, _sub("ps-edits-sub", "ps-edits")).code == 0
    for deadline in (30, 40, 50):  # three user edits, each applied once, each a new generation
        r = ps.apply(topic, _sub("ps-edits-sub", "ps-edits", ackDeadlineSeconds=deadline))
        assert (read(sub_url(ps, "ps-edits-sub")) or {}).get("ackDeadlineSeconds") == deadline, (
            r.stdout
        )
        assert r.code == 0, r.stdout + r.stderr


def test_pubsub_acquire_by_resource_id(ps: Kccctl) -> None:
    status, _ = http(
        "PUT",
        topic_url(ps, "ps-raw"),
        {"labels": {"team": "raw"}, "messageRetentionDuration": "3600s"},
    )
    assert status == 200
    status, _ = http(
        "PUT",
        sub_url(ps, "ps-raw-sub"),
        {"topic": f"projects/{PROJECT}/topics/ps-raw", "ackDeadlineSeconds": 10},
    )
    assert status == 200
    topic_before, sub_before = read(topic_url(ps, "ps-raw")), read(sub_url(ps, "ps-raw-sub"))

    # Matching spec: adopted with no write.
    adopt_topic = manifest(
        "PubSubTopic",
        "adopted-topic",
        {"resourceID": "ps-raw", "labels": {"team": "raw"}, "messageRetentionDuration": "3600s"},
    )
    adopt_sub = manifest(
        "PubSubSubscription",
        "adopted-sub",
        {
            "resourceID": "ps-raw-sub",
            "topicRef": {"name": "adopted-topic"},
            "ackDeadlineSeconds": 10,
        },
    )
    r = ps.apply(adopt_topic, adopt_sub)
    assert r.code == 0, r.stdout + r.stderr
    assert r.row("adopted-topic")[2:5] == ["True", "UpToDate", f"projects/{PROJECT}/topics/ps-raw"]
    assert r.row("adopted-sub")[2:5] == [
        "True",
        "UpToDate",
        f"projects/{PROJECT}/subscriptions/ps-raw-sub",
    ]
    assert read(topic_url(ps, "ps-raw")) == topic_before
    assert read(sub_url(ps, "ps-raw-sub")) == sub_before
    assert (
        ps.get("PubSubTopic", "adopted-topic")["status"]["externalRef"]
        == f"projects/{PROJECT}/topics/ps-raw"
    )

    # Then managed: a changed mutable field is written to the acquired resource.
    adopt_sub["spec"]["ackDeadlineSeconds"] = 45
    r = ps.apply(adopt_topic, adopt_sub)
    assert r.code == 0, r.stdout + r.stderr
    assert (read(sub_url(ps, "ps-raw-sub")) or {})["ackDeadlineSeconds"] == 45
    assert read(topic_url(ps, "ps-raw")) == topic_before


def test_pubsub_force_acquire_verifies_without_writing(ps: Kccctl) -> None:
    status, _ = http(
        "PUT",
        topic_url(ps, "ps-verify"),
        {"labels": {"team": "raw"}, "messageRetentionDuration": "3600s"},
    )
    assert status == 200
    status, _ = http(
        "PUT",
        sub_url(ps, "ps-verify-sub"),
        {"topic": f"projects/{PROJECT}/topics/ps-verify", "ackDeadlineSeconds": 10},
    )
    assert status == 200
    topic_before, sub_before = read(topic_url(ps, "ps-verify")), read(sub_url(ps, "ps-verify-sub"))
    spec = {
        "resourceID": "ps-verify",
        "labels": {"team": "raw"},
        "messageRetentionDuration": "3600s",
    }
    sub_spec = {
        "resourceID": "ps-verify-sub",
        "topicRef": {"external": f"projects/{PROJECT}/topics/ps-verify"},
        "ackDeadlineSeconds": 10,
    }

    equal = ps.apply(
        manifest("PubSubTopic", "verify-equal", spec, FORCE_ACQUIRE),
        manifest("PubSubSubscription", "verify-equal-sub", sub_spec, FORCE_ACQUIRE),
    )
    assert equal.code == 0, equal.stdout + equal.stderr
    assert equal.row("verify-equal")[2:4] == ["True", "UpToDate"]
    assert equal.row("verify-equal-sub")[2:4] == ["True", "UpToDate"]
    assert "nothing written" in ps.ready("PubSubTopic", "verify-equal")[2]

    differs = ps.apply(
        manifest(
            "PubSubTopic",
            "verify-differs",
            {**spec, "messageRetentionDuration": "7200s"},
            FORCE_ACQUIRE,
        ),
        manifest(
            "PubSubSubscription",
            "verify-differs-sub",
            {**sub_spec, "ackDeadlineSeconds": 60},
            FORCE_ACQUIRE,
        ),
    )
    assert differs.code == 1
    status_, reason, message = ps.ready("PubSubTopic", "verify-differs")
    assert (status_, reason) == ("False", "DriftDetected")
    assert 'messageRetentionDuration: desired "7200s", actual "3600s"' in message, message
    status_, reason, message = ps.ready("PubSubSubscription", "verify-differs-sub")
    assert (status_, reason) == ("False", "DriftDetected")
    assert "ackDeadlineSeconds: desired 60, actual 10" in message, message

    absent = ps.apply(
        manifest("PubSubTopic", "verify-absent", {"resourceID": "ps-verify-absent"}, FORCE_ACQUIRE)
    )
    assert absent.code == 1
    assert absent.row("verify-absent")[2:4] == ["False", "ResourceNotFound"]
    assert read(topic_url(ps, "ps-verify-absent")) is None  # never created

    # Deleting a verify-only object releases it: the topic stays.
    released = ps.delete(
        manifest(
            "PubSubTopic",
            "verify-differs",
            {**spec, "messageRetentionDuration": "7200s"},
            FORCE_ACQUIRE,
        )
    )
    assert released.code == 0
    assert released.row("verify-differs")[2:4] == ["True", "Released"]

    assert read(topic_url(ps, "ps-verify")) == topic_before
    assert read(sub_url(ps, "ps-verify-sub")) == sub_before


def test_pubsub_delete(ps: Kccctl) -> None:
    topic, sub = _topic("ps-delete"), _sub("ps-delete-sub", "ps-delete")
    assert ps.apply(topic, sub).code == 0
    r = ps.delete(topic, sub)
    assert r.code == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[0].split() == ["KIND", "NAME", "DELETED", "REASON", "EXTERNALREF"]
    assert r.row("ps-delete")[2:4] == ["True", "Deleted"]
    assert r.row("ps-delete-sub")[2:4] == ["True", "Deleted"]
    assert read(topic_url(ps, "ps-delete")) is None
    assert read(sub_url(ps, "ps-delete-sub")) is None
    assert not list(ps.state.rglob("*.yaml"))  # the objects left the state directory


@pytest.mark.parametrize("diff", PUBSUB_DIFFERENCES, ids=lambda d: d.id)
def test_pubsub_difference_still_shows(pubsub_emulator: PubSubEmulator, diff: Difference) -> None:
    problem = diff.shows(pubsub_emulator.base_url)
    assert problem is None, (
        f"stale difference {diff.id} ({diff.emulator}): the emulator now {problem}"
    )


def test_topic_labels_difference_is_the_parity_tests() -> None:
    assert any(
        d.fact == TOPIC_LABELS_PATCHABLE and d.effect == "rejects" for d in PARITY_DIFFERENCES
    )


@pytest.mark.skipif(
    not (COMPAT / "fixtures" / "basic" / "pubsub").is_dir(), reason="KCC recordings not found"
)
@pytest.mark.parametrize(
    "fact", [TOPIC_LABELS_PATCHABLE, SUBSCRIPTION_LABELS_PATCHABLE], ids=lambda f: f.collection
)
def test_pubsub_real_gcp_patches_labels(fact: RealGcp) -> None:
    problem = _check_fact(fact)
    assert problem is None, f"real GCP {fact}: {problem}"


# --- Cloud Storage: buckets through kccctl ------------------------------------------------


def _bucket_manifest(
    name: str, annotations: dict[str, str] | None = None, **spec: Any
) -> dict[str, Any]:
    return manifest(
        "StorageBucket", name, {"location": "US", "storageClass": "STANDARD", **spec}, annotations
    )


def test_storage_create_then_reapply(gcs: Kccctl) -> None:
    bucket = _bucket_manifest(
        "kccgen-gcs-create", labels={"team": "checkout"}, versioning={"enabled": True}
    )
    r = gcs.apply(bucket)
    assert r.code == 0, r.stdout + r.stderr
    assert r.row("kccgen-gcs-create")[2:5] == ["True", "UpToDate", "kccgen-gcs-create"]
    live = read(bucket_url(gcs, "kccgen-gcs-create")) or {}
    assert (live["location"], live["storageClass"], live["metageneration"]) == (
        "US",
        "STANDARD",
        "1",
    )
    # Difference insert-keeps-only-name: the labels and versioning kccctl sent
    # were dropped; real GCP would have them now.
    assert "labels" not in live and "versioning" not in live

    # So the next apply finds them missing and PATCHes them (real GCP: up to date).
    r = gcs.apply(bucket)
    assert r.code == 0, r.stdout + r.stderr
    assert gcs.ready("StorageBucket", "kccgen-gcs-create")[2] == "updated kccgen-gcs-create"
    live = read(bucket_url(gcs, "kccgen-gcs-create")) or {}
    assert live["labels"] == {"team": "checkout"}
    assert live["versioning"] == {"enabled": True}
    assert live["metageneration"] == "2"

    # Converged: a third apply writes nothing.
    r = gcs.apply(bucket)
    assert r.code == 0
    assert gcs.ready("StorageBucket", "kccgen-gcs-create")[2] == "kccgen-gcs-create is up to date"
    assert read(bucket_url(gcs, "kccgen-gcs-create")) == live


def test_storage_update(gcs: Kccctl) -> None:
    assert gcs.apply(_bucket_manifest("kccgen-gcs-update")).code == 0
    r = gcs.apply(
        _bucket_manifest("kccgen-gcs-update", storageClass="NEARLINE", labels={"env": "prod"})
    )
    assert r.code == 0, r.stdout + r.stderr
    live = read(bucket_url(gcs, "kccgen-gcs-update")) or {}
    assert (live["storageClass"], live["labels"], live["metageneration"]) == (
        "NEARLINE",
        {"env": "prod"},
        "2",
    )


def test_storage_label_removal_meets_null_labels(gcs: Kccctl) -> None:
    """Difference null-label-kept: a removed label never goes away on the emulator, and
    the reconciler stops rewriting it after MAX_STREAK writes."""
    both = _bucket_manifest("kccgen-gcs-labels", labels={"team": "a", "env": "prod"})
    assert gcs.apply(both).code == 0
    assert gcs.apply(both).code == 0  # insert-keeps-only-name: this apply writes the labels
    assert gcs.apply(both).code == 0  # up to date: resets the reconciler's repeated-update count
    assert gcs.ready("StorageBucket", "kccgen-gcs-labels")[2] == "kccgen-gcs-labels is up to date"
    live = read(bucket_url(gcs, "kccgen-gcs-labels")) or {}
    assert live["labels"] == {"team": "a", "env": "prod"}

    one = _bucket_manifest("kccgen-gcs-labels", labels={"team": "a"})
    metagenerations = []
    for _ in range(MAX_STREAK + 1):
        r = gcs.apply(one)
        metagenerations.append((read(bucket_url(gcs, "kccgen-gcs-labels")) or {})["metageneration"])
        if r.code:
            break
        assert gcs.ready("StorageBucket", "kccgen-gcs-labels")[2] == "updated kccgen-gcs-labels"
    live = read(bucket_url(gcs, "kccgen-gcs-labels")) or {}
    assert live["labels"] == {"team": "a", "env": None}  # real GCP: {"team": "a"}
    status, reason, message = gcs.ready("StorageBucket", "kccgen-gcs-labels")
    assert (status, reason) == ("False", "UpdateFailed"), message
    assert "the service keeps setting another value; stopped updating" in message, message
    # The same change written MAX_STREAK times, then no more writes.
    assert len(metagenerations) == MAX_STREAK + 1, metagenerations
    assert len(set(metagenerations)) == MAX_STREAK, metagenerations
    assert metagenerations[-1] == metagenerations[-2]


def test_storage_acquire_by_resource_id(gcs: Kccctl) -> None:
    _bucket(gcs.endpoint, "kccgen-gcs-raw")
    before = read(bucket_url(gcs, "kccgen-gcs-raw"))
    r = gcs.apply(_bucket_manifest("adopted-bucket", resourceID="kccgen-gcs-raw"))
    assert r.code == 0, r.stdout + r.stderr
    assert r.row("adopted-bucket")[2:5] == ["True", "UpToDate", "kccgen-gcs-raw"]
    assert read(bucket_url(gcs, "kccgen-gcs-raw")) == before  # metageneration still 1: no write
    assert (
        gcs.get("StorageBucket", "adopted-bucket")["status"]["observedState"]["metageneration"]
        == "1"
    )


def test_storage_force_acquire_verifies_without_writing(gcs: Kccctl) -> None:
    _bucket(gcs.endpoint, "kccgen-gcs-verify")
    http("PATCH", bucket_url(gcs, "kccgen-gcs-verify"), {"labels": {"team": "raw"}})
    before = read(bucket_url(gcs, "kccgen-gcs-verify"))
    assert before is not None and before["metageneration"] == "2"

    equal = gcs.apply(
        _bucket_manifest(
            "verify-equal", FORCE_ACQUIRE, resourceID="kccgen-gcs-verify", labels={"team": "raw"}
        )
    )
    assert equal.code == 0, equal.stdout + equal.stderr
    assert equal.row("verify-equal")[2:4] == ["True", "UpToDate"]

    differs = gcs.apply(
        _bucket_manifest(
            "verify-differs",
            FORCE_ACQUIRE,
            resourceID="kccgen-gcs-verify",
            storageClass="NEARLINE",
            labels={"team": "raw"},
        )
    )
    assert differs.code == 1
    status, reason, message = gcs.ready("StorageBucket", "verify-differs")
    assert (status, reason) == ("False", "DriftDetected")
    assert 'storageClass: desired "NEARLINE", actual "STANDARD"' in message, message

    absent = gcs.apply(
        _bucket_manifest("verify-absent", FORCE_ACQUIRE, resourceID="kccgen-gcs-absent")
    )
    assert absent.code == 1
    assert absent.row("verify-absent")[2:4] == ["False", "ResourceNotFound"]
    assert read(bucket_url(gcs, "kccgen-gcs-absent")) is None

    assert read(bucket_url(gcs, "kccgen-gcs-verify")) == before  # metageneration still 2


def test_storage_delete(gcs: Kccctl) -> None:
    bucket = _bucket_manifest("kccgen-gcs-delete")
    assert gcs.apply(bucket).code == 0
    r = gcs.delete(bucket)
    assert r.code == 0, r.stdout + r.stderr
    assert r.row("kccgen-gcs-delete")[2:4] == ["True", "Deleted"]
    assert read(bucket_url(gcs, "kccgen-gcs-delete")) is None
    again = gcs.delete(bucket)  # already gone: nothing to do, still success
    assert again.code == 0


@pytest.mark.parametrize("diff", STORAGE_DIFFERENCES, ids=lambda d: d.id)
def test_storage_difference_still_shows(storage_emulator: str, diff: Difference) -> None:
    problem = diff.shows(storage_emulator)
    assert problem is None, (
        f"stale difference {diff.id} ({diff.emulator}): the emulator now {problem}"
    )


def _storage_exchanges() -> list[tuple[Path, HttpLogEntry]]:
    out = []
    for log in sorted(STORAGE_RECORDINGS.rglob("_http.log")):
        for e in read_http_log(log):
            parts = urlsplit(e.url).path.strip("/").split("/")  # storage v1 b [name]
            if parts[:3] == ["storage", "v1", "b"] and len(parts) <= 4:
                out.append((log, e))
    return out


@pytest.mark.skipif(
    not STORAGE_RECORDINGS.is_dir(), reason=f"KCC recordings not found at {STORAGE_RECORDINGS}"
)
def test_storage_real_gcp_facts() -> None:
    """The real-GCP side of STORAGE_DIFFERENCES, in Config Connector's recordings."""
    exchanges = _storage_exchanges()
    gets = [
        (p, e.response_json)
        for p, e in exchanges
        if e.method == "GET"
        and e.status_code == 200
        and len(urlsplit(e.url).path.strip("/").split("/")) == 4
    ]
    inserts = [(p, e) for p, e in exchanges if e.method == "POST" and e.status_code == 200]
    deletes = [(p, e) for p, e in exchanges if e.method == "DELETE"]
    assert gets and inserts and deletes
    for p, body in gets:
        assert isinstance(body, dict)
        assert {"rpo", "generation"} <= set(body), p
        assert not {"acl", "defaultObjectAcl"} & set(body), p
        assert str(body["selfLink"]).startswith("https://www.googleapis.com/storage/v1/b/"), p
    for p, e in inserts:
        sent, got = e.request_json or {}, e.response_json or {}
        assert got.get("labels") == sent.get("labels"), p
    assert {e.status for _, e in deletes} == {"204 No Content"}


def test_differences_are_documented() -> None:
    for d in (*PUBSUB_DIFFERENCES, *STORAGE_DIFFERENCES):
        assert d.emulator and d.real and d.adaptation, d.id
    ids = [d.id for d in (*PUBSUB_DIFFERENCES, *STORAGE_DIFFERENCES)]
    assert len(ids) == len(set(ids))
