"""End to end: bad inputs give one ``error: <file>#<path>: <message>`` line.

Each case copies specs/ into a temporary root next to a ``generated/`` that
holds only a sentinel file, breaks one input, runs ``kccgen generate`` and
checks exit code 2, a single stderr line naming the file (and JSON path) and
that ``generated/`` was not touched.

The ``check`` tests at the bottom need a real generated tree; they share one
``generate`` run (about 15 s) through a module-scoped fixture and are marked
``slow`` in their names and docstrings, but are never skipped.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.support.cli import Run
from tests.support.specs import curated_specs

SENTINEL = "generated/SENTINEL.txt"
SENTINEL_TEXT = b"sentinel: generate must not touch this tree on bad input\n"


def kccgen(root: Path, *args: str) -> Run:
    r = subprocess.run(
        [sys.executable, "-m", "kccgen.generator.cli", "--root", str(root), "--specs", str(root / "specs"), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    return Run(r.returncode, r.stdout, r.stderr)


def snapshot(root: Path) -> dict[str, str]:
    """Every file under root (but specs/) with a content hash, plus stray siblings of generated/."""
    out: dict[str, str] = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if rel == "specs" or rel.startswith("specs/"):
            continue
        out[rel] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "<dir>"
    return out


@pytest.fixture
def root(tmp_path: Path) -> Path:
    curated_specs(tmp_path)
    (tmp_path / "generated").mkdir()
    (tmp_path / SENTINEL).write_bytes(SENTINEL_TEXT)
    return tmp_path


def edit(path: Path, old: str, new: str, count: int = 1) -> None:
    """Replace exactly ``count`` occurrences of old (fails loudly if the input changed)."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == count, (
        f"{path.name}: expected {count} x {old!r}, found {text.count(old)}"
    )
    path.write_text(text.replace(old, new), encoding="utf-8")


def _truncate_pubsub(root: Path) -> None:
    p = root / "specs/discovery/pubsub.v1.json"
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])


def _unknown_ref(root: Path) -> None:
    p = root / "specs/discovery/pubsub.v1.json"
    doc = json.loads(p.read_text(encoding="utf-8"))
    prop = doc["schemas"]["Topic"]["properties"]["messageStoragePolicy"]
    assert prop["$ref"] == "MessageStoragePolicy"
    edit(p, '"$ref": "MessageStoragePolicy"', '"$ref": "MessageStoragePolicyy"')


def _misspelled_key(root: Path) -> None:
    edit(
        root / "specs/kinds/pubsub.yaml",
        "    resource: projects.topics\n",
        "    resorce: projects.topics\n",
    )


def _misspelled_override_key(root: Path) -> None:
    edit(
        root / "specs/kinds/storage.yaml",
        'etag: {behaviours: [output-only], reason: "HTTP entity tag set by the service"}',
        'etag: {behaviours: [output-only], reasn: "HTTP entity tag set by the service"}',
    )


def _unknown_resource(root: Path) -> None:
    edit(
        root / "specs/kinds/pubsub.yaml",
        "resource: projects.topics\n",
        "resource: projects.topicz\n",
    )


def _absent_document(root: Path) -> None:
    edit(root / "specs/kinds/pubsub.yaml", "version: v1\n", "version: v9\n")


def _invalid_yaml(root: Path) -> None:
    edit(root / "specs/kinds/pubsub.yaml", "  - kind: PubSubSchema\n", "  - kind: [PubSubSchema\n")


@dataclass(frozen=True)
class Case:
    corrupt: Callable[[Path], None]
    where: str  # "file" or "file#/json/path" the line must start with (after "error: ")
    needles: tuple[str, ...]  # substrings the message must contain
    pattern: str | None = None  # optional regex the message must match


