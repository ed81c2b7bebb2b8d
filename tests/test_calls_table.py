"""The request counts behind bench/calls.md, recomputed live against mockgcp.

Not read from bench/calls.md: the scenarios of ``bench/calls.py`` run here
through the real reconciler. An up-to-date re-reconcile makes exactly one GET
for every Kind; a verify-only (force-acquire) reconcile never writes, whether
the resource is absent, equal or different.
"""

from __future__ import annotations

import pytest

from bench.calls import (
    CASES,
    EXPECTED_REASON,
    VERIFY_ONLY,
    WRITES,
    Row,
    run_all,
    scenario_up_to_date,
)
from tests.support.cli import GENERATED_KINDS


@pytest.fixture(scope="module")
def up_to_date_rows() -> dict[str, Row]:
    return {r.kind: r for r in run_all(scenarios=(scenario_up_to_date,))}


@pytest.fixture(scope="module")
def verify_only_rows() -> list[Row]:
    return run_all(scenarios=VERIFY_ONLY)


def test_the_bench_covers_every_generated_kind() -> None:
    assert sorted(c.kind for c in CASES) == sorted(GENERATED_KINDS)


@pytest.mark.parametrize("kind", GENERATED_KINDS)
def test_up_to_date_is_exactly_one_get(up_to_date_rows: dict[str, Row], kind: str) -> None:
    row = up_to_date_rows[kind]
    assert row.reason == "UpToDate", row
    assert len(row.calls) == 1, row.calls
    assert row.calls[0].startswith("GET ") and row.calls[0].endswith("-> 200"), row.calls
    assert row.equal


def test_verify_only_never_writes(verify_only_rows: list[Row]) -> None:
    # absent and equal rows for all 14 Kinds; differs for all but KMSKeyRing
    assert len(verify_only_rows) == 3 * len(GENERATED_KINDS) - 1
    for row in verify_only_rows:
        assert row.writes == 0, (row.scenario, row.kind, row.calls)
        assert not [c for c in row.calls if c.split(" ", 1)[0] in WRITES]
        assert row.reason == EXPECTED_REASON[row.scenario], (row.scenario, row.kind, row.reason)
        assert [c.split(" ", 1)[0] for c in row.calls] == ["GET"], (
            row.scenario,
            row.kind,
            row.calls,
        )
