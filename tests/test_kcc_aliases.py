"""Config Connector's older field names (kind config ``aliases:``), end to end.

* the kind config is strict: an unknown key or a missing reason is a
  SpecError naming the file and the JSON path; a target that is not an API
  field of the Kind stops the build;
* every alias is a CRD property with a CEL rule refusing it together with its
  API field, and the pydantic model accepts it;
* ``kccctl apply`` of a manifest that uses the aliases sends mockgcp exactly the
  requests the same manifest written with the API fields sends, keeps the
  user's spelling in its state, and a second apply only reads.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import celpy
import pytest
import yaml
from celpy.adapter import json_to_cel

from kccgen.discovery.errors import SpecError
from kccgen.generator.emit.adapters import adapter_of
from kccgen.generator.emit.crds import crd
from kccgen.generator.ir.build import build_ir
from kccgen.generator.spec.kinds import load_kinds_file
from kccgen.generator.spec.loader import load_specs
from kccgen.mockgcp.engine import MockGCP
from kccgen.mockgcp.normalize import call_sequence
from kccgen.mockgcp.server import MockServer
from kccgen.runtime.adapter import adapter_for
from kccgen.runtime.aliases import AliasConflict, canonical_spec
from kccgen.runtime.local import dependency_order
from kccgen.runtime.reconciler import CREATE_LABEL
from kccgen.runtime.registry import types_modules
from tests.conftest import REPO
from tests.support.kinds import POLICY_KINDS
from tests.support.specs import curated_only
from tests.test_kcc_spellings import is_spelling
from tools.kcc_compat import crd_schemas, validator

CRDS = REPO / "generated" / "crds"
SCHEMAS = {kind: s for (_, kind), s in crd_schemas(CRDS).items() if kind not in POLICY_KINDS}
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
PROJECT = "demo-project"

# (Kind, spec with the aliases, the same spec with the API fields, dotted path
# in the create request body and the value it must carry)
CASES: list[tuple[str, dict[str, Any], dict[str, Any], str, Any]] = [
    (
        "Project",
        {"name": "My project", "organizationRef": {"external": "organizations/1234567"}},
        {"displayName": "My project", "organizationRef": {"external": "organizations/1234567"}},
        "displayName",
        "My project",
    ),
    (
        "BillingBudgetsBudget",
        {
            "billingAccountRef": {"external": "billingAccounts/000000-AAAAAA-BBBBBB"},
            "amount": {"specifiedAmount": {"currencyCode": "USD", "units": "100"}},
            "allUpdatesRule": {"schemaVersion": "1.0", "disableDefaultIamRecipients": True},
        },
        {
            "billingAccountRef": {"external": "billingAccounts/000000-AAAAAA-BBBBBB"},
            "amount": {"specifiedAmount": {"currencyCode": "USD", "units": "100"}},
            "notificationsRule": {"schemaVersion": "1.0", "disableDefaultIamRecipients": True},
        },
        "notificationsRule.schemaVersion",
        "1.0",
    ),
    (
        "StorageBucketAccessControl",
        {"bucketRef": {"external": "alias-bucket"}, "entity": "allAuthenticatedUsers", "role": "READER"},
        {"bucketRef": {"external": "alias-bucket"}, "resourceID": "allAuthenticatedUsers", "role": "READER"},
        "role",
        "READER",
    ),
    (
        "StorageDefaultObjectAccessControl",
        {"bucketRef": {"external": "alias-bucket"}, "entity": "allAuthenticatedUsers", "role": "READER"},
        {"bucketRef": {"external": "alias-bucket"}, "resourceID": "allAuthenticatedUsers", "role": "READER"},
        "role",
        "READER",
    ),
    (
        "StorageNotification",
        {
            "bucketRef": {"external": "alias-bucket"},
            "topicRef": {"external": f"projects/{PROJECT}/topics/t"},
            "payloadFormat": "JSON_API_V1",
            "eventTypes": ["OBJECT_FINALIZE"],
            "objectNamePrefix": "logs/",
            "customAttributes": {"team": "a"},
        },
        {
            "bucketRef": {"external": "alias-bucket"},
            "topicRef": {"external": f"projects/{PROJECT}/topics/t"},
            "payload_format": "JSON_API_V1",
            "event_types": ["OBJECT_FINALIZE"],
            "object_name_prefix": "logs/",
            "custom_attributes": {"team": "a"},
        },
        "event_types",
        ["OBJECT_FINALIZE"],
    ),
    (
        "ComputeNetwork",
        {"autoCreateSubnetworks": False, "routingMode": "GLOBAL"},
        {"autoCreateSubnetworks": False, "routingConfig": {"routingMode": "GLOBAL"}},
        "routingConfig.routingMode",
        "GLOBAL",
    ),
    (
        "ComputeSubnetwork",
        {
            "region": "us-central1",
            "ipCidrRange": "10.2.0.0/16",
            "networkRef": {"external": f"projects/{PROJECT}/global/networks/net1"},
            "secondaryIpRange": [{"rangeName": "pods", "ipCidrRange": "10.3.0.0/16"}],
        },
        {
            "region": "us-central1",
            "ipCidrRange": "10.2.0.0/16",
            "networkRef": {"external": f"projects/{PROJECT}/global/networks/net1"},
            "secondaryIpRanges": [{"rangeName": "pods", "ipCidrRange": "10.3.0.0/16"}],
        },
        "secondaryIpRanges",
        [{"rangeName": "pods", "ipCidrRange": "10.3.0.0/16"}],
    ),
    (
        "StorageBucket",
        {
            "location": "US",
            "uniformBucketLevelAccess": True,
            "bucketPolicyOnly": True,
            "lifecycleRule": [
                {"action": {"type": "Delete"}, "condition": {"age": 7, "withState": "ARCHIVED"}},
                {"action": {"type": "Delete"}, "condition": {"age": 30, "withState": "ANY"}},
            ],
        },
        {
            "location": "US",
            "iamConfiguration": {"uniformBucketLevelAccess": {"enabled": True}, "bucketPolicyOnly": {"enabled": True}},
            "lifecycle": {
                "rule": [
                    {"action": {"type": "Delete"}, "condition": {"age": 7, "isLive": False}},
                    {"action": {"type": "Delete"}, "condition": {"age": 30}},
                ]
            },
        },
        "lifecycle.rule",
        [
            {"action": {"type": "Delete"}, "condition": {"age": 7, "isLive": False}},
            {"action": {"type": "Delete"}, "condition": {"age": 30}},
        ],
    ),
    (
        "SpannerInstance",
        {"config": f"projects/{PROJECT}/instanceConfigs/regional-us-west1", "displayName": "s", "numNodes": 2},
        {"config": f"projects/{PROJECT}/instanceConfigs/regional-us-west1", "displayName": "s", "nodeCount": 2},
        "instance.nodeCount",
        2,
    ),
    (
        "PubSubSnapshot",
        {"pubSubSubscriptionRef": {"external": f"projects/{PROJECT}/subscriptions/sub"}},
        {"subscriptionRef": {"external": f"projects/{PROJECT}/subscriptions/sub"}},
        "subscription",
        f"projects/{PROJECT}/subscriptions/sub",
    ),
    (
        "MonitoringAlertPolicy",
        {
            "displayName": "p",
            "combiner": "OR",
            "conditions": [{"displayName": "c", "conditionAbsent": {"filter": 'resource.type="gce_instance"', "duration": "120s"}}],
            "notificationChannels": [{"external": f"projects/{PROJECT}/notificationChannels/123"}],
        },
        {
            "displayName": "p",
            "combiner": "OR",
            "conditions": [{"displayName": "c", "conditionAbsent": {"filter": 'resource.type="gce_instance"', "duration": "120s"}}],
            "notificationChannelRefs": [{"external": f"projects/{PROJECT}/notificationChannels/123"}],
        },
        "notificationChannels",
        [f"projects/{PROJECT}/notificationChannels/123"],
    ),
    # Derived Kinds: aliases under the kind file's overrides.
    (
        "NotebookInstance",
        {"zone": "us-central1-a", "machineType": "n1-standard-1", "bootDiskSizeGB": 100, "dataDiskSizeGB": 200, "canIPForward": True, "noPublicIP": True, "shieldedInstanceConfig": {"enableVTPM": True}},
        {"zone": "us-central1-a", "machineType": "n1-standard-1", "bootDiskSizeGb": 100, "dataDiskSizeGb": 200, "canIpForward": True, "noPublicIp": True, "shieldedInstanceConfig": {"enableVtpm": True}},
        "noPublicIp",
        True,
    ),
    ("ComputeDisk", {"zone": "us-central1-a", "size": 10}, {"zone": "us-central1-a", "sizeGb": 10}, "sizeGb", "10"),
    # the create's required ?initialNodeCount= (a query parameter, not a field of NodeGroup)
    ("ComputeNodeGroup", {"zone": "us-central1-b", "size": 1}, {"zone": "us-central1-b", "initialNodeCount": 1}, "?initialNodeCount", "1"),
    ("ComputeNodeGroup", {"zone": "us-central1-b", "initialSize": 2}, {"zone": "us-central1-b", "initialNodeCount": 2}, "?initialNodeCount", "2"),
    (
        "ComputeImage",
        {"diskRef": {"external": f"projects/{PROJECT}/zones/us-central1-a/disks/d1"}},
        {"sourceDiskRef": {"external": f"projects/{PROJECT}/zones/us-central1-a/disks/d1"}},
        "sourceDisk",
        f"projects/{PROJECT}/zones/us-central1-a/disks/d1",
    ),
    (
        "ComputeVPNTunnel",
        {"region": "us-central1", "sharedSecret": {"value": "s3cret"}, "targetVPNGatewayRef": {"external": f"projects/{PROJECT}/regions/us-central1/targetVpnGateways/g1"}},
        {"region": "us-central1", "sharedSecret": {"value": "s3cret"}, "targetVpnGatewayRef": {"external": f"projects/{PROJECT}/regions/us-central1/targetVpnGateways/g1"}},
        "targetVpnGateway",
        f"projects/{PROJECT}/regions/us-central1/targetVpnGateways/g1",
    ),
    (
        "ComputeTargetTCPProxy",
        {"backendServiceRef": {"external": f"projects/{PROJECT}/global/backendServices/bs1"}},
        {"serviceRef": {"external": f"projects/{PROJECT}/global/backendServices/bs1"}},
        "service",
        f"projects/{PROJECT}/global/backendServices/bs1",
    ),
    (
        "ComputeInstance",
        {"zone": "us-central1-a", "instanceTemplateRef": {"external": f"projects/{PROJECT}/global/instanceTemplates/t1"}},
        {"zone": "us-central1-a", "sourceInstanceTemplateRef": {"external": f"projects/{PROJECT}/global/instanceTemplates/t1"}},
        "?sourceInstanceTemplate",  # a query parameter of instances.insert
        f"projects/{PROJECT}/global/instanceTemplates/t1",
    ),
    (
        "ComputeInstance",
        {
            "zone": "us-central1-a",
            "machineType": "zones/us-central1-a/machineTypes/n1-standard-1",
            "bootDisk": {"autoDelete": False, "initializeParams": {"size": 20, "type": "pd-ssd", "sourceImageRef": {"external": "projects/debian-cloud/global/images/debian-12"}}},
            "attachedDisk": [{"sourceDiskRef": {"external": f"projects/{PROJECT}/zones/us-central1-a/disks/d2"}, "mode": "READ_ONLY"}],
            "networkInterface": [{"networkRef": {"external": f"projects/{PROJECT}/global/networks/net1"}, "networkIp": "10.0.0.2", "accessConfig": [{"networkTier": "PREMIUM"}]}],
            "serviceAccount": {"serviceAccountRef": {"external": f"projects/{PROJECT}/serviceAccounts/sa1@{PROJECT}.iam.gserviceaccount.com"}, "scopes": ["cloud-platform"]},
            "guestAccelerator": [{"type": "nvidia-tesla-t4", "count": 1}],
            "metadataStartupScript": "echo hi",
        },
        {
            "zone": "us-central1-a",
            "machineType": "zones/us-central1-a/machineTypes/n1-standard-1",
            "disks": [
                {"autoDelete": False, "boot": True, "initializeParams": {"diskSizeGb": 20, "diskType": "pd-ssd", "sourceImageRef": {"external": "projects/debian-cloud/global/images/debian-12"}}},
                {"sourceRef": {"external": f"projects/{PROJECT}/zones/us-central1-a/disks/d2"}, "mode": "READ_ONLY"},
            ],
            "networkInterfaces": [{"networkRef": {"external": f"projects/{PROJECT}/global/networks/net1"}, "networkIP": "10.0.0.2", "accessConfigs": [{"networkTier": "PREMIUM"}]}],
            "serviceAccounts": [{"emailRef": {"external": f"projects/{PROJECT}/serviceAccounts/sa1@{PROJECT}.iam.gserviceaccount.com"}, "scopes": ["cloud-platform"]}],
            "guestAccelerators": [{"acceleratorType": "nvidia-tesla-t4", "acceleratorCount": 1}],
            "metadata": {"items": [{"key": "startup-script", "value": "echo hi"}]},
        },
        "disks",  # the boot disk first, then the attached ones (Terraform's order)
        [
            {"autoDelete": False, "boot": True, "initializeParams": {"diskSizeGb": "20", "diskType": "pd-ssd", "sourceImage": "projects/debian-cloud/global/images/debian-12"}},
            {"source": f"projects/{PROJECT}/zones/us-central1-a/disks/d2", "mode": "READ_ONLY"},
        ],
    ),
    (
        "ComputeDisk",
        {"zone": "us-central1-a", "imageRef": {"external": "projects/debian-cloud/global/images/debian-12"}},
        {"zone": "us-central1-a", "sourceImageRef": {"external": "projects/debian-cloud/global/images/debian-12"}},
        "?sourceImage",  # a query parameter of disks.insert
        "projects/debian-cloud/global/images/debian-12",
    ),
    (
        "ComputeDisk",
        {"zone": "us-central1-a", "snapshotRef": {"external": f"projects/{PROJECT}/global/snapshots/s1"}},
        {"zone": "us-central1-a", "sourceSnapshotRef": {"external": f"projects/{PROJECT}/global/snapshots/s1"}},
        "sourceSnapshot",
        f"projects/{PROJECT}/global/snapshots/s1",
    ),
    (
        "ComputeBackendService",
        {"connectionDrainingTimeoutSec": 30, "backend": [{"balancingMode": "UTILIZATION"}]},
        {"connectionDraining": {"drainingTimeoutSec": 30}, "backends": [{"balancingMode": "UTILIZATION"}]},
        "connectionDraining.drainingTimeoutSec",
        30,
    ),
    (
        "ComputeForwardingRule",
        {"region": "us-central1", "ipProtocol": "UDP", "portRange": "53"},
        {"region": "us-central1", "IPProtocol": "UDP", "portRange": "53"},
        "IPProtocol",
        "UDP",
    ),
    (
        "ComputeRegionBackendService",
        {"region": "us-central1", "connectionDrainingTimeoutSec": 30, "backend": [{"balancingMode": "CONNECTION"}]},
        {"region": "us-central1", "connectionDraining": {"drainingTimeoutSec": 30}, "backends": [{"balancingMode": "CONNECTION"}]},
        "connectionDraining.drainingTimeoutSec",
        30,
    ),
    (
        "ComputeGlobalForwardingRule",
        {"ipProtocol": "TCP", "portRange": "443"},
        {"IPProtocol": "TCP", "portRange": "443"},
        "IPProtocol",
        "TCP",
    ),
    (
        "ComputeInstanceGroup",
        {"zone": "us-central1-a", "namedPort": [{"name": "http", "port": 80}]},
        {"zone": "us-central1-a", "namedPorts": [{"name": "http", "port": 80}]},
        "namedPorts",
        [{"name": "http", "port": 80}],
    ),
    (
        "ComputeInstanceTemplate",
        {
            "description": "t",
            "machineType": "n1-standard-1",
            "canIpForward": False,
            "instanceDescription": "made from t",
            "advancedMachineFeatures": {"threadsPerCore": 1},
            "confidentialInstanceConfig": {"enableConfidentialCompute": False},
            "minCpuPlatform": "Intel Skylake",
            "networkPerformanceConfig": {"totalEgressBandwidthTier": "DEFAULT"},
            "resourcePolicies": [{"external": f"projects/{PROJECT}/regions/us-central1/resourcePolicies/rp1"}],
            "scheduling": {"automaticRestart": True, "onHostMaintenance": "MIGRATE"},
            "shieldedInstanceConfig": {"enableVtpm": True},
            "tags": ["web"],
            "metadata": [{"key": "foo", "value": "bar"}],
            "metadataStartupScript": "echo hi",
            "guestAccelerator": [{"type": "nvidia-tesla-t4", "count": 1}],
            "serviceAccount": {"serviceAccountRef": {"external": f"projects/{PROJECT}/serviceAccounts/sa1@{PROJECT}.iam.gserviceaccount.com"}, "scopes": ["cloud-platform"]},
            "disk": [
                {"sourceDiskRef": {"external": "disk1"}, "boot": True, "autoDelete": False},
                {"sourceImageRef": {"external": "projects/debian-cloud/global/images/debian-12"}, "diskSizeGb": 10, "diskType": "pd-ssd", "diskName": "data", "labels": {"a": "b"}},
            ],
            "networkInterface": [
                {
                    "networkRef": {"external": f"projects/{PROJECT}/global/networks/net1"},
                    "networkIp": "10.0.0.2",
                    "aliasIpRange": [{"ipCidrRange": "/24"}],
                    "accessConfig": [{"networkTier": "PREMIUM"}],
                }
            ],
            "region": "us-central1",
        },
        {
            "description": "t",
            "properties": {
                "machineType": "n1-standard-1",
                "canIpForward": False,
                "description": "made from t",
                "advancedMachineFeatures": {"threadsPerCore": 1},
                "confidentialInstanceConfig": {"enableConfidentialCompute": False},
                "minCpuPlatform": "Intel Skylake",
                "networkPerformanceConfig": {"totalEgressBandwidthTier": "DEFAULT"},
                "resourcePolicyRefs": [{"external": f"projects/{PROJECT}/regions/us-central1/resourcePolicies/rp1"}],
                "scheduling": {"automaticRestart": True, "onHostMaintenance": "MIGRATE"},
                "shieldedInstanceConfig": {"enableVtpm": True},
                "tags": {"items": ["web"]},
                "metadata": {"items": [{"key": "foo", "value": "bar"}, {"key": "startup-script", "value": "echo hi"}]},
                "guestAccelerators": [{"acceleratorType": "nvidia-tesla-t4", "acceleratorCount": 1}],
                "serviceAccounts": [{"emailRef": {"external": f"projects/{PROJECT}/serviceAccounts/sa1@{PROJECT}.iam.gserviceaccount.com"}, "scopes": ["cloud-platform"]}],
                "disks": [
                    {"sourceRef": {"external": "disk1"}, "boot": True, "autoDelete": False},
                    {"initializeParams": {"sourceImageRef": {"external": "projects/debian-cloud/global/images/debian-12"}, "diskSizeGb": 10, "diskType": "pd-ssd", "diskName": "data", "labels": {"a": "b"}}},
                ],
                "networkInterfaces": [
                    {
                        "networkRef": {"external": f"projects/{PROJECT}/global/networks/net1"},
                        "networkIP": "10.0.0.2",
                        "aliasIpRanges": [{"ipCidrRange": "/24"}],
                        "accessConfigs": [{"networkTier": "PREMIUM"}],
                    }
                ],
            },
        },
        "properties.disks",  # the disk's bare name (a template's zonal disk), the image's URL
        [{"source": "disk1", "boot": True, "autoDelete": False}, {"initializeParams": {"sourceImage": "projects/debian-cloud/global/images/debian-12", "diskSizeGb": "10", "diskType": "pd-ssd", "diskName": "data", "labels": {"a": "b"}}}],
    ),
    (
        "BinaryAuthorizationAttestor",
        {"userOwnedDrydockNote": {"noteRef": {"external": f"projects/{PROJECT}/notes/n1"}}},
        {"userOwnedGrafeasNote": {"noteRef": {"external": f"projects/{PROJECT}/notes/n1"}}},
        "userOwnedGrafeasNote.noteReference",
        f"projects/{PROJECT}/notes/n1",
    ),
]


def _obj(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    av = next(a for (a, k) in crd_schemas(CRDS) if k == kind)
    return {"apiVersion": av, "kind": kind, "metadata": {"name": "x1"}, "spec": copy.deepcopy(spec)}


# --- the kind config ------------------------------------------------------------------------


def _kinds_file(tmp_path: Path, alias: dict[str, Any]) -> Path:
    doc = yaml.safe_load((REPO / "specs" / "kinds" / "compute.yaml").read_text(encoding="utf-8"))
    assert doc["kinds"][0]["kind"] == "ComputeNetwork"
    doc["kinds"][0]["aliases"] = [alias]
    p = tmp_path / "compute.yaml"
    p.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return p


def test_an_alias_without_reason_is_refused(tmp_path: Path) -> None:
    p = _kinds_file(tmp_path, {"field": "routingMode", "apiField": "routingConfig.routingMode"})
    with pytest.raises(SpecError) as e:
        load_kinds_file(p, "specs/kinds/compute.yaml")
    assert str(e.value).startswith("specs/kinds/compute.yaml#/kinds/0/aliases/0/reason: ")


def test_an_unknown_alias_key_is_refused(tmp_path: Path) -> None:
    p = _kinds_file(tmp_path, {"field": "routingMode", "apiFeild": "routingConfig.routingMode", "reason": "r"})
    with pytest.raises(SpecError) as e:
        load_kinds_file(p, "specs/kinds/compute.yaml")
    assert str(e.value) == (
        "specs/kinds/compute.yaml#/kinds/0/aliases/0/apiFeild: unknown key 'apiFeild' (did you mean 'apiField'?)"
    )


@pytest.mark.parametrize(
    ("alias", "message"),
    [
        ({"field": "routingMode", "apiField": "routingConfig.routingModes", "reason": "r"}, "has no API field 'routingModes'"),
        ({"field": "mtu", "apiField": "mtu", "reason": "r"}, "alias 'mtu' is already a spec field"),
        (
            {"field": "routingMode", "apiField": "routingConfig.routingMode", "reason": "r", "items": [{"field": "a", "apiField": "b"}]},
            "items need a list of objects",
        ),
    ],
)
def test_a_bad_alias_target_stops_the_build(alias: dict[str, Any], message: str, tmp_path: Path) -> None:
    specs = curated_only(load_specs(REPO / "specs"))
    kf = load_kinds_file(_kinds_file(tmp_path, alias), "specs/kinds/compute.yaml")
    kinds = tuple((path, kf if path == "specs/kinds/compute.yaml" else f) for path, f in specs.kinds)
    assert kinds != specs.kinds
    bad = dataclasses.replace(specs, kinds=kinds)
    with pytest.raises(SpecError, match=message) as e:
        build_ir(bad)
    assert str(e.value).startswith("specs/kinds/compute.yaml#/kinds/0/aliases/0/")


def test_values_of_a_scalar_alias_become_an_enum_and_runtime_data(tmp_path: Path) -> None:
    """The whole path of a value mapping: kind config -> CRD enum -> adapter data -> runtime."""
    alias = {"field": "routingMode", "apiField": "routingConfig.routingMode", "reason": "r", "values": {"regional": "REGIONAL", "global": "GLOBAL"}}
    specs = curated_only(load_specs(REPO / "specs"))
    kf = load_kinds_file(_kinds_file(tmp_path, alias), "specs/kinds/compute.yaml")
    ir = build_ir(dataclasses.replace(specs, kinds=tuple((p, kf if p == "specs/kinds/compute.yaml" else f) for p, f in specs.kinds)))
    k = ir.kind("ComputeNetwork")
    prop = crd(ir, k)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["routingMode"]
    assert sorted(prop["enum"]) == ["global", "regional"]
    a = adapter_of(k)
    assert dict(a.aliases[0].values) == {"regional": "REGIONAL", "global": "GLOBAL"}
    assert canonical_spec(a, {"routingMode": "global", "mtu": 1500}) == {"mtu": 1500, "routingConfig": {"routingMode": "GLOBAL"}}


# --- CRD, CEL and model ---------------------------------------------------------------------


def _alias_rules(kind: str) -> list[str]:
    spec = SCHEMAS[kind]["properties"]["spec"]
    return [r["rule"] for r in spec["x-kubernetes-validations"] if "Config Connector's name" in r["message"]]


def _cel(rule: str, spec: dict[str, Any]) -> bool:
    env = celpy.Environment()
    return bool(env.program(env.compile(rule)).evaluate({"self": json_to_cel(spec)}))


@pytest.mark.parametrize(("kind", "alias_spec", "api_spec"), [c[:3] for c in CASES], ids=[c[0] for c in CASES])
def test_crd_model_and_cel_accept_either_spelling_but_not_both(kind: str, alias_spec: dict[str, Any], api_spec: dict[str, Any]) -> None:
    v = validator(SCHEMAS[kind])
    model = getattr(types_modules()[kind], kind)
    rules = _alias_rules(kind)
    assert rules
    for spec in (alias_spec, api_spec):
        assert [e.message for e in v.iter_errors(_obj(kind, spec))] == []
        model.model_validate(_obj(kind, spec))
        assert all(_cel(r, spec) for r in rules)
    both = {**api_spec, **alias_spec}
    assert not all(_cel(r, both) for r in rules)
    with pytest.raises(AliasConflict, match="set one of the two, not both"):
        canonical_spec(adapter_for(kind), both)


@pytest.mark.parametrize(("kind", "alias_spec", "api_spec"), [c[:3] for c in CASES], ids=[c[0] for c in CASES])
def test_canonical_spec_is_the_api_spelling(kind: str, alias_spec: dict[str, Any], api_spec: dict[str, Any]) -> None:
    assert canonical_spec(adapter_for(kind), alias_spec) == api_spec


def _uses(spec: Any, field: str) -> bool:
    """Whether ``spec`` sets the (dotted, ``[]``-stepping) alias path ``field``."""
    head, _, rest = field.partition(".")
    key = head.removesuffix("[]")
    if not isinstance(spec, dict) or key not in spec:
        return False
    if not rest:
        return True
    value = spec[key]
    return any(_uses(v, rest) for v in value) if head.endswith("[]") and isinstance(value, list) else _uses(value, rest)


def test_every_alias_is_exercised_by_a_case() -> None:
    from tests.test_kcc_alias_shapes import (
        CASES as SHAPES,  # the aliases of other shapes than a rename
    )

    # Config Connector's case-only spellings (derived from its CRD paths) are exercised,
    # every one of every Kind, by tests/test_kcc_spellings.py
    declared = sorted((k, a.field) for k in SCHEMAS for a in adapter_for(k).aliases if not is_spelling(a))
    used = sorted({(kind, a.field) for kind, spec, *_ in (*CASES, *SHAPES, *NOWHERE) for a in adapter_for(kind).aliases if _uses(spec, a.field) and not is_spelling(a)})
    assert declared == used


def test_a_reference_under_an_alias_orders_its_target_first() -> None:
    policy = _obj("MonitoringAlertPolicy", {"notificationChannels": [{"name": "zz-channel"}]})
    channel = _obj("MonitoringNotificationChannel", {"type": "email"})
    channel["metadata"]["name"] = "zz-channel"
    assert [o["kind"] for o in dependency_order([policy, channel])] == ["MonitoringNotificationChannel", "MonitoringAlertPolicy"]


# --- kccctl against mockgcp -----------------------------------------------------------------


def _kccctl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kccgen.runtime.cli", *args], cwd=REPO, capture_output=True, text=True, check=False, timeout=120)


def _untokened(body: Any) -> Any:
    """A service-named create's one-time label is random: its value is not compared."""
    if isinstance(body, dict):
        return {k: "<token>" if k == CREATE_LABEL else _untokened(v) for k, v in body.items()}
    return body


