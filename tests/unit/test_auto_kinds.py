"""Auto kind files: every resource of a document becomes a Kind or is excluded
with a reason; names follow Config Connector's convention; ambiguous
references fail closed."""

from __future__ import annotations

from pathlib import Path

import pytest

from kccgen.discovery.document import iter_resources
from kccgen.discovery.errors import SpecError
from kccgen.generator.coverage import KccMatch, coverage
from kccgen.generator.diagnostics import Reporter
from kccgen.generator.ir.build import _curated, build_ir, doc_key
from kccgen.generator.ir.candidates import _disambiguate, derive, form_key
from kccgen.generator.ir.model import FieldIR, ModelSet, ObjectIR, TargetKind, TypeIR
from kccgen.generator.ir.references import TargetIndex, infer_references
from kccgen.generator.naming import kind_name, plural_kind, service_prefix, singular
from kccgen.generator.spec.kinds import KindConfig
from kccgen.generator.spec.loader import load_specs
from tests.conftest import REPO
from tests.support.specs import curated_specs


def _specs(tmp_path: Path, files: dict[str, str]) -> Path:
    specs = curated_specs(tmp_path)
    for name, text in files.items():
        (specs / "kinds" / name).write_text(text)
    return specs


@pytest.mark.parametrize(
    ("prefix", "collection", "kind"),
    [
        ("Compute", "targetHttpsProxies", "ComputeTargetHTTPSProxy"),
        ("Compute", "sslCertificates", "ComputeSSLCertificate"),
        ("SQL", "instances", "SQLInstance"),
        ("KMS", "keyRings", "KMSKeyRing"),
        ("Logging", "metadata", "LoggingMetadata"),
        ("DNS", "responsePolicies", "DNSResponsePolicy"),
    ],
)
def test_kind_names_follow_config_connector(prefix: str, collection: str, kind: str) -> None:
    assert kind_name(prefix, collection) == kind


def test_service_prefix_from_the_canonical_name() -> None:
    assert service_prefix("secretmanager", "Secret Manager") == "SecretManager"
    assert service_prefix("redis", "Cloud Redis") == "Redis"
    assert service_prefix("cloudbuild", "Cloud Build") == "CloudBuild"
    assert service_prefix("iap", "Cloud IAP") == "IAP"
    assert service_prefix("compute", None) == "Compute"
    assert singular("settings") == "settings"


def test_service_prefix_from_the_title_initials_or_an_acronym() -> None:
    assert service_prefix("pubsublite", "PubsubLite", "Pub/Sub Lite API") == "PubSubLite"  # more word breaks win
    assert service_prefix("bigquery", "Bigquery", "BigQuery API") == "BigQuery"
    assert service_prefix("backupdr", "Backupdr", "Backup and DR Service API") == "BackupDR"  # filler word skipped
    assert service_prefix("billingbudgets", "CloudBillingBudget", "Cloud Billing Budget API") == "BillingBudgets"
    assert service_prefix("cloudiot", "Cloud Iot", None) == "CloudIOT"
    assert service_prefix("ces", "Customer Engagement Suite", "Gemini Enterprise for Customer Experience API") == "CES"
    assert service_prefix("gkebackup", "Backup for GKE", "Backup for GKE API") == "GKEBackup"
    # an acronym split needs the other word in the names: not APIGee, DRIve
    assert service_prefix("apigee", "Apigee", "Apigee API") == "Apigee"
    assert service_prefix("drive", None, "Google Drive API") == "Drive"


@pytest.mark.parametrize(
    ("prefix", "collection", "schema", "kind"),
    [
        ("Logging", "buckets", "LogBucket", "LoggingLogBucket"),  # one more word in front
        ("Apigee", "apiproducts", "GoogleCloudApigeeV1ApiProduct", "ApigeeAPIProduct"),  # casing, package dropped
        ("ML", "studies", "GoogleCloudMlV1__Study", "MLStudy"),
        ("APIGateway", "configs", "ApigatewayApiConfig", "APIGatewayAPIConfig"),  # the service name repeated
        ("VMwareEngine", "vmwareEngineNetworks", None, "VMwareEngineNetwork"),
        ("Apigee", "attachments", "GoogleCloudApigeeV1EnvironmentGroupAttachment", "ApigeeAttachment"),  # two words: no
        ("Compute", "instances", "InstanceList", "ComputeInstance"),  # not the same noun
        ("DiscoveryEngine", "pushNotificationConfigs", "A2aV1TaskPushNotificationConfig", "DiscoveryEnginePushNotificationConfig"),
        ("Healthcare", "hl7V2Stores", "Hl7V2Store", "HealthcareHL7V2Store"),
    ],
)
def test_the_get_schema_refines_the_noun(prefix: str, collection: str, schema: str | None, kind: str) -> None:
    assert kind_name(prefix, collection, schema) == kind


