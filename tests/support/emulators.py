"""Google's own emulators as test peers for mockgcp, and recording their traffic.

``find_pubsub_emulator()`` locates the Pub/Sub emulator that ships with the
Cloud SDK (``platform/pubsub-emulator/bin/cloud-pubsub-emulator``, a launcher
for a Java jar) and Java; ``PubSubEmulator`` runs it on 127.0.0.1 in its own
process group and kills that group on ``stop()``. The launcher is started
directly rather than through ``gcloud beta emulators pubsub start``: same
process in the end (gcloud only resolves the SDK root and ``exec``s the same
script with ``--host``/``--port``), without gcloud's Python start-up or its
writes to the user's gcloud configuration directory.

``RecordingHttp`` is an ``httplib2.Http`` that records every exchange as an
``HttpLogEntry``, so traffic to any server can be compared with mockgcp's
request log and with Config Connector's ``_http.log`` recordings.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import httplib2

from kccgen.mockgcp.httplog import HttpLogEntry

#: Overrides the search: the path of a ``cloud-pubsub-emulator`` launcher.
PUBSUB_EMULATOR_ENV = "KCCGEN_PUBSUB_EMULATOR"
_LAUNCHER = Path("platform", "pubsub-emulator", "bin", "cloud-pubsub-emulator")
_SDK_ROOTS = (
    "/usr/lib/google-cloud-sdk",
    "/usr/share/google-cloud-sdk",
    "/opt/google-cloud-sdk",
    "/snap/google-cloud-cli/current",
    "~/google-cloud-sdk",
)


@dataclass(frozen=True)
class EmulatorLookup:
    """Where the emulator is, or what is missing (``launcher`` is None then)."""

    launcher: Path | None
    java: str | None
    missing: str = ""


def _sdk_roots() -> list[Path]:
    roots: list[Path] = []
    if os.environ.get("CLOUDSDK_ROOT_DIR"):
        roots.append(Path(os.environ["CLOUDSDK_ROOT_DIR"]))
    gcloud = shutil.which("gcloud")
    if gcloud:  # <root>/bin/gcloud, often behind a /usr/bin symlink
        roots.append(Path(gcloud).resolve().parent.parent)
    roots.extend(Path(p).expanduser() for p in _SDK_ROOTS)
    out: list[Path] = []
    for r in roots:
        if r not in out:
            out.append(r)
    return out


def find_java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home:  # the launcher prefers $JAVA_HOME/bin/java too
        java = Path(home, "bin", "java")
        return str(java) if os.access(java, os.X_OK) else None
    return shutil.which("java")


def find_pubsub_emulator() -> EmulatorLookup:
    """The Pub/Sub emulator launcher and Java, or a sentence naming what is missing."""
    java = find_java()
    override = os.environ.get(PUBSUB_EMULATOR_ENV)
    candidates = [Path(override)] if override else [root / _LAUNCHER for root in _sdk_roots()]
    launcher = next((c for c in candidates if c.is_file() and os.access(c, os.X_OK)), None)
    if launcher is None:
        where = ", ".join(str(c) for c in candidates)
        hint = "" if shutil.which("gcloud") else " (no gcloud on PATH)"
        return EmulatorLookup(
            None,
            java,
            f"no cloud-pubsub-emulator launcher{hint}; looked for {where}; install the "
            "'pubsub-emulator' gcloud component (apt: google-cloud-cli-pubsub-emulator) "
            f"or set {PUBSUB_EMULATOR_ENV}",
        )
    if java is None:
        why = (
            "JAVA_HOME/bin/java is not executable"
            if os.environ.get("JAVA_HOME")
            else "no 'java' on PATH"
        )
        return EmulatorLookup(None, None, f"{why}; {launcher} needs a Java runtime (JRE 11+)")
    return EmulatorLookup(launcher, java)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class EmulatorError(RuntimeError):
    """The emulator did not come up (its output is in the message)."""


class PubSubEmulator:
    """The Pub/Sub emulator on 127.0.0.1:``port``, in a process group of its own."""

    def __init__(self, launcher: Path, port: int, output: Path, project: str | None = None) -> None:
        self.launcher = launcher
        self.port = port
        self.output = output
        self.project = project
        self.proc: subprocess.Popen[bytes] | None = None
        self._out: IO[bytes] | None = None
        self.startup_seconds: float | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def command(self) -> list[str]:
        cmd = [str(self.launcher), "--host=127.0.0.1", f"--port={self.port}"]
        if self.project:
            cmd.append(f"--projects={self.project}")
        # Linux: the emulator gets SIGTERM if pytest dies without running the
        # fixture's teardown (the setting survives the launcher's exec of java).
        setpriv = shutil.which("setpriv")
        if setpriv and _setpriv_has_pdeathsig(setpriv):
            cmd = [setpriv, "--pdeathsig", "TERM", "--", *cmd]
        return cmd

    def start(self, timeout: float = 60.0) -> PubSubEmulator:
        """Start it and wait (at most ``timeout`` seconds) until it answers HTTP."""
        t0 = time.monotonic()
        self._out = self.output.open("wb")
        self.proc = subprocess.Popen(
            self.command(),
            stdin=subprocess.DEVNULL,
            stdout=self._out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stop() kills the lot
        )
        try:
            self._wait_ready(t0 + timeout)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - t0
        return self

    def _wait_ready(self, deadline: float) -> None:
        assert self.proc is not None
        while True:
            if self.proc.poll() is not None:
                raise EmulatorError(
                    f"the Pub/Sub emulator exited with status {self.proc.returncode}:\n{self.tail()}"
                )
            with (
                contextlib.suppress(OSError, urllib.error.URLError),
                urllib.request.urlopen(self.base_url, timeout=2) as r,  # answers "Ok"
            ):
                if r.status == 200:
                    return
            if time.monotonic() > deadline:
                raise EmulatorError(
                    f"the Pub/Sub emulator did not answer on {self.base_url} in time:\n{self.tail()}"
                )
            time.sleep(0.1)

    def tail(self, lines: int = 40) -> str:
        try:
            text = self.output.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no output)"
        return "\n".join(text.splitlines()[-lines:]) or "(no output)"

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM the process group, SIGKILL it after ``grace`` seconds, reap it."""
        proc, self.proc = self.proc, None
        if proc is not None:
            pgid = proc.pid  # start_new_session: the group is led by our child
            _signal_group(pgid, signal.SIGTERM)
            try:
                proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                _signal_group(pgid, signal.SIGKILL)
                proc.wait(timeout=grace)
            # Anything left in the group (there should be nothing): kill it too.
            deadline = time.monotonic() + grace
            while _group_alive(pgid) and time.monotonic() < deadline:
                _signal_group(pgid, signal.SIGKILL)
                time.sleep(0.05)
        if self._out is not None:
            self._out.close()
            self._out = None

    def __enter__(self) -> PubSubEmulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _setpriv_has_pdeathsig(setpriv: str) -> bool:
    try:
        r = subprocess.run(
            [setpriv, "--help"], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return "--pdeathsig" in r.stdout


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# --- recording ---------------------------------------------------------------------


class RecordingHttp(httplib2.Http):
    """An ``httplib2.Http`` that appends every exchange to ``log``.

    Entries use the ``_http.log`` layout's fields (see kccgen.mockgcp.httplog), with
    JSON bodies re-serialised sorted and indented like mockgcp's log.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.log: list[HttpLogEntry] = []

    def request(
        self,
        uri: str,
        method: str = "GET",
        body: Any = None,
        headers: Any = None,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        response, content = super().request(uri, method, body, headers, *args, **kwargs)
        req_text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        resp_text = content.decode("utf-8", "replace") if isinstance(content, bytes) else content
        self.log.append(
            HttpLogEntry(
                method=method,
                url=uri,
                request_headers=tuple(
                    sorted(
                        (str(k), str(v))
                        for k, v in (headers or {}).items()
                        if str(k).lower() == "content-type"
                    )
                ),
                request_body=_pretty(req_text),
                status=f"{response.status} {response.reason}".strip(),
                response_headers=tuple(
                    (k, v) for k, v in response.items() if k.lower() == "content-type"
                ),
                response_body=_pretty(resp_text),
            )
        )
        return response, content


def _pretty(text: str | None) -> str | None:
    if not text:
        return None
    try:
        return json.dumps(json.loads(text), indent=2, sort_keys=True)
    except json.JSONDecodeError:
        return text


STARTUP_TIMEOUT = 60.0


def running_pubsub_emulator(workdir: Path) -> Iterator[PubSubEmulator]:
    """Body of a module fixture: start the emulator or skip visibly, stop it after."""
    import pytest

    lookup = find_pubsub_emulator()
    if lookup.launcher is None:
        pytest.skip(f"Pub/Sub emulator not found: {lookup.missing}")
    emulator = PubSubEmulator(lookup.launcher, free_port(), workdir / "emulator.log")
    try:
        emulator.start(timeout=STARTUP_TIMEOUT)
    except EmulatorError as e:
        pytest.fail(f"{' '.join(emulator.command())}: {e}", pytrace=False)
    try:
        yield emulator
    finally:
        emulator.stop()
