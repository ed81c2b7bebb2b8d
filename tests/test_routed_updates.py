"""Updates split over verbs (kccgen.contract.UpdateRouted): GKE's ContainerCluster
and ContainerNodePool.

Config Connector's recorded traffic (container/v1beta1/containercluster/
containercluster-addon, hand-written extract): the create is ``POST
v1beta1/projects/{p}/locations/{l}/clusters`` with ``{cluster: {name, ...}}``,
polled at ``GET v1beta1/projects/{p}/locations/{l}/operations/{op}``; a change
of the add-ons is ``PUT .../clusters/{c}`` whose body is ``{update:
{desiredAddonsConfig: {...}}}`` and nothing else, polled the same way; the
delete is ``DELETE .../clusters/{c}``, polled.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kccgen.contract import APPLIED_ANNOTATION, CreateWrapped, Lro, Route, UpdateRouted, route_of
from kccgen.discovery.document import parse_discovery
from kccgen.discovery.errors import SpecError
from kccgen.documents import read_document
from kccgen.generator.ir.routes import routed_update
from kccgen.generator.spec.kinds import KindConfig, RouteConfig, UpdateMethod
from kccgen.runtime.adapter import adapter_for
from kccgen.runtime.mutability import mutability_of
from kccgen.runtime.requests import routed_requests
from tests.support.scenarios import Harness, harness, kcc_object, path_of

LOC = "us-central1-a"
CLUSTER = f"projects/p/locations/{LOC}/clusters/c1"
POOL = f"{CLUSTER}/nodePools/pool"


@pytest.fixture
def h() -> Iterator[Harness]:
    with harness(host_paths=True) as hh:
        yield hh


def _cluster(**spec: Any) -> dict[str, Any]:
    return kcc_object("ContainerCluster", "c1", {"location": LOC, "initialNodeCount": 1, **spec})


def _pool(**spec: Any) -> dict[str, Any]:
    return kcc_object("ContainerNodePool", "pool", {"location": LOC, "clusterRef": {"name": "c1"}, **spec})


def _kept(obj: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``new`` with what the controller keeps on the object (kccctl's state, the
    operator's object): its annotations, the applied write-only values among them."""
    return {**new, "metadata": obj["metadata"]}


def _writes(h: Harness, since: int) -> list[tuple[str, str, Any]]:
    return [(e.method, path_of(e).split("/clusters/", 1)[-1], e.request_json) for e in h.writes(since)]


def _polls(h: Harness, since: int) -> list[str]:
    return [path_of(e) for e in h.entries(since) if e.method == "GET" and "/operations/" in path_of(e)]


def test_the_adapters_route_each_field_to_its_verb() -> None:
    a = adapter_for("ContainerCluster")
    assert isinstance(a.update, UpdateRouted) and a.get.lro is Lro.NONE
    assert isinstance(a.create, CreateWrapped) and (a.create.id_field, a.create.resource_field) == ("cluster.name", "cluster")
    assert a.create.call.lro is Lro.LOCATED and not a.name_is_full
    labels = route_of(a.update, "resourceLabels")
    assert labels is not None and (labels.call.method, labels.into, labels.tokens) == ("setResourceLabels", "resourceLabels", (("labelFingerprint", "labelFingerprint"),))
    addons = route_of(a.update, "addonsConfig.httpLoadBalancing.disabled")  # a field under a route takes that route
    assert addons is not None and (addons.call.method, addons.into) == ("update", "update.desiredAddonsConfig")
    assert route_of(a.update, "initialNodeCount") is None
    rows = mutability_of("ContainerCluster")
    assert rows["spec.resourceLabels"].updatable and "setResourceLabels" in rows["spec.resourceLabels"].updatable_source
    assert not rows["spec.initialNodeCount"].updatable and rows["spec.initialNodeCount"].updatable_source.startswith("no route")
    p = adapter_for("ContainerNodePool")
    assert isinstance(p.update, UpdateRouted)
    size = route_of(p.update, "nodeCount")
    assert size is not None and size.write_only and size.create_as == "initialNodeCount" and size.call.method == "setSize"
    machine = route_of(p.update, "config.machineType")
    assert machine is not None and (machine.call.method, machine.into) == ("update", "machineType")
    prow = mutability_of("ContainerNodePool")
    assert prow["spec.nodeCount"].updatable and not prow["spec.nodeCount"].readable  # GET never returns it
    assert not prow["spec.config.preemptible"].updatable  # no route: refused by name


def test_requests_one_per_route_in_the_routes_order() -> None:
    call_a, call_b = adapter_for("ContainerCluster").get, adapter_for("ContainerCluster").get
    shape = UpdateRouted((Route("labels", call_a, "resourceLabels", (("labelFingerprint", "fp"),)), Route("addons", call_b, "update.desiredAddons")))
    desired = {"labels": {"a": "2"}, "addons": {"x": {"disabled": False}}}
    reqs = routed_requests(shape, desired, {"fp": "abc"}, ["addons.x.disabled", "labels"])
    assert [r.body for r in reqs] == [{"resourceLabels": {"a": "2"}, "labelFingerprint": "abc"}, {"update": {"desiredAddons": {"x": {"disabled": False}}}}]
    with pytest.raises(ValueError, match="size: no method of the API changes it"):
        routed_requests(shape, {"size": 3}, {}, ["size"])


