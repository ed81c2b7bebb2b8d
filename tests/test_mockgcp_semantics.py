"""mockgcp's standard semantics: update masks, whole-resource PATCH with
fingerprints and metagenerations, immutability, errors, service-generated IDs,
long-running operations, fault injection and state dump/load.

Everything goes through google-api-python-client against a running MockServer
except where a raw socket is the point (a dropped connection) or determinism
is checked in-process.
"""

from __future__ import annotations

import http.client
import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from googleapiclient.errors import HttpError

from kccgen.mockgcp.engine import MockGCP
from kccgen.mockgcp.server import MockServer

P = "mock-project"
LOC = f"projects/{P}/locations/us-central1"


@pytest.fixture(scope="module")
def _server() -> Iterator[MockServer]:
    with MockServer() as s:
        yield s


def _fresh(s: MockServer, lro_polls: int) -> MockServer:
    """The module's server with a new, empty engine (no state, no faults):
    cheaper than a server per test, whose shutdown polls for half a second."""
    s.engine = MockGCP(lro_polls=lro_polls)
    s.clear_log()
    return s


@pytest.fixture
def server(_server: MockServer) -> MockServer:
    return _fresh(_server, 0)


@pytest.fixture
def slow_lro(_server: MockServer) -> MockServer:
    return _fresh(_server, 3)


def error_of(e: pytest.ExceptionInfo[HttpError]) -> dict[str, Any]:
    body = json.loads(e.value.content)
    assert set(body) == {"error"}
    return body["error"]


def assert_error(e: pytest.ExceptionInfo[HttpError], code: int, status: str, legacy_reason: str | None = None) -> dict[str, Any]:
    """A Google JSON error body; compute/storage/dns also carry the v1 ``errors`` list."""
    assert e.value.resp.status == code
    err = error_of(e)
    assert err["code"] == code
    assert err["status"] == status
    assert isinstance(err["message"], str) and err["message"]
    if legacy_reason is None:
        assert "errors" not in err
    else:
        assert err["errors"] == [{"message": err["message"], "domain": "global", "reason": legacy_reason}]
    return err


# --- helpers creating one resource each ------------------------------------------------------


def topic(s: MockServer, name: str = "t", **body: Any) -> dict[str, Any]:
    return s.client("pubsub").projects().topics().create(name=f"projects/{P}/topics/{name}", body=body).execute()


def crypto_key(s: MockServer) -> str:
    kms = s.client("cloudkms").projects().locations().keyRings()
    kms.create(parent=LOC, keyRingId="ring", body={}).execute()
    ck = kms.cryptoKeys().create(
        parent=f"{LOC}/keyRings/ring", cryptoKeyId="key", body={"purpose": "ENCRYPT_DECRYPT", "rotationPeriod": "172800s", "labels": {"a": "1"}}
    ).execute()
    return ck["name"]


def secret(s: MockServer) -> str:
    return s.client("secretmanager").projects().secrets().create(
        parent=f"projects/{P}", secretId="s", body={"replication": {"automatic": {}}, "labels": {"a": "1"}}
    ).execute()["name"]


def alert_policy(s: MockServer) -> dict[str, Any]:
    return s.client("monitoring").projects().alertPolicies().create(
        name=f"projects/{P}",
        body={
            "displayName": "policy",
            "combiner": "OR",
            "documentation": {"content": "doc", "mimeType": "text/markdown"},
            "conditions": [{"displayName": "c", "conditionAbsent": {"filter": 'resource.type="gce_instance"', "duration": "120s"}}],
        },
    ).execute()


def compute_wait(s: MockServer, op: dict[str, Any]) -> dict[str, Any]:
    c = s.client("compute")
    for _ in range(10):
        if op["status"] == "DONE":
            return op
        if "region" in op:
            op = c.regionOperations().get(project=P, region=op["region"].rsplit("/", 1)[-1], operation=op["name"]).execute()
        else:
            op = c.globalOperations().get(project=P, operation=op["name"]).execute()
    raise AssertionError(op)


def network(s: MockServer, name: str = "net", **body: Any) -> dict[str, Any]:
    c = s.client("compute")
    compute_wait(s, c.networks().insert(project=P, body={"name": name, "autoCreateSubnetworks": False, **body}).execute())
    return c.networks().get(project=P, network=name).execute()


def subnetwork(s: MockServer) -> dict[str, Any]:
    network(s)
    c = s.client("compute")
    body = {"name": "sub", "ipCidrRange": "10.0.0.0/24", "network": f"projects/{P}/global/networks/net", "region": f"projects/{P}/regions/us-central1"}
    compute_wait(s, c.subnetworks().insert(project=P, region="us-central1", body=body).execute())
    return c.subnetworks().get(project=P, region="us-central1", subnetwork="sub").execute()


def bucket(s: MockServer, name: str = "bkt-semantics") -> dict[str, Any]:
    return s.client("storage").buckets().insert(
        project=P, body={"name": name, "location": "us-central1", "labels": {"a": "1"}, "iamConfiguration": {"uniformBucketLevelAccess": {"enabled": True}}}
    ).execute()


