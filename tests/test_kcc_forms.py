"""Config Connector's other forms of spec fields (kind config ``forms:``).

BigQueryTable's ``schema`` as Terraform's JSON string of the fields, a secret's
``replication.automatic: true`` and an app profile's ``multiClusterRoutingUseAny:
true`` are accepted beside the API's objects and sent as the API's objects: the
same requests as the API's form, nothing written on a second apply, a malformed
JSON string refused with the field's path, and a form that cannot stand for its
field refused at generation with the kind config's path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kccgen.discovery.errors import SpecError
from kccgen.generator.ir.forms import build_forms
from kccgen.generator.ir.model import FieldIR, ModelSet, ObjectIR, TypeIR
from kccgen.generator.spec.kinds import FormConfig
from kccgen.mockgcp.engine import MockGCP
from kccgen.mockgcp.server import MockServer
from kccgen.runtime.adapter import adapter_for
from kccgen.runtime.admission import admission_errors
from kccgen.runtime.aliases import AliasConflict, canonical_spec
from kccgen.runtime.registry import types_modules
from tests.conftest import REPO
from tests.test_kcc_aliases import PROJECT, _kccctl

WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
FIELDS = [{"name": "id", "type": "STRING", "mode": "REQUIRED"}, {"name": "tags", "type": "RECORD", "mode": "REPEATED", "fields": [{"name": "k", "type": "STRING"}]}]
DATASET = {"apiVersion": "bigquery.cnrm.cloud.google.com/v1beta1", "kind": "BigQueryDataset", "metadata": {"name": "formsds"}, "spec": {"location": "US"}}


def _table(schema: Any) -> dict[str, Any]:
    return {"apiVersion": "bigquery.cnrm.cloud.google.com/v1beta1", "kind": "BigQueryTable", "metadata": {"name": "formstable"},
            "spec": {"datasetRef": {"name": "formsds"}, "schema": schema}}


def _apply(tmp_path: Path, name: str, objs: list[dict[str, Any]], times: int = 2) -> list[list[tuple[str, str, Any]]]:
    manifest = tmp_path / f"{name}.yaml"
    manifest.write_text(yaml.safe_dump_all(objs), encoding="utf-8")
    out = []
    with MockServer(MockGCP(lro_polls=1)) as s:
        for _ in range(times):
            s.clear_log()
            r = _kccctl("apply", "-f", str(manifest), "--state", str(tmp_path / f"{name}-state"), "--endpoint", s.base_url, "--project", PROJECT, "--host-paths")
            assert r.returncode == 0, r.stdout + r.stderr
            out.append([(e.method, e.url.split("://", 1)[-1].split("/", 1)[-1], e.request_json) for e in s.log if e.method in WRITES])
    return out


def test_a_json_string_schema_sends_the_api_object(tmp_path: Path) -> None:
    as_string = _apply(tmp_path, "string", [DATASET, _table(json.dumps(FIELDS, indent=2))])
    as_object = _apply(tmp_path, "object", [DATASET, _table({"fields": FIELDS})], times=1)
    assert as_string[0] == as_object[0]
    table = next(body for method, url, body in as_string[0] if method == "POST" and "/tables?" in url)
    assert table["schema"] == {"fields": FIELDS}
    assert as_string[1] == []  # the second apply only reads: the JSON and the live schema agree


def test_a_malformed_json_string_names_the_field(tmp_path: Path) -> None:
    with pytest.raises(AliasConflict, match=r"spec\.schema: not JSON \(Expecting"):
        canonical_spec(adapter_for("BigQueryTable"), {"schema": "[{'name': 'id'}]"})
    manifest = tmp_path / "bad.yaml"
    manifest.write_text(yaml.safe_dump_all([DATASET, _table("[{oops")]), encoding="utf-8")
    with MockServer(MockGCP(lro_polls=1)) as s:
        r = _kccctl("apply", "-f", str(manifest), "--state", str(tmp_path / "bad-state"), "--endpoint", s.base_url, "--project", PROJECT, "--host-paths")
        assert r.returncode != 0
        assert "spec.schema: not JSON" in r.stdout + r.stderr
        assert not any(e.method == "POST" and "/tables" in e.url for e in s.log)  # nothing sent for it


def test_true_stands_for_the_empty_message(tmp_path: Path) -> None:
    secret = {"apiVersion": "secretmanager.cnrm.cloud.google.com/v1beta1", "kind": "SecretManagerSecret", "metadata": {"name": "formssecret"},
              "spec": {"replication": {"automatic": True}}}
    writes = _apply(tmp_path, "secret", [secret])
    body = next(b for m, _, b in writes[0] if m == "POST")
    assert body["replication"] == {"automatic": {}}
    assert writes[1] == []
    a = adapter_for("SecretManagerSecret")
    assert canonical_spec(a, {"replication": {"automatic": False}}) == {"replication": {}}
    assert canonical_spec(a, {"replication": {"automatic": {}}}) == {"replication": {"automatic": {}}}  # the API's form is unchanged


def test_an_alias_fills_the_object_true_stands_for() -> None:
    out = canonical_spec(adapter_for("BigtableAppProfile"), {"multiClusterRoutingUseAny": True, "multiClusterRoutingClusterIds": ["c1", "c2"]})
    assert out == {"multiClusterRoutingUseAny": {"clusterIds": ["c1", "c2"]}}
    # Config Connector's fixture: automatic: true beside auto's customer-managed key
    cmek = {"customerManagedEncryption": {"kmsKeyRef": {"name": "k"}}}
    secret = {"apiVersion": "secretmanager.cnrm.cloud.google.com/v1beta1", "kind": "SecretManagerSecret", "metadata": {"name": "s"},
              "spec": {"replication": {"automatic": True, "auto": cmek}}}
    assert canonical_spec(adapter_for("SecretManagerSecret"), secret["spec"]) == {"replication": {"automatic": cmek}}
    assert admission_errors(secret) == []
    both = {**secret, "spec": {"replication": {"automatic": {}, "auto": cmek}}}  # the API's object and the alias: which?
    # a field of two forms is a node of any value, which CEL cannot read (the API server refuses
    # such a rule): the CRD has none for it, and the runtime refuses both at once
    assert admission_errors(both) == []
    with pytest.raises(AliasConflict, match="set one of the two"):
        canonical_spec(adapter_for("SecretManagerSecret"), both["spec"])


def test_the_crd_and_the_model_take_both_forms() -> None:
    crd = yaml.load(next((REPO / "generated" / "crds").glob("bigquerytables.*.yaml")).read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    node = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["schema"]
    assert node["x-kubernetes-preserve-unknown-fields"] is True and "type" not in node
    model = types_modules()["BigQueryTable"].BigQueryTable
    for schema in (json.dumps(FIELDS), {"fields": FIELDS}):
        assert model.model_validate(_table(schema)).spec.schema_ is not None
    with pytest.raises(ValueError):
        model.model_validate(_table(7))


def _models() -> tuple[ObjectIR, ModelSet]:
    inner = ObjectIR("Inner", "", (FieldIR("name", TypeIR("string"), "", (), "s"),), "s")
    spec = ObjectIR("KSpec", "", (FieldIR("inner", TypeIR("object", ref="Inner"), "", (), "s"), FieldIR("count", TypeIR("integer"), "", (), "s")), "s")
    return spec, ModelSet((spec, inner), ())


@pytest.mark.parametrize(
    ("cfg", "where", "message"),
    [
        ({"field": "count", "form": "json", "reason": "r"}, "/forms/0/form", "a JSON string stands for an object or a list; count is a integer"),
        ({"field": "count", "form": "true", "reason": "r"}, "/forms/0/form", "true stands for the message with no field set"),
        ({"field": "inner.nope", "form": "true", "reason": "r"}, "/forms/0/field", "Inner has no field 'nope'"),
        ({"field": "inner", "form": "json", "listField": "nope", "reason": "r"}, "/forms/0/listField", "'nope' is no list field"),
    ],
)
def test_a_form_that_cannot_stand_for_its_field_is_refused(cfg: dict[str, Any], where: str, message: str) -> None:
    spec, models = _models()
    with pytest.raises(SpecError, match=message) as e:
        build_forms("K", "specs/kinds/k.yaml", ("kinds", 0), (FormConfig.model_validate(cfg),), spec, models)
    assert e.value.path.endswith(where)


def test_a_nested_form_copies_the_classes_on_its_way() -> None:
    spec, models = _models()
    out = build_forms("K", "f", ("kinds", 0), (FormConfig.model_validate({"field": "inner", "form": "json", "reason": "r"}),), spec, models)
    assert next(f for f in out.spec.fields if f.name == "inner").other_form == "json"
