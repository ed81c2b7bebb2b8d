"""The embedded runner: reconcile manifests against GCP (or mockgcp) without a cluster.

Manifests are read by ``runtime/manifests.py``; state lives in a directory
(``runtime/state.py``), one file per object. An unreadable object file is
reported and its object left alone; the others proceed. A state file that
cannot be written after a GCP write is reported with its path and the
resource, and no further object is reconciled in that run: the next run finds
the resource again (by its name, or by the create-pending intent recorded
before a create the service names).
Objects are reconciled in dependency order: an object referring to another
by name comes after it; deletion runs in the reverse order.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kccgen.contract import CreateServiceAssigned
from kccgen.runtime.adapter import adapter_for, policy_for
from kccgen.runtime.admission import admission_errors
from kccgen.runtime.aliases import AliasConflict, canonical_spec
from kccgen.runtime.gcp import Gcp, GcpError
from kccgen.runtime.identity import IdentityError, identity_for
from kccgen.runtime.managed import keep_merged

# What callers have always imported from here.
from kccgen.runtime.manifests import ManifestError as ManifestError
from kccgen.runtime.manifests import load_manifests as load_manifests
from kccgen.runtime.manifests import name_problem as name_problem
from kccgen.runtime.manifests import namespace_problem as namespace_problem
from kccgen.runtime.reconciler import ANN_CREATE_PENDING, Reconciler, Result
from kccgen.runtime.refs import (
    CLUSTER_SCOPED,
    PROJECT_ID_ANNOTATION,
    InMemoryStore,
    iter_field,
    references_of,
)
from kccgen.runtime.state import StateDir as StateDir
from kccgen.runtime.state import StateLocked as StateLocked
from kccgen.runtime.state import StateUnwritable as StateUnwritable
from kccgen.runtime.state import object_key as _key


def _spec_for_refs(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The spec with Config Connector aliases moved to their fields, so a reference
    written under an alias (``notificationChannels``) orders its target first."""
    spec = dict(obj.get("spec") or {})
    if policy_for(str(obj.get("kind"))) is not None:
        return spec  # an IAM Kind: no aliases
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
                    # a reference with a kind key (RefField.kinds) names an object of that Kind
                    named = str(item["kind"]) if ref.kinds and item.get("kind") in ref.kinds else ref.target
                    out.add((named, str(item.get("namespace") or ns), str(item["name"])))
    target = spec.get("resourceRef") if policy_for(kind) is not None else None
    if isinstance(target, Mapping) and target.get("name") and target.get("kind"):  # an IAM Kind's resource
        out.add((str(target["kind"]), str(target.get("namespace") or ns), str(target["name"])))
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
        try:
            state.write(obj)
        except OSError as e:
            return _refused(obj, "", "StateWriteFailed", f"its state file {state.path(obj)} could not be written ({_why(e)}); nothing was sent to GCP")
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
    try:
        state.remove(obj)
    except OSError as e:
        return _refused(obj, "", "StateWriteFailed", f"its state file {state.path(obj)} could not be removed ({_why(e)})")
    return Row("Namespace", name, True, "Deleted", "", f"namespace {name} removed from the state"), Result(obj, True, "Deleted", "", deleted=True)


def _serial(obj: Mapping[str, Any]) -> bool:
    """Reconciled alone, not beside others of its level: a Namespace (the others'
    defaults), and a create the service names that may have to be found again by
    content, which a concurrent create of a look-alike would confuse."""
    kind = str(obj.get("kind"))
    if kind in CLUSTER_SCOPED or policy_for(kind) is not None:
        return True  # IAM Kinds: one read-modify-write of a policy at a time, none lost to a race
    shape = adapter_for(kind).create
    return isinstance(shape, CreateServiceAssigned) and (not shape.label_field or ANN_CREATE_PENDING in ((obj.get("metadata") or {}).get("annotations") or {}))


