"""Issue 29, point 3 on the command line: SQLUser's ``password`` and ComputeDisk's
``diskEncryptionKey.rawKey`` read from a v1 Secret by ``kccctl apply`` on mockgcp.

The value reaches the request body and nowhere else: not the state directory,
kccctl's output and log, ``kccctl get -o yaml`` or ``kccctl export``. The state
keeps a salted digest (``kccgen.dev/secret-digest``), so a changed Secret is
sent with one write on the next apply, and an unchanged one costs no write."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from kccgen.mockgcp import MockServer
from kccgen.runtime.secrets import ANN_SECRET_DIGEST

REPO = Path(__file__).resolve().parents[1]
PASSWORD = "pw-3f9c1e-never-shown"
NEW_PASSWORD = "pw-7a2b44-also-never-shown"
RAW_KEY = "SGVsbG8gZnJvbSBHb29nbGUgQ2xvdWQgUGxhdGZvcm0="  # base64 of 32 bytes, as CSEK takes
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _kccctl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kccgen.runtime.cli", *args], cwd=REPO, capture_output=True, text=True, check=False, timeout=300)


def _manifests(password: str) -> list[dict[str, Any]]:
    meta = {"namespace": "default", "annotations": {"cnrm.cloud.google.com/project-id": "p1"}}
    return [
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db", "namespace": "default"}, "stringData": {"password": password}},
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "csek", "namespace": "default"}, "stringData": {"key": RAW_KEY}},
        {"apiVersion": "sql.cnrm.cloud.google.com/v1beta1", "kind": "SQLInstance", "metadata": {"name": "db1", **meta}, "spec": {"databaseVersion": "POSTGRES_15", "region": "us-central1", "settings": {"tier": "db-custom-1-3840"}}},
        {
            "apiVersion": "sql.cnrm.cloud.google.com/v1beta1",
            "kind": "SQLUser",
            "metadata": {"name": "app", **meta},
            "spec": {"instanceRef": {"name": "db1"}, "password": {"valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}}},
        },
        {
            "apiVersion": "compute.cnrm.cloud.google.com/v1beta1",
            "kind": "ComputeDisk",
            "metadata": {"name": "d1", **meta},
            "spec": {"location": "us-central1-a", "size": 10, "diskEncryptionKey": {"rawKey": {"valueFrom": {"secretKeyRef": {"name": "csek", "key": "key"}}}}},
        },
    ]


def _everything(state: Path) -> str:
    return "".join(p.read_text(encoding="utf-8", errors="replace") for p in state.rglob("*") if p.is_file())


def test_a_secret_reaches_the_request_and_nothing_else(tmp_path: Path) -> None:
    f = tmp_path / "m.yaml"
    f.write_text(yaml.safe_dump_all(_manifests(PASSWORD)), encoding="utf-8")
    state = tmp_path / "state"
    common = ("--state", str(state), "--project", "p1", "--host-paths")
    with MockServer() as s:
        url = ("--endpoint", s.base_url)
        r = _kccctl("apply", "-f", str(f), *common, *url)
        assert r.returncode == 0, r.stdout + r.stderr
        bodies = [e.request_body or "" for e in s.log if e.method in WRITES]
        assert any(PASSWORD in b for b in bodies if "/users" in b or "password" in b), "the password never reached the API"
        assert any(RAW_KEY in b for b in bodies), "the disk key never reached the API"

        shown = [r.stdout, r.stderr, _everything(state)]
        for kind, name in (("sqluser", "app"), ("computedisk", "d1")):
            g = _kccctl("get", f"{kind}/{name}", "-o", "yaml", "--state", str(state))
            assert g.returncode == 0, g.stderr
            e = _kccctl("export", kind, name, *common, *url)
            assert e.returncode == 0, e.stderr
            shown += [g.stdout, g.stderr, e.stdout, e.stderr]
        user = _kccctl("export", "sqluser", "app", *common, *url).stdout
        assert "secretKeyRef" in user, "export writes a secretKeyRef placeholder"
        for text in shown:
            assert PASSWORD not in text and RAW_KEY not in text
        assert ANN_SECRET_DIGEST in _everything(state)  # a digest instead of the value

        # unchanged: no write; changed Secret: exactly one write, the user's update
        before = len(s.log)
        r = _kccctl("apply", "-f", str(f), *common, *url)
        assert r.returncode == 0, r.stdout
        assert [e for e in s.log[before:] if e.method in WRITES] == []
        f.write_text(yaml.safe_dump_all(_manifests(NEW_PASSWORD)), encoding="utf-8")
        before = len(s.log)
        r = _kccctl("apply", "-f", str(f), *common, *url)
        assert r.returncode == 0, r.stdout
        writes = [e for e in s.log[before:] if e.method in WRITES]
        assert len(writes) == 1 and NEW_PASSWORD in (writes[0].request_body or ""), [(e.method, e.url) for e in writes]
        assert NEW_PASSWORD not in r.stdout + r.stderr + _everything(state)
