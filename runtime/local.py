"""The embedded runner: reconcile manifests against GCP (or mockgcp) without a cluster.

State lives in a directory, one YAML file per object
(``<state>/<namespace>/<kind>/<name>.yaml``), each written atomically (temp
file, then rename), so a crash never leaves a half-written object. One
``kccctl`` at a time holds the directory (an exclusive lock on
``<state>/.lock``): two applies at once would each create the same
service-named resources and lose each other's updates. Names and namespaces
are checked as Kubernetes checks them (RFC 1123), so no object's file can land
outside the directory. An unreadable object file is reported and its object
left alone; the others proceed.
Objects are reconciled in dependency order: an object referring to another
by name comes after it; deletion runs in the reverse order.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import yaml
from pydantic import ValidationError

from kccgen.contract import CreateServiceAssigned
from kccgen.runtime.adapter import adapter_for
from kccgen.runtime.admission import YAML_DUMPER, YAML_LOADER, admission_errors
from kccgen.runtime.aliases import AliasConflict, canonical_spec
from kccgen.runtime.gcp import Gcp, GcpError
from kccgen.runtime.managed import keep_merged
from kccgen.runtime.reconciler import ANN_CREATE_PENDING, Reconciler, Result
from kccgen.runtime.refs import (
    CLUSTER_SCOPED,
    PROJECT_ID_ANNOTATION,
    InMemoryStore,
    iter_field,
    references_of,
)
from kccgen.runtime.registry import types_modules, unknown_kind
from kccgen.runtime.secrets import secret_problem


class ManifestError(ValueError):
    """A manifest that cannot be applied; names the file, document and field."""


class StateLocked(RuntimeError):
    """Another kccctl holds the state directory and the caller would not wait."""


# What Kubernetes accepts: a custom resource's name is a DNS-1123 subdomain, a
# namespace a DNS-1123 label. Neither can hold "/" or start with ".", so a
# state path made of them stays inside the state directory.
_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = re.compile(rf"{_LABEL}(\.{_LABEL})*")


def name_problem(name: object) -> str | None:
    """Why ``name`` is not a valid metadata.name, or None."""
    if not isinstance(name, str) or not name:
        return "metadata.name must be a non-empty string"
    if len(name) > 253 or not _SUBDOMAIN.fullmatch(name):
        return (
            f"metadata.name {name!r} is not a valid name: lower case letters, digits, '-' and '.', "
            "starting and ending with a letter or digit, at most 253 characters (RFC 1123 subdomain)"
        )
    return None


def namespace_problem(ns: object) -> str | None:
    """Why ``ns`` is not a valid namespace, or None."""
    if not isinstance(ns, str) or len(ns) > 63 or not re.fullmatch(_LABEL, ns):
        return (
            f"namespace {ns!r} is not a valid namespace: lower case letters, digits and '-', "
            "starting and ending with a letter or digit, at most 63 characters (RFC 1123 label)"
        )
    return None


def _key(obj: Mapping[str, Any], default_ns: str) -> tuple[str, str, str]:
    meta = obj.get("metadata") or {}
    return str(obj.get("kind")), str(meta.get("namespace") or default_ns), str(meta.get("name"))


MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


def _manifest_files(paths: Iterable[Path], recursive: bool) -> list[Path]:
    """Like kubectl apply -f: a directory gives its own manifest files, its
    subdirectories too with ``-R``; ``-`` is standard input."""
    files: list[Path] = []
    for p in paths:
        if str(p) == "-":
            files.append(p)
        elif p.is_dir():
            found = p.rglob("*") if recursive else p.iterdir()
            files.extend(sorted(x for x in found if x.is_file() and x.suffix in MANIFEST_SUFFIXES))
        elif p.exists():
            files.append(p)
        else:
            raise ManifestError(f"{p}: no such file or directory")
    return files


def _documents(f: Path, stdin: IO[str] | None) -> list[Any]:
    """The documents of one file (YAML stream, or JSON for .json), a ``List`` unpacked."""
    name = "<stdin>" if str(f) == "-" else str(f)
    try:
        text = (stdin or sys.stdin).read() if str(f) == "-" else f.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ManifestError(f"{name}: cannot read: {e}") from None
    try:
        if f.suffix == ".json":
            docs = [json.loads(text)]
        else:
            docs = list(yaml.load_all(text, Loader=YAML_LOADER))
    except json.JSONDecodeError as e:
        raise ManifestError(f"{name}: invalid JSON: {e}") from None
    except yaml.YAMLError as e:
        raise ManifestError(f"{name}: invalid YAML: {e}".replace("\n", " ")) from None
    out: list[Any] = []
    for d in docs:
        if isinstance(d, dict) and d.get("kind") == "List" and isinstance(d.get("items"), list):
            out.extend(d["items"])  # kubectl get -o yaml writes a v1 List
        else:
            out.append(d)
    return out


def load_manifests(paths: Iterable[Path], default_ns: str = "default", *, recursive: bool = False, stdin: IO[str] | None = None) -> list[dict[str, Any]]:
    """Every object in the files, directories (``recursive``: with their
    subdirectories) and ``-`` (stdin), validated by its Kind's model."""
    models = types_modules()
    out: list[dict[str, Any]] = []
    for f in _manifest_files(paths, recursive):
        for i, doc in enumerate(_documents(f, stdin)):
            if doc is None:
                continue
            where = f"{'<stdin>' if str(f) == '-' else f}#{i}"
            if not isinstance(doc, dict) or not doc.get("kind") or not (doc.get("metadata") or {}).get("name"):
                raise ManifestError(f"{where}: a manifest needs kind and metadata.name")
            kind = str(doc["kind"])
            if kind == "Namespace":
                out.append(_namespace_manifest(doc, where))
                continue
            if kind == "Secret":  # read by sensitive fields (kccgen.runtime.secrets), never stored
                if (problem := secret_problem(doc)) is not None:
                    raise ManifestError(f"{where}: Secret {doc['metadata']['name']!r}: {problem}")
                doc["metadata"].setdefault("namespace", default_ns)
                out.append(doc)
                continue
            if kind not in models:
                raise ManifestError(f"{where}: {unknown_kind(kind, sorted(models))}")
            meta = doc["metadata"]
            problem = name_problem(meta.get("name")) or namespace_problem(meta.get("namespace") or default_ns)
            if problem:
                raise ManifestError(f"{where}: {kind} {meta.get('name')!r}: {problem}")
            try:
                getattr(models[kind], kind).model_validate(doc)
            except ValidationError as e:
                first = e.errors(include_url=False)[0]
                loc = ".".join(str(x) for x in first["loc"])
                raise ManifestError(f"{where}: {kind} {doc['metadata']['name']}: {loc}: {first['msg']}") from None
            doc.setdefault("metadata", {}).setdefault("namespace", default_ns)
            out.append(doc)
    return out


