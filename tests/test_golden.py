"""Golden test: a small hand-written Discovery document through the whole pipeline.

The fixture covers int64, durations, timestamps, bytes, inline enums and
objects, maps of scalars and of objects, ``any``, a recursive schema and
nested output-only fields. Set KCCGEN_UPDATE_GOLDEN=1 to rewrite the
expected tree after an intended change, then review the diff.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

GOLDEN = Path(__file__).resolve().parent / "golden" / "mini"


def _tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


@pytest.fixture(scope="module")
def mini_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mini")
    r = subprocess.run(
        [sys.executable, "-m", "kccgen.generator.cli", "--root", str(root), "--specs", str(GOLDEN / "specs"), "generate", "--force"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    return root


def _matches(got: dict[str, str], expected_dir: Path) -> None:
    """``got`` equals the tree in ``expected_dir``; KCCGEN_UPDATE_GOLDEN=1 rewrites it first."""
    if os.environ.get("KCCGEN_UPDATE_GOLDEN"):
        shutil.rmtree(expected_dir, ignore_errors=True)
        for rel, text in got.items():
            (expected_dir / rel).parent.mkdir(parents=True, exist_ok=True)
            (expected_dir / rel).write_text(text)
    assert got and got == _tree(expected_dir)


def test_mini_api_matches_golden(mini_root: Path) -> None:
    got = _tree(mini_root / "generated")
    got.pop(".kccgen-stamp")  # digests the generator source: changes with every edit
    _matches(got, GOLDEN / "expected")


def test_mini_surface_record_matches_golden(mini_root: Path) -> None:
    """The public-surface record generate writes beside generated/ (generator/surface.py)."""
    _matches(_tree(mini_root / "surface"), GOLDEN / "expected_surface")


def test_mini_models_behave(mini_root: Path) -> None:
    """The golden module is importable and its types do what the fixture says."""
    code = """
import sys
import kccgen.generated
# The tree generated under ROOT stands in for the installed kccgen.generated.
kccgen.generated.__path__.insert(0, sys.argv[1] + "/generated")
from kccgen.generated.mini.v1beta1 import miniwidget_types as t, mini_v1_api as api
spec = t.MiniWidgetSpec.model_validate({"projectRef": {"external": "projects/p"}, "sizeBytes": "12",
    "tree": {"value": "a", "children": [{"value": "b", "children": []}]},
    "parts": {"x": {"count": 1}}, "payload": {"any": [1, "x"]}, "config": {"mode": "FAST", "weight": 0.5}})
assert spec.tree.children[0].value == "b"
assert not hasattr(t, "PartObservedState") or "uid" in t.PartObservedState.model_fields
assert t.MiniWidgetSpec.model_validate({"projectRef": {"external": "projects/p"}, "blob": {"value": "AAE="}}).blob.value == "AAE="
for bad in ({"state": "READY"}, {"createTime": "2020-01-01T00:00:00Z"}, {"sizeBytes": "twelve"}, {"config": {"etag": "x"}},
            {"blob": "AAE="}, {"blob": {}}):  # blob: a kind config's sensitive field, {value | valueFrom}
    try:
        t.MiniWidgetSpec.model_validate({"projectRef": {"external": "projects/p"}, **bad})
    except Exception:
        pass
    else:
        raise SystemExit(f"accepted {bad}")
obs = t.MiniWidgetObservedState.model_validate({"state": "READY", "createTime": "2020-01-01T00:00:00.123456789Z",
    "config": {"etag": "e"}, "parts": {"x": {"uid": "u"}}})
assert obs.config.etag == "e"
w = {"name": "projects/p/widgets/w", "state": 1, "sizeBytes": "5", "blob": "AAE=", "tree": {"children": [{"children": []}]}}
assert api.Widget.model_validate(w).model_dump(mode="json", by_alias=True, exclude_unset=True) == w
print("ok")
"""
    r = subprocess.run([sys.executable, "-c", code, str(mini_root)], cwd=mini_root, capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr + r.stdout
    assert r.stdout.strip() == "ok"
