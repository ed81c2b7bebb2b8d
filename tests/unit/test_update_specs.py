"""`make update-specs` copies pinned documents and summarises what changed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from kccgen.generator.update_specs import DEFAULT_DOCS, update_specs
from tests.conftest import REPO


def test_summary_names_revisions_schemas_and_fields(tmp_path: Path) -> None:
    src = tmp_path / "pkg"
    dest = tmp_path / "specs"
    src.mkdir()
    dest.mkdir()
    for key in DEFAULT_DOCS:
        shutil.copy(REPO / "specs" / "discovery" / f"{key}.json", src / f"{key}.json")
        shutil.copy(REPO / "specs" / "discovery" / f"{key}.json", dest / f"{key}.json")
    doc = json.loads((src / "pubsub.v1.json").read_text())
    doc["revision"] = "29990101"
    doc["schemas"]["Topic"]["properties"]["brandNewField"] = {"type": "string"}
    del doc["schemas"]["Topic"]["properties"]["kmsKeyName"]
    doc["schemas"]["NewThing"] = {"id": "NewThing", "type": "object", "properties": {"x": {"type": "string"}}}
    (src / "pubsub.v1.json").write_text(json.dumps(doc))

    changes = {c.key: c for c in update_specs(dest, source=src)}
    ps = changes["pubsub.v1"]
    text = "\n".join(ps.lines())
    assert "revision" in text and "29990101" in text
    assert ps.schemas_added == ["NewThing"]
    assert "Topic.brandNewField" in ps.fields_added and "NewThing.x" in ps.fields_added
    assert ps.fields_removed == ["Topic.kmsKeyName"]
    assert "unchanged" in "\n".join(changes["storage.v1"].lines())
    assert json.loads((dest / "pubsub.v1.json").read_text())["revision"] == "29990101"


def test_pinned_documents_match_the_pinned_client() -> None:
    """specs/discovery is exactly what google-api-python-client ships."""
    from kccgen.generator.update_specs import package_documents_dir

    for key in DEFAULT_DOCS:
        assert (REPO / "specs" / "discovery" / f"{key}.json").read_bytes() == (package_documents_dir() / f"{key}.json").read_bytes(), key
