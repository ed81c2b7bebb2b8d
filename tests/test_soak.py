"""Soak (issue 12 acceptance): 500 objects of Kinds whose IDs the service picks,
applied through mockgcp while 10 % of create answers are lost and kccctl is
killed (-9) mid-run, then applied again until every object is Ready. No
resource may be created twice, and the state must equal mockgcp's resources.
Two kccctl applies at once on one state directory lose no update."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from kccgen.contract import CreateServiceAssigned
from kccgen.mockgcp import MockServer
from kccgen.runtime.adapter import adapter_for
from kccgen.runtime.example import Examples
from kccgen.runtime.gcp import Gcp
from kccgen.runtime.local import StateDir, apply

REPO = Path(__file__).resolve().parents[1]
# Three Kinds found again by their one-time label, two by their content.
KINDS = ("MonitoringAlertPolicy", "MonitoringNotificationChannel", "MonitoringUptimeCheckConfig", "MonitoringGroup", "MonitoringSnooze")
PER_KIND = 100


def _objects(tag: str = "") -> list[dict[str, Any]]:
    out = []
    for kind in KINDS:
        base = Examples("p").manifests(kind)[-1]
        for i in range(PER_KIND):
            o = yaml.safe_load(yaml.safe_dump(base))
            o["metadata"]["name"] = f"{kind.lower()}-{i}"
            o["spec"]["displayName"] = f"{kind} {i}{tag}"  # content tells them apart
            out.append(o)
    return out


def _live(s: MockServer) -> dict[str, list[dict[str, Any]]]:
    """mockgcp's resources by Kind, through each Kind's own list call."""
    gcp = Gcp(s.base_url, host_paths=True)
    out = {}
    for kind in KINDS:
        a = adapter_for(kind)
        assert isinstance(a.create, CreateServiceAssigned) and a.create.find is not None
        out[kind] = gcp.list_all(a, a.create.find, {"project": "p"}, a.create.items_field)
    return out


def _creates(s: MockServer) -> int:
    return sum(1 for e in s.log if e.method == "POST")


def _kccctl_apply(manifest: Path, state: Path, url: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "kccgen.runtime.cli", "apply", "-f", str(manifest), "--state", str(state), "--endpoint", url, "--host-paths", "--project", "p"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _state_refs(state: StateDir) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {k: set() for k in KINDS}
    for o in state.load():
        if o.get("kind") in KINDS:
            ext = (o.get("status") or {}).get("externalRef")
            if ext:
                out[o["kind"]].add(ext)
    return out


def test_lost_answers_and_a_kill_mid_run_never_duplicate(tmp_path: Path) -> None:
    objs = _objects()
    manifest = tmp_path / "objects.yaml"
    manifest.write_text(yaml.safe_dump_all(objs), encoding="utf-8")
    state = StateDir(tmp_path / "state")
    with MockServer() as s:
        s.engine.faults.add(method="monitoring.projects.*.create", drop_answer=True, probability=0.1)
        p = _kccctl_apply(manifest, state.root, s.base_url)
        deadline = time.monotonic() + 300
        while _creates(s) < len(objs) // 3 and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert p.poll() is None, f"kccctl ended before it could be killed: {p.communicate()}"
        os.kill(p.pid, signal.SIGKILL)
        p.wait(30)
        killed_at = _creates(s)
        runs = []
        for _ in range(5):
            with state.lock():
                rows = [r for r, _ in apply(_objects(), state, Gcp(s.base_url, host_paths=True, backoff=0.0), "p")]
            runs.append(sum(1 for r in rows if not r.ready))
            if not runs[-1]:
                break
        lost = sum(f.fired for f in s.engine.faults.rules)
        assert runs[-1] == 0, (runs, sorted({(r.reason, r.message[:200]) for r in rows if not r.ready})[:5])
        live = _live(s)
        refs = _state_refs(state)
        for kind in KINDS:
            names = [x["name"] for x in live[kind]]
            assert len(names) == PER_KIND, f"{kind}: {len(names)} resources for {PER_KIND} objects (duplicates)"
            assert set(names) == refs[kind], f"{kind}: the state and mockgcp differ"
        print(f"\nsoak: {len(objs)} objects, killed after {killed_at} creates, {lost} answers lost, not ready per run {runs}, creates sent {_creates(s)}")
        assert lost >= len(objs) // 20  # the faults did fire


def test_two_applies_at_once_lose_no_update(tmp_path: Path) -> None:
    objs = _objects()
    state = StateDir(tmp_path / "state")
    with MockServer() as s:
        with state.lock():
            assert all(r.ready for r, _ in apply(objs, state, Gcp(s.base_url, host_paths=True), "p"))
        # Each of two kccctl processes changes every other object, at once.
        changed = _objects(" changed")
        halves = [changed[0::2], changed[1::2]]
        files = []
        for n, half in enumerate(halves):
            f = tmp_path / f"half{n}.yaml"
            f.write_text(yaml.safe_dump_all(half), encoding="utf-8")
            files.append(f)
        procs = [_kccctl_apply(f, state.root, s.base_url) for f in files]
        for p in procs:
            _, err = p.communicate(timeout=600)
            assert p.returncode == 0, err[-2000:]
        live = {x["name"]: x for xs in _live(s).values() for x in xs}
        want = {o["spec"]["displayName"] for o in changed}
        got = {x.get("displayName") for x in live.values()}
        assert len(live) == len(objs)
        assert got == want, f"{len(want - got)} updates lost"
        stored = {o["metadata"]["name"]: o for o in state.load() if o.get("kind") in KINDS}
        assert all(o["spec"]["displayName"].endswith(" changed") for o in stored.values())
