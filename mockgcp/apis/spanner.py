"""Cloud Spanner: admin proto packages and per-action operation metadata."""

from __future__ import annotations

import copy
from typing import Any

from kccgen.discovery.document import DiscoveryDoc
from kccgen.mockgcp.apis import Profile


class Spanner(Profile):
    def proto_package(self, doc: DiscoveryDoc, schema: str) -> str:
        """``google.spanner.admin.instance.v1`` for an Instance, ``...database...`` for a Database."""
        admin = "database" if schema in ("Database", "Backup") else "instance"
        return f"google.spanner.admin.{admin}.{doc.version}"

    def lro_metadata(self, doc: DiscoveryDoc, schema: str, action: str, resource: dict[str, Any], now: str) -> dict[str, Any]:
        """Spanner names the metadata per action and carries the instance
        (CreateInstanceMetadata {instance, startTime})."""
        if schema == "Instance" and action in ("create", "patch", "update"):
            verb = "Create" if action == "create" else "Update"
            pkg = self.proto_package(doc, schema)
            return {"@type": f"type.googleapis.com/{pkg}.{verb}{schema}Metadata", "instance": copy.deepcopy(resource), "startTime": now}
        return super().lro_metadata(doc, schema, action, resource, now)


PROFILE = Spanner()