CASES = {
    "truncated-discovery-json": Case(
        _truncate_pubsub,
        "specs/discovery/pubsub.v1.json",
        ("invalid JSON",),
        r"line \d+ column \d+",
    ),
    "unknown-ref": Case(
        _unknown_ref,
        "specs/discovery/pubsub.v1.json#/schemas/Topic/properties/messageStoragePolicy",
        ("unknown $ref", "'MessageStoragePolicyy'", "did you mean 'MessageStoragePolicy'"),
    ),
    "kind-config-misspelled-key": Case(
        _misspelled_key,
        "specs/kinds/pubsub.yaml#/kinds/0/resorce",
        ("unknown key 'resorce'", "did you mean 'resource'"),
    ),
    "override-misspelled-nested-key": Case(
        _misspelled_override_key,
        "specs/kinds/storage.yaml#/kinds/0/fields/etag/reasn",
        ("unknown key 'reasn'", "did you mean 'reason'"),
    ),
    "unknown-resource": Case(
        _unknown_resource,
        "specs/kinds/pubsub.yaml",
        ("projects.topicz", "'topicz'", "did you mean 'topics'"),
    ),
    "absent-discovery-document": Case(
        _absent_document,
        "specs/kinds/pubsub.yaml#/",
        ("pubsub.v9",),
        r"^error: specs/kinds/pubsub\.yaml#/(api|version): ",
    ),
    "invalid-yaml": Case(
        _invalid_yaml,
        "specs/kinds/pubsub.yaml",
        ("invalid YAML",),
        r"line \d+",
    ),
}


@pytest.mark.parametrize("case", [pytest.param(c, id=name) for name, c in CASES.items()])
def test_bad_input_is_one_line_exit_2_and_generated_untouched(root: Path, case: Case) -> None:
    before = snapshot(root)
    case.corrupt(root)

    run = kccgen(root, "generate")

    assert run.code == 2, run.stderr
    assert "Traceback" not in run.stderr
    assert len(run.lines) == 1, run.stderr
    line = run.lines[0]
    assert line.startswith(f"error: {case.where}"), line
    if "#" not in case.where:
        # The file is named; the JSON path (if any) follows it directly.
        assert re.match(rf"error: {re.escape(case.where)}(#/\S*)?: ", line), line
    for needle in case.needles:
        assert needle in line, line
    if case.pattern:
        assert re.search(case.pattern, line), line
    assert str(root) not in line, "paths in messages are relative"
    # generated/ is byte-identical and nothing appeared next to it.
    assert (root / SENTINEL).read_bytes() == SENTINEL_TEXT
    assert snapshot(root) == before


def test_unknown_resource_names_the_json_path(root: Path) -> None:
    _unknown_resource(root)
    run = kccgen(root, "generate")
    assert run.code == 2
    # The path points into the kind config: the offending Kind's resource.
    assert run.lines[0].startswith("error: specs/kinds/pubsub.yaml#/kinds/0/resource: "), run.stderr


def test_absent_discovery_document_lists_what_exists(root: Path) -> None:
    _absent_document(root)
    run = kccgen(root, "generate")
    assert run.code == 2
    assert "pubsub.v1" in run.lines[0], run.stderr


def test_missing_discovery_directory(root: Path) -> None:
    shutil.rmtree(root / "specs/discovery")
    before = snapshot(root)
    run = kccgen(root, "generate")
    assert run.code == 2
    assert "Traceback" not in run.stderr
    assert run.lines == ["error: specs/discovery: missing Discovery directory"]
    assert snapshot(root) == before


def test_bad_input_also_fails_check_with_exit_2(root: Path) -> None:
    _misspelled_key(root)
    run = kccgen(root, "check")
    assert run.code == 2
    assert len(run.lines) == 1
    assert "unknown key 'resorce'" in run.lines[0]


# --- kccgen check (slow: one real generate, ~15 s, shared by the module) -----