# --- update masks ------------------------------------------------------------------------------


def test_mask_changes_only_masked_fields(server: MockServer) -> None:
    topic(server, labels={"a": "1"}, messageRetentionDuration="600s")
    t = f"projects/{P}/topics/t"
    out = server.client("pubsub").projects().topics().patch(
        name=t, body={"topic": {"labels": {"b": "2"}, "messageRetentionDuration": "3600s"}, "updateMask": "labels"}
    ).execute()
    assert out["labels"] == {"b": "2"}
    assert out["messageRetentionDuration"] == "600s"
    assert server.client("pubsub").projects().topics().get(topic=t).execute() == out


def test_mask_accepts_snake_case_and_nested_paths(server: MockServer) -> None:
    ap = alert_policy(server)
    mon = server.client("monitoring").projects().alertPolicies()
    out = mon.patch(name=ap["name"], updateMask="display_name,documentation.content", body={"displayName": "new", "documentation": {"content": "doc2"}}).execute()
    assert out["displayName"] == "new"
    assert out["documentation"] == {"content": "doc2", "mimeType": "text/markdown"}  # the sibling kept
    assert out["combiner"] == "OR"


def test_masked_field_missing_from_body_is_cleared(server: MockServer) -> None:
    # monitoring: "each listed field ... is set to ... the field's default value
    # if the field is not in the supplied alerting policy"
    ap = alert_policy(server)
    out = server.client("monitoring").projects().alertPolicies().patch(name=ap["name"], updateMask="documentation", body={}).execute()
    assert "documentation" not in out
    assert out["displayName"] == "policy"


@pytest.mark.parametrize("api", ["pubsub", "cloudkms", "secretmanager", "monitoring", "spanner"])
def test_unknown_mask_path_is_invalid_argument(server: MockServer, api: str) -> None:
    with pytest.raises(HttpError) as e:
        if api == "pubsub":
            topic(server)
            server.client("pubsub").projects().topics().patch(
                name=f"projects/{P}/topics/t", body={"topic": {"labels": {}}, "updateMask": "labels,noSuchField"}
            ).execute()
        elif api == "cloudkms":
            name = crypto_key(server)
            server.client("cloudkms").projects().locations().keyRings().cryptoKeys().patch(name=name, updateMask="rotation_period,bogus", body={}).execute()
        elif api == "secretmanager":
            server.client("secretmanager").projects().secrets().patch(name=secret(server), updateMask="labels.x.y,nope", body={}).execute()
        elif api == "monitoring":
            server.client("monitoring").projects().alertPolicies().patch(name=alert_policy(server)["name"], updateMask="documentation.bogus", body={}).execute()
        else:
            inst = server.client("spanner").projects().instances()
            inst.create(parent=f"projects/{P}", body={"instanceId": "i", "instance": {"config": "c", "displayName": "d", "nodeCount": 1}}).execute()
            inst.patch(name=f"projects/{P}/instances/i", body={"instance": {"displayName": "x"}, "fieldMask": "displayName,whatever"}).execute()
    err = assert_error(e, 400, "INVALID_ARGUMENT")
    assert re.search(r"bogus|noSuchField|nope|whatever", err["message"])


# Where Discovery says the mask is "Required", leaving it out is a 400.
@pytest.mark.parametrize("api", ["pubsub-topic", "pubsub-subscription", "cloudkms", "secretmanager", "spanner"])
def test_required_mask_missing_is_invalid_argument(server: MockServer, api: str) -> None:
    with pytest.raises(HttpError) as e:
        if api == "pubsub-topic":
            topic(server)
            server.client("pubsub").projects().topics().patch(name=f"projects/{P}/topics/t", body={"topic": {"labels": {"a": "b"}}}).execute()
        elif api == "pubsub-subscription":
            topic(server)
            subs = server.client("pubsub").projects().subscriptions()
            s = f"projects/{P}/subscriptions/s"
            subs.create(name=s, body={"topic": f"projects/{P}/topics/t"}).execute()
            subs.patch(name=s, body={"subscription": {"ackDeadlineSeconds": 30}}).execute()
        elif api == "cloudkms":
            server.client("cloudkms").projects().locations().keyRings().cryptoKeys().patch(name=crypto_key(server), body={"rotationPeriod": "1s"}).execute()
        elif api == "secretmanager":
            server.client("secretmanager").projects().secrets().patch(name=secret(server), body={"labels": {}}).execute()
        else:
            inst = server.client("spanner").projects().instances()
            inst.create(parent=f"projects/{P}", body={"instanceId": "i", "instance": {"config": "c", "displayName": "d", "nodeCount": 1}}).execute()
            inst.patch(name=f"projects/{P}/instances/i", body={"instance": {"displayName": "x"}}).execute()
    assert_error(e, 400, "INVALID_ARGUMENT")


