"""The Config Connector reference rules, as runtime/refs.py implements them.

One section per rule of the reference guide; each has at least one case that
passes and one that breaks the rule, asserting the stable ``Reason`` and the
path the error points at. A case where the runtime disagrees with the rule is
kept with the correct expectation and marked ``xfail(strict=True)``.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from kccgen.runtime.refs import (
    PROJECT_ID_ANNOTATION,
    InMemoryStore,
    Reason,
    RefError,
    ResourceRef,
    check_object,
    check_ref,
    check_refs,
    identity_from_spec,
    normalize_ref,
    references_of,
    resolve_object,
    resolve_ref,
    resolve_refs,
    same_refs,
    set_external,
)

TOPIC = "PubSubTopic"
CHANNEL = "MonitoringNotificationChannel"
TABLE = "BigQueryTable"

TOPIC_EXT = "projects/p/topics/t"
CH1 = "projects/p/notificationChannels/1"
CH2 = "projects/p/notificationChannels/2"
CH3 = "projects/p/notificationChannels/3"


def raises(reason: Reason, path: str, fn: Any, *args: Any, **kwargs: Any) -> RefError:
    """Call fn, expect a RefError with exactly this reason and path, return it."""
    with pytest.raises(RefError) as info:
        fn(*args, **kwargs)
    err = info.value
    assert err.reason is reason, f"reason {err.reason!r} != {reason!r}: {err}"
    assert err.path == path
    assert str(err).startswith(f"{path}: ")
    return err


def obj(
    kind: str,
    name: str,
    namespace: str | None = "ns",
    external: str | None = None,
    spec: dict[str, Any] | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    if annotations:
        meta["annotations"] = annotations
    o: dict[str, Any] = {"apiVersion": "x/v1beta1", "kind": kind, "metadata": meta}
    if spec is not None:
        o["spec"] = spec
    if external is not None:
        o["status"] = {"externalRef": external}
    return o


STORE_YAML = """
apiVersion: v1
kind: Namespace
metadata:
  name: ns
  annotations:
    cnrm.cloud.google.com/project-id: ns-project
---
apiVersion: v1
kind: Namespace
metadata:
  name: bare
