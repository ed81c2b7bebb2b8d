"""mockgcp: resources a service always has (switched on and off by custom
methods), names after an any-parent path's version, and record sets named by
two body fields. In-process: the engine answers as the server would."""

from __future__ import annotations

from typing import Any

from kccgen.mockgcp.engine import MockGCP

SU = "serviceusage.googleapis.com"
SVC = "v1/projects/p1/services/pubsub.googleapis.com"


def _call(e: MockGCP, http: str, path: str, body: Any = None, host: str | None = None) -> tuple[int, Any]:
    _, r = e.handle(http, path, {}, body, fault=None, host=host)
    return r.status, r.body


def test_a_projects_service_is_there_disabled_until_enabled_and_back() -> None:
    e = MockGCP(lro_polls=0)
    assert _call(e, "GET", SVC, host=SU) == (200, {"name": "projects/p1/services/pubsub.googleapis.com", "parent": "projects/p1", "state": "DISABLED"})
    status, op = _call(e, "POST", SVC + ":enable", {}, SU)
    assert status == 200 and op["done"] and op["response"]["service"]["state"] == "ENABLED"
    assert _call(e, "GET", SVC, host=SU)[1]["state"] == "ENABLED"
    _call(e, "POST", SVC + ":disable", {}, SU)
    assert _call(e, "GET", SVC, host=SU)[1]["state"] == "DISABLED"


def test_an_unknown_service_name_is_not_found() -> None:
    e = MockGCP(lro_polls=0)
    assert _call(e, "GET", "v1/projects/p1/services/not-a-service", host=SU)[0] == 404
    assert _call(e, "POST", "v1/projects/p1/services/not-a-service:enable", {}, SU)[0] == 404


def test_a_shared_vpc_host_project_is_switched_by_its_verbs() -> None:
    e = MockGCP(lro_polls=0)
    assert "xpnProjectStatus" not in _call(e, "GET", "compute/v1/projects/p1")[1]
    status, op = _call(e, "POST", "compute/v1/projects/p1/enableXpnHost")
    assert status == 200 and op["operationType"] == "enableXpnHost"
    assert _call(e, "GET", "compute/v1/projects/p1")[1]["xpnProjectStatus"] == "HOST"
    _call(e, "POST", "compute/v1/projects/p1/disableXpnHost")
    assert "xpnProjectStatus" not in _call(e, "GET", "compute/v1/projects/p1")[1]


def test_a_record_set_is_named_by_its_name_and_type() -> None:
    e = MockGCP(lro_polls=0)
    zone = "dns/v1/projects/p1/managedZones/z"
    assert _call(e, "POST", "dns/v1/projects/p1/managedZones", {"name": "z", "dnsName": "example.com.", "description": ""})[0] == 200
    rrset = {"name": "www.example.com.", "type": "A", "ttl": 300, "rrdatas": ["10.0.0.1"]}
    assert _call(e, "POST", f"{zone}/rrsets", rrset)[0] == 200
    assert _call(e, "POST", f"{zone}/rrsets", {**rrset, "type": "TXT", "rrdatas": ['"x"']})[0] == 200  # same name, other type
    assert _call(e, "GET", f"{zone}/rrsets/www.example.com./A")[1]["rrdatas"] == ["10.0.0.1"]
    assert _call(e, "POST", f"{zone}/rrsets", rrset)[0] == 409
    status, body = _call(e, "POST", f"{zone}/rrsets", {"name": "v.example.com."})
    assert status == 400 and "resource.type" in body["error"]["message"]


def test_a_services_identity_is_generated_the_same_every_time() -> None:
    e = MockGCP(lro_polls=0)
    path = "v1beta1/projects/p1/services/pubsub.googleapis.com:generateServiceIdentity"
    status, op = _call(e, "POST", path, None, SU)
    assert status == 200 and op["done"]
    assert op["response"]["email"] == "service-p1@gcp-sa-pubsub.iam.gserviceaccount.com"
    assert _call(e, "POST", path, None, SU)[1]["response"]["uniqueId"] == op["response"]["uniqueId"]
    assert _call(e, "POST", "v1beta1/projects/p1/services/nope:generateServiceIdentity", None, SU)[0] == 501
