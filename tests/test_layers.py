"""The import contracts of pyproject.toml hold, and lint-imports catches a forbidden import.

`make lint` runs lint-imports over the link tree of tools/devtree.py. Here the
same configuration runs over a copy of the tree in which one runtime module
gains an import of the generator: the run that passed on the real tree must
fail on the copy, naming the contract and the import.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import REPO
from tools.devtree import build

LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    """lint-imports with the project's contracts, run inside ``tree`` (it puts its cwd first on sys.path)."""
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(REPO / "pyproject.toml"), "--no-cache", "--no-logo"],
        cwd=tree, capture_output=True, text=True, check=False, timeout=600,
    )


@pytest.mark.skipif(not LINT_IMPORTS.exists(), reason="import-linter is not installed (make setup installs it)")
def test_a_forbidden_import_breaks_the_runtime_contract(tmp_path: Path) -> None:
    tree = build(tmp_path / "tree")
    ok = lint_imports(tree)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "0 broken" in ok.stdout, ok.stdout
    # The temporary edit: a copy of runtime/ whose adapter module imports the generator.
    runtime = tree / "kccgen" / "runtime"
    runtime.unlink()
    shutil.copytree(REPO / "runtime", runtime, ignore=shutil.ignore_patterns("__pycache__"))
    adapter = runtime / "adapter.py"
    adapter.write_text(adapter.read_text() + "\nfrom kccgen.generator.naming import snake  # noqa: E402\n")
    bad = lint_imports(tree)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "the runtime imports neither the generator" in bad.stdout and "BROKEN" in bad.stdout, bad.stdout
    assert "kccgen.runtime.adapter -> kccgen.generator.naming" in bad.stdout, bad.stdout


def test_the_contract_uses_the_standard_library_only() -> None:
    """Generated adapters import kccgen.contract: it must run wherever they do."""
    tree = ast.parse((REPO / "kccgen" / "contract.py").read_text())
    imported = {
        (node.module or "") if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    roots = {name.split(".")[0] for name in imported}
    assert roots <= set(sys.stdlib_module_names) | {"__future__"}, roots - set(sys.stdlib_module_names)
