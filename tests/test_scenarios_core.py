"""Scenarios for docs/design.md §5 against mockgcp, asserting the exact HTTP exchanges.

Every test runs the reconciler (runtime/reconciler.py) on KRM objects built by
tests/support/scenarios.py against a fresh mockgcp, then reads the mock's
request log: which requests were sent, in which order, with which bodies and
masks. The minimum-call rules are the point: an up-to-date object costs one
GET, an update one GET and one write carrying only the change, and nothing is
ever written in verify-only (force-acquire) mode.
"""

from __future__ import annotations

import re
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kccgen.mockgcp.engine import MockGCP
from kccgen.mockgcp.normalize import call_sequence
from kccgen.mockgcp.server import MockServer
from kccgen.runtime.identity import identity_for
from kccgen.runtime.registry import types_modules
from tests.support.kinds import (
    CURATED_KINDS,
    Update,
    configured_kinds,
    facts,
    fixture_kinds,
    parents,
)
from tests.support.scenarios import (
    FORCE_ACQUIRE,
    PROJECT,
    Harness,
    annotate,
    harness,
    manifest,
    name_of,
    path_of,
    query_of,
    rest_path,
    with_spec,
)

REPO = Path(__file__).resolve().parent.parent
P = PROJECT


@pytest.fixture
def h() -> Iterator[Harness]:
    with harness() as x:
        yield x


def ready_condition(obj: dict[str, Any]) -> dict[str, Any]:
    conds: list[dict[str, Any]] = [c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == "Ready"]
    assert len(conds) == 1, obj.get("status")
    return conds[0]


def event_reasons(result: Any) -> list[str]:
    return [e.reason for e in result.events]


# --- 1. create every Kind ------------------------------------------------------------------

def test_every_curated_kind_has_facts_and_a_config() -> None:
    """The curated Kinds the registry holds, the kind configs' ``kinds:`` and the fixture folders agree."""
    assert CURATED_KINDS, "no curated Kinds found in the registry"
    assert configured_kinds() == CURATED_KINDS
    assert fixture_kinds() == CURATED_KINDS


def test_manifests_are_valid_krm() -> None:
    models = types_modules()
    for kind in CURATED_KINDS:
        getattr(models[kind], kind).model_validate(manifest(kind))


def _create_parents(h: Harness, kind: str) -> None:
    for parent in parents(kind):
        h.create(parent)
        assert (h.store.get(parent, "ns", name_of(parent)) or {}).get("status", {}).get("externalRef")


@pytest.mark.parametrize("kind", CURATED_KINDS)
def test_create(h: Harness, kind: str) -> None:
    want = facts(kind).create
    _create_parents(h, kind)
    mark = h.mark()
    r = h.reconcile(manifest(kind))

    assert (r.ready, r.reason) == (True, "UpToDate"), r.message
    assert h.calls(mark) == list(want.calls)
    ext = r.obj["status"]["externalRef"]
    assert re.fullmatch(want.externalRef, ext), ext
    assert identity_for(kind).normalize(ext) == ext  # canonical
    writes = h.writes(mark)
    assert len(writes) == 1
    if want.nameFromAnswer:  # the service named it: externalRef comes from the answer
        assert writes[0].response_json["name"] == ext
    for key, value in want.request.items():
        assert writes[0].request_json[key] == value, key
    if want.body is not None:
        assert writes[0].request_json == want.body
    for key, values in want.query.items():
        assert query_of(writes[0])[key] == values, key
    observed = r.obj["status"].get("observedState") or {}
    field = want.outputOnly
    if field is not None:  # the value the service answered (an LRO carries it in "response")
        answers = [e.response_json.get("response") or e.response_json for e in h.entries(mark) if isinstance(e.response_json, dict)]
        assert observed[field] == next(a[field] for a in reversed(answers) if field in a)
    cond = ready_condition(r.obj)
    assert (cond["status"], cond["reason"], cond["observedGeneration"]) == ("True", "UpToDate", 1)
    assert "Created" in event_reasons(r)
    assert "resourceID" not in r.obj["spec"]  # docs/design.md §5.7: never written


# --- 2. an up-to-date object costs one GET --------------------------------------------------


@pytest.mark.parametrize("kind", CURATED_KINDS)
def test_second_reconcile_is_one_get(h: Harness, kind: str) -> None:
    first = h.create(kind)
    ext = first.obj["status"]["externalRef"]
    mark = h.mark()
    r = h.reconcile(first.obj)
    assert (r.ready, r.reason) == (True, "UpToDate"), r.message
    assert h.requests(mark) == [f"GET {rest_path(kind, ext)} -> 200"]
    assert r.obj["status"]["externalRef"] == ext
    assert event_reasons(r) == ["UpToDate"]  # no Created/Updated/Acquired
    assert ready_condition(r.obj)["lastTransitionTime"] == ready_condition(first.obj)["lastTransitionTime"]


