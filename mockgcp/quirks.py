"""Per-service behaviour that Discovery cannot express, each in a named handler.

Every function here documents the real API behaviour it reproduces; the
evidence is Config Connector's recorded traffic (``_http.log``).
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
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
    for field in ("network", "region", "zone", "subnetwork", "networkProfile"):
        v = resource.get(field)
        if isinstance(v, str) and v.startswith(("projects/", "global/", "regions/")):
            resource[field] = COMPUTE_BASE + (v if v.startswith("projects/") else f"projects/{project}/{v}")


def compute_scope_link(resource: dict[str, Any], key: str) -> None:
    """A regional (zonal) resource's region (zone) is the one in its URL, as a
    full URL, whatever the body said (recorded traffic: a subnetwork inserted
    with "region": "projects/p/global/regions/us-central1" reads back
    ".../projects/p/regions/us-central1")."""
    parts = key.split("/")
    if len(parts) > 3 and parts[2] in ("regions", "zones"):
        resource[parts[2][:-1]] = COMPUTE_BASE + "/".join(parts[:4])


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


def pubsub_schema_revision(resource: dict[str, Any], token: str) -> None:
    """Pub/Sub gives every schema revision an 8-hex-digit revisionId
    (recorded traffic: "revisionId" next to "revisionCreateTime")."""
    resource["revisionId"] = hashlib.sha256(token.encode()).hexdigest()[:8]


def kms_primary_version(resource: dict[str, Any], key: str, now: str) -> None:
    """A new ENCRYPT_DECRYPT CryptoKey comes with version 1 as its primary,
    ENABLED, with the template's algorithm and protection level (recorded
    traffic: "primary": {"name": ".../cryptoKeyVersions/1", "state": ENABLED...})."""
    if resource.get("purpose", "ENCRYPT_DECRYPT") != "ENCRYPT_DECRYPT" or resource.get("importOnly"):
        return
    tmpl = resource.get("versionTemplate") or {}
    resource["primary"] = {
        "name": f"{key}/cryptoKeyVersions/1",
        "state": "ENABLED",
        "createTime": now,
        "generateTime": now,
        "algorithm": tmpl.get("algorithm", "GOOGLE_SYMMETRIC_ENCRYPTION"),
        "protectionLevel": tmpl.get("protectionLevel", "SOFTWARE"),
    }


def monitoring_records(schema: str, resource: dict[str, Any], old: dict[str, Any] | None, now: str) -> None:
    """Cloud Monitoring keeps read-only mutation records and ignores any sent
    on create or update: AlertPolicy has creationRecord and mutationRecord,
    NotificationChannel creationRecord and mutationRecords (recorded traffic:
    {"mutateTime": ...})."""
    if schema not in ("AlertPolicy", "NotificationChannel"):
        return
    created = {"mutateTime": now} if old is None else copy.deepcopy(old.get("creationRecord") or {"mutateTime": now})
    resource["creationRecord"] = created
    if schema == "AlertPolicy":
        resource["mutationRecord"] = {"mutateTime": now}
    else:
        records = [] if old is None else copy.deepcopy(old.get("mutationRecords") or [])
        resource["mutationRecords"] = [*records, {"mutateTime": now}]


def monitoring_condition_names(resource: dict[str, Any], key: str, new_id: Callable[[], str]) -> None:
    """An alert policy's conditions get service-assigned names
    ``<policy>/conditions/<id>``; a condition sent with its name keeps it."""
    for cond in resource.get("conditions") or []:
        if isinstance(cond, dict) and not str(cond.get("name") or "").startswith(key + "/conditions/"):
            cond["name"] = f"{key}/conditions/{new_id()}"


# The proto package in google.longrunning ``@type`` URLs where it is not
# google.<api>.<version> (recorded traffic).
_PROTO_PACKAGES = {
    "artifactregistry": "google.devtools.artifactregistry",
    "cloudkms": "google.cloud.kms",
    "secretmanager": "google.cloud.secretmanager",
}


def proto_package(api: str, version: str, schema: str) -> str:
    """``google.spanner.admin.instance.v1`` for a spanner Instance, and so on."""
    if api == "spanner":
        return f"google.spanner.admin.{'database' if schema in ('Database', 'Backup') else 'instance'}.{version}"
    return f"{_PROTO_PACKAGES.get(api, 'google.' + api)}.{version}"


def lro_metadata(api: str, version: str, schema: str, action: str, resource: dict[str, Any], now: str) -> dict[str, Any]:
    """google.longrunning metadata: spanner names it per action and carries
    the instance (CreateInstanceMetadata {instance, startTime}); the others
    use OperationMetadata."""
    pkg = proto_package(api, version, schema)
    if api == "spanner" and schema == "Instance" and action in ("create", "patch", "update"):
        verb = "Create" if action == "create" else "Update"
        return {"@type": f"type.googleapis.com/{pkg}.{verb}{schema}Metadata", "instance": copy.deepcopy(resource), "startTime": now}
    return {"@type": f"type.googleapis.com/{pkg}.OperationMetadata", "createTime": now}


def state_omitted(api: str, schema: str, field: str, resource: dict[str, Any]) -> bool:
    """Pub/Sub reports Topic.state only for import (ingestion) topics: no
    recorded topic response carries it, while every subscription has one."""
    return api == "pubsub.v1" and schema == "Topic" and field == "state" and "ingestionDataSourceSettings" not in resource


def storage_drop_empty_lifecycle(resource: dict[str, Any]) -> None:
    """storage leaves ``lifecycle`` out when it holds no rules (recorded traffic)."""
    lc = resource.get("lifecycle")
    if isinstance(lc, dict) and not lc.get("rule"):
        resource.pop("lifecycle", None)


def secret_ttl_to_expire_time(resource: dict[str, Any], now: datetime) -> None:
    """Secret Manager's ``ttl`` is input-only: it becomes ``expireTime`` = now + ttl."""
    ttl = resource.pop("ttl", None)
    if isinstance(ttl, str) and ttl.endswith("s"):
        try:
            seconds = float(ttl[:-1])
        except ValueError:
            return
        t = now + timedelta(seconds=seconds)
        resource["expireTime"] = t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond:06d}Z"