def test_alert_policy_without_mask_replaces_the_policy(server: MockServer) -> None:
    # monitoring.v3 alertPolicies.patch updateMask: "If this field is empty,
    # then the supplied alerting policy replaces the existing policy" (same ID).
    ap = alert_policy(server)
    mon = server.client("monitoring").projects().alertPolicies()
    out = mon.patch(name=ap["name"], body={"displayName": "replaced", "combiner": "AND", "conditions": ap["conditions"]}).execute()
    assert out["name"] == ap["name"]
    assert out["displayName"] == "replaced" and out["combiner"] == "AND"
    assert "documentation" not in out
    assert out["creationRecord"] == ap["creationRecord"]  # read-only record survives
    assert out["conditions"][0]["name"] == ap["conditions"][0]["name"]  # a named condition keeps its ID


def test_notification_channel_without_mask_keeps_unsent_fields(server: MockServer) -> None:
    # "Optional. The fields to update." / "Fields not specified in the field mask remain unchanged."
    ch = server.client("monitoring").projects().notificationChannels()
    c = ch.create(name=f"projects/{P}", body={"type": "email", "displayName": "a", "labels": {"email_address": "a@example.com"}}).execute()
    out = ch.patch(name=c["name"], body={"displayName": "b"}).execute()
    assert out["displayName"] == "b"
    assert out["labels"] == {"email_address": "a@example.com"} and out["type"] == "email"
    assert len(out["mutationRecords"]) == 2


# --- compute whole-resource PATCH ----------------------------------------------------------------


def test_subnetwork_patch_needs_the_current_fingerprint(server: MockServer) -> None:
    sub = subnetwork(server)
    sn = server.client("compute").subnetworks()
    with pytest.raises(HttpError) as e:
        sn.patch(project=P, region="us-central1", subnetwork="sub", body={"fingerprint": "c3RhbGU=", "privateIpGoogleAccess": True}).execute()
    err = assert_error(e, 412, "FAILED_PRECONDITION", "conditionNotMet")
    assert "fingerprint" in err["message"]
    assert sn.get(project=P, region="us-central1", subnetwork="sub").execute() == sub

    op = sn.patch(project=P, region="us-central1", subnetwork="sub", body={"fingerprint": sub["fingerprint"], "privateIpGoogleAccess": True}).execute()
    compute_wait(server, op)
    after = sn.get(project=P, region="us-central1", subnetwork="sub").execute()
    assert after["privateIpGoogleAccess"] is True
    assert after["fingerprint"] != sub["fingerprint"]
    assert after["ipCidrRange"] == sub["ipCidrRange"] and after["id"] == sub["id"]

    # the old fingerprint is now stale
    with pytest.raises(HttpError) as e:
        sn.patch(project=P, region="us-central1", subnetwork="sub", body={"fingerprint": sub["fingerprint"], "privateIpGoogleAccess": False}).execute()
    assert e.value.resp.status == 412


def test_compute_patch_is_a_json_merge_patch(server: MockServer) -> None:
    network(server, routingConfig={"routingMode": "REGIONAL", "bgpBestPathSelectionMode": "LEGACY"}, description="d")
    n = server.client("compute").networks()
    compute_wait(server, n.patch(project=P, network="net", body={"routingConfig": {"routingMode": "GLOBAL"}}).execute())
    got = n.get(project=P, network="net").execute()
    assert got["routingConfig"]["routingMode"] == "GLOBAL"
    assert got["routingConfig"]["bgpBestPathSelectionMode"] == "LEGACY"  # the sibling kept
    assert got["description"] == "d"


def test_compute_patch_with_unchanged_partial_reference_is_not_a_change(server: MockServer) -> None:
    sub = subnetwork(server)
    sn = server.client("compute").subnetworks()
    # network/region are immutable; sent in the partial form compute accepted on insert, they are unchanged
    body = {"fingerprint": sub["fingerprint"], "network": f"projects/{P}/global/networks/net", "region": f"projects/{P}/regions/us-central1", "logConfig": {"enable": True}}
    compute_wait(server, sn.patch(project=P, region="us-central1", subnetwork="sub", body=body).execute())
    assert sn.get(project=P, region="us-central1", subnetwork="sub").execute()["logConfig"] == {"enable": True}


def test_compute_region_comes_from_the_url(server: MockServer) -> None:
    network(server)
    c = server.client("compute")
    # Config Connector's recorded insert sends this odd region; compute answers with the URL's
    body = {"name": "sub", "ipCidrRange": "10.2.0.0/16", "network": f"projects/{P}/global/networks/net", "region": f"projects/{P}/global/regions/us-central1"}
    compute_wait(server, c.subnetworks().insert(project=P, region="us-central1", body=body).execute())
    got = c.subnetworks().get(project=P, region="us-central1", subnetwork="sub").execute()
    assert got["region"] == f"https://www.googleapis.com/compute/v1/projects/{P}/regions/us-central1"
    net = c.networks().insert(project=P, body={"name": "n2", "networkProfile": f"projects/{P}/global/networkProfiles/us-central1-a-vpc-falcon"}).execute()
    compute_wait(server, net)
    got = c.networks().get(project=P, network="n2").execute()
    assert got["networkProfile"] == f"https://www.googleapis.com/compute/v1/projects/{P}/global/networkProfiles/us-central1-a-vpc-falcon"


