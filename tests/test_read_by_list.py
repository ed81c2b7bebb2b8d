"""Kinds read back by list (kccgen.contract.ReadByList): ServiceNetworkingConnection
and ComputeSharedVPCServiceProject on mockgcp, request by request.

The requests checked are those of Config Connector's recorded traffic
(servicenetworking/v1beta1/servicenetworkingconnection, hand-written extract):
``GET v1/projects/{projectId}`` (Resource Manager, for the number), ``GET
services/servicenetworking.googleapis.com/connections?network=projects/{number}/global/networks/{n}``,
``PATCH .../connections/-?force=true&updateMask=reservedPeeringRanges`` with
``{network, reservedPeeringRanges}``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kccgen.contract import (
    Adapter,
    Call,
    NoCreate,
    NoDelete,
    NoUpdate,
    ReadByList,
    uses_project_number,
)
from kccgen.mockgcp.apis.storage import project_number
from kccgen.runtime.adapter import adapter_for
from kccgen.runtime.gcp import GcpError, NotFound
from kccgen.runtime.reconciler import read_listed
from tests.support.scenarios import (
    PROJECT,
    Harness,
    harness,
    kcc_object,
    manifest,
    path_of,
    query_of,
)

SERVICE = "servicenetworking.googleapis.com"
NUMBER = project_number(PROJECT)


@pytest.fixture
def h() -> Iterator[Harness]:
    with harness(host_paths=True) as hh:
        yield hh



def _network_and_ranges(h: Harness) -> None:
    h.ready(manifest("ComputeNetwork", name="net"))
    for name in ("range-a", "range-b"):
        h.ready(kcc_object("ComputeAddress", name, {"location": "global", "addressType": "INTERNAL", "purpose": "VPC_PEERING", "prefixLength": 16, "networkRef": {"name": "net"}}))


def _connection(*ranges: str) -> dict[str, Any]:
    return kcc_object("ServiceNetworkingConnection", "conn", {"networkRef": {"name": "net"}, "service": SERVICE, "reservedPeeringRanges": [{"name": r} for r in ranges]})


def test_connection_lifecycle_sends_config_connectors_requests(h: Harness) -> None:
    _network_and_ranges(h)
    since = h.mark()
    obj = h.ready(_connection("range-a"))
    assert obj["status"]["externalRef"] == f"services/{SERVICE}/projects/{PROJECT}/global/networks/net"
    entries = h.entries(since)
    assert (entries[0].method, entries[0].url.split("?")[0]) == ("GET", f"https://cloudresourcemanager.googleapis.com/v1/projects/{PROJECT}")
    network = f"projects/{NUMBER}/global/networks/net"
    lists = [e for e in entries if e.method == "GET" and path_of(e).endswith(f"services/{SERVICE}/connections")]
    assert lists and all(query_of(e)["network"] == [network] for e in lists)
    (create,) = [e for e in entries if e.method == "POST"]
    assert create.request_json == {"network": network, "reservedPeeringRanges": ["range-a"]}

    # re-apply: reads only (the project number is known: no second Resource Manager GET)
    since = h.mark()
    obj = h.ready(obj)
    assert h.writes(since) == []
    assert not any(path_of(e).endswith(f"projects/{PROJECT}") for e in h.entries(since))

    # one more range: one PATCH on connections/- with force and the mask, the network in the body
    since = h.mark()
    obj = h.ready({**obj, "spec": {**obj["spec"], "reservedPeeringRanges": [{"name": "range-a"}, {"name": "range-b"}]}})
    (patch,) = h.writes(since)
    assert patch.method == "PATCH" and path_of(patch).endswith(f"services/{SERVICE}/connections/-")
    assert query_of(patch)["force"] == ["true"] and query_of(patch)["updateMask"] == ["reservedPeeringRanges"]
    assert patch.request_json == {"network": network, "reservedPeeringRanges": ["range-a", "range-b"]}

    # delete: deleteConnection names the consumer network; the list is empty after it
    since = h.mark()
    r = h.delete(obj)
    assert r.deleted, r.message
    (gone,) = h.writes(since)
    # Discovery: deleteConnection is POST v1/{+name}, the connection path itself
    assert (gone.method, gone.url.split("?")[0].rsplit("/v1/", 1)[-1]) == ("POST", f"services/{SERVICE}/connections/-")
    assert gone.request_json == {"consumerNetwork": network}
    listed = h.server.client("servicenetworking.v1").services().connections().list(parent=f"services/{SERVICE}", network=network).execute()
    assert listed == {}


def test_a_connection_made_outside_is_acquired_by_its_network(h: Harness) -> None:
    """The network names the connection: one made by hand (project ID in the body,
    which the service answers with the number) is found, not created again."""
    _network_and_ranges(h)
    client = h.server.client("servicenetworking.v1")
    client.services().connections().create(
        parent=f"services/{SERVICE}", body={"network": f"projects/{PROJECT}/global/networks/net", "reservedPeeringRanges": ["range-a"]}
    ).execute()
    since = h.mark()
    r = h.reconcile(_connection("range-a"))
    assert r.ready, r.message
    assert h.writes(since) == []


def test_mockgcp_refuses_a_patch_of_a_connection_that_is_not_there(h: Harness) -> None:
    from googleapiclient.errors import HttpError

    client = h.server.client("servicenetworking.v1")
    with pytest.raises(HttpError) as e:
        client.services().connections().patch(
            name=f"services/{SERVICE}/connections/-", force=True, updateMask="reservedPeeringRanges", body={"network": f"projects/{PROJECT}/global/networks/none"}
        ).execute()
    assert e.value.resp.status == 404


def test_service_project_attaches_reads_and_detaches(h: Harness) -> None:
    host = {"cnrm.cloud.google.com/project-id": "host-project"}
    h.ready(kcc_object("ComputeSharedVPCHostProject", "host", {}, host))
    since = h.mark()
    obj = h.ready(kcc_object("ComputeSharedVPCServiceProject", "svc", {"projectRef": {"external": "projects/service-project"}}, host))
    assert obj["status"]["externalRef"] == "projects/host-project/xpnResources/service-project"
    (enable,) = h.writes(since)
    assert path_of(enable).endswith("projects/host-project/enableXpnResource")
    assert enable.request_json == {"xpnResource": {"id": "service-project", "type": "PROJECT"}}
    since = h.mark()
    h.ready(obj)
    assert h.writes(since) == []
    r = h.delete(obj)
    assert r.deleted, r.message
    listed = h.server.client("compute.v1").projects().getXpnResources(project="host-project").execute()
    assert "resources" not in listed


def test_a_service_project_needs_a_host(h: Harness) -> None:
    r = h.reconcile(kcc_object("ComputeSharedVPCServiceProject", "svc", {"projectRef": {"external": "projects/service-project"}}, {"cnrm.cloud.google.com/project-id": "not-a-host"}))
    assert not r.ready and "not a shared VPC host" in r.message


class _Listing:
    """A Gcp stand-in whose list answers the given items."""

    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = items

    def list_all(self, a: Adapter, c: Call, values: dict[str, str], items_field: str) -> list[dict[str, Any]]:
        return self.items


_ADAPTER = Adapter(
    kind="X",
    api_version="x.cnrm.cloud.google.com/v1alpha1",
    doc="x.v1",
    resource=("things",),
    template="things/{thing}",
    id_param="",
    get=Call("list"),
    create=NoCreate(),
    update=NoUpdate(),
    delete=NoDelete(),
    read_list=ReadByList("things", (("key", "k/{thing}"),)),
)


def test_read_listed_picks_the_item_holding_the_identity() -> None:
    gcp: Any = _Listing([{"key": "k/a", "v": 1}, {"key": "k/b", "v": 2}])
    assert read_listed(gcp, _ADAPTER, {"thing": "b"}) == {"key": "k/b", "v": 2}
    with pytest.raises(NotFound):
        read_listed(gcp, _ADAPTER, {"thing": "c"})


def test_two_listed_items_for_one_identity_are_a_doubt_not_a_pick() -> None:
    gcp: Any = _Listing([{"key": "k/a", "v": 1}, {"key": "k/a", "v": 2}])
    with pytest.raises(GcpError, match="lists 2"):
        read_listed(gcp, _ADAPTER, {"thing": "a"})


def test_only_templates_naming_the_number_make_the_runtime_look_it_up() -> None:
    assert uses_project_number(adapter_for("ServiceNetworkingConnection"))
    assert not uses_project_number(adapter_for("ComputeSharedVPCServiceProject"))
    assert not uses_project_number(_ADAPTER)


def test_export_rebuilds_a_short_reference_from_the_objects_identity() -> None:
    """servicenetworking answers reserved ranges by bare name (apiFormat "{address}"):
    the exported manifest names the global address of the connection's project."""
    from kccgen.runtime.export import export_manifest

    ext = f"services/{SERVICE}/projects/{PROJECT}/global/networks/net"
    live = {"network": f"projects/{NUMBER}/global/networks/net", "reservedPeeringRanges": ["range-a"], "peering": "x", "service": f"services/{SERVICE}"}
    spec = export_manifest("ServiceNetworkingConnection", ext, live, name="conn")["spec"]
    assert spec["reservedPeeringRanges"] == [{"external": f"projects/{PROJECT}/global/addresses/range-a"}]
    assert spec["networkRef"] == {"external": f"projects/{PROJECT}/global/networks/net"}
    assert spec["service"] == SERVICE

