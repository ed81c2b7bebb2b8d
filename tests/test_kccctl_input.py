"""kccctl's input and state, tried as a new user would (issue 27, point 6): an
unwritable state directory is one line before any GCP call, and a state write
that fails after a GCP write names the file and the resource, which the next
apply finds; no objects is kubectl's "no objects passed to apply"; objects over
Kubernetes' 3 MiB are refused by name; a client dry run needs no credentials
and opens no socket; ``get`` says "No resources found", prints
``kind.group/name`` and takes the CRDs' category; ``--version``."""

from __future__ import annotations

import errno
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kccgen.mockgcp import MockServer
from kccgen.runtime.cli import main
from kccgen.runtime.manifests import (
    MAX_DOCUMENT_CHARS,
    MAX_OBJECT_BYTES,
    ManifestError,
    load_manifests,
    serialized_size,
)
from kccgen.runtime.registry import kind_index
from kccgen.runtime.state import StateDir
from tests.conftest import REPO


def _topic(name: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "pubsub.cnrm.cloud.google.com/v1beta1", "kind": "PubSubTopic", "metadata": {"name": name, **extra}, "spec": {"labels": {"team": "a"}}}


def _channel(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "monitoring.cnrm.cloud.google.com/v1beta1",
        "kind": "MonitoringNotificationChannel",
        "metadata": {"name": name},
        "spec": {"type": "email", "displayName": name, "labels": {"email_address": f"{name}@example.com"}},
    }


def _write(path: Path, *docs: dict[str, Any]) -> Path:
    """A YAML stream of the documents (JSON is YAML: quick to write when large)."""
    path.write_text("\n---\n".join(json.dumps(d) for d in docs) + "\n", encoding="utf-8")
    return path


def _main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _on(s: MockServer, state: Path) -> list[str]:
    return ["--state", str(state), "--endpoint", s.base_url, "--host-paths", "--project", "p"]


def _writes(s: MockServer) -> list[str]:
    return [f"{e.method} {e.url}" for e in s.log if e.method != "GET"]


def _resources(s: MockServer, collection: str) -> list[str]:
    """The names of the project's topics or notification channels in mockgcp."""
    if collection == "topics":
        return [t["name"] for t in s.client("pubsub").projects().topics().list(project="projects/p").execute().get("topics") or []]
    return [c["name"] for c in s.client("monitoring").projects().notificationChannels().list(name="projects/p").execute().get("notificationChannels") or []]


# --- 1. the state directory -----------------------------------------------------------


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory another user can enter (pytest's tmp_path is root's alone)."""
    d = Path(tempfile.mkdtemp(prefix="kccctl-input-"))
    d.chmod(0o777)
    yield d
    for p in [d, *d.rglob("*")]:
        if p.is_dir() and not p.is_symlink():
            p.chmod(0o777)
    shutil.rmtree(d, ignore_errors=True)


def _as_other_user() -> list[str]:
    """The command prefix that runs kccctl as a user the mode bits bind (root ignores them)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: no user that mode bits bind")
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]


def _layout(d: Path, how: str) -> tuple[Path, str]:
    """A state directory that cannot be written, and the path the error must name."""
    if how == "under a file":
        (d / "file").write_text("", encoding="utf-8")
        return d / "file" / "state", str(d / "file" / "state")
    if how == "Kind folder is a file":
        (d / "state" / "default").mkdir(parents=True)
        (d / "state" / "default" / "PubSubTopic").write_text("", encoding="utf-8")
        return d / "state", str(d / "state" / "default" / "PubSubTopic")
    state = d / "state"
    (state / "default" / "PubSubTopic").mkdir(parents=True)
    for p in [state, *state.rglob("*")]:
        p.chmod(0o777)
    if how == "read-only state directory":
        (state / ".lock").touch(mode=0o666)
        (state / ".lock").chmod(0o666)
        state.chmod(0o555)
        return state, str(state)
    (state / "default" / "PubSubTopic").chmod(0o555)  # read-only Kind folder
    return state, str(state / "default" / "PubSubTopic")


@pytest.mark.parametrize("how", ["under a file", "Kind folder is a file", "read-only state directory", "read-only Kind folder"])
def test_an_unwritable_state_directory_is_one_line_naming_it_before_any_gcp_call(shared_dir: Path, how: str) -> None:
    state, named = _layout(shared_dir, how)
    manifest = _write(shared_dir / "m.yaml", _topic("t"), _channel("ops"))
    manifest.chmod(0o644)
    prefix = _as_other_user() if how.startswith("read-only") else []
    with MockServer() as s:
        r = subprocess.run(
            [*prefix, sys.executable, "-m", "kccgen.runtime.cli", "apply", "-f", str(manifest), "--state", str(state), "--endpoint", s.base_url, "--host-paths", "--project", "p"],
            cwd=REPO, capture_output=True, text=True, check=False, timeout=120, env={**os.environ, "HOME": str(shared_dir)},
        )
        assert r.returncode == 2, r.stdout + r.stderr
        assert "Traceback" not in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
        assert r.stderr.startswith("error: ") and named in r.stderr, r.stderr
        assert list(s.log) == []  # not one GCP call


