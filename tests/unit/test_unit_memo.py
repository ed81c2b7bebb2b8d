"""The build memo: a unit whose build inputs are those of the last run is neither
built nor rendered again, and the tree is the same as a run without any cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kccgen.documents import sha256_of
from kccgen.generator.cache import UnitMemo
from kccgen.generator.cli import main
from kccgen.generator.diagnostics import Reporter
from kccgen.generator.ir.build import build_ir
from kccgen.generator.spec.loader import load_specs
from kccgen.generator.stamp import code_digest
from tests.support.specs import curated_specs


def _tree(root: Path) -> dict[str, bytes]:
    base = root / "generated"
    return {p.relative_to(base).as_posix(): p.read_bytes() for p in sorted(base.rglob("*")) if p.is_file()}


def _edit_description(specs: Path, key: str) -> None:
    """A description edit in one vendored document, lock kept true (as make bench does)."""
    path = specs / "discovery" / f"{key}.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    schema = sorted(doc["schemas"])[0]
    doc["schemas"][schema]["description"] = doc["schemas"][schema].get("description", "") + " (edited)"
    data = json.dumps(doc, indent=2, sort_keys=True).encode()
    path.write_bytes(data)
    lock_path = specs / "discovery.lock.json"
    lock = json.loads(lock_path.read_text(encoding="utf-8"))
    lock["documents"][key]["sha256"] = sha256_of(data)
    lock_path.write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The curated slice generated once, with its caches: (root, specs)."""
    root = tmp_path_factory.mktemp("memo")
    specs = curated_specs(root)
    assert main(["--root", str(root), "--specs", str(specs), "generate"]) == 0
    return root, specs


def test_a_second_build_builds_nothing(generated: tuple[Path, Path]) -> None:
    root, specs = generated
    memo = UnitMemo(root, code_digest())
    ir = build_ir(load_specs(specs), Reporter(), memo=memo)
    assert ir.kinds == () and ir.api_modules == ()
    full = build_ir(load_specs(specs), Reporter())
    assert ir.kind_names == {k.kind for k in full.kinds}
    assert sorted((u.doc_key, u.package) for u in ir.cached) == sorted((m.doc_key, m.package) for m in full.api_modules)
    # another generator is another key: everything is built again
    assert build_ir(load_specs(specs), Reporter(), memo=UnitMemo(root, "another generator")).cached == ()


def test_a_one_document_change_builds_one_unit_and_matches_a_run_without_cache(generated: tuple[Path, Path], tmp_path: Path) -> None:
    root, specs = generated
    key = "pubsub.v1"
    _edit_description(specs, key)
    ir = build_ir(load_specs(specs), Reporter(), memo=UnitMemo(root, code_digest()))
    assert {k.api.doc_key for k in ir.kinds} == {key}
    assert key not in {u.doc_key for u in ir.cached}
    assert main(["--root", str(root), "--specs", str(specs), "generate"]) == 0
    cold = tmp_path / "cold"
    assert main(["--root", str(cold), "--specs", str(specs), "generate", "--force", "--no-cache"]) == 0
    assert _tree(root) == _tree(cold)
    assert main(["--root", str(root), "--specs", str(specs), "check", "--full"]) == 0


def test_a_corrupt_memo_entry_is_a_miss(generated: tuple[Path, Path]) -> None:
    root, specs = generated
    build = root / ".kccgen-cache" / "build"
    victim = sorted(build.glob("*.json"))[0]
    victim.write_text("{not json", encoding="utf-8")
    ir = build_ir(load_specs(specs), Reporter(), memo=UnitMemo(root, code_digest()))
    assert victim.stem not in {u.name for u in ir.cached}
    assert len(ir.kinds) >= 1
