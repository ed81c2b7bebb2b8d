"""Resource Manager: v1's ``projects.get`` answers for every project.

Config Connector reads a project's number with ``GET v1/projects/{projectId}``
before it names the project's network to servicenetworking (recorded traffic,
servicenetworking/v1beta1/servicenetworkingconnection). A mock project exists
for every request that names one, so v1 answers for any project ID with the
number mockgcp gives it everywhere (storage's ``projectNumber``). v3's projects
are resources of their own (the Project Kind creates them): no standing one.
"""

from __future__ import annotations

from typing import Any

from kccgen.mockgcp.apis import Profile
from kccgen.mockgcp.apis.storage import project_number


class ResourceManager(Profile):
    def standing(self, schema: str, key: str, doc: str = "") -> dict[str, Any] | None:
        parts = key.split("/")
        if doc != "cloudresourcemanager.v1" or schema != "Project" or len(parts) != 2 or parts[0] != "projects":
            return None
        pid = parts[1]
        return {"projectId": pid, "projectNumber": project_number(pid), "name": pid, "lifecycleState": "ACTIVE"}


PROFILE = ResourceManager()