def test_plurals_as_config_connector_writes_them() -> None:
    assert plural_kind("DialogflowSecuritySettings") == "dialogflowsecuritysettings"
    assert plural_kind("SpannerInstanceConfig") == "spannerinstanceconfigs"
    assert plural_kind("KMSKeyRing") == "kmskeyrings"


def test_the_shortest_path_keeps_a_colliding_name() -> None:
    resources = ["projects.locations.dataStores.controls", "projects.locations.collections.dataStores.controls", "projects.locations.collections.engines.controls"]
    names = _disambiguate(dict.fromkeys(resources, "DEControl"), resources, "DE")
    assert names == {
        "projects.locations.dataStores.controls": "DEControl",
        "projects.locations.collections.dataStores.controls": "DEDataStoreControl",
        "projects.locations.collections.engines.controls": "DEEngineControl",
    }
    tie = ["organizations.envgroups.attachments", "organizations.instances.attachments"]
    assert _disambiguate(dict.fromkeys(tie, "AAttachment"), tie, "A") == {tie[0]: "AEnvgroupAttachment", tie[1]: "AInstanceAttachment"}


def test_a_config_connector_match_needs_its_group_too() -> None:
    sql = "sql.cnrm.cloud.google.com"
    assert KccMatch("SQLInstance", sql, "SQLInstance", "sqladmin.v1 instances", sql, "sqlinstances", "sqlinstances").matched
    assert not KccMatch("SQLInstance", sql, "SQLInstance", "sqladmin.v1 instances", "sqladmin.cnrm.cloud.google.com", "sqlinstances", "sqlinstances").matched
    assert not KccMatch("SQLInstance", sql, "SQLInstance", "sqladmin.v1 instances", sql, "sqlinstances", "sqlinstancs").matched


def test_forms_of_one_resource_share_a_key() -> None:
    keys = {form_key(p) for p in ("projects.locations.jobs", "projects.regions.jobs", "projects.jobs", "folders.locations.jobs")}
    assert keys == {("jobs",)}
    assert form_key("projects.locations.agents.flows") != form_key("projects.locations.flows")


def test_auto_file_derives_kinds_and_explains_every_resource(tmp_path: Path) -> None:
    specs = load_specs(_specs(tmp_path, {"run.yaml": "api: run\nauto: true\n"}))
    ir = build_ir(specs, Reporter())
    run = [k for k in ir.kinds if k.group == "run.cnrm.cloud.google.com"]
    names = {k.kind for k in run}
    assert {"RunService", "RunJob"} <= names
    assert all(k.version == "v1alpha1" and k.plural == k.kind.lower() + "s" for k in run)
    cov = coverage(specs, ir)
    file, kf = next((f, k) for f, k in specs.kinds if k.api == "run")
    doc = specs.discovery[doc_key(specs, file, kf)]
    rows = [r for r in cov.rows if r.api == doc.key]
    assert sorted(r.resource for r in rows) == sorted(d for d, _ in iter_resources(doc))
    assert all(r.reason for r in rows if r.tier == "excluded")
    assert {r.kind for r in rows if r.tier == "generated"} == names
    assert 0 < cov.lines_per_auto_kind <= 2
    # the curated Kinds are untouched
    assert {r.kind for r in cov.rows if r.tier == "curated"} >= {"PubSubTopic", "StorageBucket"}


def test_other_forms_are_excluded_against_the_kind(tmp_path: Path) -> None:
    specs = load_specs(_specs(tmp_path, {"logging.yaml": "api: logging\nauto: true\n"}))
    file, kf = next((f, k) for f, k in specs.kinds if k.api == "logging")
    configs, rows = derive(file, kf, specs.discovery[doc_key(specs, file, kf)], _curated(specs))
    sinks = {c.resource: c.kind for c in configs if c.kind == "LoggingLogSink"}
    assert sinks == {"projects.sinks": "LoggingLogSink"}
    # folders/organizations/billingAccounts take the same methods: parents of the Kind
    assert next(c for c in configs if c.kind == "LoggingLogSink").parent_forms == ("billingAccounts", "folders", "organizations")
    other = {r.resource: r.reason for r in rows if r.resource in ("sinks", "folders.sinks", "organizations.sinks")}
    assert other["folders.sinks"] == "the folders form of projects.sinks: served by its Kind, whose folderRef picks it"
    assert other["organizations.sinks"] == "the organizations form of projects.sinks: served by its Kind, whose organizationRef picks it"
    # the unscoped `sinks` path takes another shape: a separate form, left out
    assert other["sinks"].startswith("another form of projects.sinks")


