"""Acceptance: every Kind's lifecycle through google-api-python-client against mockgcp.

For each generated Kind: create (with a body shaped like Config Connector's
recorded traffic in ../shared/compat/kcc/fixtures/**/_http.log), wait on the
long-running operation where the API returns one (really polling, with
``lro_polls=2``), get, patch one mutable field (the change shows on the next
get, an unrelated field is untouched), list (the resource is listed), delete
(waiting on its operation if any), then get -> 404. Output-only fields the
real service fills in are asserted per Kind, and the exact call sequence for
a few Kinds.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from googleapiclient.errors import HttpError

from kccgen.mockgcp.engine import MockGCP
from kccgen.mockgcp.normalize import call_sequence
from kccgen.mockgcp.server import MockServer
from tests.support.kinds import GENERATED_KINDS

P = "mock-project"
LRO_POLLS = 2
RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
LABELS = {"cnrm-test": "true", "label-one": "value-one", "managed-by-cnrm": "true"}


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    with MockServer(MockGCP(lro_polls=LRO_POLLS)) as s:
        yield s


class Ctx:
    """One Kind's run: the server, a client cache and the polls each LRO took."""

    def __init__(self, server: MockServer) -> None:
        self.s = server
        self._clients: dict[str, Any] = {}
        self.polls: list[int] = []

    def c(self, api: str) -> Any:
        if api not in self._clients:
            self._clients[api] = self.s.client(api)
        return self._clients[api]

    # --- waiting on operations, the way each API's clients do ------------------------

    def wait_longrunning(self, get: Callable[[str], Any], op: dict[str, Any]) -> dict[str, Any]:
        assert op.get("done", False) is False, op  # lro_polls=2: never done on the first answer
        assert "response" not in op and "error" not in op
        n = 0
        while not op.get("done"):
            op = get(op["name"]).execute()
            n += 1
            assert n <= 10
        self.polls.append(n)
        assert "error" not in op, op
        return op

    def wait_compute(self, op: dict[str, Any], region: str | None = None) -> dict[str, Any]:
        assert op["kind"] == "compute#operation" and op["status"] == "RUNNING", op
        ops = self.c("compute")
        n = 0
        while op["status"] != "DONE":
            if region:
                op = ops.regionOperations().get(project=P, region=region, operation=op["name"]).execute()
            else:
                op = ops.globalOperations().get(project=P, operation=op["name"]).execute()
            n += 1
            assert n <= 10
        self.polls.append(n)
        assert op["progress"] == 100 and "error" not in op, op
        return op

    def wait_dns(self, op: dict[str, Any], zone: str) -> dict[str, Any]:
        assert op["kind"] == "dns#operation" and op["status"] == "pending", op
        n = 0
        while op["status"] != "done":
            op = self.c("dns").managedZoneOperations().get(project=P, managedZone=zone, operation=op["id"]).execute()
            n += 1
            assert n <= 10
        self.polls.append(n)
        return op


@dataclass
class KindCase:
    """How one Kind goes through its lifecycle. Each callable takes the Ctx."""

    kind: str
    setup: Callable[[Ctx], None]
    create: Callable[[Ctx], dict[str, Any]]  # returns the resource (after any LRO)
    get: Callable[[Ctx], Any]  # an HttpRequest
    list_items: Callable[[Ctx], list[dict[str, Any]]]
    delete: Callable[[Ctx], None]
    check_output: Callable[[dict[str, Any]], None]
    # patch(ctx, current) -> None; then (path, value) must show on get and
    # `unchanged` paths keep their values. None: the API has no update.
    patch: Callable[[Ctx, dict[str, Any]], None] | None = None
    patched: tuple[str, Any] | None = None
    unchanged: tuple[str, ...] = ()
    name_of: Callable[[dict[str, Any]], str] = field(default=lambda r: r["name"])