---
apiVersion: pubsub.cnrm.cloud.google.com/v1beta1
kind: PubSubTopic
metadata: {name: t, namespace: ns}
status: {externalRef: projects/p/topics/t-in-ns}
---
apiVersion: pubsub.cnrm.cloud.google.com/v1beta1
kind: PubSubTopic
metadata: {name: t, namespace: other}
status: {externalRef: projects/p/topics/t-in-other}
---
apiVersion: pubsub.cnrm.cloud.google.com/v1beta1
kind: PubSubTopic
metadata: {name: only-other, namespace: other}
status: {externalRef: projects/p/topics/only-other}
---
apiVersion: pubsub.cnrm.cloud.google.com/v1beta1
kind: PubSubTopic
metadata: {name: pending, namespace: ns}
---
apiVersion: pubsub.cnrm.cloud.google.com/v1beta1
kind: PubSubTopic
metadata: {name: blank-status, namespace: ns}
status: {externalRef: ""}
---
apiVersion: pubsub.cnrm.cloud.google.com/v1beta1
kind: PubSubTopic
metadata: {name: in-default}
status: {externalRef: projects/p/topics/in-default}
---
apiVersion: pubsub.cnrm.cloud.google.com/v1beta1
kind: PubSubSubscription
metadata: {name: sub-only, namespace: ns}
status: {externalRef: projects/p/subscriptions/sub-only}
---
apiVersion: monitoring.cnrm.cloud.google.com/v1beta1
kind: MonitoringNotificationChannel
metadata: {name: c1, namespace: ns}
status: {externalRef: projects/p/notificationChannels/1}
---
apiVersion: monitoring.cnrm.cloud.google.com/v1beta1
kind: MonitoringNotificationChannel
metadata: {name: c2, namespace: ns}
status: {externalRef: projects/p/notificationChannels/2}
---
apiVersion: monitoring.cnrm.cloud.google.com/v1beta1
kind: MonitoringNotificationChannel
metadata: {name: c3, namespace: ns}
status: {externalRef: projects/p/notificationChannels/3}
---
apiVersion: monitoring.cnrm.cloud.google.com/v1beta1
kind: MonitoringNotificationChannel
metadata: {name: c1, namespace: other}
status: {externalRef: projects/p/notificationChannels/1-other}
---
apiVersion: monitoring.cnrm.cloud.google.com/v1beta1
kind: MonitoringNotificationChannel
metadata: {name: c1-alias, namespace: ns}
status: {externalRef: //monitoring.googleapis.com/projects/p/notificationChannels/1}
---
apiVersion: kms.cnrm.cloud.google.com/v1beta1
kind: KMSKeyRing
metadata: {name: kr, namespace: ns}
status: {externalRef: projects/p/locations/l/keyRings/k}
---
apiVersion: kms.cnrm.cloud.google.com/v1beta1
kind: KMSKeyRing
metadata: {name: kr-pending, namespace: ns}
"""


@pytest.fixture
def store() -> InMemoryStore:
    return InMemoryStore.from_yaml(STORE_YAML)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Any socket use during the test fails loudly."""

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("reference resolution must not do network I/O")

    monkeypatch.setattr(socket, "socket", boom)
    monkeypatch.setattr(socket, "create_connection", boom)
    monkeypatch.setattr(socket, "getaddrinfo", boom)
    yield


def test_reference_tables_are_registered() -> None:
    """The generated tables the object-level tests below rely on."""
    by_path = {f.path: f for f in references_of("PubSubSubscription")}
    # BigQueryTable and BigtableTable are generated now: name references are allowed
    assert not by_path["bigqueryConfig.tableRef"].external_only
    assert by_path["bigqueryConfig.tableRef"].target == TABLE
    assert not by_path["bigtableConfig.tableRef"].external_only
    assert by_path["bigtableConfig.tableRef"].target == "BigtableTable"
    # KMSEKMConnection is not generated: external only
    backend = {f.path: f for f in references_of("KMSCryptoKey")}["cryptoKeyBackendRef"]
    assert backend.external_only and backend.target == "KMSEKMConnection"
    assert by_path["deadLetterPolicy.deadLetterTopicRef"].target == TOPIC
    assert {f.path: f.target for f in references_of("SecretManagerSecret")}[
        "topics[].topicRef"
    ] == TOPIC
    channels = {f.path: f for f in references_of("MonitoringAlertPolicy")}[
        "notificationChannelRefs"
    ]
    assert channels.many and channels.target == CHANNEL and not channels.order_matters
    assert references_of("NoSuchKind") == ()


# --- exactly one of external / name ---------------------------------------------------


@pytest.mark.parametrize(
    "ref",
    [
        pytest.param({"external": TOPIC_EXT}, id="external"),
        pytest.param({"name": "t"}, id="name"),
        pytest.param({"name": "t", "namespace": "other"}, id="name+namespace"),
        pytest.param({"external": TOPIC_EXT, "name": None, "namespace": None}, id="nulls-ignored"),
        pytest.param(ResourceRef(name="t"), id="model-name"),
        pytest.param(ResourceRef(external=TOPIC_EXT), id="model-external"),
    ],
)
def test_one_of_external_or_name_ok(ref: Any) -> None:
    check_ref(ref, TOPIC, "spec.topicRef")


@pytest.mark.parametrize(
    ("ref", "reason"),
    [
        pytest.param({"external": TOPIC_EXT, "name": "t"}, Reason.EXTERNAL_AND_NAME, id="both"),
        pytest.param(
            {"external": TOPIC_EXT, "name": "t", "namespace": "ns"},
            Reason.EXTERNAL_AND_NAME,
            id="both+namespace",
        ),
        pytest.param(
            ResourceRef(external=TOPIC_EXT, name="t"), Reason.EXTERNAL_AND_NAME, id="model-both"
        ),
        pytest.param({}, Reason.EMPTY, id="neither"),
        pytest.param({"external": "", "name": ""}, Reason.EMPTY, id="both-empty-strings"),
        pytest.param({"external": None, "name": None}, Reason.EMPTY, id="both-null"),
        pytest.param(ResourceRef(), Reason.EMPTY, id="model-empty"),
        pytest.param(TOPIC_EXT, Reason.MALFORMED, id="bare-string"),
        pytest.param(["t"], Reason.MALFORMED, id="list"),
    ],
)
def test_one_of_external_or_name_broken(ref: Any, reason: Reason) -> None:
    err = raises(reason, "spec.topicRef", check_ref, ref, TOPIC, "spec.topicRef")
    if reason is Reason.EMPTY:
        assert TOPIC in err.message


def test_both_message_shows_the_two_values() -> None:
    err = raises(
        Reason.EXTERNAL_AND_NAME,
        "spec.topicRef",
        check_ref,
        {"external": TOPIC_EXT, "name": "tt"},
        TOPIC,
        "spec.topicRef",
    )
    assert TOPIC_EXT in err.message and "'tt'" in err.message


# --- external required for Kinds we do not reconcile ------------------------------------


def test_external_only_target_accepts_external(store: InMemoryStore) -> None:
    ref = {"external": "//bigquery.googleapis.com/projects/p/datasets/d/tables/x"}
    check_ref(ref, TABLE, "spec.bigqueryConfig.tableRef", external_only=True)
    got = resolve_ref(ref, TABLE, "ns", store, "spec.bigqueryConfig.tableRef", external_only=True)
    assert got == "projects/p/datasets/d/tables/x"


@pytest.mark.parametrize(
    "ref",
    [
        pytest.param({"name": "x"}, id="name"),
        pytest.param({"name": "x", "namespace": "ns"}, id="name+namespace"),
    ],
)
def test_external_only_target_rejects_name(ref: dict[str, str], store: InMemoryStore) -> None:
    path = "spec.bigqueryConfig.tableRef"
    err = raises(Reason.EXTERNAL_REQUIRED, path, check_ref, ref, TABLE, path, external_only=True)
    assert TABLE in err.message
    # Resolution refuses it too, before looking anything up.
    raises(
        Reason.EXTERNAL_REQUIRED,
        path,
        resolve_ref,
        ref,
        TABLE,
        "ns",
        store,
        path,
        external_only=True,
    )


def test_external_only_in_a_list_points_at_the_entry() -> None:
    refs = [{"external": "projects/p/datasets/d/tables/a"}, {"name": "b"}]
    raises(
        Reason.EXTERNAL_REQUIRED,
        "spec.tables[1]",
        check_refs,
        refs,
        TABLE,
        "spec.tables",
        external_only=True,
    )


def test_name_is_fine_when_target_is_reconciled() -> None:
    """The same name-only ref is legal without external_only."""
    check_ref({"name": "x"}, TOPIC, "spec.topicRef", external_only=False)


# --- external must parse as the target's identity -------------------------------------


@pytest.mark.parametrize(
    ("kind", "external", "canonical"),
    [
        pytest.param(TOPIC, TOPIC_EXT, TOPIC_EXT, id="topic-canonical"),
        pytest.param(
            TOPIC, "//pubsub.googleapis.com/projects/p/topics/t", TOPIC_EXT, id="topic-asset-name"
        ),
        pytest.param(
            TOPIC,
            "https://pubsub.googleapis.com/v1/projects/p/topics/t",
            TOPIC_EXT,
            id="topic-rest-url",
        ),
        pytest.param(TOPIC, f"  {TOPIC_EXT} ", TOPIC_EXT, id="topic-padded"),
        pytest.param(
            "ComputeNetwork",
            "https://www.googleapis.com/compute/v1/projects/p/global/networks/n",
            "projects/p/global/networks/n",
            id="network-self-link",
        ),
        pytest.param(
            "ComputeNetwork",
            "https://compute.googleapis.com/compute/beta/projects/p/global/networks/n",
            "projects/p/global/networks/n",
            id="network-self-link-beta",
        ),
        pytest.param(
            "ComputeSubnetwork",
            "https://www.googleapis.com/compute/v1/projects/p/regions/r/subnetworks/s",
            "projects/p/regions/r/subnetworks/s",
            id="subnetwork-self-link",
        ),
        pytest.param(
            "KMSCryptoKey",
            "//cloudkms.googleapis.com/projects/p/locations/l/keyRings/k/cryptoKeys/c",
            "projects/p/locations/l/keyRings/k/cryptoKeys/c",
            id="cryptokey-asset-name",
        ),
        pytest.param(
            CHANNEL, "https://monitoring.googleapis.com/v3/" + CH1, CH1, id="channel-rest-url"
        ),
        pytest.param("StorageBucket", "gs://b", "b", id="bucket-gs"),
        pytest.param("StorageBucket", "projects/_/buckets/b", "b", id="bucket-projects-underscore"),
        pytest.param(
            "StorageBucket", "https://storage.googleapis.com/storage/v1/b/b", "b", id="bucket-rest"
        ),
        pytest.param(
            "StorageBucket",
            "//storage.googleapis.com/projects/_/buckets/b",
            "b",
            id="bucket-asset-inventory-name",
        ),
        pytest.param("Project", "p", "projects/p", id="project-bare-id"),
        pytest.param(
            "Project",
            "//cloudresourcemanager.googleapis.com/projects/p",
            "projects/p",
            id="project-asset",
        ),
    ],
)
def test_valid_external_spellings(kind: str, external: str, canonical: str) -> None:
    check_ref({"external": external}, kind, "spec.ref")
    assert normalize_ref({"external": external}, kind) == {"external": canonical}


@pytest.mark.parametrize(
    ("kind", "external", "template"),
    [
        pytest.param(
            TOPIC,
            "projects/p/subscriptions/t",
            "projects/{project}/topics/{topic}",
            id="wrong-collection",
        ),
        pytest.param(
            TOPIC,
            "//monitoring.googleapis.com/projects/p/topics/t",
            "projects/{project}/topics/{topic}",
            id="wrong-service-domain",
        ),
        pytest.param(
            TOPIC,
            "https://example.com/v1/projects/p/topics/t",
            "projects/{project}/topics/{topic}",
            id="wrong-host",
        ),
        pytest.param(
            TOPIC, "projects//topics/t", "projects/{project}/topics/{topic}", id="empty-segment"
        ),
        pytest.param(
            TOPIC, "projects/p/topics/t/", "projects/{project}/topics/{topic}", id="trailing-slash"
        ),
        pytest.param(TOPIC, "t", "projects/{project}/topics/{topic}", id="bare-id"),
        pytest.param(TOPIC, "   ", "projects/{project}/topics/{topic}", id="blank"),
        pytest.param(
            "ComputeNetwork",
            "https://www.googleapis.com/compute/v1/projects/p/regions/r/subnetworks/s",
            "projects/{project}/global/networks/{network}",
            id="subnetwork-self-link-for-network",
        ),
        pytest.param(
            "KMSCryptoKey",
            "projects/p/locations/l/keyRings/k",
            "projects/{project}/locations/{location}/keyRings/{keyRing}/cryptoKeys/{cryptoKey}",
            id="keyring-for-cryptokey",
        ),
    ],
)
def test_invalid_external(kind: str, external: str, template: str) -> None:
    err = raises(
        Reason.INVALID_EXTERNAL, "spec.ref", check_ref, {"external": external}, kind, "spec.ref"
    )
    # The message names the Kind, the value and the expected format.
    assert kind in err.message
    assert repr(external) in err.message
    assert template in err.message


def test_invalid_external_in_a_list_points_at_the_entry() -> None:
    refs = [{"external": CH1}, {"external": "projects/p/alertPolicies/1"}]
    err = raises(
        Reason.INVALID_EXTERNAL,
        "spec.notificationChannelRefs[1]",
        check_refs,
        refs,
        CHANNEL,
        "spec.notificationChannelRefs",
    )
    assert CHANNEL in err.message and "projects/p/alertPolicies/1" in err.message


# --- namespace -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ref", "referrer_ns", "expected"),
    [
        pytest.param({"name": "t"}, "ns", "projects/p/topics/t-in-ns", id="default-own-namespace"),
        pytest.param(
            {"name": "t"}, "other", "projects/p/topics/t-in-other", id="default-follows-referrer"
        ),
        pytest.param(
            {"name": "t", "namespace": "other"},
            "ns",
            "projects/p/topics/t-in-other",
            id="explicit-other",
        ),
        pytest.param(
            {"name": "t", "namespace": "ns"},
            "other",
            "projects/p/topics/t-in-ns",
            id="explicit-back",
        ),
        pytest.param(
            {"name": "only-other", "namespace": "other"},
            "ns",
            "projects/p/topics/only-other",
            id="cross",
        ),
        pytest.param(
            {"name": "t", "namespace": ""},
            "ns",
            "projects/p/topics/t-in-ns",
            id="empty-namespace-defaults",
        ),
    ],
)
def test_namespace_resolution(
    ref: dict[str, str], referrer_ns: str, expected: str, store: InMemoryStore
) -> None:
    assert resolve_ref(ref, TOPIC, referrer_ns, store, "spec.topicRef") == expected