def test_compute_list_kind(server: MockServer) -> None:
    network(server)
    out = server.client("compute").networks().list(project=P).execute()
    assert out["kind"] == "compute#networkList"
    assert [n["name"] for n in out["items"]] == ["net"]


# --- storage metageneration ------------------------------------------------------------------


def test_storage_metageneration_precondition(server: MockServer) -> None:
    b = bucket(server)
    st = server.client("storage").buckets()
    assert b["metageneration"] == "1"
    with pytest.raises(HttpError) as e:
        st.patch(bucket=b["name"], ifMetagenerationMatch="7", body={"labels": {"x": "y"}}).execute()
    assert_error(e, 412, "FAILED_PRECONDITION", "conditionNotMet")
    assert st.get(bucket=b["name"]).execute()["labels"] == {"a": "1"}

    out = st.patch(bucket=b["name"], ifMetagenerationMatch="1", body={"labels": {"x": "y"}}).execute()
    assert out["metageneration"] == "2"
    assert out["labels"] == {"a": "1", "x": "y"}  # merge patch: map entries merge
    assert out["generation"] == b["generation"] and out["timeCreated"] == b["timeCreated"]
    assert out["etag"] != b["etag"]
    out = st.patch(bucket=b["name"], ifMetagenerationMatch="2", body={"labels": {"a": None}}).execute()
    assert out["metageneration"] == "3"
    assert out["labels"] == {"x": "y"}  # null deletes
    assert st.get(bucket=b["name"]).execute() == out


def test_storage_delete_metageneration_precondition(server: MockServer) -> None:
    b = bucket(server)
    st = server.client("storage").buckets()
    with pytest.raises(HttpError) as e:
        st.delete(bucket=b["name"], ifMetagenerationMatch="2").execute()
    assert_error(e, 412, "FAILED_PRECONDITION", "conditionNotMet")
    st.delete(bucket=b["name"], ifMetagenerationMatch="1").execute()
    with pytest.raises(HttpError) as e:
        st.get(bucket=b["name"]).execute()
    assert e.value.resp.status == 404


def test_storage_patch_merges_nested_objects(server: MockServer) -> None:
    b = bucket(server)
    st = server.client("storage").buckets()
    out = st.patch(bucket=b["name"], body={"iamConfiguration": {"publicAccessPrevention": "enforced"}}).execute()
    assert out["iamConfiguration"]["uniformBucketLevelAccess"]["enabled"] is True
    assert out["iamConfiguration"]["publicAccessPrevention"] == "enforced"


def test_storage_list_is_per_project(server: MockServer) -> None:
    bucket(server, "b1")
    server.client("storage").buckets().insert(project="other-project", body={"name": "b2"}).execute()
    out = server.client("storage").buckets().list(project=P).execute()
    assert out["kind"] == "storage#buckets"
    assert [b["name"] for b in out["items"]] == ["b1"]


# --- immutability ----------------------------------------------------------------------------------


def test_kms_purpose_is_immutable(server: MockServer) -> None:
    name = crypto_key(server)
    keys = server.client("cloudkms").projects().locations().keyRings().cryptoKeys()
    with pytest.raises(HttpError) as e:
        keys.patch(name=name, updateMask="purpose", body={"purpose": "ASYMMETRIC_SIGN"}).execute()
    err = assert_error(e, 400, "INVALID_ARGUMENT")
    assert "purpose" in err["message"]
    assert keys.get(name=name).execute()["purpose"] == "ENCRYPT_DECRYPT"
    # the same value is not a change
    keys.patch(name=name, updateMask="purpose,rotationPeriod", body={"purpose": "ENCRYPT_DECRYPT", "rotationPeriod": "86400s"}).execute()
    assert keys.get(name=name).execute()["rotationPeriod"] == "86400s"


def test_secret_replication_is_immutable(server: MockServer) -> None:
    name = secret(server)
    with pytest.raises(HttpError) as e:
        server.client("secretmanager").projects().secrets().patch(
            name=name, updateMask="replication", body={"replication": {"userManaged": {"replicas": [{"location": "us-east1"}]}}}
        ).execute()
    assert_error(e, 400, "INVALID_ARGUMENT")


def test_subnetwork_network_is_immutable(server: MockServer) -> None:
    sub = subnetwork(server)
    network(server, "other")
    with pytest.raises(HttpError) as e:
        server.client("compute").subnetworks().patch(
            project=P, region="us-central1", subnetwork="sub", body={"fingerprint": sub["fingerprint"], "network": f"projects/{P}/global/networks/other"}
        ).execute()
    assert_error(e, 400, "INVALID_ARGUMENT", "invalid")