def _namespace_manifest(doc: dict[str, Any], where: str) -> dict[str, Any]:
    """A ``v1`` Namespace: as in Config Connector, its annotations
    (``cnrm.cloud.google.com/project-id``, ``.../actuation-mode``) are the
    defaults of the objects in it."""
    meta = doc["metadata"]
    if doc.get("apiVersion") != "v1":
        raise ManifestError(f"{where}: Namespace {meta.get('name')!r}: apiVersion must be v1, not {doc.get('apiVersion')!r}")
    problem = namespace_problem(meta.get("name"))
    if problem:
        raise ManifestError(f"{where}: Namespace {meta.get('name')!r}: {problem.replace('namespace', 'metadata.name', 1)}")
    anns = meta.get("annotations") or {}
    if not isinstance(anns, dict) or not all(isinstance(v, str) for v in anns.values()):
        raise ManifestError(f"{where}: Namespace {meta['name']!r}: metadata.annotations must map names to strings")
    meta.pop("namespace", None)
    return doc


def _spec_for_refs(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The spec with Config Connector aliases moved to their fields, so a reference
    written under an alias (``notificationChannels``) orders its target first."""
    spec = dict(obj.get("spec") or {})
    try:
        return canonical_spec(adapter_for(str(obj.get("kind"))), spec)
    except AliasConflict:
        return spec  # the reconcile reports the conflict


def dependency_levels(objs: list[dict[str, Any]], default_ns: str = "default") -> list[list[dict[str, Any]]]:
    """The dependency order cut into levels: every object's references are in
    earlier levels, so the objects of one level can be reconciled at once.
    Namespaces are the first level."""
    deps = _dependencies(objs, default_ns)
    return _levels(dependency_order(objs, default_ns, deps), deps, default_ns)


def _levels(ordered: list[dict[str, Any]], deps: dict[tuple[str, str, str], set[tuple[str, str, str]]], default_ns: str) -> list[list[dict[str, Any]]]:
    level: dict[tuple[str, str, str], int] = {}
    for o in ordered:
        k = _key(o, default_ns)
        level[k] = 0 if o.get("kind") == "Namespace" else 1 + max((level[d] for d in deps[k]), default=0)
    out: list[list[dict[str, Any]]] = [[] for _ in range(max(level.values(), default=-1) + 1)]
    for o in ordered:
        out[level[_key(o, default_ns)]].append(o)
    return [lv for lv in out if lv]


def named_references(obj: Mapping[str, Any], default_ns: str = "default") -> set[tuple[str, str, str]]:
    """The (Kind, namespace, name) of every object ``obj`` refers to by name."""
    out: set[tuple[str, str, str]] = set()
    if obj.get("kind") in CLUSTER_SCOPED:
        return out  # refers to nothing
    kind, ns, _ = _key(obj, default_ns)
    spec = _spec_for_refs(obj)
    for ref in references_of(kind):
        for _, value in iter_field(spec, ref.path):
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, Mapping) and item.get("name"):
                    out.add((ref.target, str(item.get("namespace") or ns), str(item["name"])))
    return out


def _dependencies(objs: list[dict[str, Any]], default_ns: str) -> dict[tuple[str, str, str], set[tuple[str, str, str]]]:
    """Each object's key -> the keys of the objects among ``objs`` it refers to by name."""
    index = {_key(o, default_ns) for o in objs}
    return {_key(o, default_ns): named_references(o, default_ns) & index for o in objs}


def dependency_order(
    objs: list[dict[str, Any]], default_ns: str = "default", deps: dict[tuple[str, str, str], set[tuple[str, str, str]]] | None = None
) -> list[dict[str, Any]]:
    """Referenced objects (by name) first; a cycle is an error naming its members.
    ``deps``: ``_dependencies(objs)``, when the caller has them already."""
    index = {_key(o, default_ns): o for o in objs}
    deps = _dependencies(objs, default_ns) if deps is None else deps
    ordered: list[dict[str, Any]] = []
    state: dict[tuple[str, str, str], int] = {}

    def visit(k: tuple[str, str, str], path: list[tuple[str, str, str]]) -> None:
        if state.get(k) == 2:
            return
        if state.get(k) == 1:
            cycle = " -> ".join(f"{x[0]}/{x[2]}" for x in [*path, k])
            raise ManifestError(f"reference cycle: {cycle}")
        state[k] = 1
        for d in sorted(deps[k]):
            visit(d, [*path, k])
        state[k] = 2
        ordered.append(index[k])

    for k in sorted(deps):
        visit(k, [])
    # Namespaces first: their annotations are the defaults of everything else.
    return [o for o in ordered if o.get("kind") == "Namespace"] + [o for o in ordered if o.get("kind") != "Namespace"]


@dataclass
class StateDir:
    """The local runner's object store. Hold ``lock()`` while reading to write."""

    root: Path
    problems: list[str] = field(default_factory=list)  # unreadable files, from the last load()
    unreadable: set[Path] = field(default_factory=set)

    def path(self, obj: Mapping[str, Any], default_ns: str = "default") -> Path:
        """The object's file; an invalid name or namespace is refused, never joined."""
        kind, ns, name = _key(obj, default_ns)
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
        StateLocked at once; with it, ``notify`` is told whom we wait for."""
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.root / ".lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
                if not wait:
                    raise StateLocked(f"{self.root} is in use by another kccctl (pid {holder}); run again when it has finished, or leave out --no-wait to wait") from None
                if notify is not None:
                    notify(f"waiting for {self.root}: another kccctl (pid {holder}) is using it")
                fcntl.flock(fd, fcntl.LOCK_EX)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            self._clean_temp_files()
            yield
        finally:
            os.close(fd)  # closing releases the lock

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

    def remembered_project(self) -> str | None:
        """The ``--project`` an earlier run gave, so later commands need not repeat it."""
        try:
            data = json.loads(self._config.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as e:
            self.problems.append(f"{self._config}: unreadable ({e}); no remembered --project")
            return None
        project = data.get("project") if isinstance(data, dict) else None
        return str(project) if project else None

    def remember_project(self, project: str) -> None:
        self._write_atomic(self._config, (json.dumps({"project": project}, indent=2) + "\n").encode())

    def remove(self, obj: Mapping[str, Any]) -> None:
        p = self.path(obj)
        if p.exists():
            p.unlink()


@dataclass
class Row:
    kind: str
    name: str
    ready: bool
    reason: str
    external_ref: str
    message: str


def _store(state: StateDir, project: str | None, default_ns: str) -> InMemoryStore:
    store = InMemoryStore(default_namespace=default_ns)
    for o in state.load():
        if o:
            store.add(o)
    if project:
        ns = store.get("Namespace", "", default_ns)
        if ns is None:
            store.add({"kind": "Namespace", "metadata": {"name": default_ns, "annotations": {PROJECT_ID_ANNOTATION: project}}})
    return store


def _merge_status(obj: dict[str, Any], previous: Mapping[str, Any] | None) -> dict[str, Any]:
    """A re-applied manifest keeps what the controller knows (status, our annotations)."""
    if previous:
        if "status" in previous and "status" not in obj:
            obj["status"] = previous["status"]
        prev_ann = (previous.get("metadata") or {}).get("annotations") or {}
        for k, v in prev_ann.items():
            if k.startswith("kccgen.dev/"):
                obj.setdefault("metadata", {}).setdefault("annotations", {}).setdefault(k, v)
        keep_merged(obj, previous)
        gen = int((previous.get("metadata") or {}).get("generation") or 1)
        changed = (previous.get("spec") or {}) != (obj.get("spec") or {})
        obj.setdefault("metadata", {})["generation"] = gen + 1 if changed else gen
    else:
        obj.setdefault("metadata", {}).setdefault("generation", 1)
    return obj


def _refused(obj: dict[str, Any], default_ns: str, reason: str, msg: str) -> tuple[Row, Result]:
    """An object not reconciled this run, and why (nothing written for it)."""
    kind, _, name = _key(obj, default_ns)
    return Row(kind, name, False, reason, "", msg), Result(obj, False, reason, msg)


def _unreadable(state: StateDir, obj: Mapping[str, Any], default_ns: str) -> tuple[Row, Result] | None:
    """An object whose state file cannot be read is not reconciled: without its
    status (externalRef, a pending create) a reconcile could create it twice, and
    writing would destroy what is left of the file."""
    path = state.path(obj, default_ns)
    if path not in state.unreadable:
        return None
    return _refused(dict(obj), default_ns, "StateUnreadable", f"its state file {path} is unreadable; repair or remove it, then run again")


def _user_view(obj: Mapping[str, Any]) -> tuple[Any, ...]:
    """What the user writes: apiVersion, spec, labels and annotations (not ours)."""
    meta = obj.get("metadata") or {}
    anns = {k: v for k, v in (meta.get("annotations") or {}).items() if not k.startswith("kccgen.dev/")}
    return obj.get("apiVersion"), obj.get("spec"), meta.get("labels") or {}, anns


def _admit(obj: dict[str, Any], previous: Mapping[str, Any] | None, default_ns: str) -> tuple[Row, Result] | None:
    """What the API server would refuse (schema, CEL, transition rules against the
    stored object) is refused here too: not reconciled, its state not written.
    An object the same as the stored one was admitted when it was stored: as
    for a no-op update on the server, nothing new is checked (and the CEL
    evaluation, most of an up-to-date apply's CPU, is skipped)."""
    if previous is not None and _user_view(previous) == _user_view(obj):
        return None
    errors = admission_errors(obj, previous)
    if not errors:
        return None
    kind, ns, name = _key(obj, default_ns)
    msg = f"{kind} {ns}/{name} is invalid: " + "; ".join(errors[:10]) + (f"; and {len(errors) - 10} more" if len(errors) > 10 else "")
    return _refused(obj, default_ns, "Invalid", msg)


def _apply_namespace(obj: dict[str, Any], state: StateDir, store: InMemoryStore, write: bool = True) -> tuple[Row, Result]:
    """Stored, no GCP call: the objects after it read their defaults from it."""
    name = str(obj["metadata"]["name"])
    anns = obj["metadata"].get("annotations") or {}
    if write:
        state.write(obj)
    store.add(obj)
    said = [f"{k.rsplit('/', 1)[-1]}={v}" for k, v in sorted(anns.items()) if k.startswith("cnrm.cloud.google.com/")]
    msg = f"namespace {name}" + (f": {', '.join(said)}" if said else "")
    return Row("Namespace", name, True, "UpToDate", "", msg), Result(obj, True, "UpToDate", msg)


def _delete_namespace(obj: dict[str, Any], state: StateDir) -> tuple[Row, Result]:
    """Refused while the state holds objects in it: deleting a namespace would
    otherwise delete every GCP resource in it, which kccctl does only when asked
    object by object."""
    name = str(obj["metadata"]["name"])
    left = state.holds(name)
    if left:
        return _refused(obj, "", "DeleteFailed", f"namespace {name} still holds {len(left)} object(s) ({', '.join(left[:5])}{', ...' if len(left) > 5 else ''}): delete them first")
    state.remove(obj)
    return Row("Namespace", name, True, "Deleted", "", f"namespace {name} removed from the state"), Result(obj, True, "Deleted", "", deleted=True)


def _serial(obj: Mapping[str, Any]) -> bool:
    """Reconciled alone, not beside others of its level: a Namespace (the others'
    defaults), and a create the service names that may have to be found again by
    content, which a concurrent create of a look-alike would confuse."""
    kind = str(obj.get("kind"))
    if kind in CLUSTER_SCOPED:
        return True
    shape = adapter_for(kind).create
    return isinstance(shape, CreateServiceAssigned) and (not shape.label_field or ANN_CREATE_PENDING in ((obj.get("metadata") or {}).get("annotations") or {}))


def _interleaved(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Round-robin by API, so the workers keep every API's quota busy at once."""
    by_doc: dict[str, list[dict[str, Any]]] = {}
    for o in objs:
        by_doc.setdefault(adapter_for(str(o["kind"])).doc, []).append(o)
    queues = [by_doc[d] for d in sorted(by_doc)]
    return [q[i] for i in range(max(map(len, queues), default=0)) for q in queues if i < len(q)]


def apply(
    objs: list[dict[str, Any]],
    state: StateDir,
    gcp: Gcp,
    project: str | None = None,
    default_ns: str = "default",
    dry_run: str | None = None,
    *,
    workers: int = 1,
    on_done: Callable[[Row], object] | None = None,
) -> list[tuple[Row, Result]]:
    """Reconcile ``objs``, references first. Hold ``state.lock()`` around it.

    ``dry_run``: "client" checks the manifests as admission would and sends
    nothing; "server" also reads GCP (GETs only) and reports what would be
    written. Neither writes the state directory. ``workers``: objects of one
    dependency level reconciled at once; ``on_done`` hears of each as it ends.
    The result is in dependency order, whatever the order of completion."""
    store = _store(state, project, default_ns)
    objs, read = split_secrets(objs, store)

    def one(obj: dict[str, Any]) -> tuple[Row, Result]:
        refused = _unreadable(state, obj, default_ns)
        if refused is not None:
            return refused
        if obj.get("kind") == "Namespace":
            return _apply_namespace(obj, state, store, write=dry_run is None)
        previous = store.get(*_key(obj, default_ns))
        obj = _merge_status(dict(obj), previous)
        refused = _admit(obj, previous, default_ns)
        if refused is not None:
            return refused
        kind, _, name = _key(obj, default_ns)
        if dry_run == "client":
            ext = str((obj.get("status") or {}).get("externalRef") or "")
            return Row(kind, name, True, "Valid", ext, "valid (client dry run: nothing sent)"), Result(obj, True, "Valid", "")
        try:
            reconciler = Reconciler(gcp, store, persist=None if dry_run else state.write, dry_run=dry_run == "server")
            result = reconciler.reconcile(obj)
        except GcpError as e:  # one object's unexpected GCP failure never stops the others
            return _refused(obj, default_ns, "UpdateFailed", f"reconcile failed: {e}")
        if dry_run is None:
            state.write(result.obj)
        store.add(result.obj)
        return Row(kind, name, result.ready, result.reason, str((result.obj.get("status") or {}).get("externalRef") or ""), result.message), result

    def done(obj: dict[str, Any]) -> tuple[Row, Result]:
        out = one(obj)
        if on_done is not None:
            on_done(out[0])
        return out

    deps = _dependencies(objs, default_ns)  # once, for the order and the levels
    ordered = dependency_order(objs, default_ns, deps)
    if workers <= 1:
        return read + [done(o) for o in ordered]
    results: dict[tuple[str, str, str], tuple[Row, Result]] = {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for level in _levels(ordered, deps, default_ns):
            for obj in level:
                if _serial(obj):
                    results[_key(obj, default_ns)] = done(obj)
            rest = _interleaved([o for o in level if not _serial(o)])
            for obj, out in zip(rest, pool.map(done, rest), strict=True):
                results[_key(obj, default_ns)] = out
    return read + [results[_key(o, default_ns)] for o in ordered]


def delete(
    objs: list[dict[str, Any]], state: StateDir, gcp: Gcp, project: str | None = None, default_ns: str = "default", dry_run: str | None = None
) -> list[tuple[Row, Result]]:
    """Delete ``objs``, dependents first. Hold ``state.lock()`` around it.
    ``dry_run`` (client or server): say what would be deleted, delete nothing."""
    store = _store(state, project, default_ns)
    objs, out = split_secrets(objs, store)
    for obj in reversed(dependency_order(objs, default_ns)):
        refused = _unreadable(state, obj, default_ns)
        if refused is not None:
            out.append(refused)
            continue
        if obj.get("kind") == "Namespace":
            if dry_run is None:
                out.append(_delete_namespace(obj, state))
            else:
                out.append(_refused(obj, "", "WouldDelete", f"would remove namespace {obj['metadata']['name']} from the state"))
            continue
        previous = store.get(*_key(obj, default_ns))
        obj = _merge_status(dict(obj), previous)
        result = Reconciler(gcp, store, dry_run=dry_run is not None).delete(obj)
        if dry_run is not None:
            pass
        elif result.deleted:
            state.remove(obj)
        else:
            state.write(result.obj)
        kind, _, name = _key(obj, default_ns)
        out.append((Row(kind, name, result.deleted, result.reason, str((obj.get("status") or {}).get("externalRef") or ""), result.message), result))
    return out


def split_secrets(objs: list[dict[str, Any]], store: InMemoryStore) -> tuple[list[dict[str, Any]], list[tuple[Row, Result]]]:
    """The objects but Secrets, and a row per Secret: each is put in this run's store
    for the sensitive fields that read it, and never written to the state directory."""
    rest, rows = [], []
    for o in objs:
        if o.get("kind") != "Secret":
            rest.append(o)
            continue
        store.add(o)
        meta = {k: v for k, v in o["metadata"].items() if k in ("name", "namespace")}
        msg = "read by this run's sensitive fields; not written to the state"
        rows.append((Row("Secret", str(meta["name"]), True, "Read", "", msg), Result({"apiVersion": "v1", "kind": "Secret", "metadata": meta}, True, "Read", msg)))
    return rest, rows


def columns(head: tuple[str, ...], data: list[tuple[str, ...]], gap: str = "  ") -> list[str]:
    """Aligned text columns, as kubectl prints them."""
    widths = [max(len(x[i]) for x in (head, *data)) for i in range(len(head))]
    return [gap.join(c.ljust(w) for c, w in zip(x, widths, strict=True)).rstrip() for x in (head, *data)]


def table(rows: list[Row], ready_header: str = "READY") -> str:
    head = ("KIND", "NAME", ready_header, "REASON", "EXTERNALREF")
    lines = columns(head, [(r.kind, r.name, "True" if r.ready else "False", r.reason, r.external_ref) for r in rows])
    for r in rows:
        if not r.ready:
            lines.append(f"{r.kind}/{r.name}: {r.message}")
    return "\n".join(lines)
