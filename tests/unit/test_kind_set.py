"""A stable Kind set: a Kind that was generated leaves only with a retirement entry."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kccgen.generator.kindset import kind_set_problems, previous_kinds
from kccgen.generator.spec.kinds import RetiredKind, RetiredKindsFile
from tests.conftest import REPO
from tests.support.specs import keep_claims

FILE = "specs/retired-kinds.yaml"


def _retired(*entries: RetiredKind) -> RetiredKindsFile:
    return RetiredKindsFile(kinds=entries)


def test_a_vanished_kind_is_an_error_naming_it() -> None:
    got = kind_set_problems(frozenset({"A", "B"}), frozenset({"A"}), _retired(), FILE)
    assert len(got) == 1 and "B was generated and would disappear" in got[0] and FILE in got[0]


def test_a_retired_kind_may_vanish() -> None:
    entry = RetiredKind(kind="B", reason="renamed to match Config Connector", renamedTo="C")
    assert (
        kind_set_problems(frozenset({"A", "B"}), frozenset({"A", "C"}), _retired(entry), FILE) == []
    )


def test_new_kinds_and_a_first_run_are_fine() -> None:
    assert kind_set_problems(frozenset({"A"}), frozenset({"A", "B"}), _retired(), FILE) == []
    assert kind_set_problems(frozenset(), frozenset({"A"}), _retired(), FILE) == []


def test_entries_that_contradict_the_kinds_generated_now() -> None:
    still = RetiredKind(kind="A", reason="r")
    dangling = RetiredKind(kind="B", reason="r", renamedTo="Nowhere")
    got = kind_set_problems(
        frozenset({"A", "B"}), frozenset({"A"}), _retired(still, dangling), FILE
    )
    assert got == [
        f"{FILE}#/kinds/0: A is generated; remove the entry (a retired Kind is not generated)",
        f"{FILE}#/kinds/1: renamedTo 'Nowhere' is not a generated Kind",
    ]


def test_a_retirement_needs_a_reason() -> None:
    with pytest.raises(ValueError):
        RetiredKind(kind="B", reason="")


def test_previous_kinds_reads_the_committed_index(tmp_path: Path) -> None:
    assert previous_kinds(tmp_path) == frozenset()
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "kinds.json").write_text('{"A": {}, "B": {}}', encoding="utf-8")
    assert previous_kinds(tmp_path) == {"A", "B"}
    (tmp_path / "generated" / "kinds.json").write_text("{", encoding="utf-8")
    with pytest.raises(ValueError, match=r"generated/kinds\.json: not readable JSON"):
        previous_kinds(tmp_path)


def test_generate_refuses_to_drop_a_kind_and_writes_nothing(tmp_path: Path) -> None:
    """The CLI end to end, on one Kind's specs: a committed tree listing one more
    Kind than the specs produce is left as it was, and the message names the Kind
    and the file to retire it in."""
    specs = tmp_path / "specs"
    shutil.copytree(REPO / "specs", specs, ignore=shutil.ignore_patterns("__pycache__"))
    for f in (specs / "kinds").glob("*.yaml"):
        f.unlink()
    (specs / "accepted-changes.yaml").unlink()  # its entries name Kinds the slice does not generate
    (specs / "kinds" / "pubsub.yaml").write_text(
        "api: pubsub\nversion: v1\nkinds:\n  - kind: PubSubSchema\n    resource: projects.schemas\n",
        encoding="utf-8",
    )
    keep_claims(specs, {"pubsub"}, derived=False)
    root = tmp_path / "repo"
    (root / "generated").mkdir(parents=True)
    (root / "generated" / "kinds.json").write_text('{"PubSubGoneKind": {}}', encoding="utf-8")
    (root / "generated" / "keep.txt").write_text(
        "a file the failed run must not lose", encoding="utf-8"
    )
    before = {p: p.read_bytes() for p in (root / "generated").rglob("*") if p.is_file()}
    cmd = [sys.executable, "-m", "kccgen.generator.cli", "--root", str(root), "--specs", str(specs)]
    r = subprocess.run(
        [*cmd, "generate", "--force"], capture_output=True, text=True, check=False, timeout=900
    )
    assert r.returncode == 2, r.stderr
    assert (
        "error: generated/kinds.json: PubSubGoneKind was generated and would disappear" in r.stderr
    )
    assert "retire it in specs/retired-kinds.yaml" in r.stderr
    after = {p: p.read_bytes() for p in (root / "generated").rglob("*") if p.is_file()}
    assert after == before
    # retired with a reason, the same run goes through
    (specs / "retired-kinds.yaml").write_text(
        "kinds:\n  - kind: PubSubGoneKind\n    reason: the test retires it\n", encoding="utf-8"
    )
    r = subprocess.run(
        [*cmd, "generate", "--force"], capture_output=True, text=True, check=False, timeout=900
    )
    assert r.returncode == 0, r.stderr
    assert "PubSubGoneKind" not in json.loads(
        (root / "generated" / "kinds.json").read_text(encoding="utf-8")
    )
