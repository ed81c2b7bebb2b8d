"""Config Connector's Project and Folder: cloudresourcemanager v3's projects and
folders (Folder is no longer "another form of projects"), with the parent as
``folderRef`` or ``organizationRef`` beside the other spec fields (a flattened
oneOf reference), the project's display name as ``spec.name``, and its billing
account as ``billingAccountRef``, kept in cloudbilling's billingInfo (a
companion) and written with its own call."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import celpy
import pytest
import yaml
from celpy.adapter import json_to_cel

from kccgen.generator.ir.candidates import form_key
from kccgen.mockgcp.engine import MockGCP
from kccgen.mockgcp.server import MockServer
from kccgen.runtime.adapter import adapter_for, spec_to_api
from kccgen.runtime.export import export_manifest
from tests.conftest import REPO

INDEX = json.loads((REPO / "generated" / "kinds.json").read_text(encoding="utf-8"))
ORG = "organizations/1234567"
BILLING = "billingAccounts/AAAAAA-BBBBBB-CCCCCC"


def _spec_schema(kind: str) -> dict[str, Any]:
    crd = yaml.safe_load((REPO / "generated" / INDEX[kind]["crd"]).read_text(encoding="utf-8"))
    return dict(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"])


def _cel_ok(kind: str, spec: dict[str, Any]) -> bool:
    env = celpy.Environment()
    rules = [r["rule"] for r in _spec_schema(kind)["x-kubernetes-validations"] if "oldSelf" not in r["rule"]]
    return all(bool(env.program(env.compile(r)).evaluate({"self": json_to_cel(spec)})) for r in rules)


def test_folder_is_its_own_resource_not_a_form_of_projects() -> None:
    assert form_key("folders") != form_key("projects")
    assert form_key("projects.locations.lakes.zones") != form_key("projects.locations.lakes")
    assert form_key("folders.locations.jobs") == form_key("projects.locations.jobs")
    assert INDEX["Folder"]["apiVersion"].startswith("resourcemanager.cnrm.cloud.google.com/")
    assert INDEX["Project"]["apiVersion"].startswith("resourcemanager.cnrm.cloud.google.com/")


def test_the_parent_is_folder_ref_or_organization_ref() -> None:
    for kind in ("Project", "Folder"):
        props = _spec_schema(kind)["properties"]
        assert {"folderRef", "organizationRef"} <= set(props) and "parent" not in props
        assert not _cel_ok(kind, {"displayName": "d", "folderRef": {"external": "folders/1"}, "organizationRef": {"external": ORG}})
        assert _cel_ok(kind, {"displayName": "d", "folderRef": {"external": "folders/1"}})
    assert _cel_ok("Project", {"name": "p"})  # a project may have no parent
    # a folder must have one, which Config Connector's folder-id / organization-id
    # annotation may give (the API server cannot see annotations from spec's CEL):
    # the runtime refuses one that nothing names (tests/test_hierarchy_annotations.py)
    assert _cel_ok("Folder", {"displayName": "d"})
    assert "billingAccountRef" in _spec_schema("Project")["properties"] and "name" in _spec_schema("Project")["properties"]


def test_spec_to_api_sends_the_parent_and_never_the_companion() -> None:
    a = adapter_for("Project")
    spec = {"name": "My project", "folderRef": {"external": "folders/42"}, "billingAccountRef": {"external": BILLING}}
    resolved = {"spec.folderRef": "folders/42", "spec.billingAccountRef": BILLING}
    from kccgen.runtime.aliases import canonical_spec

    body = spec_to_api(canonical_spec(a, spec), a, resolved)
    assert body == {"displayName": "My project", "parent": "folders/42"}


def _kccctl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kccgen.runtime.cli", *args], cwd=REPO, capture_output=True, text=True, check=False, timeout=180)


def _project(billing: str | None = BILLING) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": "Config Connector Sample", "organizationRef": {"external": ORG}}
    if billing:
        spec["billingAccountRef"] = {"external": billing}
    return {"apiVersion": "resourcemanager.cnrm.cloud.google.com/v1beta1", "kind": "Project", "metadata": {"name": "kcc-sample-project"}, "spec": spec}


def _calls(s: MockServer) -> list[str]:
    return [f"{e.method} {e.url.split('?')[0].split('.googleapis.com/')[-1]}" for e in s.log]


def test_kccctl_creates_a_project_and_sets_its_billing_account_with_its_own_call(tmp_path: Path) -> None:
    manifest = tmp_path / "p.yaml"
    common = ("--state", str(tmp_path / "st"), "--project", "demo", "--host-paths")
    with MockServer(MockGCP(lro_polls=1)) as s:
        manifest.write_text(yaml.safe_dump(_project()), encoding="utf-8")
        r = _kccctl("apply", "-f", str(manifest), "--endpoint", s.base_url, *common)
        assert r.returncode == 0, r.stdout + r.stderr
        create = next(e for e in s.log if e.method == "POST" and e.url.split("?")[0].endswith("/v3/projects"))
        assert json.loads(create.request_body) == {"displayName": "Config Connector Sample", "parent": ORG, "projectId": "kcc-sample-project"}
        assert [c for c in _calls(s) if c.startswith(("PUT", "PATCH"))] == ["PUT v1/projects/kcc-sample-project/billingInfo"]

        s.clear_log()  # up to date: the project's GET and its billingInfo's GET, no write
        r = _kccctl("apply", "-f", str(manifest), "--endpoint", s.base_url, *common)
        assert r.returncode == 0, r.stdout + r.stderr
        assert _calls(s) == ["GET v3/projects/kcc-sample-project", "GET v1/projects/kcc-sample-project/billingInfo"]

        s.clear_log()  # another billing account: one write, through cloudbilling
        manifest.write_text(yaml.safe_dump(_project("billingAccounts/DDDDDD-EEEEEE-FFFFFF")), encoding="utf-8")
        r = _kccctl("apply", "-f", str(manifest), "--endpoint", s.base_url, *common)
        assert r.returncode == 0, r.stdout + r.stderr
        put = [e for e in s.log if e.method == "PUT"]
        assert len(put) == 1 and json.loads(put[0].request_body)["billingAccountName"] == "billingAccounts/DDDDDD-EEEEEE-FFFFFF"
        assert not [e for e in s.log if e.method in ("POST", "PATCH")]

        s.clear_log()  # a spec without billingAccountRef leaves the billing account alone
        manifest.write_text(yaml.safe_dump(_project(None)), encoding="utf-8")
        r = _kccctl("apply", "-f", str(manifest), "--endpoint", s.base_url, *common)
        assert r.returncode == 0, r.stdout + r.stderr
        assert _calls(s) == ["GET v3/projects/kcc-sample-project"]


def test_export_gives_the_parent_back_as_its_reference() -> None:
    live = {"name": "projects/123", "projectId": "p1", "displayName": "d", "parent": "folders/42", "state": "ACTIVE"}
    m = export_manifest("Project", "projects/p1", live)
    assert m["spec"]["folderRef"] == {"external": "folders/42"} and "parent" not in m["spec"]


@pytest.mark.parametrize("kind", ["Project", "Folder"])
def test_the_lifecycle_passes_on_mockgcp(kind: str) -> None:
    r = _kccctl("verify", kind)
    assert r.returncode == 0, r.stdout + r.stderr
