"""Config Connector's one Kind over several location scopes (kind file ``locations:``).

KCC's ComputeAddress is regional or global by ``spec.location``; compute has
``addresses`` and ``globalAddresses``, generated as ComputeAddress and
ComputeGlobalAddress. These tests hold the whole path:

* the kind config is strict (unknown keys, scopes, a variant at the wrong
  scope or the Kind's own scope name the file and the path);
* the CRD takes ``location`` in place of the region or zone field, refuses
  both, and keeps it immutable; the pydantic model agrees;
* ``kccctl apply`` against mockgcp reconciles each object as the Kind serving
  its scope (requests to that collection only), a reference by name to a
  global ComputeAddress resolves, a second apply only reads, the user's
  spelling is kept, a scope no Kind serves is refused by name, delete removes
  every resource.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import celpy
import pytest
import yaml
from celpy.adapter import json_to_cel
from pydantic import ValidationError

from kccgen.contract import location_scope, template_scope
from kccgen.discovery.document import Method
from kccgen.discovery.errors import SpecError
from kccgen.generator.ir.build import build_ir
from kccgen.generator.ir.identity import rest_of
from kccgen.generator.spec.kinds import load_kinds_file
from kccgen.generator.spec.loader import load_specs
from kccgen.mockgcp.engine import MockGCP
from kccgen.mockgcp.server import MockServer
from kccgen.runtime.adapter import adapter_for
from kccgen.runtime.admission import crd_versions
from kccgen.runtime.identity import IdentityError, identity_for
from kccgen.runtime.locations import LocationError, located, restored
from kccgen.runtime.refs import references_of
from kccgen.runtime.registry import types_modules
from tests.conftest import REPO
from tests.support.kinds import POLICY_KINDS
from tests.support.specs import only_files
from tools.kcc_compat import crd_schemas, validator

CRDS = REPO / "generated" / "crds"
SCHEMAS = {kind: s for (_, kind), s in crd_schemas(CRDS).items() if kind not in POLICY_KINDS}
PROJECT = "demo-project"
COMPUTE = REPO / "specs" / "kinds" / "compute.yaml"
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _obj(kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    # Config Connector's v1beta1 where the Kind serves it (ComputeFutureReservation is v1alpha1 there too)
    versions = crd_versions(kind)
    version = "compute.cnrm.cloud.google.com/v1beta1" if "compute.cnrm.cloud.google.com/v1beta1" in versions else sorted(versions)[-1]
    return {"apiVersion": version, "kind": kind, "metadata": {"name": name}, "spec": copy.deepcopy(spec)}


# --- the kind config ------------------------------------------------------------------------


def _compute_file(tmp_path: Path, entry: Any, key: str = "kinds") -> Path:
    doc = yaml.safe_load(COMPUTE.read_text(encoding="utf-8"))
    doc["locations"][key] = entry
    p = tmp_path / "compute.yaml"
    p.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return p


def test_an_unknown_scope_is_refused_by_path(tmp_path: Path) -> None:
    p = _compute_file(tmp_path, {"ComputeAddress": {"continent": "ComputeGlobalAddress"}})
    with pytest.raises(SpecError) as e:
        load_kinds_file(p, "specs/kinds/compute.yaml")
    assert str(e.value).startswith("specs/kinds/compute.yaml#/locations/kinds/ComputeAddress/continent")


def test_locations_need_a_reason(tmp_path: Path) -> None:
    doc = yaml.safe_load(COMPUTE.read_text(encoding="utf-8"))
    del doc["locations"]["reason"]
    p = tmp_path / "compute.yaml"
    p.write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(SpecError) as e:
        load_kinds_file(p, "specs/kinds/compute.yaml")
    assert str(e.value).startswith("specs/kinds/compute.yaml#/locations/reason")


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"ComputeAddress": {"region": "ComputeRegionDisk"}}, "ComputeAddress is the region Kind itself"),
        ({"ComputeAddress": {"global": "ComputeRegionDisk"}}, r"ComputeRegionDisk \(projects/\{project\}/regions/\{region\}/disks/\{disk\}\) is not a global resource"),
    ],
)
def test_a_wrong_variant_stops_the_build(entry: dict[str, Any], message: str, tmp_path: Path) -> None:
    specs = load_specs(REPO / "specs")
    kf = load_kinds_file(_compute_file(tmp_path, entry), "specs/kinds/compute.yaml")
    only = only_files(specs, {"specs/kinds/compute.yaml": kf})
    with pytest.raises(SpecError, match=message) as e:
        build_ir(only)
    assert str(e.value).startswith("specs/kinds/compute.yaml#/locations/kinds/ComputeAddress/")


def test_scopes_of_templates_and_values() -> None:
    assert template_scope("projects/{project}/regions/{region}/addresses/{address}") == ("region", "region")
    assert template_scope("projects/{project}/zones/{zone}/disks/{disk}") == ("zone", "zone")
    assert template_scope("projects/{project}/global/addresses/{address}") == ("global", "")
    assert template_scope("projects/{project}/topics/{topic}") == ("", "")
    assert [location_scope(v) for v in ("global", "us-central1", "europe-west4", "us-central1-a", "northamerica-northeast1-b")] == [
        "global", "region", "region", "zone", "zone",
    ]


# --- CRD, CEL and model ---------------------------------------------------------------------


def _rules(kind: str) -> list[str]:
    return [r["rule"] for r in SCHEMAS[kind]["properties"]["spec"]["x-kubernetes-validations"]]


def _cel(rule: str, spec: dict[str, Any], old: dict[str, Any] | None = None) -> bool:
    env = celpy.Environment()
    act = {"self": json_to_cel(spec)}
    if "oldSelf" in rule:
        if old is None:
            return True  # a transition rule: not evaluated on create
        act["oldSelf"] = json_to_cel(old)
    return bool(env.program(env.compile(rule)).evaluate(act))


def _located_kinds() -> list[str]:
    return sorted(k for k in SCHEMAS if adapter_for(k).locations is not None)


def test_every_located_kind_takes_location_in_its_crd_and_model() -> None:
    kinds = _located_kinds()
    assert "ComputeAddress" in kinds and "ComputeBackendService" in kinds
    for kind in kinds:
        loc = adapter_for(kind).locations
        assert loc is not None
        scope = "us-central1-a" if loc.scope == "zone" else "us-central1" if loc.scope == "region" else "global"
        spec = {"location": scope}
        obj = _obj(kind, "x1", spec)
        # required API fields (an instance group manager's targetSize) are another test's
        assert [e.message for e in validator(SCHEMAS[kind]).iter_errors(obj) if e.validator != "required"] == [], kind
        assert all(_cel(r, spec) for r in _rules(kind)), kind
        try:
            getattr(types_modules()[kind], kind).model_validate(obj)
        except ValidationError as e:  # required API fields only (targetSize)
            assert {err["type"] for err in e.errors()} == {"missing"}, (kind, e)
        if loc.param:  # location names the region or zone: exactly one of the two
            assert not all(_cel(r, {"location": scope, loc.param: scope}) for r in _rules(kind)), kind
            assert not all(_cel(r, {}) for r in _rules(kind)), kind
            assert all(_cel(r, {loc.param: scope}) for r in _rules(kind)), kind
        # immutable: neither changed nor removed
        assert not all(_cel(r, {"location": "europe-west4-b" if loc.scope == "zone" else "europe-west4"}, spec) for r in _rules(kind)), kind
        assert all(_cel(r, spec, spec) for r in _rules(kind)), kind


def test_located_picks_the_kind_of_the_scope() -> None:
    g = located(_obj("ComputeAddress", "a", {"location": "global", "description": "d"}))
    assert g is not None and g["kind"] == "ComputeGlobalAddress" and g["spec"] == {"description": "d"}
    assert g["apiVersion"] == adapter_for("ComputeGlobalAddress").api_version
    r = located(_obj("ComputeAddress", "a", {"location": "us-central1"}))
    assert r is not None and r["kind"] == "ComputeAddress" and r["spec"] == {"region": "us-central1"}
    d = located(_obj("ComputeDisk", "d", {"location": "us-central1"}))
    assert d is not None and d["kind"] == "ComputeRegionDisk" and d["spec"] == {"region": "us-central1"}
    assert located(_obj("ComputeAddress", "a", {"region": "us-central1"})) is None
    with pytest.raises(LocationError, match="'us-central1-a' names a zone; a ComputeAddress lives in a region or the global scope"):
        located(_obj("ComputeAddress", "a", {"location": "us-central1-a"}))
    with pytest.raises(LocationError, match="set one of the two, not both"):
        located(_obj("ComputeAddress", "a", {"location": "us-central1", "region": "us-central1"}))


def test_a_reference_accepts_the_names_of_every_scope() -> None:
    ident = identity_for("ComputeAddress")
    assert ident.normalize(f"projects/{PROJECT}/global/addresses/a") == f"projects/{PROJECT}/global/addresses/a"
    url = f"https://www.googleapis.com/compute/v1/projects/{PROJECT}/regions/us-east1/addresses/b"
    assert ident.normalize(url) == f"projects/{PROJECT}/regions/us-east1/addresses/b"
    assert ident.parse(f"projects/{PROJECT}/global/addresses/a") == {"project": PROJECT, "address": "a"}
    with pytest.raises(IdentityError, match="global/addresses"):
        ident.normalize(f"projects/{PROJECT}/zones/us-east1-b/addresses/c")


# --- kccctl against mockgcp -----------------------------------------------------------------


def _kccctl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kccgen.runtime.cli", *args], cwd=REPO, capture_output=True, text=True, check=False, timeout=180)


OBJECTS = [
    _obj("ComputeAddress", "addr-global", {"location": "global"}),
    _obj("ComputeAddress", "addr-regional", {"location": "us-central1"}),
    _obj(
        "ComputeForwardingRule",
        "rule-global",
        {
            "location": "global",
            "ipAddress": {"addressRef": {"name": "addr-global"}},
            "loadBalancingScheme": "EXTERNAL_MANAGED",
            "target": {"targetHTTPProxyRef": {"external": f"projects/{PROJECT}/global/targetHttpProxies/proxy"}},
        },
    ),
    _obj("ComputeHealthCheck", "hc-regional", {"location": "us-central1", "type": "HTTP", "httpHealthCheck": {"port": 80}}),
    _obj("ComputeDisk", "disk-zonal", {"location": "us-central1-a", "sizeGb": "10"}),
    _obj("ComputeDisk", "disk-regional", {"location": "us-central1", "sizeGb": "10", "replicaZones": [
        f"projects/{PROJECT}/zones/us-central1-a", f"projects/{PROJECT}/zones/us-central1-b"]}),
]

# Collection each object must be created in (the path after compute/v1/projects/<p>/).
WHERE = {
    "addr-global": "global/addresses",
    "addr-regional": "regions/us-central1/addresses",
    "rule-global": "global/forwardingRules",
    "hc-regional": "regions/us-central1/healthChecks",
    "disk-zonal": "zones/us-central1-a/disks",
    "disk-regional": "regions/us-central1/disks",
}


def test_kccctl_reconciles_each_object_as_the_kind_of_its_scope(tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text(yaml.safe_dump_all(OBJECTS), encoding="utf-8")
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(_obj("ComputeAddress", "addr-zonal", {"location": "us-central1-a"})), encoding="utf-8")
    state = tmp_path / "state"
    common = ("--state", str(state), "--project", PROJECT)
    with MockServer(MockGCP(lro_polls=1)) as s:
        r = _kccctl("apply", "-f", str(manifest), "--endpoint", s.base_url, *common)
        assert r.returncode == 0, r.stdout + r.stderr
        posts = [(e.url.split(f"/projects/{PROJECT}/", 1)[1].split("?")[0], e.request_json) for e in s.log if e.method == "POST" and "/operations/" not in e.url]
        assert sorted(p for p, _ in posts) == sorted(WHERE.values())
        rule = next(b for p, b in posts if p == "global/forwardingRules")
        assert rule["IPAddress"].endswith(f"projects/{PROJECT}/global/addresses/addr-global")
        for o in OBJECTS:
            stored = yaml.safe_load((state / "default" / o["kind"] / f"{o['metadata']['name']}.yaml").read_text(encoding="utf-8"))
            assert stored["kind"] == o["kind"] and stored["spec"] == o["spec"]  # the user's spelling kept
            assert stored["status"]["externalRef"] == f"projects/{PROJECT}/{WHERE[o['metadata']['name']]}/{o['metadata']['name']}"

        s.clear_log()
        r = _kccctl("apply", "-f", str(manifest), "--endpoint", s.base_url, *common)
        assert r.returncode == 0, r.stdout + r.stderr
        assert sorted(e.method for e in s.log) == ["GET"] * len(OBJECTS)  # one GET each, nothing written

        s.clear_log()
        r = _kccctl("apply", "-f", str(bad), "--endpoint", s.base_url, *common)
        assert r.returncode != 0
        assert "ComputeAddress/addr-zonal: spec.location: 'us-central1-a' names a zone" in r.stdout + r.stderr
        assert list(s.log) == []  # refused before any call

        r = _kccctl("delete", "-f", str(manifest), "--endpoint", s.base_url, *common)
        assert r.returncode == 0, r.stdout + r.stderr
        deleted = sorted(e.url.split(f"/projects/{PROJECT}/", 1)[1].split("?")[0].rsplit("/", 1)[0] for e in s.log if e.method == "DELETE")
        assert deleted == sorted(WHERE.values())


# --- the generator rules that lean on location scopes ---------------------------------------


def test_a_reference_to_several_scopes_of_one_kind_targets_that_kind() -> None:
    """``sourceDisk`` names zonal or regional disks (ComputeDisk, ComputeRegionDisk):
    ambiguous without locations, one Kind with them; a field matching Kinds of
    different resources stays a plain string, listed as unresolved."""
    ref = next(r for r in references_of("ComputeInstantSnapshot") if r.api_path == "sourceDisk")
    assert (ref.path, ref.target) == ("sourceDiskRef", "ComputeDisk")
    unresolved = json.loads((REPO / "docs" / "coverage.json").read_text(encoding="utf-8"))["unresolved"]
    assert not any(u["kind"] == "ComputeInstantSnapshot" and u["field"].startswith("sourceDisk:") for u in unresolved)
    assert any(u["kind"] == "BatchJob" and "(ComputeInstanceTemplate, ComputeRegionInstanceTemplate)" in u["field"] for u in unresolved)


def _get(path: str, param: str, description: str) -> Method:
    return Method.model_validate(
        {"id": "x.get", "path": f"v3/{{+{param}}}", "flatPath": path, "httpMethod": "GET",
         "parameters": {param: {"type": "string", "location": "path", "required": True, "description": description}}}
    )


def test_an_any_parent_path_takes_the_one_documented_format() -> None:
    one = _get("v3/{v3Id}/{v3Id1}/services/{servicesId}", "name", "The format is: projects/[PROJECT_ID_OR_NUMBER]/services/[SERVICE_ID] ")
    assert rest_of(one) == ("projects/{project}/services/{service}", "v3/")
    several = _get(
        "v1/{v1Id}/{v1Id1}/savedQueries/{savedQueriesId}",
        "name",
        "projects/[PROJECT]/savedQueries/[Q], folders/[FOLDER]/savedQueries/[Q], or organizations/[ORG]/savedQueries/[Q]",
    )
    assert rest_of(several) == ("v1/{v1}/{v1Id1}/savedQueries/{savedQuery}", "")  # fails closed: no parent picked
    misfit = _get("v3/{v3Id}/{v3Id1}/services/{servicesId}", "name", "The format is: projects/[PROJECT]/groups/[GROUP]")
    assert rest_of(misfit)[0] == "v3/{v3}/{v3Id1}/services/{service}"


def test_an_identity_parent_is_a_resource_of_the_same_service() -> None:
    """AIP-122: ``accounts/{account}`` of AdSense is no My Business account, and
    ``organizations/{organization}`` of Access Context Manager no Apigee
    organization; the parent an API's own path names is found (AlloyDB's
    clusters/{cluster} is an AlloyDBCluster, as Config Connector's clusterRef)."""
    parents = {k: {r.path: r.target for r in references_of(k) if r.parent} for k in ("AdSenseAdUnit", "AccessContextManagerGCPUserAccessBinding", "AlloyDBInstance")}
    assert "MyBusinessAccountManagementAccount" not in parents["AdSenseAdUnit"].values()
    assert "ApigeeOrganization" not in parents["AccessContextManagerGCPUserAccessBinding"].values()
    assert parents["AlloyDBInstance"] == {"clusterRef": "AlloyDBCluster"}
    assert [p for p, f, _ in identity_for("AlloyDBInstance").spec_fields] == ["project", "location", "cluster", "instance"]


def test_restored_puts_back_the_users_kind_and_spelling() -> None:
    """After the reconcile, the object is the user's again: Kind, apiVersion and
    spec; a spec the reconcile rewrote (state-into-spec merge) keeps its new
    fields, with ``location`` in place of the region field it filled."""
    for spec, filled in (({"location": "us-central1"}, "region"), ({"location": "global"}, "")):
        original = _obj("ComputeAddress", "a", spec)
        as_located = located(original)
        assert as_located is not None
        untouched = restored(original, as_located, {**as_located, "status": {"externalRef": "x"}})
        assert (untouched["kind"], untouched["apiVersion"], untouched["spec"]) == ("ComputeAddress", original["apiVersion"], spec)
        assert untouched["status"] == {"externalRef": "x"}
        merged_spec = {**as_located["spec"], "description": "from GCP"}
        merged = restored(original, as_located, {**as_located, "spec": merged_spec})
        assert merged["spec"] == {**spec, "description": "from GCP"}
        assert filled == "" or filled not in merged["spec"]
