"""A reference whose API value is a field of the object it names (kind config ``valueOf``).

Config Connector's AlloyDBInstance gives its type as ``instanceTypeRef``: the
name of its cluster (the instance takes the cluster's type, PRIMARY or
SECONDARY) or ``external: READ_POOL``. The API field is the plain enum
``instanceType``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kccgen.runtime.refs import Reason, references_of
from tests.support.scenarios import PROJECT, Harness, harness, kcc_object, path_of

CLUSTER = f"projects/{PROJECT}/locations/us-central1/clusters/c1"


@pytest.fixture
def h() -> Iterator[Harness]:
    with harness(host_paths=True) as hh:
        yield hh


def _cluster(h: Harness) -> dict[str, Any]:
    r = h.reconcile(
        kcc_object(
            "AlloyDBCluster",
            "c1",
            {"location": "us-central1", "projectRef": {"external": PROJECT}, "networkConfig": {"networkRef": {"external": f"projects/{PROJECT}/global/networks/n"}}},
        )
    )
    assert r.ready, r.message
    return r.obj


def _instance(name: str, type_ref: dict[str, str]) -> dict[str, Any]:
    return kcc_object("AlloyDBInstance", name, {"clusterRef": {"name": "c1"}, "instanceTypeRef": type_ref, "machineConfig": {"cpuCount": 2}})


def test_the_reference_table_says_which_field_of_the_cluster_is_the_value() -> None:
    (ref,) = [r for r in references_of("AlloyDBInstance") if r.api_path == "instanceType"]
    assert (ref.path, ref.target, ref.value_of) == ("instanceTypeRef", "AlloyDBCluster", "status.observedState.clusterType")


@pytest.mark.parametrize(("type_ref", "sent"), [({"name": "c1"}, "PRIMARY"), ({"external": "READ_POOL"}, "READ_POOL")], ids=["cluster-name", "external-literal"])
def test_the_instance_type_comes_from_the_cluster_or_the_literal(h: Harness, type_ref: dict[str, str], sent: str) -> None:
    cluster = _cluster(h)
    assert cluster["status"]["observedState"]["clusterType"] == "PRIMARY"  # mockgcp: what the service answers
    since = h.mark()
    r = h.reconcile(_instance("i1", type_ref))
    assert r.ready, r.message
    (create,) = [e for e in h.writes(since) if e.method == "POST"]
    assert path_of(create).endswith(f"{CLUSTER}/instances")
    assert create.request_json["instanceType"] == sent
    assert "instanceTypeRef" not in create.request_json
    again = h.mark()
    assert h.reconcile(r.obj).ready
    assert h.writes(again) == [], "an up-to-date instance costs no write"


def test_a_cluster_not_yet_observed_leaves_the_instance_waiting_with_no_call(h: Harness) -> None:
    h.store.add(kcc_object("AlloyDBCluster", "c1", {"location": "us-central1", "projectRef": {"external": PROJECT}}) | {"status": {"externalRef": CLUSTER}})
    since = h.mark()
    r = h.reconcile(_instance("i2", {"name": "c1"}))
    assert not r.ready
    assert r.reason == Reason.NOT_READY.value and "status.observedState.clusterType" in r.message
    assert h.writes(since) == []