def test_other_namespace_needs_explicit_namespace(store: InMemoryStore) -> None:
    """An object that exists only in another namespace is not found by name alone."""
    err = raises(
        Reason.NOT_FOUND,
        "spec.topicRef",
        resolve_ref,
        {"name": "only-other"},
        TOPIC,
        "ns",
        store,
        "spec.topicRef",
    )
    assert "ns/only-other" in err.message
    assert resolve_ref(
        {"name": "only-other", "namespace": "other"}, TOPIC, "ns", store, "spec.topicRef"
    )


def test_object_namespace_is_the_default_in_resolve_object(store: InMemoryStore) -> None:
    sub = obj("PubSubSubscription", "s", namespace="other", spec={"topicRef": {"name": "t"}})
    assert resolve_object(sub, store) == {"spec.topicRef": "projects/p/topics/t-in-other"}
    sub_ns = obj("PubSubSubscription", "s", namespace="ns", spec={"topicRef": {"name": "t"}})
    assert resolve_object(sub_ns, store) == {"spec.topicRef": "projects/p/topics/t-in-ns"}


def test_object_without_namespace_uses_store_default(store: InMemoryStore) -> None:
    sub = obj("PubSubSubscription", "s", namespace=None, spec={"topicRef": {"name": "in-default"}})
    assert resolve_object(sub, store) == {"spec.topicRef": "projects/p/topics/in-default"}
    sub_missing = obj("PubSubSubscription", "s", namespace=None, spec={"topicRef": {"name": "t"}})
    err = raises(Reason.NOT_FOUND, "spec.topicRef", resolve_object, sub_missing, store)
    assert "default/t" in err.message


