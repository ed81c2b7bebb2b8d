"""The reasons a KCC path may lack a counterpart, and the curated entries of curated.yaml.

The entries are data with their evidence, read strictly (an unknown key or
category is a :class:`SpecError` naming the file and the key), so a typo can
never silently drop an explanation. Whether an entry checks out against the
Discovery document and our spec is decided by the classifier, not here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kccgen.discovery.errors import SpecError, did_you_mean, json_path
from kccgen.generator.spec.kinds import load_strict

CURATED_FILE = Path(__file__).with_name("curated.yaml")

Category = Literal[
    "renamed-in-api",
    "kcc-rename",
    "kcc-flatten",
    "reference-naming",
    "output-only",
    "method-parameter",
    "kcc-only",
    "unexplained",
]

# Report order and meaning of each reason.
CATEGORIES: dict[Category, str] = {
    "renamed-in-api": "renamed in the API: KCC keeps the old name, the API keeps it only as a backward-compatible alias",
    "kcc-rename": "KCC renames the API field (the Discovery document has only the API name)",
    "kcc-flatten": "KCC flattens or restructures the API field (hoisted, list for map, enum for boolean...)",
    "reference-naming": "reference naming differs: same API field, another KRM field name",
    "output-only": "output-only in the API: ours is in status.observedState",
    "method-parameter": "an API method parameter, not a field of the resource",
    "kcc-only": "KCC-only convenience field: not in the Discovery schema",
    "unexplained": "unexplained: the API has the field and no rule accounts for KCC's path",
}


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MappingEntry(_Entry):
    """A curated correspondence between a KCC path and ours, as curated.yaml spells it.

    ``kcc`` is a path or a prefix: ``lifecycleRule`` also covers
    ``lifecycleRule[].action.type``, rewritten to ``ours`` + the rest
    (``lifecycle.rule[].action.type``). With ``subtree`` every path under
    ``kcc`` corresponds to ``ours`` as a whole. ``ours`` is relative to spec
    unless it starts with ``status.observedState.``; ``None`` for a method
    parameter (``param``: ``"delete:force"``) or a field with no counterpart.
    """

    kcc: str
    ours: str | None
    category: Category
    evidence: str = Field(min_length=1)
    subtree: bool = False
    param: str | None = None


class Mapping(MappingEntry):
    """A curated mapping of one Kind."""

    kind: str


class ElsewhereEntry(_Entry):
    """An API field of our spec that KCC's CRD carries outside ``spec``.

    ``fixture`` is the KCC test fixture (below ``compat/kcc/fixtures``) whose
    recorded requests show it; tests/test_parity.py checks them.
    """

    ours: str
    kcc: str
    fixture: str = Field(min_length=1)


class Elsewhere(ElsewhereEntry):
    """A field carried elsewhere, of one Kind."""

    kind: str

    @property
    def evidence(self) -> str:
        return (
            f"KCC's recorded requests (fixtures/{self.fixture}/_http.log) send {self.kcc} (with KCC's managed-by-cnrm) "
            f"as the API's {self.ours}"
        )


class _KindEntries(_Entry):
    mappings: tuple[MappingEntry, ...] = ()
    elsewhere: tuple[ElsewhereEntry, ...] = ()


class _CuratedFile(_Entry):
    kinds: dict[str, _KindEntries]


@dataclass(frozen=True)
class Curated:
    """The curated entries of one file, in file order."""

    file: str
    mappings: tuple[Mapping, ...]
    elsewhere: tuple[Elsewhere, ...]

    def check_kinds(self, known: set[str]) -> None:
        """An entry for a Kind we do not generate would never apply: an input error."""
        kinds = [m.kind for m in self.mappings] + [e.kind for e in self.elsewhere]
        for kind in dict.fromkeys(kinds):
            if kind not in known:
                msg = f"unknown Kind {kind!r}{did_you_mean(kind, known)}"
                raise SpecError(self.file, json_path("kinds", kind), msg)

    def mapping_for(self, kind: str, path: str) -> Mapping | None:
        """The longest mapping whose ``kcc`` is ``path`` or a parent of it."""
        hits = [
            m
            for m in self.mappings
            if m.kind == kind
            and (path == m.kcc or (path.startswith(m.kcc) and path[len(m.kcc)] in ".["))
        ]
        return max(hits, key=lambda m: len(m.kcc)) if hits else None


def load_curated(path: Path = CURATED_FILE) -> Curated:
    data = load_strict(_CuratedFile, path, None)
    return Curated(
        str(path),
        tuple(
            Mapping(kind=kind, **m.model_dump())
            for kind, entries in data.kinds.items()
            for m in entries.mappings
        ),
        tuple(
            Elsewhere(kind=kind, **e.model_dump())
            for kind, entries in data.kinds.items()
            for e in entries.elsewhere
        ),
    )


CURATED = load_curated()
MAPPINGS = CURATED.mappings
ELSEWHERE = CURATED.elsewhere
