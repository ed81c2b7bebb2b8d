"""A stable Kind set: a Kind that was generated does not silently disappear.

Users' manifests and scripts name Kinds; a rename in the naming rules or a
resource dropped from a Discovery document would break them without a word.
The committed ``generated/kinds.json`` is the previous Kind set: every Kind it
lists must still be generated, or be retired in ``specs/retired-kinds.yaml``
with a reason (and ``renamedTo`` when another Kind replaces it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from kccgen.generator.emit.files import INDEX_PATH as INDEX
from kccgen.generator.spec.kinds import RetiredKindsFile


def previous_kinds(root: Path) -> frozenset[str]:
    """The Kinds ``root``'s generated/kinds.json lists (none before the first run)."""
    path = root / INDEX
    if not path.is_file():
        return frozenset()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{INDEX}: not readable JSON ({e}); restore it from git") from None
    if not isinstance(data, dict):
        raise ValueError(f"{INDEX}: not a JSON object of Kinds; restore it from git")
    return frozenset(str(k) for k in data)


def kind_set_problems(
    previous: frozenset[str], now: frozenset[str], retired: RetiredKindsFile, file: str, explain: Callable[[str], str] | None = None
) -> list[str]:
    """One message per Kind that would vanish unretired, and per retirement entry
    that contradicts the Kinds generated now; empty when the set is stable.
    ``explain`` (kccgen bump) gives a vanishing Kind's cause."""
    out: list[str] = []
    entries = {r.kind: r for r in retired.kinds}
    for i, r in enumerate(retired.kinds):
        where = f"{file}#/kinds/{i}"
        if r.kind in now:
            out.append(f"{where}: {r.kind} is generated; remove the entry (a retired Kind is not generated)")
        if r.renamed_to is not None and r.renamed_to not in now:
            out.append(f"{where}: renamedTo {r.renamed_to!r} is not a generated Kind")
    for kind in sorted(previous - now - set(entries)):
        out.append(
            f"{INDEX}: {kind} was generated and would disappear (a renamed or dropped resource); "
            f"retire it in {file} with a reason (and renamedTo), or keep generating it"
            + (f" Cause: {explain(kind)}" if explain is not None else "")
        )
    return out
