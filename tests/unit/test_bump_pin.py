"""The pin moves everywhere it is written, and back when pip refuses the version."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from kccgen.generator import bump as bump_mod
from kccgen.generator.bump import BumpError, move_pin, pinned_version


def _repo(tmp: Path) -> Path:
    (tmp / "constraints.txt").write_text("google-api-core==2.1.0\ngoogle-api-python-client==2.190.0\n", encoding="utf-8")
    (tmp / "pyproject.toml").write_text('dependencies = [\n    "google-api-python-client==2.190.0",\n]\n', encoding="utf-8")
    (tmp / "README.md").write_text("vendored docs (google-api-python-client 2.190.0); lag 2.100.0-to-2.190.0.txt\n", encoding="utf-8")
    return tmp


def test_the_pin_moves_in_every_file_that_names_it(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    assert pinned_version(root) == "2.190.0"
    before = move_pin(root, "2.190.0", "2.202.0")
    assert sorted(p.name for p in before) == ["README.md", "constraints.txt", "pyproject.toml"]
    assert "google-api-python-client==2.202.0" in (root / "constraints.txt").read_text()
    assert '"google-api-python-client==2.202.0"' in (root / "pyproject.toml").read_text()
    # the README's prose pin moves; a file name that only contains the version does not
    assert (root / "README.md").read_text() == "vendored docs (google-api-python-client 2.202.0); lag 2.100.0-to-2.190.0.txt\n"


def test_a_pin_that_is_not_there_moves_nothing(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    texts = {p: p.read_text() for p in root.iterdir()}
    with pytest.raises(BumpError, match=re.escape("constraints.txt: google-api-python-client==2.180.0 not found")):
        move_pin(root, "2.180.0", "2.202.0")
    assert {p: p.read_text() for p in root.iterdir()} == texts


def test_a_version_pip_refuses_leaves_the_pins_as_they_were(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    root = _repo(tmp_path)
    (root / "specs").mkdir()
    texts = {p: p.read_text() for p in root.iterdir() if p.is_file()}

    def refuse(root: Path, version: str) -> None:
        raise BumpError(f"pip could not install google-api-python-client=={version}: No matching distribution")

    monkeypatch.setattr(bump_mod, "install", refuse)
    monkeypatch.setattr(bump_mod, "client_version", lambda: "2.190.0")
    monkeypatch.setattr(bump_mod, "start", lambda *a: None)
    args = argparse.Namespace(root=root, specs=root / "specs", version="9.9.9", no_docs=True, documents=None)
    assert bump_mod.bump(args, lambda *a: ("", None, []), lambda *a: [], lambda *a: 0, None) == 2  # type: ignore[arg-type]
    assert "error: pip could not install google-api-python-client==9.9.9: No matching distribution" in capsys.readouterr().err
    assert {p: p.read_text() for p in root.iterdir() if p.is_file()} == texts


def test_a_second_bump_in_one_checkout_is_refused_and_changes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Think in twos: while one bump holds the checkout, another says so and writes nothing."""
    import fcntl

    root = _repo(tmp_path)
    texts = {p: p.read_text() for p in root.iterdir() if p.is_file()}
    lock = root / ".kccgen-cache" / "bump.lock"
    lock.parent.mkdir()
    with lock.open("a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        args = argparse.Namespace(root=root, specs=root / "specs", version="9.9.9", no_docs=True, documents=None)
        assert bump_mod.bump(args, lambda *a: ("", None, []), lambda *a: [], lambda *a: 0, None) == 2  # type: ignore[arg-type]
    assert "another kccgen bump is running in this checkout; nothing was changed" in capsys.readouterr().err
    assert {p: p.read_text() for p in root.iterdir() if p.is_file()} == texts
