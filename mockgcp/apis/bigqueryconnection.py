"""BigQuery Connection: the service account a connection acts as.

The service creates one per connection and answers it in the connection's kind
of properties (``cloudSql.serviceAccountId``, ``cloudResource.serviceAccountId``,
``spark.serviceAccountId``: output only); IAM grants name it
(IAMPolicyMember ``memberFrom.bigQueryConnectionConnectionRef``). It stays the
same across updates.
"""

from __future__ import annotations

from kccgen.mockgcp.apis import Fill, Profile

_AGENTS = {"cloudSql": "gcp-sa-bigqueryconnection", "cloudResource": "gcp-sa-bigquery-condel", "spark": "gcp-sa-bigquery-consp"}


class BigQueryConnection(Profile):
    def fill(self, f: Fill) -> None:
        if f.schema != "Connection":
            return
        for part, domain in sorted(_AGENTS.items()):
            props = f.resource.get(part)
            if not isinstance(props, dict):
                continue
            kept = ((f.old or {}).get(part) or {}).get("serviceAccountId")
            props["serviceAccountId"] = kept or f"bqcx-{f.digits(12)}-{f.token(3).lower()[:4]}@{domain}.iam.gserviceaccount.com"


PROFILE = BigQueryConnection()
