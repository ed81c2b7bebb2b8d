"""Kind files for pinned APIs that have none: how new APIs join the tree.

One ``specs/kinds/<api>.yaml`` (``<api>.<version>.yaml`` for an API with several
GA documents pinned) holding ``api:``, ``auto: true``, ``version:`` where
needed, and the ``kindPrefix`` today's document gives, recorded once
(kccgen.generator.prefixes). An API that has a kind file is left alone: its
Kinds were reviewed. ``kccgen bump`` calls it after new documents are pinned;
``python -m tools.auto_kind_files`` is the same by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from kccgen.documents import LOCK_NAME


def write_auto_kind_files(specs: Path, only: frozenset[str] | None = None) -> list[Path]:
    """Write a kind file for every pinned API without one (of the API names in
    ``only``, when given: a bump adds files for the APIs it pinned, not for an
    API left without Kinds on purpose); the files written."""
    docs = json.loads((specs / LOCK_NAME).read_text(encoding="utf-8"))["documents"]
    versions: dict[str, list[str]] = {}
    for key in sorted(docs):
        if only is not None and key.partition(".")[0] not in only:
            continue
        name, _, ver = key.partition(".")
        versions.setdefault(name, []).append(ver)
    covered = {str((yaml.safe_load(p.read_text(encoding="utf-8")) or {}).get("api")) for p in (specs / "kinds").glob("*.yaml")}
    written: list[Path] = []
    for name, vers in sorted(versions.items()):
        if name in covered:
            continue
        for v in vers:
            path = specs / "kinds" / (f"{name}.yaml" if len(vers) == 1 else f"{name}.{v}.yaml")
            path.write_text(f"api: {name}\nauto: true\n" + (f"version: {v}\n" if len(vers) > 1 else ""), encoding="utf-8")
            written.append(path)
    return written


def record_prefixes(specs: Path) -> list[str]:
    """Record ``kindPrefix`` in every auto kind file that has none."""
    from kccgen.generator.prefixes import record
    from kccgen.generator.spec.loader import load_specs

    return record(load_specs(specs), specs)
