"""Service Usage: a project's services always exist, enabled or not.

Recorded traffic (Config Connector's serviceusage/v1beta1/service): ``GET
.../services/runtimeconfig.googleapis.com`` answers ``"state": "DISABLED"`` before
anything was enabled; ``:enable`` and ``:disable`` answer an operation that
resolves to ``EnableServiceResponse`` / ``DisableServiceResponse`` holding the
service.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from kccgen.mockgcp.apis import Profile

_RESPONSES = {"serviceusage.services.enable": "EnableServiceResponse", "serviceusage.services.disable": "DisableServiceResponse"}


class ServiceUsage(Profile):
    proto_package_name = "google.api.serviceusage"
    switches = MappingProxyType({"serviceusage.services.enable": ("state", "ENABLED"), "serviceusage.services.disable": ("state", "DISABLED")})

    def standing(self, schema: str, key: str) -> dict[str, Any] | None:
        """``projects/P/services/S``: there, not enabled, for any ``*.googleapis.com`` S."""
        parts = key.split("/")
        if len(parts) != 4 or parts[2] != "services" or not parts[3].endswith(".googleapis.com"):
            return None
        return {"name": key, "parent": "/".join(parts[:2]), "state": "DISABLED"}

    def switched(self, method_id: str, resource: dict[str, Any]) -> dict[str, Any]:
        # finish_if_due types the response by the collection's schema; the
        # recorded answer wraps the service in the method's own response.
        return {"service": resource}


PROFILE = ServiceUsage()