def test_output_only_fields_are_ignored_on_create_and_update(server: MockServer) -> None:
    keys = server.client("cloudkms").projects().locations().keyRings()
    ring = keys.create(parent=LOC, keyRingId="r", body={"createTime": "2000-01-01T00:00:00Z"}).execute()
    assert not ring["createTime"].startswith("2000")
    ap = alert_policy(server)
    out = server.client("monitoring").projects().alertPolicies().patch(
        name=ap["name"], updateMask="displayName", body={"displayName": "x", "creationRecord": {"mutateTime": "2000-01-01T00:00:00Z"}}
    ).execute()
    assert out["creationRecord"] == ap["creationRecord"]


# --- errors ---------------------------------------------------------------------------------------


def test_duplicate_create_is_already_exists(server: MockServer) -> None:
    topic(server)
    with pytest.raises(HttpError) as e:
        topic(server)
    assert_error(e, 409, "ALREADY_EXISTS")

    bucket(server)
    with pytest.raises(HttpError) as e:
        bucket(server)
    assert_error(e, 409, "ALREADY_EXISTS", "alreadyExists")

    network(server)
    with pytest.raises(HttpError) as e:
        server.client("compute").networks().insert(project=P, body={"name": "net"}).execute()
    assert_error(e, 409, "ALREADY_EXISTS", "alreadyExists")

    keys = server.client("cloudkms").projects().locations().keyRings()
    keys.create(parent=LOC, keyRingId="dup", body={}).execute()
    with pytest.raises(HttpError) as e:
        keys.create(parent=LOC, keyRingId="dup", body={}).execute()
    assert_error(e, 409, "ALREADY_EXISTS")


@pytest.mark.parametrize(
    ("api", "legacy"),
    [("pubsub", None), ("secretmanager", None), ("spanner", None), ("compute", "notFound"), ("storage", "notFound"), ("dns", "notFound")],
)
def test_not_found_bodies(server: MockServer, api: str, legacy: str | None) -> None:
    c = server.client(api)
    req = {
        "pubsub": lambda: c.projects().topics().get(topic=f"projects/{P}/topics/missing"),
        "secretmanager": lambda: c.projects().secrets().get(name=f"projects/{P}/secrets/missing"),
        "spanner": lambda: c.projects().instances().get(name=f"projects/{P}/instances/missing"),
        "compute": lambda: c.networks().get(project=P, network="missing"),
        "storage": lambda: c.buckets().get(bucket="missing"),
        "dns": lambda: c.managedZones().get(project=P, managedZone="missing"),
    }[api]
    with pytest.raises(HttpError) as e:
        req().execute()
    err = assert_error(e, 404, "NOT_FOUND", legacy)
    assert "missing" in err["message"]


def test_update_and_delete_of_missing_resource_are_not_found(server: MockServer) -> None:
    with pytest.raises(HttpError) as e:
        server.client("storage").buckets().patch(bucket="missing", body={"labels": {}}).execute()
    assert_error(e, 404, "NOT_FOUND", "notFound")
    with pytest.raises(HttpError) as e:
        server.client("pubsub").projects().topics().delete(topic=f"projects/{P}/topics/missing").execute()
    assert_error(e, 404, "NOT_FOUND")


# --- service-generated IDs ---------------------------------------------------------------------------


def test_monitoring_ids_are_numeric_and_distinct(server: MockServer) -> None:
    mon = server.client("monitoring").projects()
    a, b = alert_policy(server), alert_policy(server)
    assert a["name"] != b["name"]
    for r in (a, b):
        m = re.fullmatch(rf"projects/{P}/alertPolicies/(\d+)", r["name"])
        assert m and len(m.group(1)) >= 10
    ch = mon.notificationChannels().create(name=f"projects/{P}", body={"type": "email", "labels": {"email_address": "a@example.com"}}).execute()
    assert re.fullmatch(rf"projects/{P}/notificationChannels/\d{{10,}}", ch["name"])
    assert mon.notificationChannels().get(name=ch["name"]).execute() == ch
    # a name sent on create is ignored: the service assigns it
    d = mon.alertPolicies().create(name=f"projects/{P}", body={"name": f"projects/{P}/alertPolicies/mine", "displayName": "d", "combiner": "OR"}).execute()
    assert re.fullmatch(rf"projects/{P}/alertPolicies/\d+", d["name"])


# --- long-running operations ----------------------------------------------------------------------


def test_google_longrunning_done_after_n_polls(slow_lro: MockServer) -> None:
    ar = slow_lro.client("artifactregistry").projects().locations()
    repo = f"{LOC}/repositories/r"
    op = ar.repositories().create(parent=LOC, repositoryId="r", body={"format": "DOCKER"}).execute()
    assert "done" not in op and op["name"].startswith(f"{LOC}/operations/")  # proto3 JSON drops false
    assert op["metadata"]["@type"] == "type.googleapis.com/google.devtools.artifactregistry.v1.OperationMetadata"
    states = [ar.operations().get(name=op["name"]).execute() for _ in range(4)]
    assert [s.get("done", False) for s in states] == [False, False, True, True]
    done = states[2]
    assert done["response"]["@type"] == "type.googleapis.com/google.devtools.artifactregistry.v1.Repository"
    assert done["response"]["name"] == repo
    assert states[3] == done

    op = ar.repositories().delete(name=repo).execute()
    for _ in range(3):
        op = ar.operations().get(name=op["name"]).execute()
    assert op.get("done", False) is True and op["response"] == {"@type": "type.googleapis.com/google.protobuf.Empty"}


