"""tools/kcc_lifecycle.py: a sample folder of Config Connector objects through the lifecycle.

The folders here are hand-written in the samples' layout (placeholders and
all), not copied from Config Connector; docs/kcc-lifecycle.md is the run over
its real samples (``python -m tools.kcc_lifecycle MIRROR``, which needs the mirror).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kccgen.mockgcp.server import MockServer
from kccgen.runtime.lifecycle import Lifecycle
from tests.support.scenarios import lifecycle_on, running_mock
from tools.kcc_lifecycle import (
    Folder,
    candidates,
    fill,
    folders,
    run_kind,
    top_kinds,
    why_not_served,
)

TOPIC = """apiVersion: pubsub.cnrm.cloud.google.com/v1beta1
kind: PubSubTopic
metadata:
  name: topic-sample
  labels:
    team: a
spec:
  projectRef:
    # Replace ${PROJECT_ID?} with your project ID
    external: projects/${PROJECT_ID?}
"""
SUBSCRIPTION = """apiVersion: pubsub.cnrm.cloud.google.com/v1beta1
kind: PubSubSubscription
metadata:
  name: subscription-sample
spec:
  ackDeadlineSeconds: 15
  topicRef:
    name: subscription-dep
---
apiVersion: pubsub.cnrm.cloud.google.com/v1beta1
kind: PubSubTopic
metadata:
  name: subscription-dep
"""
UNSERVED = """apiVersion: iam.cnrm.cloud.google.com/v1beta1
kind: IAMPolicyMember
metadata:
  name: member
spec:
  member: user:a@example.com
  role: roles/pubsub.viewer
  resourceRef:
    kind: PubSubTopic
    name: topic-sample
"""
TEXTS = [
    ("pubsubtopic/pubsub_v1beta1_pubsubtopic.yaml", TOPIC),
    ("pubsubsubscription/basic/pubsub_v1beta1_pubsubsubscription.yaml", SUBSCRIPTION),
    ("iampolicymember/topic/iam_v1beta1_iampolicymember.yaml", UNSERVED),
    ("iampolicymember/topic/pubsub_v1beta1_pubsubtopic.yaml", TOPIC),
    ("README.md.yaml", "not: [a manifest"),
]


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    with running_mock() as s:
        yield s


@pytest.fixture(scope="module")
def lifecycle(server: MockServer) -> Lifecycle:
    return lifecycle_on(server, "kcc-sample")


def test_placeholders_are_filled_for_the_run_project() -> None:
    assert "external: projects/p-1\n" in fill(TOPIC, "p-1")
    assert fill("x: ${SOMETHING_ELSE?}", "p") == "x: example-something-else"


def test_folders_group_objects_and_kinds_are_ranked_by_objects() -> None:
    fs = folders(TEXTS)
    assert [f.path for f in fs] == ["iampolicymember/topic", "pubsubsubscription/basic", "pubsubtopic"]
    assert [o["kind"] for o in fs[1].objects] == ["PubSubSubscription", "PubSubTopic"]
    assert top_kinds(TEXTS, 2) == [("PubSubTopic", 3), ("IAMPolicyMember", 1)]


def test_the_kinds_own_fully_served_folder_comes_first() -> None:
    served = {"PubSubTopic": "pubsub.cnrm.cloud.google.com", "PubSubSubscription": "pubsub.cnrm.cloud.google.com"}
    order = [f.path for f in candidates("PubSubTopic", folders(TEXTS), served)]
    assert order == ["pubsubtopic", "pubsubsubscription/basic", "iampolicymember/topic"]


def test_an_unserved_kind_names_its_reason_and_issue() -> None:
    why = why_not_served("IAMPolicyMember", {"IAMPolicyMember": "iam: one member binding"})
    assert why.startswith("iam: one member binding") and "#29" in why


def test_a_sample_folder_with_a_dependency_passes_the_lifecycle(lifecycle: Lifecycle) -> None:
    folder = next(f for f in folders(TEXTS) if f.path == "pubsubsubscription/basic")
    path, out = run_kind(lifecycle, "PubSubSubscription", [folder], 1)
    assert (path, out.passed, out.message) == ("pubsubsubscription/basic", True, "")
    assert out.update_field  # one field changed with one write


def test_a_failing_folder_reports_its_step(lifecycle: Lifecycle) -> None:
    broken = Folder("pubsubsubscription/broken", (("pubsubsubscription/broken/a.yaml", SUBSCRIPTION.split("---")[0]),))
    _, out = run_kind(lifecycle, "PubSubSubscription", [broken], 1)
    assert not out.passed and out.step == "create" and "subscription-dep" in out.message
