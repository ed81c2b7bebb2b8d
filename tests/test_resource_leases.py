"""Leases on GCP resources across installations (issue 27, point 2): two kccctl
state directories stand for two installations that cannot see each other's
objects, only the resource. With the policy ``resource`` (Config Connector's
management-conflict-prevention-policy annotation) the first holds the
``cnrm-lease-holder-id``/``cnrm-lease-expiration`` labels; the other is
refused by name and writes nothing; the labels are never a diff; the lease is
renewed within its last 20 minutes; force-acquire takes it over explicitly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kccgen.mockgcp import MockServer
from kccgen.runtime import leases
from kccgen.runtime.gcp import Gcp
from kccgen.runtime.local import StateDir, apply, delete
from kccgen.runtime.reconciler import ANN_FORCE_ACQUIRE

TOPIC = "projects/p/topics/shared"


def _topic(policy: str | None = "resource", labels: dict[str, str] | None = None, **anns: str) -> dict[str, Any]:
    annotations = dict(anns)
    if policy is not None:
        annotations[leases.ANN_POLICY] = policy
    spec: dict[str, Any] = {"resourceID": "shared", "messageRetentionDuration": "600s"}
    if labels is not None:
        spec["labels"] = labels
    return {
        "apiVersion": "pubsub.cnrm.cloud.google.com/v1beta1",
        "kind": "PubSubTopic",
        "metadata": {"name": "topic", "namespace": "default", "annotations": annotations},
        "spec": spec,
    }


def _writes(s: MockServer) -> list[str]:
    return [f"{e.method} {e.url}" for e in s.log if e.method in {"POST", "PUT", "PATCH", "DELETE"} and "/topics/shared" in e.url]


def _run(fn: Any, state: StateDir, s: MockServer, obj: dict[str, Any], **kw: Any) -> Any:
    with state.lock():
        ((row, result),) = fn([obj], state, Gcp(s.base_url, host_paths=True, backoff=0.0), "p", **kw)
    return row, result


def _labels(s: MockServer) -> dict[str, str]:
    return dict(s.client("pubsub").projects().topics().get(topic=TOPIC).execute().get("labels") or {})


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The lease clock, moved by the test (now[0] seconds ahead)."""
    import time

    ahead = [0.0]
    monkeypatch.setattr(leases, "now", lambda: time.time() + ahead[0])
    return ahead


def test_the_lease_is_written_with_the_create_and_never_diffed(tmp_path: Path, clock: list[float]) -> None:
    a = StateDir(tmp_path / "a")
    with MockServer() as s:
        row, _ = _run(apply, a, s, _topic(labels={"env": "prod"}))
        assert row.ready, row.message
        got = _labels(s)
        assert got[leases.HOLDER_LABEL] == a.installation() and got["env"] == "prod"
        assert 39 * 60 < int(got[leases.EXPIRATION_LABEL]) - leases.now() <= 40 * 60
        (create,) = _writes(s)
        assert create.startswith("PUT")
        # Up to date: the lease labels are not the user's, so no write.
        row, result = _run(apply, a, s, _topic(labels={"env": "prod"}))
        assert (row.ready, row.reason) == (True, "UpToDate") and _writes(s) == [create], row.message
        assert "labels" not in ((result.obj.get("status") or {}).get("observedState") or {})
        row, result = _run(apply, a, s, _topic(labels={"env": "prod"}), dry_run="server")
        assert result.changes == [] or not result.changes, result.changes
        # A change of the user's labels keeps the lease as it stands.
        row, _ = _run(apply, a, s, _topic(labels={"env": "dev"}))
        assert row.ready, row.message
        assert _labels(s) == {**got, "env": "dev"}


def test_another_installation_is_refused_by_name_writes_nothing_and_its_delete_leaves_it(tmp_path: Path, clock: list[float]) -> None:
    a, b = StateDir(tmp_path / "a"), StateDir(tmp_path / "b")
    with MockServer() as s:
        assert _run(apply, a, s, _topic())[0].ready
        before = _writes(s)
        row, _ = _run(apply, b, s, _topic())
        assert (row.ready, row.reason) == (False, "ManagementConflict"), row.message
        assert a.installation() in row.message and "force-acquire" in row.message, row.message
        assert _writes(s) == before
        row, _ = _run(delete, b, s, _topic())
        assert (row.ready, row.reason) == (True, "Abandoned") and a.installation() in row.message, row.message
        assert _writes(s) == before
        assert _labels(s)[leases.HOLDER_LABEL] == a.installation()


