"""Compute Engine: full-URL self-links and references, numeric IDs, fingerprints,
its own time format, and the proto request field ``<resource>_resource``."""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from types import MappingProxyType
from typing import Any

from kccgen.mockgcp.apis import Fill, Profile, snake
from kccgen.mockgcp.errors import ApiError

BASE = "https://www.googleapis.com/compute/v1/"


def compute_time(t: datetime) -> str:
    """compute writes local time with an offset and milliseconds."""
    local = t.astimezone(timezone(timedelta(hours=-7)))
    return local.strftime("%Y-%m-%dT%H:%M:%S.") + f"{local.microsecond // 1000:03d}-07:00"


def expand_links(resource: dict[str, Any], project: str) -> None:
    """compute rewrites partial references (projects/p/global/networks/n) to full URLs."""
    for field in ("network", "region", "zone", "subnetwork", "networkProfile"):
        v = resource.get(field)
        if isinstance(v, str) and v.startswith(("projects/", "global/", "regions/")):
            resource[field] = BASE + (v if v.startswith("projects/") else f"projects/{project}/{v}")


def scope_link(resource: dict[str, Any], key: str) -> None:
    """A regional (zonal) resource's region (zone) is the one in its URL, as a
    full URL, whatever the body said (recorded traffic: a subnetwork inserted
    with "region": "projects/p/global/regions/us-central1" reads back
    ".../projects/p/regions/us-central1")."""
    parts = key.split("/")
    if len(parts) > 3 and parts[2] in ("regions", "zones"):
        resource[parts[2][:-1]] = BASE + "/".join(parts[:4])


def subnetwork_gateway(resource: dict[str, Any]) -> None:
    """A subnetwork's gatewayAddress is the first host of its primary range."""
    cidr = resource.get("ipCidrRange")
    if isinstance(cidr, str) and "gatewayAddress" not in resource:
        with contextlib.suppress(ValueError, StopIteration):
            resource["gatewayAddress"] = str(next(ipaddress.ip_network(cidr, strict=False).hosts()))


_XPN = frozenset({"compute.projects.enableXpnResource", "compute.projects.disableXpnResource", "compute.projects.getXpnResources"})
_RULE_VERBS = frozenset({"addRule", "getRule", "patchRule", "removeRule"})
_ASSOCIATION_VERBS = frozenset({"addAssociation", "getAssociation", "removeAssociation"})
_PEERING = frozenset({"compute.networks.addPeering", "compute.networks.updatePeering", "compute.networks.removePeering"})
# what compute fills in a peering the request leaves out
_PEERING_DEFAULTS = {"exportCustomRoutes": False, "importCustomRoutes": False, "exchangeSubnetRoutes": True, "autoCreateRoutes": True, "stackType": "IPV4_ONLY"}


def _network_key(url: str, project: str) -> str:
    """projects/p/global/networks/n from a full or partial URL, or a bare name."""
    rel = url.split("/compute/v1/", 1)[-1]
    if rel.startswith("projects/"):
        return rel
    return f"projects/{project}/global/networks/{rel.rsplit('/', 1)[-1]}"


def _peer_state(resources: Mapping[str, Any], api_key: str, key: str, peering: dict[str, Any]) -> None:
    """ACTIVE when the peer network has a peering back to this one, else INACTIVE."""
    peer = resources.get(f"{api_key}|{_network_key(str(peering.get('network', '')), key.split('/')[1])}") or {}
    back = [p for p in peer.get("peerings") or [] if _network_key(str(p.get("network", "")), "") == key]
    peering["state"] = "ACTIVE" if back else "INACTIVE"
    peering["stateDetails"] = "[2024-04-01T12:34:56.123-07:00]: Connected." if back else "[2024-04-01T12:34:56.123-07:00]: Waiting for peer network to connect."
    for p in back:
        p["state"], p["stateDetails"] = (peering["state"], peering["stateDetails"])


