"""Service Networking: private connections, which the API names by nothing of their own.

``services.connections`` has no get: a connection is the pair (service, consumer
network), found by ``list?network=`` and changed through ``connections/-`` with
the network in the body (Config Connector's recorded traffic,
servicenetworking/v1beta1/servicenetworkingconnection). The generic semantics
key resources by name, so this profile serves the collection itself. The API
names a consumer network by its project's number; one named by project ID is
stored under the number, as the service answers it (``projects/N/global/...``).
Each write answers a google.longrunning operation (``operations/...``) that
resolves to the connection; the list answers ``{}`` when there is none.

Not modelled: the producer side (the peering's subnetworks), and the checks
that each reserved range is a global ``VPC_PEERING`` address of the consumer
project.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from kccgen.mockgcp.apis import Profile
from kccgen.mockgcp.apis.storage import project_number
from kccgen.mockgcp.catalog import Collection
from kccgen.mockgcp.errors import ApiError, not_found
from kccgen.mockgcp.operations import Response, respond
from kccgen.mockgcp.shapes import lro_style

_PATH = re.compile(r"^v1/services/([^/:]+)/connections(?:/([^/:]+))?(?::(\w+))?$")
_NETWORK = re.compile(r"^projects/([^/]+)/global/networks/([^/]+)$")
_RESOURCE = "services.connections"


def consumer_network(value: Any, field: str) -> str:
    """``projects/<number>/global/networks/<name>``; 400 for anything else."""
    m = _NETWORK.match(str(value or ""))
    if m is None:
        raise ApiError(400, f"{field}: {value!r} is not projects/{{project}}/global/networks/{{network}}")
    return f"projects/{project_number(m.group(1))}/global/networks/{m.group(2)}"


class ServiceNetworking(Profile):
    proto_package_name = "google.cloud.servicenetworking.v1"

    def serve(self, eng: Any, api: Any, route: Any, path: str, query: Mapping[str, list[str]], body: Any, lro_error: str | None) -> Response | None:
        if route.resource != _RESOURCE:
            return None
        m = _PATH.match(path)
        if m is None:
            raise ApiError(400, f"mockgcp: {path} is not a connection path")
        service = m.group(1)
        prefix = f"{api.key}|services/{service}/connections/"
        body = body if isinstance(body, dict) else {}
        coll = Collection(api.key, _RESOURCE, "Connection", "v1/", dict(api.doc.resource(_RESOURCE).methods))
        style = lro_style(api.doc, route.method)

        def answer(action: str, resource: dict[str, Any], old: dict[str, Any] | None = None) -> Response:
            # key "": the operation is named operations/<id>, as this API names them
            return respond(eng, api, coll, action, "", resource, lro_error, style, old)

        if route.verb == "list":
            want = consumer_network(query["network"][0], "network") if query.get("network") else None
            items = [copy.deepcopy(v) for k, v in sorted(eng.state.resources.items()) if k.startswith(prefix) and (want is None or v.get("network") == want)]
            return Response(200, {"connections": items} if items else {})
        if route.verb == "create":
            network = consumer_network(body.get("network"), "network")
            key = prefix + network
            if key in eng.state.resources:
                # "invoking CreateConnection ... when connection is already established will not modify" it
                return answer("create", copy.deepcopy(eng.state.resources[key]))
            conn = {
                "network": network,
                "peering": service.replace(".", "-"),
                "reservedPeeringRanges": list(body.get("reservedPeeringRanges") or []),
                "service": f"services/{service}",
            }
            eng.state.resources[key] = conn
            return answer("create", copy.deepcopy(conn))
        if route.verb == "patch":
            network = consumer_network(body.get("network"), "network")
            key = prefix + network
            old = eng.state.resources.get(key)
            if old is None:
                raise not_found(f"services/{service}/connections for {network}")
            new = copy.deepcopy(old)
            mask = (query.get("updateMask") or [""])[0]
            for f in [x for x in mask.split(",") if x] or ["reservedPeeringRanges"]:
                if f != "reservedPeeringRanges":
                    raise ApiError(400, f"updateMask: {f!r} cannot be changed")
                new[f] = list(body.get(f) or [])
            eng.state.resources[key] = new
            return answer("update", copy.deepcopy(new), old)
        if route.verb == "deleteConnection":
            network = consumer_network(body.get("consumerNetwork"), "consumerNetwork")
            key = prefix + network
            if eng.state.resources.pop(key, None) is None:
                raise not_found(f"services/{service}/connections for {network}")
            return answer("delete", {})
        raise ApiError(501, f"mockgcp does not implement {route.method.id}")


PROFILE = ServiceNetworking()
