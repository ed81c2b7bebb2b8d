"""The status write that first records a resource (status.externalRef) is made
with a resourceVersion precondition (issue 27, point 1): a version changed
since (kopf's finalizer) is read again and the write retried on it; a
version where another writer recorded another resource is never overwritten.
A fake cluster stands for the API server: the conflict is the server's, so
these paths need no operator process."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from kccgen.runtime.operator import Operator, Settings


class FakeCluster:
    def __init__(self, stored: dict[str, Any]) -> None:
        self.stored = stored
        self.writes: list[dict[str, Any]] = []

    def apply_status(self, obj: dict[str, Any], status: dict[str, Any], *, guarded: bool = False) -> dict[str, Any]:
        assert guarded
        if obj["metadata"]["resourceVersion"] != self.stored["metadata"]["resourceVersion"]:
            raise ApiException(status=409, reason="Conflict")
        rv = str(int(self.stored["metadata"]["resourceVersion"]) + 1)
        self.stored = {**self.stored, "metadata": {**self.stored["metadata"], "resourceVersion": rv}, "status": dict(status)}
        self.writes.append(dict(status))
        return self.stored

    def get(self, kind: str, namespace: str, name: str) -> dict[str, Any]:
        return self.stored


def _obj(rv: str, status: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"kind": "PubSubTopic", "metadata": {"name": "t", "namespace": "ns", "resourceVersion": rv}, "status": status or {}}


def _operator(cluster: FakeCluster) -> Operator:
    op = Operator(Settings(crd_pattern="PubSubTopic", namespaces=("ns",), health_port=None, endpoint="http://127.0.0.1:9"))
    op.cluster = cluster  # type: ignore[assignment]
    return op


def test_a_version_changed_since_the_read_is_read_again_and_the_record_written_on_it() -> None:
    cluster = FakeCluster(_obj("7"))  # kopf added its finalizer: version 7, the reconcile read 5
    got = _operator(cluster)._record(_obj("5"), {"externalRef": "projects/p/topics/t"})
    assert got["status"]["externalRef"] == "projects/p/topics/t" and len(cluster.writes) == 1


def test_another_writers_record_is_never_overwritten() -> None:
    cluster = FakeCluster(_obj("7", {"externalRef": "projects/p/topics/other"}))
    with pytest.raises(RuntimeError, match="another writer recorded projects/p/topics/other"):
        _operator(cluster)._record(_obj("5"), {"externalRef": "projects/p/topics/t"})
    assert cluster.writes == []