def _policy_of(eng: Any, api: Any, route: Any, path: str) -> tuple[Any, str, str, dict[str, Any]]:
    """(collection, name, store key, stored resource) of the firewall policy a verb
    (``.../firewallPolicies/P/addRule``) acts on; NOT_FOUND when there is none."""
    from kccgen.mockgcp.errors import not_found

    coll = api.collections[route.resource]
    key = coll.key(path).rsplit("/", 1)[0]
    sk = f"{api.key}|{key}"
    stored = eng.state.resources.get(sk)
    if stored is None:
        raise not_found(key)
    return coll, key, sk, stored


def _rewritten(eng: Any, api: Any, route: Any, at: tuple[Any, str, str, dict[str, Any]], field: str, items: list[dict[str, Any]], lro_error: str | None) -> Any:
    """The policy with its ``field`` list replaced and a new fingerprint, stored
    (unless the operation is to fail) and answered as the verb does."""
    from kccgen.mockgcp.operations import respond
    from kccgen.mockgcp.shapes import lro_style

    coll, key, sk, stored = at
    new = {**stored, field: items, "fingerprint": eng.state.token(8)}
    if lro_error is None:
        eng.state.resources[sk] = new
    return respond(eng, api, coll, route.verb, key, new, lro_error, lro_style(api.doc, route.method), old=stored)