def artifactregistry_registry_uri(resource: dict[str, Any], key: str) -> None:
    """Artifact Registry answers with the repository's host path for Docker
    repositories, e.g. ``us-west1-docker.pkg.dev/p/repo``."""
    parts = key.split("/")  # projects/p/locations/l/repositories/r
    if len(parts) == 6 and str(resource.get("format", "DOCKER")) in ("DOCKER", "1"):
        resource.setdefault("registryUri", f"{parts[3]}-docker.pkg.dev/{parts[1]}/{parts[5]}")


@dataclass
class Fill:
    """What an output-filling quirk may read: the resource being answered and its context."""

    schema: str
    resource: dict[str, Any]
    key: str
    old: dict[str, Any] | None
    now: datetime
    now_text: str  # RFC 3339, as the API writes it
    new_id: Callable[[], str]
    token: Callable[[], str]


# Output-only fields Discovery's prose does not mark, per (API name, schema or
# None for every schema, on create only): one table instead of a branch each.
FILLERS: tuple[tuple[str, str | None, bool, Callable[[Fill], None]], ...] = (
    ("monitoring", None, False, lambda f: monitoring_records(f.schema, f.resource, f.old, f.now_text)),
    ("monitoring", "AlertPolicy", False, lambda f: monitoring_condition_names(f.resource, f.key, f.new_id)),
    ("pubsub", "Schema", True, lambda f: pubsub_schema_revision(f.resource, f.token())),
    ("cloudkms", "CryptoKey", True, lambda f: kms_primary_version(f.resource, f.key, f.now_text)),
    ("storage", "Bucket", False, lambda f: storage_drop_empty_lifecycle(f.resource)),
    ("secretmanager", "Secret", False, lambda f: secret_ttl_to_expire_time(f.resource, f.now)),
    ("artifactregistry", "Repository", True, lambda f: artifactregistry_registry_uri(f.resource, f.key)),
)


def fill_outputs(api: str, created: bool, f: Fill) -> None:
    for name, schema, create_only, fill in FILLERS:
        if name == api and schema in (None, f.schema) and (created or not create_only):
            fill(f)