@pytest.mark.parametrize(
    "ref",
    [
        pytest.param({"external": TOPIC_EXT, "namespace": "ns"}, id="external+namespace"),
        pytest.param(
            {"external": TOPIC_EXT, "namespace": "other", "name": ""},
            id="external+namespace+empty-name",
        ),
    ],
)
def test_namespace_without_name(ref: dict[str, str], store: InMemoryStore) -> None:
    err = raises(
        Reason.NAMESPACE_WITHOUT_NAME, "spec.topicRef", check_ref, ref, TOPIC, "spec.topicRef"
    )
    assert "namespace" in err.message
    raises(
        Reason.NAMESPACE_WITHOUT_NAME,
        "spec.topicRef",
        resolve_ref,
        ref,
        TOPIC,
        "ns",
        store,
        "spec.topicRef",
    )


def test_namespace_without_name_in_a_list() -> None:
    refs = [{"external": CH1}, {"external": CH2, "namespace": "ns"}]
    raises(
        Reason.NAMESPACE_WITHOUT_NAME,
        "spec.notificationChannelRefs[1]",
        check_refs,
        refs,
        CHANNEL,
        "spec.notificationChannelRefs",
    )


# --- <kind>Refs lists --------------------------------------------------------------------


P = "spec.notificationChannelRefs"


@pytest.mark.parametrize(
    "refs",
    [
        pytest.param([], id="empty"),
        pytest.param([{"external": CH1}, {"external": CH2}], id="all-external"),
        pytest.param([{"name": "c1"}, {"name": "c2", "namespace": "other"}], id="all-name"),
        pytest.param((ResourceRef(external=CH1), ResourceRef(external=CH2)), id="tuple-of-models"),
    ],
)
def test_refs_one_form(refs: Any) -> None:
    check_refs(refs, CHANNEL, P)


@pytest.mark.parametrize(
    "refs",
    [
        pytest.param([{"external": CH1}, {"name": "c2"}], id="external-then-name"),
        pytest.param([{"name": "c1"}, {"external": CH2}], id="name-then-external"),
        pytest.param([{"name": "c1"}, {"name": "c2"}, {"external": CH3}], id="late-external"),
    ],
)
def test_refs_mixed_form(refs: list[dict[str, str]]) -> None:
    raises(Reason.MIXED_FORM, P, check_refs, refs, CHANNEL, P)


@pytest.mark.parametrize(
    "refs", [pytest.param({"name": "c1"}, id="mapping"), pytest.param(CH1, id="string")]
)
def test_refs_must_be_a_list(refs: Any) -> None:
    raises(Reason.MALFORMED, P, check_refs, refs, CHANNEL, P)


def test_refs_entry_not_an_object() -> None:
    raises(Reason.MALFORMED, f"{P}[1]", check_refs, [{"external": CH1}, CH2], CHANNEL, P)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        pytest.param(CH1, CH1, id="identical"),
        pytest.param(CH1, "//monitoring.googleapis.com/" + CH1, id="asset-name"),
        pytest.param(CH1, "https://monitoring.googleapis.com/v3/" + CH1, id="rest-url"),
        pytest.param(f" {CH1}", CH1, id="padding"),
        pytest.param(
            "//monitoring.googleapis.com/" + CH1,
            "https://monitoring.googleapis.com/v3/" + CH1,
            id="two-spellings",
        ),
    ],
)
def test_refs_duplicate_external_after_normalization(a: str, b: str) -> None:
    refs = [{"external": a}, {"external": CH2}, {"external": b}]
    err = raises(Reason.DUPLICATE_EXTERNAL, P, check_refs, refs, CHANNEL, P)
    assert CH1 in err.message


def test_refs_similar_but_distinct_externals_pass() -> None:
    refs = [
        {"external": CH1},
        {"external": "projects/p/notificationChannels/11"},
        {"external": "projects/q/notificationChannels/1"},
    ]
    check_refs(refs, CHANNEL, P)


@pytest.mark.parametrize(
    "refs",
    [
        pytest.param([{"name": "c1"}, {"name": "c1"}], id="identical-names"),
        pytest.param(
            [{"name": "c1", "namespace": "ns"}, {"name": "c1", "namespace": "other"}],
            id="same-name-two-namespaces",
        ),
        pytest.param(
            [{"name": "c1"}, {"name": "c1", "namespace": "ns"}],
            id="implicit-and-explicit-namespace",
        ),
    ],
)
def test_refs_named_duplicates_are_not_checked_statically(refs: list[dict[str, str]]) -> None:
    check_refs(refs, CHANNEL, P)