@pytest.mark.parametrize("kind", CURATED_KINDS)
def test_delete_is_one_delete_then_gone(h: Harness, kind: str) -> None:
    first = h.create(kind)
    res = rest_path(kind, first.obj["status"]["externalRef"])
    mark = h.mark()
    r = h.delete(first.obj)
    assert (r.deleted, r.reason) == (True, "Deleted"), r.message
    assert [f"{e.method} /{path_of(e)}" for e in h.writes(mark)] == [f"DELETE {res}"]
    assert next(e.method for e in h.entries(mark)) == "DELETE"  # nothing read first: the externalRef says where
    with pytest.raises(urllib.error.HTTPError) as gone:
        urllib.request.urlopen(h.server.base_url.rstrip("/") + res)
    assert gone.value.code == 404


# How real services spell values mockgcp echoes back as sent. Each is the same
# value: the runtime must not "update" it (docs/design.md §5: one GET when up to date).
SPELLINGS = [
    # proto3 JSON and compute leave out false/0/"" fields (recorded traffic: KMS
    # answers without importOnly; compute without enableUlaInternalIpv6).
    pytest.param("KMSCryptoKey", "cloudkms.v1", "importOnly", None, id="kms-omits-false"),
    pytest.param("ComputeNetwork", "compute.v1", "enableUlaInternalIpv6", None, id="compute-omits-false"),
    # google-duration with fractional digits; an RFC 3339 instant with another offset.
    pytest.param("PubSubTopic", "pubsub.v1", "messageRetentionDuration", "86600.000s", id="duration-digits"),
    pytest.param("KMSCryptoKey", "cloudkms.v1", "rotationPeriod", "172800.000000000s", id="duration-nanos"),
]


@pytest.mark.parametrize(("kind", "api", "field", "spelling"), SPELLINGS)
def test_same_value_spelled_differently_is_one_get(h: Harness, kind: str, api: str, field: str, spelling: Any) -> None:
    first = h.create(kind)
    ext = first.obj["status"]["externalRef"]
    stored = h.stored(api, ext)
    if spelling is None:
        del stored[field]
    else:
        stored[field] = spelling
    mark = h.mark()
    r = h.reconcile(first.obj)
    assert (r.ready, r.reason) == (True, "UpToDate"), r.message
    assert h.requests(mark) == [f"GET {rest_path(kind, ext)} -> 200"]


def test_timestamp_in_another_offset_is_one_get(h: Harness) -> None:
    first = h.create("KMSCryptoKey", nextRotationTime="2030-01-01T00:00:00Z")
    ext = first.obj["status"]["externalRef"]
    h.stored("cloudkms.v1", ext)["nextRotationTime"] = "2030-01-01T01:00:00.000000000+01:00"
    mark = h.mark()
    r = h.reconcile(first.obj)
    assert r.ready and h.requests(mark) == [f"GET {rest_path('KMSCryptoKey', ext)} -> 200"]
    # A different instant is a change.
    h.stored("cloudkms.v1", ext)["nextRotationTime"] = "2030-01-01T00:00:01Z"
    mark = h.mark()
    r = h.reconcile(r.obj)
    assert [e.method for e in h.entries(mark)] == ["GET", "PATCH"]
    assert query_of(h.entries(mark)[1])["updateMask"] == ["nextRotationTime"]


@pytest.mark.parametrize(
    ("kind", "desired", "actual", "paths"),
    [
        ("KMSCryptoKey", {"importOnly": False}, {}, []),
        ("KMSCryptoKey", {"importOnly": True}, {}, ["importOnly"]),
        ("KMSCryptoKey", {"labels": {}}, {}, []),
        ("KMSCryptoKey", {"labels": {"a": ""}}, {}, ["labels"]),  # a map with a key is not unset
        ("KMSCryptoKey", {"labels": {"a": "1"}}, {"labels": {"a": "1", "b": "2"}}, ["labels"]),
        ("KMSCryptoKey", {"rotationPeriod": "1.5s"}, {"rotationPeriod": "1.500s"}, []),
        ("KMSCryptoKey", {"rotationPeriod": "1.5s"}, {"rotationPeriod": "1.6s"}, ["rotationPeriod"]),
        ("KMSCryptoKey", {"nextRotationTime": "2030-01-01T00:00:00Z"}, {"nextRotationTime": "2030-01-01T00:00:00.000000001Z"}, ["nextRotationTime"]),
        ("KMSCryptoKey", {"versionTemplate": {"algorithm": "GOOGLE_SYMMETRIC_ENCRYPTION"}}, {"versionTemplate": {"algorithm": "GOOGLE_SYMMETRIC_ENCRYPTION", "protectionLevel": "SOFTWARE"}}, []),
        ("PubSubSubscription", {"topic": f"projects/{P}/topics/t"}, {"topic": f"//pubsub.googleapis.com/projects/{P}/topics/t"}, []),
    ],
)
def test_diff_equivalences(kind: str, desired: dict[str, Any], actual: dict[str, Any], paths: list[str]) -> None:
    from kccgen.runtime.adapter import adapter_for
    from kccgen.runtime.reconciler import diff

    assert [p for p, _, _ in diff(desired, actual, adapter_for(kind), check_mutability=True)] == paths


