"""The local runner's state directory: one YAML file per object
(``<state>/<namespace>/<kind>/<name>.yaml``; cluster-scoped objects under
``_cluster``), each written atomically (temp file, then rename), so a crash
never leaves a half-written object.

One ``kccctl`` at a time holds the directory (an exclusive lock on
``<state>/.lock``): two applies at once would each create the same
service-named resources and lose each other's updates. Before any GCP call, the
folders a run will write are checked by writing in them (as the process's user
on that file system, whatever its mode bits say): a create whose state cannot
be recorded would leave a resource kccctl does not know it made.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kccgen.runtime.admission import YAML_DUMPER, YAML_LOADER
from kccgen.runtime.manifests import ManifestError, name_problem, namespace_problem
from kccgen.runtime.refs import CLUSTER_SCOPED

#: How often a waiting kccctl tries the lock again. It polls rather than block in
#: flock(2): a Ctrl-C that lands after the "waiting for" line but before a
#: blocking flock starts is handled by Python only when flock returns, that is
#: when the other kccctl ends; a poll runs the handler within this many seconds.
LOCK_POLL_S = 0.1


_INSTALLATION = threading.Lock()


class StateLocked(RuntimeError):
    """Another kccctl holds the state directory and the caller would not wait."""


class StateUnwritable(RuntimeError):
    """The state directory, or a folder in it a run would write, cannot be
    written: said (naming the path) before any GCP call."""


def object_key(obj: Mapping[str, Any], default_ns: str) -> tuple[str, str, str]:
    """(Kind, namespace, name) of an object, its namespace defaulted."""
    meta = obj.get("metadata") or {}
    return str(obj.get("kind")), str(meta.get("namespace") or default_ns), str(meta.get("name"))


@dataclass
class StateDir:
    """The local runner's object store. Hold ``lock()`` while reading to write."""

    root: Path
    problems: list[str] = field(default_factory=list)  # unreadable files, from the last load()
    unreadable: set[Path] = field(default_factory=set)

    def path(self, obj: Mapping[str, Any], default_ns: str = "default") -> Path:
        """The object's file; an invalid name or namespace is refused, never joined."""
        kind, ns, name = object_key(obj, default_ns)
        if kind in CLUSTER_SCOPED:  # "_cluster" is no namespace's name (no "_" in RFC 1123)
            problem = namespace_problem(name) if kind == "Namespace" else name_problem(name)
            if problem:
                raise ManifestError(f"{kind} {name!r}: {problem}")
            return self.root / "_cluster" / kind / f"{name}.yaml"
        problem = name_problem(name) or namespace_problem(ns) or (None if re.fullmatch(r"[A-Za-z0-9]+", kind) else f"kind {kind!r} is not a Kind name")
        if problem:
            raise ManifestError(f"{kind} {name!r}: {problem}")
        return self.root / ns / kind / f"{name}.yaml"

    def holds(self, namespace: str) -> list[str]:
        """The objects the state has in ``namespace`` (Kind/name)."""
        return sorted(f"{p.parent.name}/{p.stem}" for p in (self.root / namespace).glob("*/*.yaml") if not p.name.startswith("."))

    @contextlib.contextmanager
    def lock(self, wait: bool = True, notify: Callable[[str], None] | None = None) -> Iterator[None]:
        """Exclusive use of the directory until the block ends (released by the
        kernel if the process dies). Without ``wait``, a held lock raises
        StateLocked at once; with it, ``notify`` is told whom we wait for, and
        the wait polls (``LOCK_POLL_S``) so that Ctrl-C ends it at once."""
        path = self.root / ".lock"
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise StateUnwritable(f"cannot use the state directory {self.root}: {e.strerror or e} ({e.filename or path})") from None
        try:
            told = False
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if not wait:
                        raise StateLocked(f"{self.root} is in use by another kccctl (pid {self._holder(fd)}); run again when it has finished, or leave out --no-wait to wait") from None
                    if not told and notify is not None:
                        notify(f"waiting for {self.root}: another kccctl (pid {self._holder(fd)}) is using it")
                    told = True
                    time.sleep(LOCK_POLL_S)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            self._clean_temp_files()
            yield
        finally:
            os.close(fd)  # closing releases the lock

    @staticmethod
    def _holder(fd: int) -> str:
        return os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"

    def check_writable(self, objs: Iterable[Mapping[str, Any]], default_ns: str = "default") -> None:
        """Raise StateUnwritable, naming the path, unless every folder the objects'
        files go in (and the directory itself) can be written: each existing
        folder, or the nearest existing one above a folder still to be made, is
        written to (a temp file, removed at once). Nothing is created."""
        folders = {self.root} | {self.path(o, default_ns).parent for o in objs if o.get("kind") != "Secret"}
        tried: set[Path] = set()
        for folder in sorted(folders):
            existing = folder
            while not os.path.lexists(existing) and existing != existing.parent:
                existing = existing.parent
            if existing in tried:
                continue
            tried.add(existing)
            if not existing.is_dir():
                raise StateUnwritable(f"cannot write state files in {folder}: {existing} is not a directory")
            try:
                fd, tmp = tempfile.mkstemp(prefix=".kccctl-probe.", dir=existing)
                os.close(fd)
                os.unlink(tmp)
            except OSError as e:
                where = folder if existing == folder else f"{folder} (made in {existing})"
                raise StateUnwritable(f"cannot write state files in {where}: {e.strerror or e}") from None

    def _clean_temp_files(self) -> None:
        """Temp files of an interrupted write (``.<name>.yaml.<random>``): under the lock
        nobody else is writing, so they are leftovers."""
        for p in self.root.glob("*/*/.*.yaml.*"):
            with contextlib.suppress(OSError):
                p.unlink()

    def load(self) -> list[dict[str, Any]]:
        """Every readable object. A file that is not YAML, or not an object with a
        kind and a name, is listed in ``problems`` (with its path) and skipped."""
        self.problems, self.unreadable = [], set()
        if not self.root.is_dir():
            return []
        out = []
        for p in sorted(self.root.glob("*/*/*.yaml")):
            if p.name.startswith("."):
                continue
            try:
                obj = yaml.load(p.read_text(encoding="utf-8"), Loader=YAML_LOADER)
            except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
                why = str(e).replace("\n", " ")
            else:
                if isinstance(obj, dict) and obj.get("kind") and isinstance(obj.get("metadata"), dict) and obj["metadata"].get("name"):
                    out.append(obj)
                    continue
                why = "not an object with kind and metadata.name"
            self.problems.append(f"{p}: unreadable state file, skipped: {why}")
            self.unreadable.add(p)
        return out

    def write(self, obj: Mapping[str, Any]) -> bool:
        """Write the object atomically; an unchanged object is not written again
        (no temp file, no fsync). Returns whether the file changed."""
        return self._write_atomic(self.path(obj), yaml.dump(dict(obj), Dumper=YAML_DUMPER, sort_keys=True).encode("utf-8"))

    @staticmethod
    def _write_atomic(target: Path, data: bytes) -> bool:
        try:
            if target.read_bytes() == data:
                return False
        except OSError:
            pass
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return True

    @property
    def _config(self) -> Path:
        return self.root / ".settings.json"  # beside .lock: never an object file

    def _settings(self) -> dict[str, Any]:
        try:
            data = json.loads(self._config.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as e:
            self.problems.append(f"{self._config}: unreadable ({e}); no remembered --project")
            return {}
        return data if isinstance(data, dict) else {}

    def _save(self, **values: str) -> None:
        data = {**self._settings(), **values}
        self._write_atomic(self._config, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode())

    def remembered_project(self) -> str | None:
        """The ``--project`` an earlier run gave, so later commands need not repeat it."""
        project = self._settings().get("project")
        return str(project) if project else None

    def remember_project(self, project: str) -> None:
        self._save(project=project)

    def installation(self, create: bool = True) -> str:
        """This state's ID, made once: the lease holder its objects write on GCP
        resources (kccgen.runtime.leases), like a Config Connector namespace ID.
        Made under a lock: two workers of one apply must not make two IDs (other
        processes wait on the state lock). ``create=False`` (a dry run, which
        writes nothing) answers an ID no lease can hold when none was made yet."""
        with _INSTALLATION:
            ident = str(self._settings().get("installation") or "")
            if not ident and create:
                ident = f"kccctl-{uuid.uuid4().hex[:20]}"
                self._save(installation=ident)
            return ident or "kccctl-not-made-yet"

    def remove(self, obj: Mapping[str, Any]) -> None:
        p = self.path(obj)
        if p.exists():
            p.unlink()

