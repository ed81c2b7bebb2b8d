"""Controlling a running mockgcp: ``--log`` appends, faults change while it
runs (``/_mockgcp/faults``), and a bad flag is one line and exit 2."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kccgen.mockgcp.cli import main
from kccgen.mockgcp.httplog import format_http_log, parse_http_log
from kccgen.mockgcp.server import MockServer
from tests.support.cli import REPO

TOPIC = "v1/projects/p/topics/t"


def request(base: str, method: str, path: str, body: Any = None, raw: bytes | None = None) -> tuple[int, Any]:
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(base + path, data=data, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


@pytest.fixture()
def server() -> Iterator[MockServer]:
    with MockServer() as s:
        yield s


# --- --log appends ------------------------------------------------------------------------


def test_log_file_keeps_what_it_holds_and_appends(tmp_path: Path) -> None:
    log = tmp_path / "mock.log"
    with MockServer() as first:
        first.write_log_to(log)
        request(first.base_url, "PUT", TOPIC, {})
    before = log.read_text(encoding="utf-8")
    assert len(parse_http_log(before)) == 1
    with MockServer() as second:
        second.write_log_to(log)
        request(second.base_url, "GET", TOPIC)
        request(second.base_url, "DELETE", TOPIC)
        mine = second.log_text()
    text = log.read_text(encoding="utf-8")
    assert text.startswith(before), "the earlier run's exchanges are kept"
    assert text == before + "\n\n---\n\n" + mine, "one log, in the format of one run"
    entries = parse_http_log(text)
    assert [e.method for e in entries] == ["PUT", "GET", "DELETE"]
    assert format_http_log(entries) == text


# --- faults while it runs -------------------------------------------------------------------


def test_an_outage_starts_and_ends_without_a_restart(server: MockServer) -> None:
    base = server.base_url
    assert request(base, "PUT", TOPIC, {})[0] == 200
    status, out = request(base, "POST", "_mockgcp/faults", [{"api": "pubsub.*", "status": 503}])
    assert status == 200 and out["faults"][0]["status"] == 503
    for _ in range(3):
        status, out = request(base, "GET", TOPIC)
        assert status == 503 and out["error"]["status"] == "UNAVAILABLE"
    assert request(base, "GET", "_mockgcp/faults")[1]["faults"][0]["fired"] == 3
    assert request(base, "DELETE", "_mockgcp/faults") == (200, {"faults": []})
    assert request(base, "GET", TOPIC)[0] == 200
    # 429 for one call, then replaced by a delay: PUT replaces every rule
    request(base, "POST", "_mockgcp/faults", [{"method": "pubsub.projects.topics.get", "status": 429, "times": 1}])
    assert request(base, "GET", TOPIC)[0] == 429
    assert request(base, "GET", TOPIC)[0] == 200
    status, out = request(base, "PUT", "_mockgcp/faults", [{"method": "*.get", "latency_ms": 1}])
    assert status == 200 and len(out["faults"]) == 1 and out["faults"][0]["latency_ms"] == 1
    paths = [e.url for e in server.log]
    assert not any("_mockgcp" in u for u in paths), "control requests are not GCP traffic: not logged"


def test_rules_as_yaml_and_added_after_those_in_force(server: MockServer) -> None:
    base = server.base_url
    request(base, "POST", "_mockgcp/faults", [{"method": "*.delete", "status": 500}])
    status, out = request(base, "POST", "_mockgcp/faults", raw=b"- {method: '*.get', status: 503, probability: 0.5}\n")
    assert status == 200 and [f["method"] for f in out["faults"]] == ["*.delete", "*.get"]


@pytest.mark.parametrize(
    "body, named",
    [
        ([{"method": "*.get", "statuss": 503}], "statuss"),
        ([{"method": "*.get", "status": "503"}], "#/0/status"),
        ([{"status": 503}, {"path": "([", "status": 503}], "#/1/path"),
        ([{"method": "*.get"}], "does nothing"),
        ({"status": 503}, "a list of fault rules"),
    ],
)
def test_a_bad_rule_is_400_and_changes_nothing(server: MockServer, body: Any, named: str) -> None:
    request(server.base_url, "POST", "_mockgcp/faults", [{"method": "*.list", "status": 500}])
    status, out = request(server.base_url, "POST", "_mockgcp/faults", body)
    assert status == 400 and named in out["error"]["message"], out
    assert len(request(server.base_url, "GET", "_mockgcp/faults")[1]["faults"]) == 1


def test_other_methods_are_refused(server: MockServer) -> None:
    assert request(server.base_url, "PATCH", "_mockgcp/faults", [])[0] == 405


# --- bad flags --------------------------------------------------------------------------------


@pytest.fixture()
def busy_port() -> Iterator[int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield int(s.getsockname()[1])


def _bad(tmp_path: Path, case: str, busy: int) -> list[str]:
    faults = tmp_path / "faults.yaml"
    return {
        "port-range": ["--port", "99999"],
        "port-negative": ["--port", "-1"],
        "port-text": ["--port", "eighty"],
        "port-in-use": ["--port", str(busy)],
        "faults-key": ["--port", "0", "--faults", str(faults)],
        "faults-yaml": ["--port", "0", "--faults", str(faults)],
        "faults-type": ["--port", "0", "--faults", str(faults)],
        "faults-missing": ["--port", "0", "--faults", str(tmp_path / "none.yaml")],
        "log-no-dir": ["--port", "0", "--log", str(tmp_path / "no" / "such" / "dir" / "mock.log")],
        "log-a-dir": ["--port", "0", "--log", str(tmp_path)],
        "lro-polls": ["--lro-polls", "-2"],
    }[case]


_FAULTS = {"faults-key": "- {method: '*.get', statuss: 503}\n", "faults-yaml": "- {status: [\n", "faults-type": "- {status: 503, probability: lots}\n"}


@pytest.mark.parametrize(
    "case, said",
    [
        ("port-range", "argument --port: 99999 is not a port"),
        ("port-negative", "argument --port: -1 is not a port"),
        ("port-text", "argument --port: 'eighty' is not a port number"),
        ("port-in-use", "cannot listen on 127.0.0.1:"),
        ("faults-key", "unknown key(s) ['statuss']"),
        ("faults-yaml", "not valid YAML"),
        ("faults-type", "#/0/probability"),
        ("faults-missing", "cannot read"),
        ("log-no-dir", "argument --log: cannot append to"),
        ("log-a-dir", "argument --log: cannot append to"),
        ("lro-polls", "argument --lro-polls: -2 is negative"),
    ],
)
def test_a_bad_flag_is_one_line_and_exit_2(tmp_path: Path, busy_port: int, capsys: pytest.CaptureFixture[str], case: str, said: str) -> None:
    if case in _FAULTS:
        (tmp_path / "faults.yaml").write_text(_FAULTS[case])
    with pytest.raises(SystemExit) as e:
        main(["serve", *_bad(tmp_path, case, busy_port)])
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert err.count("\n") == 1 and err.startswith("mockgcp serve: error: ") and said in err, err


@pytest.mark.parametrize("cmd", [["-m", "kccgen.mockgcp"], ["-m", "kccgen.runtime.cli", "mockgcp"]], ids=["mockgcp", "kccctl-mockgcp"])
def test_port_99999_is_an_argument_error_not_a_traceback(cmd: list[str]) -> None:
    r = subprocess.run([sys.executable, *cmd, "serve", "--port", "99999"], cwd=REPO, capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == "mockgcp serve: error: argument --port: 99999 is not a port: 0 to 65535 (0: any free port)\n"


# --- the command, end to end ----------------------------------------------------------------


def test_serve_appends_to_its_log_and_takes_faults_while_running(tmp_path: Path) -> None:
    log = tmp_path / "mock.log"
    with MockServer() as earlier:  # a previous run's log
        earlier.write_log_to(log)
        request(earlier.base_url, "PUT", TOPIC, {})
    before = log.read_text(encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "kccgen.mockgcp", "serve", "--port", "0", "--log", str(log)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("mockgcp listening on http://127.0.0.1:"), first
        base = first.split()[-1]
        assert request(base, "PUT", TOPIC, {})[0] == 200
        assert request(base, "POST", "_mockgcp/faults", [{"api": "pubsub.v1", "status": 503}])[0] == 200
        assert request(base, "GET", TOPIC)[0] == 503
        assert request(base, "DELETE", "_mockgcp/faults")[0] == 200
        assert request(base, "GET", TOPIC)[0] == 200
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    text = log.read_text(encoding="utf-8")
    assert text.startswith(before)
    assert [e.status.split()[0] for e in parse_http_log(text)] == ["200", "200", "503", "200"]
