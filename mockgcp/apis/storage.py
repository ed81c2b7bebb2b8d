"""Cloud Storage: buckets are global (listed per ``?project=``), metagenerations,
its own output fields, and 204 No Content on delete."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from kccgen.mockgcp.apis import Fill, Profile

BASE = "https://www.googleapis.com/storage/v1/"


def project_number(project: str) -> str:
    """A stable fake project number for a project ID (real ones are 12 digits)."""
    if project.isdigit():
        return project
    return str(100000000000 + int(hashlib.sha256(project.encode()).hexdigest()[:10], 16) % 900000000000)


def bucket_defaults(resource: dict[str, Any], project: str) -> None:
    """storage upper-cases the location and fills owner and locationType."""
    loc = str(resource.get("location") or "US").upper()
    resource["location"] = loc
    resource.setdefault("locationType", "multi-region" if loc in ("US", "EU", "ASIA") else ("dual-region" if "+" in loc else "region"))
    num = project_number(project)
    resource["projectNumber"] = num
    resource.setdefault("owner", {"entity": f"project-owners-{num}"})


def drop_empty_lifecycle(resource: dict[str, Any]) -> None:
    """storage leaves ``lifecycle`` out when it holds no rules (recorded traffic)."""
    lc = resource.get("lifecycle")
    if isinstance(lc, dict) and not lc.get("rule"):
        resource.pop("lifecycle", None)


class Storage(Profile):
    legacy_errors = True
    delete_status = 204  # the others answer 200 with a body

    def body_field(self, request: str, whole: bool) -> str | None:
        return None  # the JSON API is not transcoded from a proto request

    def fill(self, f: Fill) -> None:
        res = f.resource
        made = {"id": f.key.rsplit("/", 1)[-1], "timeCreated": f.now_text, "generation": f.digits(16), "metageneration": "1"} if f.created else {}
        made |= {"selfLink": BASE + f.key, "updated": f.now_text, "etag": f.token(6)}
        # only the fields its schema has: an HMAC key's metadata has no generation
        res.update({k: v for k, v in made.items() if k in f.props})
        if f.created and f.schema == "Bucket":
            bucket_defaults(res, f.project)
        if f.schema == "Bucket":
            drop_empty_lifecycle(res)

    def listed(self, meta: Mapping[str, Any], query: Mapping[str, list[str]]) -> bool:
        """Buckets are global: storage lists a project's buckets by ``?project=``."""
        return not query.get("project") or meta.get("project") == query["project"][0]


PROFILE = Storage()
