"""Pub/Sub snapshots on mockgcp, with the request shapes of the real API.

``projects.snapshots.create`` is ``PUT v1/{+name}`` with a
CreateSnapshotRequest {subscription, labels, tags} (a "flat" create request:
not a Snapshot); the snapshot takes the subscription's topic and expires 7
days after creation. An adapter that sends a Snapshot body instead (with
``name`` or ``topic``) is refused, as the real API refuses it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from googleapiclient.errors import HttpError

from kccgen.mockgcp.engine import MockGCP
from kccgen.mockgcp.server import MockServer

P = "projects/mock-project"
TOPIC = f"{P}/topics/t"
SUB = f"{P}/subscriptions/s"
SNAP = f"{P}/snapshots/snap"


@pytest.fixture(scope="module")
def _server() -> Iterator[MockServer]:
    with MockServer() as s:
        yield s


@pytest.fixture
def ps(_server: MockServer) -> Any:
    """A pubsub client on a fresh engine holding a topic and a subscription to it."""
    _server.engine = MockGCP()
    client = _server.client("pubsub").projects()
    client.topics().create(name=TOPIC, body={}).execute()
    client.subscriptions().create(name=SUB, body={"topic": TOPIC}).execute()
    return client


def _error(e: pytest.ExceptionInfo[HttpError]) -> dict[str, Any]:
    err: dict[str, Any] = json.loads(e.value.content)["error"]
    return err


def test_create_get_patch_delete(ps: Any) -> None:
    snaps = ps.snapshots()
    before = datetime.now(UTC)
    created = snaps.create(name=SNAP, body={"subscription": SUB, "labels": {"env": "dev"}}).execute()
    assert created["name"] == SNAP
    assert created["topic"] == TOPIC  # the subscription's topic
    assert created["labels"] == {"env": "dev"}
    assert "subscription" not in created  # a create-only input, not a Snapshot field
    expires = datetime.fromisoformat(created["expireTime"].replace("Z", "+00:00"))
    assert before + timedelta(days=7) <= expires <= datetime.now(UTC) + timedelta(days=7)
    assert snaps.get(snapshot=SNAP).execute() == created

    out = snaps.patch(name=SNAP, body={"snapshot": {"labels": {"env": "prod"}}, "updateMask": "labels"}).execute()
    assert out["labels"] == {"env": "prod"}
    assert out["topic"] == TOPIC and out["expireTime"] == created["expireTime"]
    assert snaps.get(snapshot=SNAP).execute() == out
    assert [s["name"] for s in snaps.list(project=P).execute()["snapshots"]] == [SNAP]

    assert snaps.delete(snapshot=SNAP).execute() == {}
    with pytest.raises(HttpError) as e:
        snaps.get(snapshot=SNAP).execute()
    assert e.value.resp.status == 404


def test_update_mask_is_required(ps: Any) -> None:
    snaps = ps.snapshots()
    snaps.create(name=SNAP, body={"subscription": SUB}).execute()
    with pytest.raises(HttpError) as e:
        snaps.patch(name=SNAP, body={"snapshot": {"labels": {"a": "b"}}}).execute()
    assert e.value.resp.status == 400 and _error(e)["status"] == "INVALID_ARGUMENT"


def test_a_snapshot_body_is_the_wrong_shape(ps: Any) -> None:
    # What a Snapshot-shaped adapter sends: the resource, not CreateSnapshotRequest.
    # `name` passes (CreateSnapshotRequest.name is the field the URL binds, so a
    # body sent whole may repeat it); `topic` is no field of the request.
    with pytest.raises(HttpError) as e:
        ps.snapshots().create(name=SNAP, body={"name": SNAP, "topic": TOPIC, "labels": {"a": "b"}}).execute()
    err = _error(e)
    assert e.value.resp.status == 400 and err["status"] == "INVALID_ARGUMENT"
    assert err["message"] == 'Invalid JSON payload received. Unknown name "topic": Cannot find field.'
    assert err["details"][0]["@type"] == "type.googleapis.com/google.rpc.BadRequest"
    # without `topic`, the Snapshot body still names no subscription
    with pytest.raises(HttpError) as e:
        ps.snapshots().create(name=SNAP, body={"name": SNAP, "labels": {"a": "b"}}).execute()
    assert e.value.resp.status == 400
    with pytest.raises(HttpError):
        ps.snapshots().get(snapshot=SNAP).execute()


def test_patch_with_a_bare_snapshot_is_refused(ps: Any) -> None:
    ps.snapshots().create(name=SNAP, body={"subscription": SUB}).execute()
    with pytest.raises(HttpError) as e:
        ps.snapshots().patch(name=SNAP, body={"labels": {"a": "b"}}).execute()
    assert e.value.resp.status == 400
    assert 'Unknown name "labels"' in _error(e)["message"]


def test_missing_subscription_is_not_found(ps: Any) -> None:
    with pytest.raises(HttpError) as e:
        ps.snapshots().create(name=SNAP, body={"subscription": f"{P}/subscriptions/missing"}).execute()
    assert e.value.resp.status == 404 and _error(e)["status"] == "NOT_FOUND"


def test_no_subscription_is_invalid(ps: Any) -> None:
    with pytest.raises(HttpError) as e:
        ps.snapshots().create(name=SNAP, body={"labels": {"a": "b"}}).execute()
    assert e.value.resp.status == 400


def test_existing_snapshot_is_already_exists(ps: Any) -> None:
    ps.snapshots().create(name=SNAP, body={"subscription": SUB}).execute()
    with pytest.raises(HttpError) as e:
        ps.snapshots().create(name=SNAP, body={"subscription": SUB}).execute()
    assert e.value.resp.status == 409 and _error(e)["status"] == "ALREADY_EXISTS"