def test_two_resources_with_one_kind_name_are_an_error(tmp_path: Path) -> None:
    text = (
        "api: run\nauto: true\noverrides:\n"
        "  projects.locations.services: {kind: RunThing, reason: test}\n"
        "  projects.locations.jobs: {kind: RunThing, reason: test}\n"
    )
    specs = load_specs(_specs(tmp_path, {"run.yaml": text}))
    with pytest.raises(SpecError, match=r"run\.yaml#/overrides/.*would both be Kind RunThing"):
        build_ir(specs, Reporter())


def test_an_exclusion_needs_an_existing_resource(tmp_path: Path) -> None:
    specs = load_specs(_specs(tmp_path, {"run.yaml": "api: run\nauto: true\nexclude:\n  projects.nothing: gone\n"}))
    with pytest.raises(SpecError, match=r"run\.yaml#/exclude/projects\.nothing: none of run\.v2, run\.v1, .* has resource 'projects\.nothing'"):
        build_ir(specs, Reporter())


def _target(kind: str, domain: str) -> TargetKind:
    return TargetKind(kind, "projects/{project}/locations/{location}/repositories/{repository}", domain, True, True, f"m.{kind}")


def _model(description: str) -> ModelSet:
    f = FieldIR("repository", TypeIR("string"), description, (), "x.v1#/schemas/R/properties/repository")
    return ModelSet((ObjectIR("R", "", (f,), "x.v1#/schemas/R"),), ())


def test_an_ambiguous_reference_stays_a_plain_string() -> None:
    """Two Kinds of other services fit the path: no reference, and the field is listed."""
    index = TargetIndex((_target("ARepository", "a.googleapis.com"), _target("BRepository", "b.googleapis.com")), load_specs(REPO / "specs").asset_names)
    inf = infer_references("CThing", _model("Format: projects/p/locations/l/repositories/r"), "R", KindConfig(kind="CThing", resource="x"), index, {}, frozenset(), "c.googleapis.com")
    assert inf.references == []
    assert inf.decisions[("R", "repository")] is None
    assert len(inf.unclassified) == 1 and "ARepository, BRepository" in inf.unclassified[0]


def test_the_same_service_wins_a_tie_by_aip_122() -> None:
    index = TargetIndex((_target("ARepository", "a.googleapis.com"), _target("BRepository", "b.googleapis.com")), load_specs(REPO / "specs").asset_names)
    inf = infer_references("AThing", _model("Format: projects/p/locations/l/repositories/r"), "R", KindConfig(kind="AThing", resource="x"), index, {}, frozenset(), "a.googleapis.com")
    assert [r.target for r in inf.references] == ["ARepository"]
    assert "same service" in inf.references[0].source


def test_where_a_derived_create_carries_the_id(tmp_path: Path) -> None:
    """The ID field is found from the get path's placeholder, never guessed: a
    ``*Reference`` object (bigquery), ``<placeholder>Name`` (dns), the service's
    ``id`` (gmail); a parent no Kind owns stays a plain string field."""
    from kccgen.contract import CreateServiceAssigned, CreateWithNameInBody, id_field

    specs = _specs(tmp_path, {"bigquery.yaml": "api: bigquery\nauto: true\n", "gmail.yaml": "api: gmail\nauto: true\n"})
    dns = specs / "kinds" / "dns.yaml"
    dns.write_text(dns.read_text().replace("\nkinds:\n", "\nauto: true\nkinds:\n", 1))
    ir = build_ir(load_specs(specs), Reporter())
    by = {(k.api.doc_key, k.resource): k for k in ir.kinds}
    dataset = by[("bigquery.v2", "datasets")].methods.create_shape
    assert isinstance(dataset, CreateWithNameInBody) and id_field(dataset) == "datasetReference.datasetId"
    policy = by[("dns.v1", "responsePolicies")].methods.create_shape
    assert isinstance(policy, CreateWithNameInBody) and policy.name_field == "responsePolicyName" and not policy.full_name
    label = by[("gmail.v1", "users.labels")]
    assert isinstance(label.methods.create_shape, CreateServiceAssigned) and label.methods.create_shape.id_field == "id"
    # {userId} names no Kind: a plain, required, immutable string, not a reference.
    user = next(p for p in label.identity.params if p.name == "userId")
    assert user.role == "location" and user.ref_kind is None


def test_a_dotted_id_field_is_set_and_read_without_touching_the_payload() -> None:
    from kccgen.runtime.requests import at_path, with_path

    body = {"datasetReference": {"projectId": "p"}, "x": 1}
    out = with_path(body, "datasetReference.datasetId", "d")
    assert out == {"datasetReference": {"projectId": "p", "datasetId": "d"}, "x": 1}
    assert body == {"datasetReference": {"projectId": "p"}, "x": 1}
    assert at_path(out, "datasetReference.datasetId") == "d" and at_path(out, "nope.x") is None


