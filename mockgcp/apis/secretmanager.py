"""Secret Manager: quoted etags, ``ttl`` turned into ``expireTime``, and versions made by their secret's ``addVersion``."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from datetime import timedelta
from types import MappingProxyType
from typing import Any

from kccgen.mockgcp.apis import Fill, Profile, rfc3339
from kccgen.mockgcp.errors import ApiError


def ttl_to_expire_time(f: Fill) -> None:
    """Secret Manager's ``ttl`` is input-only: it becomes ``expireTime`` = now + ttl."""
    ttl = f.resource.pop("ttl", None)
    if isinstance(ttl, str) and ttl.endswith("s"):
        try:
            seconds = float(ttl[:-1])
        except ValueError:
            return
        t = f.now + timedelta(seconds=seconds)
        f.resource["expireTime"] = rfc3339(t)


_ADD = "secretmanager.projects.secrets.addVersion"
_DESTROY = "secretmanager.projects.secrets.versions.destroy"


class SecretManager(Profile):
    proto_package_name = "google.cloud.secretmanager"
    #: a version's state: versions.enable / versions.disable
    switches = MappingProxyType(
        {
            "secretmanager.projects.secrets.versions.enable": ("state", "ENABLED"),
            "secretmanager.projects.secrets.versions.disable": ("state", "DISABLED"),
        }
    )

    def serve(self, eng: Any, api: Any, route: Any, path: str, query: Mapping[str, list[str]], body: Any, lro_error: str | None) -> Any:
        """``addVersion`` makes the secret's next version (1, 2, ...), ENABLED,
        keeping its payload (which GET never answers); ``destroy`` drops the
        payload and leaves the version DESTROYED."""
        if route.method.id not in (_ADD, _DESTROY):
            return None
        from kccgen.mockgcp.errors import invalid, not_found
        from kccgen.mockgcp.operations import Response, now

        key = api.collections[route.resource].key(path.split(":", 1)[0])
        if route.method.id == _DESTROY:
            sk = f"{api.key}|{key}"
            version = eng.state.resources.get(sk)
            if version is None:
                raise not_found(key)
            if version.get("state") == "DESTROYED":
                raise ApiError(400, f"SecretVersion [{key}] is in DESTROYED state.", "FAILED_PRECONDITION")
            version = {**version, "state": "DESTROYED", "destroyTime": rfc3339(now()), "etag": f'"{eng.state.token(9)}"'}
            eng.state.resources[sk] = version
            eng.state.meta.setdefault(sk, {}).pop("payload", None)
            return Response(200, dict(version))
        if f"{api.key}|{key}" not in eng.state.resources:
            raise not_found(key)
        data = ((body or {}).get("payload") or {}).get("data") if isinstance(body, dict) else None
        if not isinstance(data, str):
            raise invalid("Secret Payload cannot be empty.")
        try:
            base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise invalid("Invalid value at 'payload.data' (TYPE_BYTES), Base64 decoding failed.") from None
        taken = [int(k.rsplit("/", 1)[-1]) for k in eng.state.resources if k.startswith(f"{api.key}|{key}/versions/") and k.rsplit("/", 1)[-1].isdigit()]
        name = f"{key}/versions/{max(taken, default=0) + 1}"
        version = {"name": name, "createTime": rfc3339(now()), "state": "ENABLED", "etag": f'"{eng.state.token(9)}"', "replicationStatus": {"automatic": {}}}
        if lro_error is not None:
            raise ApiError(500, lro_error)
        eng.state.resources[f"{api.key}|{name}"] = version
        eng.state.meta[f"{api.key}|{name}"] = {"project": key.split("/")[1], "payload": data}
        return Response(200, dict(version))

    def etag(self, f: Fill) -> str | None:
        """Secret Manager's etags are quoted strings (recorded traffic: "\\"16...\\"")."""
        return f'"{f.token(9)}"' if "etag" in f.props else None

    def fill(self, f: Fill) -> None:
        if f.schema == "Secret":
            ttl_to_expire_time(f)


PROFILE = SecretManager()
