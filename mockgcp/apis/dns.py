"""Cloud DNS: numeric IDs, creation times and a public zone's name servers."""

from __future__ import annotations

import hashlib

from kccgen.mockgcp.apis import Fill, Profile


def name_servers(key: str) -> list[str]:
    """Cloud DNS delegates a public zone to four ns-cloud-<x><n> name servers."""
    shard = "abcde"[int(hashlib.sha256(key.encode()).hexdigest(), 16) % 5]
    return [f"ns-cloud-{shard}{i}.googledomains.com." for i in range(1, 5)]


class Dns(Profile):
    legacy_errors = True

    def fill(self, f: Fill) -> None:
        if not f.created:
            return
        f.resource["id"] = f.digits(19)
        f.resource["creationTime"] = f.now_text
        if f.schema == "ManagedZone" and f.resource.get("visibility", "public") == "public":
            f.resource.setdefault("nameServers", name_servers(f.key))


PROFILE = Dns()