# --- 3. one mutable field changed: one GET, one write carrying only that field ----------------

UPDATES = [pytest.param(kind, u, id=u.id) for kind in CURATED_KINDS for u in facts(kind).updates]


def assert_calls(sent: list[str], expected: list[str]) -> None:
    """Exact calls; ``{op}`` stands for one generated operation ID."""
    rx = [re.escape(e).replace(re.escape("{op}"), r"[^/ ]+") for e in expected]
    assert len(sent) == len(rx) and all(re.fullmatch(x, c) for x, c in zip(rx, sent, strict=True)), sent


@pytest.mark.parametrize(("kind", "update"), UPDATES)
def test_update_one_field(h: Harness, kind: str, update: Update) -> None:
    first = h.create(kind)
    ext = first.obj["status"]["externalRef"]
    res = rest_path(kind, ext)
    mark = h.mark()
    r = h.reconcile(with_spec(first.obj, **update.spec))
    assert (r.ready, r.reason) == (True, "UpToDate"), r.message
    assert_calls(h.requests(mark), [c.replace("{res}", res) for c in update.calls])
    get, patch = h.entries(mark)[:2]
    writes = h.writes(mark)
    assert writes == [patch]
    if update.style == "body":
        assert patch.request_json == update.body
    elif update.style == "query":
        assert query_of(patch)["updateMask"] == [update.mask]
        assert patch.request_json == update.body
    else:  # whole resource: only the changed top-level field(s), plus the lock token
        body = dict(patch.request_json)
        live = get.response_json
        if update.lockBody:
            assert body.pop(update.lockBody) == live[update.lockBody]
        for param, live_field in update.lockQuery.items():
            assert query_of(patch)[param] == [live[live_field]]
        assert set(body) == set(update.body)
        for key, value in update.body.items():  # an object is merged over the live one
            assert body[key] == ({**live.get(key, {}), **value} if isinstance(value, dict) else value)
    assert "Updated" in event_reasons(r)
    # Converged: the next reconcile is one GET.
    mark = h.mark()
    again = h.reconcile(r.obj)
    assert again.ready and h.requests(mark) == [f"GET {res} -> 200"]


def test_label_removed_mask_names_the_map(h: Harness) -> None:
    """A map is one field: a removed key is a change, and the mask is ``labels``
    (a mask ``labels.<key>`` is not a valid path for keys like ``label-one``)."""
    first = h.create("SecretManagerSecret", labels={"label-one": "value-one", "label-two": "x"})
    mark = h.mark()
    r = h.reconcile(with_spec(first.obj, labels={"label-one": "value-one"}))
    assert r.ready, r.message
    assert [e.method for e in h.entries(mark)] == ["GET", "PATCH"]
    patch = h.entries(mark)[1]
    assert query_of(patch)["updateMask"] == ["labels"]
    assert patch.request_json == {"labels": {"label-one": "value-one"}}
    assert patch.response_json["labels"] == {"label-one": "value-one"}


def test_label_removed_merge_patch_sends_null(h: Harness) -> None:
    """Whole-resource PATCH is a merge patch: a removed key is sent as null."""
    first = h.create("StorageBucket", labels={"label-one": "value-one", "label-two": "x"})
    mark = h.mark()
    r = h.reconcile(with_spec(first.obj, labels={"label-one": "value-one"}))
    assert r.ready, r.message
    patch = h.entries(mark)[1]
    assert patch.request_json == {"labels": {"label-one": "value-one", "label-two": None}}
    assert patch.response_json["labels"] == {"label-one": "value-one"}
    mark = h.mark()
    assert h.reconcile(r.obj).ready and [e.method for e in h.entries(mark)] == ["GET"]