def _path(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


def _noop(ctx: Ctx) -> None:
    return None


# --- Pub/Sub ---------------------------------------------------------------------

TOPIC = f"projects/{P}/topics/pubsubtopic-sample"
SUB = f"projects/{P}/subscriptions/pubsubsubscription-sample"
SUB_TOPIC = f"projects/{P}/topics/pubsubsubscription-topic"
SCHEMA = f"projects/{P}/schemas/pubsubschema-sample"
SCHEMA_DEF = 'syntax = "proto3";\nmessage Results {\nstring message_request = 1;\nstring message_response = 2;\n}'


def _topic_output(r: dict[str, Any]) -> None:
    assert r["name"] == TOPIC
    assert r["labels"] == LABELS


def _sub_setup(ctx: Ctx) -> None:
    ctx.c("pubsub").projects().topics().create(name=SUB_TOPIC, body={}).execute()


def _sub_output(r: dict[str, Any]) -> None:
    assert r["name"] == SUB
    assert r["state"] == "ACTIVE"  # output-only enum, filled in by the service
    assert r["topic"] == SUB_TOPIC


SNAP = f"projects/{P}/snapshots/pubsubsnapshot-sample"
SNAP_SUB = f"projects/{P}/subscriptions/pubsubsnapshot-subscription"
SNAP_TOPIC = f"projects/{P}/topics/pubsubsnapshot-topic"


def _snap_setup(ctx: Ctx) -> None:
    ps = ctx.c("pubsub").projects()
    ps.topics().create(name=SNAP_TOPIC, body={}).execute()
    ps.subscriptions().create(name=SNAP_SUB, body={"topic": SNAP_TOPIC}).execute()


def _snap_output(r: dict[str, Any]) -> None:
    # Snapshot: the subscription it was made from is not a field; its topic is (output only).
    assert r["name"] == SNAP
    assert r["topic"] == SNAP_TOPIC
    assert RFC3339.match(r["expireTime"])
    assert "subscription" not in r


def _schema_output(r: dict[str, Any]) -> None:
    assert r["name"] == SCHEMA
    assert RFC3339.match(r["revisionCreateTime"])
    assert r["revisionId"]


# --- Storage ----------------------------------------------------------------------

BUCKET = "storagebucket-sample-mock"


def _bucket_output(r: dict[str, Any]) -> None:
    assert r["kind"] == "storage#bucket"
    assert r["id"] == BUCKET and r["name"] == BUCKET
    assert r["selfLink"] == f"https://www.googleapis.com/storage/v1/b/{BUCKET}"
    assert RFC3339.match(r["timeCreated"]) and RFC3339.match(r["updated"])
    assert r["metageneration"].isdigit() and r["generation"].isdigit()  # "1" on create, +1 per patch
    assert r["etag"]
    assert r["location"] == "US" and r["locationType"] == "multi-region"
    assert r["projectNumber"].isdigit() and len(r["projectNumber"]) == 12


def _bucket_patch(ctx: Ctx, cur: dict[str, Any]) -> None:
    ctx.c("storage").buckets().patch(
        bucket=BUCKET, ifMetagenerationMatch=cur["metageneration"], body={"versioning": {"enabled": True}}
    ).execute()


# --- Compute ----------------------------------------------------------------------

NETWORK = "computenetwork-sample"
SUBNET_NET = "computesubnetwork-network"
SUBNET = "computesubnetwork-sample"
REGION = "us-central1"


def _compute_common(r: dict[str, Any], kind: str, link: str) -> None:
    assert r["kind"] == f"compute#{kind}"
    assert r["id"].isdigit() and len(r["id"]) >= 15  # numeric uint64 as a string
    assert r["selfLink"] == "https://www.googleapis.com/compute/v1/" + link
    assert RFC3339.match(r["creationTimestamp"])


def _network_create(ctx: Ctx) -> dict[str, Any]:
    n = ctx.c("compute").networks()
    op = n.insert(
        project=P,
        body={"autoCreateSubnetworks": False, "name": NETWORK, "routingConfig": {"routingMode": "REGIONAL"}, "description": "sample"},
    ).execute()
    assert op["operationType"] == "insert"
    assert op["targetLink"].endswith(f"/projects/{P}/global/networks/{NETWORK}")
    ctx.wait_compute(op)
    return n.get(project=P, network=NETWORK).execute()


def _network_output(r: dict[str, Any]) -> None:
    _compute_common(r, "network", f"projects/{P}/global/networks/{NETWORK}")
    assert r["name"] == NETWORK


def _network_patch(ctx: Ctx, cur: dict[str, Any]) -> None:
    op = ctx.c("compute").networks().patch(project=P, network=NETWORK, body={"routingConfig": {"routingMode": "GLOBAL"}}).execute()
    ctx.wait_compute(op)


def _network_delete(ctx: Ctx) -> None:
    op = ctx.c("compute").networks().delete(project=P, network=NETWORK).execute()
    assert op["operationType"] == "delete"
    ctx.wait_compute(op)


def _subnet_setup(ctx: Ctx) -> None:
    op = ctx.c("compute").networks().insert(project=P, body={"autoCreateSubnetworks": False, "name": SUBNET_NET}).execute()
    ctx.wait_compute(op)
    ctx.polls.clear()


def _subnet_create(ctx: Ctx) -> dict[str, Any]:
    sn = ctx.c("compute").subnetworks()
    op = sn.insert(
        project=P,
        region=REGION,
        body={
            "ipCidrRange": "10.2.0.0/16",
            "logConfig": {"enable": False},
            "name": SUBNET,
            "network": f"projects/{P}/global/networks/{SUBNET_NET}",
            "region": f"projects/{P}/regions/{REGION}",
        },
    ).execute()
    assert op["region"].endswith(f"/projects/{P}/regions/{REGION}")
    ctx.wait_compute(op, REGION)
    return sn.get(project=P, region=REGION, subnetwork=SUBNET).execute()


def _subnet_output(r: dict[str, Any]) -> None:
    _compute_common(r, "subnetwork", f"projects/{P}/regions/{REGION}/subnetworks/{SUBNET}")
    assert r["network"] == f"https://www.googleapis.com/compute/v1/projects/{P}/global/networks/{SUBNET_NET}"
    assert r["region"] == f"https://www.googleapis.com/compute/v1/projects/{P}/regions/{REGION}"
    assert r["gatewayAddress"] == "10.2.0.1"
    assert r["fingerprint"]
    assert r["state"] == "READY"


def _subnet_patch(ctx: Ctx, cur: dict[str, Any]) -> None:
    op = ctx.c("compute").subnetworks().patch(
        project=P, region=REGION, subnetwork=SUBNET, body={"fingerprint": cur["fingerprint"], "logConfig": {"enable": True}}
    ).execute()
    ctx.wait_compute(op, REGION)


def _subnet_delete(ctx: Ctx) -> None:
    ctx.wait_compute(ctx.c("compute").subnetworks().delete(project=P, region=REGION, subnetwork=SUBNET).execute(), REGION)


# --- KMS ------------------------------------------------------------------------------

LOC = f"projects/{P}/locations/us-central1"
KEYRING = f"{LOC}/keyRings/key-ring-sample"
CK_RING = f"{LOC}/keyRings/kmscryptokey-ring"
CRYPTOKEY = f"{CK_RING}/cryptoKeys/kmscryptokey-sample"


def _kms_ops(ctx: Ctx) -> Callable[[str], Any]:
    return lambda name: ctx.c("cloudkms").projects().locations().operations().get(name=name)


def _keyring_output(r: dict[str, Any]) -> None:
    assert r["name"] == KEYRING
    assert RFC3339.match(r["createTime"])


def _ck_setup(ctx: Ctx) -> None:
    ctx.c("cloudkms").projects().locations().keyRings().create(parent=LOC, keyRingId="kmscryptokey-ring", body={}).execute()


def _ck_output(r: dict[str, Any]) -> None:
    assert r["name"] == CRYPTOKEY
    assert RFC3339.match(r["createTime"])
    assert r["purpose"] == "ENCRYPT_DECRYPT"
    # a new symmetric key comes with version 1 as its primary
    assert r["primary"]["name"] == f"{CRYPTOKEY}/cryptoKeyVersions/1"
    assert r["primary"]["state"] == "ENABLED"
    assert r["primary"]["algorithm"] == "GOOGLE_SYMMETRIC_ENCRYPTION"


def _ck_patch(ctx: Ctx, cur: dict[str, Any]) -> None:
    ctx.c("cloudkms").projects().locations().keyRings().cryptoKeys().patch(
        name=CRYPTOKEY, updateMask="rotationPeriod", body={"rotationPeriod": "259200s", "labels": {"ignored": "x"}}
    ).execute()


# --- DNS ------------------------------------------------------------------------------

ZONE = "dnsmanagedzone-sample"


def _zone_output(r: dict[str, Any]) -> None:
    assert r["kind"] == "dns#managedZone"
    assert r["name"] == ZONE
    assert r["id"].isdigit()
    assert RFC3339.match(r["creationTime"])
    assert len(r["nameServers"]) == 4 and all(ns.endswith(".googledomains.com.") for ns in r["nameServers"])


def _zone_patch(ctx: Ctx, cur: dict[str, Any]) -> None:
    op = ctx.c("dns").managedZones().patch(project=P, managedZone=ZONE, body={"description": "Example updated DNS zone"}).execute()
    assert op["zoneContext"]["oldValue"]["description"] == "Example DNS zone"
    assert op["zoneContext"]["newValue"]["description"] == "Example updated DNS zone"
    ctx.wait_dns(op, ZONE)


# --- Monitoring -------------------------------------------------------------------------

_ids: dict[str, str] = {}  # service-generated names, by Kind


def _alert_create(ctx: Ctx) -> dict[str, Any]:
    r = ctx.c("monitoring").projects().alertPolicies().create(
        name=f"projects/{P}",
        body={
            "displayName": "monitoringalertpolicy-sample",
            "combiner": "OR",
            "enabled": True,
            "documentation": {"content": "sample", "mimeType": "text/markdown"},
            "conditions": [
                {
                    "displayName": "Very high CPU usage",
                    "conditionThreshold": {
                        "filter": 'metric.type="compute.googleapis.com/instance/cpu/utilization" AND resource.type="gce_instance"',
                        "comparison": "COMPARISON_GT",
                        "thresholdValue": 0.9,
                        "duration": "900s",
                        "aggregations": [{"alignmentPeriod": "60s", "perSeriesAligner": "ALIGN_MEAN"}],
                    },
                }
            ],
            "userLabels": {"cnrm-test": "true"},
        },
    ).execute()
    _ids["MonitoringAlertPolicy"] = r["name"]
    return r


def _alert_output(r: dict[str, Any]) -> None:
    m = re.fullmatch(rf"projects/{P}/alertPolicies/(\d+)", r["name"])
    assert m, r["name"]
    assert RFC3339.match(r["creationRecord"]["mutateTime"])
    assert RFC3339.match(r["mutationRecord"]["mutateTime"])
    # a condition's own name is assigned by the service too
    assert re.fullmatch(rf"{r['name']}/conditions/\d+", r["conditions"][0]["name"])


def _channel_create(ctx: Ctx) -> dict[str, Any]:
    r = ctx.c("monitoring").projects().notificationChannels().create(
        name=f"projects/{P}",
        body={
            "displayName": "monitoringnotificationchannel-sample",
            "description": "Sends notifications to indicated webhook URL",
            "enabled": True,
            "labels": {"url": "http://hooks.example.com/notifications"},
            "type": "webhook_tokenauth",
            "userLabels": {"cnrm-test": "true"},
        },
    ).execute()
    _ids["MonitoringNotificationChannel"] = r["name"]
    return r


def _channel_output(r: dict[str, Any]) -> None:
    assert re.fullmatch(rf"projects/{P}/notificationChannels/\d+", r["name"]), r["name"]
    assert RFC3339.match(r["creationRecord"]["mutateTime"])
    assert r["mutationRecords"] and RFC3339.match(r["mutationRecords"][0]["mutateTime"])


# --- Secret Manager -------------------------------------------------------------------------

SECRET = f"projects/{P}/secrets/secretmanagersecret-sample"


def _secret_output(r: dict[str, Any]) -> None:
    assert r["name"] == SECRET
    assert RFC3339.match(r["createTime"])
    assert r["etag"].startswith('"') and r["etag"].endswith('"')  # secretmanager quotes its etags


# --- Artifact Registry --------------------------------------------------------------------------

AR_LOC = f"projects/{P}/locations/us-west1"
REPO = f"{AR_LOC}/repositories/arrepository-sample"


def _ar_ops(ctx: Ctx) -> Callable[[str], Any]:
    return lambda name: ctx.c("artifactregistry").projects().locations().operations().get(name=name)


def _ar_create(ctx: Ctx) -> dict[str, Any]:
    repos = ctx.c("artifactregistry").projects().locations().repositories()
    op = repos.create(
        parent=AR_LOC, repositoryId="arrepository-sample", body={"format": "DOCKER", "description": "test repository description", "labels": LABELS}
    ).execute()
    assert op["name"].startswith(f"{AR_LOC}/operations/")
    op = ctx.wait_longrunning(_ar_ops(ctx), op)
    assert op["response"]["@type"].endswith(".Repository")
    assert op["response"]["name"] == REPO
    return repos.get(name=REPO).execute()


def _ar_output(r: dict[str, Any]) -> None:
    assert r["name"] == REPO
    assert RFC3339.match(r["createTime"]) and RFC3339.match(r["updateTime"])
    assert r["format"] == "DOCKER"


def _ar_delete(ctx: Ctx) -> None:
    op = ctx.c("artifactregistry").projects().locations().repositories().delete(name=REPO).execute()
    ctx.wait_longrunning(_ar_ops(ctx), op)


# --- Spanner -------------------------------------------------------------------------------------

INSTANCE = f"projects/{P}/instances/spannerinstance-sample"


def _sp_ops(ctx: Ctx) -> Callable[[str], Any]:
    return lambda name: ctx.c("spanner").projects().instances().operations().get(name=name)


def _sp_create(ctx: Ctx) -> dict[str, Any]:
    inst = ctx.c("spanner").projects().instances()
    op = inst.create(
        parent=f"projects/{P}",
        body={
            "instanceId": "spannerinstance-sample",
            "instance": {
                "config": f"projects/{P}/instanceConfigs/regional-us-west1",
                "displayName": "Spanner Instance Sample",
                "labels": LABELS,
                "name": INSTANCE,
                "nodeCount": 1,
            },
        },
    ).execute()
    assert op["name"].startswith(f"{INSTANCE}/operations/")
    op = ctx.wait_longrunning(_sp_ops(ctx), op)
    assert op["response"]["name"] == INSTANCE
    return inst.get(name=INSTANCE).execute()


def _sp_output(r: dict[str, Any]) -> None:
    assert r["name"] == INSTANCE
    assert r["state"] == "READY"
    assert RFC3339.match(r["createTime"])


def _sp_patch(ctx: Ctx, cur: dict[str, Any]) -> None:
    op = ctx.c("spanner").projects().instances().patch(
        name=INSTANCE, body={"instance": {"name": INSTANCE, "displayName": "Spanner Instance Renamed", "nodeCount": 5}, "fieldMask": "displayName"}
    ).execute()
    ctx.wait_longrunning(_sp_ops(ctx), op)


# --- the table ---------------------------------------------------------------------------------

CASES: list[KindCase] = [
    KindCase(
        kind="PubSubTopic",
        setup=_noop,
        create=lambda ctx: ctx.c("pubsub").projects().topics().create(
            name=TOPIC, body={"labels": LABELS, "messageStoragePolicy": {"allowedPersistenceRegions": ["us-central1"]}}
        ).execute(),
        get=lambda ctx: ctx.c("pubsub").projects().topics().get(topic=TOPIC),
        list_items=lambda ctx: ctx.c("pubsub").projects().topics().list(project=f"projects/{P}").execute().get("topics", []),
        delete=lambda ctx: ctx.c("pubsub").projects().topics().delete(topic=TOPIC).execute(),
        check_output=_topic_output,
        patch=lambda ctx, cur: ctx.c("pubsub").projects().topics().patch(
            name=TOPIC,
            body={"topic": {"name": TOPIC, "messageRetentionDuration": "3600s", "labels": {"dropped": "x"}}, "updateMask": "messageRetentionDuration"},
        ).execute(),
        patched=("messageRetentionDuration", "3600s"),
        unchanged=("labels", "messageStoragePolicy"),
    ),
    KindCase(
        kind="PubSubSubscription",
        setup=_sub_setup,
        create=lambda ctx: ctx.c("pubsub").projects().subscriptions().create(
            name=SUB, body={"ackDeadlineSeconds": 15, "labels": LABELS, "messageRetentionDuration": "86400s", "topic": SUB_TOPIC}
        ).execute(),
        get=lambda ctx: ctx.c("pubsub").projects().subscriptions().get(subscription=SUB),
        list_items=lambda ctx: ctx.c("pubsub").projects().subscriptions().list(project=f"projects/{P}").execute().get("subscriptions", []),
        delete=lambda ctx: ctx.c("pubsub").projects().subscriptions().delete(subscription=SUB).execute(),
        check_output=_sub_output,
        patch=lambda ctx, cur: ctx.c("pubsub").projects().subscriptions().patch(
            name=SUB, body={"subscription": {"ackDeadlineSeconds": 20, "messageRetentionDuration": "600s"}, "updateMask": "ackDeadlineSeconds"}
        ).execute(),
        patched=("ackDeadlineSeconds", 20),
        unchanged=("messageRetentionDuration", "labels", "topic"),
    ),
    KindCase(
        kind="PubSubSnapshot",
        setup=_snap_setup,
        # PUT v1/{+name} with a CreateSnapshotRequest body: the subscription is beside the labels.
        create=lambda ctx: ctx.c("pubsub").projects().snapshots().create(
            name=SNAP, body={"subscription": SNAP_SUB, "labels": LABELS}
        ).execute(),
        get=lambda ctx: ctx.c("pubsub").projects().snapshots().get(snapshot=SNAP),
        list_items=lambda ctx: ctx.c("pubsub").projects().snapshots().list(project=f"projects/{P}").execute().get("snapshots", []),
        delete=lambda ctx: ctx.c("pubsub").projects().snapshots().delete(snapshot=SNAP).execute(),
        check_output=_snap_output,
        patch=lambda ctx, cur: ctx.c("pubsub").projects().snapshots().patch(
            name=SNAP, body={"snapshot": {"labels": {"team": "x"}}, "updateMask": "labels"}
        ).execute(),
        patched=("labels", {"team": "x"}),
        unchanged=("topic", "expireTime"),
    ),
    KindCase(
        kind="PubSubSchema",
        setup=_noop,
        create=lambda ctx: ctx.c("pubsub").projects().schemas().create(
            parent=f"projects/{P}", schemaId="pubsubschema-sample", body={"definition": SCHEMA_DEF, "type": "PROTOCOL_BUFFER"}
        ).execute(),
        get=lambda ctx: ctx.c("pubsub").projects().schemas().get(name=SCHEMA),
        list_items=lambda ctx: ctx.c("pubsub").projects().schemas().list(parent=f"projects/{P}").execute().get("schemas", []),
        delete=lambda ctx: ctx.c("pubsub").projects().schemas().delete(name=SCHEMA).execute(),
        check_output=_schema_output,
    ),
    KindCase(
        kind="StorageBucket",
        setup=_noop,
        create=lambda ctx: ctx.c("storage").buckets().insert(
            project=P,
            body={
                "name": BUCKET,
                "location": "US",
                "labels": LABELS,
                "storageClass": "STANDARD",
                "versioning": {"enabled": False},
                "iamConfiguration": {"uniformBucketLevelAccess": {"enabled": False}},
            },
        ).execute(),
        get=lambda ctx: ctx.c("storage").buckets().get(bucket=BUCKET),
        list_items=lambda ctx: ctx.c("storage").buckets().list(project=P).execute().get("items", []),
        delete=lambda ctx: ctx.c("storage").buckets().delete(bucket=BUCKET).execute(),
        check_output=_bucket_output,
        patch=_bucket_patch,
        patched=("versioning.enabled", True),
        unchanged=("labels", "storageClass", "timeCreated", "id"),
    ),
    KindCase(
        kind="ComputeNetwork",
        setup=_noop,
        create=_network_create,
        get=lambda ctx: ctx.c("compute").networks().get(project=P, network=NETWORK),
        list_items=lambda ctx: ctx.c("compute").networks().list(project=P).execute().get("items", []),
        delete=_network_delete,
        check_output=_network_output,
        patch=_network_patch,
        patched=("routingConfig.routingMode", "GLOBAL"),
        unchanged=("autoCreateSubnetworks", "description", "id", "creationTimestamp"),
    ),
    KindCase(
        kind="ComputeSubnetwork",
        setup=_subnet_setup,
        create=_subnet_create,
        get=lambda ctx: ctx.c("compute").subnetworks().get(project=P, region=REGION, subnetwork=SUBNET),
        list_items=lambda ctx: ctx.c("compute").subnetworks().list(project=P, region=REGION).execute().get("items", []),
        delete=_subnet_delete,
        check_output=_subnet_output,
        patch=_subnet_patch,
        patched=("logConfig.enable", True),
        unchanged=("ipCidrRange", "network", "id", "gatewayAddress"),
    ),
    KindCase(
        kind="KMSKeyRing",
        setup=_noop,
        create=lambda ctx: ctx.c("cloudkms").projects().locations().keyRings().create(parent=LOC, keyRingId="key-ring-sample", body={}).execute(),
        get=lambda ctx: ctx.c("cloudkms").projects().locations().keyRings().get(name=KEYRING),
        list_items=lambda ctx: ctx.c("cloudkms").projects().locations().keyRings().list(parent=LOC).execute().get("keyRings", []),
        # keyRings.delete returns a google.longrunning Operation in this revision
        delete=lambda ctx: ctx.wait_longrunning(
            _kms_ops(ctx), ctx.c("cloudkms").projects().locations().keyRings().delete(name=KEYRING).execute()
        ),
        check_output=_keyring_output,
    ),
    KindCase(
        kind="KMSCryptoKey",
        setup=_ck_setup,
        create=lambda ctx: ctx.c("cloudkms").projects().locations().keyRings().cryptoKeys().create(
            parent=CK_RING,
            cryptoKeyId="kmscryptokey-sample",
            body={
                "labels": LABELS,
                "purpose": "ENCRYPT_DECRYPT",
                "rotationPeriod": "172800s",
                "nextRotationTime": "2030-01-01T00:00:00Z",
                "versionTemplate": {"algorithm": "GOOGLE_SYMMETRIC_ENCRYPTION", "protectionLevel": "SOFTWARE"},
            },
        ).execute(),
        get=lambda ctx: ctx.c("cloudkms").projects().locations().keyRings().cryptoKeys().get(name=CRYPTOKEY),
        list_items=lambda ctx: ctx.c("cloudkms").projects().locations().keyRings().cryptoKeys().list(parent=CK_RING).execute().get("cryptoKeys", []),
        delete=lambda ctx: ctx.wait_longrunning(
            _kms_ops(ctx), ctx.c("cloudkms").projects().locations().keyRings().cryptoKeys().delete(name=CRYPTOKEY).execute()
        ),
        check_output=_ck_output,
        patch=_ck_patch,
        patched=("rotationPeriod", "259200s"),
        unchanged=("labels", "purpose", "versionTemplate"),
    ),
    KindCase(
        kind="DNSManagedZone",
        setup=_noop,
        create=lambda ctx: ctx.c("dns").managedZones().create(
            project=P,
            body={"description": "Example DNS zone", "dnsName": "cnrm-dns-example.com.", "labels": LABELS, "name": ZONE, "visibility": "public"},
        ).execute(),
        get=lambda ctx: ctx.c("dns").managedZones().get(project=P, managedZone=ZONE),
        list_items=lambda ctx: ctx.c("dns").managedZones().list(project=P).execute().get("managedZones", []),
        delete=lambda ctx: ctx.c("dns").managedZones().delete(project=P, managedZone=ZONE).execute(),
        check_output=_zone_output,
        patch=_zone_patch,
        patched=("description", "Example updated DNS zone"),
        unchanged=("dnsName", "labels", "nameServers", "id"),
    ),
    KindCase(
        kind="MonitoringAlertPolicy",
        setup=_noop,
        create=_alert_create,
        get=lambda ctx: ctx.c("monitoring").projects().alertPolicies().get(name=_ids["MonitoringAlertPolicy"]),
        list_items=lambda ctx: ctx.c("monitoring").projects().alertPolicies().list(name=f"projects/{P}").execute().get("alertPolicies", []),
        delete=lambda ctx: ctx.c("monitoring").projects().alertPolicies().delete(name=_ids["MonitoringAlertPolicy"]).execute(),
        check_output=_alert_output,
        patch=lambda ctx, cur: ctx.c("monitoring").projects().alertPolicies().patch(
            name=cur["name"], updateMask="displayName", body={"displayName": "renamed policy", "combiner": "AND"}
        ).execute(),
        patched=("displayName", "renamed policy"),
        unchanged=("combiner", "conditions", "userLabels", "creationRecord"),
    ),
    KindCase(
        kind="MonitoringNotificationChannel",
        setup=_noop,
        create=_channel_create,
        get=lambda ctx: ctx.c("monitoring").projects().notificationChannels().get(name=_ids["MonitoringNotificationChannel"]),
        list_items=lambda ctx: ctx.c("monitoring").projects().notificationChannels().list(name=f"projects/{P}").execute().get("notificationChannels", []),
        delete=lambda ctx: ctx.c("monitoring").projects().notificationChannels().delete(name=_ids["MonitoringNotificationChannel"]).execute(),
        check_output=_channel_output,
        patch=lambda ctx, cur: ctx.c("monitoring").projects().notificationChannels().patch(
            name=cur["name"], updateMask="description", body={"description": "Sends to a new URL", "type": "ignored"}
        ).execute(),
        patched=("description", "Sends to a new URL"),
        unchanged=("type", "labels", "displayName", "creationRecord"),
    ),
    KindCase(
        kind="SecretManagerSecret",
        setup=_noop,
        create=lambda ctx: ctx.c("secretmanager").projects().secrets().create(
            parent=f"projects/{P}",
            secretId="secretmanagersecret-sample",
            body={"labels": LABELS, "replication": {"userManaged": {"replicas": [{"location": "us-central1"}]}}},
        ).execute(),
        get=lambda ctx: ctx.c("secretmanager").projects().secrets().get(name=SECRET),
        list_items=lambda ctx: ctx.c("secretmanager").projects().secrets().list(parent=f"projects/{P}").execute().get("secrets", []),
        delete=lambda ctx: ctx.c("secretmanager").projects().secrets().delete(name=SECRET).execute(),
        check_output=_secret_output,
        patch=lambda ctx, cur: ctx.c("secretmanager").projects().secrets().patch(
            name=SECRET, updateMask="labels", body={"labels": {"label-one": "value-two"}, "annotations": {"dropped": "x"}}
        ).execute(),
        patched=("labels", {"label-one": "value-two"}),
        unchanged=("replication", "createTime"),
    ),
    KindCase(
        kind="ArtifactRegistryRepository",
        setup=_noop,
        create=_ar_create,
        get=lambda ctx: ctx.c("artifactregistry").projects().locations().repositories().get(name=REPO),
        list_items=lambda ctx: ctx.c("artifactregistry").projects().locations().repositories().list(parent=AR_LOC).execute().get("repositories", []),
        delete=_ar_delete,
        check_output=_ar_output,
        patch=lambda ctx, cur: ctx.c("artifactregistry").projects().locations().repositories().patch(
            name=REPO, updateMask="description", body={"description": "new description", "labels": {"dropped": "x"}}
        ).execute(),
        patched=("description", "new description"),
        unchanged=("labels", "format", "createTime"),
    ),
    KindCase(
        kind="SpannerInstance",
        setup=_noop,
        create=_sp_create,
        get=lambda ctx: ctx.c("spanner").projects().instances().get(name=INSTANCE),
        list_items=lambda ctx: ctx.c("spanner").projects().instances().list(parent=f"projects/{P}").execute().get("instances", []),
        delete=lambda ctx: ctx.c("spanner").projects().instances().delete(name=INSTANCE).execute(),
        check_output=_sp_output,
        patch=_sp_patch,
        patched=("displayName", "Spanner Instance Renamed"),
        unchanged=("nodeCount", "config", "labels", "createTime"),
    ),
]

# Kinds whose create/update/delete return an operation the client polls.
WITH_LRO = {"ComputeNetwork", "ComputeSubnetwork", "KMSKeyRing", "KMSCryptoKey", "DNSManagedZone", "ArtifactRegistryRepository", "SpannerInstance"}


def test_every_kind_is_covered() -> None:
    """One case per generated Kind (the registry), none twice."""
    kinds = [c.kind for c in CASES]
    assert sorted(kinds) == sorted(set(kinds))
    assert set(kinds) == set(GENERATED_KINDS)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.kind)
