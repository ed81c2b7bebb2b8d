"""Digest of everything that determines generated/, for a fast no-op generate.

``generated/.kccgen-stamp`` records the digest of the inputs (specs,
templates, generator, discovery and contract source, pinned tool and client versions) and of the outputs. When
both still match, ``generate`` has nothing to do. ``check`` never trusts the
stamp: it re-renders in memory, and the stamp is one of the files it compares,
so editing specs or generator code without regenerating is caught as drift.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from importlib.metadata import version
from pathlib import Path
from typing import Any

import kccgen
import kccgen.discovery
from kccgen import data_dir

STAMP = "generated/.kccgen-stamp"
_TOOLS = ("datamodel-code-generator", "ruff", "pydantic", "jinja2")
# Locked documents are read from the client, so a moved pin makes the stamp
# stale (else `make check` would pass on a bump never regenerated). It is an
# input, not code: the build memo and render cache key units by their
# documents' bytes, so a bump rebuilds only the units whose documents changed.
_CLIENT = "google-api-python-client"
GENERATOR_DIR = Path(__file__).resolve().parent
DISCOVERY_DIR = Path(kccgen.discovery.__file__).resolve().parent
ROOT_PACKAGE_DIR = Path(kccgen.__file__).resolve().parent  # its own modules only: the contract
TEMPLATES_DIR = data_dir("templates")


def _files(base: Path, patterns: Iterable[str], recursive: bool = True) -> list[Path]:
    out: set[Path] = set()
    for pat in patterns:
        found = base.rglob(pat) if recursive else base.glob(pat)
        out.update(p for p in found if p.is_file() and "__pycache__" not in p.parts)
    return sorted(out)


def _digest_files(h: Any, sources: Iterable[tuple[str, Path, tuple[str, ...], bool]]) -> None:
    for label, base, pats, recursive in sources:
        for p in _files(base, pats, recursive):
            h.update(f"{label}/{p.relative_to(base).as_posix()}\0".encode())
            h.update(p.read_bytes())
            h.update(b"\0")


def code_digest() -> str:
    """Everything but the specs that shapes the output: generator, discovery and
    contract source, templates and the pinned tools (the render cache's salt)."""
    h = hashlib.sha256()
    _digest_files(h, (
        ("templates", TEMPLATES_DIR, ("*",), True),
        ("generator", GENERATOR_DIR, ("*.py",), True),
        ("discovery", DISCOVERY_DIR, ("*.py",), True),
        ("kccgen", ROOT_PACKAGE_DIR, ("*.py",), False),
    ))
    for tool in _TOOLS:
        h.update(f"{tool}=={version(tool)}\0".encode())
    return h.hexdigest()


def inputs_digest(specs_dir: Path) -> str:
    h = hashlib.sha256()
    _digest_files(h, (("specs", specs_dir, ("*",), True),))
    h.update(f"{_CLIENT}=={version(_CLIENT)}\0".encode())
    h.update(code_digest().encode())
    return h.hexdigest()


def outputs_digest(files: dict[str, str] | dict[str, bytes]) -> str:
    h = hashlib.sha256()
    for path in sorted(files):
        if path == STAMP:
            continue
        data = files[path]
        h.update(f"{path}\0".encode())
        h.update(data.encode() if isinstance(data, str) else data)
        h.update(b"\0")
    return h.hexdigest()


def stamp_text(inputs: str, outputs: str, errors: int = 0) -> str:
    """``errors``: curated Kinds the run could not generate (it exited 1). Such a
    stamp never matches ``is_up_to_date``, so generate and check redo the run and
    report them again instead of answering "up to date"."""
    text = f"# kccgen: digests of what produced this tree; see generator/stamp.py\ninputs {inputs}\noutputs {outputs}\n"
    return text + (f"errors {errors}\n" if errors else "")


def tree_on_disk(root: Path) -> dict[str, bytes]:
    """Bytes, not text: a stray binary file must not crash the check. generated/
    and the surface record beside it (generator/write.py's TREES)."""
    if not (root / "generated").is_dir():
        return {}
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for sub in ("generated", "surface")
        for p in sorted((root / sub).rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def is_up_to_date(root: Path, specs_dir: Path) -> bool:
    """True when the stamp matches the current inputs and the tree on disk."""
    tree = tree_on_disk(root)
    stamp = tree.get(STAMP)
    if stamp is None:
        return False
    return stamp == stamp_text(inputs_digest(specs_dir), outputs_digest(tree)).encode()
