"""The local runner's state directory: one kccctl at a time, names that cannot
escape it, unreadable files reported and left alone, nothing rewritten needlessly."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from kccgen.mockgcp import MockServer
from kccgen.runtime.gcp import Gcp
from kccgen.runtime.local import ManifestError, StateDir, StateLocked, apply, load_manifests
from tests.conftest import REPO


def _topic(name: str, ns: str = "default") -> dict[str, Any]:
    return {
        "apiVersion": "pubsub.cnrm.cloud.google.com/v1beta1",
        "kind": "PubSubTopic",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"labels": {"team": "a"}},
    }


def _kccctl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kccgen.runtime.cli", *args], cwd=REPO, capture_output=True, text=True, check=False, timeout=120)


@pytest.mark.parametrize(("name", "ns"), [("../../x", "default"), ("a/b", "default"), ("ok", "../up"), ("UPPER", "default"), (".hidden", "default")])
def test_a_name_or_namespace_that_kubernetes_refuses_is_refused_before_anything_is_written(tmp_path: Path, name: str, ns: str) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text(yaml.safe_dump(_topic(name, ns)), encoding="utf-8")
    with pytest.raises(ManifestError, match=r"m\.yaml#0: PubSubTopic .*RFC 1123"):
        load_manifests([manifest])
    state = StateDir(tmp_path / "state")
    with pytest.raises(ManifestError, match="RFC 1123"):
        state.path(_topic(name, ns))  # the store refuses it too, not only the loader
    r = _kccctl("apply", "-f", str(manifest), "--state", str(tmp_path / "state"), "--endpoint", "http://127.0.0.1:9")
    assert r.returncode == 2 and "RFC 1123" in r.stderr, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.yaml"]  # no state directory made


def test_a_second_kccctl_waits_or_fails_fast(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "state")
    with state.lock():
        with pytest.raises(StateLocked, match=r"in use by another kccctl \(pid \d+\)"), StateDir(tmp_path / "state").lock(wait=False):
            pass
        manifest = tmp_path / "m.yaml"
        manifest.write_text(yaml.safe_dump(_topic("t")), encoding="utf-8")
        r = _kccctl("apply", "--no-wait", "-f", str(manifest), "--state", str(tmp_path / "state"), "--endpoint", "http://127.0.0.1:9")
        assert r.returncode == 2 and "in use by another kccctl" in r.stderr, r.stderr
        # A waiting caller is told whom it waits for, and gets the lock once it is free.
        told: list[str] = []
        got = threading.Event()

        def waiter() -> None:
            with StateDir(tmp_path / "state").lock(notify=told.append):
                got.set()

        t = threading.Thread(target=waiter)
        t.start()
        time.sleep(0.3)
        assert not got.is_set() and told and "another kccctl" in told[0]
    t.join(10)
    assert got.is_set()


def test_unreadable_state_is_reported_and_left_alone_while_other_objects_proceed(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "state")
    with MockServer() as s:
        gcp = Gcp(s.base_url, host_paths=True)
        with state.lock():
            first = apply([_topic("good"), _topic("bad")], state, gcp, "p")
            apply([_topic("good")], state, gcp, "p")  # "created ..." becomes "... is up to date"
        assert all(r.ready for r, _ in first)
        bad = state.path(_topic("bad"))
        bad.write_text("kind: [unclosed", encoding="utf-8")
        leftover = bad.parent / ".good.yaml.abc123"  # an interrupted write's temp file
        leftover.write_text("partial", encoding="utf-8")
        good = state.path(_topic("good"))
        before = good.stat().st_mtime_ns
        with state.lock():
            rows = {r.name: r for r, _ in apply([_topic("good"), _topic("bad")], state, gcp, "p")}
        assert rows["good"].ready
        assert not rows["bad"].ready and rows["bad"].reason == "StateUnreadable" and str(bad) in rows["bad"].message
        assert bad.read_text(encoding="utf-8") == "kind: [unclosed"  # not overwritten
        assert state.problems and str(bad) in state.problems[0]
        assert not leftover.exists()
        assert good.stat().st_mtime_ns == before  # unchanged: not written again


def test_without_credentials_apply_says_so_in_one_line(tmp_path: Path) -> None:
    import os

    manifest = tmp_path / "m.yaml"
    manifest.write_text(yaml.safe_dump(_topic("t")), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("GOOGLE_APPLICATION_CREDENTIALS", "CLOUDSDK_CONFIG")}
    env.update(HOME=str(tmp_path), CLOUDSDK_CONFIG=str(tmp_path / "gcloud"), NO_GCE_CHECK="True")
    r = subprocess.run(
        [sys.executable, "-m", "kccgen.runtime.cli", "apply", "-f", str(manifest), "--state", str(tmp_path / "state")],
        cwd=REPO, capture_output=True, text=True, check=False, timeout=120, env=env,
    )
    assert r.returncode == 2, r.stderr
    assert "no Google credentials" in r.stderr and "--endpoint" in r.stderr and "Traceback" not in r.stderr


# The child's SIGINT as at an interactive shell. A child inherits an ignored SIGINT
# (a suite started in the background by a non-interactive shell, `make test &`:
# POSIX shells start background jobs with SIGINT ignored), and Python then
# installs no KeyboardInterrupt handler: the interrupt was ignored and the apply
# waited on the lock until communicate() timed out.
_WITH_SIGINT = "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); from kccgen.runtime.cli import run; sys.argv[0] = 'kccctl'; run()"


def _interrupt_waiting_apply(tmp_path: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Start an apply that waits on the held state lock, Ctrl-C it once it says so."""
    import signal

    manifest = tmp_path / "m.yaml"
    manifest.write_text(yaml.safe_dump(_topic("t")), encoding="utf-8")
    with StateDir(tmp_path / "state").lock():  # the apply waits on it: interrupt it there
        p = subprocess.Popen(
            [sys.executable, "-c", _WITH_SIGINT, "apply", "-f", str(manifest), "--state", str(tmp_path / "state"), "--endpoint", "http://127.0.0.1:9"],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
        assert p.stderr is not None
        line = p.stderr.readline()  # "waiting for ...": it is inside the command now
        assert "waiting for" in line, line
        p.send_signal(signal.SIGINT)
        try:
            _, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
            pytest.fail(f"still waiting 60 s after SIGINT: {err}")
    return p.returncode, err


def test_ctrl_c_is_one_line_and_exit_130(tmp_path: Path) -> None:
    code, err = _interrupt_waiting_apply(tmp_path)
    assert code == 130, err
    assert "interrupted" in err and "Traceback" not in err


def test_ctrl_c_just_before_the_lock_wait_still_ends_it(tmp_path: Path) -> None:
    """The race behind the Ctrl-C test's failures under load: SIGINT arriving after
    the "waiting for" line but before a blocking flock(2) starts is only acted on
    by Python when flock returns, when the other kccctl ends. A preloaded flock
    that sleeps first makes that window 300 ms wide: the signal always lands in
    it. The wait polls now, so the interrupt ends it at the next poll."""
    import os
    import shutil

    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the slow flock")
    src = tmp_path / "slowflock.c"
    src.write_text(
        "#define _GNU_SOURCE\n#include <dlfcn.h>\n#include <errno.h>\n#include <time.h>\n"
        "int flock(int fd, int op) {\n"
        "  static int (*real)(int, int);\n"
        "  if (!real) real = (int (*)(int, int))dlsym(RTLD_NEXT, \"flock\");\n"
        "  struct timespec t = {0, 300000000}, rest;\n"
        "  while (nanosleep(&t, &rest) == -1 && errno == EINTR) t = rest;\n"
        "  return real(fd, op);\n}\n",
        encoding="utf-8",
    )
    lib = tmp_path / "slowflock.so"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(lib), str(src), "-ldl"], check=True, capture_output=True, timeout=120)
    code, err = _interrupt_waiting_apply(tmp_path, env={**os.environ, "LD_PRELOAD": str(lib)})
    assert code == 130, err
    assert "interrupted" in err and "Traceback" not in err


