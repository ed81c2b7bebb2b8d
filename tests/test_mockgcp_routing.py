"""mockgcp serves every pinned document, each API at its own host, from an indexed route table.

The two APIs here are locked (not vendored) documents whose URL templates are
the same (``v1/projects/*/locations/*/operations/*``): before hosts were routed,
only the state of the emulator could tell which API a request meant.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from kccgen.mockgcp.engine import MockGCP
from kccgen.mockgcp.routing import RouteIndex
from kccgen.mockgcp.server import MockServer
from tests.support.scenarios import running_mock

A, B = "workflows.v1", "eventarc.v1"
OP = "v1/projects/p/locations/us-central1/operations/op-1"


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    with running_mock() as s:
        yield s


def test_the_two_apis_are_locked_and_collide_without_a_host() -> None:
    eng = MockGCP()
    assert A not in eng.catalog.vendored and B not in eng.catalog.vendored
    pa = {r.regex.pattern for r in eng.catalog.routes[A] if r.http == "GET"} if eng.apis[A] else set()
    pb = {r.regex.pattern for r in eng.catalog.routes[B] if r.http == "GET"} if eng.apis[B] else set()
    assert any(p.endswith("/operations/[^/]+)$") for p in pa & pb), "the test needs two APIs with the same operations.get template"


@pytest.mark.parametrize("key", [A, B])
def test_each_api_answers_at_its_own_host(key: str) -> None:
    eng = MockGCP()
    host, service_path = eng.catalog.host_of(key)
    found = eng.route("GET", f"{host}/{service_path}{OP}")
    assert found is not None and found[0].api == key
    by_header = eng.route("GET", f"{service_path}{OP}", host=f"{host}:443")
    assert by_header is not None and by_header[0].api == key


def test_a_locked_api_works_through_its_discovery_client(server: MockServer) -> None:
    wf = server.client(A)
    parent = "projects/p/locations/us-central1"
    op = wf.projects().locations().workflows().create(parent=parent, workflowId="wf1", body={"description": "d"}).execute()
    assert op["name"].startswith(f"{parent}/operations/")
    got = wf.projects().locations().workflows().get(name=f"{parent}/workflows/wf1").execute()
    assert got["description"] == "d"
    # The operation lives in workflows, not in eventarc, though the paths are the same.
    assert wf.projects().locations().operations().get(name=op["name"]).execute()["name"] == op["name"]
    ev = server.client(B)
    with pytest.raises(Exception, match="404"):
        ev.projects().locations().operations().get(name=op["name"]).execute()
    last = server.log[-1]
    assert last.url.startswith("https://eventarc.googleapis.com/v1/projects/p/"), "the log names the API's real host"


def test_unknown_host_segment_is_not_a_route() -> None:
    eng = MockGCP()
    assert eng.route("GET", f"nosuch.googleapis.com/{OP}") is None


def test_index_finds_what_a_linear_scan_finds() -> None:
    """Every route of some APIs, asked with a path made from its own template."""
    eng = MockGCP()
    routes = [r for k in (A, B, "compute.v1", "storage.v1", "pubsub.v1") if eng.apis[k] for r in eng.catalog.routes[k]]
    routes.sort(key=lambda r: (-r.specificity, r.api, r.resource, r.verb))
    index = RouteIndex(routes)
    rng = random.Random(7)
    checked = 0
    for r in rng.sample(routes, 300):
        path = _sample_path(r.regex.pattern)
        if path is None:
            continue
        linear = [x for x in routes if x.http == r.http and x.regex.match(path)]
        best = [x for x in linear if x.specificity == linear[0].specificity and x.regex.pattern == linear[0].regex.pattern]
        assert [x for x, _ in index.match(r.http, path)] == best, path
        checked += 1
    assert checked > 200


def _sample_path(pattern: str) -> str | None:
    """A concrete path matching a route regex: each group gets segments of its own pattern."""
    body = pattern.removeprefix("^").removesuffix("$")
    body = re.sub(r"\(\?P<\w+>(.*?)\)(?=[^)]*$|/|:|$)", lambda m: m.group(1), body)
    body = body.replace("[^/]+", "x1").replace(".+", "a/b").replace("\\", "")
    return None if re.search(r"[()\[\]*+?|]", body) else body


def test_request_log_keeps_the_last_entries_and_the_file_keeps_all(tmp_path: Path) -> None:
    log = tmp_path / "mock.log"
    with MockServer(log_entries=3) as s:
        s.write_log_to(log)
        topics = s.client("pubsub").projects().topics()
        for i in range(5):
            topics.create(name=f"projects/p/topics/t{i}", body={}).execute()
        assert len(s.log) == 3
        assert [e.url.split("?")[0].rsplit("/", 1)[-1] for e in s.log] == ["t2", "t3", "t4"]
        assert [e.url for e in s.log[1:]] == [e.url for e in list(s.log)[1:]]
    assert log.read_text().count("\n---\n") == 4  # five exchanges in the file


def test_finished_operations_are_pruned(monkeypatch: pytest.MonkeyPatch) -> None:
    from kccgen.mockgcp import operations

    monkeypatch.setattr(operations, "KEEP_FINISHED", 2)
    eng = MockGCP(lro_polls=0)  # every operation is finished when it starts
    for i in range(6):
        route, resp = eng.handle("POST", f"{eng.catalog.host_of(A)[0]}/v1/projects/p/locations/us-central1/workflows", {"workflowId": [f"w{i}"]}, {})
        assert resp.status == 200 and route is not None and route.api == A, resp.body
    finished = [o for o in eng.operations.values() if o.polls_left <= 0]
    assert len(finished) == 2
    assert len(eng.resources) == 6  # pruning forgets operations, never what they made
