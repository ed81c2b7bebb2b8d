"""Slices of the committed specs for tests that run whole generations.

A generation of every pinned API takes minutes; a test that proves how
``generate`` treats bad input, a flipped field or a new kind file needs only
a few APIs. The slice keeps the kind files that list curated Kinds.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

import yaml

from kccgen.generator.spec.kinds import KindsFile
from kccgen.generator.spec.loader import Specs
from tests.conftest import REPO


def curated_specs(dest: Path, derived: bool = False) -> Path:
    """A copy of the committed specs under ``dest/specs`` with only the kind files
    that list curated Kinds; without ``derived`` their ``auto: true`` line goes too,
    so the copy generates exactly the curated Kinds."""
    specs = dest / "specs"
    shutil.copytree(REPO / "specs", specs, ignore=shutil.ignore_patterns("__pycache__"))
    # retired Kinds name derived Kinds (renamedTo) the slice does not generate
    (specs / "retired-kinds.yaml").unlink(missing_ok=True)
    for f in sorted((specs / "kinds").glob("*.yaml")):
        text = f.read_text(encoding="utf-8")
        if "\nkinds:" not in text:
            f.unlink()
        elif not derived:
            # no derived Kinds: no auto line, and kccVersions keep only the curated Kinds
            text = re.sub(r"(?m)^auto: true\n", "", text)
            f.write_text(_curated_versions(text), encoding="utf-8")
    return specs


def _curated_versions(text: str) -> str:
    """``kccVersions`` lines cut to the Kinds the file lists under ``kinds:``."""
    curated = {k["kind"] for k in yaml.safe_load(text).get("kinds") or []}

    def keep(m: re.Match[str]) -> str:
        names = [n.strip() for n in m.group(2).split(",") if n.strip() in curated]
        return f"  {m.group(1)}: [{', '.join(names)}]\n" if names else ""

    block = re.search(r"(?m)^kccVersions:\n((?:  .*\n)*)", text)
    if block is None:
        return text
    body = re.sub(r"(?m)^  (\w+): \[(.*)\]\n", keep, block.group(1))
    return text[: block.start()] + (f"kccVersions:\n{body}" if body else "") + text[block.end() :]


def _curated_names(f: KindsFile) -> dict[str, tuple[str, ...]]:
    curated = {k.kind for k in f.kinds}
    cut = {v: tuple(n for n in names if n in curated) for v, names in f.kcc_versions.items()}
    return {v: names for v, names in cut.items() if names}


def curated_only(specs: Specs) -> Specs:
    """Loaded specs cut the same way: the kind files that list curated Kinds, not auto."""
    kinds = tuple((p, f.model_copy(update={"auto": False, "kcc_versions": _curated_names(f)})) for p, f in specs.kinds if f.kinds)
    return dataclasses.replace(specs, kinds=kinds)
