"""Pub/Sub: schema revisions and a topic's state."""

from __future__ import annotations

import hashlib
from typing import Any

from kccgen.mockgcp.apis import Fill, Profile


class PubSub(Profile):
    def state_omitted(self, schema: str, field: str, resource: dict[str, Any]) -> bool:
        """Pub/Sub reports Topic.state only for import (ingestion) topics: no
        recorded topic response carries it, while every subscription has one."""
        return schema == "Topic" and field == "state" and "ingestionDataSourceSettings" not in resource

    def fill(self, f: Fill) -> None:
        """Every schema revision gets an 8-hex-digit revisionId (recorded
        traffic: "revisionId" next to "revisionCreateTime")."""
        if f.schema == "Schema" and f.created:
            f.resource["revisionId"] = hashlib.sha256(f.token(8).encode()).hexdigest()[:8]


PROFILE = PubSub()
