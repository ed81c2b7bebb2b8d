"""Strict request bodies: a field the method's request schema does not define
is refused with 400, in the error shape of the real API.

JSON-transcoded APIs answer ``Invalid JSON payload received. Unknown name
"foo" at 'secret': Cannot find field.`` with a google.rpc.BadRequest detail
(no ``at`` for a top-level field of a request message sent whole); compute
names its body ``<message>_resource``; compute, storage and dns answer with
the v1-style ``errors`` list. Nested objects are checked against their
schemas; maps take any key; proto JSON's snake_case names are accepted.
"""

from __future__ import annotations

from typing import Any

import pytest

from kccgen.mockgcp.engine import MockGCP

P = "projects/p"


@pytest.fixture
def eng() -> MockGCP:
    return MockGCP(lro_polls=0)


def call(eng: MockGCP, method: str, path: str, body: Any, **query: str) -> tuple[int, Any]:
    _, resp = eng.handle(method, path, {k: [v] for k, v in query.items()}, body)
    return resp.status, resp.body


def message(body: Any) -> str:
    return str(body["error"]["message"])


@pytest.mark.parametrize(
    ("method", "path", "body", "query", "expected"),
    [
        # the whole request message: pubsub CreateTopic(Topic) on PUT, UpdateTopicRequest
        ("PUT", f"/v1/{P}/topics/t", {"labelz": {}}, {}, 'Unknown name "labelz": Cannot find field.'),
        # a body field of the request message: CreateSecretRequest.secret
        ("POST", f"/v1/{P}/secrets", {"replication": {"automatic": {}}, "ttlx": "1s"}, {"secretId": "s"}, "Unknown name \"ttlx\" at 'secret': Cannot find field."),
        # nested
        ("POST", f"/v1/{P}/secrets", {"replication": {"automatic": {"nope": 1}}}, {"secretId": "s"}, "Unknown name \"nope\" at 'secret.replication.automatic'"),
        ("POST", f"/v3/{P}/alertPolicies", {"combiner": "OR", "conditions": [{"displayName": "c", "bogus": 1}]}, {}, "Unknown name \"bogus\" at 'alert_policy.conditions[0]'"),
        ("POST", f"/v1/{P}/instances", {"instanceId": "i", "instance": {"config": "c", "nodes": 1}}, {}, "Unknown name \"nodes\" at 'instance'"),
    ],
)
def test_unknown_fields_of_json_transcoded_apis(eng: MockGCP, method: str, path: str, body: Any, query: dict[str, str], expected: str) -> None:
    status, out = call(eng, method, path, body, **query)
    assert status == 400
    err = out["error"]
    assert err["status"] == "INVALID_ARGUMENT"
    assert err["message"].startswith("Invalid JSON payload received. ") and expected in err["message"]
    [detail] = err["details"]
    assert detail["@type"] == "type.googleapis.com/google.rpc.BadRequest"
    assert detail["fieldViolations"][0]["description"] == err["message"]
    assert "errors" not in err
    assert not eng.resources  # nothing was created


def test_unknown_field_inside_an_update_wrapper(eng: MockGCP) -> None:
    assert call(eng, "PUT", f"/v1/{P}/topics/t", {})[0] == 200
    status, out = call(eng, "PATCH", f"/v1/{P}/topics/t", {"topic": {"labels": {}, "foo": 1}, "updateMask": "labels"})
    assert status == 400
    assert message(out) == "Invalid JSON payload received. Unknown name \"foo\" at 'topic': Cannot find field."
    assert out["error"]["details"][0]["fieldViolations"][0]["field"] == "topic"


@pytest.mark.parametrize(
    ("path", "body", "query", "at"),
    [
        ("/compute/v1/projects/p/global/networks", {"name": "n", "bogus": 1}, {}, " at 'network_resource'"),
        ("/dns/v1/projects/p/managedZones", {"name": "z", "dnsName": "example.com.", "bogus": 1}, {}, " at 'managed_zone'"),
        ("/storage/v1/b", {"name": "b", "bogus": 1}, {"project": "p"}, ""),
    ],
)
def test_unknown_fields_of_legacy_apis(eng: MockGCP, path: str, body: Any, query: dict[str, str], at: str) -> None:
    status, out = call(eng, "POST", path, body, **query)
    assert status == 400
    err = out["error"]
    assert err["message"] == f'Invalid JSON payload received. Unknown name "bogus"{at}: Cannot find field.'
    assert err["errors"] == [{"message": err["message"], "domain": "global", "reason": "invalid"}]
    assert not eng.resources


def test_maps_any_and_snake_case_are_accepted(eng: MockGCP) -> None:
    # labels is a map: any key; message_retention_duration is the proto name of messageRetentionDuration
    status, out = call(eng, "PUT", f"/v1/{P}/topics/t", {"labels": {"any-key": "v"}, "message_retention_duration": "600s"})
    assert status == 200, out
    assert out["messageRetentionDuration"] == "600s" and "message_retention_duration" not in out
    # a google.protobuf.Struct-like map of any values (an alert policy's user labels are strings;
    # a secret's annotations too): values are not checked beyond their schema
    status, out = call(eng, "POST", f"/v1/{P}/secrets", {"replication": {"automatic": {}}, "annotations": {"x": "y"}}, secretId="s")
    assert status == 200, out


def test_fields_the_url_binds_may_repeat_in_a_whole_body(eng: MockGCP) -> None:
    # spanner CreateInstanceRequest.parent is bound by the URL (Discovery drops it
    # from the request schema); Config Connector sends it in the body too.
    body = {"parent": P, "instanceId": "i", "instance": {"config": "c", "displayName": "d", "nodeCount": 1}}
    status, out = call(eng, "POST", f"/v1/{P}/instances", body)
    assert status == 200, out
    # UpdateTopicRequest's `name` is topic.name: not a top-level field
    call(eng, "PUT", f"/v1/{P}/topics/t", {})
    status, out = call(eng, "PATCH", f"/v1/{P}/topics/t", {"name": f"{P}/topics/t", "topic": {"labels": {}}, "updateMask": "labels"})
    assert status == 400 and message(out).endswith('Unknown name "name": Cannot find field.')


def test_a_method_without_a_request_body_ignores_one(eng: MockGCP) -> None:
    call(eng, "PUT", f"/v1/{P}/topics/t", {})
    assert call(eng, "GET", f"/v1/{P}/topics/t", {"anything": 1})[0] == 200
