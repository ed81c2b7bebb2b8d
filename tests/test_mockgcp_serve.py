"""`kccctl mockgcp serve`: prints its endpoints, serves, stops cleanly on SIGTERM."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from tests.support.cli import REPO


def test_serve_prints_endpoint_logs_and_stops_on_sigterm(tmp_path: Path) -> None:
    log, state = tmp_path / "mock.log", tmp_path / "state.json"
    faults = tmp_path / "faults.yaml"
    faults.write_text('- {method: "pubsub.projects.topics.get", status: 503, times: 1}\n')
    proc = subprocess.Popen(
        [sys.executable, "-m", "kccgen.runtime.cli", "mockgcp", "serve", "--port", "0", "--log", str(log), "--state", str(state), "--faults", str(faults)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("mockgcp listening on http://127.0.0.1:"), first
        base = first.split()[-1]
        endpoints = [proc.stdout.readline() for _ in range(9)]
        assert any("compute.v1" in e and e.strip().endswith("/compute/v1/") for e in endpoints), endpoints
        req = urllib.request.Request(base + "v1/projects/p/topics/demo", data=b'{"labels": {"env": "dev"}}', method="PUT")
        with urllib.request.urlopen(req, timeout=10) as r:
            assert json.load(r)["name"] == "projects/p/topics/demo"
        try:
            urllib.request.urlopen(base + "v1/projects/p/topics/demo", timeout=10)
            raise AssertionError("the injected 503 did not fire")
        except urllib.error.HTTPError as e:
            assert e.code == 503 and json.load(e)["error"]["status"] == "UNAVAILABLE"
        with urllib.request.urlopen(base + "v1/projects/p/topics/demo", timeout=10) as r:
            assert r.status == 200
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "mockgcp stopped" in out
    assert log.read_text().count("https://pubsub.googleapis.com/v1/projects/p/topics/demo") == 3
    dumped = json.loads(state.read_text())
    assert "pubsub.v1|projects/p/topics/demo" in dumped["resources"]


def test_serve_reports_a_bad_fault_file(tmp_path: Path) -> None:
    bad = tmp_path / "faults.yaml"
    bad.write_text("- {method: '*.get', statuss: 503}\n")
    start = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "kccgen.runtime.cli", "mockgcp", "serve", "--port", "0", "--faults", str(bad)],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=False,
    )
    assert r.returncode == 2 and "statuss" in r.stderr and str(bad) in r.stderr
    assert time.monotonic() - start < 60