def test_the_lease_is_renewed_in_its_last_20_minutes_and_an_expired_one_is_taken(tmp_path: Path, clock: list[float]) -> None:
    a, b = StateDir(tmp_path / "a"), StateDir(tmp_path / "b")
    with MockServer() as s:
        assert _run(apply, a, s, _topic())[0].ready
        first = int(_labels(s)[leases.EXPIRATION_LABEL])
        clock[0] = 15 * 60  # 25 minutes left: kept
        row, _ = _run(apply, a, s, _topic())
        assert row.ready and len(_writes(s)) == 1 and int(_labels(s)[leases.EXPIRATION_LABEL]) == first
        clock[0] = 25 * 60  # 15 minutes left: renewed, alone, and still Ready
        row, _ = _run(apply, a, s, _topic())
        assert (row.ready, row.reason) == (True, "UpToDate") and "lease held until" in row.message, row.message
        (renew,) = _writes(s)[1:]
        assert renew.startswith("PATCH"), renew
        assert int(_labels(s)[leases.EXPIRATION_LABEL]) > first
        clock[0] = 70 * 60  # a lease nobody renewed for 40 minutes is free
        row, _ = _run(apply, b, s, _topic())
        assert row.ready, row.message
        assert _labels(s)[leases.HOLDER_LABEL] == b.installation()
        row, _ = _run(apply, a, s, _topic())
        assert (row.ready, row.reason) == (False, "ManagementConflict") and b.installation() in row.message


def test_force_acquire_takes_the_lease_over_explicitly(tmp_path: Path, clock: list[float]) -> None:
    a, b = StateDir(tmp_path / "a"), StateDir(tmp_path / "b")
    with MockServer() as s:
        assert _run(apply, a, s, _topic())[0].ready
        before = _writes(s)
        row, result = _run(apply, b, s, _topic(**{ANN_FORCE_ACQUIRE: "true"}))
        assert (row.ready, row.reason) == (True, "UpToDate") and "remove force-acquire to take it over" in row.message, row.message
        assert _writes(s) == before  # verify only
        assert result.obj["metadata"]["annotations"][leases.ANN_TAKEOVER] == a.installation()
        row, result = _run(apply, b, s, _topic())
        assert row.ready, row.message
        assert _labels(s)[leases.HOLDER_LABEL] == b.installation()
        assert any(e.reason == "LeaseTakenOver" for e in result.events)
        assert leases.ANN_TAKEOVER not in result.obj["metadata"]["annotations"]
        row, _ = _run(apply, a, s, _topic())
        assert (row.ready, row.reason) == (False, "ManagementConflict") and b.installation() in row.message


def test_abandon_releases_the_lease_so_another_installation_may_take_it_at_once(tmp_path: Path, clock: list[float]) -> None:
    a, b = StateDir(tmp_path / "a"), StateDir(tmp_path / "b")
    with MockServer() as s:
        assert _run(apply, a, s, _topic(labels={"env": "prod"}))[0].ready
        row, _ = _run(delete, a, s, _topic(labels={"env": "prod"}, **{"cnrm.cloud.google.com/deletion-policy": "abandon"}))
        assert (row.ready, row.reason) == (True, "Abandoned") and "lease was released" in row.message, row.message
        assert _labels(s) == {"env": "prod"}
        row, _ = _run(apply, b, s, _topic(labels={"env": "prod"}))
        assert row.ready, row.message


def test_policies_none_invalid_and_unsupported(tmp_path: Path) -> None:
    with MockServer() as s:
        row, _ = _run(apply, StateDir(tmp_path / "none"), s, _topic(policy=None))
        assert row.ready and leases.HOLDER_LABEL not in _labels(s)  # Config Connector's default: none
        row, _ = _run(apply, StateDir(tmp_path / "bad"), s, _topic(policy="yes"))
        assert (row.ready, row.reason) == (False, "UpdateFailed") and leases.ANN_POLICY in row.message and "'yes'" in row.message
        schema = {
            "apiVersion": "pubsub.cnrm.cloud.google.com/v1beta1",
            "kind": "PubSubSchema",
            "metadata": {"name": "schema", "namespace": "default", "annotations": {leases.ANN_POLICY: "resource"}},
            "spec": {"type": "AVRO", "definition": "{}"},
        }
        with StateDir(tmp_path / "c").lock():
            ((row, _),) = apply([schema], StateDir(tmp_path / "c"), Gcp(s.base_url, host_paths=True, backoff=0.0), "p")
        assert (row.ready, row.reason) == (False, "UpdateFailed") and "does not support" in row.message, row.message


def test_a_namespace_default_applies_only_where_the_kind_can_hold_a_lease() -> None:
    from kccgen.runtime.adapter import adapter_for

    ns = {"metadata": {"annotations": {leases.ANN_POLICY: "resource"}}}
    obj: dict[str, Any] = {"metadata": {}}
    assert leases.policy(obj, ns, adapter_for("PubSubTopic")) == "resource"
    assert leases.policy(obj, ns, adapter_for("PubSubSchema")) == "none"
    assert leases.policy({"metadata": {"annotations": {leases.ANN_POLICY: "none"}}}, ns, adapter_for("PubSubTopic")) == "none"


def test_workers_of_one_apply_share_one_installation_id_and_a_dry_run_makes_none(tmp_path: Path) -> None:
    """Think in twos: threads asking for the ID at once get one ID, written once;
    a dry run (which writes nothing) never makes it."""
    from concurrent.futures import ThreadPoolExecutor

    dry = StateDir(tmp_path / "dry")
    assert dry.installation(create=False) == "kccctl-not-made-yet" and not (tmp_path / "dry").exists()
    state = StateDir(tmp_path / "a")
    (tmp_path / "a").mkdir()
    with ThreadPoolExecutor(8) as pool:
        ids = set(pool.map(lambda _: state.installation(), range(32)))
    assert len(ids) == 1 and ids == {state.installation()}
