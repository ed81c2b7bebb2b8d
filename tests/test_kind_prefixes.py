"""Names that survive rebrands (issue 28, point 3): an auto kind file's Kind
prefix is recorded once (``kindPrefix``) and kept; a changed Discovery title
or canonical name never renames its Kinds, and an auto file without a
recorded prefix is refused by generate and check, naming the value."""

from __future__ import annotations

import json
from pathlib import Path

from kccgen import data_dir
from kccgen.documents import read_document
from kccgen.generator import prefixes
from kccgen.generator.diagnostics import Reporter
from kccgen.generator.ir.build import build_ir, doc_keys
from kccgen.generator.spec.loader import load_specs
from tests.support.specs import curated_specs


def test_every_committed_auto_file_records_its_prefix() -> None:
    assert prefixes.unrecorded(load_specs(data_dir("specs"))) == {}


def _rebranded(tmp_path: Path, kind_file: str) -> Path:
    """Curated specs plus a run auto file, with run's document retitled."""
    specs = curated_specs(tmp_path)
    (specs / "kinds" / "run.yaml").write_text(kind_file, encoding="utf-8")
    loaded = load_specs(specs)
    file, kf = next((f, k) for f, k in loaded.kinds if k.api == "run")
    key = doc_keys(loaded, file, kf)[0]
    doc = json.loads(read_document(specs, key))
    doc["title"], doc["canonicalName"] = "RUN API", "RUN"  # would name the Kinds RUN*
    (specs / "discovery" / f"{key}.json").write_text(json.dumps(doc), encoding="utf-8")
    return specs


def test_a_retitled_api_keeps_its_kind_names(tmp_path: Path) -> None:
    specs = load_specs(_rebranded(tmp_path, "api: run\nauto: true\nkindPrefix: Run\n"))
    names = {k.kind for k in build_ir(specs, Reporter()).kinds if k.group == "run.cnrm.cloud.google.com"}
    assert {"RunService", "RunJob"} <= names and not any(n.startswith("RUN") for n in names)


def test_an_unrecorded_prefix_is_refused_naming_the_value_and_recorded_by_the_tool(tmp_path: Path) -> None:
    root = _rebranded(tmp_path, "api: run\nauto: true\n")
    (msg,) = prefixes.problems(load_specs(root))
    assert msg.startswith("specs/kinds/run.yaml#/kindPrefix: not recorded") and "`kindPrefix: RUN`" in msg, msg
    assert prefixes.record(load_specs(root), root) == [str(root / "kinds" / "run.yaml")]
    assert (root / "kinds" / "run.yaml").read_text(encoding="utf-8").splitlines() == [
        "api: run",
        "auto: true",
        "kindPrefix: RUN  # recorded once: a later Discovery title never renames the Kinds",
    ]
    assert prefixes.problems(load_specs(root)) == []