def test_coverage_marks_only_passing_kinds_verified(tmp_path: Path) -> None:
    import json

    specs = _specs(tmp_path, {"redis.yaml": "api: redis\nauto: true\n"})
    ir = build_ir(load_specs(specs), Reporter())
    derived = sorted(k.kind for k in ir.kinds if k.api.doc_key.startswith("redis."))
    assert len(derived) >= 2
    verified = tmp_path / "verified.json"
    verified.write_text(json.dumps({"kinds": {derived[0]: {"pass": True}, derived[1]: {"pass": False, "step": "update"}}}))
    tiers = {r.kind: r.tier for r in coverage(load_specs(specs), ir, None, verified).rows if r.kind}
    assert tiers[derived[0]] == "verified" and tiers[derived[1]] == "generated"
    assert all(tiers[k] == "curated" for k in ("PubSubTopic", "StorageBucket"))


def test_an_unnamed_wildcard_is_not_a_placeholder() -> None:
    """bigquery's {+datasetId} pattern ^[^/]+$ is the parameter itself, not ``{x}``."""
    from kccgen.discovery.paths import pattern_template

    assert pattern_template("^[^/]+$") is None
    assert pattern_template("^[^/]+/[^/]+/services/[^/]+$") is None
    assert pattern_template("^projects/[^/]+/topics/[^/]+$") == "projects/{project}/topics/{topic}"


@pytest.mark.parametrize(("plural", "single"), [("messageBuses", "messageBus"), ("keyRings", "keyRing"), ("policies", "policy"), ("aliases", "alias"), ("addresses", "address")])
def test_collection_placeholders_are_singular(plural: str, single: str) -> None:
    """eventarc's messageBuses pattern once gave {messageBuse}, which no identity names."""
    from kccgen.discovery.paths import collection_param

    assert collection_param(plural) == single


def test_kcc_versions_are_served_with_the_same_schema(tmp_path: Path) -> None:
    """``kccVersions`` adds Config Connector's version names to a CRD, the storage version unchanged."""
    from kccgen.generator.emit.crds import crd, without_descriptions

    text = "api: run\nauto: true\nkccVersions:\n  v1beta1: [RunJob]\n"
    specs = load_specs(_specs(tmp_path, {"run.yaml": text}))
    ir = build_ir(specs, Reporter())
    job = next(k for k in ir.kinds if k.kind == "RunJob")
    service = next(k for k in ir.kinds if k.kind == "RunService")
    assert job.served_versions == ("v1alpha1", "v1beta1") and service.served_versions == ("v1alpha1",)
    versions = crd(ir, job)["spec"]["versions"]
    # the version kubectl prefers (beta over alpha) first, with the descriptions
    assert [(v["name"], v["served"], v["storage"]) for v in versions] == [("v1beta1", True, False), ("v1alpha1", True, True)]
    assert versions[1]["schema"] == without_descriptions(versions[0]["schema"]) != versions[0]["schema"]
    assert "description" in versions[0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert len(crd(ir, service)["spec"]["versions"]) == 1
    lines = coverage(specs, ir).auto_lines
    assert lines == coverage(load_specs(_specs(tmp_path / "b", {"run.yaml": "api: run\nauto: true\n"})), ir).auto_lines + 2


@pytest.mark.parametrize(
    ("versions", "error"),
    [
        ("  v1beta1: [RunJobs]\n", r"run\.yaml#/kccVersions/v1beta1/0: RunJobs is not a Kind of run \(did you mean 'RunJob'\?\)"),
        ("  v1alpha1: [RunJob]\n", r"run\.yaml#/kccVersions/v1alpha1/0: RunJob is already served as v1alpha1"),
        ("  beta: [RunJob]\n", r"run\.yaml#/kccVersions"),
    ],
)
def test_kcc_versions_name_kinds_of_their_file(tmp_path: Path, versions: str, error: str) -> None:
    with pytest.raises(SpecError, match=error):
        build_ir(load_specs(_specs(tmp_path, {"run.yaml": "api: run\nauto: true\nkccVersions:\n" + versions})), Reporter())


def test_version_priority_is_kubernetes_order() -> None:
    from kccgen.generator.emit.crds import version_priority

    names = ["v1alpha1", "v1beta1", "v1", "v2beta1", "v1beta2", "v2", "v10alpha1"]
    assert sorted(names, key=version_priority, reverse=True) == ["v2", "v1", "v2beta1", "v1beta2", "v1beta1", "v10alpha1", "v1alpha1"]


def test_a_kind_named_like_another_kinds_list_kind_is_an_error(tmp_path: Path) -> None:
    """TasksTaskList beside TasksTask: the API server never establishes TasksTask's CRD."""
    specs = load_specs(_specs(tmp_path, {"tasks.yaml": "api: tasks\nauto: true\n"}))
    with pytest.raises(SpecError, match=r"Kind TasksTaskList is the listKind of TasksTask"):
        build_ir(specs, Reporter())
