"""Build ``.venv/devtree/kccgen``: the installed package layout as links to the repository folders.

Python imports the checkout through setuptools' editable finder, which maps
``kccgen.generator`` to ``generator/`` and so on. Static tools (mypy,
import-linter) do not run import hooks; they read this tree instead, where
every folder of ``[tool.kccgen.package-dirs]`` is a directory link, so files
added later (a regeneration) are seen without rebuilding it.

Usage: ``python -m tools.devtree [DEST]`` (default ``.venv/devtree``); prints DEST.
"""

from __future__ import annotations

import os
import shutil
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def package_dirs(repo: Path = REPO) -> dict[str, str]:
    raw = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))
    dirs: dict[str, str] = raw["tool"]["kccgen"]["package-dirs"]
    return dirs


def build(dest: Path, repo: Path = REPO) -> Path:
    """(Re)create ``dest/kccgen`` and return ``dest``."""
    dirs = package_dirs(repo)
    root = dest / "kccgen"
    if root.exists() or root.is_symlink():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    top = (repo / dirs["kccgen"]).resolve()
    for entry in sorted(top.iterdir()):  # the root package's own files: one link each
        if entry.name != "__pycache__":
            os.symlink(entry, root / entry.name)
    for name, folder in sorted(dirs.items()):
        if name == "kccgen":
            continue
        link = root.joinpath(*name.split(".")[1:])
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink((repo / folder).resolve(), link, target_is_directory=True)
    return dest


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    dest = Path(args[0]) if args else REPO / ".venv" / "devtree"
    print(build(dest.resolve()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