def _failing_writes(monkeypatch: pytest.MonkeyPatch, fails: Any) -> list[Path]:
    """StateDir.write raising ENOSPC for the objects ``fails`` picks (a disk that
    filled up between the check and the write); returns the files it refused."""
    refused: list[Path] = []
    real = StateDir.write

    def write(self: StateDir, obj: Any) -> bool:
        if fails(obj):
            refused.append(self.path(obj))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.path(obj)))
        return real(self, obj)

    monkeypatch.setattr(StateDir, "write", write)
    return refused


@pytest.mark.parametrize(
    ("obj", "collection"),
    [(_topic("t"), "topics"), (_channel("ops"), "notificationChannels")],
    ids=["user-chosen ID", "service-assigned ID"],
)
def test_a_state_write_failing_after_the_gcp_write_names_file_and_resource_and_the_next_apply_finds_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, obj: dict[str, Any], collection: str
) -> None:
    manifest = _write(tmp_path / "m.yaml", obj, _topic("zz"))  # zz: reconciled after it
    state = tmp_path / "st"
    name = obj["metadata"]["name"]
    with MockServer() as s:
        # Fails only once the resource exists (status.externalRef): the intent
        # recorded before a create the service names is written.
        with monkeypatch.context() as m:
            refused = _failing_writes(m, lambda o: o["metadata"]["name"] == name and (o.get("status") or {}).get("externalRef"))
            code, out, err = _main(capsys, "apply", "-f", str(manifest), *_on(s, state), "--workers", "1")
        assert code == 1 and "Traceback" not in err, out + err
        [line] = [x for x in out.splitlines() if x.startswith(f"{obj['kind']}/{name}:")]
        [ext] = [x.split()[-1] for x in out.splitlines() if x.split()[:4] == [obj["kind"], name, "False", "StateWriteFailed"]]
        assert f"/{collection}/" in ext and ext in line and str(refused[0]) in line and "No space left on device" in line, line
        assert _resources(s, collection) == [ext]
        # The run stops writing to GCP: the next object is not reconciled.
        assert "PubSubTopic/zz: not reconciled" in out and not any("/topics/zz" in w for w in _writes(s))
        code, out, err = _main(capsys, "apply", "-f", str(manifest), *_on(s, state))
        assert code == 0, out + err
        assert [x.split()[-1] for x in out.splitlines() if x.split()[:2] == [obj["kind"], name]] == [ext]
        assert _resources(s, collection) == [ext] if collection != "topics" else sorted(_resources(s, collection)) == [ext, "projects/p/topics/zz"]
        assert (yaml.safe_load(refused[0].read_text(encoding="utf-8"))["status"])["externalRef"] == ext  # recorded now


