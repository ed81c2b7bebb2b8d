"""Config Connector's sensitive fields: ``{value | valueFrom: {secretKeyRef: {name, key}}}``.

The shape in the CRDs and the pydantic types (for the Kinds whose Config Connector
CRD has it, written out here by hand), and the runtime's promise: the value
reaches the request body and nothing else (status, events, messages, diffs,
exports, the kccctl state), a missing Secret is DependencyNotFound before any
GCP call, and a secret GET leaves out is no perpetual diff. ComputeSSLCertificate
on mockgcp is the subject (certificate and privateKey, as in KCC's samples).
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from kccgen.generator.ir.model import FieldIR, ModelSet, ObjectIR, TypeIR
from kccgen.generator.ir.secrets import SECRET_VALUE, apply_secrets
from kccgen.runtime.adapter import adapter_for
from kccgen.runtime.export import export_manifest
from kccgen.runtime.gcp import Gcp
from kccgen.runtime.local import StateDir, apply, load_manifests
from kccgen.runtime.reconciler import Reconciler
from kccgen.runtime.refs import RefError
from kccgen.runtime.registry import types_modules
from kccgen.runtime.secrets import REDACTED
from tests.support.crds import load_crd
from tests.support.envtest import Kube
from tests.support.scenarios import NAMESPACE, PROJECT, Harness, harness

CRDS = Path(__file__).resolve().parent.parent / "generated" / "crds"
KIND = "ComputeSSLCertificate"
CERT = "-----BEGIN CERTIFICATE-----cert-4e1d"
KEY = "PRIVATE-KEY-7f3a9c"  # the Secret's value: only ever in the create's body

# Config Connector's sensitive fields (its CRDs, config/crds/resources at the evidence's
# commit) for the Kinds its samples use them on: (Kind, CRD file, KRM spec path).
KCC_SENSITIVE = [
    ("ComputeSSLCertificate", "computesslcertificates.compute", "certificate"),
    ("ComputeSSLCertificate", "computesslcertificates.compute", "privateKey"),
    ("SQLUser", "sqlusers.sql", "password"),
    ("ComputeDisk", "computedisks.compute", "diskEncryptionKey.rawKey"),
    ("ComputeSnapshot", "computesnapshots.compute", "snapshotEncryptionKey.rawKey"),
    ("CertificateManagerCertificate", "certificatemanagercertificates.certificatemanager", "selfManaged.pemPrivateKey"),
    ("ComputeVPNTunnel", "computevpntunnels.compute", "sharedSecret"),
    ("AlloyDBUser", "alloydbusers.alloydb", "password"),
    ("AlloyDBCluster", "alloydbclusters.alloydb", "initialUser.password"),
    ("IdentityPlatformOAuthIDPConfig", "identityplatformoauthidpconfigs.identityplatform", "clientSecret"),
    ("IdentityPlatformTenantOAuthIDPConfig", "identityplatformtenantoauthidpconfigs.identityplatform", "clientSecret"),
    ("MonitoringUptimeCheckConfig", "monitoringuptimecheckconfigs.monitoring", "httpCheck.authInfo.password"),
]


def _node(schema: dict[str, Any], path: str) -> dict[str, Any]:
    for part in path.split("."):
        schema = schema["properties"][part]
    return schema


def _is_secret_object(node: dict[str, Any]) -> bool:
    ref = node["properties"]["valueFrom"]["properties"]["secretKeyRef"]
    rules = [r["rule"] for r in node.get("x-kubernetes-validations", [])]
    return (
        node["type"] == "object"
        and node["properties"]["value"]["type"] == "string"
        and sorted(ref["required"]) == ["key", "name"]
        and rules == ["(has(self.value) ? 1 : 0) + (has(self.valueFrom) ? 1 : 0) == 1"]
    )


# --- shape ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "crd", "path"), KCC_SENSITIVE)
def test_kcc_sensitive_field_is_the_value_or_secret_object(kind: str, crd: str, path: str) -> None:
    doc = load_crd(CRDS / f"{crd}.cnrm.cloud.google.com.yaml")
    for version in doc["spec"]["versions"]:  # ours and Config Connector's version name
        assert _is_secret_object(_node(version["schema"]["openAPIV3Schema"]["properties"]["spec"], path)), (kind, version["name"])
    assert path in adapter_for(kind).secrets


def _secret_paths(node: dict[str, Any], path: str) -> list[str]:
    props = node.get("properties") or {}
    if set(props) == {"value", "valueFrom"}:
        return [path]
    out = [p for k, v in props.items() for p in _secret_paths(v, f"{path}.{k}" if path else k)]
    return out + (_secret_paths(node["items"], f"{path}[]") if isinstance(node.get("items"), dict) else [])


def test_crd_and_adapter_name_the_same_sensitive_fields() -> None:
    """Every CRD holding the object lists it in its adapter, and the other way round."""
    seen = 0
    for p in sorted(CRDS.glob("*.yaml")):
        if "secretKeyRef" not in p.read_text(encoding="utf-8"):
            continue
        doc = load_crd(p)
        kind = doc["spec"]["names"]["kind"]
        found = sorted(_secret_paths(doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"], ""))
        assert found == sorted(adapter_for(kind).secrets), kind
        seen += 1
    assert seen >= len({k for k, _, _ in KCC_SENSITIVE})


def test_pydantic_type_takes_exactly_one_of_value_and_value_from() -> None:
    model = getattr(types_modules()[KIND], KIND)
    base = {"apiVersion": adapter_for(KIND).api_version, "kind": KIND, "metadata": {"name": "c"}}
    ok = model.model_validate({**base, "spec": {"certificate": {"value": CERT}, "privateKey": {"valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}}})
    assert ok.model_dump(by_alias=True, exclude_none=True)["spec"]["privateKey"] == {"valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}
    bad = [
        {"value": "x", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},  # both
        {},  # neither
        {"valueFrom": {"secretKeyRef": {"name": "s"}}},  # no key
        "plain",  # Config Connector's object, not a string
    ]
    for value in bad:
        with pytest.raises(ValueError):
            model.model_validate({**base, "spec": {"privateKey": value}})


def test_a_field_that_is_no_string_is_left_as_it_is() -> None:
    s = TypeIR("string")
    inner = ObjectIR("Key", "", (FieldIR("rawKey", s, "", (), "t"), FieldIR("size", TypeIR("integer"), "", (), "t")), "t")
    spec = ObjectIR("XSpec", "", (FieldIR("key", TypeIR("object", ref="Key"), "", (), "t"), FieldIR("other", TypeIR("object", ref="Key"), "", (), "t")), "t")
    out = apply_secrets(spec, ModelSet((inner, spec), ()), {"key.rawKey": "t", "key.size": "t", "nope": "t"})
    assert [p for p, _ in out.skipped] == ["key.size", "nope"]
    # Key is shared with `other`, which Config Connector keeps plain: key gets a copy
    assert out.paths == ("key.rawKey",)
    assert next(f for f in out.spec.fields if f.name == "key").type == TypeIR("object", ref="KeySensitive")
    assert next(f for f in out.models.object("KeySensitive").fields if f.name == "rawKey").type == TypeIR("object", ref=SECRET_VALUE)
    assert next(f for f in out.models.object("Key").fields if f.name == "rawKey").type == s
    both = apply_secrets(spec, ModelSet((inner, spec), ()), {"key.rawKey": "t", "other.rawKey": "t"})
    assert both.paths == ("key.rawKey", "other.rawKey") and "KeySensitive" not in {o.name for o in both.models.objects}


# --- runtime on mockgcp ----------------------------------------------------------------------


def _secret(name: str = "tls", **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": NAMESPACE}, "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}}


def _cert(name: str, key: Any = None) -> dict[str, Any]:
    key = key if key is not None else {"valueFrom": {"secretKeyRef": {"name": "tls", "key": "tls.key"}}}
    return {
        "apiVersion": adapter_for(KIND).api_version,
        "kind": KIND,
        "metadata": {"name": name, "namespace": NAMESPACE, "annotations": {"cnrm.cloud.google.com/project-id": PROJECT}},
        "spec": {"certificate": {"value": CERT}, "privateKey": key},
    }


@pytest.fixture()
def h() -> Any:
    with harness() as hh:
        hh.store.add(_secret(**{"tls.key": KEY}))
        yield hh


def _shown(h: Harness, result: Any) -> str:
    """Everything of a reconcile a user or a log could see: the object, events, message."""
    return json.dumps([result.obj, [vars(e) for e in result.events], result.message, result.changes], default=str)


def test_value_and_secret_reach_the_request_body_and_nothing_else(h: Harness) -> None:
    r = h.reconcile(_cert("c1"))
    assert r.ready, r.message
    posts = [e for e in h.writes() if e.method == "POST" and "sslCertificates" in e.url]
    assert len(posts) == 1
    assert posts[0].request_json == {"name": "c1", "certificate": CERT, "privateKey": KEY}
    assert KEY not in _shown(h, r)
    assert r.obj["spec"]["privateKey"] == {"valueFrom": {"secretKeyRef": {"name": "tls", "key": "tls.key"}}}
    mark = h.mark()
    again = h.reconcile(r.obj)
    assert again.ready and len(h.calls(mark)) == 1, h.calls(mark)  # up to date: one GET
    assert KEY not in _shown(h, again)


def test_a_secret_get_leaves_out_is_no_change(h: Harness) -> None:
    r = h.reconcile(_cert("c2"))
    h.stored("compute.v1", f"projects/{PROJECT}/global/sslCertificates/c2").pop("privateKey")  # as GCP answers
    mark = h.mark()
    again = h.reconcile(r.obj)
    assert again.ready and again.reason == "UpToDate", again.message
    assert h.writes(mark) == []


@pytest.mark.parametrize(
    ("secret", "why"),
    [(None, r"reads it from Secret ns/tls, which does not exist"), ({"other": "x"}, r"reads it from key 'tls.key' of Secret ns/tls, which has no such key")],
)
def test_a_missing_secret_or_key_is_dependency_not_found_without_a_gcp_call(secret: dict[str, str] | None, why: str) -> None:
    with harness() as h:
        if secret is not None:
            h.store.add(_secret(**secret))
        mark = h.mark()
        r = h.reconcile(_cert("c3"))
        assert (r.ready, r.reason) == (False, "DependencyNotFound")
        assert re.search(rf"^spec\.privateKey: ComputeSSLCertificate ns/c3 {why}$", r.message), r.message
        assert h.calls(mark) == []


def test_drift_export_and_dry_run_never_show_the_secret(h: Harness) -> None:
    dry = Reconciler(h.gcp, h.store, dry_run=True).reconcile(_cert("c4", {"value": KEY}))
    said = json.dumps([[vars(e) for e in dry.events], dry.message, dry.changes, dry.obj.get("status")])  # the object keeps the user's literal
    assert dry.reason == "WouldCreate" and KEY not in said and CERT not in said
    assert dict((p, d) for p, d, _ in dry.changes)["spec.privateKey"] == REDACTED
    r = h.reconcile(_cert("c4"))
    ext = r.obj["status"]["externalRef"]
    live = h.stored("compute.v1", ext)
    live["privateKey"] = "CHANGED-BEHIND-OUR-BACK"
    forced = json.loads(json.dumps(r.obj))
    forced["metadata"]["annotations"]["cnrm.cloud.google.com/force-acquire"] = "true"
    drift = h.reconcile(forced)
    assert drift.reason == "DriftDetected" and "spec.privateKey" in drift.message
    assert KEY not in _shown(h, drift) and "CHANGED-BEHIND" not in _shown(h, drift)
    manifest = export_manifest(KIND, ext, dict(live), "c4")
    assert "privateKey" not in manifest["spec"] and "certificate" not in manifest["spec"]


def test_an_unresolved_secret_is_never_sent_as_the_object() -> None:
    from kccgen.runtime.adapter import spec_to_api

    a = adapter_for(KIND)
    spec = _cert("c")["spec"]
    assert spec_to_api(spec, a, {}) == {}  # nothing resolved (the webhook's live check): left out
    assert spec_to_api(spec, a, {"spec.certificate": CERT, "spec.privateKey": KEY}) == {"certificate": CERT, "privateKey": KEY}


def test_kccctl_reads_a_secret_manifest_and_never_stores_it(tmp_path: Path) -> None:
    f = tmp_path / "m.yaml"
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "tls"}, "stringData": {"tls.key": KEY}}
    cert = _cert("c5")
    del cert["metadata"]["namespace"]
    f.write_text(yaml.safe_dump_all([secret, cert]), encoding="utf-8")
    objs = load_manifests([f], NAMESPACE)
    assert [o["kind"] for o in objs] == ["Secret", KIND]
    state = StateDir(tmp_path / "state")
    with harness() as h:
        rows = apply(objs, state, Gcp(h.server.base_url, lro_interval=0, sleep=lambda s: None), PROJECT, NAMESPACE)
        assert [(r.kind, r.ready) for r, _ in rows] == [("Secret", True), (KIND, True)], [r.message for r, _ in rows]
        body = next(e.request_json for e in h.writes() if e.method == "POST" and "sslCertificates" in e.url)
        assert body["privateKey"] == KEY
    stored = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "state").rglob("*") if p.is_file())
    assert KIND in stored and KEY not in stored and "stringData" not in stored
    assert all(KEY not in json.dumps([vars(r), res.obj]) for r, res in rows)


def test_the_operator_reads_a_secret_from_the_cluster_and_keeps_none() -> None:
    from kccgen.runtime.operator import Cache

    class Cluster:
        def get(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
            if name == "forbidden":
                raise RuntimeError("secrets is forbidden")
            return _secret(name, k="v") if (kind, namespace) == ("Secret", NAMESPACE) else None

    cache = Cache(Cluster(), {KIND})  # type: ignore[arg-type]
    assert cache.get("Secret", NAMESPACE, "tls") == _secret("tls", k="v")
    assert len(cache) == 0
    with pytest.raises(RefError, match="Secret ns/forbidden cannot be read"):
        cache.get("Secret", NAMESPACE, "forbidden")


# --- the API server --------------------------------------------------------------------------


def test_the_api_server_refuses_both_and_neither(envtest: Kube) -> None:
    crd = CRDS / "computesslcertificates.compute.cnrm.cloud.google.com.yaml"
    assert envtest.apply_files([crd]) == ""
    assert envtest.established({load_crd(crd)["metadata"]["name"]})[load_crd(crd)["metadata"]["name"]]

    def applied(name: str, key: Any) -> Any:
        obj = _cert(name, key)
        obj["metadata"]["namespace"] = "default"
        return envtest.apply(obj)

    ok = applied("secret-ok", {"valueFrom": {"secretKeyRef": {"name": "tls", "key": "k"}}})
    assert ok.returncode == 0, ok.stderr
    both = applied("secret-both", {"value": "x", "valueFrom": {"secretKeyRef": {"name": "tls", "key": "k"}}})
    assert both.returncode != 0 and "set exactly one of value, valueFrom" in both.stderr
    neither = applied("secret-neither", {})
    assert neither.returncode != 0 and "set exactly one of value, valueFrom" in neither.stderr
    plain = applied("secret-plain", "a-string")
    assert plain.returncode != 0 and "privateKey" in plain.stderr
    no_key = applied("secret-no-key", {"valueFrom": {"secretKeyRef": {"name": "tls"}}})
    assert no_key.returncode != 0 and "key" in no_key.stderr


# --- the kind-config key ---------------------------------------------------------------------

MINI = Path(__file__).resolve().parent / "golden" / "mini" / "specs"


def _mini_kinds(tmp_path: Path, sensitive: dict[str, Any]) -> Path:
    import shutil

    specs = tmp_path / "specs"
    shutil.copytree(MINI, specs)
    doc = yaml.safe_load((specs / "kinds" / "mini.yaml").read_text(encoding="utf-8"))
    doc["kinds"][0]["sensitive"] = sensitive
    (specs / "kinds" / "mini.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    return specs


def test_the_kind_config_key_is_strict(tmp_path: Path) -> None:
    from kccgen.discovery.errors import SpecError
    from kccgen.generator.spec.kinds import load_kinds_file

    specs = _mini_kinds(tmp_path, {"feilds": ["blob"], "reason": "r"})
    with pytest.raises(SpecError, match=r"mini.yaml#/kinds/0/sensitive/feilds: unknown key 'feilds' \(did you mean 'fields'\?\)"):
        load_kinds_file(specs / "kinds" / "mini.yaml", "specs/kinds/mini.yaml")
    specs = _mini_kinds(tmp_path / "2", {"fields": ["blob"]})
    with pytest.raises(SpecError, match=r"sensitive/reason"):
        load_kinds_file(specs / "kinds" / "mini.yaml", "specs/kinds/mini.yaml")


def test_a_kind_config_path_that_is_no_string_field_fails_the_run(tmp_path: Path) -> None:
    import subprocess
    import sys

    specs = _mini_kinds(tmp_path, {"fields": ["labels", "nope.x"], "reason": "r"})
    r = subprocess.run(
        [sys.executable, "-m", "kccgen.generator.cli", "--root", str(tmp_path / "root"), "--specs", str(specs), "generate", "--force"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode != 0
    assert "kinds/0/sensitive/fields" in r.stderr and "spec.labels" in r.stderr and "is a map, not a string" in r.stderr, r.stderr


def test_a_nested_secret_stays_out_of_observed_state() -> None:
    """ComputeDisk's diskEncryptionKey holds the output-only sha256 beside rawKey:
    observedState shows the object, never the key (mockgcp echoes what it was sent)."""
    a = adapter_for("ComputeDisk")
    assert "diskEncryptionKey.rawKey" in a.secrets
    with harness() as h:
        h.store.add(_secret("disk", raw=KEY))
        obj = {
            "apiVersion": a.api_version,
            "kind": "ComputeDisk",
            "metadata": {"name": "d1", "namespace": NAMESPACE, "annotations": {"cnrm.cloud.google.com/project-id": PROJECT}},
            "spec": {"zone": "us-central1-a", "diskEncryptionKey": {"rawKey": {"valueFrom": {"secretKeyRef": {"name": "disk", "key": "raw"}}}}},
        }
        r = h.reconcile(obj)
        assert r.ready, r.message
        body = next(e.request_json for e in h.writes() if e.method == "POST" and "/disks" in e.url)
        assert body["diskEncryptionKey"] == {"rawKey": KEY}
        assert KEY not in _shown(h, r)
        again = h.reconcile(r.obj)
        assert again.ready and KEY not in _shown(h, again)


def test_the_lifecycle_reads_a_sample_folders_secret() -> None:
    """tools/kcc_lifecycle runs Config Connector's sample folders: their secret.yaml
    is read by the sensitive field, not reconciled."""
    from tests.support.scenarios import lifecycle_on, running_mock

    def objects(project: str) -> list[dict[str, Any]]:
        cert = _cert("sample-cert")
        cert["metadata"] = {"name": "sample-cert", "namespace": "default"}
        secret = _secret(**{"tls.key": KEY})
        secret["metadata"]["namespace"] = "default"
        return [secret, cert]

    with running_mock() as server:
        out = lifecycle_on(server).run_objects(KIND, objects, 1)
    assert out.passed, f"{out.step}: {out.message}"