def test_spanner_operation_metadata(slow_lro: MockServer) -> None:
    inst = slow_lro.client("spanner").projects().instances()
    op = inst.create(parent=f"projects/{P}", body={"instanceId": "i", "instance": {"config": f"projects/{P}/instanceConfigs/regional-us-west1", "displayName": "d", "nodeCount": 1}}).execute()
    assert op["metadata"]["@type"] == "type.googleapis.com/google.spanner.admin.instance.v1.CreateInstanceMetadata"
    assert op["metadata"]["instance"]["name"] == f"projects/{P}/instances/i"
    for _ in range(3):
        op = inst.operations().get(name=op["name"]).execute()
    assert op.get("done", False) and op["response"]["@type"] == "type.googleapis.com/google.spanner.admin.instance.v1.Instance"
    assert op["response"]["state"] == "READY"


def test_lro_polls_zero_is_done_at_once(server: MockServer) -> None:
    op = server.client("artifactregistry").projects().locations().repositories().create(parent=LOC, repositoryId="r", body={"format": "DOCKER"}).execute()
    assert op.get("done", False) is True and op["response"]["name"] == f"{LOC}/repositories/r"


def test_compute_operation_running_then_done(slow_lro: MockServer) -> None:
    c = slow_lro.client("compute")
    op = c.networks().insert(project=P, body={"name": "n", "autoCreateSubnetworks": False}).execute()
    assert op["status"] == "RUNNING" and op["progress"] == 0 and op["operationType"] == "insert"
    assert op["selfLink"] == f"https://www.googleapis.com/compute/v1/projects/{P}/global/operations/{op['name']}"
    seen = [c.globalOperations().get(project=P, operation=op["name"]).execute()["status"] for _ in range(3)]
    assert seen == ["RUNNING", "RUNNING", "DONE"]
    done = c.globalOperations().get(project=P, operation=op["name"]).execute()
    assert done["progress"] == 100 and done["endTime"] and "error" not in done
    assert done["targetId"] == c.networks().get(project=P, network="n").execute()["id"]


def test_dns_operation_pending_then_done(slow_lro: MockServer) -> None:
    dns = slow_lro.client("dns")
    z = dns.managedZones().create(project=P, body={"name": "z", "dnsName": "example.com.", "description": "a", "visibility": "public"}).execute()
    assert z["kind"] == "dns#managedZone"
    op = dns.managedZones().patch(project=P, managedZone="z", body={"description": "b"}).execute()
    assert op["kind"] == "dns#operation" and op["status"] == "pending"
    assert op["zoneContext"]["newValue"]["description"] == "b"
    seen = [dns.managedZoneOperations().get(project=P, managedZone="z", operation=op["id"]).execute()["status"] for _ in range(3)]
    assert seen == ["pending", "pending", "done"]
    assert dns.managedZones().get(project=P, managedZone="z").execute()["description"] == "b"


def test_operations_of_apis_sharing_a_url_template(slow_lro: MockServer) -> None:
    # artifactregistry and cloudkms both serve GET v1/projects/*/locations/*/operations/*
    ar = slow_lro.client("artifactregistry").projects().locations()
    kms = slow_lro.client("cloudkms").projects().locations()
    ar_op = ar.repositories().create(parent=LOC, repositoryId="r", body={"format": "DOCKER"}).execute()
    kms.keyRings().create(parent=LOC, keyRingId="k", body={}).execute()
    kms_op = kms.keyRings().delete(name=f"{LOC}/keyRings/k").execute()
    for _ in range(3):
        kms_res = kms.operations().get(name=kms_op["name"]).execute()
        ar_res = ar.operations().get(name=ar_op["name"]).execute()
    assert kms_res.get("done", False) and kms_res["response"]["@type"] == "type.googleapis.com/google.protobuf.Empty"
    assert ar_res.get("done", False) and ar_res["response"]["name"] == f"{LOC}/repositories/r"


# --- faults -----------------------------------------------------------------------------------------


def test_fault_503_on_get(server: MockServer) -> None:
    topic(server)
    f = server.engine.faults.add(method="pubsub.projects.topics.get", status=503, times=1)
    ps = server.client("pubsub").projects().topics()
    with pytest.raises(HttpError) as e:
        ps.get(topic=f"projects/{P}/topics/t").execute()
    assert_error(e, 503, "UNAVAILABLE")
    assert e.value.resp["content-type"].startswith("application/json")
    assert f.fired == 1
    assert ps.get(topic=f"projects/{P}/topics/t").execute()["name"] == f"projects/{P}/topics/t"


