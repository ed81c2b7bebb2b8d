"""Required means required: a field the API needs at create (its prose, the
create method's annotations or a kind config) is required in the CRD, the
pydantic model and kccctl's admission, so a manifest without it is refused by
name before any GCP call, by kccctl and by the real API server alike; a field
the runtime fills (the resource's ID in the body) is not."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from kccgen.mockgcp.engine import MockGCP
from kccgen.mockgcp.server import MockServer
from kccgen.runtime.registry import types_modules
from tests.conftest import REPO
from tests.support.envtest import Kube

CASES = [
    # (Kind, a valid spec, the required field left out)
    ("PubSubSubscription", {"topicRef": {"external": "projects/p/topics/t"}}, "topicRef"),
    ("SpannerInstance", {"config": "regional-us-central1", "displayName": "d"}, "config"),
]


INDEX = json.loads((REPO / "generated" / "kinds.json").read_text(encoding="utf-8"))


def _crd(kind: str) -> dict[str, Any]:
    return dict(yaml.safe_load((REPO / "generated" / INDEX[kind]["crd"]).read_text(encoding="utf-8")))


def _obj(kind: str, spec: dict[str, Any], name: str = "required-test") -> dict[str, Any]:
    group = _crd(kind)["spec"]["group"]
    return {"apiVersion": f"{group}/v1beta1", "kind": kind, "metadata": {"name": name, "namespace": "default"}, "spec": spec}


@pytest.mark.parametrize(("kind", "spec", "field"), CASES, ids=[c[0] for c in CASES])
def test_the_crd_and_the_model_require_it(kind: str, spec: dict[str, Any], field: str) -> None:
    version = _crd(kind)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert field in version["properties"]["spec"]["required"]
    model = getattr(types_modules()[kind], kind)
    model.model_validate(_obj(kind, spec))
    with pytest.raises(ValidationError, match=field):
        model.model_validate(_obj(kind, {k: v for k, v in spec.items() if k != field}))


@pytest.mark.parametrize(("kind", "spec", "field"), CASES, ids=[c[0] for c in CASES])
def test_kccctl_refuses_it_by_name_with_no_gcp_call(kind: str, spec: dict[str, Any], field: str, tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text(yaml.safe_dump(_obj(kind, {k: v for k, v in spec.items() if k != field})), encoding="utf-8")
    with MockServer(MockGCP()) as s:
        for mode in ("--dry-run=client", "--dry-run=server", None):
            args = [sys.executable, "-m", "kccgen.runtime.cli", "apply", "-f", str(manifest), "--endpoint", s.base_url, "--project", "p", "--state", str(tmp_path / "st")]
            r = subprocess.run([*args, *([mode] if mode else [])], cwd=REPO, capture_output=True, text=True, check=False, timeout=120)
            assert r.returncode != 0, (mode, r.stdout)
            assert f"spec.{field}" in r.stdout + r.stderr, (mode, r.stdout + r.stderr)
        assert list(s.log) == []  # refused before any call


def test_a_field_the_runtime_fills_is_not_required() -> None:
    """BigQuery's Table.tableReference is "Required" in the API, and the create carries
    the ID in it: the runtime fills it from spec.resourceID, so no user writes it."""
    spec = _crd("BigQueryTable")["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert "tableReference" not in spec.get("required", [])
    # Spanner's backup create takes encryptionConfig.encryptionType ("Required") only with an
    # encryption config: a dotted create parameter is not required of every backup
    backup = _crd("SpannerBackup")["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert not any("." in f for f in backup.get("required", []))


@pytest.mark.parametrize(("kind", "spec", "field"), CASES, ids=[c[0] for c in CASES])
def test_the_api_server_refuses_it(envtest: Kube, kind: str, spec: dict[str, Any], field: str) -> None:
    out = envtest.kubectl("apply", "--server-side", "-f", "-", stdin=json.dumps(_crd(kind)))
    assert out.returncode == 0, out.stderr
    envtest.established({_crd(kind)["metadata"]["name"]})
    ok = envtest.apply(_obj(kind, spec, "has-it"))
    assert ok.returncode == 0, ok.stderr
    bad = envtest.apply(_obj(kind, {k: v for k, v in spec.items() if k != field}, "lacks-it"))
    assert bad.returncode != 0
    assert f"spec.{field}: Required value" in bad.stderr, bad.stderr


def test_every_required_spec_field_is_a_required_fact() -> None:
    """The CRD requires only what a source marks required (its mutability row says
    where from): no requirement appears out of nowhere."""
    from kccgen.runtime.mutability import mutability_of

    for kind in ("PubSubSubscription", "SpannerInstance", "ComputeInstanceGroupManager", "AlloyDBInstance"):
        spec = _crd(kind)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        rows = mutability_of(kind)
        for f in spec.get("required", []):
            facts = {x.behaviour.value: x.source for x in rows[f"spec.{f}"].facts}
            assert "required" in facts, (kind, f, facts)
