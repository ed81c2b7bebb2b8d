"""Controlling a running mockgcp: ``--log`` appends, faults change while it
runs (``/_mockgcp/faults``), and a bad flag is one line and exit 2."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from kccgen.mockgcp.httplog import format_http_log, parse_http_log
from kccgen.mockgcp.server import MockServer

TOPIC = "v1/projects/p/topics/t"


def request(base: str, method: str, path: str, body: Any = None, raw: bytes | None = None) -> tuple[int, Any]:
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(base + path, data=data, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


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
