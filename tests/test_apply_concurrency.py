"""Throughput (issue 12, item 7): the objects of one dependency level are
reconciled by several workers, with a per-API request rate; the result is the
same as one by one. Operations are polled with backoff. ``--project`` is
remembered in the state directory."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from kccgen.contract import Lro
from kccgen.mockgcp import MockServer
from kccgen.runtime.adapter import adapter_for
from kccgen.runtime.cli import main
from kccgen.runtime.gcp import Gcp
from kccgen.runtime.local import StateDir, apply, dependency_levels


def _topic(name: str) -> dict[str, Any]:
    return {"apiVersion": "pubsub.cnrm.cloud.google.com/v1beta1", "kind": "PubSubTopic", "metadata": {"name": name, "namespace": "default"}, "spec": {}}


def _sub(name: str, topic: str) -> dict[str, Any]:
    return {
        "apiVersion": "pubsub.cnrm.cloud.google.com/v1beta1",
        "kind": "PubSubSubscription",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"topicRef": {"name": topic}},
    }


def _secret(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "secretmanager.cnrm.cloud.google.com/v1beta1",
        "kind": "SecretManagerSecret",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"replication": {"automatic": {}}},
    }


def test_levels_put_every_reference_before_its_referrer() -> None:
    objs = [_sub("s1", "t1"), _topic("t1"), _secret("x"), _sub("s2", "t1")]
    levels = [[o["metadata"]["name"] for o in lv] for lv in dependency_levels(objs)]
    assert levels == [["t1", "x"], ["s1", "s2"]]


class _InFlight(Gcp):
    """Counts the requests in flight at once (a structural check, not a timing)."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._guard = threading.Lock()
        self.now = self.most = 0

    def execute(self, what: str, request: Any, idempotent: bool = True, project: str = "") -> Any:
        with self._guard:
            self.now += 1
            self.most = max(self.most, self.now)
        try:
            return super().execute(what, request, idempotent, project)
        finally:
            with self._guard:
                self.now -= 1


def test_workers_give_the_same_result_as_one_by_one_and_wait_for_references(tmp_path: Path) -> None:
    objs = [o for i in range(12) for o in (_topic(f"t{i}"), _sub(f"s{i}", f"t{i}"), _secret(f"x{i}"))]
    rows, most = {}, {}
    for workers in (1, 8):
        with MockServer() as s:
            s.engine.faults.add(latency_ms=30)  # requests overlap only when sent at once
            state = StateDir(tmp_path / f"w{workers}")
            gcp = _InFlight(s.base_url, host_paths=True)
            with state.lock():
                out = apply(objs, state, gcp, "p", workers=workers)
            assert all(r.ready for r, _ in out), [r for r, _ in out if not r.ready]
            rows[workers], most[workers] = [(r.kind, r.name, r.reason, r.external_ref) for r, _ in out], gcp.most
            # A subscription's create always follows its topic's.
            urls = [e.url.split("?")[0] for e in s.log if e.method == "PUT"]
            for i in range(12):
                assert urls.index(next(u for u in urls if u.endswith(f"/topics/t{i}"))) < urls.index(next(u for u in urls if u.endswith(f"/subscriptions/s{i}")))
    assert rows[1] == rows[8]  # same rows, same (dependency) order
    assert most[1] == 1 and most[8] > 1, most


def test_the_request_rate_to_one_api_is_bounded_across_threads() -> None:
    from concurrent.futures import ThreadPoolExecutor

    with MockServer() as s:
        gcp = Gcp(s.base_url, host_paths=True, qps=20)
        a = adapter_for("PubSubTopic")
        t0 = time.perf_counter()
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda i: _get_absent(gcp, a, i), range(21)))
        took = time.perf_counter() - t0
    assert took >= 0.95, took  # 21 requests at 20 a second: the last at 1 s or later


def test_each_project_has_its_own_request_rate() -> None:
    """The limit is per API and project, as GCP's quotas are: two projects' requests
    take two schedules (the operator serves many projects at once)."""
    with MockServer() as s:
        gcp = Gcp(s.base_url, host_paths=True, qps=20)
        a = adapter_for("PubSubTopic")
        for i in range(4):
            _get_absent(gcp, a, i, project=f"p{i % 2}")
    assert set(gcp._next_slot) == {"pubsub.v1/p0", "pubsub.v1/p1"}


def _get_absent(gcp: Gcp, a: Any, i: int, project: str = "p") -> None:
    from kccgen.runtime.gcp import NotFound

    with pytest.raises(NotFound):
        gcp.call(a, a.get, {"project": project, "topic": f"t{i}"})


def test_operations_are_polled_with_backoff() -> None:
    slept: list[float] = []
    gcp = Gcp("http://127.0.0.1:9/", lro_interval=0.2, lro_max_interval=1.0, sleep=slept.append)
    polls = iter([{"name": "operations/o", "done": False}] * 6 + [{"name": "operations/o", "done": True, "response": {"name": "x"}}])
    gcp._poll = lambda *_: next(polls)  # type: ignore[method-assign]
    a = adapter_for("SpannerInstance")
    call = a.create.call  # type: ignore[union-attr]
    assert call.lro is Lro.GOOGLE_LONGRUNNING
    assert gcp.wait(a, call, {"name": "operations/o", "done": False}, {}) == {"name": "x"}
    assert slept == pytest.approx([0.2, 0.3, 0.45, 0.675, 1.0, 1.0, 1.0])


def test_the_project_is_remembered_in_the_state_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    m = tmp_path / "t.yaml"
    m.write_text(yaml.safe_dump(_topic("t")), encoding="utf-8")
    with MockServer() as s:
        args = ["-f", str(m), "--state", str(tmp_path / "st"), "--endpoint", s.base_url, "--host-paths"]
        assert main(["apply", *args, "--project", "remembered"]) == 0
        assert main(["delete", *args]) == 0  # no --project: the remembered one
        out = capsys.readouterr().out
        assert "projects/remembered/topics/t" in out.split("DELETED", 1)[1]
