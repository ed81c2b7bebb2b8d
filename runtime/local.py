"""The embedded runner: reconcile manifests against GCP (or mockgcp) without a cluster.

State lives in a directory, one YAML file per object
(``<state>/<namespace>/<kind>/<name>.yaml``), each written atomically (temp
file, then rename), so a crash never leaves a half-written object.
Objects are reconciled in dependency order: an object referring to another
by name comes after it; deletion runs in the reverse order.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from kccgen.runtime.adapter import adapter_for
from kccgen.runtime.aliases import AliasConflict, canonical_spec
from kccgen.runtime.gcp import Gcp
from kccgen.runtime.reconciler import Reconciler, Result
from kccgen.runtime.refs import PROJECT_ID_ANNOTATION, InMemoryStore, iter_field, references_of
from kccgen.runtime.registry import types_modules, unknown_kind


class ManifestError(ValueError):
    """A manifest that cannot be applied; names the file, document and field."""


def _key(obj: Mapping[str, Any], default_ns: str) -> tuple[str, str, str]:
    meta = obj.get("metadata") or {}
    return str(obj.get("kind")), str(meta.get("namespace") or default_ns), str(meta.get("name"))


def load_manifests(paths: Iterable[Path], default_ns: str = "default") -> list[dict[str, Any]]:
    """Every object in the files (or *.yaml under directories), validated by its Kind's model."""
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            # Like kubectl apply -f DIR: the directory's own files, not subdirectories.
            files.extend(sorted(x for x in p.iterdir() if x.is_file() and x.suffix in (".yaml", ".yml")))
        elif p.exists():
            files.append(p)
        else:
            raise ManifestError(f"{p}: no such file or directory")
    models = types_modules()
    out: list[dict[str, Any]] = []
    for f in files:
        try:
            docs = list(yaml.safe_load_all(f.read_text(encoding="utf-8")))
        except yaml.YAMLError as e:
            raise ManifestError(f"{f}: invalid YAML: {e}".replace("\n", " ")) from None
        for i, doc in enumerate(docs):
            if doc is None:
                continue
            where = f"{f}#{i}"
            if not isinstance(doc, dict) or not doc.get("kind") or not (doc.get("metadata") or {}).get("name"):
                raise ManifestError(f"{where}: a manifest needs kind and metadata.name")
            kind = str(doc["kind"])
            if kind not in models:
                raise ManifestError(f"{where}: {unknown_kind(kind, sorted(models))}")
            try:
                getattr(models[kind], kind).model_validate(doc)
            except ValidationError as e:
                first = e.errors(include_url=False)[0]
                loc = ".".join(str(x) for x in first["loc"])
                raise ManifestError(f"{where}: {kind} {doc['metadata']['name']}: {loc}: {first['msg']}") from None
            doc.setdefault("metadata", {}).setdefault("namespace", default_ns)
            out.append(doc)
    return out


def _spec_for_refs(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The spec with Config Connector aliases moved to their fields, so a reference
    written under an alias (``notificationChannels``) orders its target first."""
    spec = dict(obj.get("spec") or {})
    try:
        return canonical_spec(adapter_for(str(obj.get("kind"))), spec)
    except AliasConflict:
        return spec  # the reconcile reports the conflict


def dependency_order(objs: list[dict[str, Any]], default_ns: str = "default") -> list[dict[str, Any]]:
    """Referenced objects (by name) first; a cycle is an error naming its members."""
    index = {_key(o, default_ns): o for o in objs}
    deps: dict[tuple[str, str, str], set[tuple[str, str, str]]] = {}
    for o in objs:
        k = _key(o, default_ns)
        deps[k] = set()
        spec = _spec_for_refs(o)
        for ref in references_of(k[0]):
            for _, value in iter_field(spec, ref.path):
                items = value if isinstance(value, list) else [value]
                for item in items:
                    if isinstance(item, Mapping) and item.get("name"):
                        target = (ref.target, str(item.get("namespace") or k[1]), str(item["name"]))
                        if target in index:
                            deps[k].add(target)
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
    return ordered


class StateDir:
    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, obj: Mapping[str, Any], default_ns: str = "default") -> Path:
        kind, ns, name = _key(obj, default_ns)
        return self.root / ns / kind / f"{name}.yaml"

    def load(self) -> list[dict[str, Any]]:
        if not self.root.is_dir():
            return []
        return [yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(self.root.rglob("*.yaml"))]

    def write(self, obj: Mapping[str, Any]) -> None:
        target = self.path(obj)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                yaml.safe_dump(dict(obj), f, sort_keys=True)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

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
        gen = int((previous.get("metadata") or {}).get("generation") or 1)
        changed = (previous.get("spec") or {}) != (obj.get("spec") or {})
        obj.setdefault("metadata", {})["generation"] = gen + 1 if changed else gen
    else:
        obj.setdefault("metadata", {}).setdefault("generation", 1)
    return obj


def apply(objs: list[dict[str, Any]], state: StateDir, gcp: Gcp, project: str | None = None, default_ns: str = "default") -> list[tuple[Row, Result]]:
    store = _store(state, project, default_ns)
    out = []
    for obj in dependency_order(objs, default_ns):
        previous = store.get(*_key(obj, default_ns))
        obj = _merge_status(dict(obj), previous)
        result = Reconciler(gcp, store).reconcile(obj)
        state.write(result.obj)
        store.add(result.obj)
        kind, _, name = _key(obj, default_ns)
        out.append((Row(kind, name, result.ready, result.reason, str((result.obj.get("status") or {}).get("externalRef") or ""), result.message), result))
    return out


def delete(objs: list[dict[str, Any]], state: StateDir, gcp: Gcp, project: str | None = None, default_ns: str = "default") -> list[tuple[Row, Result]]:
    store = _store(state, project, default_ns)
    out = []
    for obj in reversed(dependency_order(objs, default_ns)):
        previous = store.get(*_key(obj, default_ns))
        obj = _merge_status(dict(obj), previous)
        result = Reconciler(gcp, store).delete(obj)
        if result.deleted:
            state.remove(obj)
        else:
            state.write(result.obj)
        kind, _, name = _key(obj, default_ns)
        out.append((Row(kind, name, result.deleted, result.reason, str((obj.get("status") or {}).get("externalRef") or ""), result.message), result))
    return out


def table(rows: list[Row], ready_header: str = "READY") -> str:
    head = ("KIND", "NAME", ready_header, "REASON", "EXTERNALREF")
    data = [(r.kind, r.name, "True" if r.ready else "False", r.reason, r.external_ref) for r in rows]
    widths = [max(len(x[i]) for x in (head, *data)) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(x, widths, strict=True)).rstrip() for x in (head, *data)]
    for r in rows:
        if not r.ready:
            lines.append(f"{r.kind}/{r.name}: {r.message}")
    return "\n".join(lines)
