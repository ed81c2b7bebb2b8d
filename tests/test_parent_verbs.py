"""Sub-resources made, changed and removed through their parent's verbs, as data:
ComputeNetworkPeering is an entry of its network's ``peerings``, read through
``networks.get`` (a list read picking the entry by name), made by
``addPeering`` (the peering wrapped, its name inside it), changed by
``updatePeering`` (a routed update: one call per changed field, the peering
named by its name) and removed by ``removePeering``. No Kind-specific code:
specs/kinds/compute-network-peering.yaml names the verbs, the generator checks
them against compute's document.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kccgen.contract import CreateWrapped, DeleteByVerb, ReadByList, UpdateRouted, route_of
from kccgen.runtime.adapter import adapter_for
from kccgen.runtime.mutability import mutability_of
from tests.support.scenarios import PROJECT, Harness, harness, kcc_object, path_of

NET1, NET2 = (f"projects/{PROJECT}/global/networks/{n}" for n in ("net1", "net2"))


@pytest.fixture
def h() -> Iterator[Harness]:
    with harness() as hh:
        yield hh


def _peering(name: str, network: str, peer: str, **spec: Any) -> dict[str, Any]:
    return kcc_object("ComputeNetworkPeering", name, {"networkRef": {"name": network}, "peerNetworkRef": {"name": peer}, **spec})


def _peerings(h: Harness, key: str) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in h.stored("compute.v1", key).get("peerings") or []}


def test_the_adapter_names_the_networks_verbs() -> None:
    a = adapter_for("ComputeNetworkPeering")
    assert a.get.method == "get" and a.read_list == ReadByList("peerings", (("name", "{networkPeering}"),))
    assert isinstance(a.create, CreateWrapped) and (a.create.call.method, a.create.id_field) == ("addPeering", "networkPeering.name")
    assert isinstance(a.delete, DeleteByVerb) and a.delete.call.method == "removePeering" and a.delete.body == (("name", "{networkPeering}"),)
    assert isinstance(a.update, UpdateRouted) and {r.call.method for r in a.update.routes} == {"updatePeering"}
    assert dict(a.create.call.params) == {"project": "{project}", "network": "{network}"}  # the parent's path
    rows = mutability_of("ComputeNetworkPeering")
    assert rows["spec.exportCustomRoutes"].updatable
    assert not rows["spec.peerNetworkRef"].updatable  # no verb changes the peer: refused by name


def test_two_networks_peer_update_one_field_and_remove(h: Harness) -> None:
    for n in ("net1", "net2"):
        h.ready(kcc_object("ComputeNetwork", n, {"autoCreateSubnetworks": False}))
    since = h.mark()
    obj = h.ready(_peering("p12", "net1", "net2"))
    assert obj["status"]["externalRef"] == f"{NET1}/networkPeerings/p12"
    (add,) = h.writes(since)
    assert add.method == "POST" and path_of(add).endswith("global/networks/net1/addPeering")
    assert set(add.request_json) == {"networkPeering"}  # nothing but the peering: no networkRef or legacy fields
    assert add.request_json["networkPeering"]["name"] == "p12" and add.request_json["networkPeering"]["network"].endswith("global/networks/net2")
    assert _peerings(h, NET1)["p12"]["state"] == "INACTIVE"  # the peer has not peered back yet

    h.ready(_peering("p21", "net2", "net1"))
    assert _peerings(h, NET1)["p12"]["state"] == "ACTIVE" and _peerings(h, NET2)["p21"]["state"] == "ACTIVE"

    since = h.mark()
    again = h.reconcile(_peering("p12", "net1", "net2"))
    assert again.ready and h.writes(since) == []  # one GET of the network, no write

    since = h.mark()
    h.ready(_peering("p12", "net1", "net2", exportCustomRoutes=True))
    (upd,) = h.writes(since)
    assert upd.method == "PATCH" and path_of(upd).endswith("global/networks/net1/updatePeering")
    assert upd.request_json == {"networkPeering": {"name": "p12", "exportCustomRoutes": True}}
    assert _peerings(h, NET1)["p12"]["exportCustomRoutes"] is True and "p21" in _peerings(h, NET2)

    since = h.mark()
    refused = h.reconcile(_peering("p12", "net1", "net1", exportCustomRoutes=True))
    assert not refused.ready and "spec.peerNetworkRef" in refused.message and h.writes(since) == []

    since = h.mark()
    assert h.delete(_peering("p12", "net1", "net2")).deleted
    (rm,) = h.writes(since)
    assert rm.method == "POST" and path_of(rm).endswith("global/networks/net1/removePeering") and rm.request_json == {"name": "p12"}
    assert "p12" not in _peerings(h, NET1) and _peerings(h, NET2)["p21"]["state"] == "INACTIVE"
    assert route_of(adapter_for("ComputeNetworkPeering").update, "exportCustomRoutes") is not None


# --- a secret version: made by its secret's addVersion --------------------------------------

SECRET = f"projects/{PROJECT}/secrets/s1"
TEXT = "pw-version-71c3-never-shown"


def _version(**spec: Any) -> dict[str, Any]:
    base = {"secretRef": {"name": "s1"}, "secretData": {"valueFrom": {"secretKeyRef": {"name": "creds", "key": "secretData"}}}}
    return kcc_object("SecretManagerSecretVersion", "v1", {**base, **spec})


def test_a_secret_version_is_made_by_its_secrets_verb_and_its_data_shown_nowhere(h: Harness) -> None:
    import base64
    import json

    a = adapter_for("SecretManagerSecretVersion")
    assert a.create.call.method == "addVersion" and a.create.call.resource == ("projects", "secrets")
    assert a.byte_secrets and isinstance(a.update, UpdateRouted)
    h.ready(kcc_object("SecretManagerSecret", "s1", {"replication": {"automatic": {}}}))
    h.store.add({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds", "namespace": "ns"}, "data": {"secretData": base64.b64encode(TEXT.encode()).decode()}})
    since = h.mark()
    obj = h.ready(_version(enabled=True))
    assert obj["status"]["externalRef"] == f"{SECRET}/versions/1"
    (add,) = h.writes(since)
    assert add.method == "POST" and path_of(add).endswith(f"{SECRET}:addVersion")
    assert add.request_json == {"payload": {"data": base64.b64encode(TEXT.encode()).decode()}}  # bytes travel base64-encoded, nothing else
    assert TEXT not in json.dumps(obj) and base64.b64encode(TEXT.encode()).decode() not in json.dumps(obj)

    since = h.mark()
    again = h.reconcile(obj)
    assert again.ready and h.writes(since) == []  # one GET of the version

    since = h.mark()
    off = h.ready({**obj, "spec": {**obj["spec"], "enabled": False}})
    (disable,) = h.writes(since)
    assert disable.method == "POST" and path_of(disable).endswith(f"{SECRET}/versions/1:disable")
    assert h.stored("secretmanager.v1", f"{SECRET}/versions/1")["state"] == "DISABLED"

    since = h.mark()
    spec = {k: v for k, v in off["spec"].items() if k != "enabled"}
    refused = h.reconcile({**off, "spec": {**spec, "state": "DESTROYED"}})
    assert not refused.ready and "DESTROYED" in refused.message and h.writes(since) == []

    since = h.mark()
    assert h.delete(off).deleted
    (destroy,) = h.writes(since)
    assert path_of(destroy).endswith(f"{SECRET}/versions/1:destroy")
    assert h.stored("secretmanager.v1", f"{SECRET}/versions/1")["state"] == "DESTROYED"  # it stays, its data gone


# --- a firewall policy rule: its policy's addRule/getRule/patchRule/removeRule --------------

POLICY = "locations/global/firewallPolicies/fp1"


def _rule(**spec: Any) -> dict[str, Any]:
    base = {
        "firewallPolicyRef": {"name": "fp1"},
        "priority": 9000,
        "action": "deny",
        "direction": "INGRESS",
        "match": {"layer4Configs": [{"ipProtocol": "tcp"}], "srcIPRanges": ["10.100.0.1/32"]},
    }
    return kcc_object("ComputeFirewallPolicyRule", "r1", {**base, **spec})


def test_a_firewall_policy_rule_is_named_by_its_integer_priority(h: Harness) -> None:
    from urllib.parse import parse_qs, urlsplit

    h.ready(kcc_object("ComputeFirewallPolicy", "fp1", {"shortName": "fp1", "parent": "organizations/123"}))
    since = h.mark()
    obj = h.ready(_rule())
    assert obj["status"]["externalRef"] == f"{POLICY}/rules/9000"
    first = h.entries(since)[0]
    # real GCP answers a rule that is not there with 400 (Config Connector's recorded getRule): absent, so created
    assert first.method == "GET" and path_of(first).endswith(f"{POLICY}/getRule") and first.status_code == 400
    (add,) = h.writes(since)
    assert path_of(add).endswith(f"{POLICY}/addRule") and add.request_json["priority"] == 9000  # an integer, as the API types it
    assert add.request_json["match"]["srcIpRanges"] == ["10.100.0.1/32"] and "firewallPolicyRef" not in add.request_json

    since = h.mark()
    assert h.reconcile(obj).ready and h.writes(since) == []

    since = h.mark()
    h.ready({**obj, "spec": {**obj["spec"], "description": "deny the scanner"}})
    (patch,) = h.writes(since)
    assert path_of(patch).endswith(f"{POLICY}/patchRule") and parse_qs(urlsplit(patch.url).query)["priority"] == ["9000"]
    assert patch.request_json == {"description": "deny the scanner"}

    since = h.mark()
    moved = h.reconcile({**obj, "spec": {**obj["spec"], "priority": 9001}})
    assert not moved.ready and h.writes(since) == []  # the priority is the rule's name: never moved by a write

    since = h.mark()
    assert h.delete(obj).deleted
    (remove,) = h.writes(since)
    assert path_of(remove).endswith(f"{POLICY}/removeRule") and parse_qs(urlsplit(remove.url).query)["priority"] == ["9000"]
    assert h.stored("compute.v1", "firewallPolicies/fp1").get("rules") in (None, [])


def test_a_network_policy_rule_and_association_through_the_policys_verbs(h: Harness) -> None:
    from urllib.parse import parse_qs, urlsplit

    policy = f"projects/{PROJECT}/global/firewallPolicies/np1"
    h.ready(kcc_object("ComputeNetwork", "net1", {"autoCreateSubnetworks": False}))
    h.ready(kcc_object("ComputeNetworkFirewallPolicy", "np1", {}))
    rule = kcc_object(
        "ComputeNetworkFirewallPolicyRule", "r1",
        {"firewallPolicyRef": {"name": "np1"}, "resourceID": "1000", "action": "allow", "direction": "INGRESS", "match": {"layer4Configs": [{"ipProtocol": "tcp"}], "srcIpRanges": ["10.0.0.0/8"]}},
    )
    since = h.mark()
    obj = h.ready(rule)
    assert obj["status"]["externalRef"] == f"{policy}/rules/1000"
    (add,) = h.writes(since)
    assert path_of(add).endswith(f"{policy}/addRule") and str(add.request_json["priority"]) == "1000"
    since = h.mark()
    assert h.reconcile(obj).ready and h.writes(since) == []

    assoc = kcc_object("ComputeNetworkFirewallPolicyAssociation", "a1", {"firewallPolicyRef": {"name": "np1"}, "attachmentTargetRef": {"name": "net1"}})
    since = h.mark()
    aobj = h.ready(assoc)
    (add,) = h.writes(since)
    assert path_of(add).endswith(f"{policy}/addAssociation") and add.request_json["name"] == "a1"
    assert add.request_json["attachmentTarget"].endswith("global/networks/net1")
    since = h.mark()
    assert h.reconcile(aobj).ready and h.writes(since) == []

    since = h.mark()
    assert h.delete(aobj).deleted and h.delete(obj).deleted
    removes = [(path_of(e).rsplit("/", 1)[-1], parse_qs(urlsplit(e.url).query)) for e in h.writes(since)]
    assert [(verb, q.get("name") or q.get("priority")) for verb, q in removes] == [("removeAssociation", ["a1"]), ("removeRule", ["1000"])]
