"""Config Connector's names: every claim of specs/kcc/claims.yaml is checked
against the Discovery documents, a claim on another resource fails naming both
sides, and coverage accounts for every one of Config Connector's Kinds."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from kccgen.discovery.errors import SpecError
from kccgen.generator.diagnostics import Reporter
from kccgen.generator.ir import build
from kccgen.generator.kcc import template_matches
from kccgen.generator.spec.claims import REASONS, Claim, load_claims
from kccgen.generator.spec.loader import Specs
from kccgen.runtime.adapter import adapter_for
from tests.conftest import REPO

COVERAGE = json.loads((REPO / "docs" / "coverage.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def stages(specs: Specs) -> tuple[list[build.Selected], list[build.Shaped], dict[str, build.Identity]]:
    selected = build.select_kinds(specs, True, Reporter())
    shaped, _ = build.resolve_shapes(selected)
    identities = build.resolve_identities(specs, shaped, Reporter(), [])
    return selected, [sh for sh in shaped if sh.sel.cfg.kind in identities], identities


def _check(specs: Specs, stages: tuple[list[build.Selected], list[build.Shaped], dict[str, build.Identity]], **claims: str) -> list[SpecError]:
    """The generator's check with these claims in place of the file's (same Kind names)."""
    served = dict(specs.claims.served)
    for kind, value in claims.items():
        api, res = value.split()
        name, _, version = api.partition(".")
        served[kind] = Claim(kind, name, res, version or None)
    changed = dataclasses.replace(specs, claims=dataclasses.replace(specs.claims, served=served))
    return build._check_claims(changed, *stages)


def test_every_claim_holds_against_the_documents(specs: Specs, stages: tuple[list[build.Selected], list[build.Shaped], dict[str, build.Identity]]) -> None:
    assert [str(e) for e in build._check_claims(specs, *stages)] == []
    assert len(specs.claims.served) > 400


@pytest.mark.parametrize(
    ("kind", "claim", "why"),
    [
        # the nine pairings the coverage matcher had made: each another resource
        ("AppHubDiscoveredService", "apphub projects.locations.applications.services", "another REST collection"),
        ("AppHubDiscoveredWorkload", "apphub projects.locations.applications.workloads", "another REST collection"),
        ("BinaryAuthorizationPolicy", "binaryauthorization projects.platforms.gke.policies", "another REST collection"),
        ("CloudAssetFolderFeed", "cloudasset feeds", "all claim"),  # AssetFeed is the any-parent Kind
        ("CloudAssetOrganizationFeed", "cloudasset feeds", "all claim"),
        ("DataflowFlexTemplateJob", "dataflow projects.locations.jobs", "another schema"),
        ("DataplexDataAttributeBinding", "dataplex projects.locations.dataDomains.bindings", "another REST collection"),
        ("GKEHubFeature", "gkehub projects.locations.memberships.features", "another REST collection"),
        ("NotebookInstance", "notebooks projects.locations.instances", "all claim"),
        # and a few of another service, another schema
        ("VectorSearchCollection", "content collections", "another service"),
        ("DataflowJob", "dataflow projects.locations.jobs", "another schema"),
    ],
)
def test_a_claim_on_another_resource_fails_naming_both_sides(
    kind: str, claim: str, why: str, specs: Specs, stages: tuple[list[build.Selected], list[build.Shaped], dict[str, build.Identity]]
) -> None:
    errors = [str(e) for e in _check(specs, stages, **{kind: claim}) if f"/claims/{kind}" in str(e)]
    assert errors, f"{kind} -> {claim} was accepted"
    assert any(why in e for e in errors), errors
    assert all(kind in e and claim.split()[1] in e for e in errors), errors


def test_two_kinds_claiming_one_resource_is_an_error(specs: Specs, stages: tuple[list[build.Selected], list[build.Shaped], dict[str, build.Identity]]) -> None:
    errors = [str(e) for e in _check(specs, stages, KMSKeyRingImportJob="cloudkms projects.locations.keyRings.importJobs")]
    assert any("KMSImportJob and KMSKeyRingImportJob all claim" in e for e in errors), errors


def test_the_claims_file_is_strict(tmp_path: Path) -> None:
    (tmp_path / "kcc").mkdir()
    (tmp_path / "kcc" / "claims.yaml").write_text("claims:\n  Foo: {none: nope}\n", encoding="utf-8")
    with pytest.raises(SpecError, match=r"claims\.yaml#/claims/Foo/none: unknown reason 'nope'"):
        load_claims(tmp_path)
    (tmp_path / "kcc" / "claims.yaml").write_text("claims:\n  Foo: pubsub\n", encoding="utf-8")
    with pytest.raises(SpecError, match=r"#/claims/Foo: 'pubsub': write '<api> <resource path>'"):
        load_claims(tmp_path)


def test_a_claim_gives_the_kind_config_connectors_group_plural_and_versions() -> None:
    rows = {m["kcc_kind"]: m for m in COVERAGE["kcc"]}
    for kind in ("BigtableInstance", "TagsTagKey", "Project", "Folder", "IAMServiceAccount", "VertexAIEndpoint", "DNSRecordSet", "IAMDenyPolicy"):
        m = rows[kind]
        assert m["ours"] == kind and m["ours_group"] == m["group"] and m["ours_plural"] == m["plural"], m
        assert set(m["versions"]) <= set(m["ours_versions"]), m
        assert adapter_for(kind).api_version.split("/")[0] == m["group"]


def test_coverage_accounts_for_every_config_connector_kind() -> None:
    kcc = COVERAGE["kcc"]
    tsv = REPO.parent / "shared" / "compat" / "kcc" / "kinds.tsv"
    if tsv.is_file():
        listed = {ln.split("\t")[0] for ln in tsv.read_text(encoding="utf-8").splitlines()[3:] if ln.strip()}
        assert {m["kcc_kind"] for m in kcc} == listed
    for m in kcc:
        served = bool(m["ours"]) and m["ours"] == m["kcc_kind"]
        assert served or m["reason"] in REASONS, m
    assert COVERAGE["summary"]["kcc_kinds"] == len(kcc)


def test_name_shapes_match_as_config_connector_writes_them() -> None:
    # lower-cased collections, regions for locations, trailing type, scope words
    assert template_matches(("projects", "{}", "locations", "{}", "backupvaults", "{}"), "projects/{project}/locations/{location}/backupVaults/{backupVault}")
    assert template_matches(("projects", "{}", "locations", "{}", "autoscalingpolicies", "{}"), "projects/{project}/regions/{region}/autoscalingPolicies/{p}")
    assert template_matches(("projects", "{}", "managedzones", "{}", "rrsets", "{}"), "projects/{project}/managedZones/{mz}/rrsets/{name}/{type}")
    assert template_matches(("{}", "storedinfotypes", "{}"), "projects/{project}/locations/{location}/storedInfoTypes/{s}")
    assert not template_matches(("projects", "{}", "locations", "{}", "discoveredservices", "{}"), "projects/{p}/locations/{l}/applications/{a}/services/{s}")


def test_a_claim_via_a_custom_method_shares_the_resource_and_owns_nothing(tmp_path: Path) -> None:
    """ServiceIdentity reads serviceusage services through generateServiceIdentity,
    beside Service, which owns them: no duplicate, and no claim on the resource."""
    (tmp_path / "kcc").mkdir()
    (tmp_path / "kcc" / "claims.yaml").write_text(
        "claims:\n  Service: serviceusage services\n"
        "  ServiceIdentity: {claim: serviceusage.v1beta1 services, via: generateServiceIdentity, note: x}\n",
        encoding="utf-8",
    )
    claims = load_claims(tmp_path)
    assert claims.served["ServiceIdentity"] == Claim("ServiceIdentity", "serviceusage", "services", "v1beta1", "generateServiceIdentity")
    assert claims.for_api("serviceusage") == {"services": claims.served["Service"]}
    (tmp_path / "kcc" / "claims.yaml").write_text("claims:\n  Foo: {claim: pubsub, via: x}\n", encoding="utf-8")
    with pytest.raises(SpecError, match=r"#/claims/Foo/claim: 'pubsub': write '<api> <resource path>'"):
        load_claims(tmp_path)