def _namespace(name: str, **annotations: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "annotations": {f"cnrm.cloud.google.com/{k.replace('_', '-')}": v for k, v in annotations.items()}}}


def test_a_namespace_manifest_sets_the_project_and_pauses_as_in_config_connector(tmp_path: Path) -> None:
    from kccgen.runtime.local import delete

    manifest = tmp_path / "m.yaml"
    manifest.write_text(yaml.safe_dump_all([_topic("t", "team-a"), _namespace("team-a", project_id="proj-a"), _topic("u", "team-b"), _namespace("team-b", project_id="proj-b", actuation_mode="Paused")]), encoding="utf-8")
    objs = load_manifests([manifest])
    state = StateDir(tmp_path / "state")
    with MockServer() as s:
        gcp = Gcp(s.base_url, host_paths=True)
        with state.lock():
            rows = {(r.kind, r.name): r for r, _ in apply(objs, state, gcp)}  # no --project
        assert rows[("Namespace", "team-a")].ready and "project-id=proj-a" in rows[("Namespace", "team-a")].message
        assert rows[("PubSubTopic", "t")].external_ref == "projects/proj-a/topics/t", rows[("PubSubTopic", "t")].message
        assert rows[("PubSubTopic", "u")].reason == "Paused"
        assert not any("proj-b" in e.url for e in s.log)  # a paused namespace makes no GCP call
        with state.lock():
            [(row, _)] = delete([_namespace("team-a")], state, gcp)
        assert not row.ready and "still holds 1 object(s) (PubSubTopic/t)" in row.message
        with state.lock():
            rows2 = {(r.kind, r.name): r for r, _ in delete([o for o in objs if o["metadata"].get("namespace") in (None, "team-a") and o["metadata"]["name"] in ("t", "team-a")], state, gcp)}
        assert rows2[("PubSubTopic", "t")].ready and rows2[("Namespace", "team-a")].ready  # the topic first, then its namespace
        assert not (tmp_path / "state" / "_cluster" / "Namespace" / "team-a.yaml").exists()


def test_a_namespace_manifest_is_checked(tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text(yaml.safe_dump(_namespace("Team_A")), encoding="utf-8")
    with pytest.raises(ManifestError, match=r"m\.yaml#0: Namespace 'Team_A': metadata.name 'Team_A' is not a valid namespace"):
        load_manifests([manifest])
    bad = _namespace("ok")
    bad["apiVersion"] = "v2"
    manifest.write_text(yaml.safe_dump(bad), encoding="utf-8")
    with pytest.raises(ManifestError, match="apiVersion must be v1"):
        load_manifests([manifest])
