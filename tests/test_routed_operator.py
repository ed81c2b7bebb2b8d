"""Issue 30, point 1 in a cluster: ``kccctl operator`` on the envtest API server
(``--core-api``: Namespaces and Events stored, no controllers) reconciles
Config Connector's basic node pool sample (a ContainerCluster and a
ContainerNodePool in Terraform's field names) against mockgcp: both Ready, then
a label change is one ``setResourceLabels``, a node count change one
``setSize`` (the applied count kept in the object's annotation, so the next
reconciles send nothing), and deleting both waits for their operations.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kccgen.contract import APPLIED_ANNOTATION
from kccgen.mockgcp.server import MockServer
from tests.support.envtest import Kube as Kubectl
from tests.support.operator import Kube, OperatorProcess, core_server

NS = "gke"
PROJECT = "gke-project"
KINDS = ("ContainerCluster", "ContainerNodePool")
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
META = {"namespace": NS, "annotations": {"cnrm.cloud.google.com/project-id": PROJECT, "cnrm.cloud.google.com/reconcile-interval-in-seconds": "2"}}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    with core_server(tmp_path_factory.mktemp("gke-server"), KINDS, NS) as kube:
        yield kube


def _cluster(labels: dict[str, str]) -> dict[str, Any]:
    # config/samples/resources/containernodepool/basic-node-pool, with labels of ours
    return {"kind": "ContainerCluster", "metadata": {"name": "containernodepool-dep-basic", **META}, "spec": {"location": "us-east1-c", "initialNodeCount": 1, "resourceLabels": labels}}


def _pool(count: int) -> dict[str, Any]:
    spec = {
        "location": "us-east1-c",
        "nodeCount": count,
        "autoscaling": {"minNodeCount": 1, "maxNodeCount": 3},
        "nodeConfig": {
            "machineType": "n1-standard-1",
            "diskSizeGb": 100,
            "diskType": "pd-standard",
            "tags": ["tagone", "tagtwo"],
            "preemptible": False,
            "minCpuPlatform": "Intel Haswell",
            "oauthScopes": ["https://www.googleapis.com/auth/logging.write", "https://www.googleapis.com/auth/monitoring"],
            "guestAccelerator": [{"type": "nvidia-tesla-t4", "count": 1}],
            "metadata": {"disable-legacy-endpoints": "true"},
        },
        "management": {"autoRepair": True, "autoUpgrade": True},
        "clusterRef": {"name": "containernodepool-dep-basic"},
    }
    return {"kind": "ContainerNodePool", "metadata": {"name": "containernodepool-sample-basic", **META}, "spec": spec}


def _writes(mock: MockServer, since: int) -> list[tuple[str, str]]:
    return [(e.method, e.url.split("/v1beta1/", 1)[-1].split("?", 1)[0]) for e in list(mock.log)[since:] if e.method in WRITES]


def _settle(mock: MockServer, since: int, want: int, timeout: float = 60) -> list[tuple[str, str]]:
    """The writes since ``since`` once there are ``want`` of them, after two more reconcile intervals."""
    deadline = time.monotonic() + timeout
    while len(_writes(mock, since)) < want and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(5)  # more reconciles: nothing more may be sent
    return _writes(mock, since)


def test_the_operator_creates_updates_by_route_and_deletes_a_cluster_and_pool(server: Kubectl, tmp_path: Path) -> None:
    kube = Kube(server.kubeconfig)
    log = tmp_path / "operator.log"
    cluster = f"projects/{PROJECT}/locations/us-east1-c/clusters/containernodepool-dep-basic"
    with MockServer() as mock:
        op = OperatorProcess(server.kubeconfig, mock.base_url, log, ("--crd-pattern", ";".join(KINDS), "--project", PROJECT, "--namespace", NS)).start()
        try:
            kube.apply(_cluster({"env": "dev"}))
            kube.apply(_pool(2))
            kube.wait_ready("ContainerCluster", NS, "containernodepool-dep-basic", timeout=120)
            obj = kube.wait_ready("ContainerNodePool", NS, "containernodepool-sample-basic", timeout=120)
            assert obj["metadata"]["annotations"][APPLIED_ANNOTATION] == '{"nodeCount":2}'
            created = mock.engine.resources[f"container.v1beta1|{cluster}/nodePools/containernodepool-sample-basic"]
            assert created["initialNodeCount"] == 2 and created["config"]["accelerators"] == [{"acceleratorType": "nvidia-tesla-t4", "acceleratorCount": "1"}]

            since = len(mock.log)
            kube.apply(_cluster({"env": "prod"}))
            assert _settle(mock, since, 1) == [("POST", f"{cluster}:setResourceLabels")]
            assert mock.engine.resources[f"container.v1beta1|{cluster}"]["resourceLabels"] == {"env": "prod"}

            since = len(mock.log)
            kube.apply(_pool(3))
            assert _settle(mock, since, 1) == [("POST", f"{cluster}/nodePools/containernodepool-sample-basic:setSize")]
            obj = kube.wait("ContainerNodePool", NS, "containernodepool-sample-basic", lambda o: (o or {}).get("metadata", {}).get("annotations", {}).get(APPLIED_ANNOTATION) == '{"nodeCount":3}')
            assert obj is not None

            since = len(mock.log)
            kube.delete("ContainerNodePool", NS, "containernodepool-sample-basic")
            kube.wait_gone("ContainerNodePool", NS, "containernodepool-sample-basic", timeout=60)
            kube.delete("ContainerCluster", NS, "containernodepool-dep-basic")
            kube.wait_gone("ContainerCluster", NS, "containernodepool-dep-basic", timeout=60)
            after = list(mock.log)[since:]
            assert [e.method for e in after if e.method in WRITES] == ["DELETE", "DELETE"]
            assert sum(1 for e in after if e.method == "GET" and "/operations/" in e.url) >= 2  # each delete waited for its operation
            assert f"container.v1beta1|{cluster}" not in mock.engine.resources
        finally:
            assert op.stop() == 0, op.tail()