def _apply(tmp_path: Path, name: str, obj: dict[str, Any], times: int = 1) -> tuple[list[list[Any]], list[list[str]], Path]:
    """Apply ``obj`` ``times`` times on a fresh mockgcp: the writes and calls of each apply."""
    manifest = tmp_path / f"{name}.yaml"
    manifest.write_text(yaml.safe_dump(obj), encoding="utf-8")
    state = tmp_path / f"{name}-state"
    writes, calls = [], []
    with MockServer(MockGCP(lro_polls=1)) as s:
        for _ in range(times):
            s.clear_log()
            r = _kccctl("apply", "-f", str(manifest), "--state", str(state), "--endpoint", s.base_url, "--project", PROJECT, "--host-paths")
            assert r.returncode == 0, r.stdout + r.stderr
            writes.append([(e.method, e.url.split("://", 1)[-1].split("/", 1)[-1], _untokened(e.request_json)) for e in s.log if e.method in WRITES])
            calls.append(call_sequence(s.log))
    return writes, calls, state


def _at(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = obj[part]
    return obj


# A snapshot's subscription must exist before its create: one object on a fresh mockgcp
# cannot show it (the CRD, model, CEL and canonical-spec tests above cover its alias).
KCCCTL_CASES = [c for c in CASES if c[0] != "PubSubSnapshot"]


@pytest.mark.parametrize(("kind", "alias_spec", "api_spec", "path", "value"), KCCCTL_CASES, ids=[c[0] for c in KCCCTL_CASES])
def test_kccctl_sends_the_same_requests_for_an_alias(
    kind: str, alias_spec: dict[str, Any], api_spec: dict[str, Any], path: str, value: Any, tmp_path: Path
) -> None:
    via_alias, alias_calls, state = _apply(tmp_path, "alias", _obj(kind, alias_spec), times=2)
    via_api, api_calls, _ = _apply(tmp_path, "api", _obj(kind, api_spec))
    assert json.dumps(via_alias[0], sort_keys=True) == json.dumps(via_api[0], sort_keys=True)
    url, create = next((url, body) for method, url, body in via_alias[0] if method in ("POST", "PUT"))
    if path.startswith("?"):
        assert parse_qs(urlsplit(url).query)[path[1:]] == [value]
    else:
        assert _at(create, path) == value
    assert alias_calls[0] == api_calls[0]
    assert via_alias[1] == []  # the second apply only reads: nothing differs
    stored = yaml.safe_load(next(state.rglob("*.yaml")).read_text(encoding="utf-8"))
    assert stored["spec"] == alias_spec  # the user's spelling is kept


@pytest.mark.parametrize(
    ("alias", "message"),
    [
        ({"field": "region", "reason": "r", "values": {"a": "b"}}, "an alias with no apiField is sent nowhere"),
    ],
)
def test_a_malformed_list_alias_is_refused(alias: dict[str, Any], message: str, tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=message) as e:
        load_kinds_file(_kinds_file(tmp_path, alias), "specs/kinds/compute.yaml")
    assert str(e.value).startswith("specs/kinds/compute.yaml#/kinds/0/aliases/0")


def test_an_into_alias_needs_an_object_with_that_field(tmp_path: Path) -> None:
    alias = {"field": "mode", "apiField": "routingConfig.routingMode", "into": "value", "reason": "r"}
    specs = curated_only(load_specs(REPO / "specs"))
    kf = load_kinds_file(_kinds_file(tmp_path, alias), "specs/kinds/compute.yaml")
    with pytest.raises(SpecError, match=r"into names a sub-field of the object routingConfig\.routingMode is") as e:
        build_ir(dataclasses.replace(specs, kinds=tuple((p, kf if p == "specs/kinds/compute.yaml" else f) for p, f in specs.kinds)))
    assert str(e.value).startswith("specs/kinds/compute.yaml#/kinds/0/aliases/0/into: ")


def test_an_element_alias_needs_a_list_of_objects(tmp_path: Path) -> None:
    alias = {"field": "mode", "apiField": "routingConfig.routingMode", "element": True, "reason": "r"}
    specs = curated_only(load_specs(REPO / "specs"))
    kf = load_kinds_file(_kinds_file(tmp_path, alias), "specs/kinds/compute.yaml")
    with pytest.raises(SpecError, match=r"routingConfig\.routingMode is not a list of objects") as e:
        build_ir(dataclasses.replace(specs, kinds=tuple((p, kf if p == "specs/kinds/compute.yaml" else f) for p, f in specs.kinds)))
    assert str(e.value).startswith("specs/kinds/compute.yaml#/kinds/0/aliases/0/element: ")


#: Aliases with no API field (Kind, a spec using it, the spec it becomes): accepted, sent nowhere.
NOWHERE = [
    ("ContainerCluster", {"location": "us-central1-a", "nodeVersion": "1.33"}, {"location": "us-central1-a"}),
    ("ContainerNodePool", {"location": "us-central1-a", "clusterRef": {"name": "c1"}, "namePrefix": "pool-"}, {"location": "us-central1-a", "clusterRef": {"name": "c1"}}),
    (
        "ComputeSnapshot",
        {"zone": "us-central1-a", "sourceDiskRef": {"external": f"projects/{PROJECT}/zones/us-central1-a/disks/d1"}},
        {"sourceDiskRef": {"external": f"projects/{PROJECT}/zones/us-central1-a/disks/d1"}},
    ),
]


@pytest.mark.parametrize(("kind", "alias_spec", "api_spec"), NOWHERE, ids=[c[0] for c in NOWHERE])
def test_a_sent_nowhere_alias_validates_and_leaves_the_spec(kind: str, alias_spec: dict[str, Any], api_spec: dict[str, Any]) -> None:
    assert [e.message for e in validator(SCHEMAS[kind]).iter_errors(_obj(kind, alias_spec))] == []
    assert canonical_spec(adapter_for(kind), alias_spec) == api_spec


def test_an_alias_with_no_api_field_is_accepted_and_sent_nowhere() -> None:
    a = adapter_for("ComputeInstanceTemplate")
    assert canonical_spec(a, {"region": "us-central1", "machineType": "n1-standard-1"}) == {"properties": {"machineType": "n1-standard-1"}}
    assert SCHEMAS["ComputeInstanceTemplate"]["properties"]["spec"]["properties"]["region"]["type"] == "string"
