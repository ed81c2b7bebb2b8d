"""Config Connector's manifests whose spelling differs from the API's in shape, not only in name.

One case per alias class of the kind config (specs/kinds/*.yaml ``aliases:``),
each a small hand-written extract of a Config Connector sample and the body its
recorded traffic sends (pkg/test/resourcefixture/testdata/basic/.../_http.log):

* a nested alias (``settings.diskSize``; ``networks[].reservedIPRange`` in each
  element of a list; ``build.step``, whose API field is required);
* an alias of an object inside an object (SecretManagerSecret's
  ``replication.auto`` for the API's ``replication.automatic``);
* a list alias of a map keyed by an element field, with items renamed,
  regrouped and expanded (BigtableInstance's ``cluster[]`` for ``clusters{}``);
* list aliases with renamed items (ComputeFirewall's ``allow[].protocol``), and
  top-level renames;
* an ID the create call takes from the object's identity (``resourceID``),
  where the Kind had asked for it as a spec field.

For each: our CRD, CEL rules and pydantic model accept the manifest;
canonical_spec gives the API spelling; ``kccctl apply`` on mockgcp sends the
API-shaped create body, and a second apply writes nothing.
"""

from __future__ import annotations

import copy
from typing import Any

import celpy
import pytest
from celpy.adapter import json_to_cel

from kccgen.runtime.adapter import adapter_for
from kccgen.runtime.admission import admission_errors, immutable_changes
from kccgen.runtime.aliases import AliasConflict, canonical_spec
from kccgen.runtime.registry import types_modules
from tests.test_kcc_aliases import (
    PROJECT,
    SCHEMAS,
    _apply,
    _obj,
    test_a_bad_alias_target_stops_the_build,
)
from tools.kcc_compat import validator

ORG = {"external": "organizations/123456789012"}
ROUTER = {"external": f"projects/{PROJECT}/regions/us-central1/routers/r1"}
NETWORK = {"external": f"projects/{PROJECT}/global/networks/default"}
CLUSTER = {"external": f"projects/{PROJECT}/locations/us-central1/workstationClusters/c1"}
AUTOSCALING = {"cpuTarget": 70, "maxNodes": 5, "minNodes": 2}
API_AUTOSCALING = {"autoscalingTargets": {"cpuUtilizationPercent": 70}, "autoscalingLimits": {"maxServeNodes": 5, "minServeNodes": 2}}

GKE_CLUSTER_REF = {"external": f"projects/{PROJECT}/locations/us-central1-a/clusters/c1"}
GKE_CLUSTER: dict[str, Any] = {
    "location": "us-central1",
    "enableAutopilot": True,
    "allowNetAdmin": True,
    "enableBinaryAuthorization": True,
    "enableLegacyAbac": False,
    "enableShieldedNodes": True,
    "defaultMaxPodsPerNode": 16,
    "nodeLocations": ["us-central1-a"],
    "minMasterVersion": "1.33",
    "networkingMode": "VPC_NATIVE",
    "clusterAutoscaling": {"enabled": True, "autoscalingProfile": "BALANCED"},
    "datapathProvider": "ADVANCED_DATAPATH",
    "defaultSnatStatus": {"disabled": False},
    "dnsConfig": {"clusterDns": "CLOUD_DNS"},
    "enableIntranodeVisibility": True,
    "enableL4IlbSubsetting": True,
    "gatewayApiConfig": {"channel": "CHANNEL_STANDARD"},
    "privateIpv6GoogleAccess": "PRIVATE_IPV6_GOOGLE_ACCESS_DISABLED",
    "serviceExternalIpsConfig": {"enabled": False},
    "inTransitEncryptionConfig": "IN_TRANSIT_ENCRYPTION_DISABLED",
    "enableFqdnNetworkPolicy": True,
    "enableMultiNetworking": True,
    "enableCiliumClusterwideNetworkPolicy": True,
    "disableL4LbFirewallReconciliation": True,
    "loggingConfig": {"enableComponents": ["SYSTEM_COMPONENTS"]},
    "monitoringConfig": {"enableComponents": ["SYSTEM_COMPONENTS"]},
    "maintenancePolicy": {"dailyMaintenanceWindow": {"startTime": "03:00"}},
}
GKE_POOL: dict[str, Any] = {
    "location": "us-central1-a",
    "clusterRef": GKE_CLUSTER_REF,
    "nodeLocations": ["us-central1-a"],
    "maxPodsPerNode": 32,
    "nodeConfig": {
        "machineType": "n1-standard-1",
        "guestAccelerator": [{"type": "nvidia-tesla-t4", "count": 1}],
        "taint": [{"key": "k", "value": "v", "effect": "NO_SCHEDULE"}],
    },
}

