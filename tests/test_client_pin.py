"""`make check` covers the client (issue 28, point 4): locked documents are
read from the installed google-api-python-client, so a moved pin without
`kccgen update-specs` and regeneration must fail the drift gate with one line
naming both versions, and the stamp must depend on the client's version."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kccgen import data_dir
from kccgen.documents import CLIENT, LOCK_NAME, client_problems, client_version
from kccgen.generator import stamp
from kccgen.generator.cli import main

SPECS = data_dir("specs")


def _specs_locked_from(tmp_path: Path, version: str) -> Path:
    specs = tmp_path / "specs"
    specs.mkdir()
    text = (SPECS / LOCK_NAME).read_text(encoding="utf-8").replace(f"{CLIENT}=={client_version()}:", f"{CLIENT}=={version}:")
    (specs / LOCK_NAME).write_text(text, encoding="utf-8")
    return specs


def test_a_lock_from_another_client_is_one_line_naming_both_versions(tmp_path: Path) -> None:
    assert client_problems(SPECS) == []
    (line,) = client_problems(_specs_locked_from(tmp_path, "2.190.0"))
    assert f"{CLIENT}==2.190.0" in line and client_version() in line and "kccgen update-specs" in line and LOCK_NAME in line


@pytest.mark.parametrize("command", ["check", "generate"])
def test_check_and_generate_refuse_a_moved_pin_before_reading_anything(tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]) -> None:
    specs = _specs_locked_from(tmp_path, "2.190.0")
    shutil.copytree(SPECS / "kinds", specs / "kinds")
    code = main(["--root", str(tmp_path), "--specs", str(specs), command])
    assert code == (1 if command == "check" else 2)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "2.190.0" in err[0], err
    assert not (tmp_path / "generated").exists()  # nothing written


def test_the_stamp_depends_on_the_client_version_and_the_unit_memo_does_not(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stamp (make check) sees a moved pin; the memo and render cache, salted
    with the code digest, do not: units are keyed by their documents' bytes, so a
    bump rebuilds only the APIs whose documents changed (issue 28, point 6)."""
    before, code = stamp.inputs_digest(SPECS), stamp.code_digest()
    real = stamp.version
    monkeypatch.setattr(stamp, "version", lambda name: "9.9.9" if name == CLIENT else real(name))
    assert stamp.inputs_digest(SPECS) != before
    assert stamp.code_digest() == code