def _interleaved(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Round-robin by API, so the workers keep every API's quota busy at once."""
    by_doc: dict[str, list[dict[str, Any]]] = {}
    for o in objs:
        by_doc.setdefault("" if policy_for(str(o["kind"])) else adapter_for(str(o["kind"])).doc, []).append(o)
    queues = [by_doc[d] for d in sorted(by_doc)]
    return [q[i] for i in range(max(map(len, queues), default=0)) for q in queues if i < len(q)]


class _IntentNotRecorded(Exception):
    """The create-pending intent could not be written: the create is not sent."""

    def __init__(self, path: Path, error: OSError) -> None:
        super().__init__(f"its state file {path} could not be written ({_why(error)}) before the create: nothing was sent to GCP")


def _why(e: OSError) -> str:
    return e.strerror or str(e)


class _Writes:
    """The run's state writes. After one fails, no further object is reconciled:
    its state could not be recorded either (a full disk, a folder made read-only)."""

    def __init__(self, state: StateDir, default_ns: str) -> None:
        self.state, self.default_ns = state, default_ns
        self.failed: Path | None = None
        self._lock = threading.Lock()

    def stopped(self, obj: dict[str, Any]) -> tuple[Row, Result] | None:
        if self.failed is None:
            return None
        return _refused(obj, self.default_ns, "StateWriteFailed", f"not reconciled: the state directory could not be written ({self.failed}); nothing was sent to GCP")

    def note(self, path: Path) -> None:
        with self._lock:
            self.failed = self.failed or path

    def persist(self, obj: dict[str, Any]) -> None:
        """The reconciler's hook before a create whose ID the service picks."""
        try:
            self.state.write(obj)
        except OSError as e:
            self.note(self.state.path(obj, self.default_ns))
            raise _IntentNotRecorded(self.state.path(obj, self.default_ns), e) from None

    def unrecorded(self, obj: dict[str, Any], result: Result, e: OSError) -> tuple[Row, Result]:
        """A reconcile whose outcome (maybe a GCP write) could not be recorded:
        one line naming the file and the resource to recover."""
        path = self.state.path(obj, self.default_ns)
        self.note(path)
        kind, _, name = _key(obj, self.default_ns)
        ext = str((result.obj.get("status") or {}).get("externalRef") or "")
        if ext:
            msg = f"{ext} is not recorded: its state file {path} could not be written ({_why(e)}); make {self.state.root} writable and apply again, which finds {ext}{_resource_id_hint(kind, ext)}"
        else:
            msg = f"{result.reason}: {result.message}; and its state file {path} could not be written ({_why(e)})"
        return Row(kind, name, False, "StateWriteFailed", ext, msg), Result(result.obj, False, "StateWriteFailed", msg, result.events)


def _resource_id_hint(kind: str, ext: str) -> str:
    """For an ID the service picked: the spec.resourceID that acquires it too."""
    if policy_for(kind) is not None:
        return ""
    a = adapter_for(kind)
    if not isinstance(a.create, CreateServiceAssigned) or not a.id_param:
        return ""
    try:
        rid = identity_for(kind).parse(ext).get(a.id_param)
    except IdentityError:
        return ""
    return f" (or set spec.resourceID: {rid!r} to acquire it)" if rid else ""


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
    written. Neither writes the state directory; without either, the folders
    the run writes are checked first (StateUnwritable, before any GCP call).
    ``workers``: objects of one dependency level reconciled at once;
    ``on_done`` hears of each as it ends. The result is in dependency order,
    whatever the order of completion."""
    if dry_run is None:
        state.check_writable(objs, default_ns)
    store = _store(state, project, default_ns)
    store.lease_holder = lambda _ns: state.installation(create=dry_run is None)
    objs, read = split_secrets(objs, store)
    writes = _Writes(state, default_ns)

    def one(obj: dict[str, Any]) -> tuple[Row, Result]:
        refused = _unreadable(state, obj, default_ns) or writes.stopped(obj)
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
            reconciler = Reconciler(gcp, store, persist=None if dry_run else writes.persist, dry_run=dry_run == "server")
            result = reconciler.reconcile(obj)
        except GcpError as e:  # one object's unexpected GCP failure never stops the others
            return _refused(obj, default_ns, "UpdateFailed", f"reconcile failed: {e}")
        except _IntentNotRecorded as e:
            return _refused(obj, default_ns, "StateWriteFailed", str(e))
        store.add(result.obj)
        if dry_run is None:
            try:
                state.write(result.obj)
            except OSError as e:
                return writes.unrecorded(obj, result, e)
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
    ``dry_run``: say what would be deleted, delete nothing; "client" makes no
    GCP call at all. Without it, the state folders are checked first."""
    if dry_run is None:
        state.check_writable(objs, default_ns)
    store = _store(state, project, default_ns)
    store.lease_holder = lambda _ns: state.installation(create=dry_run is None)
    objs, out = split_secrets(objs, store)
    writes = _Writes(state, default_ns)
    for obj in reversed(dependency_order(objs, default_ns)):
        refused = _unreadable(state, obj, default_ns) or writes.stopped(obj)
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
        kind, ns, name = _key(obj, default_ns)
        ext = str((obj.get("status") or {}).get("externalRef") or "")
        if dry_run == "client":
            msg = f"would delete {ext or f'the resource of {kind} {ns}/{name}'} (client dry run: nothing sent)"
            out.append((Row(kind, name, False, "WouldDelete", ext, msg), Result(obj, False, "WouldDelete", msg)))
            continue
        result = Reconciler(gcp, store, dry_run=dry_run is not None).delete(obj)
        row = Row(kind, name, result.deleted, result.reason, ext, result.message)
        if dry_run is None:
            try:
                if result.deleted:
                    state.remove(obj)
                else:
                    state.write(result.obj)
            except OSError as e:
                path = state.path(obj, default_ns)
                writes.note(path)
                done = f"{result.message}, but" if result.deleted else f"{result.reason}: {result.message}; and"
                msg = f"{done} its state file {path} could not be {'removed' if result.deleted else 'written'} ({_why(e)}); make {state.root} writable and delete again"
                row = Row(kind, name, False, "StateWriteFailed", ext, msg)
        out.append((row, result))
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
