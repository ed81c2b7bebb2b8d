"""mockgcp replayed against Config Connector's recorded traffic: docs/mockgcp-fidelity.md.

* the committed report equals a fresh replay (drift test);
* status codes match in at least ``TARGET`` (90%) of the replayed exchanges;
* every mismatch has an explanation (no ``UNEXPLAINED`` reason);
* mockgcp/defaults.json is what ``python -m tools.mockgcp_defaults`` derives.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest

from tests.conftest import COMPAT, REPO
from tests.support.kinds import kcc_kinds
from tools.mockgcp_defaults import OUT as DEFAULTS_JSON
from tools.mockgcp_defaults import derive, render
from tools.mockgcp_fidelity import (
    DOC_PATH,
    TARGET,
    Bindings,
    LogResult,
    kind_of,
    mismatches,
    our_kinds,
    render_markdown,
    replay_all,
    totals,
)

FIXTURES = COMPAT / "fixtures"

needs_fixtures = pytest.mark.skipif(
    not FIXTURES.is_dir(),
    reason=f"KCC fixtures not found at {FIXTURES}: docs/mockgcp-fidelity.md cannot be checked",
)


@pytest.fixture(scope="module")
def results() -> list[LogResult]:
    return replay_all(COMPAT, REPO)


def _diff(old: str, new: str, name: str) -> str:
    return "".join(
        difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"{name} (committed)", f"{name} (fresh)", n=1)
    )


@needs_fixtures
def test_committed_report_is_current(results: list[LogResult]) -> None:
    fresh = render_markdown(results)
    path = REPO / DOC_PATH
    committed = path.read_text(encoding="utf-8") if path.is_file() else ""
    assert committed == fresh, (
        f"{DOC_PATH} is stale; run `python -m tools.mockgcp_fidelity`.\n" + _diff(committed, fresh, str(DOC_PATH))[:6000]
    )


@needs_fixtures
def test_every_kind_is_replayed(results: list[LogResult]) -> None:
    shared = set(our_kinds(REPO)) & kcc_kinds()  # Kinds with Config Connector recordings
    assert shared and {r.kind for r in results} == shared


@needs_fixtures
def test_status_codes_match_target(results: list[LogResult]) -> None:
    t = totals(results)
    assert t.exchanges > 0
    assert t.status_rate >= TARGET, (
        f"status codes match in {t.status_ok}/{t.exchanges} ({t.status_rate:.1%}) replayed exchanges, "
        f"below the {TARGET:.0%} target; see {DOC_PATH}"
    )


@needs_fixtures
def test_every_mismatch_is_explained(results: list[LogResult]) -> None:
    bad = [f"{x.test} #{x.index} {x.method} {x.path}: {x.explanation or '(no reason)'}" for x in mismatches(results) if x.unexplained]
    assert not bad, "mismatches without an explanation (add a rule to tools/mockgcp_fidelity.py):\n" + "\n".join(bad)


@needs_fixtures
def test_defaults_json_is_current() -> None:
    fresh = render(derive(FIXTURES))
    committed = DEFAULTS_JSON.read_text() if DEFAULTS_JSON.is_file() else ""
    assert committed == fresh, (
        "mockgcp/defaults.json is stale; run `python -m tools.mockgcp_defaults`.\n"
        + _diff(committed, fresh, "mockgcp/defaults.json")
    )


def test_defaults_json_holds_no_recording_placeholders() -> None:
    text = DEFAULTS_JSON.read_text()
    json.loads(text)
    assert "${" not in text
    assert "2024-04-01T12:34:56" not in text


# --- the replay's own machinery (no fixtures needed) ----------------------------------------


def test_kind_of_fixture_directories() -> None:
    kinds = ["PubSubSchema", "PubSubTopic", "StorageBucket"]
    assert kind_of(Path("basic/pubsub/v1beta1/pubsubschema"), kinds) == "PubSubSchema"
    assert kind_of(Path("reconcileintervalannotations/storagebucket"), kinds) == "StorageBucket"
    assert kind_of(Path("basic/bigquery/v1beta1/bigquerytable"), kinds) is None


def test_bindings_fill_and_learn_service_generated_names() -> None:
    b = Bindings()
    assert b.fill("projects/${projectId}/global/networks/${networkID}") == "projects/example-project/global/networks/network-abc123"
    # an operation name the mock generated replaces the recorded placeholder
    rec = "projects/${projectId}/locations/us-west1/operations/${operationID}"
    assert b.learn(rec, "projects/example-project/locations/us-west1/operations/op-1", set()) == ["operationID"]
    assert b.fill("/v1/" + rec) == "/v1/projects/example-project/locations/us-west1/operations/op-1"
    b.learn(rec, "projects/example-project/locations/us-west1/operations/op-2", set())
    assert b.fill(rec).endswith("/op-2")  # a poll goes to the latest operation
    # placeholders the request carried are not re-learned from the response
    assert b.learn("${networkID}", "1234567890", {"networkID"}) == []
    # several service-generated IDs under one placeholder: a pick, then retire
    b.learn("projects/${projectId}/notificationChannels/${notificationChannelID}", "projects/example-project/notificationChannels/111", set())
    b.learn("projects/${projectId}/notificationChannels/${notificationChannelID}", "projects/example-project/notificationChannels/222", set())
    assert b.ambiguous("/v3/projects/${projectId}/notificationChannels/${notificationChannelID}") == ["notificationChannelID"]
    b.chosen["notificationChannelID"] = "111"
    assert b.fill("${notificationChannelID}") == "111"
    b.retire("notificationChannelID", "111")
    assert b.fill("${notificationChannelID}") == "222"