def test_immutable_change_is_refused_by_name(h: Harness) -> None:
    first = h.create("KMSCryptoKey")
    mark = h.mark()
    r = h.reconcile(with_spec(first.obj, purpose="ASYMMETRIC_SIGN"))
    assert (r.ready, r.reason) == (False, "UpdateFailed")
    assert "spec.purpose" in r.message
    assert [e.method for e in h.entries(mark)] == ["GET"]


# --- 4. acquire an existing resource by resourceID, then enforce the spec ---------------------


def test_acquire_topic_then_enforce(h: Harness) -> None:
    h.raw("pubsub").projects().topics().create(
        name=f"projects/{P}/topics/existing", body={"labels": {"team": "other"}, "messageRetentionDuration": "86600s"}
    ).execute()
    mark = h.mark()
    r = h.reconcile(manifest("PubSubTopic", name="imported", resourceID="existing"))
    assert (r.ready, r.reason) == (True, "UpToDate"), r.message
    assert h.requests(mark) == [f"GET /v1/projects/{P}/topics/existing -> 200", f"PATCH /v1/projects/{P}/topics/existing -> 200"]
    assert h.entries(mark)[1].request_json == {"topic": {"labels": {"team": "checkout"}}, "updateMask": "labels"}
    assert r.obj["status"]["externalRef"] == f"projects/{P}/topics/existing"
    assert event_reasons(r) == ["Updated", "UpToDate"]
    assert r.obj["spec"]["resourceID"] == "existing"


def test_acquire_bucket_then_enforce(h: Harness) -> None:
    h.raw("storage").buckets().insert(
        project=P, body={"name": "acquired-bucket", "location": "US", "storageClass": "STANDARD", "labels": {"label-one": "old"}}
    ).execute()
    mark = h.mark()
    r = h.reconcile(manifest("StorageBucket", name="b", resourceID="acquired-bucket", softDeletePolicy=None, versioning=None))
    assert r.ready, r.message
    assert h.requests(mark) == ["GET /storage/v1/b/acquired-bucket -> 200", "PATCH /storage/v1/b/acquired-bucket -> 200"]
    patch = h.entries(mark)[1]
    assert patch.request_json == {"labels": {"label-one": "value-one"}}
    assert query_of(patch)["ifMetagenerationMatch"] == ["1"]
    assert r.obj["status"]["externalRef"] == "acquired-bucket"


def test_acquire_zone_created_with_full_network_url(h: Harness) -> None:
    """gcloud writes networkUrl as a full compute URL; our networkRef names the
    same network, so only the description differs (a reference inside a list
    item compares canonically)."""
    h.create("ComputeNetwork")
    url = f"https://www.googleapis.com/compute/v1/projects/{P}/global/networks/net1"
    h.raw("dns").managedZones().create(
        project=P,
        body={
            "name": "existing-zone", "dnsName": "cnrm-dns-example.com.", "description": "old", "visibility": "private",
            "labels": {"label-one": "value-one"}, "privateVisibilityConfig": {"networks": [{"networkUrl": url}]},
        },
    ).execute()
    mark = h.mark()
    r = h.reconcile(manifest("DNSManagedZone", resourceID="existing-zone"))
    assert r.ready, r.message
    assert_calls(h.requests(mark), [
        f"GET /dns/v1/projects/{P}/managedZones/existing-zone -> 200",
        f"PATCH /dns/v1/projects/{P}/managedZones/existing-zone -> 200",
        f"GET /dns/v1/projects/{P}/managedZones/existing-zone/operations/{{op}} -> 200",
    ])
    assert h.entries(mark)[1].request_json == {"description": "Example DNS zone"}


def test_acquire_equal_resource_is_one_get(h: Harness) -> None:
    h.raw("pubsub").projects().topics().create(
        name=f"projects/{P}/topics/same", body={"labels": {"team": "checkout"}, "messageRetentionDuration": "86600s"}
    ).execute()
    mark = h.mark()
    r = h.reconcile(manifest("PubSubTopic", name="same"))
    assert (r.ready, r.reason) == (True, "UpToDate")
    assert h.requests(mark) == [f"GET /v1/projects/{P}/topics/same -> 200"]
    assert "Acquired" in event_reasons(r)


# --- 5. service-generated IDs (MonitoringAlertPolicy) ----------------------------------------


def _policy_body(channel: str, display_name: str = "Test Alert Policy") -> dict[str, Any]:
    from kccgen.runtime.adapter import adapter_for, spec_to_api

    spec = manifest("MonitoringAlertPolicy")["spec"]
    body = spec_to_api(spec, adapter_for("MonitoringAlertPolicy"), {"spec.notificationChannelRefs": [channel]})
    body["displayName"] = display_name
    return body


