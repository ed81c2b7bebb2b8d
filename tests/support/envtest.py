"""An envtest-style API server for the tests: ``../shared/tools/envtest``.

The session fixture ``envtest`` starts etcd and the CRD-only API server from
``$KUBEBUILDER_ASSETS`` (``make envtest`` builds them; default
``$HOME/.cache/kccgen-envtest/bin``) with the tools' ``start.sh``, yields a
:class:`Kube` that runs kubectl against it, and stops it with ``stop.sh``.
Without the assets the tests skip with the reason, except under
``KCCGEN_CI=1``, where a missing toolchain is a failure: CI must not pass
because nothing ran.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# The same folder `make envtest` builds with (its ENVTEST_TOOLS); ../shared by default.
TOOLS = Path(os.environ.get("KCCGEN_ENVTEST_TOOLS") or Path(__file__).resolve().parents[3] / "shared" / "tools" / "envtest")
DEFAULT_ASSETS = Path.home() / ".cache" / "kccgen-envtest" / "bin"


def assets() -> Path:
    """Where the binaries are: ``$KUBEBUILDER_ASSETS``, else build.sh's default cache."""
    env = os.environ.get("KUBEBUILDER_ASSETS")
    return Path(env) if env else DEFAULT_ASSETS


def missing() -> str | None:
    """Why the server cannot start here, or None when it can."""
    if not (TOOLS / "start.sh").is_file():
        return f"{TOOLS}/start.sh not found"
    for binary in ("etcd", "crd-apiserver", "kubectl"):
        if not os.access(assets() / binary, os.X_OK):
            return f"envtest asset {assets() / binary} missing (run `make envtest`)"
    return None


def require() -> None:
    """Skip (locally) or fail (``KCCGEN_CI=1``) when the assets are missing."""
    why = missing()
    if why is None:
        return
    if os.environ.get("KCCGEN_CI"):
        pytest.fail(f"KCCGEN_CI=1 and {why}", pytrace=False)
    pytest.skip(why)


@dataclass(frozen=True)
class Kube:
    """kubectl bound to one server; ``cache`` keeps discovery per session."""

    kubeconfig: Path
    cache: Path

    def kubectl(self, *args: str, stdin: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        cmd = [str(assets() / "kubectl"), "--kubeconfig", str(self.kubeconfig), "--cache-dir", str(self.cache), *args]
        return subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=timeout, check=False)

    def apply(self, obj: dict[str, Any], manager: str = "kccgen-test") -> subprocess.CompletedProcess[str]:
        """Server-side apply of one object. Retried while the server's discovery
        does not know the Kind yet (it is updated asynchronously after Established)."""
        deadline = time.monotonic() + 10
        while True:
            out = self.kubectl("apply", "--server-side", f"--field-manager={manager}", "-f", "-", stdin=json.dumps(obj))
            unknown = "no matches for kind" in out.stderr or "the server could not find the requested resource" in out.stderr
            if out.returncode == 0 or not unknown or time.monotonic() > deadline:
                return out
            time.sleep(0.2)
            self.kubectl("api-resources", "--cached=false", "-o", "name")

    def apply_files(self, files: list[Path], jobs: int = 4, timeout: float = 600) -> str:
        """Server-side apply of many files in ``jobs`` concurrent kubectl calls (the server
        takes ~30 ms per CRD, one request at a time per call: 1,000 CRDs took 30 s in one
        call, 18 s in four). Returns kubectl's combined errors."""
        base = [str(assets() / "kubectl"), "--kubeconfig", str(self.kubeconfig), "--cache-dir", str(self.cache)]
        procs = []
        for chunk in (files[i::jobs] for i in range(jobs)):
            if chunk:
                args = [*base, "apply", "--server-side", "--field-manager=kccgen-test"]
                args += [a for f in chunk for a in ("-f", str(f))]
                procs.append(subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
        return "".join(p.communicate(timeout=timeout)[1] for p in procs)

    def established(self, names: set[str], timeout: float = 180) -> dict[str, bool]:
        """Whether each CRD the server holds is Established, once all of ``names`` it holds
        are (or ``timeout`` passes). One list per poll, not a watch per CRD, printed as
        name and condition only: the full list of 1,000 CRDs is 50 MB of JSON."""
        # No filter: a CRD's conditions are null until the server has looked at it,
        # and a jsonpath filter fails on null.
        path = '{range .items[*]}{.metadata.name}{" "}{range .status.conditions[*]}{.type}={.status}{","}{end}{"\\n"}{end}'
        deadline = time.monotonic() + timeout
        while True:
            out = self.kubectl("get", "crd", "-o", f"jsonpath={path}")
            assert out.returncode == 0, out.stderr[:2000]
            lines = (line.partition(" ") for line in out.stdout.splitlines())
            crds = {name: "Established=True," in conds for name, _, conds in lines}
            if all(crds[n] for n in names & set(crds)) or time.monotonic() > deadline:
                return crds
            time.sleep(1)

    def get_json(self, *args: str) -> Any:
        out = self.kubectl("get", *args, "-o", "json")
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)


@contextlib.contextmanager
def running(work: Path, server_args: str = "") -> Iterator[Kube]:
    """An API server in ``work`` (about 1 s to start), stopped on exit.
    ``server_args``: ENVTEST_APISERVER_ARGS (``--core-api``, audit flags).
    ``ENVTEST_WATCH_PID`` makes start.sh's watchdog stop it if pytest dies."""
    require()
    env = dict(os.environ, KUBEBUILDER_ASSETS=str(assets()), ENVTEST_WATCH_PID=str(os.getpid()))
    if server_args:
        env["ENVTEST_APISERVER_ARGS"] = server_args
    started = subprocess.run(
        [str(TOOLS / "start.sh"), str(work)], env=env, capture_output=True, text=True, timeout=180, check=False
    )
    if started.returncode != 0:
        pytest.fail(f"envtest start.sh failed:\n{started.stderr}", pytrace=False)
    try:
        yield Kube(Path(started.stdout.strip().splitlines()[-1]), work / "kubectl-cache")
    finally:
        subprocess.run([str(TOOLS / "stop.sh"), str(work)], capture_output=True, text=True, timeout=60, check=False)


@pytest.fixture(scope="session")
def envtest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kube]:
    """A running API server for the session; stopped at the end."""
    with running(tmp_path_factory.mktemp("envtest")) as kube:
        yield kube
