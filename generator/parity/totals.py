"""Counting a ParityReport: per Kind and overall, and KCC-only paths per reason."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from kccgen.generator.parity.compare import KindParity, ParityReport
from kccgen.generator.parity.curated import CATEGORIES, Category


@dataclass(frozen=True)
class KindTotals:
    """The sizes of one Kind's buckets (``kind == "total"``: summed over the Kinds)."""

    kind: str
    shared: int
    kcc_only: int
    ours_only: int  # API fields KCC lacks (schema lag)
    ours_elsewhere: int
    ours_krm_only: int
    ours_matched: int
    kcc_total: int
    ours_total: int
    unexplained: int


@dataclass(frozen=True)
class Totals:
    """Per-Kind rows, their sum, and KCC-only paths per reason."""

    kinds: tuple[KindTotals, ...]
    all: KindTotals  # kind == "total"
    reasons: tuple[tuple[Category, int], ...]  # every category, in CATEGORIES order


def kind_totals(k: KindParity) -> KindTotals:
    """One Kind's counts; ``unexplained`` counts KCC-only paths no rule explains."""
    return KindTotals(
        kind=k.kind,
        shared=len(k.shared),
        kcc_only=len(k.kcc_only),
        ours_only=len(k.ours_only),
        ours_elsewhere=len(k.ours_elsewhere),
        ours_krm_only=len(k.ours_krm_only),
        ours_matched=len(k.ours_matched),
        kcc_total=len(k.kcc_paths),
        ours_total=len(k.our_paths),
        unexplained=sum(1 for x in k.kcc_only if x.category == "unexplained"),
    )


def totals(report: ParityReport) -> Totals:
    """The counts the report's tables show; tests check they partition the paths."""
    rows = tuple(kind_totals(k) for k in report.kinds)
    names = [f for f in KindTotals.__dataclass_fields__ if f != "kind"]
    sums = {n: sum(getattr(r, n) for r in rows) for n in names}
    counts = Counter(x.category for k in report.kinds for x in k.kcc_only)
    return Totals(rows, KindTotals("total", **sums), tuple((c, counts[c]) for c in CATEGORIES))