def test_service_generated_create_then_reconcile_by_external_ref(h: Harness) -> None:
    h.create("MonitoringNotificationChannel")
    mark = h.mark()
    r = h.reconcile(manifest("MonitoringAlertPolicy"))
    assert r.ready, r.message
    (post,) = h.entries(mark)
    assert (post.method, h.requests(mark)) == ("POST", [f"POST /v3/projects/{P}/alertPolicies -> 200"])
    ext = r.obj["status"]["externalRef"]
    assert ext == post.response_json["name"] and re.fullmatch(rf"projects/{P}/alertPolicies/\d+", ext)
    assert "resourceID" not in r.obj["spec"]
    mark = h.mark()
    again = h.reconcile(r.obj)
    assert again.ready and h.requests(mark) == [f"GET /v3/{ext} -> 200"]
    # Without status.externalRef and resourceID the object has no identity: it
    # would create again, so the runner must keep status (the store does).


def test_service_generated_acquire_by_resource_id(h: Harness) -> None:
    channel = h.create("MonitoringNotificationChannel").obj["status"]["externalRef"]
    created = h.raw("monitoring").projects().alertPolicies().create(name=f"projects/{P}", body=_policy_body(channel)).execute()
    policy_id = created["name"].rsplit("/", 1)[1]
    mark = h.mark()
    r = h.reconcile(manifest("MonitoringAlertPolicy", resourceID=policy_id))
    assert (r.ready, r.reason) == (True, "UpToDate"), r.message
    assert h.requests(mark) == [f"GET /v3/projects/{P}/alertPolicies/{policy_id} -> 200"]
    assert r.obj["status"]["externalRef"] == created["name"]
    assert "Acquired" in event_reasons(r)


def test_service_generated_acquire_then_enforce(h: Harness) -> None:
    channel = h.create("MonitoringNotificationChannel").obj["status"]["externalRef"]
    created = h.raw("monitoring").projects().alertPolicies().create(name=f"projects/{P}", body=_policy_body(channel, "Old name")).execute()
    policy_id = created["name"].rsplit("/", 1)[1]
    mark = h.mark()
    r = h.reconcile(manifest("MonitoringAlertPolicy", resourceID=policy_id))
    assert r.ready, r.message
    assert h.requests(mark) == [f"GET /v3/{created['name']} -> 200", f"PATCH /v3/{created['name']} -> 200"]
    patch = h.entries(mark)[1]
    assert query_of(patch)["updateMask"] == ["displayName"] and patch.request_json == {"displayName": "Test Alert Policy"}


def test_service_generated_missing_resource_id_is_not_created(h: Harness) -> None:
    h.create("MonitoringNotificationChannel")
    mark = h.mark()
    r = h.reconcile(manifest("MonitoringAlertPolicy", resourceID="1234567890123"))
    assert (r.ready, r.reason) == (False, "ResourceNotFound")
    assert h.requests(mark) == [f"GET /v3/projects/{P}/alertPolicies/1234567890123 -> 404"]
    assert "status" not in r.obj or not r.obj["status"].get("externalRef")


def test_service_generated_create_is_not_sent_again_after_a_5xx(h: Harness) -> None:
    """The POST may have created the policy before the 500: sending it again could
    make a second one. The collection is listed instead; the policy is not there
    (the 500 came before it was made), so the intent is settled and the next
    reconcile creates it, once."""
    from kccgen.runtime.reconciler import ANN_CREATE_PENDING

    h.create("MonitoringNotificationChannel")
    h.server.engine.faults.add(method="monitoring.projects.alertPolicies.create", status=500, times=1)
    mark = h.mark()
    r = h.reconcile(manifest("MonitoringAlertPolicy"))
    assert (r.ready, r.reason) == (False, "UpdateFailed"), r.message
    assert "made nothing (not listed)" in r.message
    assert h.requests(mark) == [f"POST /v3/projects/{P}/alertPolicies -> 500", f"GET /v3/projects/{P}/alertPolicies -> 200"]
    assert not (r.obj.get("status") or {}).get("externalRef")
    assert ANN_CREATE_PENDING not in (r.obj["metadata"].get("annotations") or {})
    mark = h.mark()
    r = h.reconcile(r.obj)
    assert r.ready, r.message
    assert h.requests(mark) == [f"POST /v3/projects/{P}/alertPolicies -> 200"]