def test_cluster_create_reapply_and_one_call_per_changed_field(h: Harness) -> None:
    since = h.mark()
    obj = h.ready(_cluster(resourceLabels={"team": "a"}, addonsConfig={"httpLoadBalancing": {"disabled": True}}))
    assert obj["status"]["externalRef"] == CLUSTER
    (create,) = h.writes(since)
    assert create.method == "POST" and path_of(create) == f"v1beta1/projects/p/locations/{LOC}/clusters"
    assert set(create.request_json) == {"cluster"} and create.request_json["cluster"]["name"] == "c1"
    assert _polls(h, since) and all(f"/locations/{LOC}/operations/" in p for p in _polls(h, since))

    since = h.mark()
    again = h.reconcile(_cluster(resourceLabels={"team": "a"}, addonsConfig={"httpLoadBalancing": {"disabled": True}}))
    assert again.ready and h.writes(since) == []  # up to date: one GET, no write

    since = h.mark()
    h.ready(_cluster(resourceLabels={"team": "b"}, addonsConfig={"httpLoadBalancing": {"disabled": True}}))
    fingerprint = h.stored("container.v1beta1", CLUSTER)["labelFingerprint"]
    ((method, path, body),) = _writes(h, since)
    assert (method, path) == ("POST", "c1:setResourceLabels")  # a label change is one setResourceLabels
    assert body["resourceLabels"] == {"team": "b"} and set(body) == {"resourceLabels", "labelFingerprint"}
    assert h.stored("container.v1beta1", CLUSTER)["resourceLabels"] == {"team": "b"} and fingerprint

    # two changes: two calls, in the routes' order, the second sent after the first's
    # operation is done (mockgcp refuses a write while the cluster runs another)
    since = h.mark()
    h.ready(_cluster(resourceLabels={"team": "c"}, addonsConfig={"httpLoadBalancing": {"disabled": False}}))
    writes = _writes(h, since)
    assert [(m, p) for m, p, _ in writes] == [("POST", "c1:setResourceLabels"), ("PUT", "c1")]
    assert writes[1][2] == {"update": {"desiredAddonsConfig": {"httpLoadBalancing": {"disabled": False}}}}  # one desired* per call
    order = [e.method for e in h.entries(since)]
    assert order.index("PUT") > order.index("POST") + 1  # the label operation was polled in between

    since = h.mark()
    refused = h.reconcile(_cluster(initialNodeCount=3, resourceLabels={"team": "c"}, addonsConfig={"httpLoadBalancing": {"disabled": False}}))
    assert not refused.ready and "spec.initialNodeCount" in refused.message and "no route" in refused.message
    assert h.writes(since) == []

    since = h.mark()
    assert h.delete(_cluster()).deleted
    assert [e.method for e in h.writes(since)] == ["DELETE"] and _polls(h, since)  # the delete waits for its operation


def test_node_pool_size_machine_type_and_autoscaling(h: Harness) -> None:
    h.ready(_cluster())
    since = h.mark()
    obj = h.ready(_pool(nodeCount=2, config={"machineType": "e2-medium"}))
    (create,) = h.writes(since)
    sent = create.request_json["nodePool"]
    assert sent["initialNodeCount"] == 2 and "nodeCount" not in sent  # nodeCount is setSize's, not the pool's
    assert obj["metadata"]["annotations"][APPLIED_ANNOTATION] == '{"nodeCount":2}'

    since = h.mark()
    assert h.reconcile(_kept(obj, _pool(nodeCount=2, config={"machineType": "e2-medium"}))).ready and h.writes(since) == []

    since = h.mark()
    obj = h.ready(_kept(obj, _pool(nodeCount=5, config={"machineType": "e2-medium"})))
    assert _writes(h, since) == [("POST", "c1/nodePools/pool:setSize", {"nodeCount": 5})]  # a node count change is one setSize
    assert obj["metadata"]["annotations"][APPLIED_ANNOTATION] == '{"nodeCount":5}'
    since = h.mark()
    assert h.reconcile(obj).ready and h.writes(since) == []

    since = h.mark()
    obj = h.ready(_kept(obj, _pool(nodeCount=5, config={"machineType": "e2-standard-4"})))
    assert _writes(h, since) == [("PUT", "c1/nodePools/pool", {"machineType": "e2-standard-4"})]  # the API updates it: routed
    assert h.stored("container.v1beta1", POOL)["config"]["machineType"] == "e2-standard-4"

    since = h.mark()
    obj = h.ready(_kept(obj, _pool(nodeCount=5, config={"machineType": "e2-standard-4"}, autoscaling={"enabled": True, "minNodeCount": 1, "maxNodeCount": 4})))
    assert [(m, p) for m, p, _ in _writes(h, since)] == [("POST", "c1/nodePools/pool:setAutoscaling")]

    since = h.mark()
    refused = h.reconcile(_kept(obj, _pool(nodeCount=5, config={"machineType": "e2-standard-4", "preemptible": True}, autoscaling={"enabled": True, "minNodeCount": 1, "maxNodeCount": 4})))
    assert not refused.ready and "spec.config.preemptible" in refused.message and h.writes(since) == []

    since = h.mark()
    assert h.delete(_pool()).deleted
    assert [e.method for e in h.writes(since)] == ["DELETE"] and _polls(h, since)