def test_an_intent_that_cannot_be_recorded_sends_no_create(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    manifest = _write(tmp_path / "m.yaml", _channel("ops"))
    with MockServer() as s:
        refused = _failing_writes(monkeypatch, lambda o: True)
        code, out, err = _main(capsys, "apply", "-f", str(manifest), *_on(s, tmp_path / "st"))
        assert code == 1 and "Traceback" not in err
        assert f"MonitoringNotificationChannel/ops: its state file {refused[0]} could not be written" in out and "nothing was sent to GCP" in out
        assert _writes(s) == [] and _resources(s, "notificationChannels") == []


# --- 2. no objects ------------------------------------------------------------------------


@pytest.mark.parametrize("verb", ["apply", "delete", "diff"])
@pytest.mark.parametrize("given", ["empty file", "comments only", "document markers only", "folder without manifests", "empty stdin"])
def test_no_objects_is_exit_1_as_kubectl_says(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, verb: str, given: str) -> None:
    target = tmp_path / "m.yaml"
    if given == "empty file":
        target.write_text("", encoding="utf-8")
    elif given == "comments only":
        target.write_text("# nothing yet\n", encoding="utf-8")
    elif given == "document markers only":
        target.write_text("---\n---\n", encoding="utf-8")
    elif given == "folder without manifests":
        target = tmp_path / "dir"
        target.mkdir()
        (target / "README.md").write_text("not a manifest\n", encoding="utf-8")
    else:
        monkeypatch.setattr("sys.stdin", io.StringIO(""))
        target = Path("-")
    code, out, err = _main(capsys, verb, "-f", str(target), "--state", str(tmp_path / "st"), "--endpoint", "http://127.0.0.1:9")
    assert (code, out, err) == (1, "", f"error: no objects passed to {verb}\n")


# --- 3. size ------------------------------------------------------------------------------


def _padded(name: str, size: int) -> dict[str, Any]:
    """A topic whose compact JSON is exactly ``size`` bytes (an annotation pads it)."""
    obj = _topic(name, annotations={"pad": ""})
    obj["metadata"]["annotations"]["pad"] = "x" * (size - serialized_size(obj))
    assert serialized_size(obj) == size
    return obj


def test_an_object_over_3_mib_is_refused_by_file_and_name_before_any_gcp_call(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ok = _write(tmp_path / "ok.yaml", _padded("at-limit", MAX_OBJECT_BYTES))
    assert [o["metadata"]["name"] for o in load_manifests([ok])] == ["at-limit"]
    manifest = _write(tmp_path / "m.yaml", _topic("small"), _padded("big", MAX_OBJECT_BYTES + 1))
    with MockServer() as s:
        code, out, err = _main(capsys, "apply", "-f", str(manifest), *_on(s, tmp_path / "st"))
        assert code == 2 and out == "", out
        assert err == f"error: {manifest}#1: PubSubTopic 'big' is over 3,145,728 bytes serialized (3 MiB, the largest object Kubernetes stores): refused\n"
        assert list(s.log) == [] and not (tmp_path / "st").exists()


def test_an_alias_that_expands_past_3_mib_is_refused(tmp_path: Path) -> None:
    """A 1 MiB string named four times: a 1 MiB file, a 4 MiB object."""
    text = (
        "apiVersion: pubsub.cnrm.cloud.google.com/v1beta1\nkind: PubSubTopic\n"
        f"metadata:\n  name: t\n  annotations: {{a: &s {'y' * (1 << 20)}, b: *s, c: *s, d: *s}}\n"
    )
    (tmp_path / "m.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(ManifestError, match=r"m\.yaml#0: PubSubTopic 't' is over 3,145,728 bytes"):
        load_manifests([tmp_path / "m.yaml"])


def test_a_document_too_long_for_any_object_is_refused_before_parsing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What we chose for files: read a document at a time, and refuse one longer
    than four times the object limit without parsing it; a file of many
    ordinary documents, however long, is read."""
    import kccgen.runtime.manifests as manifests

    parsed: list[int] = []
    real = manifests.yaml.load_all
    monkeypatch.setattr(manifests.yaml, "load_all", lambda text, Loader: (parsed.append(len(text)), real(text, Loader=Loader))[1])
    huge = tmp_path / "huge.yaml"
    with huge.open("w", encoding="utf-8") as f:
        f.write(yaml.safe_dump(_topic("first")) + "---\n")
        f.write(f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\ndata: {{a: {'z' * (MAX_DOCUMENT_CHARS + 10)}}}\n")
    with pytest.raises(ManifestError, match=rf"huge\.yaml#1: document over {MAX_DOCUMENT_CHARS:,} characters, refused before parsing"):
        load_manifests([huge])
    assert max(parsed) < 1000  # only the first, small document was parsed
    many = _write(tmp_path / "many.yaml", *[_padded(f"t{i}", MAX_OBJECT_BYTES // 2) for i in range(10)])
    assert many.stat().st_size > MAX_DOCUMENT_CHARS
    assert len(load_manifests([many])) == 10


# --- 4. client dry run --------------------------------------------------------------------


def test_client_dry_run_needs_no_credentials_and_opens_no_connection(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import google.auth

    for var in ("GOOGLE_APPLICATION_CREDENTIALS", "CLOUDSDK_CONFIG", "GOOGLE_CLOUD_PROJECT", "GCE_METADATA_HOST", "GCE_METADATA_IP"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    tried: list[str] = []

    def refuse(what: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            tried.append(f"{what} {args[1:2] or args[:1]}")
            raise OSError(errno.ENETUNREACH, f"test: no network ({what})")

        return call

    monkeypatch.setattr(socket.socket, "connect", refuse("connect"))
    monkeypatch.setattr(socket.socket, "connect_ex", refuse("connect_ex"))
    monkeypatch.setattr(socket, "create_connection", refuse("create_connection"))
    monkeypatch.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))
    monkeypatch.setattr(google.auth, "default", refuse("google.auth.default"))
    manifest = _write(tmp_path / "m.yaml", _topic("t"), _channel("ops"))
    code, out, err = _main(capsys, "apply", "--dry-run=client", "-f", str(manifest), "--state", str(tmp_path / "st"))
    assert code == 0 and [x.split()[3] for x in out.splitlines()[1:]] == ["Valid", "Valid"], out + err
    code, out, err = _main(capsys, "delete", "--dry-run=client", "-f", str(manifest), "--state", str(tmp_path / "st"))
    assert code == 0 and "would delete the resource of PubSubTopic default/t (client dry run: nothing sent)" in out, out + err
    assert tried == []


# --- 5-7. get -----------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "said"), [([], "No resources found in default namespace.\n"), (["-n", "team-a"], "No resources found in team-a namespace.\n"), (["-A"], "No resources found\n")])
def test_get_without_objects_says_no_resources_found(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], said: str) -> None:
    for kind in ("pubsubtopics", "gcp"):
        assert _main(capsys, "get", kind, "--state", str(tmp_path / "none"), *args) == (0, "", said)


@pytest.fixture
def stored(tmp_path: Path) -> Path:
    """A state directory with a topic and a channel in default, a topic in team-a."""
    state = StateDir(tmp_path / "st")
    for obj, ns in ((_topic("t"), "default"), (_channel("ops"), "default"), (_topic("u"), "team-a")):
        obj["metadata"]["namespace"] = ns
        obj["status"] = {"conditions": [{"type": "Ready", "status": "True", "reason": "UpToDate", "message": "ok"}]}
        state.write(obj)
    return state.root


def test_get_o_name_is_kind_dot_group_slash_name(stored: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _main(capsys, "get", "pubsubtopic", "-o", "name", "--state", str(stored))[1] == "pubsubtopic.pubsub.cnrm.cloud.google.com/t\n"
    assert _main(capsys, "get", "PubSubTopic/t", "-o", "name", "--state", str(stored))[1] == "pubsubtopic.pubsub.cnrm.cloud.google.com/t\n"


def test_get_takes_the_category_the_crds_declare_and_lists_every_kind(stored: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kccgen.runtime.get import categories

    # The categories are the CRDs' own: read a few whole, as the API server would.
    for kind in ("PubSubTopic", "MonitoringNotificationChannel", next(iter(kind_index()))):
        crd = yaml.safe_load((REPO / "generated" / kind_index()[kind]["crd"]).read_text(encoding="utf-8"))
        for category in crd["spec"]["names"]["categories"]:
            assert kind in categories()[category]
    assert set(categories()["gcp"]) == set(kind_index())
    code, out, _ = _main(capsys, "get", "gcp", "-o", "name", "--state", str(stored))
    assert (code, out) == (0, "monitoringnotificationchannel.monitoring.cnrm.cloud.google.com/ops\npubsubtopic.pubsub.cnrm.cloud.google.com/t\n")
    code, out, _ = _main(capsys, "get", "gcp", "-A", "-o", "name", "--state", str(stored))
    assert out.splitlines()[-1] == "pubsubtopic.pubsub.cnrm.cloud.google.com/u" and len(out.splitlines()) == 3
    code, out, _ = _main(capsys, "get", "gcp", "--state", str(stored))
    tables = out.split("\n\n")
    assert code == 0 and len(tables) == 2 and all(t.startswith("NAME ") for t in tables)
    assert "monitoringnotificationchannel.monitoring.cnrm.cloud.google.com/ops   True" in tables[0] and "pubsubtopic.pubsub.cnrm.cloud.google.com/t " in tables[1]
    code, _, err = _main(capsys, "get", "gcpp", "--state", str(stored))
    assert code == 2 and "unknown Kind 'gcpp'" in err


# --- 8. --version ---------------------------------------------------------------------------


def test_version_is_one_line_with_the_package_version_and_the_generated_tree() -> None:
    from importlib import metadata

    r = subprocess.run([sys.executable, "-m", "kccgen.runtime.cli", "--version"], cwd=REPO, capture_output=True, text=True, check=False, timeout=60)
    stamp = (REPO / "generated" / ".kccgen-stamp").read_text(encoding="utf-8")
    digest = next(x.split()[1] for x in stamp.splitlines() if x.startswith("outputs "))
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    assert r.stdout == f"kccctl {metadata.version('kccgen')} (generated tree {digest[:12]}, {len(kind_index())} Kinds)\n"


def test_unwritable_state_check_leaves_nothing_behind(tmp_path: Path) -> None:
    """The check writes a probe in each folder and removes it; it makes no folder."""
    state = StateDir(tmp_path / "st")
    (tmp_path / "st").mkdir()
    state.check_writable([_topic("t", namespace="default")])
    assert [p.name for p in (tmp_path / "st").iterdir()] == []