class Compute(Profile):
    legacy_errors = True
    self_link_base = BASE

    def body_field(self, request: str, whole: bool) -> str | None:
        """compute's protos name every body ``<message>_resource``: ``network_resource``."""
        return f"{snake(request)}_resource"

    def time_text(self, t: datetime) -> str:
        return compute_time(t)

    def fill(self, f: Fill) -> None:
        res = f.resource
        if f.created:
            res["id"] = f.digits(19)
            res["creationTimestamp"] = compute_time(f.now)
        res["selfLink"] = BASE + f.key
        if "selfLinkWithId" in f.props:
            res["selfLinkWithId"] = BASE + f.key.rsplit("/", 1)[0] + "/" + str(res.get("id", ""))
        expand_links(res, f.project)
        scope_link(res, f.key)
        if f.schema == "Subnetwork":
            subnetwork_gateway(res)
        if "fingerprint" in f.props:
            res["fingerprint"] = f.token(8)

    #: A Shared VPC host project: ``enableXpnHost`` / ``disableXpnHost`` set the
    #: project's ``xpnProjectStatus`` (HOST, else the field is left out).
    switches = MappingProxyType({"compute.projects.enableXpnHost": ("xpnProjectStatus", "HOST"), "compute.projects.disableXpnHost": ("xpnProjectStatus", None)})

    def serve(self, eng: Any, api: Any, route: Any, path: str, query: Mapping[str, list[str]], body: Any, lro_error: str | None) -> Any:
        """A Shared VPC host's service projects: ``enableXpnResource`` attaches one,
        ``disableXpnResource`` detaches it, ``getXpnResources`` lists them
        (``{id, type: PROJECT}``). Only a host takes them (``enableXpnHost`` first)."""
        if route.method.id in _PEERING:
            return self._peering(eng, api, route, path, body, lro_error)
        if route.verb in _RULE_VERBS and route.resource.endswith("irewallPolicies"):
            return self._rule(eng, api, route, path, query, body, lro_error)
        if route.verb in _ASSOCIATION_VERBS and route.resource.endswith("irewallPolicies"):
            return self._association(eng, api, route, path, query, body, lro_error)
        if route.method.id not in _XPN:
            return None
        from kccgen.mockgcp.operations import Response, respond
        from kccgen.mockgcp.shapes import lro_style

        coll = api.collections["projects"]
        host = coll.key(path).removesuffix("/" + route.verb)
        prefix = f"{api.key}|{host}/xpnResources/"
        if route.verb == "getXpnResources":
            items = [dict(v) for k, v in sorted(eng.state.resources.items()) if k.startswith(prefix)]
            return Response(200, {"kind": "compute#projectsGetXpnResources", **({"resources": items} if items else {})})
        status = (eng.state.resources.get(f"{api.key}|{host}") or {}).get("xpnProjectStatus")
        if status != "HOST":
            raise ApiError(400, f"Invalid resource usage: '{host}' is not a shared VPC host project.")
        res = (body or {}).get("xpnResource") if isinstance(body, dict) else None
        if not isinstance(res, dict) or not res.get("id") or res.get("type") != "PROJECT":
            raise ApiError(400, "Invalid value for field 'xpnResource': want {id: <project>, type: PROJECT}.")
        key = prefix + str(res["id"])
        if route.verb == "enableXpnResource":
            eng.state.resources[key] = {"id": str(res["id"]), "type": "PROJECT"}
        elif eng.state.resources.pop(key, None) is None:
            raise ApiError(400, f"Invalid resource usage: '{res['id']}' is not a service project of '{host}'.")
        return respond(eng, api, coll, route.verb, host, eng.state.resources.get(f"{api.key}|{host}") or {}, lro_error, lro_style(api.doc, route.method))

    def _peering(self, eng: Any, api: Any, route: Any, path: str, body: Any, lro_error: str | None) -> Any:
        """A network's peerings: ``addPeering`` appends one (named by
        ``networkPeering.name``, or the legacy top-level ``name``/``peerNetwork``),
        ``updatePeering`` changes the fields it sends of the one it names,
        ``removePeering`` removes it. A peering is ACTIVE once the peer network
        peers back, INACTIVE before and after either side removes it."""
        from kccgen.mockgcp.errors import not_found
        from kccgen.mockgcp.operations import respond
        from kccgen.mockgcp.shapes import lro_style

        coll = api.collections["networks"]
        key = coll.key(path).rsplit("/", 1)[0]  # .../networks/N/addPeering
        sk = f"{api.key}|{key}"
        stored = eng.state.resources.get(sk)
        if stored is None:
            raise not_found(key)
        req = body if isinstance(body, dict) else {}
        given = dict(req.get("networkPeering") or {})
        if route.verb == "addPeering":
            given.setdefault("name", req.get("name"))
            given.setdefault("network", req.get("peerNetwork"))
        name = str(given.get("name") or req.get("name") or "")
        if not name:
            raise ApiError(400, "Invalid value for field 'name': ''. Must be a match of regex '[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?'")
        peerings = [dict(p) for p in stored.get("peerings") or []]
        mine = next((p for p in peerings if p.get("name") == name), None)
        project = key.split("/")[1]
        if route.verb == "addPeering":
            if mine is not None:
                raise ApiError(400, f"There is already a peering {name} on network {key}.")
            peer = str(given.get("network") or "")
            if not peer or f"{api.key}|{_network_key(peer, project)}" not in eng.state.resources:
                raise ApiError(400, f"Invalid value for field 'networkPeering.network': '{peer}'. The peer network does not exist.")
            mine = {**_PEERING_DEFAULTS, **given, "network": BASE + _network_key(peer, project)}
            peerings.append(mine)
        elif mine is None:
            raise ApiError(400, f"There is no peering {name} on network {key}.")
        elif route.verb == "updatePeering":
            mine.update({k: v for k, v in given.items() if k not in ("name", "network", "state", "stateDetails")})
        else:
            peerings.remove(mine)
        new = {**stored, "peerings": peerings}
        if not peerings:
            new.pop("peerings")
        if lro_error is None:
            eng.state.resources[sk] = new
            if route.verb == "removePeering":  # the other side is no longer connected
                for p in (eng.state.resources.get(f"{api.key}|{_network_key(str(mine.get('network', '')), project)}") or {}).get("peerings") or []:
                    if _network_key(str(p.get("network", "")), "") == key:
                        p["state"], p["stateDetails"] = "INACTIVE", "[2024-04-01T12:34:56.123-07:00]: Peer network disconnected."
            else:
                _peer_state(eng.state.resources, api.key, key, mine)
        return respond(eng, api, coll, route.verb, key, new, lro_error, lro_style(api.doc, route.method), old=stored)

    def _rule(self, eng: Any, api: Any, route: Any, path: str, query: Mapping[str, list[str]], body: Any, lro_error: str | None) -> Any:
        """A firewall policy's rules, named by priority: ``addRule`` (refused for a
        taken priority), ``getRule`` / ``patchRule`` / ``removeRule`` with
        ``?priority=`` (400 "does not contain a rule at priority N" for none, as
        real GCP answers: recorded traffic). Each write changes the policy's
        fingerprint."""
        from kccgen.mockgcp.operations import Response

        coll, key, sk, stored = _policy_of(eng, api, route, path)
        req = dict(body) if isinstance(body, dict) else {}
        asked = list(query.get("priority") or [])
        raw: Any = (asked[0] if asked else None) if route.verb != "addRule" else req.get("priority")
        try:
            priority = int(raw) if raw is not None else 0
        except (TypeError, ValueError):
            raise ApiError(400, f"Invalid value for field 'priority': '{raw}'. Must be an integer.") from None
        rules = [dict(r) for r in stored.get("rules") or []]
        mine = next((r for r in rules if int(r.get("priority", -1)) == priority), None)
        if route.verb == "addRule":
            if mine is not None:
                raise ApiError(400, f"Invalid value for field 'resource.priority': '{priority}'. A rule with priority {priority} already exists in the firewall policy.")
            rules.append({**req, "priority": priority, "kind": "compute#firewallPolicyRule"})
        elif mine is None:
            raise ApiError(400, f"Invalid value for field 'priority': '{priority}'. The firewall policy does not contain a rule at priority {priority}.")
        elif route.verb == "getRule":
            return Response(200, dict(mine))
        elif route.verb == "patchRule":
            mine.update({k: v for k, v in req.items() if k not in ("priority", "kind")})
        else:
            rules.remove(mine)
        return _rewritten(eng, api, route, (coll, key, sk, stored), "rules", rules, lro_error)

    def _association(self, eng: Any, api: Any, route: Any, path: str, query: Mapping[str, list[str]], body: Any, lro_error: str | None) -> Any:
        """A firewall policy's associations, named by name: ``addAssociation``
        (refused for a taken name or an attachment target that has one),
        ``getAssociation`` / ``removeAssociation`` with ``?name=`` (400 for none,
        as for a rule; not checked against a recording)."""
        from kccgen.mockgcp.operations import Response

        coll, key, sk, stored = _policy_of(eng, api, route, path)
        req = dict(body) if isinstance(body, dict) else {}
        asked = list(query.get("name") or [])
        name = str(req.get("name") or "") if route.verb == "addAssociation" else (asked[0] if asked else "")
        found = [dict(a) for a in stored.get("associations") or []]
        mine = next((a for a in found if a.get("name") == name), None)
        if route.verb == "addAssociation":
            target = str(req.get("attachmentTarget") or "")
            if not name or not target:
                raise ApiError(400, "Invalid value for field 'resource': an association needs a name and an attachmentTarget.")
            if mine is not None or any(a.get("attachmentTarget") == target for a in found):
                raise ApiError(400, f"An association with that name or attachment target already exists in firewall policy {key}.")
            found.append({**req, "firewallPolicyId": str(stored.get("id", "")), "shortName": stored.get("shortName") or stored.get("name")})
        elif mine is None:
            raise ApiError(400, f"Invalid value for field 'name': '{name}'. The firewall policy does not contain an association named {name}.")
        elif route.verb == "getAssociation":
            return Response(200, dict(mine))
        else:
            found.remove(mine)
        return _rewritten(eng, api, route, (coll, key, sk, stored), "associations", found, lro_error)

    def standing(self, schema: str, key: str, doc: str = "") -> dict[str, Any] | None:
        """Every project answers ``projects.get`` (compute's view of it) once the API is on."""
        parts = key.split("/")
        if schema != "Project" or len(parts) != 2 or parts[0] != "projects":
            return None
        return {"kind": "compute#project", "name": parts[1], "id": str(int(hashlib.sha256(parts[1].encode()).hexdigest()[:15], 16)), "selfLink": BASE + key}


PROFILE = Compute()