def test_refs_same_name_different_namespaces_resolve(store: InMemoryStore) -> None:
    refs = [{"name": "c1", "namespace": "ns"}, {"name": "c1", "namespace": "other"}]
    assert resolve_refs(refs, CHANNEL, "ns", store, P) == [
        CH1,
        "projects/p/notificationChannels/1-other",
    ]


@pytest.mark.parametrize(
    "refs",
    [
        pytest.param([{"name": "c1"}, {"name": "c1"}], id="identical-names"),
        pytest.param(
            [{"name": "c1"}, {"name": "c1", "namespace": "ns"}],
            id="implicit-and-explicit-namespace",
        ),
        pytest.param(
            [{"name": "c1"}, {"name": "c2"}, {"name": "c1-alias"}],
            id="two-objects-same-externalRef",
        ),
    ],
)
def test_refs_duplicate_resolved(refs: list[dict[str, str]], store: InMemoryStore) -> None:
    check_refs(refs, CHANNEL, P)  # statically fine ...
    err = raises(
        Reason.DUPLICATE_RESOLVED, P, resolve_refs, refs, CHANNEL, "ns", store, P
    )  # ... not once resolved
    assert CH1 in err.message


def test_refs_resolution_keeps_order(store: InMemoryStore) -> None:
    named = [{"name": "c3"}, {"name": "c1"}, {"name": "c2"}]
    assert resolve_refs(named, CHANNEL, "ns", store, P) == [CH3, CH1, CH2]
    external = [
        {"external": CH2},
        {"external": "//monitoring.googleapis.com/" + CH3},
        {"external": CH1},
    ]
    assert resolve_refs(external, CHANNEL, "ns", store, P) == [CH2, CH3, CH1]
    assert resolve_refs([], CHANNEL, "ns", store, P) == []


@pytest.mark.parametrize(
    ("a", "b", "order_matters", "same"),
    [
        pytest.param([CH1, CH2], [CH1, CH2], False, True, id="equal"),
        pytest.param([CH1, CH2], [CH2, CH1], False, True, id="reorder-is-no-diff"),
        pytest.param([CH1, CH2], [CH2, CH1], True, False, id="reorder-is-diff-when-order-matters"),
        pytest.param([CH1, CH2], [CH1, CH2], True, True, id="equal-when-order-matters"),
        pytest.param([CH1, CH2], [CH1, CH3], False, False, id="changed-entry"),
        pytest.param([CH1, CH2], [CH1], False, False, id="removed-entry"),
        pytest.param([CH1, CH1, CH2], [CH1, CH2, CH2], False, False, id="multiplicity"),
        pytest.param([], [], False, True, id="both-empty"),
    ],
)
def test_same_refs(a: list[str], b: list[str], order_matters: bool, same: bool) -> None:
    assert same_refs(a, b, order_matters=order_matters) is same
    assert same_refs(b, a, order_matters=order_matters) is same


# --- resolution ------------------------------------------------------------------------------


def test_resolves_ready_object(store: InMemoryStore, no_network: None) -> None:
    assert (
        resolve_ref({"name": "t"}, TOPIC, "ns", store, "spec.topicRef")
        == "projects/p/topics/t-in-ns"
    )


def test_resolved_externalref_is_normalized(store: InMemoryStore, no_network: None) -> None:
    """c1-alias's status.externalRef uses the //monitoring.googleapis.com/ spelling."""
    assert resolve_ref({"name": "c1-alias"}, CHANNEL, "ns", store, "spec.ref") == CH1


@pytest.mark.parametrize(
    ("ref", "kind", "shown"),
    [
        pytest.param({"name": "missing"}, TOPIC, "ns/missing", id="missing"),
        pytest.param(
            {"name": "t", "namespace": "nowhere"}, TOPIC, "nowhere/t", id="missing-namespace"
        ),
        pytest.param({"name": "sub-only"}, TOPIC, "ns/sub-only", id="other-kind-same-name"),
    ],
)
def test_dependency_not_found(
    ref: dict[str, str], kind: str, shown: str, store: InMemoryStore, no_network: None
) -> None:
    err = raises(
        Reason.NOT_FOUND, "spec.topicRef", resolve_ref, ref, kind, "ns", store, "spec.topicRef"
    )
    assert kind in err.message and shown in err.message


@pytest.mark.parametrize("name", ["pending", "blank-status"])
def test_dependency_not_ready(name: str, store: InMemoryStore, no_network: None) -> None:
    err = raises(
        Reason.NOT_READY,
        "spec.topicRef",
        resolve_ref,
        {"name": name},
        TOPIC,
        "ns",
        store,
        "spec.topicRef",
    )
    assert TOPIC in err.message and f"ns/{name}" in err.message


def test_not_found_in_list_points_at_the_entry(store: InMemoryStore, no_network: None) -> None:
    refs = [{"name": "c1"}, {"name": "gone"}]
    err = raises(Reason.NOT_FOUND, f"{P}[1]", resolve_refs, refs, CHANNEL, "ns", store, P)
    assert CHANNEL in err.message and "ns/gone" in err.message


def test_unusable_status_externalref(no_network: None) -> None:
    store = InMemoryStore([obj(TOPIC, "weird", external="projects/p/subscriptions/x")])
    err = raises(
        Reason.INVALID_EXTERNAL,
        "spec.topicRef",
        resolve_ref,
        {"name": "weird"},
        TOPIC,
        "ns",
        store,
        "spec.topicRef",
    )
    assert "ns/weird" in err.message


def test_no_network_guard_is_effective(no_network: None) -> None:
    with pytest.raises(AssertionError, match="network"):
        socket.socket()