def test_service_generated_create_is_retried_after_a_429(h: Harness) -> None:
    """A 429 says "not processed": the one answer after which the POST is sent again."""
    h.create("MonitoringNotificationChannel")
    h.server.engine.faults.add(method="monitoring.projects.alertPolicies.create", status=429, times=1)
    mark = h.mark()
    r = h.reconcile(manifest("MonitoringAlertPolicy"))
    assert r.ready, r.message
    assert h.requests(mark) == [f"POST /v3/projects/{P}/alertPolicies -> 429", f"POST /v3/projects/{P}/alertPolicies -> 200"]
    assert "annotations" not in r.obj["metadata"] or not r.obj["metadata"]["annotations"].get("kccgen.dev/create-pending")


def test_user_named_create_is_retried_after_a_5xx(h: Harness) -> None:
    h.server.engine.faults.add(method="pubsub.projects.topics.create", status=500, times=1)
    r = h.reconcile(manifest("PubSubTopic"))
    assert r.ready, r.message
    assert h.requests() == [
        f"GET /v1/projects/{P}/topics/topic1 -> 404",
        f"PUT /v1/projects/{P}/topics/topic1 -> 500",
        f"PUT /v1/projects/{P}/topics/topic1 -> 200",
    ]


def test_null_in_spec_is_unset(h: Harness) -> None:
    """``labels:`` with no value is null in YAML: an unset field (the API server
    prunes it), never a request to delete the live value."""
    first = h.create("StorageBucket")
    obj = with_spec(first.obj, labels=None, versioning=None)
    mark = h.mark()
    r = h.reconcile(obj)
    assert r.ready and h.requests(mark) == ["GET /storage/v1/b/kccgen-scenario-bucket -> 200"]
    mark = h.mark()
    r = h.reconcile(with_spec(r.obj, storageClass="NEARLINE"))
    assert r.ready and h.entries(mark)[1].request_json == {"storageClass": "NEARLINE"}


# --- 6. force-acquire: verify only ------------------------------------------------------------

FA = {FORCE_ACQUIRE: "true"}


def test_force_acquire_absent_is_resource_not_found(h: Harness) -> None:
    r = h.reconcile(manifest("PubSubTopic", annotations=FA))
    assert (r.ready, r.reason) == (False, "ResourceNotFound")
    assert h.requests() == [f"GET /v1/projects/{P}/topics/topic1 -> 404"]  # no PUT
    assert ready_condition(r.obj)["status"] == "False"


def test_force_acquire_differs_lists_every_path(h: Harness) -> None:
    h.raw("pubsub").projects().topics().create(
        name=f"projects/{P}/topics/topic1", body={"labels": {"team": "other"}, "messageRetentionDuration": "600s"}
    ).execute()
    mark = h.mark()
    r = h.reconcile(manifest("PubSubTopic", annotations=FA))
    assert not r.ready and r.reason == "DriftDetected"
    assert h.requests(mark) == [f"GET /v1/projects/{P}/topics/topic1 -> 200"]
    assert h.writes(mark) == []
    assert "2 field(s)" in r.message
    assert 'spec.labels: desired {"team": "checkout"}, actual {"team": "other"}' in r.message  # the manifest's path
    assert 'messageRetentionDuration: desired "86600s", actual "600s"' in r.message
    assert ready_condition(r.obj)["message"] == r.message


def test_force_acquire_equal_is_ready_and_writes_nothing(h: Harness) -> None:
    h.raw("pubsub").projects().topics().create(
        name=f"projects/{P}/topics/topic1", body={"labels": {"team": "checkout"}, "messageRetentionDuration": "86600s"}
    ).execute()
    mark = h.mark()
    r = h.reconcile(manifest("PubSubTopic", annotations=FA))
    assert (r.ready, r.reason) == (True, "UpToDate"), r.message
    assert r.obj["status"]["externalRef"] == f"projects/{P}/topics/topic1"
    assert h.requests(mark) == [f"GET /v1/projects/{P}/topics/topic1 -> 200"]


def test_force_acquire_ignores_mutability_and_never_writes(h: Harness) -> None:
    """An immutable field that differs is reported like any other, never refused
    as immutable; and deleting the object leaves the resource alone."""
    created = h.create("KMSCryptoKey")
    obj = annotate(with_spec(created.obj, purpose="ASYMMETRIC_SIGN", rotationPeriod="86400s"), FORCE_ACQUIRE, "true")
    mark = h.mark()
    r = h.reconcile(obj)
    assert (r.ready, r.reason) == (False, "DriftDetected")
    assert "purpose: desired" in r.message and "rotationPeriod: desired" in r.message
    d = h.delete(r.obj)
    assert d.deleted and d.reason == "Released"
    assert [e.method for e in h.entries(mark)] == ["GET"]


