"""``kccgen update-specs``: pin Discovery documents from the installed client.

Every pinned document gets a lock entry (source and sha256, ``kccgen.documents``).
Curated APIs are *vendored* (a copy under ``specs/discovery/``, so reviewers read
their changes line by line); the rest are *locked* only and read from the
pinned google-api-python-client, which keeps the repository lean. With no
argument the pinned set is refreshed; ``API`` arguments (``run`` takes the
newest GA version, ``run.v2`` that version) and ``--all`` add documents.
A short summary says what changed so the maintainer knows whether a
regeneration will move anything.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kccgen.documents import (
    CLIENT,
    LOCK_NAME,
    Locked,
    api_documents,
    client_documents_dir,
    is_beta,
    is_ga,
    lock_text,
    newest_ga,
    preferred,
    read_lock,
    served_stage,
    sha256_of,
    split_key,
)

# The APIs of the curated Kinds: vendored when first pinned.
DEFAULT_DOCS: tuple[str, ...] = (
    "artifactregistry.v1",
    "cloudkms.v1",
    "compute.v1",
    "dns.v1",
    "monitoring.v3",
    "pubsub.v1",
    "secretmanager.v1",
    "spanner.v1",
    "storage.v1",
)

package_documents_dir = client_documents_dir

__all__ = ["api_documents", "is_beta", "is_ga", "newest_ga", "preferred", "served_stage", "split_key"]

def package_version() -> str:
    from importlib.metadata import version

    return version(CLIENT)


def available(source: Path) -> list[str]:
    """Document keys the client ships. It also ships a few aliases whose file
    name is not the document's own key (``admin.datatransferv1.json`` holds
    ``admin.datatransfer_v1``); those are left out."""
    out = []
    for p in sorted(source.glob("*.*.json")):
        head = json.loads(p.read_bytes())
        if f"{head.get('name')}.{head.get('version')}" == p.stem:
            out.append(p.stem)
    return out


def resolve_request(requested: Iterable[str], source: Path) -> list[str]:
    """Document keys for the names asked for: a key as is, an API name as its
    newest GA version (every family of it)."""
    keys = available(source)
    ga = newest_ga(keys)
    out: set[str] = set()
    for r in requested:
        if r in keys:
            out.add(r)
            continue
        found = [k for (name, _), k in ga.items() if name == r]
        if not found:
            versions = [k for k in keys if k.split(".")[0] == r]
            why = f"no GA version (has {', '.join(versions)}); name one explicitly" if versions else "not shipped"
            raise ValueError(f"{r}: {why} by {CLIENT} {package_version()}")
        out.update(found)
    return sorted(out)


def _fields(doc: dict[str, Any]) -> set[str]:
    out: set[str] = set()
    for sname, schema in (doc.get("schemas") or {}).items():
        for pname in schema.get("properties") or {}:
            out.add(f"{sname}.{pname}")
    return out


@dataclass
class DocChange:
    key: str
    old_revision: str | None
    new_revision: str
    schemas_added: list[str] = field(default_factory=list)
    schemas_removed: list[str] = field(default_factory=list)
    fields_added: list[str] = field(default_factory=list)
    fields_removed: list[str] = field(default_factory=list)
    same_bytes: bool = False
    compared: bool = True  # False for a locked document whose old bytes are gone
    hand_edited: bool = False  # the vendored copy differed from its lock entry before this run

    def lines(self) -> list[str]:
        edited = [f"    (specs/discovery/{self.key}.json differed from its lock entry: edited by hand; the client's copy replaced it)"] if self.hand_edited else []
        return self._lines() + edited

    def _lines(self) -> list[str]:
        if self.old_revision is None:
            return [f"{self.key}: added (revision {self.new_revision})"]
        head = f"{self.key}: revision {self.old_revision} -> {self.new_revision}"
        if self.same_bytes:
            return [f"{self.key}: unchanged (revision {self.new_revision})"]
        if not self.compared:
            return [head + " (locked: compare schemas with `kccgen lag --from-package OLD_VERSION`)"]
        if not (self.schemas_added or self.schemas_removed or self.fields_added or self.fields_removed):
            return [head + " (no schema or field changes)"]
        out = [
            head + f": schemas +{len(self.schemas_added)} -{len(self.schemas_removed)}, "
            f"fields +{len(self.fields_added)} -{len(self.fields_removed)}"
        ]
        for label, items in (
            ("+ schema", self.schemas_added),
            ("- schema", self.schemas_removed),
            ("+ field", self.fields_added),
            ("- field", self.fields_removed),
        ):
            shown = items[:10]
            out.extend(f"    {label} {x}" for x in shown)
            if len(items) > len(shown):
                out.append(f"    {label} ... and {len(items) - len(shown)} more")
        return out


def compare(key: str, old: dict[str, Any] | None, new: dict[str, Any]) -> DocChange:
    ch = DocChange(key, None if old is None else str(old.get("revision", "")), str(new.get("revision", "")))
    if old is not None:
        ch.same_bytes = old == new
        os_, ns = set(old.get("schemas") or {}), set(new.get("schemas") or {})
        ch.schemas_added = sorted(ns - os_)
        ch.schemas_removed = sorted(os_ - ns)
        of, nf = _fields(old), _fields(new)
        ch.fields_added = sorted(nf - of)
        ch.fields_removed = sorted(of - nf)
    return ch


def update_specs(
    specs: Path,
    source: Path | None = None,
    extra: tuple[str, ...] = (),
    *,
    add_all: bool = False,
    vendor: bool = False,
) -> list[DocChange]:
    """Pin documents into ``specs`` (its ``discovery/`` copies and its lock); return what changed.

    The pinned set is what the lock and ``discovery/`` already hold, the
    curated defaults, ``extra`` (resolved by ``resolve_request``) and, with
    ``add_all``, the newest GA version of every API the client ships.

    Everything or nothing: every document is read and checked before the first
    file is written, so a client that no longer ships a pinned document leaves
    the vendored copies and the lock as they were (issue 28).
    """
    src = source or package_documents_dir()
    ddir = specs / "discovery"
    ddir.mkdir(parents=True, exist_ok=True)
    lock = read_lock(specs)
    vendored = {p.stem for p in ddir.glob("*.json")} | {k for k, e in lock.items() if e.vendored}
    new_keys = set(resolve_request(extra, src))
    if add_all:
        new_keys |= set(newest_ga(available(src)).values())
    if not lock and not vendored:
        vendored |= set(DEFAULT_DOCS)
    pinned = set(lock) | vendored | new_keys
    # Every GA and beta document of a pinned API: a resource is served from the
    # newest GA document that has it, else from a beta one (generator/ir/candidates).
    shipped = available(src)
    for name, family in sorted({split_key(k)[:2] for k in pinned}):
        pinned.update(api_documents(shipped, name, family))
    keys = sorted(pinned)
    if vendor:
        vendored |= new_keys
    label = f"{CLIENT}=={package_version()}"
    missing = [k for k in keys if not (src / f"{k}.json").exists()]
    if missing:
        raise FileNotFoundError(
            f"{', '.join(missing)}: pinned, but not shipped by {label}; nothing was written "
            f"(retire its Kinds in specs/retired-kinds.yaml and remove it from specs/{LOCK_NAME}, or pin another client)"
        )
    changes: list[DocChange] = []
    entries: dict[str, Locked] = {}
    writes: dict[Path, bytes] = {}
    for key in keys:
        data = (src / f"{key}.json").read_bytes()
        new = json.loads(data)
        dp = ddir / f"{key}.json"
        if key in vendored:
            before = dp.read_bytes() if dp.exists() else None
            old = json.loads(before) if before is not None else None
            ch = compare(key, old, new)
            ch.hand_edited = before is not None and key in lock and sha256_of(before) != lock[key].sha256
            changes.append(ch)
            writes[dp] = data
        else:
            prev = lock.get(key)
            ch = DocChange(key, None if prev is None else prev.revision, str(new.get("revision", "")))
            ch.same_bytes = prev is not None and prev.sha256 == sha256_of(data)
            ch.compared = False
            changes.append(ch)
        entries[key] = Locked(key, sha256_of(data), str(new.get("revision", "")), f"{label}:discovery_cache/documents/{key}.json", key in vendored)
    writes[specs / LOCK_NAME] = lock_text(entries).encode("utf-8")
    for path, data in writes.items():  # each file replaced whole; the lock last
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    # the lock and the vendored bytes, checked against each other as written
    wrong = [k for k, e in entries.items() if e.vendored and sha256_of((ddir / f"{k}.json").read_bytes()) != e.sha256]
    if wrong:
        raise ValueError(f"specs/discovery/{', '.join(wrong)}.json: the bytes on disk differ from specs/{LOCK_NAME} after writing; run update-specs again")
    return changes
