"""Config Connector's evidence in the IR: its reference fields (nested too) and its
name and default for the location field.

Hand-made models, targets and evidence; nothing generated is read.
"""

from __future__ import annotations

from pathlib import Path

from kccgen.generator.ir.identity import kcc_location
from kccgen.generator.ir.model import (
    FieldIR,
    Identity,
    IdentityParam,
    ModelSet,
    ObjectIR,
    TargetKind,
    TypeIR,
)
from kccgen.generator.ir.references import (
    TargetIndex,
    infer_references,
    kcc_ref_index,
    kcc_ref_name,
)
from kccgen.generator.spec.asset_names import AssetNameTable
from kccgen.generator.spec.claims import KindEvidence
from kccgen.generator.spec.kinds import KindConfig

REPO = Path(__file__).resolve().parents[2]

TARGETS = (
    TargetKind(
        "ComputeHealthCheck",
        "projects/{project}/global/healthChecks/{healthCheck}",
        "compute.googleapis.com",
        True,
        True,
        "m.hc",
    ),
    TargetKind(
        "ComputeBackendService",
        "projects/{project}/global/backendServices/{backendService}",
        "compute.googleapis.com",
        True,
        True,
        "m.bs",
    ),
    TargetKind(
        "KMSCryptoKey",
        "projects/{project}/locations/{location}/keyRings/{keyRing}/cryptoKeys/{cryptoKey}",
        "cloudkms.googleapis.com",
        True,
        True,
        "m.key",
    ),
    TargetKind(
        "BigQueryTable",
        "projects/{project}/datasets/{dataset}/tables/{table}",
        "bigquery.googleapis.com",
        True,
        True,
        "m.table",
    ),
    TargetKind(
        "PubSubTopic",
        "projects/{project}/topics/{topic}",
        "pubsub.googleapis.com",
        True,
        True,
        "m.topic",
    ),
)


def _f(name: str, t: TypeIR, description: str = "") -> FieldIR:
    return FieldIR(name, t, description, (), f"x.v1#/schemas/{name}")


def _models() -> ModelSet:
    s = TypeIR("string")
    policy = ObjectIR(
        "Policy",
        "",
        (_f("healthCheck", s), _f("initialDelaySec", TypeIR("integer"))),
        "x.v1#/schemas/Policy",
    )
    enc = ObjectIR("Enc", "", (_f("kmsKeyName", s, "The KMS key."),), "x.v1#/schemas/Enc")
    table = ObjectIR(
        "TableRef",
        "",
        (_f("projectId", s), _f("datasetId", s), _f("tableId", s)),
        "x.v1#/schemas/TableRef",
    )
    route = ObjectIR(
        "Dest", "", (_f("service", s), _f("weight", TypeIR("integer"))), "x.v1#/schemas/Dest"
    )
    other = ObjectIR(
        "Other",
        "",
        # the description names a topic, KCC a health check: the description's Kind stays
        (_f("checker", s, "Format: projects/p/topics/t"),),
        "x.v1#/schemas/Other",
    )
    root = ObjectIR(
        "R",
        "",
        (
            _f("policies", TypeIR("array", item=TypeIR("object", ref="Policy"))),
            _f("encryption", TypeIR("object", ref="Enc")),
            _f("table", TypeIR("object", ref="TableRef")),
            _f("destinations", TypeIR("array", item=TypeIR("object", ref="Dest"))),
            _f("other", TypeIR("object", ref="Other")),
        ),
        "x.v1#/schemas/R",
    )
    return ModelSet((root, policy, enc, table, route, other), ())


EVIDENCE = KindEvidence(
    group="x.cnrm.cloud.google.com",
    plural="things",
    versions=("v1beta1",),
    ref_paths={  # type: ignore[arg-type]  # as read from evidence.yaml: a mapping
        "spec.policies[].healthCheckRef": "ComputeHealthCheck",
        "spec.encryption.kmsKeyNameRef": "KMSCryptoKey",
        "spec.table.tableRef": "BigQueryTable",
        "spec.table.datasetRef": "BigQueryDataset",  # not one of our targets
        "spec.destinations[].backendServiceRef": "ComputeBackendService",
        "spec.other.checkerRef": "ComputeHealthCheck",
        "spec.projectRef": "Project",
    },
)


def _infer(kcc: KindEvidence | None) -> dict[str, tuple[str, str, str | None, str]]:
    index = TargetIndex(TARGETS, AssetNameTable(()))
    inf = infer_references(
        "XThing",
        _models(),
        "R",
        KindConfig(kind="XThing", resource="x"),
        index,
        {},
        frozenset(),
        "x.googleapis.com",
        kcc,
    )
    return {r.api_path: (r.krm_path, r.target, r.api_format, r.source) for r in inf.references}


