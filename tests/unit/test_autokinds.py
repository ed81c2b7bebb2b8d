"""Kind files for new APIs: one per API (per family), never one per version."""

from __future__ import annotations

import json
from pathlib import Path

from kccgen.generator.autokinds import write_auto_kind_files


def test_one_file_per_api_and_family_only_for_the_apis_asked(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    (specs / "kinds").mkdir(parents=True)
    keys = ["agentidentity.v1", "agentidentity.v1beta", "admin.directory_v1", "admin.reports_v1", "old.v1", "kept.v2"]
    (specs / "discovery.lock.json").write_text(json.dumps({"documents": {k: {} for k in keys}}), encoding="utf-8")
    (specs / "kinds" / "kept.yaml").write_text("api: kept\n", encoding="utf-8")
    (specs / "kinds" / "admin.directory_v1.yaml").write_text("api: admin\nversion: directory_v1\n", encoding="utf-8")
    asked = {("agentidentity", ""), ("admin", "directory"), ("admin", "reports"), ("kept", "")}
    written = write_auto_kind_files(specs, frozenset(asked))
    # a new family of an API whose other family has a file gets its own (merchantapi.loyaltycustomers_v1)
    assert sorted(p.name for p in written) == ["admin.reports_v1.yaml", "agentidentity.yaml"]
    assert (specs / "kinds" / "agentidentity.yaml").read_text() == "api: agentidentity\nauto: true\n"
    assert (specs / "kinds" / "admin.reports_v1.yaml").read_text() == "api: admin\nauto: true\nversion: reports_v1\n"
