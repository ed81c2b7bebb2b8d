"""Cloud Spanner: admin proto packages and per-action operation metadata."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from kccgen.discovery.document import DiscoveryDoc
from kccgen.mockgcp.apis import Profile, rfc3339

_DB = "spanner.projects.instances.databases."
_CREATE_DB = re.compile(r"^\s*CREATE\s+DATABASE\s+(?:`([^`]+)`|\"([^\"]+)\"|([A-Za-z][\w-]*))\s*$", re.IGNORECASE)


class Spanner(Profile):
    def serve(self, eng: Any, api: Any, route: Any, path: str, query: Mapping[str, list[str]], body: Any, lro_error: str | None) -> Any:
        """Databases: ``create`` reads the new database's ID from its
        ``createStatement`` (CREATE DATABASE `db`) and keeps ``extraStatements``
        as its schema; ``getDdl`` answers the statements; ``updateDdl`` appends
        (a long-running operation, as Spanner's); ``dropDatabase`` removes it,
        unless drop protection is on."""
        verb = route.method.id.removeprefix(_DB)
        if not route.method.id.startswith(_DB) or verb not in ("create", "getDdl", "updateDdl", "dropDatabase"):
            return None
        from kccgen.mockgcp.errors import ApiError, already_exists, invalid, not_found
        from kccgen.mockgcp.operations import Response, now, respond
        from kccgen.mockgcp.shapes import lro_style

        coll = api.collections["projects.instances.databases"]
        req = body if isinstance(body, dict) else {}
        if verb == "create":
            parent = path.split("/v1/", 1)[-1].removeprefix("v1/").rsplit("/databases", 1)[0]
            if f"{api.key}|{parent}" not in eng.state.resources:
                raise not_found(parent)
            m = _CREATE_DB.match(str(req.get("createStatement") or ""))
            if m is None:
                raise invalid(f"Invalid create statement: {req.get('createStatement')!r}; want CREATE DATABASE `name`.")
            key = f"{parent}/databases/{next(g for g in m.groups() if g)}"
            sk = f"{api.key}|{key}"
            if sk in eng.state.resources:
                raise already_exists(key)
            t = rfc3339(now())
            db = {"name": key, "state": "READY", "createTime": t, "databaseDialect": req.get("databaseDialect") or "GOOGLE_STANDARD_SQL", "versionRetentionPeriod": "1h", "earliestVersionTime": t}
            if req.get("encryptionConfig"):
                db["encryptionConfig"] = copy.deepcopy(req["encryptionConfig"])
            if lro_error is None:
                eng.state.resources[sk] = db
                eng.state.meta[sk] = {"project": key.split("/")[1], "ddl": [str(x) for x in req.get("extraStatements") or []]}
            return respond(eng, api, coll, "create", key, db, lro_error, lro_style(api.doc, route.method))
        key = coll.key(path.removesuffix("/ddl"))
        sk = f"{api.key}|{key}"
        db = eng.state.resources.get(sk)
        if db is None:
            raise not_found(key)
        meta = eng.state.meta.setdefault(sk, {})
        if verb == "getDdl":
            return Response(200, {"statements": list(meta.get("ddl") or [])} if meta.get("ddl") else {})
        if verb == "dropDatabase":
            if db.get("enableDropProtection"):
                raise ApiError(400, f"Database {key} has drop protection enabled.", "FAILED_PRECONDITION")
            if lro_error is None:
                del eng.state.resources[sk]
                eng.state.meta.pop(sk, None)
            return Response(200, {})
        statements = [str(x) for x in req.get("statements") or []]
        if not statements:
            raise invalid("statements must not be empty.")
        if lro_error is None:
            meta["ddl"] = [*(meta.get("ddl") or []), *statements]
        return respond(eng, api, coll, "updateDdl", key, {}, lro_error, lro_style(api.doc, route.method))

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
