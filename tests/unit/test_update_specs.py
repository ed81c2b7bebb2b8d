"""`make update-specs` copies pinned documents and summarises what changed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from kccgen.generator.update_specs import DEFAULT_DOCS, update_specs
from tests.conftest import REPO


def _client_and_specs(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A client's documents folder and a specs folder, both holding the default documents."""
    src, specs = tmp_path / "pkg", tmp_path / "specs"
    dest = specs / "discovery"
    src.mkdir()
    dest.mkdir(parents=True)
    for key in DEFAULT_DOCS:
        shutil.copy(REPO / "specs" / "discovery" / f"{key}.json", src / f"{key}.json")
        shutil.copy(REPO / "specs" / "discovery" / f"{key}.json", dest / f"{key}.json")
    return src, specs, dest


def test_summary_names_revisions_schemas_and_fields(tmp_path: Path) -> None:
    src, specs, dest = _client_and_specs(tmp_path)
    doc = json.loads((src / "pubsub.v1.json").read_text())
    doc["revision"] = "29990101"
    doc["schemas"]["Topic"]["properties"]["brandNewField"] = {"type": "string"}
    del doc["schemas"]["Topic"]["properties"]["kmsKeyName"]
    doc["schemas"]["NewThing"] = {"id": "NewThing", "type": "object", "properties": {"x": {"type": "string"}}}
    (src / "pubsub.v1.json").write_text(json.dumps(doc))

    changes = {c.key: c for c in update_specs(specs, source=src)}
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


def test_newest_ga_version_per_api_and_family() -> None:
    from kccgen.generator.update_specs import newest_ga

    keys = ["run.v1", "run.v2", "run.v2alpha1", "sqladmin.v1beta4", "sqladmin.v1", "admin.directory_v1",
            "admin.reports_v1", "dataflow.v1b3", "vision.v1p1beta1", "x.v1beta1"]
    assert newest_ga(keys) == {
        ("admin", "directory"): "admin.directory_v1",
        ("admin", "reports"): "admin.reports_v1",
        ("dataflow", ""): "dataflow.v1b3",
        ("run", ""): "run.v2",
        ("sqladmin", ""): "sqladmin.v1",
    }


def test_add_an_api_by_name_locks_it_without_a_copy(tmp_path: Path) -> None:
    from kccgen.documents import read_document, read_lock
    from kccgen.generator.update_specs import package_documents_dir

    specs = tmp_path / "specs"
    update_specs(specs, extra=("run",))
    lock = read_lock(specs)
    assert "run.v2" in lock and not lock["run.v2"].vendored
    assert not (specs / "discovery" / "run.v2.json").exists()
    assert lock["run.v2"].source.startswith("google-api-python-client==")
    assert read_document(specs, "run.v2") == (package_documents_dir() / "run.v2.json").read_bytes()
    # the curated defaults are vendored on first pinning
    assert all((specs / "discovery" / f"{k}.json").exists() and lock[k].vendored for k in DEFAULT_DOCS)


def test_an_api_without_a_ga_version_is_refused_by_name(tmp_path: Path) -> None:
    import pytest

    with pytest.raises(ValueError, match="no GA version"):
        update_specs(tmp_path / "specs", extra=("area120tables",))


def test_a_locked_document_with_other_bytes_is_an_error_naming_the_lock(tmp_path: Path) -> None:
    """The installed client moved on (or the lock was edited): generation stops
    and says how to take the new document, instead of silently changing schemas."""
    import pytest

    from kccgen.discovery.errors import SpecError
    from kccgen.generator.spec.loader import load_specs

    specs = tmp_path / "specs"
    shutil.copytree(REPO / "specs", specs)
    lock = json.loads((specs / "discovery.lock.json").read_text())
    lock["documents"]["run.v2"]["sha256"] = "0" * 64
    (specs / "discovery.lock.json").write_text(json.dumps(lock))
    loaded = load_specs(specs)
    assert "run.v2" in loaded.discovery
    with pytest.raises(SpecError, match=r"discovery\.lock\.json.*run\.v2.*kccgen update-specs"):
        loaded.discovery["run.v2"]


def test_the_lock_matches_the_pinned_client() -> None:
    from kccgen.documents import client_documents_dir, read_lock, sha256_of

    lock = read_lock(REPO / "specs")
    assert len(lock) > len(DEFAULT_DOCS)
    for key, entry in lock.items():
        assert sha256_of((client_documents_dir() / f"{key}.json").read_bytes()) == entry.sha256, key


def test_a_document_the_client_no_longer_ships_writes_nothing(tmp_path: Path) -> None:
    """Everything or nothing (issue 28): with one pinned document gone from the
    client, update-specs names it, and the vendored copies and the lock keep
    their bytes, even those of documents read before it."""
    src, specs, _ = _client_and_specs(tmp_path)
    for key in DEFAULT_DOCS:
        doc = json.loads((src / f"{key}.json").read_text())
        doc["revision"] = "29990101"
        (src / f"{key}.json").write_text(json.dumps(doc))
    update_specs(specs, source=src)
    before = {p: p.read_bytes() for p in specs.rglob("*") if p.is_file()}
    gone = sorted(DEFAULT_DOCS)[-1]
    (src / f"{gone}.json").unlink()
    for key in DEFAULT_DOCS:
        if key != gone and (src / f"{key}.json").exists():
            doc = json.loads((src / f"{key}.json").read_text())
            doc["revision"] = "30000101"
            (src / f"{key}.json").write_text(json.dumps(doc))
    try:
        update_specs(specs, source=src)
    except FileNotFoundError as e:
        assert gone in str(e) and "nothing was written" in str(e)
    else:
        raise AssertionError("update_specs accepted a pinned document the client does not ship")
    assert {p: p.read_bytes() for p in specs.rglob("*") if p.is_file()} == before


def test_a_vendored_copy_edited_by_hand_is_named_and_replaced(tmp_path: Path) -> None:
    """The lock and the vendored bytes are checked against each other: a copy that
    no longer matches its lock entry is said to be edited, and the client's
    bytes (with their digest) replace it."""
    src, specs, dest = _client_and_specs(tmp_path)
    update_specs(specs, source=src)  # lock them first
    (dest / "dns.v1.json").write_text((dest / "dns.v1.json").read_text().replace('"revision"', '"revision" ', 1))
    changes = {c.key: c for c in update_specs(specs, source=src)}
    assert changes["dns.v1"].hand_edited and not changes["pubsub.v1"].hand_edited
    assert "specs/discovery/dns.v1.json differed from its lock entry: edited by hand" in "\n".join(changes["dns.v1"].lines())
    assert (dest / "dns.v1.json").read_bytes() == (src / "dns.v1.json").read_bytes()
