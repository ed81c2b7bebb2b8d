"""The wheel works outside the checkout: build it, install it in a fresh venv, run the three commands.

The source is copied to a temporary directory first (no checkout files can
leak in), the wheel is installed with ``--no-deps`` into a new venv, and the
commands run from an empty working directory. The new venv borrows the
third-party dependencies from this test environment through a ``.pth`` line
(no network, seconds instead of a minute); that path holds no kccgen code,
since the editable install's import hook is only activated by a ``.pth`` file
of its own, which ``site`` does not read from an added directory.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from kccgen.runtime.registry import types_modules
from tests.support.cli import REPO
from tests.support.kinds import POLICY_KINDS

_IGNORE = shutil.ignore_patterns(
    ".git", ".venv", "__pycache__", "build", "dist", "*.egg-info", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", "tests", ".kccctl-state"
)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(venv bin dir, an empty working directory outside the checkout)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    shutil.copytree(REPO, src, ignore=_IGNORE)
    dist = tmp / "dist"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet"]
    subprocess.run([*pip, "wheel", "--no-deps", "-w", str(dist), str(src)], check=True, capture_output=True, timeout=600)
    (wheel,) = dist.glob("kccgen-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], check=True, capture_output=True, text=True).stdout.strip()
    (Path(site) / "borrowed-deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    subprocess.run([*pip, "--python", str(py), "install", "--no-deps", str(wheel)], check=True, capture_output=True, timeout=600)
    work = tmp / "work"
    work.mkdir()
    yield venv / "bin", work


def _run(bin_dir: Path, work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(work)}
    return subprocess.run([str(bin_dir / args[0]), *args[1:]], cwd=work, env=env, capture_output=True, text=True, timeout=300, check=False)


def test_wheel_has_only_the_kccgen_import_name(installed: tuple[Path, Path]) -> None:
    bin_dir, work = installed
    (wheel,) = (bin_dir.parent.parent / "dist").glob("kccgen-*.whl")
    tops = {name.split("/", 1)[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"kccgen"}
    names = zipfile.ZipFile(wheel).namelist()
    assert "kccgen/specs/discovery/pubsub.v1.json" in names
    assert "kccgen/templates/<kind>_adapter.py.j2" in names
    # Data files of the code packages too: every data file under a package folder is in the wheel.
    for folder, package in (("mockgcp", "kccgen/mockgcp"), ("generator", "kccgen/generator")):
        for data in (REPO / folder).rglob("*.yaml"):
            assert f"{package}/{data.relative_to(REPO / folder).as_posix()}" in names, data
    assert any(n.startswith("kccgen/generated/crds/") for n in names)
    r = _run(bin_dir, work, "python", "-c", "import kccgen.generator, kccgen.runtime; print(kccgen.generator.__file__)")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(str(bin_dir.parent)), r.stdout  # the installed copy, not the checkout


def test_kccgen_kinds_from_the_installed_specs(installed: tuple[Path, Path]) -> None:
    bin_dir, work = installed
    r = _run(bin_dir, work, "kccgen", "kinds", "--plain")
    assert r.returncode == 0, r.stderr
    listed = {line.split()[0] for line in r.stdout.splitlines()[1:] if line and not line.startswith(("asset-table", " "))}
    assert listed == set(types_modules()) - POLICY_KINDS, r.stdout  # resource Kinds; `kccctl kinds` has the IAM Kinds too


def test_mockgcp_serve_and_one_kccctl_apply(installed: tuple[Path, Path]) -> None:
    bin_dir, work = installed
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(work)}
    mock = subprocess.Popen(
        [str(bin_dir / "mockgcp"), "serve", "--port", "0"], cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert mock.stdout is not None
        first = mock.stdout.readline()
        assert first.startswith("mockgcp listening on http://127.0.0.1:"), first + (mock.stderr.read() if mock.poll() is not None and mock.stderr else "")
        url = first.split()[-1]
        (work / "topic.yaml").write_text(
            "apiVersion: pubsub.cnrm.cloud.google.com/v1beta1\nkind: PubSubTopic\n"
            "metadata: {name: wheel-topic}\nspec: {labels: {origin: wheel}}\n"
        )
        r = _run(bin_dir, work, "kccctl", "apply", "-f", "topic.yaml", "--endpoint", url, "--project", "wheel-project", "--state", "state")
        assert r.returncode == 0, r.stdout + r.stderr
        assert "projects/wheel-project/topics/wheel-topic" in r.stdout
        got = _run(bin_dir, work, "kccctl", "get", "PubSubTopic", "wheel-topic", "-o", "yaml", "--state", "state")
        assert got.returncode == 0 and "UpToDate" in got.stdout, got.stdout + got.stderr
        # kccctl hands `mockgcp` over to the emulator's own command.
        h = _run(bin_dir, work, "kccctl", "mockgcp", "serve", "--help")
        assert h.returncode == 0 and "--faults" in h.stdout, h.stdout + h.stderr
    finally:
        mock.terminate()
        out, err = mock.communicate(timeout=30)
    assert mock.returncode == 0, err
    assert "mockgcp stopped" in out
