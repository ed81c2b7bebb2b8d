"""A create whose ID the service picks is of unknown outcome only when the
service may have acted on it (issue 27): a refused connection, 429 and 503 say
it did not, so the create is retried (or reported with the endpoint's URL),
never left as CreateOutcomeUnknown, and the advice never says to delete and
re-apply (after a real lost answer that leaks the resource)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from kccgen.mockgcp import MockServer
from kccgen.runtime.gcp import Gcp, Transient
from kccgen.runtime.local import StateDir, apply
from kccgen.runtime.reconciler import ANN_CREATE_PENDING
from tests.test_runtime_safety import CREATE, _channel, _channels, _creates


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("status", [503, 429])
def test_a_create_refused_unprocessed_is_sent_again_and_made_once(tmp_path: Path, status: int) -> None:
    state = StateDir(tmp_path / "state")
    with MockServer() as s:
        s.engine.faults.add(method=CREATE, status=status, times=2)
        with state.lock():
            [(row, _)] = apply([_channel()], state, Gcp(s.base_url, host_paths=True, backoff=0.0), "p")
        assert (row.ready, row.reason) == (True, "UpToDate"), row.message
        assert _creates(s) == 3 and len(_channels(s)) == 1


def test_a_create_that_never_connected_is_update_failed_naming_the_url_not_outcome_unknown(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "state")
    url = f"http://127.0.0.1:{_closed_port()}"
    with state.lock():
        [(row, result)] = apply([_channel()], state, Gcp(url, host_paths=True, backoff=0.0, retries=1), "p")
    assert row.reason != "CreateOutcomeUnknown", row.message
    assert not row.ready and "127.0.0.1" in row.message, row.message
    assert ANN_CREATE_PENDING not in (result.obj["metadata"].get("annotations") or {})


def test_a_refused_connection_is_an_unprocessed_transient_with_its_url() -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    gcp = Gcp(url, host_paths=True, backoff=0.0, retries=0)
    client = gcp.client("pubsub.v1")
    req = client.projects().topics().create(name="projects/p/topics/t", body={})
    with pytest.raises(Transient) as e:
        gcp.execute("pubsub.v1 projects.topics.create", req, idempotent=False)
    assert not e.value.processed and "127.0.0.1" in str(e.value), e.value


def test_a_lost_answer_stays_of_unknown_outcome_and_the_advice_never_says_delete(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "state")
    with MockServer() as s:
        s.engine.faults.add(method=CREATE, drop_answer=True, times=1)
        s.engine.faults.add(method="monitoring.projects.notificationChannels.list", status=500, times=50)
        with state.lock():
            [(row, _)] = apply([_channel()], state, Gcp(s.base_url, host_paths=True, backoff=0.0), "p")
        assert row.reason == "CreateOutcomeUnknown", row.message
        assert "delete" not in row.message.lower() and "spec.resourceID" in row.message, row.message
        assert _creates(s) == 1