def test_resolution_does_no_network_io(store: InMemoryStore, no_network: None) -> None:
    policy = obj(
        "MonitoringAlertPolicy",
        "a",
        spec={
            "projectRef": {"external": "p"},
            "notificationChannelRefs": [{"name": "c2"}, {"name": "c1"}],
        },
    )
    assert resolve_object(policy, store) == {"spec.projectRef": "projects/p", P: [CH2, CH1]}
    key = obj("KMSCryptoKey", "ck", spec={"keyRingRef": {"name": "kr"}})
    assert identity_from_spec(key, store) == "projects/p/locations/l/keyRings/k/cryptoKeys/ck"


def test_store_rejects_objects_without_kind_or_name() -> None:
    with pytest.raises(ValueError):
        InMemoryStore([{"kind": TOPIC, "metadata": {}}])
    with pytest.raises(ValueError):
        InMemoryStore([{"metadata": {"name": "x"}}])


def test_store_namespace_objects_are_cluster_scoped(store: InMemoryStore) -> None:
    assert store.get("Namespace", "", "ns") is not None
    assert store.get("Namespace", "default", "ns") is None


# --- normalize / set_external ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        pytest.param({"external": TOPIC_EXT}, {"external": TOPIC_EXT}, id="canonical"),
        pytest.param(
            {"external": "//pubsub.googleapis.com/" + TOPIC_EXT},
            {"external": TOPIC_EXT},
            id="asset-name",
        ),
        pytest.param(
            {"external": "https://pubsub.googleapis.com/v1/" + TOPIC_EXT},
            {"external": TOPIC_EXT},
            id="rest",
        ),
        pytest.param({"name": "t"}, {"name": "t"}, id="name"),
        pytest.param(
            {"name": "t", "namespace": "other"},
            {"name": "t", "namespace": "other"},
            id="name+namespace",
        ),
        pytest.param({"name": "t", "namespace": None}, {"name": "t"}, id="null-namespace-dropped"),
        pytest.param(
            ResourceRef(name="t", namespace="other"),
            {"name": "t", "namespace": "other"},
            id="model",
        ),
    ],
)
def test_normalize_ref_is_idempotent(ref: Any, expected: dict[str, str]) -> None:
    once = normalize_ref(ref, TOPIC)
    assert once == expected
    assert normalize_ref(once, TOPIC) == once
    assert normalize_ref(normalize_ref(once, TOPIC), TOPIC) == once


@pytest.mark.parametrize(
    ("ref", "reason"),
    [
        pytest.param({"external": TOPIC_EXT, "name": "t"}, Reason.EXTERNAL_AND_NAME, id="both"),
        pytest.param({}, Reason.EMPTY, id="empty"),
        pytest.param(
            {"external": "projects/p/subscriptions/s"}, Reason.INVALID_EXTERNAL, id="invalid"
        ),
        pytest.param(
            {"external": TOPIC_EXT, "namespace": "ns"},
            Reason.NAMESPACE_WITHOUT_NAME,
            id="namespace",
        ),
    ],
)
def test_normalize_ref_applies_the_rules(ref: dict[str, str], reason: Reason) -> None:
    raises(reason, "spec.topicRef", normalize_ref, ref, TOPIC, "spec.topicRef")


@pytest.mark.parametrize(
    "ref",
    [
        pytest.param({"name": "t", "namespace": "other"}, id="name+namespace"),
        pytest.param({"name": "t"}, id="name"),
        pytest.param({"external": "projects/p/topics/old"}, id="external"),
        pytest.param(ResourceRef(name="t", namespace="other"), id="model"),
    ],
)
def test_set_external_clears_name_and_namespace(ref: Any) -> None:
    out = set_external(ref, TOPIC, "//pubsub.googleapis.com/" + TOPIC_EXT)
    assert out == {"external": TOPIC_EXT}
    check_ref(out, TOPIC, "spec.topicRef")  # a single form, valid
    assert normalize_ref(out, TOPIC) == out


def test_set_external_rejects_invalid_value() -> None:
    with pytest.raises(RefError) as info:
        set_external({"name": "t"}, TOPIC, "projects/p/subscriptions/s", "spec.topicRef")
    assert info.value.reason is Reason.INVALID_EXTERNAL and info.value.path == "spec.topicRef"
    assert TOPIC in str(info.value) and "projects/p/subscriptions/s" in str(info.value)


def test_non_string_external_says_so() -> None:
    with pytest.raises(RefError) as info:
        check_ref({"external": 5}, TOPIC, "spec.topicRef")
    assert info.value.reason is Reason.INVALID_EXTERNAL and "not a string" in str(info.value)


# --- whole objects ---------------------------------------------------------------------------------


def secret(topics: list[Any]) -> dict[str, Any]:
    return obj("SecretManagerSecret", "s", spec={"projectRef": {"external": "p"}, "topics": topics})


def policy(**spec: Any) -> dict[str, Any]:
    return obj("MonitoringAlertPolicy", "a", spec={"projectRef": {"external": "p"}, **spec})


def subscription(**spec: Any) -> dict[str, Any]:
    return obj("PubSubSubscription", "sub", spec={"topicRef": {"name": "t"}, **spec})


def crypto_key(**spec: Any) -> dict[str, Any]:
    return obj("KMSCryptoKey", "k", spec={"keyRingRef": {"external": "projects/p/locations/l/keyRings/r"}, **spec})


@pytest.mark.parametrize(
    "o",
    [
        pytest.param(
            secret([{"topicRef": {"name": "t"}}, {"topicRef": {"external": TOPIC_EXT}}]),
            id="secret-topics",
        ),
        pytest.param(secret([]), id="secret-no-topics"),
        pytest.param(
            policy(notificationChannelRefs=[{"external": CH1}, {"external": CH2}]),
            id="policy-external",
        ),
        pytest.param(
            policy(notificationChannelRefs=[{"name": "c1"}, {"name": "c1"}]), id="policy-named-dups"
        ),
        pytest.param(
            subscription(
                bigqueryConfig={"tableRef": {"external": "projects/p/datasets/d/tables/x"}}
            ),
            id="subscription-bigquery-external",
        ),
        pytest.param(obj("PubSubSubscription", "sub"), id="no-spec"),
        pytest.param(obj("NoSuchKind", "x", spec={"topicRef": {}}), id="kind-without-table"),
    ],
)
def test_check_object_ok(o: dict[str, Any]) -> None:
    assert check_object(o) == []


