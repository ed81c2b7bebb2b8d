"""GKE: a cluster and its node pools change one field per call, through verbs.

``clusters.update`` takes exactly one ``ClusterUpdate.desired*`` field (GKE
refuses more: "exactly one update can be applied to a cluster with each
request"); ``setResourceLabels`` checks the label fingerprint; the other
``set*`` verbs write one field each. ``nodePools.update`` names node config
fields at its top level (``machineType`` for ``config.machineType``, some in a
wrapper: ``labels: {labels}``); ``setSize`` resizes. A cluster runs one
operation at a time: a write while another is running is refused with
FAILED_PRECONDITION, as GKE does, so a client must wait for each call.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from kccgen.mockgcp.apis import Fill, Profile
from kccgen.mockgcp.errors import ApiError
from kccgen.mockgcp.update import set_path

_CLUSTERS = "container.projects.locations.clusters."
_POOLS = "container.projects.locations.clusters.nodePools."

# set verb -> (request field, cluster field it writes)
_CLUSTER_SETS = {
    "setResourceLabels": ("resourceLabels", "resourceLabels"),
    "setLegacyAbac": ("enabled", "legacyAbac.enabled"),
    "setLocations": ("locations", "locations"),
    "setLogging": ("loggingService", "loggingService"),
    "setMonitoring": ("monitoringService", "monitoringService"),
    "setMaintenancePolicy": ("maintenancePolicy", "maintenancePolicy"),
    "setNetworkPolicy": ("networkPolicy", "networkPolicy"),
    "setAddons": ("addonsConfig", "addonsConfig"),
}
# ClusterUpdate fields not named after the cluster field they write
_DESIRED = {
    "desiredMasterVersion": "currentMasterVersion",
    "desiredNodeVersion": "currentNodeVersion",
    "desiredClusterAutoscaling": "autoscaling",
    "desiredDatapathProvider": "networkConfig.datapathProvider",
    "desiredDefaultSnatStatus": "networkConfig.defaultSnatStatus",
    "desiredDnsConfig": "networkConfig.dnsConfig",
    "desiredGatewayApiConfig": "networkConfig.gatewayApiConfig",
    "desiredPrivateIpv6GoogleAccess": "networkConfig.privateIpv6GoogleAccess",
    "desiredStackType": "ipAllocationPolicy.stackType",
    "desiredEnablePrivateEndpoint": "privateClusterConfig.enablePrivateEndpoint",
    "desiredServiceExternalIpsConfig": "networkConfig.serviceExternalIpsConfig",
    "desiredInTransitEncryptionConfig": "networkConfig.inTransitEncryptionConfig",
    "desiredEnableFqdnNetworkPolicy": "networkConfig.enableFqdnNetworkPolicy",
    "desiredEnableMultiNetworking": "networkConfig.enableMultiNetworking",
    "desiredEnableCiliumClusterwideNetworkPolicy": "networkConfig.enableCiliumClusterwideNetworkPolicy",
    "desiredDisableL4LbFirewallReconciliation": "networkConfig.disableL4LbFirewallReconciliation",
}
# ClusterUpdate objects standing for one boolean of the cluster: {enabled}
_DESIRED_FLAGS = {
    "desiredIntraNodeVisibilityConfig": "networkConfig.enableIntraNodeVisibility",
    "desiredL4ilbSubsettingConfig": "networkConfig.enableL4ilbSubsetting",
}
# UpdateNodePoolRequest field -> (node pool field, the wrapper's inner field or "")
_POOL_FIELDS = {
    "nodeVersion": ("version", ""),
    "locations": ("locations", ""),
    "upgradeSettings": ("upgradeSettings", ""),
    "nodeNetworkConfig": ("networkConfig", ""),
    "queuedProvisioning": ("queuedProvisioning", ""),
    "labels": ("config.labels", "labels"),
    "resourceLabels": ("config.resourceLabels", "labels"),
    "tags": ("config.tags", "tags"),
    "taints": ("config.taints", "taints"),
}
_POOL_IGNORED = frozenset({"name", "projectId", "zone", "clusterId", "nodePoolId", "etag"})
_POOL_SETS = {"setAutoscaling": ("autoscaling", "autoscaling"), "setManagement": ("management", "management")}


def _fingerprint(labels: Any) -> str:
    return hashlib.sha256(json.dumps(labels or {}, sort_keys=True).encode()).hexdigest()[:16]


class Container(Profile):
    def fill(self, f: Fill) -> None:
        """What GKE reports of a cluster it made: RUNNING, its label fingerprint,
        an endpoint and versions; of a node pool: RUNNING and its version."""
        res = f.resource
        if f.schema == "Cluster":
            res["labelFingerprint"] = _fingerprint(res.get("resourceLabels"))
            res.setdefault("status", "RUNNING")
            if f.created:
                res.setdefault("endpoint", "34.0.0." + str(int(f.digits(2)) % 250 + 1))
                res.setdefault("currentMasterVersion", res.get("initialClusterVersion") or "1.33.4-gke.1000")
                res.setdefault("currentNodeVersion", res["currentMasterVersion"])
                loc = f.key.split("/")[3] if len(f.key.split("/")) > 3 else ""
                res.setdefault("location", loc)
                res.setdefault("zone", loc)
        elif f.schema == "NodePool":
            res.setdefault("status", "RUNNING")
            if f.created:
                res.setdefault("version", "1.33.4-gke.1000")

    def serve(self, eng: Any, api: Any, route: Any, path: str, query: Mapping[str, list[str]], body: Any, lro_error: str | None) -> Any:
        mid = route.method.id
        verb = mid.rsplit(".", 1)[-1]
        pool = mid.startswith(_POOLS)
        ours = (pool and verb in ("update", "setSize", *_POOL_SETS)) or (mid.startswith(_CLUSTERS) and not pool and verb in ("update", *_CLUSTER_SETS))
        if not ours:
            if (mid.startswith(_CLUSTERS) and verb == "delete") or (pool and verb == "create"):
                # served by the generic semantics, once the cluster is not busy
                self._refuse_if_busy(eng, api, api.collections[route.resource].key(path.split(":", 1)[0]))
            return None
        from kccgen.mockgcp.errors import not_found
        from kccgen.mockgcp.operations import respond
        from kccgen.mockgcp.shapes import lro_style

        coll = api.collections[route.resource]
        key = coll.key(path.split(":", 1)[0])
        sk = f"{api.key}|{key}"
        stored = eng.state.resources.get(sk)
        if stored is None:
            raise not_found(key)
        self._refuse_if_busy(eng, api, key)
        req = body if isinstance(body, dict) else {}
        new = copy.deepcopy(stored)
        if pool:
            self._pool(eng, sk, verb, req, new)
        else:
            self._cluster(verb, req, new, stored)
        if lro_error is None:
            eng.state.resources[sk] = new
        return respond(eng, api, coll, verb, key, new, lro_error, lro_style(api.doc, route.method), old=stored)

    @staticmethod
    def _refuse_if_busy(eng: Any, api: Any, key: str) -> None:
        parts = key.split("/")
        cluster = "/".join(parts[:6]) if len(parts) >= 6 else key
        for k, op in eng.state.operations.items():
            if not k.startswith(api.key + "|") or op.polls_left <= 0:
                continue
            target = str(op.body.get("targetLink", ""))
            if target.endswith("/" + cluster) or f"/{cluster}/" in target:
                raise ApiError(
                    400, f"Cluster is running incompatible operation {op.body.get('name')}.", "FAILED_PRECONDITION"
                )

    @staticmethod
    def _cluster(verb: str, req: dict[str, Any], new: dict[str, Any], stored: dict[str, Any]) -> None:
        if verb == "update":
            raw = req.get("update")
            update: dict[str, Any] = raw if isinstance(raw, dict) else {}
            desired = sorted(k for k in update if k.startswith("desired"))
            if len(desired) != 1:
                raise ApiError(400, "Exactly one update can be applied to a cluster with each request; got " + (", ".join(desired) or "none") + ".", "INVALID_ARGUMENT")
            k = desired[0]
            if k in _DESIRED_FLAGS:
                set_path(new, _DESIRED_FLAGS[k], (update[k] or {}).get("enabled"))
                return
            field = _DESIRED.get(k) or k[len("desired")].lower() + k[len("desired") + 1:]
            set_path(new, field, update[k])
            return
        src, field = _CLUSTER_SETS[verb]
        if verb == "setResourceLabels" and req.get("labelFingerprint") != stored.get("labelFingerprint"):
            raise ApiError(400, "Labels could not be set due to fingerprint mismatch.", "FAILED_PRECONDITION")
        set_path(new, field, req.get(src))
        if verb == "setResourceLabels":
            new["labelFingerprint"] = _fingerprint(new.get("resourceLabels"))

    @staticmethod
    def _pool(eng: Any, sk: str, verb: str, req: dict[str, Any], new: dict[str, Any]) -> None:
        if verb == "setSize":
            count = req.get("nodeCount")
            if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                raise ApiError(400, "node_count must be a non-negative integer.", "INVALID_ARGUMENT")
            eng.state.meta.setdefault(sk, {})["nodeCount"] = count  # GKE reports it on the instance groups, not the pool
            return
        if verb in _POOL_SETS:
            src, field = _POOL_SETS[verb]
            set_path(new, field, req.get(src))
            return
        changed = [k for k in sorted(req) if k not in _POOL_IGNORED]
        if not changed:
            raise ApiError(400, "UpdateNodePoolRequest changes nothing.", "INVALID_ARGUMENT")
        for k in changed:
            field, inner = _POOL_FIELDS.get(k, (f"config.{k}", ""))
            value = req[k].get(inner) if inner and isinstance(req[k], dict) else req[k]
            set_path(new, field, value)


PROFILE = Container()
