"""mockgcp's IAM, as the services answer it (issue 29, point 2): a per-resource
policy whose etag changes on every write; a write with a stale etag refused, so
a read-modify-write that lost a race starts again; conditions only at version 3;
the update mask says what a write replaces; the policy goes with the resource."""

from __future__ import annotations

from typing import Any

import pytest

from kccgen.mockgcp.engine import MockGCP

TOPIC = "/v1/projects/p/topics/t"
# {+resource}:getIamPolicy is every API's path: the IAM calls name their host (kccctl --host-paths)
HOST = "pubsub.googleapis.com"


@pytest.fixture()
def eng() -> MockGCP:
    e = MockGCP()
    _, resp = e.handle("PUT", TOPIC, {}, {})
    assert resp.status == 200, resp.body
    return e


def _get(eng: MockGCP, version: int | None = None) -> Any:
    """Pub/Sub's getIamPolicy is a GET with the version as a query parameter."""
    query = {"options.requestedPolicyVersion": [str(version)]} if version is not None else {}
    return eng.handle("GET", f"{TOPIC}:getIamPolicy", query, None, host=HOST)[1]


def _set(eng: MockGCP, policy: dict[str, Any], **extra: Any) -> Any:
    return eng.handle("POST", f"{TOPIC}:setIamPolicy", {}, {"policy": policy, **extra}, host=HOST)[1]


VIEWER = {"role": "roles/pubsub.viewer", "members": ["user:a@example.com"]}


def test_read_modify_write_with_etags(eng: MockGCP) -> None:
    first = _get(eng)
    assert first.status == 200 and first.body == {"etag": "ACAB"}  # never set: an etag alone, as recorded
    # version 3 without conditions is stored and answered as version 1 (Config Connector's recordings)
    wrote = _set(eng, {"bindings": [VIEWER], "etag": first.body["etag"], "version": 3})
    assert wrote.status == 200 and wrote.body["bindings"] == [VIEWER] and wrote.body["version"] == 1
    assert wrote.body["etag"] != first.body["etag"]  # every write moves the etag
    assert _get(eng).body == wrote.body
    # a writer that read before that write is refused, and changes nothing
    stale = _set(eng, {"bindings": [], "etag": first.body["etag"]})
    assert stale.status == 409 and stale.body["error"]["status"] == "ABORTED"
    assert _get(eng).body == wrote.body
    # a write without an etag is unconditional
    assert _set(eng, {"bindings": []}).status == 200
    assert "bindings" not in _get(eng).body


def test_conditions_need_version_3(eng: MockGCP) -> None:
    conditional = {**VIEWER, "condition": {"title": "until 2027", "expression": 'request.time < timestamp("2027-01-01T00:00:00Z")'}}
    refused = _set(eng, {"bindings": [conditional]})
    assert refused.status == 400 and "version 3" in refused.body["error"]["message"]
    assert _set(eng, {"bindings": [conditional], "version": 3}).status == 200
    assert _get(eng).status == 400  # reading them needs version 3 too
    got = _get(eng, 3)
    assert got.status == 200 and got.body["version"] == 3 and got.body["bindings"] == [conditional]
    assert _get(eng, 2).status == 400  # not a policy version


def test_the_update_mask_says_what_a_write_replaces() -> None:
    """Cloud KMS's policies have audit configs and its setIamPolicy an update mask
    (Pub/Sub's have neither, and mockgcp refuses them there as the API does)."""
    eng = MockGCP()
    ring, host = "/v1/projects/p/locations/us/keyRings/k", "cloudkms.googleapis.com"
    assert eng.handle("POST", "/v1/projects/p/locations/us/keyRings", {"keyRingId": ["k"]}, {})[1].status == 200

    def set_(body: dict[str, Any]) -> Any:
        return eng.handle("POST", f"{ring}:setIamPolicy", {}, body, host=host)[1]

    audit = [{"service": "allServices", "auditLogConfigs": [{"logType": "DATA_READ"}]}]
    assert set_({"policy": {"auditConfigs": audit}, "updateMask": "auditConfigs"}).status == 200
    assert set_({"policy": {"bindings": [VIEWER], "auditConfigs": []}}).status == 200  # default mask: bindings, etag
    got = eng.handle("GET", f"{ring}:getIamPolicy", {}, None, host=host)[1].body
    assert got["auditConfigs"] == audit and got["bindings"] == [VIEWER]
    refused = eng.handle("POST", f"{TOPIC}:setIamPolicy", {}, {"policy": {"auditConfigs": audit}}, host=HOST)[1]
    assert refused.status == 400 and 'Unknown name "auditConfigs"' in refused.body["error"]["message"]


def test_the_policy_goes_with_its_resource(eng: MockGCP) -> None:
    _set(eng, {"bindings": [VIEWER]})
    assert eng.handle("DELETE", TOPIC, {}, None)[1].status == 200
    assert _get(eng).status == 404
    eng.handle("PUT", TOPIC, {}, {})
    assert "bindings" not in _get(eng).body  # a new topic of the same name starts empty