def test_force_acquire_service_generated_without_id(h: Harness) -> None:
    r = h.reconcile(manifest("MonitoringNotificationChannel", annotations=FA))
    assert (r.ready, r.reason) == (False, "ResourceNotFound")
    assert h.log == []


# --- 7. the force-acquire workflows (../shared/seeds/force-acquire.md) -------------------------


def test_workflow_update_a_field_the_api_made_mutable(h: Harness) -> None:
    """ComputeNetwork.mtu is not updatable in our schema, while compute's
    networks.patch changes it: change it outside, accept it with force-acquire,
    then manage normally."""
    net = h.create("ComputeNetwork").obj
    # The gap: a normal reconcile refuses the change by name and writes nothing.
    mark = h.mark()
    refused = h.reconcile(with_spec(net, mtu=1500))
    assert (refused.ready, refused.reason) == (False, "UpdateFailed") and "spec.mtu" in refused.message
    assert [e.method for e in h.entries(mark)] == ["GET"]
    # 1. The user changes it outside (gcloud compute networks update --mtu=1500).
    h.raw("compute").networks().patch(project=P, network="net1", body={"mtu": 1500}).execute()
    # 2-3. The manifest says 1500, applied with force-acquire.
    mark = h.mark()
    accepted = h.reconcile(annotate(with_spec(refused.obj, mtu=1500), FORCE_ACQUIRE, "true"))
    assert (accepted.ready, accepted.reason) == (True, "UpToDate"), accepted.message
    assert h.requests(mark) == [f"GET /compute/v1/projects/{P}/global/networks/net1 -> 200"]
    # 5. Annotation removed: a normal reconcile, one GET, nothing to change.
    mark = h.mark()
    managed = h.reconcile(annotate(accepted.obj, FORCE_ACQUIRE, None))
    assert (managed.ready, managed.reason) == (True, "UpToDate"), managed.message
    assert h.requests(mark) == [f"GET /compute/v1/projects/{P}/global/networks/net1 -> 200"]


def test_workflow_safe_import_of_a_bucket(h: Harness) -> None:
    h.raw("storage").buckets().insert(
        project=P, body={"name": "prod-assets", "location": "EU", "storageClass": "NEARLINE", "labels": {"team": "web"}}
    ).execute()
    obj = manifest("StorageBucket", name="prod-assets", annotations=FA, location="US", storageClass="STANDARD", labels={"team": "web"}, versioning=None, softDeletePolicy=None)
    obj["spec"] = {k: v for k, v in obj["spec"].items() if v is not None}
    # Mismatch: both fields named with desired and actual; the bucket is untouched.
    mark = h.mark()
    r = h.reconcile(obj)
    assert (r.ready, r.reason) == (False, "DriftDetected")
    assert 'location: desired "US", actual "EU"' in r.message
    assert 'storageClass: desired "STANDARD", actual "NEARLINE"' in r.message
    assert h.requests(mark) == ["GET /storage/v1/b/prod-assets -> 200"]
    # Correction: the manifest now matches -> Ready, still nothing written.
    mark = h.mark()
    r = h.reconcile(with_spec(r.obj, location="EU", storageClass="NEARLINE"))
    assert (r.ready, r.reason) == (True, "UpToDate"), r.message
    assert r.obj["status"]["externalRef"] == "prod-assets"
    assert h.requests(mark) == ["GET /storage/v1/b/prod-assets -> 200"]
    # Start management: annotation removed -> one GET; a later change is enforced.
    mark = h.mark()
    r = h.reconcile(annotate(r.obj, FORCE_ACQUIRE, None))
    assert (r.ready, r.reason) == (True, "UpToDate") and h.requests(mark) == ["GET /storage/v1/b/prod-assets -> 200"]
    mark = h.mark()
    r = h.reconcile(with_spec(r.obj, labels={"team": "platform"}))
    assert r.ready and h.requests(mark) == ["GET /storage/v1/b/prod-assets -> 200", "PATCH /storage/v1/b/prod-assets -> 200"]
    assert h.entries(mark)[1].request_json == {"labels": {"team": "platform"}}


