"""Per-service behaviour that Discovery cannot express, each in a named handler.

Every function here documents the real API behaviour it reproduces; the
evidence is Config Connector's recorded traffic (``_http.log``).
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
from typing import Any

COMPUTE_BASE = "https://www.googleapis.com/compute/v1/"
STORAGE_BASE = "https://www.googleapis.com/storage/v1/"


def project_number(project: str) -> str:
    """A stable fake project number for a project ID (real ones are 12 digits)."""
    if project.isdigit():
        return project
    return str(100000000000 + int(hashlib.sha256(project.encode()).hexdigest()[:10], 16) % 900000000000)


def compute_self_link(key: str) -> str:
    """compute answers with full https://www.googleapis.com/compute/v1/ URLs."""
    return COMPUTE_BASE + key


def compute_expand_links(resource: dict[str, Any], project: str) -> None:
    """compute rewrites partial references (projects/p/global/networks/n) to full URLs."""
    for field in ("network", "region", "zone", "subnetwork"):
        v = resource.get(field)
        if isinstance(v, str) and v.startswith(("projects/", "global/", "regions/")):
            resource[field] = COMPUTE_BASE + (v if v.startswith("projects/") else f"projects/{project}/{v}")


def compute_subnetwork_gateway(resource: dict[str, Any]) -> None:
    """A subnetwork's gatewayAddress is the first host of its primary range."""
    cidr = resource.get("ipCidrRange")
    if isinstance(cidr, str) and "gatewayAddress" not in resource:
        with contextlib.suppress(ValueError, StopIteration):
            resource["gatewayAddress"] = str(next(ipaddress.ip_network(cidr, strict=False).hosts()))


def storage_bucket_defaults(resource: dict[str, Any], project: str) -> None:
    """storage upper-cases the location and fills owner and locationType."""
    loc = str(resource.get("location") or "US").upper()
    resource["location"] = loc
    resource.setdefault("locationType", "multi-region" if loc in ("US", "EU", "ASIA") else ("dual-region" if "+" in loc else "region"))
    num = project_number(project)
    resource["projectNumber"] = num
    resource.setdefault("owner", {"entity": f"project-owners-{num}"})


def dns_name_servers(key: str) -> list[str]:
    """Cloud DNS delegates a public zone to four ns-cloud-<x><n> name servers."""
    shard = "abcde"[int(hashlib.sha256(key.encode()).hexdigest(), 16) % 5]
    return [f"ns-cloud-{shard}{i}.googledomains.com." for i in range(1, 5)]


def delete_status(api: str) -> int:
    """storage answers a DELETE with 204 No Content; the others with 200 and a body."""
    return 204 if api == "storage.v1" else 200
