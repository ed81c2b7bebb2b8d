"""Refresh specs/discovery/ from the installed google-api-python-client.

Only the documents already pinned (plus any named on the command line) are
copied; a short summary says what changed so the maintainer knows whether a
regeneration will move anything.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The APIs our curated Kinds come from (issue: generator foundation).
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


def package_documents_dir() -> Path:
    """Where the pinned client ships its Discovery cache."""
    import googleapiclient

    return Path(googleapiclient.__file__).parent / "discovery_cache" / "documents"


def package_version() -> str:
    from importlib.metadata import version

    return version("google-api-python-client")


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

    def lines(self) -> list[str]:
        if self.old_revision is None:
            return [f"{self.key}: added (revision {self.new_revision})"]
        head = f"{self.key}: revision {self.old_revision} -> {self.new_revision}"
        if not (self.schemas_added or self.schemas_removed or self.fields_added or self.fields_removed):
            if self.old_revision == self.new_revision:
                return [f"{self.key}: unchanged (revision {self.new_revision})"]
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
        os_, ns = set(old.get("schemas") or {}), set(new.get("schemas") or {})
        ch.schemas_added = sorted(ns - os_)
        ch.schemas_removed = sorted(os_ - ns)
        of, nf = _fields(old), _fields(new)
        ch.fields_added = sorted(nf - of)
        ch.fields_removed = sorted(of - nf)
    return ch


def update_specs(dest: Path, source: Path | None = None, extra: tuple[str, ...] = ()) -> list[DocChange]:
    """Copy the pinned documents into ``dest``; return what changed."""
    src = source or package_documents_dir()
    dest.mkdir(parents=True, exist_ok=True)
    keys = sorted({p.stem for p in dest.glob("*.json")} | set(DEFAULT_DOCS) | set(extra))
    changes = []
    for key in keys:
        sp = src / f"{key}.json"
        if not sp.exists():
            raise FileNotFoundError(f"{sp}: {key} is not shipped by google-api-python-client {package_version()}")
        new_text = sp.read_text(encoding="utf-8")
        new = json.loads(new_text)
        dp = dest / f"{key}.json"
        old = json.loads(dp.read_text(encoding="utf-8")) if dp.exists() else None
        changes.append(compare(key, old, new))
        dp.write_text(new_text, encoding="utf-8")
    return changes
