"""A plain endpoint (``--endpoint URL`` without ``--host-paths``) at mockgcp
works for every API: a path without a host goes to the vendored APIs first,
then to the one pinned document that serves it (mockgcp/owners.py); where
several do, the 404 names the host prefixes to use."""

from __future__ import annotations

import json

import pytest

from kccgen.mockgcp.engine import MockGCP
from kccgen.mockgcp.server import MockServer
from kccgen.runtime.lifecycle import Lifecycle, RecordingGcp

# Not curated: an auto Kind of a locked (not vendored) document.
KIND, API = "WorkflowsWorkflow", "workflows.v1"


@pytest.fixture(scope="module")
def eng() -> MockGCP:
    return MockGCP()


def test_the_kind_is_not_curated() -> None:
    from tests.conftest import REPO

    kinds = json.loads((REPO / "generated" / "kinds.json").read_text(encoding="utf-8"))
    assert KIND in kinds
    assert API not in MockGCP().catalog.vendored
    assert "auto: true" in (REPO / "specs" / "kinds" / "workflows.yaml").read_text(encoding="utf-8")


def test_a_path_one_api_serves_is_routed_to_it(eng: MockGCP) -> None:
    route, resp = eng.handle("POST", "/v1/projects/p/locations/us-central1/workflows", {"workflowId": ["w"]}, {})
    assert resp.status == 200 and route is not None and route.api == API, resp.body
    route, resp = eng.handle("GET", "/v1/projects/p/locations/us-central1/workflows/w", {}, None)
    assert resp.status == 200 and route is not None and route.api == API


def test_a_path_several_apis_serve_names_their_hosts(eng: MockGCP) -> None:
    route, resp = eng.handle("POST", "/v1/projects/p/locations/us-central1/jobs", {"jobId": ["j"]}, {})
    assert route is None and resp.status == 404
    msg = resp.body["error"]["message"]
    assert "several APIs serve POST /v1/projects/p/locations/us-central1/jobs" in msg
    assert "cloudscheduler.v1" in msg and "transcoder.v1" in msg
    assert "/cloudscheduler.googleapis.com/v1/projects/p/locations/us-central1/jobs" in msg
    assert "/transcoder.googleapis.com/v1/projects/p/locations/us-central1/jobs" in msg


def test_vendored_apis_keep_their_plain_paths(eng: MockGCP) -> None:
    route, resp = eng.handle("PUT", "/v1/projects/p/topics/plain", {}, {})
    assert resp.status == 200 and route is not None and route.api == "pubsub.v1"
    route, _ = eng.handle("GET", "/nowhere/at/all", {}, None)
    assert route is None


def test_a_non_curated_kind_without_host_paths() -> None:
    """The generated lifecycle of a non-curated Kind with a plain endpoint:
    the requests carry no host (Gcp host_paths=False), and every step passes."""
    with MockServer() as s:
        gcp = RecordingGcp(s.base_url, lro_interval=0.0, retries=0, sleep=lambda x: None, host_paths=False)
        out = Lifecycle(gcp, "plain-project").run(KIND)
        assert out.passed, (out.step, out.message)
        assert gcp.client(API)._baseUrl == s.base_url  # no host in the path
        assert any(e.url.startswith("https://workflows.googleapis.com/v1/projects/plain-project") for e in s.log)