def test_config_connectors_nested_references_decide_with_its_names() -> None:
    refs = _infer(EVIDENCE)
    assert refs["policies[].healthCheck"][:3] == (
        "policies[].healthCheckRef",
        "ComputeHealthCheck",
        None,
    )
    assert refs["policies[].healthCheck"][3] == "Config Connector's spec.policies[].healthCheckRef"
    # KCC keeps "Name" where our own rule would write kmsKeyRef
    assert refs["encryption.kmsKeyName"][:2] == ("encryption.kmsKeyNameRef", "KMSCryptoKey")
    # a bare ID: the API takes the table's own ID out of the reference's name
    assert refs["table.tableId"][:3] == ("table.tableRef", "BigQueryTable", "{table}")
    # KCC names the target in the field (service -> backendServiceRef)
    assert refs["destinations[].service"][:2] == (
        "destinations[].backendServiceRef",
        "ComputeBackendService",
    )
    # a target we cannot reference leaves the field as it was
    assert "table.datasetId" not in refs
    # the description's Kind is kept where it is not KCC's; the KRM name is KCC's
    assert refs["other.checker"][:2] == ("other.checkerRef", "PubSubTopic")


def test_without_config_connectors_evidence_the_fields_stay_strings() -> None:
    refs = _infer(None)
    assert set(refs) == {"other.checker"}


def test_a_name_is_found_once_and_a_sibling_keeps_its_own() -> None:
    index = kcc_ref_index(
        KindEvidence(
            group="g",
            plural="p",
            versions=("v1",),
            ref_paths={
                "spec.networkRef": "ComputeNetwork",
                "spec.peerNetworkRef": "ComputeNetwork",
            },
        )
    )  # type: ignore[arg-type]
    assert kcc_ref_name(index, "", "network", False, frozenset({"network", "peerNetwork"})) == (
        "networkRef",
        "ComputeNetwork",
    )
    assert kcc_ref_name(index, "", "peerNetwork", False, frozenset({"network", "peerNetwork"})) == (
        "peerNetworkRef",
        "ComputeNetwork",
    )
    # "name" is too generic to be found inside another field's name
    assert kcc_ref_name(index, "", "name", False, frozenset({"name"})) is None


def _identity(template: str, *params: IdentityParam) -> Identity:
    return Identity(
        "x/Thing", None, template, "rest", template, "v1/{+name}", params, "user", False
    )


LOCATED = _identity(
    "projects/{project}/locations/{location}/things/{thing}",
    IdentityParam("project", "parent", "projectRef", "Project"),
    IdentityParam("location", "location", "location"),
    IdentityParam("thing", "id", "resourceID"),
)


def _evidence(
    spec: tuple[str, ...], templates: tuple[str, ...], required: tuple[str, ...] = ("spec",)
) -> KindEvidence:
    return KindEvidence.model_validate(
        {
            "group": "g",
            "plural": "p",
            "versions": ["v1"],
            "spec": spec,
            "required": required,
            "names": [{"template": t, "from": "servicemapping"} for t in templates],
        }
    )


def test_the_location_field_takes_config_connectors_region() -> None:
    ev = _evidence(
        ("projectRef", "region", "resourceID"),
        ("projects/{project}/locations/{region}/things/{thing}",),
        ("spec", "spec.region"),
    )
    got = {p.name: (p.krm_field, p.default) for p in kcc_location(LOCATED, ev).params}
    assert got["location"] == ("region", None)
    # KCC has location too: ours stays
    ev = _evidence(
        ("location", "projectRef", "region"),
        ("projects/{project}/locations/{location}/things/{thing}",),
    )
    assert {p.name: p.krm_field for p in kcc_location(LOCATED, ev).params}["location"] == "location"


def test_a_location_config_connector_fixes_at_global_defaults_to_it() -> None:
    ev = _evidence(
        ("displayName", "projectRef", "resourceID"),
        (
            "projects/{project}/locations/global/things/{thing}",
            "projects/{}/locations/{}/things/{}",
        ),
    )
    got = {p.name: (p.krm_field, p.default) for p in kcc_location(LOCATED, ev).params}
    assert got["location"] == ("location", "global")
    # required by KCC, or another literal location: no default
    ev = _evidence(
        ("location",),
        ("projects/{project}/locations/global/things/{thing}",),
        ("spec", "spec.location"),
    )
    assert {p.name: p.default for p in kcc_location(LOCATED, ev).params}["location"] is None
    ev = _evidence(
        ("location",),
        (
            "projects/{project}/locations/global/things/{thing}",
            "projects/{project}/locations/us-east1/things/{thing}",
        ),
    )
    assert {p.name: p.default for p in kcc_location(LOCATED, ev).params}["location"] is None
    assert kcc_location(LOCATED, None) is LOCATED


def test_a_class_reached_at_several_paths_takes_config_connectors_name_from_any() -> None:
    s = TypeIR("string")
    table = ObjectIR("T", "", (_f("tableId", s),), "x.v1#/schemas/T")
    root = ObjectIR(
        "R",
        "",
        (_f("a", TypeIR("object", ref="T")), _f("b", TypeIR("object", ref="T"))),
        "x.v1#/schemas/R",
    )
    ev = KindEvidence(
        group="g", plural="p", versions=("v1",), ref_paths={"spec.b.tableRef": "BigQueryTable"}
    )  # type: ignore[arg-type]
    index = TargetIndex(TARGETS, AssetNameTable(()))
    inf = infer_references(
        "XThing",
        ModelSet((root, table), ()),
        "R",
        KindConfig(kind="XThing", resource="x"),
        index,
        {},
        frozenset(),
        "x.googleapis.com",
        ev,
    )
    assert {(r.krm_path, r.target, r.api_format) for r in inf.references} == {
        ("a.tableRef", "BigQueryTable", "{table}"),
        ("b.tableRef", "BigQueryTable", "{table}"),
    }
