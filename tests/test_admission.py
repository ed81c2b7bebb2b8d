"""kccctl's admission: what the API server would refuse is refused before any GCP
call, from the same CRD: schema, CEL rules, and transition rules against the
stored object (an immutable field changed in the manifest)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kccgen.mockgcp import MockServer
from kccgen.runtime.admission import admission_errors
from kccgen.runtime.gcp import Gcp
from kccgen.runtime.local import StateDir, apply


def _sub(spec: dict[str, Any], **annotations: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "s", "namespace": "default"}
    if annotations:
        meta["annotations"] = {f"cnrm.cloud.google.com/{k.replace('_', '-')}": v for k, v in annotations.items()}
    return {"apiVersion": "pubsub.cnrm.cloud.google.com/v1beta1", "kind": "PubSubSubscription", "metadata": meta, "spec": spec}


TOPIC = {"apiVersion": "pubsub.cnrm.cloud.google.com/v1beta1", "kind": "PubSubTopic", "metadata": {"name": "t", "namespace": "default"}, "spec": {}}


def test_schema_errors_name_the_path() -> None:
    errs = admission_errors(_sub({"ackDeadlineSeconds": "ten", "bogus": 1}))
    assert any(e.startswith("spec.ackDeadlineSeconds:") for e in errs), errs
    assert "spec.bogus: unknown field" in errs
    key = {"apiVersion": "kms.cnrm.cloud.google.com/v1beta1", "kind": "KMSCryptoKey", "metadata": {"name": "k"}, "spec": {}}
    assert admission_errors(key) == ["spec.keyRingRef: required field is missing"]
    assert admission_errors({**_sub({"topicRef": {"name": "t"}}), "apiVersion": "pubsub.cnrm.cloud.google.com/v9"})[0].startswith("apiVersion:")


def test_cel_rules_are_evaluated() -> None:
    errs = admission_errors(_sub({"topicRef": {"name": "t", "external": "projects/p/topics/t"}}))
    assert errs and all(e.startswith("spec.topicRef") for e in errs), errs


def test_an_immutable_change_is_refused_against_the_stored_object_even_when_gcp_agrees(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "state")
    other = {**TOPIC, "metadata": {"name": "t2", "namespace": "default"}}
    with MockServer() as s:
        gcp = Gcp(s.base_url, host_paths=True)
        with state.lock():
            rows = [r for r, _ in apply([TOPIC, other, _sub({"topicRef": {"name": "t"}})], state, gcp, "p")]
        assert all(r.ready for r in rows), rows
        s.clear_log()
        with state.lock():
            [(row, _)] = apply([_sub({"topicRef": {"name": "t2"}})], state, gcp, "p")
        assert (row.ready, row.reason) == (False, "Invalid"), row.message
        assert "PubSubSubscription default/s is invalid: spec" in row.message and "immutable" in row.message.lower()
        assert list(s.log) == []  # refused before any GCP call
        assert "name: t\n" in state.path(_sub({})).read_text(encoding="utf-8")  # the stored object is unchanged
        # force-acquire never writes: immutability does not bind it (it verifies)
        with state.lock():
            [(row, _)] = apply([_sub({"topicRef": {"name": "t2"}}, force_acquire="true")], state, gcp, "p")
        assert row.reason != "Invalid", row.message
