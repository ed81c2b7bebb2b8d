"""Render cache: one entry per API unit, keyed by a digest of its IR slice.

A change in one Discovery document changes that unit's slice (and the slices
of units whose Kinds reference its Kinds), so only those are rendered again;
the rest are read back. Keys salt the slice digest with ``code_digest`` (the
generator, templates and tool pins), so a code change invalidates everything.
Entries live in ``<root>/.kccgen-cache/`` (git-ignored) and are written
atomically; a corrupt or foreign entry is a miss, never an error.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from enum import Enum
from pathlib import Path
from typing import Any

CACHE_DIR = ".kccgen-cache"


def _feed(h: Any, obj: object) -> None:
    """Stable across processes: sets are sorted and dataclasses are walked by
    field, so hash randomisation cannot change a key (pickle would)."""
    if obj is None or isinstance(obj, bool | int | float | str | bytes):
        h.update(f"{type(obj).__name__}:{obj!r};".encode())
    elif isinstance(obj, Enum):
        h.update(f"E:{type(obj).__name__}.{obj.name};".encode())
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        h.update(f"D:{type(obj).__name__}(".encode())
        for f in dataclasses.fields(obj):
            h.update(f.name.encode() + b"=")
            _feed(h, getattr(obj, f.name))
        h.update(b")")
    elif isinstance(obj, tuple | list):
        h.update(b"[")
        for v in obj:
            _feed(h, v)
        h.update(b"]")
    elif isinstance(obj, dict):
        h.update(b"{")
        for k in sorted(obj, key=repr):
            _feed(h, k)
            _feed(h, obj[k])
        h.update(b"}")
    elif isinstance(obj, set | frozenset):
        h.update(b"S" + ",".join(sorted(digest(v) for v in obj)).encode())
    else:
        raise TypeError(f"cannot digest {type(obj).__name__}")


def digest(obj: object, salt: str = "") -> str:
    h = hashlib.sha256(salt.encode())
    _feed(h, obj)
    return h.hexdigest()


class RenderCache:
    def __init__(self, root: Path) -> None:
        self.dir = root / CACHE_DIR

    def _path(self, name: str) -> Path:
        return self.dir / f"{name}.json"

    def get(self, name: str, key: str) -> dict[str, str] | None:
        try:
            entry = json.loads(self._path(name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or entry.get("key") != key or not isinstance(entry.get("files"), dict):
            return None
        return {str(k): str(v) for k, v in entry["files"].items()}

    def put(self, name: str, key: str, files: dict[str, str]) -> None:
        """One file per unit, replaced atomically (a newer key overwrites)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.dir, prefix=f".{name}.")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"key": key, "files": files}, out, sort_keys=True)
        os.replace(tmp, self._path(name))
