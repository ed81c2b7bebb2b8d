"""Docs a newcomer can follow, checked against what they describe.

* ``make help`` lists every target of the Makefile, each with a description;
* every citation of the design (``docs/design.md §5``, ``§5.7`` for item 7 of
  section 5) in the repository's code, tests, specs and README names a section
  (or a numbered item of one) that ``docs/design.md`` has, and nothing cites the
  copy that used to live outside the repository (``DESIGN §5``).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

from tests.support.cli import REPO

DESIGN = REPO / "docs" / "design.md"
THIS = Path(__file__).resolve()  # its examples cite sections that do not exist, on purpose
CITATION = re.compile(r"docs/design\.md\s*§\s*(\d+)(?:\.(\d+))?")
STALE = re.compile(r"\bDESIGN(?:\.md)?\s*(?:§|:)")
# Generated code cites nothing by hand (its templates are scanned); caches and venvs are not ours.
SKIP_DIRS = {".git", ".venv", "generated", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".kccgen-cache", ".hypothesis", ".kccctl-state", "build", "dist"}
SUFFIXES = {".py", ".md", ".yaml", ".yml", ".toml", ".j2", ".txt", ".cfg", ".sh"}
NAMES = {"Makefile", "Dockerfile", "run"}


def text_files() -> Iterator[Path]:
    for folder, dirs, files in os.walk(REPO):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info"))
        for name in sorted(files):
            path = Path(folder) / name
            if path.suffix in SUFFIXES or name in NAMES:
                yield path


def sections(text: str) -> dict[int, set[int]]:
    """Section number -> the numbers of the numbered list items in it."""
    out: dict[int, set[int]] = {}
    current: int | None = None
    for line in text.splitlines():
        head = re.match(r"## (\d+)\. ", line)
        if head:
            current = int(head[1])
            assert current not in out, f"{DESIGN}: two sections numbered {current}"
            out[current] = set()
        elif line.startswith("## "):
            current = None
        elif current is not None and (item := re.match(r"(\d+)\. ", line)):
            out[current].add(int(item[1]))
    return out


def unresolved(text: str, known: dict[int, set[int]]) -> list[str]:
    """The citations in ``text`` that name no section or item of the design."""
    bad = []
    for m in CITATION.finditer(text):
        section, item = int(m[1]), m[2]
        if section not in known or (item is not None and int(item) not in known[section]):
            bad.append(m[0])
    return bad


def test_every_design_citation_names_a_section_that_exists() -> None:
    known = sections(DESIGN.read_text(encoding="utf-8"))
    assert known, f"{DESIGN} has no numbered sections"
    cited, problems = 0, []
    for path in text_files():
        if path in (DESIGN, THIS):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        cited += len(CITATION.findall(text))
        problems += [f"{path.relative_to(REPO)}: {c}" for c in unresolved(text, known)]
    assert not problems, "citations of sections docs/design.md does not have:\n" + "\n".join(problems)
    assert cited >= 10, f"only {cited} citations of docs/design.md found: is the pattern still the one the code uses?"


def test_nothing_cites_the_design_outside_the_repository() -> None:
    stale = []
    for path in text_files():
        if path in (DESIGN, THIS):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if STALE.search(line):
                stale.append(f"{path.relative_to(REPO)}:{n}: {line.strip()}")
    assert not stale, "cite docs/design.md §N instead:\n" + "\n".join(stale)


def test_the_resolver_refuses_what_is_not_there() -> None:
    known = sections("## 1. One\n\n1. first\n2. second\n\n## 2. Two\ntext\n## Appendix\n3. not in a section\n")
    assert known == {1: {1, 2}, 2: set()}
    assert unresolved("docs/design.md §1, docs/design.md §1.2, docs/design.md §2", known) == []
    assert unresolved("docs/design.md §3; docs/design.md §1.3; docs/design.md §2.1", known) == [
        "docs/design.md §3",
        "docs/design.md §1.3",
        "docs/design.md §2.1",
    ]
    assert STALE.search("in the order DESIGN §5 gives") and STALE.search("(DESIGN: least privilege)")


def makefile_targets() -> tuple[set[str], set[str]]:
    """(named rule targets, .PHONY names) of the Makefile."""
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    rules = set(re.findall(r"(?m)^([A-Za-z][\w-]*)\s*:(?![=:])", text))
    phony = {name for line in re.findall(r"(?m)^\.PHONY:(.*)$", text) for name in line.split()}
    return rules, phony


def test_make_help_lists_every_target_with_a_description() -> None:
    rules, phony = makefile_targets()
    assert rules == phony, f"targets not in .PHONY: {sorted(rules - phony)}; .PHONY names without a rule: {sorted(phony - rules)}"
    # Only make, python3 and sh: no venv, no awk.
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp")}
    r = subprocess.run(["make", "-s", "--no-print-directory", "help"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 0, r.stderr
    listed = {}
    for line in r.stdout.splitlines():
        name, _, text = line.strip().partition(" ")
        listed[name] = text.strip()
    assert set(listed) == rules, f"missing from `make help`: {sorted(rules - set(listed))}; extra: {sorted(set(listed) - rules)}"
    assert all(listed.values()), f"targets without a description: {[n for n, t in listed.items() if not t]}"