def test_fault_429_on_create_creates_nothing(server: MockServer) -> None:
    server.engine.faults.add(api="storage.*", method="storage.buckets.insert", status=429, message="Quota exceeded", times=1)
    with pytest.raises(HttpError) as e:
        bucket(server)
    err = assert_error(e, 429, "RESOURCE_EXHAUSTED", "rateLimitExceeded")
    assert err["message"] == "Quota exceeded"
    with pytest.raises(HttpError) as e:
        server.client("storage").buckets().get(bucket="bkt-semantics").execute()
    assert e.value.resp.status == 404
    assert bucket(server)["name"] == "bkt-semantics"  # times=1: the retry goes through


def test_lro_error_google_longrunning(slow_lro: MockServer) -> None:
    slow_lro.engine.faults.add(method="artifactregistry.projects.locations.repositories.create", lro_error="Internal error creating repository")
    ar = slow_lro.client("artifactregistry").projects().locations()
    op = ar.repositories().create(parent=LOC, repositoryId="r", body={"format": "DOCKER"}).execute()
    assert op.get("done", False) is False
    for _ in range(3):
        op = ar.operations().get(name=op["name"]).execute()
    assert op.get("done", False) is True and "response" not in op
    assert op["error"]["code"] == 13 and op["error"]["message"] == "Internal error creating repository"
    with pytest.raises(HttpError) as e:
        ar.repositories().get(name=f"{LOC}/repositories/r").execute()
    assert e.value.resp.status == 404


def test_lro_error_compute(server: MockServer) -> None:
    server.engine.faults.add(method="compute.networks.insert", lro_error="The network quota is exceeded")
    c = server.client("compute")
    op = c.networks().insert(project=P, body={"name": "n"}).execute()
    op = compute_wait(server, op)
    assert op["status"] == "DONE"
    errs = op["error"]["errors"]
    assert errs and errs[0]["message"] == "The network quota is exceeded" and errs[0]["code"]
    with pytest.raises(HttpError) as e:
        c.networks().get(project=P, network="n").execute()
    assert e.value.resp.status == 404


def test_lro_error_dns_update_changes_nothing(server: MockServer) -> None:
    dns = server.client("dns").managedZones()
    dns.create(project=P, body={"name": "z", "dnsName": "example.com.", "description": "a"}).execute()
    server.engine.faults.add(method="dns.managedZones.patch", lro_error="boom")
    op = dns.patch(project=P, managedZone="z", body={"description": "b"}).execute()
    assert op["status"] == "done" and op["error"]["errors"][0]["message"] == "boom"
    assert dns.get(project=P, managedZone="z").execute()["description"] == "a"


def _statuses(seed: int, n: int = 40) -> list[int]:
    eng = MockGCP(seed=seed)
    eng.handle("PUT", f"/v1/projects/{P}/topics/t", {}, {})
    eng.faults.add(method="*.get", status=503, probability=0.5)
    return [eng.handle("GET", f"/v1/projects/{P}/topics/t", {}, None)[1].status for _ in range(n)]


def test_fault_probability_is_deterministic_with_a_seed() -> None:
    a, b = _statuses(7), _statuses(7)
    assert a == b
    assert set(a) == {200, 503}
    assert 8 <= a.count(503) <= 32
    assert _statuses(8) != a


def test_fault_times_limits_firing(server: MockServer) -> None:
    topic(server)
    f = server.engine.faults.add(api="pubsub.v1", method="pubsub.projects.topics.*", path="/topics/t$", status=500, times=2)
    ps = server.client("pubsub").projects().topics()
    codes = []
    for _ in range(4):
        try:
            ps.get(topic=f"projects/{P}/topics/t").execute()
            codes.append(200)
        except HttpError as e:
            codes.append(e.resp.status)
    assert codes == [500, 500, 200, 200]
    assert f.fired == 2


def test_fault_rules_match_api_method_and_path(server: MockServer) -> None:
    topic(server, "a")
    topic(server, "b")
    server.engine.faults.add(method="pubsub.projects.topics.get", path="/topics/b$", status=503)
    server.engine.faults.add(api="compute.*", status=500)
    ps = server.client("pubsub").projects().topics()
    assert ps.get(topic=f"projects/{P}/topics/a").execute()["name"].endswith("/a")
    with pytest.raises(HttpError):
        ps.get(topic=f"projects/{P}/topics/b").execute()
    assert ps.list(project=f"projects/{P}").execute()["topics"]


def test_fault_path_is_the_url_path_in_process_and_over_http(server: MockServer) -> None:
    topic(server)
    rule = "^/v1/projects/[^/]+/topics/t$"
    server.engine.faults.add(path=rule, status=503, times=1)
    with pytest.raises(HttpError) as e:
        server.client("pubsub").projects().topics().get(topic=f"projects/{P}/topics/t").execute()
    assert e.value.resp.status == 503
    eng = MockGCP()
    eng.handle("PUT", f"/v1/projects/{P}/topics/t", {}, {})
    eng.faults.add(path=rule, status=503, times=1)
    assert eng.handle("GET", f"/v1/projects/{P}/topics/t", {}, None)[1].status == 503


