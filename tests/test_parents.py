"""Kinds under several top-level parents: project, folder, organization, billing account.

Logging has ``projects.locations.buckets`` and the same resource under
``folders``, ``organizations`` and ``billingAccounts``, with the same methods.
The generator makes one Kind of them (the projects form), with one reference
field per parent; these tests hold the whole path:

* candidates: a form with the same methods becomes a parent of the Kind; one
  whose methods differ stays a separate, excluded form;
* the CRD keeps every parent field immutable and refuses two parents; the
  reference module lists the parent forms;
* identity: every parent form is parsed and normalized, and the spec's parent
  field picks the form (two parents are refused by name);
* ``kccctl apply`` against mockgcp creates a folder's, an organization's and a
  project's bucket in their own collections, a view under the folder's bucket
  lands under the folder, a second apply only reads, and delete removes each.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import celpy
import pytest
import yaml
from celpy.adapter import json_to_cel

from kccgen.discovery.document import Resource
from kccgen.generator.ir.candidates import parent_form_of
from kccgen.mockgcp.engine import MockGCP
from kccgen.mockgcp.server import MockServer
from kccgen.runtime.identity import IdentityError, identity_for
from kccgen.runtime.refs import references_of
from tests.conftest import REPO
from tools.kcc_compat import crd_schemas

SCHEMAS = {kind: s for (_, kind), s in crd_schemas(REPO / "generated" / "crds").items()}
COVERAGE = json.loads((REPO / "docs" / "coverage.json").read_text(encoding="utf-8"))
PROJECT = "demo-project"


def _method(path: str, verb: str, params: tuple[str, ...], response: str | None = "LogBucket") -> dict[str, Any]:
    m: dict[str, Any] = {"id": f"x.{verb}", "path": path, "httpMethod": verb, "parameters": {p: {"type": "string", "location": "path"} for p in params}}
    if response:
        m["response"] = {"$ref": response}
    return m


def _res(**methods: dict[str, Any]) -> Resource:
    return Resource.model_validate({"methods": methods})


BUCKETS = _res(get=_method("v2/{+name}", "GET", ("name",)), create=_method("v2/{+parent}/buckets", "POST", ("parent", "bucketId")))


def test_a_form_with_the_same_methods_is_a_parent_of_the_kind() -> None:
    resources = {"projects.locations.buckets": BUCKETS, "folders.locations.buckets": BUCKETS}
    assert parent_form_of("projects.locations.buckets", "folders.locations.buckets", resources) == "folders"


@pytest.mark.parametrize(
    "other",
    [
        # another parameter name (a path spelled with foldersId): the calls cannot be rewritten
        _res(get=_method("v2/{+name}", "GET", ("name",)), create=_method("v2/{+parent}/buckets", "POST", ("parent", "id"))),
        # a method the projects form lacks
        _res(get=_method("v2/{+name}", "GET", ("name",)), create=_method("v2/{+parent}/buckets", "POST", ("parent", "bucketId")), delete=_method("v2/{+name}", "DELETE", ("name",), None)),
        # another response schema
        _res(get=_method("v2/{+name}", "GET", ("name",), "FolderBucket"), create=_method("v2/{+parent}/buckets", "POST", ("parent", "bucketId"))),
    ],
)
def test_a_form_whose_methods_differ_stays_a_separate_form(other: Resource) -> None:
    resources = {"projects.locations.buckets": BUCKETS, "folders.locations.buckets": other}
    assert parent_form_of("projects.locations.buckets", "folders.locations.buckets", resources) is None


def test_not_a_parent_form() -> None:
    resources = {"projects.locations.buckets": BUCKETS, "folders.buckets": BUCKETS, "projects.buckets": BUCKETS}
    assert parent_form_of("projects.locations.buckets", "folders.buckets", resources) is None  # another path
    assert parent_form_of("folders.buckets", "projects.buckets", resources) is None  # the Kind is the projects form


def test_the_coverage_report_names_the_kind_serving_each_parent_form() -> None:
    rows = {(r["api"], r["resource"]): r for r in COVERAGE["rows"]}
    row = rows[("logging.v2", "folders.locations.buckets")]
    assert row["tier"] == "excluded"
    assert "folderRef" in row["reason"] and "projects.locations.buckets" in row["reason"]


def _parent_kinds() -> list[str]:
    return sorted(k for k in SCHEMAS if "folderRef" in SCHEMAS[k]["properties"].get("spec", {}).get("properties", {}) or "organizationRef" in SCHEMAS[k]["properties"].get("spec", {}).get("properties", {}))


def _cel(rule: str, spec: dict[str, Any], old: dict[str, Any] | None = None) -> bool:
    env = celpy.Environment()
    act = {"self": json_to_cel(spec)}
    if "oldSelf" in rule:
        if old is None:
            return True
        act["oldSelf"] = json_to_cel(old)
    return bool(env.program(env.compile(rule)).evaluate(act))


def _admits(kind: str, spec: dict[str, Any], old: dict[str, Any] | None = None) -> bool:
    rules = [r["rule"] for r in SCHEMAS[kind]["properties"]["spec"]["x-kubernetes-validations"]]
    return all(_cel(r, spec, old) for r in rules)


def test_several_kinds_have_parent_fields() -> None:
    kinds = _parent_kinds()
    assert {"LoggingLogBucket", "LoggingLogSink", "LoggingLogExclusion", "DLPInspectTemplate"} <= set(kinds)


@pytest.mark.parametrize("kind", ["LoggingLogBucket", "LoggingLogSink", "DLPInspectTemplate", "OrgPolicyPolicy"])
def test_the_crd_takes_one_parent_and_keeps_it(kind: str) -> None:
    props = SCHEMAS[kind]["properties"]["spec"]["properties"]
    ident = identity_for(kind)
    fields = ["projectRef", *(p[2] for p in ident.parents)]
    assert all(f in props for f in fields)
    assert not set(fields) & set(SCHEMAS[kind]["properties"]["spec"].get("required", []))
    base = {k: v for k, v in {"location": "global", "resourceID": "x"}.items() if k in props}
    for f in fields:
        assert _admits(kind, {**base, f: {"external": "123"}})
    assert _admits(kind, base)  # none: the project-id annotation names the project
    assert not _admits(kind, {**base, fields[0]: {"external": "p"}, fields[1]: {"external": "123"}})
    # a parent is identity: neither moved nor swapped
    assert not _admits(kind, {**base, fields[1]: {"external": "456"}}, {**base, fields[1]: {"external": "123"}})
    assert not _admits(kind, {**base, fields[0]: {"external": "p"}}, {**base, fields[1]: {"external": "123"}})
    refs = {r.path: r for r in references_of(kind)}
    for f in fields[1:]:
        assert refs[f].parent


def test_identity_parses_every_parent_form() -> None:
    ident = identity_for("LoggingLogBucket")
    assert ident.parse("folders/123/locations/global/buckets/b") == {"folder": "123", "location": "global", "bucket": "b"}
    assert ident.normalize("//logging.googleapis.com/organizations/9/locations/global/buckets/b") == "organizations/9/locations/global/buckets/b"
    assert ident.normalize("billingAccounts/AB-12/locations/eu/buckets/b") == "billingAccounts/AB-12/locations/eu/buckets/b"
    assert ident.parse("projects/p/locations/global/buckets/b")["project"] == "p"
    with pytest.raises(IdentityError, match=re.escape("folders/{folder}/locations/{location}/buckets/{bucket}")):
        ident.parse("teams/1/locations/global/buckets/b")


def test_the_spec_picks_the_form_and_two_parents_are_refused() -> None:
    ident = identity_for("LoggingLogBucket")
    assert ident.form_for_spec({"folderRef": {"external": "1"}}).template == "folders/{folder}/locations/{location}/buckets/{bucket}"
    assert ident.form_for_spec({"projectRef": {"external": "p"}}) is ident
    assert ident.form_for_spec({}) is ident
    with pytest.raises(ValueError, match=r"spec\.projectRef and spec\.folderRef are set"):
        ident.form_for_spec({"projectRef": {"external": "p"}, "folderRef": {"external": "1"}})


def test_a_child_under_a_parent_kind_follows_its_parent() -> None:
    view = identity_for("LoggingLogView")
    assert ("folders", "folder", "", "Folder") in view.parents  # the bucketRef covers the folder
    assert view.normalize("folders/1/locations/global/buckets/b/views/v") == "folders/1/locations/global/buckets/b/views/v"


def _kccctl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kccgen.runtime.cli", *args], cwd=REPO, capture_output=True, text=True, check=False, timeout=180)


def _obj(kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "logging.cnrm.cloud.google.com/v1beta1", "kind": kind, "metadata": {"name": name}, "spec": copy.deepcopy(spec)}


OBJECTS = [
    _obj("LoggingLogBucket", "folder-bucket", {"folderRef": {"external": "123"}, "location": "global", "retentionDays": 30}),
    _obj("LoggingLogBucket", "org-bucket", {"organizationRef": {"external": "organizations/456"}, "location": "global"}),
    _obj("LoggingLogBucket", "project-bucket", {"location": "global"}),
    _obj("LoggingLogView", "folder-view", {"bucketRef": {"name": "folder-bucket"}, "filter": 'SOURCE("projects/p")'}),
]
WHERE = {
    "folder-bucket": "folders/123/locations/global/buckets",
    "org-bucket": "organizations/456/locations/global/buckets",
    "project-bucket": f"projects/{PROJECT}/locations/global/buckets",
    "folder-view": "folders/123/locations/global/buckets/folder-bucket/views",
}


def _path(url: str) -> str:
    return url.split("/v2/", 1)[1].split("?")[0]


def test_kccctl_creates_each_object_under_its_parent(tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text(yaml.safe_dump_all(OBJECTS), encoding="utf-8")
    two = tmp_path / "two.yaml"
    two.write_text(yaml.safe_dump(_obj("LoggingLogBucket", "two", {"folderRef": {"external": "1"}, "projectRef": {"external": PROJECT}, "location": "global"})), encoding="utf-8")
    state = tmp_path / "state"
    common = ("--state", str(state), "--project", PROJECT, "--host-paths")  # logging's v2/ paths are served under its host
    with MockServer(MockGCP(lro_polls=1)) as s:
        r = _kccctl("apply", "-f", str(manifest), "--endpoint", s.base_url, *common)
        assert r.returncode == 0, r.stdout + r.stderr
        posts = sorted(_path(e.url) for e in s.log if e.method == "POST")
        assert posts == sorted(WHERE.values())
        for o in OBJECTS:
            name = o["metadata"]["name"]
            stored = yaml.safe_load((state / "default" / o["kind"] / f"{name}.yaml").read_text(encoding="utf-8"))
            assert stored["status"]["externalRef"] == f"{WHERE[name]}/{name}"
            assert stored["spec"] == o["spec"]

        s.clear_log()
        r = _kccctl("apply", "-f", str(manifest), "--endpoint", s.base_url, *common)
        assert r.returncode == 0, r.stdout + r.stderr
        assert sorted(e.method for e in s.log) == ["GET"] * len(OBJECTS)

        s.clear_log()
        r = _kccctl("apply", "-f", str(two), "--endpoint", s.base_url, *common)
        assert r.returncode != 0
        assert "LoggingLogBucket/two" in r.stdout and "set at most one of projectRef, billingAccountRef, folderRef, organizationRef" in r.stdout  # the CRD's rule
        assert list(s.log) == []

        r = _kccctl("delete", "-f", str(manifest), "--endpoint", s.base_url, *common)
        assert r.returncode == 0, r.stdout + r.stderr
        deleted = sorted(_path(e.url).rsplit("/", 1)[0] for e in s.log if e.method == "DELETE")
        assert deleted == sorted(WHERE.values())


def test_a_hierarchy_path_named_by_another_service_is_resource_managers() -> None:
    """``organizations/{organization}`` in Access Context Manager is an Organization;
    Apigee's organization matches the same shape, and only Apigee names it."""
    refs = {r.api_path: r.target for r in references_of("AccessContextManagerAccessPolicy")}
    assert refs["parent"] == "Organization"  # spec.organizationRef (kind config: Config Connector's annotation)
    assert "Organization" in {r.target for r in references_of("AccessContextManagerAuthorizedOrgsDesc")}
    # a folder or an organization: several hierarchy Kinds, so without a kind-config
    # decision the field stays a plain string ...
    unresolved = {(u["kind"], u["field"].split(":")[0]) for u in COVERAGE["unresolved"]}
    assert ("ComputeOrganizationSecurityPolicy", "parentId") in unresolved
    assert "parentId" not in {r.api_path for r in references_of("ComputeOrganizationSecurityPolicy")}
    # ... and with one it is Config Connector's folderRef or organizationRef
    assert {r.target for r in references_of("ComputeFirewallPolicy") if r.api_path == "parentId"} == {"Folder", "Organization"}
