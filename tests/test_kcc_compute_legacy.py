"""Config Connector's Terraform-era compute manifests, reconciled on mockgcp.

ComputeInstanceTemplate, ComputeInstance and ComputeInstanceGroup as Config
Connector writes them (``disk[]``, ``networkInterface[]``, ``bootDisk``,
``metadata`` as a list, ``tags``...) are kind-config aliases; here each
KCC-shaped manifest is applied with ``kccctl``'s runner on mockgcp, and the
create must carry the body Config Connector sends (hand-written extracts of
its recorded ``_http.log``, pkg/test/resourcefixture/testdata/basic/compute/
v1beta1/computeinstancetemplate and computeinstancegroup/computeinstancegroup),
a second apply must write nothing, and an alias set beside its API field is
refused by name.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from kccgen.mockgcp import MockServer
from kccgen.runtime.adapter import adapter_for
from kccgen.runtime.aliases import AliasConflict, canonical_spec
from kccgen.runtime.gcp import Gcp
from kccgen.runtime.local import StateDir, apply

P = "p"
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _obj(kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    api = "compute.cnrm.cloud.google.com/v1beta1"
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name}, "spec": copy.deepcopy(spec)}


# KCC's fixture create.yaml (computeinstancetemplate), its dependencies as externals.
TEMPLATE = {
    "description": "a basic instance template example",
    "machineType": "n1-standard-1",
    "region": "us-central1",
    "metadata": [{"key": "foo", "value": "bar"}, {"key": "bar", "value": "baz"}],
    "disk": [
        {"sourceDiskRef": {"external": "computedisk-1"}, "autoDelete": False, "boot": True},
        {"sourceImageRef": {"external": f"projects/{P}/global/images/computeimage-1"}, "autoDelete": True, "boot": False},
    ],
    "networkInterface": [
        {
            "networkRef": {"external": f"projects/{P}/global/networks/computenetwork-1"},
            "subnetworkRef": {"external": f"projects/{P}/regions/us-central1/subnetworks/computesubnetwork-1"},
        }
    ],
}

# Its recorded instanceTemplates.insert body, less what Terraform adds on its own:
# the API's defaults (interface SCSI, mode READ_WRITE, type PERSISTENT, diskType
# pd-standard, onHostMaintenance MIGRATE), an empty tags and the labels KCC copies
# from metadata.labels. Terraform leaves out false; the metadata items are sorted.
RECORDED_TEMPLATE = {
    "description": "a basic instance template example",
    "name": "computeinstancetemplate-1",
    "properties": {
        "disks": [
            {"boot": True, "source": "computedisk-1"},
            {"autoDelete": True, "initializeParams": {"sourceImage": f"https://www.googleapis.com/compute/v1/projects/{P}/global/images/computeimage-1"}},
        ],
        "machineType": "n1-standard-1",
        "metadata": {"items": [{"key": "bar", "value": "baz"}, {"key": "foo", "value": "bar"}]},
        "networkInterfaces": [
            {
                "network": f"projects/{P}/global/networks/computenetwork-1",
                "subnetwork": f"projects/{P}/regions/us-central1/subnetworks/computesubnetwork-1",
            }
        ],
    },
}

# KCC's computeinstancegroup fixture without instances[] (added by addInstances, not served yet).
GROUP = {"namedPort": [{"name": "http", "port": 8080}, {"name": "https", "port": 8443}], "networkRef": {"external": f"projects/{P}/global/networks/default"}, "zone": "us-central1-a"}
# Recorded, less "zone": output-only in the body (the URL names it), which Terraform echoes.
RECORDED_GROUP = {
    "name": "computeinstancegroup-1",
    "namedPorts": [{"name": "http", "port": 8080}, {"name": "https", "port": 8443}],
    "network": f"projects/{P}/global/networks/default",
}

# KCC's sample computeinstance/instance-from-template (the instance).
INSTANCE = {"machineType": "n1-standard-2", "instanceTemplateRef": {"external": f"projects/{P}/global/instanceTemplates/t1"}, "zone": "us-west1-c"}


def _plain(v: Any) -> Any:
    """A body as the API reads it: false and empty values left out (Terraform omits
    them), URLs as their projects/... path, metadata items in key order."""
    if isinstance(v, dict):
        out = {k: _plain(x) for k, x in v.items() if x not in (False, None, "", [], {})}
        if isinstance(out.get("items"), list) and all(isinstance(i, dict) and "key" in i for i in out["items"]):
            out["items"] = sorted(out["items"], key=lambda i: i["key"])
        return out
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, str) and v.startswith("https://www.googleapis.com/compute/v1/"):
        return v.removeprefix("https://www.googleapis.com/compute/v1/")
    return v


def _apply_twice(tmp_path: Path, obj: dict[str, Any]) -> tuple[list[tuple[str, str, Any]], list[tuple[str, str, Any]]]:
    """The writes of a first and a second apply of ``obj`` on one mockgcp."""
    state = StateDir(tmp_path / "state")
    writes: list[list[tuple[str, str, Any]]] = []
    with MockServer() as s:
        for _ in range(2):
            s.clear_log()
            with state.lock():
                [(row, result)] = apply([copy.deepcopy(obj)], state, Gcp(s.base_url, host_paths=True, backoff=0.0), P)
            assert result.ready, (row, result.message)
            writes.append([(e.method, e.url, e.request_json) for e in s.log if e.method in WRITES and "/operations/" not in e.url])
    return writes[0], writes[1]


def _create(writes: list[tuple[str, str, Any]]) -> tuple[str, Any]:
    [(url, body)] = [(u, b) for m, u, b in writes if m == "POST"]
    return url, body


def test_a_kcc_template_sends_the_recorded_body_and_reapplies_without_writes(tmp_path: Path) -> None:
    first, second = _apply_twice(tmp_path, _obj("ComputeInstanceTemplate", "computeinstancetemplate-1", TEMPLATE))
    _, body = _create(first)
    assert _plain(body) == _plain(RECORDED_TEMPLATE)
    assert "region" not in body and "tags" not in body  # KCC-only, sent nowhere
    assert second == []


def test_a_kcc_instance_group_sends_its_network_and_reapplies_without_writes(tmp_path: Path) -> None:
    first, second = _apply_twice(tmp_path, _obj("ComputeInstanceGroup", "computeinstancegroup-1", GROUP))
    _, body = _create(first)
    assert _plain(body) == _plain(RECORDED_GROUP)
    assert second == []  # the group keeps its network: no change to make


def test_a_kcc_instance_from_a_template_names_it_and_its_machine_type_as_a_url(tmp_path: Path) -> None:
    first, second = _apply_twice(tmp_path, _obj("ComputeInstance", "computeinstance-1", INSTANCE))
    url, body = _create(first)
    # recorded (Terraform): ?sourceInstanceTemplate=projects/P/global/instanceTemplates/T,
    # and machine types as zones/Z/machineTypes/M (its setMachineType body)
    assert parse_qs(urlsplit(url).query)["sourceInstanceTemplate"] == [f"projects/{P}/global/instanceTemplates/t1"]
    assert body["machineType"] == "zones/us-west1-c/machineTypes/n1-standard-2"
    assert second == []


@pytest.mark.parametrize(
    ("kind", "spec", "message"),
    [
        ("ComputeInstanceTemplate", {"machineType": "n1-standard-1", "properties": {"machineType": "n1-standard-2"}}, "spec.machineType is Config Connector's name for spec.properties.machineType"),
        ("ComputeInstanceTemplate", {"tags": ["a"], "properties": {"tags": {"items": ["b"]}}}, "spec.tags is Config Connector's name for spec.properties.tags.items"),
        ("ComputeInstanceTemplate", {"disk": [{"diskSizeGb": 10, "initializeParams": {"diskSizeGb": 20}}]}, "spec.disk[0].diskSizeGb is Config Connector's name for spec.disk[0].initializeParams.diskSizeGb"),
        ("ComputeInstance", {"bootDisk": {"autoDelete": True}, "disks": [{"boot": True}]}, "spec.bootDisk is Config Connector's name for spec.disks"),
        ("ComputeInstance", {"metadataStartupScript": "x", "metadata": {"items": [{"key": "a", "value": "b"}]}}, "spec.metadataStartupScript is Config Connector's name for spec.metadata.items"),
    ],
)
def test_an_alias_beside_its_api_field_is_refused_by_name(kind: str, spec: dict[str, Any], message: str) -> None:
    with pytest.raises(AliasConflict) as e:
        canonical_spec(adapter_for(kind), spec)
    assert str(e.value).startswith(message)


def test_the_boot_disk_comes_first_and_attached_disks_follow() -> None:
    spec = {"attachedDisk": [{"sourceDiskRef": {"name": "d2"}}], "bootDisk": {"sourceDiskRef": {"name": "d1"}}}
    assert canonical_spec(adapter_for("ComputeInstance"), spec)["disks"] == [{"sourceRef": {"name": "d1"}, "boot": True}, {"sourceRef": {"name": "d2"}}]
