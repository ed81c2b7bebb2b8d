"""Reconcile rules end to end against mockgcp, each asserting the exact request sequence.

Scenarios: deletion policy and dangling references on delete (8), actuation
paused (9), immutable fields (10), a GET that keeps failing (11), a retried
429 (12), long-running operations that end in error (13), and the modes of
externally managed fields with endless-update detection (14). Every test
reconciles through ``kccgen.runtime.reconciler.Reconciler`` over HTTP against a
fresh mockgcp, and reads what was sent from the server's log
(``kccgen.mockgcp.normalize.call_sequence``).

Tests marked ``xfail(strict=True)`` hold the correct expectation for a known
bug in runtime/ or mockgcp/ (the reason names it); they turn into failures
the moment the bug is fixed, so the mark can be dropped then.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from kccgen.mockgcp import MockGCP, MockServer
from kccgen.mockgcp.normalize import call_sequence
from kccgen.runtime.gcp import Gcp
from kccgen.runtime.reconciler import ANN_STREAK, MAX_STREAK, Reconciler, Result
from kccgen.runtime.refs import InMemoryStore

PROJECT = "proj"
NS = "default"
RETRIES = 2

ANN_PROJECT = "cnrm.cloud.google.com/project-id"
ANN_DELETION = "cnrm.cloud.google.com/deletion-policy"
ANN_ACTUATION = "cnrm.cloud.google.com/actuation-mode"
ANN_SIS = "cnrm.cloud.google.com/state-into-spec"

GROUPS = {
    "PubSub": "pubsub",
    "KMS": "kms",
    "Spanner": "spanner",
    "Compute": "compute",
    "SecretManager": "secretmanager",
    "ArtifactRegistry": "artifactregistry",
    "Storage": "storage",
}

TOPIC = f"/v1/projects/{PROJECT}/topics"
SUBS = f"/v1/projects/{PROJECT}/subscriptions"


def namespace(**annotations: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": NS, "annotations": {ANN_PROJECT: PROJECT, **annotations}},
    }


def krm(kind: str, name: str, spec: dict[str, Any], **annotations: str) -> dict[str, Any]:
    group = next(g for prefix, g in GROUPS.items() if kind.startswith(prefix))
    meta: dict[str, Any] = {"name": name, "namespace": NS, "generation": 1}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {
        "apiVersion": f"{group}.cnrm.cloud.google.com/v1beta1",
        "kind": kind,
        "metadata": meta,
        "spec": copy.deepcopy(spec),
    }


def edit(obj: dict[str, Any], **spec: Any) -> dict[str, Any]:
    """A user edit of the spec: a copy with new values and the next generation."""
    out = copy.deepcopy(obj)
    out["spec"].update(copy.deepcopy(spec))
    out["metadata"]["generation"] = int(out["metadata"].get("generation", 1)) + 1
    return out


class Env:
    """One mockgcp, a Gcp client with no real sleeping, a store and a reconciler."""

    def __init__(self, server: MockServer, ns: dict[str, Any]) -> None:
        self.s = server
        self.sleeps: list[float] = []
        self.gcp = Gcp(
            server.base_url, lro_interval=0, sleep=self.sleeps.append, retries=RETRIES, seed=1
        )
        self.store = InMemoryStore([ns])
        self.r = Reconciler(self.gcp, self.store)

    def seq(self) -> list[str]:
        return call_sequence(self.s.log)

    def clear(self) -> None:
        self.s.clear_log()

    def ok(self, obj: dict[str, Any], add: bool = True) -> dict[str, Any]:
        """Reconcile set-up objects that must end Ready; keep them in the store."""
        res = self.r.reconcile(obj)
        assert res.ready, (res.reason, res.message)
        if add:
            self.store.add(res.obj)
        return res.obj

    def raw(self, api: str) -> Any:
        return self.s.client(api)

    def stored(self, api: str, key: str) -> dict[str, Any] | None:
        """What mockgcp holds (no request, so the log is untouched)."""
        with self.s.engine.lock:
            res = self.s.engine.resources.get(f"{api}|{key}")
            return copy.deepcopy(res)

    def poke(self, api: str, key: str, **fields: Any) -> None:
        """An out-of-band change on the service side, not through the API (the log is untouched)."""
        with self.s.engine.lock:
            self.s.engine.resources[f"{api}|{key}"].update(copy.deepcopy(fields))


@pytest.fixture
def env() -> Iterator[Env]:
    with MockServer(MockGCP(lro_polls=1)) as s:
        yield Env(s, namespace())


def topic_and_subscription(env: Env, **sub_spec: Any) -> dict[str, Any]:
    """Topic t (in the store) and subscription s on it (reconciled, not stored); log cleared."""
    env.ok(krm("PubSubTopic", "t", {}))
    sub = env.ok(krm("PubSubSubscription", "s", {"topicRef": {"name": "t"}, **sub_spec}), add=False)
    env.clear()
    return sub


def failed(res: Result, reason: str, *needles: str) -> None:
    assert not res.ready
    assert res.reason == reason, res.message
    cond = res.obj["status"]["conditions"][0]
    assert (cond["type"], cond["status"], cond["reason"]) == ("Ready", "False", reason)
    for n in needles:
        assert n in res.message, f"{n!r} not in {res.message!r}"


# --- 8. deletion policy; deletion does not need non-parent references -------------------


class TestDeletion:
    def test_abandon_sends_no_delete_and_leaves_the_resource(self, env: Env) -> None:
        sub = topic_and_subscription(env, ackDeadlineSeconds=20)
        sub["metadata"]["annotations"] = {ANN_DELETION: "abandon"}
        res = env.r.delete(sub)
        assert res.deleted and res.ready and res.reason == "Abandoned"
        assert env.seq() == []
        got = (
            env.raw("pubsub")
            .projects()
            .subscriptions()
            .get(subscription=f"projects/{PROJECT}/subscriptions/s")
            .execute()
        )
        assert got["ackDeadlineSeconds"] == 20

    def test_abandon_through_deletion_timestamp(self, env: Env) -> None:
        sub = topic_and_subscription(env)
        sub["metadata"]["annotations"] = {ANN_DELETION: "abandon"}
        sub["metadata"]["deletionTimestamp"] = "2024-04-01T12:34:56Z"
        res = env.r.reconcile(sub)
        assert res.deleted and res.reason == "Abandoned"
        assert env.seq() == []
        assert env.stored("pubsub.v1", f"projects/{PROJECT}/subscriptions/s") is not None

    def test_default_policy_deletes(self, env: Env) -> None:
        sub = topic_and_subscription(env)
        res = env.r.delete(sub)
        assert res.deleted and res.reason == "Deleted"
        assert env.seq() == [f"DELETE {SUBS}/s -> 200"]
        assert env.stored("pubsub.v1", f"projects/{PROJECT}/subscriptions/s") is None

    def test_dangling_non_parent_references_do_not_block_deletion(self, env: Env) -> None:
        env.ok(krm("PubSubTopic", "dlq", {}))
        sub = topic_and_subscription(
            env, deadLetterPolicy={"deadLetterTopicRef": {"name": "dlq"}, "maxDeliveryAttempts": 5}
        )
        assert (
            env.stored("pubsub.v1", f"projects/{PROJECT}/subscriptions/s")["deadLetterPolicy"][
                "deadLetterTopic"
            ]
            == f"projects/{PROJECT}/topics/dlq"
        )
        # Both topics are gone from the store (deleted first): topicRef and
        # deadLetterTopicRef dangle. Neither is part of the identity.
        env.r.store = InMemoryStore([namespace()])
        res = env.r.delete(sub)
        assert res.deleted and res.reason == "Deleted", res.message
        assert env.seq() == [f"DELETE {SUBS}/s -> 200"]
        assert env.stored("pubsub.v1", f"projects/{PROJECT}/subscriptions/s") is None

    def test_dangling_references_through_deletion_timestamp(self, env: Env) -> None:
        env.ok(krm("PubSubTopic", "dlq", {}))
        sub = topic_and_subscription(env, deadLetterPolicy={"deadLetterTopicRef": {"name": "dlq"}})
        env.r.store = InMemoryStore([namespace()])
        sub["metadata"]["deletionTimestamp"] = "2024-04-01T12:34:56Z"
        res = env.r.reconcile(sub)
        assert res.deleted and res.reason == "Deleted", res.message
        assert env.seq() == [f"DELETE {SUBS}/s -> 200"]


# --- 9. actuation paused ------------------------------------------------------------------


class TestPaused:
    def _existing(self, env: Env) -> dict[str, Any]:
        sub = topic_and_subscription(env, ackDeadlineSeconds=20)
        # Drift on the service and a spec change: a live reconcile would write.
        env.poke("pubsub.v1", f"projects/{PROJECT}/subscriptions/s", ackDeadlineSeconds=30)
        return edit(sub, labels={"a": "b"})

    def _assert_paused(self, env: Env, res: Result) -> None:
        assert not res.ready and res.reason == "Paused"
        assert env.seq() == []
        assert res.events[-1].reason == "Paused"
        assert (
            env.stored("pubsub.v1", f"projects/{PROJECT}/subscriptions/s")["ackDeadlineSeconds"]
            == 30
        )

    def test_object_annotation(self, env: Env) -> None:
        sub = self._existing(env)
        sub["metadata"]["annotations"] = {ANN_ACTUATION: "Paused"}
        self._assert_paused(env, env.r.reconcile(sub))
        self._assert_paused(env, env.r.delete(sub))

    def test_namespace_annotation(self, env: Env) -> None:
        sub = self._existing(env)
        env.store.add(namespace(**{ANN_ACTUATION: "Paused"}))
        self._assert_paused(env, env.r.reconcile(sub))
        self._assert_paused(env, env.r.delete(sub))

    def test_reconciler_paused(self, env: Env) -> None:
        sub = self._existing(env)
        paused = Reconciler(env.gcp, env.store, paused=True)
        self._assert_paused(env, paused.reconcile(sub))
        self._assert_paused(env, paused.delete(sub))

    def test_paused_object_is_never_created(self, env: Env) -> None:
        env.ok(krm("PubSubTopic", "t", {}))
        env.clear()
        res = env.r.reconcile(
            krm(
                "PubSubSubscription",
                "new",
                {"topicRef": {"name": "t"}},
                **{ANN_ACTUATION: "Paused"},
            )
        )
        assert res.reason == "Paused"
        assert env.seq() == []

    def test_unpaused_reconcile_writes(self, env: Env) -> None:
        """Control: the same object, not paused, does send the update."""
        sub = self._existing(env)
        res = env.r.reconcile(sub)
        assert res.ready, res.message
        assert env.seq() == [f"GET {SUBS}/s -> 200", f"PATCH {SUBS}/s -> 200"]


# --- 10. immutable fields -------------------------------------------------------------


class TestImmutable:
    def test_kms_crypto_key_purpose(self, env: Env) -> None:
        env.ok(krm("KMSKeyRing", "kr", {"location": "us-central1"}))
        key = env.ok(
            krm("KMSCryptoKey", "ck", {"keyRingRef": {"name": "kr"}, "purpose": "ENCRYPT_DECRYPT"}),
            add=False,
        )
        env.clear()
        res = env.r.reconcile(edit(key, purpose="ASYMMETRIC_SIGN"))
        failed(res, "UpdateFailed", "immutable", "spec.purpose")
        assert env.seq() == [
            f"GET /v1/projects/{PROJECT}/locations/us-central1/keyRings/kr/cryptoKeys/ck -> 200"
        ]
        assert (
            env.stored(
                "cloudkms.v1", f"projects/{PROJECT}/locations/us-central1/keyRings/kr/cryptoKeys/ck"
            )["purpose"]
            == "ENCRYPT_DECRYPT"
        )

    def test_immutable_and_mutable_change_together_write_nothing(self, env: Env) -> None:
        env.ok(krm("KMSKeyRing", "kr", {"location": "us-central1"}))
        key = env.ok(
            krm("KMSCryptoKey", "ck", {"keyRingRef": {"name": "kr"}, "purpose": "ENCRYPT_DECRYPT"}),
            add=False,
        )
        env.clear()
        res = env.r.reconcile(edit(key, purpose="MAC", labels={"a": "b"}))
        failed(res, "UpdateFailed", "spec.purpose")
        assert "spec.labels" not in res.message
        assert env.seq() == [
            f"GET /v1/projects/{PROJECT}/locations/us-central1/keyRings/kr/cryptoKeys/ck -> 200"
        ]

    def test_nested_immutable_field_named_by_krm_path(self, env: Env) -> None:
        secret = env.ok(
            krm("SecretManagerSecret", "sec", {"replication": {"automatic": {}}}), add=False
        )
        env.clear()
        res = env.r.reconcile(
            edit(secret, replication={"userManaged": {"replicas": [{"location": "us-east1"}]}})
        )
        failed(res, "UpdateFailed", "immutable", "spec.replication.userManaged")
        assert env.seq() == [f"GET /v1/projects/{PROJECT}/secrets/sec -> 200"]

    def test_immutable_reference_named_by_its_krm_field(self, env: Env) -> None:
        for n in ("net-a", "net-b"):
            env.ok(krm("ComputeNetwork", n, {"autoCreateSubnetworks": False}))
        sn = env.ok(
            krm(
                "ComputeSubnetwork",
                "sn",
                {
                    "region": "us-central1",
                    "ipCidrRange": "10.0.0.0/24",
                    "networkRef": {"name": "net-a"},
                },
            ),
            add=False,
        )
        env.clear()
        res = env.r.reconcile(edit(sn, networkRef={"name": "net-b"}))
        failed(res, "UpdateFailed", "immutable", "spec.networkRef")
        assert env.seq() == [
            f"GET /compute/v1/projects/{PROJECT}/regions/us-central1/subnetworks/sn -> 200"
        ]


# --- 11. a GET that keeps failing ------------------------------------------------------


class TestGetFails:
    def test_get_500_on_every_retry_fails_without_create(self, env: Env) -> None:
        env.s.engine.faults.add(method="pubsub.projects.topics.get", status=500)
        res = env.r.reconcile(krm("PubSubTopic", "t", {}))
        failed(res, "UpdateFailed", f"GET projects/{PROJECT}/topics/t failed", "500")
        assert env.seq() == [f"GET {TOPIC}/t -> 500"] * (RETRIES + 1)
        assert len(env.sleeps) == RETRIES  # backed off between attempts
        assert env.stored("pubsub.v1", f"projects/{PROJECT}/topics/t") is None

    def test_get_503_of_existing_resource_sends_no_update(self, env: Env) -> None:
        sub = topic_and_subscription(env, ackDeadlineSeconds=20)
        env.s.engine.faults.add(method="pubsub.projects.subscriptions.get", status=503)
        res = env.r.reconcile(edit(sub, ackDeadlineSeconds=40))
        failed(res, "UpdateFailed", f"GET projects/{PROJECT}/subscriptions/s failed", "503")
        assert env.seq() == [f"GET {SUBS}/s -> 503"] * (RETRIES + 1)

    def test_get_403_is_not_retried(self, env: Env) -> None:
        env.s.engine.faults.add(method="pubsub.projects.topics.get", status=403)
        res = env.r.reconcile(krm("PubSubTopic", "t", {}))
        failed(res, "UpdateFailed", "403")
        assert env.seq() == [f"GET {TOPIC}/t -> 403"]
        assert env.sleeps == []


# --- 12. 429 then success ---------------------------------------------------------------


class TestRetry:
    def test_429_on_create_then_success(self, env: Env) -> None:
        env.s.engine.faults.add(method="pubsub.projects.topics.create", status=429, times=1)
        res = env.r.reconcile(krm("PubSubTopic", "t", {"labels": {"a": "b"}}))
        assert res.ready and res.reason == "UpToDate", res.message
        assert env.seq() == [
            f"GET {TOPIC}/t -> 404",
            f"PUT {TOPIC}/t -> 429",
            f"PUT {TOPIC}/t -> 200",
        ]
        assert len(env.sleeps) == 1
        assert env.stored("pubsub.v1", f"projects/{PROJECT}/topics/t")["labels"] == {"a": "b"}

    def test_429_on_get_then_success(self, env: Env) -> None:
        env.s.engine.faults.add(method="pubsub.projects.topics.get", status=429, times=1)
        res = env.r.reconcile(krm("PubSubTopic", "t", {}))
        assert res.ready, res.message
        assert env.seq() == [
            f"GET {TOPIC}/t -> 429",
            f"GET {TOPIC}/t -> 404",
            f"PUT {TOPIC}/t -> 200",
        ]
        assert len(env.sleeps) == 1


# --- 13. long-running operations that end in error -------------------------------------

SPANNER = {
    "config": f"projects/{PROJECT}/instanceConfigs/regional-us-central1",
    "displayName": "Inst",
    "nodeCount": 1,
}


class TestOperationErrors:
    @pytest.mark.parametrize(
        ("kind", "spec", "method", "sequence"),
        [
            (
                "SpannerInstance",
                SPANNER,
                "spanner.projects.instances.create",
                [
                    f"GET /v1/projects/{PROJECT}/instances/x -> 404",
                    f"POST /v1/projects/{PROJECT}/instances -> 200",
                    f"GET /v1/projects/{PROJECT}/instances/x/operations/${{operation1}} -> 200",
                ],
            ),
            (
                "ArtifactRegistryRepository",
                {"location": "us-central1", "format": "DOCKER"},
                "artifactregistry.projects.locations.repositories.create",
                [
                    f"GET /v1/projects/{PROJECT}/locations/us-central1/repositories/x -> 404",
                    f"POST /v1/projects/{PROJECT}/locations/us-central1/repositories -> 200",
                    f"GET /v1/projects/{PROJECT}/locations/us-central1/operations/${{operation1}} -> 200",
                ],
            ),
            (
                "ComputeNetwork",
                {"autoCreateSubnetworks": False},
                "compute.networks.insert",
                [
                    f"GET /compute/v1/projects/{PROJECT}/global/networks/x -> 404",
                    f"POST /compute/v1/projects/{PROJECT}/global/networks -> 200",
                    f"GET /compute/v1/projects/{PROJECT}/global/operations/${{operation1}} -> 200",
                ],
            ),
        ],
        ids=["spanner", "artifactregistry", "compute"],
    )
    def test_create(
        self, env: Env, kind: str, spec: dict[str, Any], method: str, sequence: list[str]
    ) -> None:
        env.s.engine.faults.add(
            method=method, lro_error="quota exceeded in region us-central1", times=1
        )
        res = env.r.reconcile(krm(kind, "x", spec))
        failed(res, "UpdateFailed", "create of", "quota exceeded in region us-central1")
        assert env.seq() == sequence
        assert "externalRef" not in res.obj.get("status", {})

    @pytest.mark.parametrize(
        ("kind", "spec", "change", "method", "sequence", "api", "key", "unchanged"),
        [
            (
                "SpannerInstance",
                SPANNER,
                {"displayName": "Renamed"},
                "spanner.projects.instances.patch",
                [
                    f"GET /v1/projects/{PROJECT}/instances/x -> 200",
                    f"PATCH /v1/projects/{PROJECT}/instances/x -> 200",
                    f"GET /v1/projects/{PROJECT}/instances/x/operations/${{operation1}} -> 200",
                ],
                "spanner.v1",
                f"projects/{PROJECT}/instances/x",
                ("displayName", "Inst"),
            ),
            (
                "ComputeNetwork",
                {"autoCreateSubnetworks": False, "routingConfig": {"routingMode": "REGIONAL"}},
                {"routingConfig": {"routingMode": "GLOBAL"}},
                "compute.networks.patch",
                [
                    f"GET /compute/v1/projects/{PROJECT}/global/networks/x -> 200",
                    f"PATCH /compute/v1/projects/{PROJECT}/global/networks/x -> 200",
                    f"GET /compute/v1/projects/{PROJECT}/global/operations/${{operation1}} -> 200",
                ],
                "compute.v1",
                f"projects/{PROJECT}/global/networks/x",
                ("routingConfig", {"routingMode": "REGIONAL"}),
            ),
        ],
        ids=["spanner", "compute"],
    )
    def test_update(
        self,
        env: Env,
        kind: str,
        spec: dict[str, Any],
        change: dict[str, Any],
        method: str,
        sequence: list[str],
        api: str,
        key: str,
        unchanged: tuple[str, Any],
    ) -> None:
        obj = env.ok(krm(kind, "x", spec), add=False)
        env.clear()
        env.s.engine.faults.add(
            method=method, lro_error="the update was rejected by the backend", times=1
        )
        res = env.r.reconcile(edit(obj, **change))
        failed(res, "UpdateFailed", "update of", "the update was rejected by the backend")
        assert env.seq() == sequence
        field, value = unchanged
        assert env.stored(api, key)[field] == value


# --- 14. externally managed fields and endless updates ---------------------------------


class TestStateIntoSpecAbsent:
    def test_label_added_on_the_service_is_not_enforced_or_written_back(self, env: Env) -> None:
        env.ok(krm("PubSubTopic", "t", {}))
        sub = env.ok(
            krm("PubSubSubscription", "s", {"topicRef": {"name": "t"}, "ackDeadlineSeconds": 20}),
            add=False,
        )
        env.raw("pubsub").projects().subscriptions().patch(
            name=f"projects/{PROJECT}/subscriptions/s",
            body={"subscription": {"labels": {"owner": "someone"}}, "updateMask": "labels"},
        ).execute()
        env.clear()
        res = env.r.reconcile(sub)
        assert res.ready and res.reason == "UpToDate", res.message
        assert env.seq() == [f"GET {SUBS}/s -> 200"]
        assert res.obj["spec"] == {"topicRef": {"name": "t"}, "ackDeadlineSeconds": 20}
        assert env.stored("pubsub.v1", f"projects/{PROJECT}/subscriptions/s")["labels"] == {
            "owner": "someone"
        }

    def test_server_default_changed_on_the_service_is_not_enforced(self, env: Env) -> None:
        sub = topic_and_subscription(env)  # ackDeadlineSeconds unset: the service defaults it
        assert (
            env.stored("pubsub.v1", f"projects/{PROJECT}/subscriptions/s")["ackDeadlineSeconds"]
            == 10
        )
        env.poke("pubsub.v1", f"projects/{PROJECT}/subscriptions/s", ackDeadlineSeconds=45)
        res = env.r.reconcile(sub)
        assert res.ready, res.message
        assert env.seq() == [f"GET {SUBS}/s -> 200"]
        assert "ackDeadlineSeconds" not in res.obj["spec"]

    def test_user_set_field_is_enforced(self, env: Env) -> None:
        sub = topic_and_subscription(env, ackDeadlineSeconds=20)
        env.poke("pubsub.v1", f"projects/{PROJECT}/subscriptions/s", ackDeadlineSeconds=45)
        res = env.r.reconcile(sub)
        assert res.ready, res.message
        assert env.seq() == [f"GET {SUBS}/s -> 200", f"PATCH {SUBS}/s -> 200"]
        assert (
            env.stored("pubsub.v1", f"projects/{PROJECT}/subscriptions/s")["ackDeadlineSeconds"]
            == 20
        )

    @pytest.mark.parametrize(
        ("kind", "spec", "api", "key", "path"),
        [
            ("PubSubTopic", {}, "pubsub.v1", f"projects/{PROJECT}/topics/x", f"{TOPIC}/x"),
            (
                "SecretManagerSecret",
                {"replication": {"automatic": {}}},
                "secretmanager.v1",
                f"projects/{PROJECT}/secrets/x",
                f"/v1/projects/{PROJECT}/secrets/x",
            ),
            ("StorageBucket", {"location": "US"}, "storage.v1", "b/x", "/storage/v1/b/x"),
        ],
        ids=["wrapper-mask", "mask-query", "whole-resource"],
    )
    def test_user_set_labels_are_compared_whole(
        self, env: Env, kind: str, spec: dict[str, Any], api: str, key: str, path: str
    ) -> None:
        """A key removed from spec.labels is removed in GCP, and so is one added on the service."""
        obj = env.ok(krm(kind, "x", {**spec, "labels": {"a": "1", "b": "2"}}), add=False)
        env.clear()
        res = env.r.reconcile(edit(obj, labels={"a": "1"}))
        assert res.ready, res.message
        assert env.seq() == [f"GET {path} -> 200", f"PATCH {path} -> 200"]
        assert env.stored(api, key)["labels"] == {"a": "1"}

        env.poke(api, key, labels={"a": "1", "owner": "someone"})
        env.clear()
        res = env.r.reconcile(res.obj)
        assert res.ready, res.message
        assert env.seq() == [f"GET {path} -> 200", f"PATCH {path} -> 200"]
        assert env.stored(api, key)["labels"] == {"a": "1"}

        env.clear()
        res = env.r.reconcile(res.obj)
        assert env.seq() == [f"GET {path} -> 200"]


class TestStateIntoSpecMerge:
    def test_acquire_populates_spec_then_enforces_it(self, env: Env) -> None:
        env.raw("pubsub").projects().topics().create(
            name=f"projects/{PROJECT}/topics/t",
            body={"labels": {"team": "a"}, "messageRetentionDuration": "600s"},
        ).execute()
        env.clear()
        res = env.r.reconcile(krm("PubSubTopic", "t", {}, **{ANN_SIS: "merge"}))
        assert res.ready, res.message
        assert env.seq() == [f"GET {TOPIC}/t -> 200"]
        assert res.obj["spec"] == {"labels": {"team": "a"}, "messageRetentionDuration": "600s"}

        env.poke(
            "pubsub.v1",
            f"projects/{PROJECT}/topics/t",
            labels={"team": "b"},
            messageRetentionDuration="900s",
        )
        env.clear()
        res = env.r.reconcile(res.obj)
        assert res.ready, res.message
        assert env.seq() == [f"GET {TOPIC}/t -> 200", f"PATCH {TOPIC}/t -> 200"]
        live = env.stored("pubsub.v1", f"projects/{PROJECT}/topics/t")
        assert (live["labels"], live["messageRetentionDuration"]) == ({"team": "a"}, "600s")
        assert res.obj["spec"] == {"labels": {"team": "a"}, "messageRetentionDuration": "600s"}

        env.clear()
        res = env.r.reconcile(res.obj)
        assert env.seq() == [f"GET {TOPIC}/t -> 200"]

    def test_merge_never_writes_references_or_output_only_fields(self, env: Env) -> None:
        env.ok(krm("PubSubTopic", "t", {}))
        env.raw("pubsub").projects().subscriptions().create(
            name=f"projects/{PROJECT}/subscriptions/s",
            body={"topic": f"projects/{PROJECT}/topics/t", "ackDeadlineSeconds": 25},
        ).execute()
        env.clear()
        res = env.r.reconcile(
            krm("PubSubSubscription", "s", {"topicRef": {"name": "t"}}, **{ANN_SIS: "merge"})
        )
        assert res.ready, res.message
        assert env.seq() == [f"GET {SUBS}/s -> 200"]
        spec = res.obj["spec"]
        assert spec["ackDeadlineSeconds"] == 25
        assert spec["topicRef"] == {"name": "t"}
        assert not {"topic", "name", "state"} & set(spec)

    def test_create_populates_spec_then_enforces_it(self, env: Env) -> None:
        env.ok(krm("PubSubTopic", "t", {}))
        env.clear()
        res = env.r.reconcile(
            krm("PubSubSubscription", "s", {"topicRef": {"name": "t"}}, **{ANN_SIS: "merge"})
        )
        assert res.ready, res.message
        assert env.seq() == [f"GET {SUBS}/s -> 404", f"PUT {SUBS}/s -> 200"]
        assert res.obj["spec"].get("ackDeadlineSeconds") == 10  # the service default, read back

        env.poke("pubsub.v1", f"projects/{PROJECT}/subscriptions/s", ackDeadlineSeconds=45)
        env.clear()
        res = env.r.reconcile(res.obj)
        assert env.seq() == [f"GET {SUBS}/s -> 200", f"PATCH {SUBS}/s -> 200"]
        assert (
            env.stored("pubsub.v1", f"projects/{PROJECT}/subscriptions/s")["ackDeadlineSeconds"]
            == 10
        )


class TestServerSideApply:
    def test_other_manager_enforced_ours_taken_from_gcp(self, env: Env) -> None:
        sub = topic_and_subscription(env, labels={"team": "a"}, ackDeadlineSeconds=20)
        env.poke(
            "pubsub.v1",
            f"projects/{PROJECT}/subscriptions/s",
            labels={"team": "b"},
            ackDeadlineSeconds=33,
        )
        sub["metadata"]["managedFields"] = [
            {"manager": "kubectl", "operation": "Apply", "apiVersion": sub["apiVersion"], "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:labels": {"f:team": {}}, "f:topicRef": {"f:name": {}}}}},
            {"manager": "kccgen", "operation": "Update", "apiVersion": sub["apiVersion"], "fieldsType": "FieldsV1",
             "fieldsV1": {"f:spec": {"f:ackDeadlineSeconds": {}}}},
        ]  # fmt: skip
        res = env.r.reconcile(sub)
        assert res.ready, res.message
        assert env.seq() == [f"GET {SUBS}/s -> 200", f"PATCH {SUBS}/s -> 200"]
        patch = env.s.log[1]
        assert "ackDeadlineSeconds" not in (patch.request_body or "")
        live = env.stored("pubsub.v1", f"projects/{PROJECT}/subscriptions/s")
        assert live["labels"] == {"team": "a"}  # kubectl's value enforced
        assert live["ackDeadlineSeconds"] == 33  # ours: not enforced
        assert res.obj["spec"]["ackDeadlineSeconds"] == 33  # ...but GCP's value taken into spec
        assert res.obj["spec"]["labels"] == {"team": "a"}

        env.clear()
        res = env.r.reconcile(res.obj)
        assert res.ready and env.seq() == [f"GET {SUBS}/s -> 200"]

    def test_field_co_owned_with_a_user_is_enforced(self, env: Env) -> None:
        sub = topic_and_subscription(env, ackDeadlineSeconds=20)
        env.poke("pubsub.v1", f"projects/{PROJECT}/subscriptions/s", ackDeadlineSeconds=33)
        sub["metadata"]["managedFields"] = [
            {
                "manager": "kubectl",
                "operation": "Apply",
                "fieldsV1": {"f:spec": {"f:ackDeadlineSeconds": {}, "f:topicRef": {}}},
            },
            {
                "manager": "kccgen",
                "operation": "Update",
                "fieldsV1": {"f:spec": {"f:ackDeadlineSeconds": {}}},
            },
        ]
        res = env.r.reconcile(sub)
        assert env.seq() == [f"GET {SUBS}/s -> 200", f"PATCH {SUBS}/s -> 200"]
        assert res.obj["spec"]["ackDeadlineSeconds"] == 20
        assert (
            env.stored("pubsub.v1", f"projects/{PROJECT}/subscriptions/s")["ackDeadlineSeconds"]
            == 20
        )


class TestEndlessUpdate:
    """The service puts ackDeadlineSeconds back to 30 after every update (an autoscaler, say)."""

    @pytest.fixture
    def reverting(self, env: Env, monkeypatch: pytest.MonkeyPatch) -> Env:
        engine = env.s.engine
        populate = engine._populate

        def revert(
            api: Any,
            coll: Any,
            key: str,
            res: dict[str, Any],
            project: str,
            created: bool,
            old: Any = None,
        ) -> None:
            populate(api, coll, key, res, project, created, old)
            if not created and coll.schema == "Subscription":
                res["ackDeadlineSeconds"] = 30

        monkeypatch.setattr(engine, "_populate", revert)
        return env

    def _run(self, env: Env, obj: dict[str, Any], n: int) -> tuple[list[Result], list[list[str]]]:
        results, seqs = [], []
        for _ in range(n):
            env.clear()
            res = env.r.reconcile(obj)
            results.append(res)
            seqs.append(env.seq())
            obj = res.obj
        return results, seqs

    def test_stops_writing_and_names_the_path(self, reverting: Env) -> None:
        env = reverting
        sub = topic_and_subscription(env, ackDeadlineSeconds=20)
        env.poke("pubsub.v1", f"projects/{PROJECT}/subscriptions/s", ackDeadlineSeconds=30)
        results, seqs = self._run(env, sub, MAX_STREAK + 3)
        writes = [i for i, s in enumerate(seqs) if any(c.startswith("PATCH") for c in s)]
        assert 1 <= len(writes) <= MAX_STREAK
        first_stop = next(i for i, r in enumerate(results) if not r.ready)
        assert writes == list(range(first_stop))
        for r, s in zip(results[first_stop:], seqs[first_stop:], strict=True):
            failed(r, "UpdateFailed", "ackDeadlineSeconds", "changed back", "stopped updating")
            assert s == [f"GET {SUBS}/s -> 200"]

    def test_exact_sequence(self, reverting: Env) -> None:
        env = reverting
        sub = topic_and_subscription(env, ackDeadlineSeconds=20)
        env.poke("pubsub.v1", f"projects/{PROJECT}/subscriptions/s", ackDeadlineSeconds=30)
        results, seqs = self._run(env, sub, MAX_STREAK + 2)
        assert (
            seqs
            == [[f"GET {SUBS}/s -> 200", f"PATCH {SUBS}/s -> 200"]] * MAX_STREAK
            + [[f"GET {SUBS}/s -> 200"]] * 2
        )
        assert all(r.ready for r in results[:MAX_STREAK])
        failed(
            results[MAX_STREAK],
            "UpdateFailed",
            "ackDeadlineSeconds",
            f"changed back {MAX_STREAK} times",
        )

    def test_rejected_updates_are_not_reverts(self, env: Env) -> None:
        """A write the service refused (400) was never applied: however often it
        is refused, the next reconcile that can write, writes."""
        sub = topic_and_subscription(env, ackDeadlineSeconds=20)
        env.poke("pubsub.v1", f"projects/{PROJECT}/subscriptions/s", ackDeadlineSeconds=30)
        rule = env.s.engine.faults.add(method="pubsub.projects.subscriptions.patch", status=400, message="try later", times=MAX_STREAK + 2)
        obj = sub
        for _ in range(MAX_STREAK + 2):
            env.clear()
            res = env.r.reconcile(obj)
            failed(res, "UpdateFailed", "try later")
            assert env.seq() == [f"GET {SUBS}/s -> 200", f"PATCH {SUBS}/s -> 400"]
            obj = res.obj
        assert rule.fired == MAX_STREAK + 2
        env.clear()
        res = env.r.reconcile(obj)
        assert res.ready, res.message
        assert env.seq() == [f"GET {SUBS}/s -> 200", f"PATCH {SUBS}/s -> 200"]

    def test_streak_resets_when_the_change_sticks(self, env: Env) -> None:
        sub = topic_and_subscription(env, ackDeadlineSeconds=20)
        obj = sub
        for _ in range(MAX_STREAK + 1):  # drift, fixed, confirmed: never a streak
            env.poke("pubsub.v1", f"projects/{PROJECT}/subscriptions/s", ackDeadlineSeconds=30)
            env.clear()
            res = env.r.reconcile(obj)
            assert res.ready and env.seq() == [f"GET {SUBS}/s -> 200", f"PATCH {SUBS}/s -> 200"], (
                res.message
            )
            env.clear()
            res = env.r.reconcile(res.obj)
            assert res.ready and env.seq() == [f"GET {SUBS}/s -> 200"]
            assert ANN_STREAK not in (res.obj["metadata"].get("annotations") or {})
            obj = res.obj

    def test_new_user_values_are_not_a_streak(self, env: Env) -> None:
        obj = topic_and_subscription(env, ackDeadlineSeconds=20)
        for value in range(21, 21 + MAX_STREAK + 1):
            env.clear()
            res = env.r.reconcile(edit(obj, ackDeadlineSeconds=value))
            assert res.ready, res.message
            assert env.seq() == [f"GET {SUBS}/s -> 200", f"PATCH {SUBS}/s -> 200"]
            assert (
                env.stored("pubsub.v1", f"projects/{PROJECT}/subscriptions/s")["ackDeadlineSeconds"]
                == value
            )
            obj = res.obj

    def test_a_new_desired_value_after_the_stop_is_written(
        self, reverting: Env, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        env = reverting
        sub = topic_and_subscription(env, ackDeadlineSeconds=20)
        env.poke("pubsub.v1", f"projects/{PROJECT}/subscriptions/s", ackDeadlineSeconds=30)
        results, _ = self._run(env, sub, MAX_STREAK + 1)
        assert not results[-1].ready
        monkeypatch.undo()  # the service stops reverting
        env.clear()
        res = env.r.reconcile(edit(results[-1].obj, ackDeadlineSeconds=40))
        assert res.ready, res.message
        assert env.seq() == [f"GET {SUBS}/s -> 200", f"PATCH {SUBS}/s -> 200"]
        assert (
            env.stored("pubsub.v1", f"projects/{PROJECT}/subscriptions/s")["ackDeadlineSeconds"]
            == 40
        )


class TestInputOnly:
    def test_secret_ttl(self, env: Env) -> None:
        secret = env.ok(
            krm("SecretManagerSecret", "sec", {"replication": {"automatic": {}}, "ttl": "3600s"}),
            add=False,
        )
        live = env.stored("secretmanager.v1", f"projects/{PROJECT}/secrets/sec")
        assert "ttl" not in live and "expireTime" in live
        for obj in (secret, edit(secret, ttl="7200s")):
            env.clear()
            res = env.r.reconcile(obj)
            assert res.ready and res.reason == "UpToDate", res.message
            assert env.seq() == [f"GET /v1/projects/{PROJECT}/secrets/sec -> 200"]

    def test_compute_params_resource_manager_tags(self, env: Env) -> None:
        spec = {
            "autoCreateSubnetworks": False,
            "params": {"resourceManagerTags": {"tagKeys/1": "tagValues/2"}},
        }
        net = env.ok(krm("ComputeNetwork", "net", spec), add=False)
        for obj in (net, edit(net, params={"resourceManagerTags": {"tagKeys/1": "tagValues/3"}})):
            env.clear()
            res = env.r.reconcile(obj)
            assert res.ready and res.reason == "UpToDate", res.message
            assert env.seq() == [f"GET /compute/v1/projects/{PROJECT}/global/networks/net -> 200"]

    def test_pubsub_topic_tags(self, env: Env) -> None:
        topic = env.ok(krm("PubSubTopic", "t", {"tags": {"tagKeys/1": "tagValues/2"}}), add=False)
        for obj in (topic, edit(topic, tags={"tagKeys/1": "tagValues/9"})):
            env.clear()
            res = env.r.reconcile(obj)
            assert res.ready, res.message
            assert env.seq() == [f"GET {TOPIC}/t -> 200"]

    @pytest.mark.parametrize(
        ("kind", "spec", "field"),
        [
            (
                "ComputeNetwork",
                {
                    "autoCreateSubnetworks": False,
                    "params": {"resourceManagerTags": {"tagKeys/1": "tagValues/2"}},
                },
                "params",
            ),
            ("PubSubTopic", {"tags": {"tagKeys/1": "tagValues/2"}}, "tags"),
        ],
        ids=["compute-params", "pubsub-tags"],
    )
    def test_mockgcp_never_returns_input_only_fields(
        self, env: Env, kind: str, spec: dict[str, Any], field: str
    ) -> None:
        env.ok(krm(kind, "x", spec), add=False)
        if kind == "ComputeNetwork":
            got = env.raw("compute").networks().get(project=PROJECT, network="x").execute()
        else:
            got = (
                env.raw("pubsub")
                .projects()
                .topics()
                .get(topic=f"projects/{PROJECT}/topics/x")
                .execute()
            )
        assert got["name"].endswith("x")
        assert field not in got