# (Kind, Config Connector's spec, the spec in the API's spelling (canonical_spec),
# dotted path in the create request ("?p": a query parameter; digits index lists), its value)
BACKUP_CLUSTER = "projects/p1/locations/us-central1/clusters/c1"
KEY = "projects/p1/locations/us-central1/keyRings/r1/cryptoKeys/k1"
CASES: list[tuple[str, dict[str, Any], dict[str, Any], str, Any]] = [
    (
        "BigtableInstance",
        {
            "displayName": "BigtableSample",
            "instanceType": "PRODUCTION",
            "cluster": [
                {"clusterId": "cluster-1", "zone": "us-central1-a", "autoscalingConfig": AUTOSCALING},
                {"clusterId": "cluster-3", "zone": "us-central1-c", "numNodes": 3, "storageType": "HDD"},
            ],
        },
        {
            "displayName": "BigtableSample",
            "type": "PRODUCTION",
            "clusters": {
                "cluster-1": {"location": "us-central1-a", "clusterConfig": {"clusterAutoscalingConfig": API_AUTOSCALING}},
                "cluster-3": {"location": "us-central1-c", "serveNodes": 3, "defaultStorageType": "HDD"},
            },
        },
        "clusters",
        {
            "cluster-1": {"location": f"projects/{PROJECT}/locations/us-central1-a", "clusterConfig": {"clusterAutoscalingConfig": API_AUTOSCALING}},
            "cluster-3": {"location": f"projects/{PROJECT}/locations/us-central1-c", "serveNodes": 3, "defaultStorageType": "HDD"},
        },
    ),
    (
        "SecretManagerSecret",
        {"replication": {"auto": {"customerManagedEncryption": {"kmsKeyRef": {"external": "k"}}}}},
        {"replication": {"automatic": {"customerManagedEncryption": {"kmsKeyRef": {"external": "k"}}}}},
        "",
        None,
    ),
    (
        "SQLInstance",
        {
            "region": "us-central1",
            "databaseVersion": "MYSQL_5_7",
            "replicaConfiguration": {"connectRetryInterval": 30},
            "settings": {"tier": "db-g1-small", "diskSize": 25, "diskType": "PD_SSD"},
        },
        {
            "region": "us-central1",
            "databaseVersion": "MYSQL_5_7",
            "replicaConfiguration": {"mysqlReplicaConfiguration": {"connectRetryInterval": 30}},
            "settings": {"tier": "db-g1-small", "dataDiskSizeGb": 25, "dataDiskType": "PD_SSD"},
        },
        "settings.dataDiskSizeGb",
        "25",
    ),
    (
        "FilestoreInstance",
        {"location": "us-central1-a", "tier": "BASIC_HDD", "networks": [{"networkRef": NETWORK, "reservedIPRange": "10.0.0.0/29"}]},
        {"location": "us-central1-a", "tier": "BASIC_HDD", "networks": [{"networkRef": NETWORK, "reservedIpRange": "10.0.0.0/29"}]},
        "networks.0.reservedIpRange",
        "10.0.0.0/29",
    ),
    (
        "WorkstationConfig",
        {"workstationClusterRef": CLUSTER, "host": {"gceInstance": {"machineType": "e2-standard-4", "bootDiskSizeGB": 50}}},
        {"workstationClusterRef": CLUSTER, "host": {"gceInstance": {"machineType": "e2-standard-4", "bootDiskSizeGb": 50}}},
        "",
        None,
    ),
    (
        "CloudBuildTrigger",
        {"location": "global", "projectId": PROJECT, "build": {"step": [{"id": "s1", "name": "gcr.io/cloud-builders/go", "args": ["build"]}]}},
        {"location": "global", "projectId": PROJECT, "build": {"steps": [{"id": "s1", "name": "gcr.io/cloud-builders/go", "args": ["build"]}]}},
        "",
        None,
    ),
    (
        "BigQueryConnectionConnection",
        {
            "location": "us-central1",
            "cloudSQL": {"type": "MYSQL", "databaseRef": {"external": "db1"}},
            "azure": {"customerTenantID": "t1", "federatedApplicationClientID": "c1"},
            "aws": {"accessRole": {"iamRoleID": "arn:aws:iam::999999999999:role/omnirole"}},
        },
        {
            "location": "us-central1",
            "cloudSql": {"type": "MYSQL", "databaseRef": {"external": "db1"}},
            "azure": {"customerTenantId": "t1", "federatedApplicationClientId": "c1"},
            "aws": {"accessRole": {"iamRoleId": "arn:aws:iam::999999999999:role/omnirole"}},
        },
        "",
        None,
    ),
    (
        "ComputeFirewall",
        {"allow": [{"protocol": "tcp", "ports": ["80"]}], "deny": [{"protocol": "udp"}], "sourceRanges": ["10.0.0.0/8"]},
        {"allowed": [{"IPProtocol": "tcp", "ports": ["80"]}], "denied": [{"IPProtocol": "udp"}], "sourceRanges": ["10.0.0.0/8"]},
        "allowed",
        [{"IPProtocol": "tcp", "ports": ["80"]}],
    ),
    (
        "ComputeURLMap",
        {
            "hostRule": [{"hosts": ["example.com"], "pathMatcher": "allpaths"}],
            "pathMatcher": [{"name": "allpaths", "pathRule": [{"paths": ["/home"], "service": {"backendBucketRef": {"external": "b1"}}}]}],
            "test": [{"host": "example.com", "path": "/home", "service": {"backendBucketRef": {"external": "b1"}}}],
        },
        {
            "hostRules": [{"hosts": ["example.com"], "pathMatcher": "allpaths"}],
            "pathMatchers": [{"name": "allpaths", "pathRules": [{"paths": ["/home"], "service": {"backendBucketRef": {"external": "b1"}}}]}],
            "tests": [{"host": "example.com", "path": "/home", "service": {"backendBucketRef": {"external": "b1"}}}],
        },
        "",
        None,
    ),
    (
        "ComputeRegionURLMap",
        {
            "region": "us-central1",
            "hostRule": [{"hosts": ["example.com"], "pathMatcher": "allpaths"}],
            "pathMatcher": [{"name": "allpaths", "pathRule": [{"paths": ["/home"]}]}],
            "test": [{"host": "example.com", "path": "/home"}],
        },
        {
            "region": "us-central1",
            "hostRules": [{"hosts": ["example.com"], "pathMatcher": "allpaths"}],
            "pathMatchers": [{"name": "allpaths", "pathRules": [{"paths": ["/home"]}]}],
            "tests": [{"host": "example.com", "path": "/home"}],
        },
        "pathMatchers.0.pathRules",
        [{"paths": ["/home"]}],
    ),
    (
        "ComputeSecurityPolicy",
        {"rule": [{"action": "allow", "priority": 2147483647, "match": {"versionedExpr": "SRC_IPS_V1", "config": {"srcIpRanges": ["*"]}}}]},
        {"rules": [{"action": "allow", "priority": 2147483647, "match": {"versionedExpr": "SRC_IPS_V1", "config": {"srcIpRanges": ["*"]}}}]},
        "rules.0.action",
        "allow",
    ),
    (
        "IAMCustomRole",
        {"title": "t", "permissions": ["pubsub.topics.publish"], "stage": "GA"},
        {"title": "t", "includedPermissions": ["pubsub.topics.publish"], "stage": "GA"},
        "role.includedPermissions",
        ["pubsub.topics.publish"],
    ),
    (
        "ComputeExternalVPNGateway",
        {"redundancyType": "SINGLE_IP_INTERNALLY_REDUNDANT", "interface": [{"id": 0, "ipAddress": "8.8.8.8"}]},
        {"redundancyType": "SINGLE_IP_INTERNALLY_REDUNDANT", "interfaces": [{"id": 0, "ipAddress": "8.8.8.8"}]},
        "interfaces",
        [{"id": 0, "ipAddress": "8.8.8.8"}],
    ),
    (
        "ComputePacketMirroring",
        {"region": "us-west2", "network": {"urlRef": NETWORK}, "filter": {"ipProtocols": ["tcp"]}},
        {"region": "us-west2", "network": {"urlRef": NETWORK}, "filter": {"IPProtocols": ["tcp"]}},
        "",
        None,
    ),
    (
        "CloudBuildWorkerPool",
        {"location": "us-central1", "privatePoolV1Config": {"networkConfig": {"peeredNetworkRef": NETWORK, "peeredNetworkIPRange": "/29"}}},
        {"location": "us-central1", "privatePoolV1Config": {"networkConfig": {"peeredNetworkRef": NETWORK, "peeredNetworkIpRange": "/29"}}},
        "",
        None,
    ),
    (
        "ApigeeInstance",
        {"organizationRef": ORG, "location": "us-central1", "peeringCIDRRange": "SLASH_22"},
        {"organizationRef": ORG, "location": "us-central1", "peeringCidrRange": "SLASH_22"},
        "",
        None,
    ),
    # No alias: the ID the create takes comes from the identity (metadata.name here).
    (
        "DataprocAutoscalingPolicy",
        {"location": "us-central1", "workerConfig": {"maxInstances": 2}, "basicAlgorithm": {"yarnConfig": {"gracefulDecommissionTimeout": "30s", "scaleUpFactor": 0.5, "scaleDownFactor": 0.5}}},
        {"location": "us-central1", "workerConfig": {"maxInstances": 2}, "basicAlgorithm": {"yarnConfig": {"gracefulDecommissionTimeout": "30s", "scaleUpFactor": 0.5, "scaleDownFactor": 0.5}}},
        "id",
        "x1",
    ),
    # an entry of a router's list: Config Connector's subnetwork list, and its boolean enable for the API's TRUE/FALSE
    (
        "ComputeRouterNAT",
        {"routerRef": ROUTER, "subnetwork": [{"subnetworkRef": {"external": "s1"}, "sourceIpRangesToNat": ["ALL_IP_RANGES"]}]},
        {"routerRef": ROUTER, "subnetworks": [{"subnetworkRef": {"external": "s1"}, "sourceIpRangesToNat": ["ALL_IP_RANGES"]}]},
        "",
        None,
    ),
    ("ComputeRouterPeer", {"routerRef": ROUTER, "peerAsn": 65513, "enable": False}, {"routerRef": ROUTER, "peerAsn": 65513, "enable": "FALSE"}, "", None),
    # a secret version's payload and state (not applied here: tests/test_parent_verbs.py applies one)
    (
        "SecretManagerSecretVersion",
        {"secretRef": {"external": f"projects/{PROJECT}/secrets/s1"}, "secretData": {"value": "c2VjcmV0MQ=="}, "enabled": False},
        {"secretRef": {"external": f"projects/{PROJECT}/secrets/s1"}, "payload": {"data": {"value": "c2VjcmV0MQ=="}}, "state": "DISABLED"},
        "",
        None,
    ),
    # Config Connector's IP spellings in a firewall policy rule's match (not applied: its policy would be needed)
    (
        "ComputeFirewallPolicyRule",
        {"firewallPolicyRef": {"external": "locations/global/firewallPolicies/fp1"}, "priority": 9000, "action": "deny", "direction": "INGRESS",
         "match": {"layer4Configs": [{"ipProtocol": "tcp"}], "srcIPRanges": ["10.0.0.0/8"], "destIPRanges": ["10.1.0.0/16"]}},
        {"firewallPolicyRef": {"external": "locations/global/firewallPolicies/fp1"}, "priority": 9000, "action": "deny", "direction": "INGRESS",
         "match": {"layer4Configs": [{"ipProtocol": "tcp"}], "srcIpRanges": ["10.0.0.0/8"], "destIpRanges": ["10.1.0.0/16"]}},
        "",
        None,
    ),
    # Terraform's google_container_cluster names (Config Connector's ContainerCluster)
    (
        "ContainerCluster",
        GKE_CLUSTER,
        {
            "location": "us-central1",
            "autopilot": {"enabled": True, "workloadPolicyConfig": {"allowNetAdmin": True}},
            "autoscaling": {"autoscalingProfile": "BALANCED", "enableNodeAutoprovisioning": True},
            "binaryAuthorization": {"enabled": True},
            "defaultMaxPodsConstraint": {"maxPodsPerNode": 16},
            "initialClusterVersion": "1.33",
            "ipAllocationPolicy": {"useIpAliases": True},
            "legacyAbac": {"enabled": False},
            "locations": ["us-central1-a"],
            "loggingConfig": {"componentConfig": {"enableComponents": ["SYSTEM_COMPONENTS"]}},
            "maintenancePolicy": {"window": {"dailyMaintenanceWindow": {"startTime": "03:00"}}},
            "monitoringConfig": {"componentConfig": {"enableComponents": ["SYSTEM_COMPONENTS"]}},
            "networkConfig": {
                "datapathProvider": "ADVANCED_DATAPATH",
                "defaultSnatStatus": {"disabled": False},
                "disableL4LbFirewallReconciliation": True,
                "dnsConfig": {"clusterDns": "CLOUD_DNS"},
                "enableCiliumClusterwideNetworkPolicy": True,
                "enableFqdnNetworkPolicy": True,
                "enableIntraNodeVisibility": True,
                "enableL4ilbSubsetting": True,
                "enableMultiNetworking": True,
                "gatewayApiConfig": {"channel": "CHANNEL_STANDARD"},
                "inTransitEncryptionConfig": "IN_TRANSIT_ENCRYPTION_DISABLED",
                "privateIpv6GoogleAccess": "PRIVATE_IPV6_GOOGLE_ACCESS_DISABLED",
                "serviceExternalIpsConfig": {"enabled": False},
            },
            "shieldedNodes": {"enabled": True},
        },
        "cluster.networkConfig.datapathProvider",
        "ADVANCED_DATAPATH",
    ),
    (
        "ContainerCluster",
        {
            "location": "us-central1-a",
            "maintenancePolicy": {
                "recurringWindow": {
                    "recurrence": "FREQ=WEEKLY",
                    "window": {
                        "startTime": "2025-01-01T00:00:00Z",
                        "endTime": "2025-01-01T04:00:00Z",
                    },
                }
            },
        },
        {
            "location": "us-central1-a",
            "maintenancePolicy": {
                "window": {
                    "recurringWindow": {
                        "recurrence": "FREQ=WEEKLY",
                        "window": {
                            "startTime": "2025-01-01T00:00:00Z",
                            "endTime": "2025-01-01T04:00:00Z",
                        },
                    }
                }
            },
        },
        "cluster.maintenancePolicy.window.recurringWindow.recurrence",
        "FREQ=WEEKLY",
    ),
    # Terraform's google_container_node_pool names: node_config and its lists in the singular
    (
        "ContainerNodePool",
        GKE_POOL,
        {
            "location": "us-central1-a",
            "clusterRef": GKE_CLUSTER_REF,
            "locations": ["us-central1-a"],
            "maxPodsConstraint": {"maxPodsPerNode": 32},
            "config": {
                "machineType": "n1-standard-1",
                "accelerators": [{"acceleratorType": "nvidia-tesla-t4", "acceleratorCount": 1}],
                "taints": [{"key": "k", "value": "v", "effect": "NO_SCHEDULE"}],
            },
        },
        "nodePool.config.accelerators.0.acceleratorType",
        "nvidia-tesla-t4",
    ),
    # issue 31: Config Connector's names for parents, references and Terraform's fields
    # (validated, and moved to the API spelling; no request: path "")
    *[
        (kind, {"organization": "123456"}, {"organizationRef": {"external": "123456"}}, "", None)
        for kind in ("OrgPolicyCustomConstraint", "SecurityCenterMuteConfig", "SecurityCenterNotificationConfig", "SecurityCenterSource", "AccessContextManagerGCPUserAccessBinding")
    ],
    ("GKEBackupBackupPlan", {"location": "us-central1", "cluster": BACKUP_CLUSTER}, {"location": "us-central1", "clusterRef": {"external": BACKUP_CLUSTER}}, "", None),
    (
        "GKEBackupRestorePlan",
        {"location": "us-central1", "cluster": BACKUP_CLUSTER, "backupPlanRef": {"name": "bp"}, "restoreConfig": {}},
        {"location": "us-central1", "clusterRef": {"external": BACKUP_CLUSTER}, "backupPlanRef": {"name": "bp"}, "restoreConfig": {}},
        "",
        None,
    ),
    *[
        (kind, {"storagebucketRef": {"name": "b1"}}, {"bucketRef": {"name": "b1"}}, "", None)
        for kind in ("StorageFolder", "StorageManagedFolder")
    ],
    *[(kind, {"bucket": "b1"}, {"bucketRef": {"external": "b1"}}, "", None) for kind in ("StorageFolder", "StorageManagedFolder")],
    ("BigLakeDatabase", {"parentCatalogRef": {"name": "c1"}}, {"catalogRef": {"name": "c1"}}, "", None),
    ("BigLakeTable", {"parentDatabaseRef": {"name": "d1"}}, {"databaseRef": {"name": "d1"}}, "", None),
    ("EventarcChannel", {"location": "us-central1", "kmsKeyRef": {"name": "k1"}}, {"location": "us-central1", "cryptoKeyRef": {"name": "k1"}}, "", None),
    (
        "KMSImportJob",
        {"kmsKeyRingRef": {"name": "r1"}, "importMethod": "RSA_OAEP_3072_SHA1_AES_256", "protectionLevel": "HSM"},
        {"keyRingRef": {"name": "r1"}, "importMethod": "RSA_OAEP_3072_SHA1_AES_256", "protectionLevel": "HSM"},
        "",
        None,
    ),
    ("LoggingLink", {"loggingLogBucketRef": {"name": "b1"}}, {"bucketRef": {"name": "b1"}}, "", None),
    (
        "ManagedKafkaConnectCluster",
        {"location": "us-central1", "clusterRef": {"name": "k1"}, "capacityConfig": {"vcpuCount": "3", "memoryBytes": "3221225472"}, "gcpConfig": {"accessConfig": {"networkConfigs": []}}},
        {"location": "us-central1", "kafkaClusterRef": {"name": "k1"}, "capacityConfig": {"vcpuCount": "3", "memoryBytes": "3221225472"}, "gcpConfig": {"accessConfig": {"networkConfigs": []}}},
        "",
        None,
    ),
    ("Workstation", {"parentRef": {"name": "c1"}}, {"workstationConfigRef": {"name": "c1"}}, "", None),
    ("WorkstationConfig", {"parentRef": {"name": "c1"}}, {"workstationClusterRef": {"name": "c1"}}, "", None),
    ("LoggingLogBucket", {"location": "global", "enableAnalytics": True}, {"location": "global", "analyticsEnabled": True}, "", None),
    (
        "BigtableTable",
        {"instanceRef": {"name": "i1"}, "columnFamily": [{"family": "f1"}, {"family": "f2"}]},
        {"instanceRef": {"name": "i1"}, "columnFamilies": {"f1": {}, "f2": {}}},
        "",
        None,
    ),
    (
        "DataprocCluster",
        {"location": "us-central1", "config": {"masterConfig": {"machineType": "n2-standard-2"}, "workerConfig": {"machineType": "n2-standard-2"}, "secondaryWorkerConfig": {"machineType": "n2-standard-2"}}},
        {"location": "us-central1", "config": {"masterConfig": {"machineTypeUri": "n2-standard-2"}, "workerConfig": {"machineTypeUri": "n2-standard-2"}, "secondaryWorkerConfig": {"machineTypeUri": "n2-standard-2"}}},
        "",
        None,
    ),
    (
        "SQLInstance",
        {"settings": {"tier": "db-f1-micro", "diskAutoresize": True, "diskAutoresizeLimit": "100"}},
        {"settings": {"tier": "db-f1-micro", "storageAutoResize": True, "storageAutoResizeLimit": "100"}},
        "",
        None,
    ),
    (
        "ComputeURLMap",
        {
            "defaultCustomErrorResponsePolicy": {"errorResponseRule": [{"matchResponseCodes": ["5xx"], "path": "/e"}]},
            "pathMatcher": [{"name": "m", "defaultCustomErrorResponsePolicy": {"errorResponseRule": [{"matchResponseCodes": ["4xx"], "path": "/f"}]}}],
        },
        {
            "defaultCustomErrorResponsePolicy": {"errorResponseRules": [{"matchResponseCodes": ["5xx"], "path": "/e"}]},
            "pathMatchers": [{"name": "m", "defaultCustomErrorResponsePolicy": {"errorResponseRules": [{"matchResponseCodes": ["4xx"], "path": "/f"}]}}],
        },
        "",
        None,
    ),
    (
        "ContainerCluster",
        {
            "location": "us-central1",
            "databaseEncryption": {"state": "ENCRYPTED", "keyName": KEY},
            "clusterAutoscaling": {"enabled": True, "autoProvisioningDefaults": {"bootDiskKMSKeyRef": {"external": KEY}, "diskSize": 50, "imageType": "COS_CONTAINERD"}},
        },
        {
            "location": "us-central1",
            "databaseEncryption": {"state": "ENCRYPTED", "keyRef": {"external": KEY}},
            "autoscaling": {"enableNodeAutoprovisioning": True, "autoprovisioningNodePoolDefaults": {"bootDiskKmsKeyRef": {"external": KEY}, "diskSizeGb": 50, "imageType": "COS_CONTAINERD"}},
        },
        "",
        None,
    ),
    (
        "ComputeRegionURLMap",
        {"region": "us-central1", "defaultCustomErrorResponsePolicy": {"errorResponseRule": [{"path": "/e"}]}},
        {"region": "us-central1", "defaultCustomErrorResponsePolicy": {"errorResponseRules": [{"path": "/e"}]}},
        "",
        None,
    ),
    ("BigtableAppProfile", {"instanceRef": {"name": "i1"}, "multiClusterRoutingClusterIds": ["c1"]}, {"instanceRef": {"name": "i1"}, "multiClusterRoutingUseAny": {"clusterIds": ["c1"]}}, "", None),
]


