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

from kccgen.generator.spec.loader import Specs
from tests.conftest import REPO


def curated_specs(dest: Path, derived: bool = False) -> Path:
    """A copy of the committed specs under ``dest/specs`` with only the kind files
    that list curated Kinds; without ``derived`` their ``auto: true`` line goes too,
    so the copy generates exactly the curated Kinds."""
    specs = dest / "specs"
    shutil.copytree(REPO / "specs", specs, ignore=shutil.ignore_patterns("__pycache__"))
    for f in sorted((specs / "kinds").glob("*.yaml")):
        text = f.read_text(encoding="utf-8")
        if "\nkinds:" not in text:
            f.unlink()
        elif not derived:
            f.write_text(re.sub(r"(?m)^auto: true\n", "", text), encoding="utf-8")
    return specs


def curated_only(specs: Specs) -> Specs:
    """Loaded specs cut the same way: the kind files that list curated Kinds, not auto."""
    kinds = tuple((p, f.model_copy(update={"auto": False})) for p, f in specs.kinds if f.kinds)
    return dataclasses.replace(specs, kinds=kinds)
