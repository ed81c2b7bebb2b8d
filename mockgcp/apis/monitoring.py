"""Cloud Monitoring: read-only mutation records and condition names it assigns;
metrics scopes and the projects they monitor.

monitoring v1's ``metricsScopes.projects`` has create and delete but no get:
a project is monitored while it is in its scope's ``monitoredProjects``, which
``metricsScopes.get`` answers. Every project has its metrics scope (it scopes
itself), so a scope's get answers before anything was written; this profile
keeps the monitored projects and answers the scope from them. Create and delete
answer a google.longrunning operation (``operations/...``), done at once.
Not modelled: a project in several scopes' limits, tombstoned projects.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from kccgen.mockgcp.apis import Fill, Profile
from kccgen.mockgcp.catalog import Collection
from kccgen.mockgcp.errors import ApiError, already_exists, not_found
from kccgen.mockgcp.operations import Response, now, respond
from kccgen.mockgcp.shapes import lro_style

_SCOPE = re.compile(r"^v1/(locations/global/metricsScopes/[^/:]+)(?:/projects(?:/([^/:]+))?)?$")
_PROJECTS = "locations.global.metricsScopes.projects"


def mutation_records(f: Fill) -> None:
    """Cloud Monitoring keeps read-only mutation records and ignores any sent
    on create or update: AlertPolicy has creationRecord and mutationRecord,
    NotificationChannel creationRecord and mutationRecords (recorded traffic:
    {"mutateTime": ...})."""
    if f.schema not in ("AlertPolicy", "NotificationChannel"):
        return
    old = f.old
    f.resource["creationRecord"] = (
        {"mutateTime": f.now_text}
        if old is None
        else copy.deepcopy(old.get("creationRecord") or {"mutateTime": f.now_text})
    )
    if f.schema == "AlertPolicy":
        f.resource["mutationRecord"] = {"mutateTime": f.now_text}
    else:
        records: list[Any] = [] if old is None else copy.deepcopy(old.get("mutationRecords") or [])
        f.resource["mutationRecords"] = [*records, {"mutateTime": f.now_text}]


def condition_names(f: Fill) -> None:
    """An alert policy's conditions get service-assigned names
    ``<policy>/conditions/<id>``; a condition sent with its name keeps it."""
    for cond in f.resource.get("conditions") or []:
        if isinstance(cond, dict) and not str(cond.get("name") or "").startswith(
            f.key + "/conditions/"
        ):
            cond["name"] = f"{f.key}/conditions/{f.digits(19)}"


class Monitoring(Profile):
    def etag(self, f: Fill) -> str | None:
        """Monitoring sends an etag it does not mark output-only (recorded traffic)."""
        return f.token(9) if "etag" in f.props else None

    def fill(self, f: Fill) -> None:
        mutation_records(f)
        if f.schema == "AlertPolicy":
            condition_names(f)

    def serve(
        self,
        eng: Any,
        api: Any,
        route: Any,
        path: str,
        query: Mapping[str, list[str]],
        body: Any,
        lro_error: str | None,
    ) -> Response | None:
        if route.method.id not in (
            "monitoring.locations.global.metricsScopes.get",
            "monitoring.locations.global.metricsScopes.projects.create",
            "monitoring.locations.global.metricsScopes.projects.delete",
        ):
            return None
        m = _SCOPE.match(path)
        if m is None:
            raise ApiError(400, f"mockgcp: {path} is not a metrics scope path")
        scope, member = m.group(1), m.group(2)
        prefix = f"{api.key}|{scope}/projects/"
        if route.verb == "get":
            monitored = [
                copy.deepcopy(v)
                for k, v in sorted(eng.state.resources.items())
                if k.startswith(prefix)
            ]
            return Response(
                200,
                {"name": scope, "monitoredProjects": monitored} if monitored else {"name": scope},
            )
        coll = Collection(
            api.key, _PROJECTS, "MonitoredProject", "v1/", dict(api.doc.resource(_PROJECTS).methods)
        )
        style = lro_style(api.doc, route.method)
        if route.verb == "create":
            name = str((body or {}).get("name") or "") if isinstance(body, dict) else ""
            if not name.startswith(f"{scope}/projects/") or "/" in name.removeprefix(
                f"{scope}/projects/"
            ):
                raise ApiError(
                    400, f"MonitoredProject.name {name!r} does not name a project of {scope}"
                )
            key = f"{api.key}|{name}"
            if key in eng.state.resources:
                raise already_exists(name)
            resource = {"name": name, "createTime": self.time_text(now())}
            eng.state.resources[key] = resource
            return respond(eng, api, coll, "create", "", copy.deepcopy(resource), lro_error, style)
        key = f"{prefix}{member}"
        if key not in eng.state.resources:
            raise not_found(path.removeprefix("v1/"))
        old = eng.state.resources.pop(key)
        return respond(eng, api, coll, "delete", "", {}, lro_error, style, old=old)


PROFILE = Monitoring()