def test_kind_lifecycle(server: MockServer, case: KindCase) -> None:
    ctx = Ctx(server)
    case.setup(ctx)

    created = case.create(ctx)
    case.check_output(created)
    got = case.get(ctx).execute()
    assert got == created, (created, got)
    case.check_output(got)

    if case.patch is not None:
        assert case.patched is not None
        case.patch(ctx, got)
        after = case.get(ctx).execute()
        path, value = case.patched
        assert _path(after, path) == value
        assert _path(got, path) != value
        for p in case.unchanged:
            assert _path(after, p) == _path(got, p), p
        case.check_output(after)

    names = [case.name_of(r) for r in case.list_items(ctx)]
    assert case.name_of(got) in names

    case.delete(ctx)
    with pytest.raises(HttpError) as e:
        case.get(ctx).execute()
    assert e.value.resp.status == 404

    if case.kind in WITH_LRO:
        assert ctx.polls and all(n == LRO_POLLS for n in ctx.polls), ctx.polls


# call_sequence normalizes each line on its own, so every generated operation
# name reads ${operation1} and every numeric ID ${number1}.


@pytest.fixture(scope="module")
def seq_server() -> Iterator[MockServer]:
    with MockServer() as s:
        yield s


def _sequence_of(s: MockServer, run: Callable[[Ctx], None]) -> list[str]:
    s.engine = MockGCP(lro_polls=LRO_POLLS)  # a fresh, empty engine per sequence
    run(Ctx(s))
    # the server logs an exchange just after answering it: let the last one land
    for _ in range(100):
        if s.log and s.log[-1].status.startswith("404"):
            break
        time.sleep(0.01)
    return call_sequence(s.log)