def _at(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = obj[int(part)] if isinstance(obj, list) else obj[part]
    return obj


def _cel(rule: str, spec: dict[str, Any]) -> bool:
    env = celpy.Environment()
    return bool(env.program(env.compile(rule)).evaluate({"self": json_to_cel(spec)}))


def _rules(kind: str) -> list[str]:
    return [r["rule"] for r in SCHEMAS[kind]["properties"]["spec"].get("x-kubernetes-validations", []) if "oldSelf" not in r["rule"]]


IDS = [f"{c[0]}-{i}" for i, c in enumerate(CASES)]


@pytest.mark.parametrize(("kind", "kcc_spec", "api_spec"), [c[:3] for c in CASES], ids=IDS)
def test_the_config_connector_spelling_validates_and_is_the_api_spelling(kind: str, kcc_spec: dict[str, Any], api_spec: dict[str, Any]) -> None:
    obj = _obj(kind, kcc_spec)
    assert [e.message for e in validator(SCHEMAS[kind]).iter_errors(obj)] == []
    getattr(types_modules()[kind], kind).model_validate(obj)
    assert all(_cel(r, kcc_spec) for r in _rules(kind))
    assert canonical_spec(adapter_for(kind), kcc_spec) == api_spec


@pytest.mark.parametrize(
    ("kind", "spec"),
    [
        ("SQLInstance", {"settings": {"diskSize": 25, "dataDiskSizeGb": 25}}),
        ("FilestoreInstance", {"networks": [{"reservedIPRange": "10.0.0.0/29", "reservedIpRange": "10.0.0.0/29"}]}),
        ("CloudBuildTrigger", {"build": {"step": [{"name": "a"}], "steps": [{"name": "a"}]}}),
        ("BigtableInstance", {"cluster": [{"clusterId": "c1"}], "clusters": {"c1": {}}}),
        ("BigtableInstance", {"cluster": [{"clusterId": "c1", "autoscalingConfig": {"cpuTarget": 1}, "clusterConfig": {"clusterAutoscalingConfig": {}}}]}),
        ("SecretManagerSecret", {"replication": {"auto": {}, "automatic": {}}}),
    ],
)
def test_an_alias_and_its_api_field_together_are_refused(kind: str, spec: dict[str, Any]) -> None:
    with pytest.raises(AliasConflict, match="set one of the two, not both"):
        canonical_spec(adapter_for(kind), spec)
    # admission refuses them too (a pair in one object: its rule; in a list alias's element: no
    # such field), but not automatic: a field of two forms is a node of any value CEL cannot read
    if "clusterConfig" not in str(spec) and kind != "SecretManagerSecret":
        assert admission_errors(_obj(kind, spec))


def test_a_keyed_list_needs_its_key_once() -> None:
    a = adapter_for("BigtableInstance")
    with pytest.raises(AliasConflict, match=r"cluster\[0\]\.clusterId: required"):
        canonical_spec(a, {"cluster": [{"zone": "us-central1-a"}]})
    with pytest.raises(AliasConflict, match=r"cluster\[1\]\.clusterId: 'c1' is set twice"):
        canonical_spec(a, {"cluster": [{"clusterId": "c1"}, {"clusterId": "c1"}]})
    assert [e.message for e in validator(SCHEMAS["BigtableInstance"]).iter_errors(_obj("BigtableInstance", {"displayName": "d", "cluster": [{"zone": "z"}]}))]


def test_our_object_form_of_automatic_replication_stays_valid() -> None:
    """Config Connector's boolean ``replication.automatic: true`` is not taken: it
    would refuse the ``replication.automatic: {}`` our users' manifests write."""
    assert not list(validator(SCHEMAS["SecretManagerSecret"]).iter_errors(_obj("SecretManagerSecret", {"replication": {"automatic": {}}})))


KCCCTL = [c for c in CASES if c[3]]
# mockgcp names an autoscaling policy by its name field, not by the id the create
# sends (as Config Connector's recorded traffic has it): it cannot read it back
NOT_READ_BACK = {"DataprocAutoscalingPolicy"}


@pytest.mark.parametrize(("kind", "kcc_spec", "path", "value"), [(c[0], c[1], c[3], c[4]) for c in KCCCTL], ids=[c[0] for c in KCCCTL])
def test_kccctl_sends_the_api_shape_and_a_reapply_writes_nothing(kind: str, kcc_spec: dict[str, Any], path: str, value: Any, tmp_path: Any) -> None:
    writes, _, _ = _apply(tmp_path, "kcc", _obj(kind, copy.deepcopy(kcc_spec)), times=2)
    url, create = next((url, body) for method, url, body in writes[0] if method in ("POST", "PUT"))
    if path.startswith("?"):
        assert f"{path[1:]}={value}" in url
    else:
        assert _at(create, path) == value
    if kind not in NOT_READ_BACK:
        assert writes[1] == []


@pytest.mark.parametrize(
    ("alias", "message"),
    [
        ({"field": "peerings[].nm", "apiField": "routingConfig.routingMode", "reason": "r"}, "must share their path up to the last list"),
        ({"field": "mode", "apiField": "routingConfig", "keyedBy": "name", "reason": "r"}, "keyedBy needs a map of objects"),
        ({"field": "routingConfig.routingMode", "apiField": "routingConfig.routingMode", "reason": "r"}, "is already a spec field"),
        ({"field": "mtu.size", "apiField": "mtu", "reason": "r"}, "'mtu' is not an object field"),
    ],
)
def test_a_bad_alias_shape_stops_the_build(alias: dict[str, Any], message: str, tmp_path: Any) -> None:
    test_a_bad_alias_target_stops_the_build(alias, message, tmp_path)


def test_a_changed_cluster_list_is_refused_at_admission() -> None:
    """Clusters are sent by instances.create only: admission compares the API spelling."""
    old = _obj("BigtableInstance", CASES[0][1])
    new = copy.deepcopy(old)
    new["spec"]["cluster"].append({"clusterId": "cluster-2", "zone": "us-central1-b"})
    assert [m.split(":")[0] for m in immutable_changes(new, old)] == ["spec.clusters"]
    assert immutable_changes(copy.deepcopy(old), old) == []
