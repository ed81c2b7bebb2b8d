"""Cloud SQL Admin: an instance's ``connectionName``; a client certificate's create answer.

The service names an instance for its connectors as ``project:region:instance``
(``connectionName``, which Discovery does not mark output-only); BigQuery
connections and Config Connector's ``instanceRef`` take that form.
"""

from __future__ import annotations

from typing import Any

from kccgen.mockgcp.apis import Fill, Profile


class SqlAdmin(Profile):
    def fill(self, f: Fill) -> None:
        res = f.resource
        if f.schema == "DatabaseInstance" and res.get("name"):
            res["connectionName"] = f"{f.project}:{res.get('region') or ''}:{res['name']}"

    def create_answer(self, method_id: str, resource: dict[str, Any]) -> dict[str, Any] | None:
        # sslCerts.insert answers SslCertsInsertResponse: the new client certificate
        # with its private key (given once, here), beside the server CA's certificate
        if method_id != "sql.sslCerts.insert":
            return None
        return {
            "kind": "sql#sslCertsInsert",
            "clientCert": {"certInfo": resource, "certPrivateKey": "-----BEGIN RSA PRIVATE KEY-----\nmockgcp\n-----END RSA PRIVATE KEY-----\n"},
            "serverCaCert": {"kind": "sql#sslCert", "commonName": "C=US,O=Google\\, Inc,CN=Google Cloud SQL Server CA", "instance": resource.get("instance", "")},
        }


PROFILE = SqlAdmin()