@pytest.mark.parametrize(
    ("o", "reason", "path"),
    [
        pytest.param(
            secret(
                [
                    {"topicRef": {"name": "t"}},
                    {"topicRef": {"external": "projects/p/subscriptions/x"}},
                ]
            ),
            Reason.INVALID_EXTERNAL,
            "spec.topics[1].topicRef",
            id="secret-topics-invalid",
        ),
        pytest.param(
            secret([{"topicRef": {"name": "t"}}, {"topicRef": {}}]),
            Reason.EMPTY,
            "spec.topics[1].topicRef",
            id="secret-topics-empty",
        ),
        pytest.param(
            policy(notificationChannelRefs=[{"external": CH1}, {"external": CH2, "name": "c2"}]),
            Reason.EXTERNAL_AND_NAME,
            "spec.notificationChannelRefs[1]",
            id="policy-entry-both",
        ),
        pytest.param(
            policy(notificationChannelRefs=[{"external": CH1}, {"name": "c2"}]),
            Reason.MIXED_FORM,
            P,
            id="policy-mixed",
        ),
        pytest.param(
            policy(
                notificationChannelRefs=[
                    {"external": CH1},
                    {"external": "//monitoring.googleapis.com/" + CH1},
                ]
            ),
            Reason.DUPLICATE_EXTERNAL,
            P,
            id="policy-dup-external",
        ),
        pytest.param(
            policy(
                alertStrategy={
                    "notificationChannelStrategy": [
                        {"notificationChannelRefs": [{"external": CH1}]},
                        {"notificationChannelRefs": [{"external": CH1}, {"external": CH1}]},
                    ]
                }
            ),
            Reason.DUPLICATE_EXTERNAL,
            "spec.alertStrategy.notificationChannelStrategy[1].notificationChannelRefs",
            id="policy-strategy-dup",
        ),
        pytest.param(
            crypto_key(cryptoKeyBackendRef={"name": "x"}),
            Reason.EXTERNAL_REQUIRED,
            "spec.cryptoKeyBackendRef",
            id="crypto-key-backend-name",
        ),
        pytest.param(
            subscription(
                deadLetterPolicy={"deadLetterTopicRef": {"external": TOPIC_EXT, "name": "t"}}
            ),
            Reason.EXTERNAL_AND_NAME,
            "spec.deadLetterPolicy.deadLetterTopicRef",
            id="subscription-dead-letter-both",
        ),
    ],
)
def test_check_object_errors(o: dict[str, Any], reason: Reason, path: str) -> None:
    errors = check_object(o)
    assert [(e.reason, e.path) for e in errors] == [(reason, path)]


def test_check_object_reports_every_broken_field() -> None:
    o = subscription(
        topicRef={},
        bigtableConfig={"tableRef": {"external": "bad"}},
        deadLetterPolicy={"deadLetterTopicRef": {"external": "bad"}},
    )
    got = {(e.path, e.reason) for e in check_object(o)}
    assert got == {
        ("spec.topicRef", Reason.EMPTY),
        ("spec.bigtableConfig.tableRef", Reason.INVALID_EXTERNAL),
        ("spec.deadLetterPolicy.deadLetterTopicRef", Reason.INVALID_EXTERNAL),
    }


def test_resolve_object_concrete_list_paths(store: InMemoryStore, no_network: None) -> None:
    s = secret(
        [
            {"topicRef": {"external": "//pubsub.googleapis.com/projects/p/topics/x"}},
            {"topicRef": {"name": "t"}},
        ]
    )
    assert resolve_object(s, store) == {
        "spec.projectRef": "projects/p",
        "spec.topics[0].topicRef": "projects/p/topics/x",
        "spec.topics[1].topicRef": "projects/p/topics/t-in-ns",
    }


def test_resolve_object_subscription(store: InMemoryStore, no_network: None) -> None:
    o = subscription(
        bigqueryConfig={"tableRef": {"external": "projects/p/datasets/d/tables/x"}},
        deadLetterPolicy={"deadLetterTopicRef": {"name": "only-other", "namespace": "other"}},
    )
    assert resolve_object(o, store) == {
        "spec.bigqueryConfig.tableRef": "projects/p/datasets/d/tables/x",
        "spec.deadLetterPolicy.deadLetterTopicRef": "projects/p/topics/only-other",
        "spec.topicRef": "projects/p/topics/t-in-ns",
    }


@pytest.mark.parametrize(
    ("o", "reason", "path"),
    [
        pytest.param(
            secret([{"topicRef": {"name": "t"}}, {"topicRef": {"name": "missing"}}]),
            Reason.NOT_FOUND,
            "spec.topics[1].topicRef",
            id="secret-topic-missing",
        ),
        pytest.param(
            secret([{"topicRef": {"name": "pending"}}]),
            Reason.NOT_READY,
            "spec.topics[0].topicRef",
            id="secret-topic-not-ready",
        ),
        pytest.param(
            policy(notificationChannelRefs=[{"name": "c1"}, {"name": "c1-alias"}]),
            Reason.DUPLICATE_RESOLVED,
            P,
            id="policy-dup-resolved",
        ),
        pytest.param(
            policy(notificationChannelRefs=[{"name": "c1"}, {"name": "nope"}]),
            Reason.NOT_FOUND,
            "spec.notificationChannelRefs[1]",
            id="policy-channel-missing",
        ),
        pytest.param(
            crypto_key(cryptoKeyBackendRef={"name": "x"}),
            Reason.EXTERNAL_REQUIRED,
            "spec.cryptoKeyBackendRef",
            id="crypto-key-backend-name",
        ),
    ],
)
def test_resolve_object_errors(
    o: dict[str, Any], reason: Reason, path: str, store: InMemoryStore, no_network: None
) -> None:
    raises(reason, path, resolve_object, o, store)


