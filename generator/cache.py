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

from kccgen.generator.diagnostics import Diagnostic
from kccgen.generator.ir.model import MemoHit, SkippedKind

CACHE_DIR = ".kccgen-cache"


def _canon(obj: object, memo: dict[int, tuple[object, bytes]]) -> bytes:
    """Canonical bytes of ``obj``, stable across processes: sets are sorted and
    dataclasses are walked by field, so hash randomisation cannot change a key
    (pickle would). A dataclass stands for the sha256 of its fields, computed once
    per object of one slice, and each class's field names are looked up once:
    feeding the hash one value at a time took about a minute per run at 1,045
    Kinds, this about 10 s."""
    t = type(obj)
    if isinstance(obj, str) and t is str:
        b = obj.encode()
        return b"s%d:" % len(b) + b
    if obj is None or t is bool or t is int or t is float or t is bytes:
        return f"{t.__name__}:{obj!r};".encode()
    if isinstance(obj, Enum):
        return f"E:{t.__name__}.{obj.name};".encode()
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        hit = memo.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]  # the IR is frozen and shares sub-objects (types, facts, fields)
        names = _FIELDS.get(t)
        if names is None:
            names = _FIELDS[t] = tuple(f.name for f in dataclasses.fields(obj))
        h = hashlib.sha256(f"D:{t.__name__}(".encode())
        for n in names:
            h.update(n.encode() + b"=" + _canon(getattr(obj, n), memo))
        out = b"D" + h.digest()  # a fixed-size stand-in: parents never copy a subtree's bytes
        memo[id(obj)] = (obj, out)
        return out
    if isinstance(obj, tuple | list):
        return b"[" + b"".join(_canon(v, memo) for v in obj) + b"]"
    if isinstance(obj, dict):
        return b"{" + b"".join(_canon(k, memo) + _canon(obj[k], memo) for k in sorted(obj, key=repr)) + b"}"
    if isinstance(obj, set | frozenset):
        return b"S" + b",".join(sorted(_canon(v, memo) for v in obj)) + b";"
    raise TypeError(f"cannot digest {t.__name__}")


_FIELDS: dict[type, tuple[str, ...]] = {}


def digest(obj: object, salt: str = "") -> str:
    h = hashlib.sha256(salt.encode())
    h.update(_canon(obj, {}))
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

    def put(self, name: str, key: str, files: dict[str, str], built: dict[str, object] | None = None) -> None:
        """One file per unit, replaced atomically (a newer key overwrites). ``built``
        adds what ``UnitMemo`` needs to skip the unit's build next time: its build
        key (``inputs``), Kinds and index entries."""
        _write_json(self._path(name), {"key": key, "files": files, **(built or {})})


def _write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(data, out, sort_keys=True)
    os.replace(tmp, path)


class UnitMemo:
    """``build_ir``'s memo (see generator/ir/build.py ``UnitMemo``), kept beside the
    render cache: per unit, the derived Kinds that failed and the diagnostics of each
    build key of the last run (``build/<unit>.json``); a unit is *complete* under a
    key when its render entry was written for that key too, with its Kinds and index
    entries. A corrupt or foreign entry is a miss."""

    def __init__(self, root: Path, salt: str) -> None:
        self.dir = root / CACHE_DIR
        self.salt = salt
        self.inputs: dict[str, str] = {}  # unit -> the key it was built under this run
        self._records: dict[str, dict[str, object]] = {}
        self._kept: dict[str, tuple[dict[str, str], dict[str, object]]] = {}  # unit -> (files, index entries)

    def _build_path(self, name: str) -> Path:
        return self.dir / "build" / f"{name}.json"

    def lookup(self, name: str, key: str) -> MemoHit | None:
        try:
            seen = json.loads(self._build_path(name).read_text(encoding="utf-8"))[key]
            failures = tuple(SkippedKind(**f) for f in seen["failures"])
            diagnostics = tuple(Diagnostic(**d) for d in seen["diagnostics"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        self._records.setdefault(name, {})[key] = seen
        kinds = None
        try:
            entry = json.loads((self.dir / f"{name}.json").read_text(encoding="utf-8"))
            if entry.get("inputs") == key and not failures:
                kinds = tuple((str(g), str(k), str(f)) for g, k, f in entry["kinds"])
                self._kept[name] = ({str(p): str(t) for p, t in entry["files"].items()}, dict(entry["index"]))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            kinds = None
        return MemoHit(failures, diagnostics, kinds)

    def record(self, name: str, key: str, failures: tuple[SkippedKind, ...], diagnostics: tuple[Diagnostic, ...]) -> None:
        self.inputs[name] = key
        self._records.setdefault(name, {})[key] = {
            "failures": [dataclasses.asdict(f) for f in failures],
            "diagnostics": [dataclasses.asdict(d) for d in diagnostics],
        }

    def kept(self, name: str) -> tuple[dict[str, str], dict[str, object]]:
        """A cached unit's files and index entries, as read by ``lookup``."""
        return self._kept[name]

    def save(self) -> None:
        """This run's keys only, per unit touched: older keys are dropped."""
        for name, records in sorted(self._records.items()):
            _write_json(self._build_path(name), records)
