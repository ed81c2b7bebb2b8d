"""One object per GCP resource (issue 27, point 2): two objects whose
identities name the same resource. The one that did not acquire it first is
refused by name (ManagementConflict), never writes the resource, and deleting
it leaves the resource alone; the owner is unaffected."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kccgen.mockgcp import MockServer
from kccgen.runtime.gcp import Gcp
from kccgen.runtime.local import StateDir, apply, delete
from kccgen.runtime.owners import Claims, owner

RETENTION = {"a": "600s", "b": "7200s", "first": "600s", "second": "7200s"}


def _topic(name: str, rid: str = "shared") -> dict[str, Any]:
    return {
        "apiVersion": "pubsub.cnrm.cloud.google.com/v1beta1",
        "kind": "PubSubTopic",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"resourceID": rid, "messageRetentionDuration": RETENTION[name]},
    }


def _writes(s: MockServer, needle: str) -> list[str]:
    return [f"{e.method} {e.url}" for e in s.log if e.method in {"POST", "PUT", "PATCH", "DELETE"} and needle in e.url]


def _run(fn: Any, state: StateDir, s: MockServer, objs: list[dict[str, Any]]) -> dict[str, Any]:
    with state.lock():
        out = fn(objs, state, Gcp(s.base_url, host_paths=True, backoff=0.0), "p")
    return {r.name.rsplit("/", 1)[-1]: r for r, _ in out}


def test_a_second_object_naming_an_acquired_resource_is_refused_and_its_delete_leaves_it(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "state")
    with MockServer() as s:
        rows = _run(apply, state, s, [_topic("first")])
        assert rows["first"].ready, rows["first"].message
        before = _writes(s, "/topics/shared")
        rows = _run(apply, state, s, [_topic("second")])
        row = rows["second"]
        assert (row.ready, row.reason) == (False, "ManagementConflict"), row.message
        assert "PubSubTopic default/first" in row.message and "projects/p/topics/shared" in row.message, row.message
        assert _writes(s, "/topics/shared") == before  # the second never wrote it
        rows = _run(delete, state, s, [_topic("second")])
        assert _writes(s, "/topics/shared") == before  # nor deleted it
        live = s.client("pubsub").projects().topics().get(topic="projects/p/topics/shared").execute()
        assert live["messageRetentionDuration"] == "600s"
        rows = _run(apply, state, s, [_topic("first")])
        assert rows["first"].ready and rows["first"].reason == "UpToDate", rows["first"].message


def test_two_new_objects_with_one_identity_in_one_apply_make_one_owner(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "state")
    with MockServer() as s:
        rows = _run(apply, state, s, [_topic("a"), _topic("b")])
        reasons = sorted(r.reason for r in rows.values())
        assert reasons == ["ManagementConflict", "UpToDate"], {n: r.message for n, r in rows.items()}
        winner = next(n for n, r in rows.items() if r.ready)
        loser = next(n for n, r in rows.items() if not r.ready)
        assert f"PubSubTopic default/{winner}" in rows[loser].message
        assert len([w for w in _writes(s, "/topics/shared") if w.startswith("PUT")]) == 1
        live = s.client("pubsub").projects().topics().get(topic="projects/p/topics/shared").execute()
        assert live["messageRetentionDuration"] == RETENTION[winner]


def test_the_older_of_two_holders_owns_and_a_dead_claim_is_taken_over() -> None:
    def obj(name: str, created: str, ext: str | None) -> dict[str, Any]:
        o: dict[str, Any] = {"kind": "PubSubTopic", "metadata": {"name": name, "namespace": "n", "creationTimestamp": created}}
        if ext:
            o["status"] = {"externalRef": ext}
        return o

    ext = "projects/p/topics/t"
    old, new = obj("old", "2026-01-01T00:00:00Z", ext), obj("new", "2026-02-01T00:00:00Z", ext)
    same = lambda kind: True  # noqa: E731
    assert owner([old, new], None, new, ext, ext, same) == ("PubSubTopic", "n", "old")
    assert owner([old, new], None, old, ext, ext, same) is None
    claims = Claims()
    a, b = obj("a", "2026-01-01T00:00:00Z", None), obj("b", "2026-01-01T00:00:00Z", None)
    assert owner([a, b], claims, a, ext, ext, same) is None
    assert owner([a, b], claims, b, ext, ext, same) == ("PubSubTopic", "n", "a")
    assert owner([b], claims, b, ext, ext, same) is None  # a is gone: b takes it


def test_a_verify_only_object_may_look_at_an_owned_resource(tmp_path: Path) -> None:
    """force-acquire never writes: it owns nothing and is never refused."""
    state = StateDir(tmp_path / "state")
    with MockServer() as s:
        assert _run(apply, state, s, [_topic("first")])["first"].ready
        looker = _topic("second")
        looker["metadata"]["annotations"] = {"cnrm.cloud.google.com/force-acquire": "true"}
        looker["spec"]["messageRetentionDuration"] = "600s"
        row = _run(apply, state, s, [looker])["second"]
        assert (row.ready, row.reason) == (True, "UpToDate"), row.message
        assert _run(apply, state, s, [_topic("first")])["first"].reason == "UpToDate"
