"""The operator's timing and selection rules, without a server: the pattern
rule shared with ``kccgen bundle``, resync intervals and backoff, and the
namespace paths the test API server cannot exercise (it has no Namespaces)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kccgen.patterns import globs, problem, selects
from kccgen.runtime.operator import (
    ANN_INTERVAL,
    BACKOFF_MAX_S,
    WAIT_FALLBACK_S,
    Cache,
    Operator,
    Settings,
    _Slot,
    backoff_s,
    interval_of,
    served_kinds,
)
from kccgen.runtime.reconciler import Result
from kccgen.runtime.refs import PROJECT_ID_ANNOTATION
from kccgen.runtime.registry import kind_index

TOPIC = ("PubSubTopic", "pubsub.cnrm.cloud.google.com")
BUCKET = ("StorageBucket", "storage.cnrm.cloud.google.com")
NETWORK = ("ComputeNetwork", "compute.cnrm.cloud.google.com")


@pytest.mark.parametrize(
    ("pattern", "want"),
    [
        (None, {TOPIC, BUCKET, NETWORK}),
        ("", {TOPIC, BUCKET, NETWORK}),
        ("pubsub;storage", {TOPIC, BUCKET}),
        ("pubsub, storage", {TOPIC, BUCKET}),
        ("*/Compute*", {NETWORK}),
        ("storage.cnrm.cloud.google.com", {BUCKET}),
        ("PUBSUBTOPIC", {TOPIC}),
        ("!compute", {TOPIC, BUCKET}),
        ("pubsub;storage;!StorageBucket", {TOPIC}),
        ("!StorageBucket;storage", {BUCKET}),  # the last word wins
        ("nosuchservice", set()),
    ],
)
def test_a_pattern_selects_by_service_group_kind_and_excludes(pattern: str | None, want: set[tuple[str, str]]) -> None:
    assert {k for k in (TOPIC, BUCKET, NETWORK) if selects(pattern, *k)} == want


def test_malformed_patterns_are_named() -> None:
    assert problem("a/b/c") is not None and "a/b/c" in str(problem("a/b/c"))
    assert problem("pubsub;!") is not None
    assert problem("pubsub;*/Storage*") is None
    assert globs(" a ; b,c ") == ["a", "b", "c"]


def test_served_kinds_follow_the_registry() -> None:
    """Every Kind of a service, from the registry: no list or count held here."""
    pubsub = {k.kind for k in served_kinds("pubsub")}
    assert pubsub == {k for k, e in kind_index().items() if e["apiVersion"].startswith("pubsub.cnrm.cloud.google.com/")}
    assert len(served_kinds(None)) == len(kind_index())
    topic = next(k for k in served_kinds("PubSubTopic"))
    assert (topic.group, topic.version, topic.plural) == ("pubsub.cnrm.cloud.google.com", "v1beta1", "pubsubtopics")


def _obj(**annotations: str) -> dict[str, Any]:
    return {"kind": "PubSubTopic", "metadata": {"name": "t", "namespace": "ns", "annotations": annotations}}


def test_the_interval_annotation_sets_the_resync() -> None:
    assert interval_of(_obj(), 600) == 600
    assert interval_of(_obj(**{ANN_INTERVAL: "30"}), 600) == 30
    assert interval_of(_obj(**{ANN_INTERVAL: "0"}), 600) is None  # only on changes
    assert interval_of(_obj(**{ANN_INTERVAL: "soon"}), 600) == 600  # logged, default kept
    assert interval_of(_obj(**{ANN_INTERVAL: "-5"}), 600) == 600


def test_backoff_doubles_from_250_ms_to_2_minutes() -> None:
    assert [backoff_s(n) for n in range(1, 6)] == [0.25, 0.5, 1.0, 2.0, 4.0]
    assert backoff_s(30) == BACKOFF_MAX_S == 120


def _result(ready: bool, reason: str, **annotations: str) -> Result:
    return Result(_obj(**annotations), ready, reason, "")


def test_the_next_wait_after_each_outcome() -> None:
    op = Operator(Settings(endpoint="http://127.0.0.1:9/", resync_s=600, seed=1, health_port=None))
    slot = _Slot()
    waits = [op._next_wait(slot, _result(True, "UpToDate"), {}) for _ in range(200)]
    assert all(300 <= w <= 900 for w in waits if w is not None) and max(waits) - min(waits) > 300  # type: ignore[type-var, operator]
    assert op._next_wait(slot, _result(True, "UpToDate", **{ANN_INTERVAL: "5"}), {}) == 5  # as asked, no jitter
    assert op._next_wait(slot, _result(True, "UpToDate", **{ANN_INTERVAL: "0"}), {}) is None
    assert [op._next_wait(slot, _result(False, "UpdateFailed"), {}) for _ in range(3)] == [0.25, 0.5, 1.0]
    assert op._next_wait(slot, None, {}) == 2.0  # the reconcile raised: the same backoff
    op._next_wait(slot, _result(True, "UpToDate"), {})
    assert slot.failures == 0
    assert [op._next_wait(slot, _result(False, "DependencyNotFound"), {}) for _ in range(2)] == [WAIT_FALLBACK_S, 2 * WAIT_FALLBACK_S]
    assert op._next_wait(slot, _result(False, "Paused"), {}) is not None  # settled: the resync, not a backoff


def test_the_operators_project_is_the_default_of_a_namespace_without_one() -> None:
    cache = Cache(None, {"Namespace"}, default_project="fallback")
    assert cache.get("Namespace", "", "bare")["metadata"]["annotations"][PROJECT_ID_ANNOTATION] == "fallback"  # type: ignore[index]
    cache.put({"kind": "Namespace", "metadata": {"name": "own", "annotations": {PROJECT_ID_ANNOTATION: "team"}}})
    assert cache.get("Namespace", "", "own")["metadata"]["annotations"][PROJECT_ID_ANNOTATION] == "team"  # type: ignore[index]
    assert Cache(None, {"Namespace"}).get("Namespace", "", "bare") is None


def test_a_namespace_annotation_change_wakes_the_objects_in_it() -> None:
    """Pausing a namespace (or naming its project) reaches its objects at once."""
    op = Operator(Settings(endpoint="http://127.0.0.1:9/", health_port=None))

    async def scenario() -> tuple[bool, bool]:
        inside, outside = _Slot(), _Slot()
        op.slots[("PubSubTopic", "team", "a")] = inside
        op.slots[("PubSubTopic", "other", "b")] = outside
        await op._on_namespace(event={"type": None}, body={"metadata": {"name": "team"}})
        inside.wake.clear()
        paused = {"metadata": {"name": "team", "annotations": {"cnrm.cloud.google.com/actuation-mode": "Paused"}}}
        await op._on_namespace(event={"type": "MODIFIED"}, body=paused)
        return inside.wake.is_set(), outside.wake.is_set()

    assert asyncio.run(scenario()) == (True, False)
    ns = op.cache.get("Namespace", "", "team")
    assert ns is not None and ns["metadata"]["annotations"]["cnrm.cloud.google.com/actuation-mode"] == "Paused"
