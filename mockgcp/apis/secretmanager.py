"""Secret Manager: quoted etags and ``ttl`` turned into ``expireTime``."""

from __future__ import annotations

from datetime import timedelta

from kccgen.mockgcp.apis import Fill, Profile, rfc3339


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


class SecretManager(Profile):
    proto_package_name = "google.cloud.secretmanager"

    def etag(self, f: Fill) -> str | None:
        """Secret Manager's etags are quoted strings (recorded traffic: "\\"16...\\"")."""
        return f'"{f.token(9)}"' if "etag" in f.props else None

    def fill(self, f: Fill) -> None:
        if f.schema == "Secret":
            ttl_to_expire_time(f)


PROFILE = SecretManager()