def test_workflow_drift_monitoring(h: Harness) -> None:
    golden = h.create("PubSubTopic", annotations=None)
    watched = annotate(golden.obj, FORCE_ACQUIRE, "true")
    mark = h.mark()
    r = h.reconcile(watched)
    assert r.ready and h.requests(mark) == [f"GET /v1/projects/{P}/topics/topic1 -> 200"]
    # Someone edits the topic in the console.
    h.raw("pubsub").projects().topics().patch(
        name=f"projects/{P}/topics/topic1", body={"topic": {"labels": {"team": "hotfix"}}, "updateMask": "labels"}
    ).execute()
    mark = h.mark()
    r = h.reconcile(r.obj)
    assert (r.ready, r.reason) == (False, "DriftDetected")
    assert 'labels: desired {"team": "checkout"}, actual {"team": "hotfix"}' in r.message
    assert ready_condition(r.obj)["status"] == "False"
    assert h.requests(mark) == [f"GET /v1/projects/{P}/topics/topic1 -> 200"]  # no revert
    # Resolution: accept the change in the manifest.
    mark = h.mark()
    r = h.reconcile(with_spec(r.obj, labels={"team": "hotfix"}))
    assert r.ready and h.requests(mark) == [f"GET /v1/projects/{P}/topics/topic1 -> 200"]


# --- kccctl apply / delete on examples/ ---------------------------------------------------------


def _kccctl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kccgen.runtime.cli", *args], cwd=REPO, capture_output=True, text=True, check=False, timeout=120)


def test_kccctl_apply_and_delete_examples(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with MockServer(MockGCP(lro_polls=1)) as s:
        # One by one (--workers 1): the exact request sequence is the point here;
        # tests/test_apply_concurrency.py covers the workers.
        common = ("-f", "examples/", "--state", str(state), "--endpoint", s.base_url, "--project", "demo-project", "--workers", "1")
        first = _kccctl("apply", *common)
        assert first.returncode == 0, first.stdout + first.stderr
        lines = first.stdout.splitlines()
        assert lines[0].split() == ["KIND", "NAME", "READY", "REASON", "EXTERNALREF"]
        assert [ln.split() for ln in lines[1:]] == [
            ["PubSubTopic", "orders", "True", "UpToDate", "projects/demo-project/topics/orders"],
            ["PubSubSubscription", "orders-billing", "True", "UpToDate", "projects/demo-project/subscriptions/orders-billing"],
            ["StorageBucket", "kccgen-example-artifacts", "True", "UpToDate", "kccgen-example-artifacts"],
        ]
        assert call_sequence(s.log) == [
            "GET /v1/projects/demo-project/topics/orders -> 404",
            "PUT /v1/projects/demo-project/topics/orders -> 200",
            "GET /v1/projects/demo-project/subscriptions/orders-billing -> 404",
            "PUT /v1/projects/demo-project/subscriptions/orders-billing -> 200",
            "GET /storage/v1/b/kccgen-example-artifacts -> 404",
            "POST /storage/v1/b -> 200",
        ]
        files = sorted(p.relative_to(state).as_posix() for p in state.rglob("*") if p.is_file())
        assert files == [
            ".lock",  # one kccctl at a time (flock); kept: unlinking a lock file races its waiters
            ".settings.json",  # the remembered --project
            "default/PubSubSubscription/orders-billing.yaml",
            "default/PubSubTopic/orders.yaml",
            "default/StorageBucket/kccgen-example-artifacts.yaml",
        ]  # written atomically: no temp file left behind
        topic = yaml.safe_load((state / "default/PubSubTopic/orders.yaml").read_text())
        assert topic["status"]["externalRef"] == "projects/demo-project/topics/orders"
        sub = yaml.safe_load((state / "default/PubSubSubscription/orders-billing.yaml").read_text())
        assert s.log[3].request_json["topic"] == "projects/demo-project/topics/orders"
        assert sub["status"]["conditions"][0]["status"] == "True"

        s.clear_log()
        second = _kccctl("apply", *common)
        assert second.returncode == 0, second.stdout + second.stderr
        assert second.stdout == first.stdout
        assert call_sequence(s.log) == [
            "GET /v1/projects/demo-project/topics/orders -> 200",
            "GET /v1/projects/demo-project/subscriptions/orders-billing -> 200",
            "GET /storage/v1/b/kccgen-example-artifacts -> 200",
        ]

        s.clear_log()
        gone = _kccctl("delete", *common)
        assert gone.returncode == 0, gone.stdout + gone.stderr
        assert gone.stdout.splitlines()[0].split() == ["KIND", "NAME", "DELETED", "REASON", "EXTERNALREF"]
        assert call_sequence(s.log) == [  # reverse dependency order
            "DELETE /storage/v1/b/kccgen-example-artifacts -> 204",
            "DELETE /v1/projects/demo-project/subscriptions/orders-billing -> 200",
            "DELETE /v1/projects/demo-project/topics/orders -> 200",
        ]
        assert sorted(p.name for p in state.rglob("*") if p.is_file()) == [".lock", ".settings.json"]