def test_an_acquired_pool_sends_its_node_count_once(h: Harness) -> None:
    h.ready(_cluster())
    h.ready(_pool(config={"machineType": "e2-medium"}))
    # another object of the same pool, never applied here: the size it asks for is sent once
    other = kcc_object("ContainerNodePool", "pool", {"location": LOC, "clusterRef": {"name": "c1"}, "nodeCount": 3, "config": {"machineType": "e2-medium"}})
    since = h.mark()
    obj = h.ready(other)
    assert _writes(h, since) == [("POST", "c1/nodePools/pool:setSize", {"nodeCount": 3})]
    since = h.mark()
    assert h.reconcile(obj).ready and h.writes(since) == []


def _cfg(**update: Any) -> tuple[KindConfig, UpdateMethod]:
    u = UpdateMethod.model_validate({"shape": "routed", "reason": "test", **update})
    return KindConfig.model_validate({"kind": "ContainerCluster", "resource": "projects.locations.clusters", "methods": {"update": u.model_dump(by_alias=True)}}), u


@pytest.mark.parametrize(
    ("route", "where", "says"),
    [
        ({"field": "resourceLabels", "method": "setLabelz", "into": "resourceLabels"}, "routes/0/method", "has no method 'setLabelz'"),
        ({"field": "resourceLabelz", "method": "setResourceLabels", "into": "resourceLabels"}, "routes/0/field", "Cluster has no field 'resourceLabelz'"),
        ({"field": "resourceLabels", "method": "setResourceLabels", "into": "labels"}, "routes/0/into", "SetLabelsRequest has no field 'labels'"),
        ({"field": "description", "method": "setResourceLabels", "into": "resourceLabels"}, "routes/0/into", "does not take a Cluster.description value"),
        ({"field": "nodeCount", "method": "setResourceLabels", "into": "resourceLabels", "writeOnly": True}, "routes/0/reason", "says why"),
    ],
)
def test_a_route_the_document_lacks_fails_generation_with_its_path(route: dict[str, Any], where: str, says: str) -> None:
    doc = parse_discovery(read_document(Path(__file__).resolve().parents[1] / "specs", "container.v1beta1"), "container.v1beta1.json")
    res = doc.resources["projects"].resources["locations"].resources["clusters"]
    cfg, u = _cfg(routes=[RouteConfig.model_validate(route).model_dump(by_alias=True, exclude_none=True)])
    with pytest.raises(SpecError) as e:
        routed_update("specs/kinds/container.yaml", 0, cfg, doc, res, "Cluster", u)
    assert f"specs/kinds/container.yaml#/kinds/0/methods/update/{where}" in str(e.value) and says in str(e.value)


def test_kccctl_keeps_the_applied_node_count_between_applies(tmp_path: Path) -> None:
    """``kccctl apply`` of the same manifests from a file: the applied node count
    lives in its state beside the object, so a re-apply sends nothing and a changed
    count is one setSize (the manifest itself never carries the annotation)."""
    from kccgen.runtime.gcp import Gcp
    from kccgen.runtime.local import StateDir, apply
    from tests.support.scenarios import running_mock

    def manifests(count: int) -> list[dict[str, Any]]:
        return [_cluster(), _pool(nodeCount=count, config={"machineType": "e2-medium"})]

    with running_mock() as s:
        state = StateDir(tmp_path / "state")
        gcp = Gcp(s.base_url, host_paths=True, lro_interval=0, sleep=lambda _: None)

        def run(count: int) -> list[tuple[str, str]]:
            since = len(s.log)
            with state.lock():
                out = apply(manifests(count), state, gcp, "p", kcc_object("ContainerCluster", "x", {})["metadata"]["namespace"])
            assert all(r.ready for r, _ in out), [(r.kind, r.reason, res.message) for r, res in out]
            return [(e.method, path_of(e).split("/clusters/", 1)[-1]) for e in list(s.log)[since:] if e.method in ("POST", "PUT", "PATCH", "DELETE")]

        assert [m for m, _ in run(2)] == ["POST", "POST"]  # the cluster, then the pool
        assert run(2) == []
        assert run(4) == [("POST", "c1/nodePools/pool:setSize")]
        assert run(4) == []
