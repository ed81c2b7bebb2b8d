"""Acceptance: every generated Kind's lifecycle through google-api-python-client against mockgcp.

For each curated Kind (``CURATED_KINDS``; derived Kinds run tests/test_lifecycle.py), its case in
``tests/kinds/<Kind>/mockgcp.yaml`` (read and run by tests/support/mockgcp_cases.py):
create (with a body shaped like Config Connector's recorded traffic in
../shared/compat/kcc/fixtures/**/_http.log), wait on the long-running operation
where the API returns one (really polling, with ``lro_polls=2``), get, patch one
mutable field (the change shows on the next get, an unrelated field is untouched),
list (the resource is listed), delete (waiting on its operation if any), then
get -> 404. Output-only fields the real service fills in are asserted per Kind,
and the exact call sequence for a few Kinds.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest
from googleapiclient.errors import HttpError

from kccgen.mockgcp.engine import MockGCP
from kccgen.mockgcp.normalize import call_sequence
from kccgen.mockgcp.server import MockServer
from tests.support.kinds import CURATED_KINDS
from tests.support.mockgcp_cases import PROJECT as P
from tests.support.mockgcp_cases import Driver, case_kinds, load_case, path_of

LRO_POLLS = 2


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    with MockServer(MockGCP(lro_polls=LRO_POLLS)) as s:
        yield s


def test_every_kind_is_covered() -> None:
    """Every curated Kind has a hand-written case (derived Kinds: tests/test_lifecycle.py)."""
    assert case_kinds() == set(CURATED_KINDS)


@pytest.mark.parametrize("kind", CURATED_KINDS)
def test_kind_lifecycle(server: MockServer, kind: str) -> None:
    case = load_case(kind)
    d = Driver(server, case)
    d.setup()

    created = d.create()
    d.check_output(created)
    got = d.get().execute()
    assert got == created, (created, got)
    d.check_output(got)

    if case.patch is not None:
        d.patch(got)
        after = d.get().execute()
        path, value = case.patch.patched.path, case.patch.patched.value
        assert path_of(after, path) == value
        assert path_of(got, path) != value
        for p in case.patch.unchanged:
            assert path_of(after, p) == path_of(got, p), p
        d.check_output(after)

    assert d.name_of(got) in d.list_names()

    d.delete()
    with pytest.raises(HttpError) as e:
        d.get().execute()
    assert e.value.resp.status == 404

    if case.waits:
        assert d.polls and all(n == LRO_POLLS for n in d.polls), d.polls


# call_sequence normalizes each line on its own, so every generated operation
# name reads ${operation1} and every numeric ID ${number1}.


@pytest.fixture(scope="module")
def seq_server() -> Iterator[MockServer]:
    with MockServer() as s:
        yield s


def _sequence_of(s: MockServer, kind: str) -> list[str]:
    """The calls of ``kind``'s create, patch (after a get), delete and get -> 404."""
    s.engine = MockGCP(lro_polls=LRO_POLLS)  # a fresh, empty engine per sequence
    case = load_case(kind)
    d = Driver(s, case)
    d.setup()
    s.clear_log()
    created = d.create()
    if case.patch is not None:
        d.patch(d.get().execute())
    d.delete()
    with pytest.raises(HttpError):
        d.get().execute()
    assert created
    # the server logs an exchange just after answering it: let the last one land
    for _ in range(100):
        if s.log and s.log[-1].status.startswith("404"):
            break
        time.sleep(0.01)
    return call_sequence(s.log)


def test_call_sequence_pubsub_topic(seq_server: MockServer) -> None:
    assert _sequence_of(seq_server, "PubSubTopic") == [
        f"PUT /v1/projects/{P}/topics/pubsubtopic-sample -> 200",
        f"GET /v1/projects/{P}/topics/pubsubtopic-sample -> 200",
        f"PATCH /v1/projects/{P}/topics/pubsubtopic-sample -> 200",
        f"DELETE /v1/projects/{P}/topics/pubsubtopic-sample -> 200",
        f"GET /v1/projects/{P}/topics/pubsubtopic-sample -> 404",
    ]


def test_call_sequence_compute_subnetwork(seq_server: MockServer) -> None:
    sub = f"/compute/v1/projects/{P}/regions/us-central1/subnetworks/computesubnetwork-sample"
    ops = f"/compute/v1/projects/{P}/regions/us-central1/operations"
    assert _sequence_of(seq_server, "ComputeSubnetwork") == [
        f"POST /compute/v1/projects/{P}/regions/us-central1/subnetworks -> 200",
        f"GET {ops}/${{operation1}} -> 200",
        f"GET {ops}/${{operation1}} -> 200",
        f"GET {sub} -> 200",
        f"GET {sub} -> 200",
        f"PATCH {sub} -> 200",
        f"GET {ops}/${{operation1}} -> 200",
        f"GET {ops}/${{operation1}} -> 200",
        f"DELETE {sub} -> 200",
        f"GET {ops}/${{operation1}} -> 200",
        f"GET {ops}/${{operation1}} -> 200",
        f"GET {sub} -> 404",
    ]


def test_call_sequence_storage_bucket(seq_server: MockServer) -> None:
    b = "/storage/v1/b/storagebucket-sample-mock"
    assert _sequence_of(seq_server, "StorageBucket") == [
        "POST /storage/v1/b -> 200",
        f"GET {b} -> 200",
        f"PATCH {b} -> 200",
        f"DELETE {b} -> 204",
        f"GET {b} -> 404",
    ]


def test_call_sequence_dns_managed_zone(seq_server: MockServer) -> None:
    z = f"/dns/v1/projects/{P}/managedZones/dnsmanagedzone-sample"
    seq = _sequence_of(seq_server, "DNSManagedZone")
    assert seq[:3] == [
        f"POST /dns/v1/projects/{P}/managedZones -> 200",
        f"GET {z} -> 200",
        f"PATCH {z} -> 200",
    ]
    assert len(seq) == 7
    assert re.fullmatch(rf"GET {z}/operations/\S+ -> 200", seq[3]) and seq[3] == seq[4]
    assert seq[5:] == [f"DELETE {z} -> 200", f"GET {z} -> 404"]


def test_call_sequence_spanner_instance(seq_server: MockServer) -> None:
    i = f"/v1/projects/{P}/instances/spannerinstance-sample"
    assert _sequence_of(seq_server, "SpannerInstance") == [
        f"POST /v1/projects/{P}/instances -> 200",
        f"GET {i}/operations/${{operation1}} -> 200",
        f"GET {i}/operations/${{operation1}} -> 200",
        f"GET {i} -> 200",
        f"GET {i} -> 200",
        f"PATCH {i} -> 200",
        f"GET {i}/operations/${{operation1}} -> 200",
        f"GET {i}/operations/${{operation1}} -> 200",
        f"DELETE {i} -> 200",
        f"GET {i} -> 404",
    ]


def test_call_sequence_monitoring_alert_policy(seq_server: MockServer) -> None:
    seq = _sequence_of(seq_server, "MonitoringAlertPolicy")
    a = f"/v3/projects/{P}/alertPolicies"
    # the service-generated numeric ID is normalized like any other 12+ digit number
    assert seq == [
        f"POST {a} -> 200",
        f"GET {a}/${{number1}} -> 200",
        f"PATCH {a}/${{number1}} -> 200",
        f"DELETE {a}/${{number1}} -> 200",
        f"GET {a}/${{number1}} -> 404",
    ]
