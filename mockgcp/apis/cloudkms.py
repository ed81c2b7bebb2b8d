"""Cloud KMS: a new symmetric key comes with its first version."""

from __future__ import annotations

from kccgen.mockgcp.apis import Fill, Profile


def primary_version(f: Fill) -> None:
    """A new ENCRYPT_DECRYPT CryptoKey comes with version 1 as its primary,
    ENABLED, with the template's algorithm and protection level (recorded
    traffic: "primary": {"name": ".../cryptoKeyVersions/1", "state": ENABLED...})."""
    res = f.resource
    if res.get("purpose", "ENCRYPT_DECRYPT") != "ENCRYPT_DECRYPT" or res.get("importOnly"):
        return
    tmpl = res.get("versionTemplate") or {}
    res["primary"] = {
        "name": f"{f.key}/cryptoKeyVersions/1",
        "state": "ENABLED",
        "createTime": f.now_text,
        "generateTime": f.now_text,
        "algorithm": tmpl.get("algorithm", "GOOGLE_SYMMETRIC_ENCRYPTION"),
        "protectionLevel": tmpl.get("protectionLevel", "SOFTWARE"),
    }


class CloudKms(Profile):
    proto_package_name = "google.cloud.kms"

    def fill(self, f: Fill) -> None:
        if f.schema == "CryptoKey" and f.created:
            primary_version(f)


PROFILE = CloudKms()
