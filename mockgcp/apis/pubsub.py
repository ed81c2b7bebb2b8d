"""Pub/Sub: schema revisions, a topic's state, and snapshots made from a subscription."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from typing import Any

from kccgen.mockgcp.apis import CreateInputs, Fill, Profile, rfc3339
from kccgen.mockgcp.errors import invalid, not_found

#: "A newly-created snapshot expires no later than 7 days from the time of its
#: creation": seven days for a subscription without an unacked backlog, which
#: is every subscription mockgcp holds (it keeps no messages).
SNAPSHOT_LIFETIME = timedelta(days=7)


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

    def on_create(self, c: CreateInputs) -> None:
        """CreateSnapshotRequest: the snapshot retains the subscription's backlog,
        so it takes the subscription's topic and expires 7 days after creation;
        "If the requested subscription doesn't exist, returns NOT_FOUND"."""
        if c.schema != "Snapshot":
            return
        sub_name = c.inputs.get("subscription")
        if not isinstance(sub_name, str) or not sub_name:
            raise invalid("Invalid resource name given (name=). Refer to https://cloud.google.com/pubsub/docs/pubsub-basics#resource_names for more information.")
        sub = c.find(sub_name)
        if sub is None:
            raise not_found(sub_name.rsplit("/", 1)[-1])  # Pub/Sub names the short ID
        c.resource["topic"] = sub.get("topic", "")
        t = c.now + SNAPSHOT_LIFETIME
        c.resource["expireTime"] = rfc3339(t)


PROFILE = PubSub()