# --- identity_from_spec ----------------------------------------------------------------------------


KEY = "projects/p/locations/l/keyRings/k/cryptoKeys"


@pytest.mark.parametrize(
    ("o", "expected"),
    [
        pytest.param(
            obj("KMSCryptoKey", "ck", spec={"keyRingRef": {"name": "kr"}}),
            f"{KEY}/ck",
            id="key-metadata-name",
        ),
        pytest.param(
            obj("KMSCryptoKey", "ck", spec={"keyRingRef": {"name": "kr"}, "resourceID": "rid"}),
            f"{KEY}/rid",
            id="key-resource-id",
        ),
        pytest.param(
            obj(
                "KMSCryptoKey",
                "ck",
                namespace="other",
                spec={"keyRingRef": {"name": "kr", "namespace": "ns"}},
            ),
            f"{KEY}/ck",
            id="key-ring-other-namespace",
        ),
        pytest.param(
            obj(
                "KMSCryptoKey",
                "ck",
                spec={
                    "keyRingRef": {
                        "external": "//cloudkms.googleapis.com/projects/q/locations/m/keyRings/j"
                    }
                },
            ),
            "projects/q/locations/m/keyRings/j/cryptoKeys/ck",
            id="key-ring-external",
        ),
        pytest.param(
            obj(TOPIC, "t", spec={}),
            "projects/ns-project/topics/t",
            id="topic-namespace-annotation",
        ),
        pytest.param(obj(TOPIC, "t"), "projects/ns-project/topics/t", id="topic-no-spec"),
        pytest.param(
            obj(TOPIC, "t", spec={}, annotations={PROJECT_ID_ANNOTATION: "obj-project"}),
            "projects/obj-project/topics/t",
            id="topic-object-annotation-wins",
        ),
        pytest.param(
            obj(
                TOPIC,
                "t",
                namespace="bare",
                spec={},
                annotations={PROJECT_ID_ANNOTATION: "obj-project"},
            ),
            "projects/obj-project/topics/t",
            id="topic-object-annotation-bare-namespace",
        ),
        pytest.param(
            obj(
                TOPIC,
                "t",
                spec={"projectRef": {"external": "ref-project"}},
                annotations={PROJECT_ID_ANNOTATION: "x"},
            ),
            "projects/ref-project/topics/t",
            id="topic-projectRef-wins",
        ),
        pytest.param(
            obj(TOPIC, "t", spec={"resourceID": "rid", "projectRef": {"external": "projects/q"}}),
            "projects/q/topics/rid",
            id="topic-resource-id",
        ),
        pytest.param(
            obj("MonitoringAlertPolicy", "a", spec={}), None, id="service-generated-no-id"
        ),
        pytest.param(
            obj("MonitoringAlertPolicy", "a", spec={"projectRef": {"external": "p"}}),
            None,
            id="service-generated-no-id-with-project",
        ),
        pytest.param(
            obj(
                "MonitoringAlertPolicy",
                "a",
                spec={"projectRef": {"external": "p"}, "resourceID": "123"},
            ),
            "projects/p/alertPolicies/123",
            id="service-generated-with-id",
        ),
    ],
)
def test_identity_from_spec(
    o: dict[str, Any], expected: str | None, store: InMemoryStore, no_network: None
) -> None:
    assert identity_from_spec(o, store) == expected


@pytest.mark.parametrize(
    ("o", "reason", "path"),
    [
        pytest.param(
            obj("KMSCryptoKey", "ck", spec={}), Reason.EMPTY, "spec.keyRingRef", id="key-no-keyring"
        ),
        pytest.param(
            obj("KMSCryptoKey", "ck", spec={"keyRingRef": {"name": "kr-pending"}}),
            Reason.NOT_READY,
            "spec.keyRingRef",
            id="key-keyring-not-ready",
        ),
        pytest.param(
            obj("KMSCryptoKey", "ck", spec={"keyRingRef": {"name": "nope"}}),
            Reason.NOT_FOUND,
            "spec.keyRingRef",
            id="key-keyring-missing",
        ),
        pytest.param(
            obj("KMSCryptoKey", "ck", namespace="other", spec={"keyRingRef": {"name": "kr"}}),
            Reason.NOT_FOUND,
            "spec.keyRingRef",
            id="key-keyring-in-other-namespace",
        ),
        pytest.param(
            obj("KMSCryptoKey", "ck", spec={"keyRingRef": {"external": "projects/p/locations/l"}}),
            Reason.INVALID_EXTERNAL,
            "spec.keyRingRef",
            id="key-keyring-bad-external",
        ),
        pytest.param(
            obj(TOPIC, "t", namespace="bare", spec={}),
            Reason.EMPTY,
            "spec.projectRef",
            id="topic-bare-namespace",
        ),
        pytest.param(
            obj(TOPIC, "t", namespace="nowhere", spec={}),
            Reason.EMPTY,
            "spec.projectRef",
            id="topic-no-namespace-object",
        ),
        pytest.param(
            obj("KMSKeyRing", "kr2", spec={"projectRef": {"external": "p"}}),
            Reason.EMPTY,
            "spec.location",
            id="keyring-no-location",
        ),
    ],
)
def test_identity_from_spec_errors(
    o: dict[str, Any], reason: Reason, path: str, store: InMemoryStore, no_network: None
) -> None:
    err = raises(reason, path, identity_from_spec, o, store)
    if reason is Reason.EMPTY:
        assert path in err.message and o["kind"] in err.message