@pytest.fixture(scope="module")
def generated_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Slow: a tmp root with specs/ and a freshly generated generated/."""
    root = tmp_path_factory.mktemp("check-root")
    curated_specs(root)
    run = kccgen(root, "generate")
    assert run.code == 0, run.stderr
    assert (root / "generated").is_dir()
    return root


@pytest.fixture
def checked_root(generated_root: Path, tmp_path: Path) -> Path:
    """A private copy of the generated root, so tests can edit it freely."""
    root = tmp_path / "root"
    shutil.copytree(generated_root, root)
    return root


STAMP = "generated/.kccgen-stamp"


def _entries(stderr: str) -> dict[str, set[str]]:
    """``{"changed": {path, ...}, ...}`` from the check summary; the stamp is left out.

    The stamp digests the generator's own source too, so it is compared on the
    fresh tree (exit 0) rather than in every case.
    """
    out: dict[str, set[str]] = {"missing": set(), "stale": set(), "changed": set()}
    for m in re.finditer(r"^\s+(missing|stale|changed)\s+(\S+)", stderr, re.MULTILINE):
        if m.group(2) != STAMP:
            out[m.group(1)].add(m.group(2))
    return out


def _some_generated_file(root: Path) -> str:
    files = sorted(
        p.relative_to(root).as_posix()
        for p in (root / "generated").rglob("*.py")
        if p.is_file() and p.name != "__init__.py" and "__pycache__" not in p.parts
    )
    assert files
    return files[0]


def test_slow_check_passes_on_a_fresh_tree(checked_root: Path) -> None:
    run = kccgen(checked_root, "check")
    assert run.code == 0, run.stderr
    assert "up to date" in run.stdout and "the stamp matches the inputs and every file" in run.stdout
    full = kccgen(checked_root, "check", "--full")  # re-rendered and compared, stamp included
    assert full.code == 0, full.stderr
    assert "up to date" in full.stdout and "stamp matches" not in full.stdout


def test_slow_check_does_not_trust_a_stamp_of_other_inputs(checked_root: Path) -> None:
    """An input edited after the tree was generated: the stamp no longer matches,
    so check re-renders and reports the files that input changes."""
    edit(checked_root / "specs/kinds/pubsub.yaml", "kinds:\n", "kinds:\n  # an input edit\n")
    run = kccgen(checked_root, "check")
    assert "stamp matches" not in run.stdout
    assert run.code == 1 and STAMP in run.stderr, run.stderr


def test_slow_check_reports_a_changed_file(checked_root: Path) -> None:
    rel = _some_generated_file(checked_root)
    with (checked_root / rel).open("a", encoding="utf-8") as f:
        f.write("# hand edit\n")
    before = snapshot(checked_root)
    run = kccgen(checked_root, "check")
    assert run.code == 1, run.stderr
    assert "Traceback" not in run.stderr
    assert _entries(run.stderr) == {"missing": set(), "stale": set(), "changed": {rel}}, run.stderr
    assert "# hand edit" in run.stderr  # the diff is shown
    assert snapshot(checked_root) == before  # check never writes


def test_slow_check_reports_a_stale_file(checked_root: Path) -> None:
    stray = "generated/pubsub/v1beta1/leftover_types.py"
    (checked_root / stray).parent.mkdir(parents=True, exist_ok=True)
    (checked_root / stray).write_text("# not generated\n", encoding="utf-8")
    run = kccgen(checked_root, "check")
    assert run.code == 1, run.stderr
    assert "Traceback" not in run.stderr
    assert _entries(run.stderr) == {"missing": set(), "stale": {stray}, "changed": set()}, (
        run.stderr
    )


def test_slow_check_reports_a_missing_file(checked_root: Path) -> None:
    rel = _some_generated_file(checked_root)
    (checked_root / rel).unlink()
    run = kccgen(checked_root, "check")
    assert run.code == 1, run.stderr
    assert "Traceback" not in run.stderr
    assert _entries(run.stderr) == {"missing": {rel}, "stale": set(), "changed": set()}, run.stderr


def test_slow_generate_after_bad_input_keeps_the_real_tree(checked_root: Path) -> None:
    """A failed generate over a real tree leaves it exactly as it was."""
    before = snapshot(checked_root)
    _unknown_ref(checked_root)
    run = kccgen(checked_root, "generate")
    assert run.code == 2
    assert snapshot(checked_root) == before
    assert not [p.name for p in checked_root.iterdir() if p.name.startswith(".generated")]


def test_slow_generate_replaces_a_tree_holding_a_non_utf8_file(root: Path) -> None:
    """generate swaps in a fresh tree, so whatever was in generated/ is not an input."""
    (root / "generated/blob.bin").write_bytes(b"\xff\xfe not text")
    run = kccgen(root, "generate")
    assert "Traceback" not in run.stderr
    assert run.code == 0, run.stderr
    assert not (root / "generated/blob.bin").exists()
    assert not (root / SENTINEL).exists()