def _run(case: KindCase) -> Callable[[Ctx], None]:
    def go(ctx: Ctx) -> None:
        case.setup(ctx)
        ctx.s.clear_log()
        created = case.create(ctx)
        if case.patch is not None:
            case.patch(ctx, case.get(ctx).execute())
        case.delete(ctx)
        with pytest.raises(HttpError):
            case.get(ctx).execute()
        assert created

    return go


def _case(kind: str) -> KindCase:
    return next(c for c in CASES if c.kind == kind)


def test_call_sequence_pubsub_topic(seq_server: MockServer) -> None:
    assert _sequence_of(seq_server, _run(_case("PubSubTopic"))) == [
        f"PUT /v1/projects/{P}/topics/pubsubtopic-sample -> 200",
        f"GET /v1/projects/{P}/topics/pubsubtopic-sample -> 200",
        f"PATCH /v1/projects/{P}/topics/pubsubtopic-sample -> 200",
        f"DELETE /v1/projects/{P}/topics/pubsubtopic-sample -> 200",
        f"GET /v1/projects/{P}/topics/pubsubtopic-sample -> 404",
    ]


def test_call_sequence_compute_subnetwork(seq_server: MockServer) -> None:
    sub = f"/compute/v1/projects/{P}/regions/{REGION}/subnetworks/{SUBNET}"
    ops = f"/compute/v1/projects/{P}/regions/{REGION}/operations"
    assert _sequence_of(seq_server, _run(_case("ComputeSubnetwork"))) == [
        f"POST /compute/v1/projects/{P}/regions/{REGION}/subnetworks -> 200",
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
    b = f"/storage/v1/b/{BUCKET}"
    assert _sequence_of(seq_server, _run(_case("StorageBucket"))) == [
        "POST /storage/v1/b -> 200",
        f"GET {b} -> 200",
        f"PATCH {b} -> 200",
        f"DELETE {b} -> 204",
        f"GET {b} -> 404",
    ]


def test_call_sequence_dns_managed_zone(seq_server: MockServer) -> None:
    z = f"/dns/v1/projects/{P}/managedZones/{ZONE}"
    seq = _sequence_of(seq_server, _run(_case("DNSManagedZone")))
    assert seq[:3] == [f"POST /dns/v1/projects/{P}/managedZones -> 200", f"GET {z} -> 200", f"PATCH {z} -> 200"]
    assert len(seq) == 7
    assert re.fullmatch(rf"GET {z}/operations/\S+ -> 200", seq[3]) and seq[3] == seq[4]
    assert seq[5:] == [f"DELETE {z} -> 200", f"GET {z} -> 404"]


def test_call_sequence_spanner_instance(seq_server: MockServer) -> None:
    i = f"/v1/projects/{P}/instances/spannerinstance-sample"
    assert _sequence_of(seq_server, _run(_case("SpannerInstance"))) == [
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
    seq = _sequence_of(seq_server, _run(_case("MonitoringAlertPolicy")))
    a = f"/v3/projects/{P}/alertPolicies"
    # the service-generated numeric ID is normalized like any other 12+ digit number
    assert seq == [
        f"POST {a} -> 200",
        f"GET {a}/${{number1}} -> 200",
        f"PATCH {a}/${{number1}} -> 200",
        f"DELETE {a}/${{number1}} -> 200",
        f"GET {a}/${{number1}} -> 404",
    ]
