"""Sensitive Data Protection (DLP): a stored infoType keeps its config in a version.

``storedInfoTypes.create`` takes ``{config, storedInfoTypeId}`` and answers the
stored infoType, whose ``currentVersion.config`` is that config;
``storedInfoTypes.patch`` takes ``{config, updateMask}`` and makes a new version
of it. The generic semantics store what the request carries, so this profile
serves those two; get, list and delete stay generic. The service builds a large
dictionary or a regex in the background (the version's state goes from
PENDING to READY, with pendingVersions meanwhile); mockgcp's is READY at once.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kccgen.mockgcp.apis import Profile, rfc3339
from kccgen.mockgcp.errors import ApiError, already_exists, not_found
from kccgen.mockgcp.operations import Response, now
from kccgen.mockgcp.state import State
from kccgen.mockgcp.update import get_path, set_path

_STORED = ("storedInfoTypes.create", "storedInfoTypes.patch")


class Dlp(Profile):
    def serve(self, eng: Any, api: Any, route: Any, path: str, query: Mapping[str, list[str]], body: Any, lro_error: str | None) -> Response | None:
        if not route.method.id.endswith(_STORED):
            return None
        coll = api.collections[route.resource]
        body = body if isinstance(body, dict) else {}
        config = body.get("config")
        if not isinstance(config, dict) or not config:
            raise ApiError(400, "config must be specified.")
        when = rfc3339(now())
        if route.verb == "create":
            sid = body.get("storedInfoTypeId")
            if not sid:
                raise ApiError(400, "storedInfoTypeId must be specified.")
            key = f"{coll.key(path)}/{sid}"  # the collection path plus the ID
            sk = State.store_key(api.key, key)
            if sk in eng.state.resources:
                raise already_exists(key)
            resource = {"name": key, "currentVersion": {"config": copy.deepcopy(config), "createTime": when, "state": "READY"}}
            eng.state.resources[sk] = resource
            return Response(200, copy.deepcopy(resource))
        key = coll.key(path)
        sk = State.store_key(api.key, key)
        old = eng.state.resources.get(sk)
        if old is None:
            raise not_found(key)
        new_config = copy.deepcopy(((old.get("currentVersion") or {}).get("config")) or {})
        mask = [p for p in (body.get("updateMask") or "").split(",") if p]
        if mask:
            for p in mask:
                set_path(new_config, p, get_path(config, p))
        else:
            new_config = copy.deepcopy(config)
        new = {**copy.deepcopy(old), "currentVersion": {"config": new_config, "createTime": when, "state": "READY"}}
        eng.state.resources[sk] = new
        return Response(200, copy.deepcopy(new))


PROFILE = Dlp()
