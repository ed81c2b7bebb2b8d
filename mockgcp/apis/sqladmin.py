"""Cloud SQL Admin: an instance's ``connectionName``.

The service names an instance for its connectors as ``project:region:instance``
(``connectionName``, which Discovery does not mark output-only); BigQuery
connections and Config Connector's ``instanceRef`` take that form.
"""

from __future__ import annotations

from kccgen.mockgcp.apis import Fill, Profile


class SqlAdmin(Profile):
    def fill(self, f: Fill) -> None:
        res = f.resource
        if f.schema == "DatabaseInstance" and res.get("name"):
            res["connectionName"] = f"{f.project}:{res.get('region') or ''}:{res['name']}"


PROFILE = SqlAdmin()
