"""Service Usage: a project's services always exist, enabled or not.

Recorded traffic (Config Connector's serviceusage/v1beta1/service): ``GET
.../services/runtimeconfig.googleapis.com`` answers ``"state": "DISABLED"`` before
anything was enabled; ``:enable`` and ``:disable`` answer an operation that
resolves to ``EnableServiceResponse`` / ``DisableServiceResponse`` holding the
service.
"""

from __future__ import annotations

import hashlib
from types import MappingProxyType
from typing import Any

from kccgen.mockgcp.apis import Profile

_RESPONSES = {"serviceusage.services.enable": "EnableServiceResponse", "serviceusage.services.disable": "DisableServiceResponse"}


class ServiceUsage(Profile):
    proto_package_name = "google.api.serviceusage"
    switches = MappingProxyType({"serviceusage.services.enable": ("state", "ENABLED"), "serviceusage.services.disable": ("state", "DISABLED")})

    def standing(self, schema: str, key: str, doc: str = "") -> dict[str, Any] | None:
        """``projects/P/services/S``: there, not enabled, for any ``*.googleapis.com`` S."""
        parts = key.split("/")
        if len(parts) != 4 or parts[2] != "services" or not parts[3].endswith(".googleapis.com"):
            return None
        return {"name": key, "parent": "/".join(parts[:2]), "state": "DISABLED"}

    def computed(self, method_id: str, key: str) -> dict[str, Any] | None:
        """``generateServiceIdentity`` (v1beta1) answers the service agent of
        ``projects/P/services/S``: ``service-<project>@gcp-sa-<S's first label>``
        (recorded: service-N@gcp-sa-pubsub.iam.gserviceaccount.com for pubsub),
        the same on every call; the project's ID stands in for its number."""
        parts = key.split("/")
        if method_id != "serviceusage.services.generateServiceIdentity" or self.standing("", key) is None:
            return None
        short = parts[3].split(".", 1)[0]
        digest = hashlib.sha256(key.encode()).hexdigest()
        return {"email": f"service-{parts[1]}@gcp-sa-{short}.iam.gserviceaccount.com", "uniqueId": str(int(digest[:15], 16))}

    def switched(self, method_id: str, resource: dict[str, Any]) -> dict[str, Any]:
        # finish_if_due types the response by the collection's schema; the
        # recorded answer wraps the service in the method's own response.
        return {"service": resource}


PROFILE = ServiceUsage()