def test_fault_latency_delays(server: MockServer) -> None:
    topic(server)
    ps = server.client("pubsub").projects().topics()
    t0 = time.monotonic()
    ps.get(topic=f"projects/{P}/topics/t").execute()
    fast = time.monotonic() - t0
    server.engine.faults.add(method="pubsub.projects.topics.get", latency_ms=400, times=1)
    t0 = time.monotonic()
    out = ps.get(topic=f"projects/{P}/topics/t").execute()  # delayed, then answered normally
    slow = time.monotonic() - t0
    assert out["name"] == f"projects/{P}/topics/t"
    assert slow >= 0.4 and slow > fast + 0.3


def test_fault_drop_closes_the_connection(server: MockServer) -> None:
    topic(server)
    server.engine.faults.add(method="pubsub.projects.topics.get", drop=True, times=1)
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.request("GET", f"/v1/projects/{P}/topics/t")
        with pytest.raises((http.client.RemoteDisconnected, ConnectionResetError, http.client.BadStatusLine)):
            conn.getresponse()
    finally:
        conn.close()
    # Nothing was answered; the lost request is logged with status 000.
    assert [(e.method, e.url.split("?")[0], e.status_code, e.response_body) for e in server.log if e.method == "GET"] == [
        ("GET", f"https://pubsub.googleapis.com/v1/projects/{P}/topics/t", 0, None)
    ]
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.request("GET", f"/v1/projects/{P}/topics/t")
        assert conn.getresponse().status == 200  # times=1
    finally:
        conn.close()


# --- state dump / load -------------------------------------------------------------------------------


def test_dump_load_round_trip(slow_lro: MockServer) -> None:
    topic(slow_lro, labels={"a": "1"})
    b = bucket(slow_lro)
    ar = slow_lro.client("artifactregistry").projects().locations()
    op = ar.repositories().create(parent=LOC, repositoryId="r", body={"format": "DOCKER"}).execute()  # left pending
    ck = crypto_key(slow_lro)
    kms_op = slow_lro.client("cloudkms").projects().locations().keyRings().cryptoKeys().delete(name=ck).execute()

    state = json.loads(json.dumps(slow_lro.engine.dump()))
    eng = MockGCP(lro_polls=3)
    eng.load(state)
    assert json.loads(json.dumps(eng.dump())) == state
    with MockServer(eng) as s2:
        t = s2.client("pubsub").projects().topics().get(topic=f"projects/{P}/topics/t").execute()
        assert t["labels"] == {"a": "1"}
        assert s2.client("storage").buckets().get(bucket=b["name"]).execute() == b
        # buckets keep their project: listed under it
        assert [x["name"] for x in s2.client("storage").buckets().list(project=P).execute()["items"]] == [b["name"]]
        # a pending operation keeps counting down where it was
        ops = s2.client("artifactregistry").projects().locations().operations()
        assert [ops.get(name=op["name"]).execute().get("done", False) for _ in range(3)] == [False, False, True]
        assert s2.client("artifactregistry").projects().locations().repositories().get(name=f"{LOC}/repositories/r").execute()["name"].endswith("/r")
        kops = s2.client("cloudkms").projects().locations().operations()
        assert [kops.get(name=kms_op["name"]).execute().get("done", False) for _ in range(3)] == [False, False, True]


def test_a_subscription_to_a_missing_topic_is_not_found(server: MockServer) -> None:
    """As the service and the Pub/Sub emulator answer (overrides.yaml ``requires``)."""
    subs = server.client("pubsub").projects().subscriptions()
    with pytest.raises(HttpError) as e:
        subs.create(name=f"projects/{P}/subscriptions/s", body={"topic": f"projects/{P}/topics/absent"}).execute()
    assert e.value.resp.status == 404 and "Resource not found (resource=absent)" in str(e.value)
    topic(server, "present")
    assert subs.create(name=f"projects/{P}/subscriptions/s", body={"topic": f"projects/{P}/topics/present"}).execute()["name"].endswith("/s")


def test_a_restarted_mockgcp_never_hands_out_an_id_again() -> None:
    """``--state`` keeps the ID generator's position with the resources."""
    from kccgen.mockgcp.state import State

    first = State(seed=0)
    ids = [first.digits(12) for _ in range(3)]
    restarted = State(seed=0)
    restarted.load(json.loads(json.dumps(first.dump())))
    assert restarted.digits(12) == first.digits(12) and restarted.digits(12) not in ids


def test_a_create_without_a_required_field_is_invalid(server: MockServer) -> None:
    """overrides.yaml ``required``: as the service answers (400), where Discovery says it in prose only."""
    instances = server.client("spanner").projects().instances()
    with pytest.raises(HttpError) as e:
        instances.create(parent=f"projects/{P}", body={"instanceId": "i", "instance": {"displayName": "I"}}).execute()
    assert e.value.resp.status == 400 and "Missing required field(s): config." in str(e.value)
