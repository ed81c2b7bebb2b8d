"""Kind files for pinned APIs that have none: how new APIs join the tree.

One ``specs/kinds/<api>.yaml`` per API (``<api>.<version>.yaml`` with
``version:`` per family, for an API of several families such as Admin SDK's),
holding ``api:``, ``auto: true``, and the ``kindPrefix`` today's document gives, recorded once
(kccgen.generator.prefixes). An API that has a kind file is left alone: its
Kinds were reviewed. ``kccgen bump`` calls it after new documents are pinned;
``python -m tools.auto_kind_files`` is the same by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from kccgen.documents import LOCK_NAME, preferred, split_key


def _covered(specs: Path) -> set[tuple[str, str]]:
    """(API, family) pairs the kind files read: a file with ``version:`` its
    family; a version-less file every family of its API (``*``)."""
    out: set[tuple[str, str]] = set()
    for p in (specs / "kinds").glob("*.yaml"):
        data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
        api, version = str(data.get("api")), data.get("version")
        out.add((api, split_key(f"{api}.{version}")[1] if version else "*"))
    return out


def write_auto_kind_files(specs: Path, only: frozenset[tuple[str, str]] | None = None) -> list[Path]:
    """Write a kind file for every pinned API family no kind file reads (of the
    (API, family) pairs in ``only``, when given: a bump adds files for what it
    pinned, not for an API left without Kinds on purpose); the files written."""
    docs = json.loads((specs / LOCK_NAME).read_text(encoding="utf-8"))["documents"]
    families: dict[str, dict[str, list[str]]] = {}
    for key in sorted(docs):
        name, family, _ = split_key(key)
        if only is None or (name, family) in only:
            families.setdefault(name, {}).setdefault(family, []).append(key)
    covered = _covered(specs)
    written: list[Path] = []
    for name, fams in sorted(families.items()):
        if (name, "*") in covered:
            continue
        all_families = {split_key(k)[1] for k in docs if split_key(k)[0] == name}
        for family, keys in sorted(fams.items()):
            if (name, family) in covered:
                continue
            # one file per family, version-less where the API has one family: its
            # resources are read from the newest GA document, else a beta one
            first = (preferred(keys) or keys)[0]
            several = len(all_families) > 1
            path = specs / "kinds" / (f"{first}.yaml" if several else f"{name}.yaml")
            path.write_text(f"api: {name}\nauto: true\n" + (f"version: {first.split('.', 1)[1]}\n" if several else ""), encoding="utf-8")
            written.append(path)
    return written


def record_prefixes(specs: Path) -> list[str]:
    """Record ``kindPrefix`` in every auto kind file that has none."""
    from kccgen.generator.prefixes import record
    from kccgen.generator.spec.loader import load_specs

    return record(load_specs(specs), specs)
