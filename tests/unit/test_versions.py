"""Every document of an API, one Kind per resource: a resource is served from
the newest GA document that has it, else from a beta one; the Kind keeps its
name when a later spec moves it, and ``kccgen lag`` reports the move."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

from kccgen.documents import api_documents, preferred, served_stage
from kccgen.generator.coverage import coverage
from kccgen.generator.diagnostics import Reporter
from kccgen.generator.ir.build import build_ir
from kccgen.generator.lag import compare, render_text
from kccgen.generator.spec.loader import load_specs

MINI = Path(__file__).resolve().parent.parent / "golden" / "mini" / "specs"


def test_documents_are_read_newest_ga_first_then_betas() -> None:
    keys = ["run.v1", "run.v2", "run.v1alpha1", "run.v1beta1", "run.v2beta", "compute.preview"]
    assert preferred(keys) == ["run.v2", "run.v1", "run.v2beta", "run.v1beta1"]
    assert api_documents(["admin.directory_v1", "admin.reports_v1", "admin.directory_v1beta1"], "admin", "directory") == [
        "admin.directory_v1",
        "admin.directory_v1beta1",
    ]
    assert [served_stage(k) for k in ("dns.v1", "dns.v1beta2", "compute.alpha", "dataflow.v1b3")] == ["ga", "beta", "", "ga"]


def _doc(version: str, resources: tuple[str, ...]) -> dict[str, Any]:
    """The golden mini document as ``version``, holding ``resources`` (copies of
    its ``widgets`` collection under other names)."""
    base = json.loads((MINI / "discovery" / "mini.v1.json").read_text())
    widgets = base["resources"]["projects"]["resources"]["widgets"]
    doc = copy.deepcopy(base)
    doc["version"] = version
    doc["id"] = f"mini:{version}"
    coll: dict[str, Any] = {}
    for name in resources:
        text = json.dumps(widgets).replace("widgets", name).replace("widgetId", f"{name[:-1]}Id").replace('"v1/', f'"{version}/')
        coll[name] = json.loads(text)
    doc["resources"]["projects"]["resources"] = coll
    return doc


def _specs(root: Path, docs: dict[str, tuple[str, ...]]) -> Path:
    specs = root / "specs"
    shutil.copytree(MINI, specs)
    (specs / "discovery" / "mini.v1.json").unlink()
    for version, resources in docs.items():
        (specs / "discovery" / f"mini.{version}.json").write_text(json.dumps(_doc(version, resources)))
    # no listed Kinds: every resource is derived
    (specs / "kinds" / "mini.yaml").write_text("api: mini\nauto: true\n")
    return specs


def test_a_resource_is_read_from_the_newest_ga_document_that_has_it(tmp_path: Path) -> None:
    specs = load_specs(_specs(tmp_path, {"v1": ("widgets",), "v1beta1": ("widgets", "gadgets"), "v2beta": ("widgets",)}))
    ir = build_ir(specs, Reporter())
    served = {k.kind: k.api.doc_key for k in ir.kinds}
    assert served == {"MiniWidget": "mini.v1", "MiniGadget": "mini.v1beta1"}
    rows = {r.resource: r for r in coverage(specs, ir).rows if r.kind}
    assert rows["projects.widgets"].api == "mini.v1" and rows["projects.widgets"].also == ("mini.v2beta", "mini.v1beta1")
    assert rows["projects.gadgets"].stage == "beta" and rows["projects.widgets"].stage == "ga"


def test_a_kind_moved_to_a_ga_document_keeps_its_name_and_lag_reports_the_move(tmp_path: Path) -> None:
    old = load_specs(_specs(tmp_path / "old", {"v1": ("widgets",), "v1beta1": ("gadgets",)}))
    new = load_specs(_specs(tmp_path / "new", {"v1": ("widgets", "gadgets"), "v1beta1": ("gadgets",)}))
    report = compare(old, new, "old", "new")
    gadget = next(k for k in report.kinds if k.kind == "MiniGadget")
    assert (gadget.old_doc, gadget.new_doc) == ("mini.v1beta1", "mini.v1")
    assert not gadget.added and not gadget.removed  # the same spec paths
    text = render_text(report)
    assert "MiniGadget: mini.v1beta1 -> mini.v1" in text
    assert "served from mini.v1, was mini.v1beta1" in text
