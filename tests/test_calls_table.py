"""The request counts behind bench/calls.md, recomputed live against mockgcp.

Not read from bench/calls.md: the scenarios of ``bench/calls_scenarios.py`` run
here through the real reconciler. An up-to-date re-reconcile makes exactly one
GET for every Kind; a verify-only (force-acquire) reconcile never writes,
whether the resource is absent, equal or different. The cases come from
``bench/calls_cases.yaml``, one per generated Kind, read strictly.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.calls_cases import CASES, CASES_FILE, load_cases
from bench.calls_minimum import EXPECTED_REASON, WRITES, Row, measured
from bench.calls_render import render
from bench.calls_scenarios import VERIFY_ONLY, run_all, scenario_up_to_date
from kccgen.discovery.errors import SpecError
from tests.support.kinds import CURATED_KINDS


@pytest.fixture(scope="module")
def up_to_date_rows() -> dict[str, Row]:
    return {r.kind: r for r in run_all(scenarios=(scenario_up_to_date,))}


@pytest.fixture(scope="module")
def verify_only_rows() -> list[Row]:
    return run_all(scenarios=VERIFY_ONLY)


def test_the_bench_covers_every_generated_kind() -> None:
    assert [c.kind for c in CASES] == sorted(CURATED_KINDS)


@pytest.mark.parametrize("kind", CURATED_KINDS)
def test_up_to_date_is_exactly_one_get(up_to_date_rows: dict[str, Row], kind: str) -> None:
    row = up_to_date_rows[kind]
    assert row.reason == "UpToDate", row
    assert len(row.calls) == 1, row.calls
    assert row.calls[0].startswith("GET ") and row.calls[0].endswith("-> 200"), row.calls
    assert row.equal


def test_verify_only_never_writes(verify_only_rows: list[Row]) -> None:
    # absent and equal rows for all 14 Kinds; differs for all but KMSKeyRing
    assert len(verify_only_rows) == 3 * len(CURATED_KINDS) - 1
    for row in verify_only_rows:
        assert row.writes == 0, (row.scenario, row.kind, row.calls)
        assert not [c for c in row.calls if c.split(" ", 1)[0] in WRITES]
        assert row.reason == EXPECTED_REASON[row.scenario], (row.scenario, row.kind, row.reason)
        assert [c.split(" ", 1)[0] for c in row.calls] == ["GET"], (
            row.scenario,
            row.kind,
            row.calls,
        )


def test_the_closing_note_names_the_kinds_left_out() -> None:
    """calls.md's last paragraph names the Kinds with no update or drift row: keep it true."""
    note = render([]).split("Kinds not in a scenario:", 1)[1]
    no_update, no_drift = note.split("update row);", 1)
    kinds = set(CURATED_KINDS)
    assert {k for k in kinds if k in no_update} == {c.kind for c in CASES if c.update is None}
    assert {k for k in kinds if k in no_drift} == {c.kind for c in CASES if c.drift is None}


def test_a_scenario_without_a_minimum_is_an_error() -> None:
    with pytest.raises(ValueError, match="no minimum for the scenario 'recreate'"):
        measured("recreate", "PubSubTopic", "UpToDate", [])


# --- the data file is read strictly ----------------------------------------------------


def _broken(tmp_path: Path, old: str, new: str) -> Path:
    text = CASES_FILE.read_text(encoding="utf-8")
    assert old in text
    f = tmp_path / "calls_cases.yaml"
    f.write_text(text.replace(old, new, 1), encoding="utf-8")
    return f


def _error(path: Path, kinds: list[str] | None = None) -> SpecError:
    with pytest.raises(SpecError) as e:
        load_cases(path, kinds)
    assert e.value.file == str(path)
    return e.value


def test_a_generated_kind_without_a_case_is_named(tmp_path: Path) -> None:
    f = _broken(tmp_path, "  KMSKeyRing:\n", "  KMSKeyRingOld:\n")
    err = _error(f, [*sorted(CURATED_KINDS), "KMSKeyRingOld"])
    assert "no scenario data for the generated Kind 'KMSKeyRing'" in err.message
    assert err.path == "/kinds"


def test_a_case_for_a_kind_that_is_not_generated_is_an_error(tmp_path: Path) -> None:
    err = _error(_broken(tmp_path, "  KMSKeyRing:\n", "  KMSKeyRings:\n"))
    assert err.path == "/kinds/KMSKeyRings"
    assert (
        "unknown Kind 'KMSKeyRings'" in err.message and "did you mean 'KMSKeyRing'" in err.message
    )


@pytest.mark.parametrize(
    ("old", "new", "path"),
    [
        ("    name: bench-keyring\n", "    nmae: bench-keyring\n", "/kinds/KMSKeyRing/nmae"),
        ("    drift: {path: mtu,", "    drift: {paht: mtu,", "/kinds/ComputeNetwork/drift/paht"),
        ("dependencies:\n", "dependency:\n", "/dependency"),
    ],
)
def test_an_unknown_key_names_the_file_and_the_key(
    tmp_path: Path, old: str, new: str, path: str
) -> None:
    err = _error(_broken(tmp_path, old, new))
    assert err.path == path
    assert re.match(r"unknown key '\w+'", err.message), err.message


def test_an_unknown_dependency_is_an_error(tmp_path: Path) -> None:
    err = _error(_broken(tmp_path, "    - dep-keyring\n", "    - dep-key-ring\n"))
    assert err.path == "/kinds/KMSCryptoKey/deps/0"
    assert "unknown dependency 'dep-key-ring'" in err.message
