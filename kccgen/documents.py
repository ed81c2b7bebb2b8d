"""Where each pinned Discovery document comes from (stdlib only: every layer reads it).

A document is either *vendored* (a copy in ``specs/discovery/<key>.json``, for
the APIs of curated Kinds, so reviewers see their changes line by line) or
*locked*: ``specs/discovery.lock.json`` records its source (the pinned
google-api-python-client's discovery cache) and sha256, and the bytes are read
from that package. A locked document whose bytes no longer match its sha256
is an error naming the lock, never a silent schema change: ``kccgen
update-specs`` is the only way a document moves.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

LOCK_NAME = "discovery.lock.json"
CLIENT = "google-api-python-client"


class DocumentError(Exception):
    """A document that is missing, or whose bytes differ from its lock entry."""

    def __init__(self, file: str, message: str) -> None:
        super().__init__(f"{file}: {message}")
        self.file = file
        self.message = message


@dataclass(frozen=True)
class Locked:
    """One lock entry: ``source`` names the package and the file inside it."""

    key: str  # "pubsub.v1"
    sha256: str
    revision: str
    source: str  # "google-api-python-client==2.202.0:discovery_cache/documents/pubsub.v1.json"
    vendored: bool

    def as_json(self) -> dict[str, object]:
        return {"revision": self.revision, "sha256": self.sha256, "source": self.source, "vendored": self.vendored}


def client_documents_dir() -> Path:
    """The pinned client's Discovery cache (google-api-python-client ships it)."""
    import googleapiclient

    return Path(googleapiclient.__file__).parent / "discovery_cache" / "documents"


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_lock(specs: Path) -> dict[str, Locked]:
    path = specs / LOCK_NAME
    if not path.exists():
        return {}
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return {
            key: Locked(key, str(v["sha256"]), str(v["revision"]), str(v["source"]), bool(v["vendored"]))
            for key, v in sorted(raw["documents"].items())
        }
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise DocumentError(f"specs/{LOCK_NAME}", f"malformed lock ({type(e).__name__}: {e}); rewrite it with `kccgen update-specs`") from None


def lock_text(entries: dict[str, Locked]) -> str:
    """Sorted, one key per line: a moved document is a one-line diff."""
    body = {
        "comment": "Written by `kccgen update-specs`; do not edit. Locked documents are read from the pinned client.",
        "documents": {k: entries[k].as_json() for k in sorted(entries)},
    }
    return json.dumps(body, indent=1, sort_keys=True) + "\n"


def document_paths(specs: Path) -> dict[str, Path]:
    """Every pinned document, key -> file: vendored copies first, then locked
    entries from the client's cache. Bytes are checked when read (``read_document``)."""
    vendored = {p.stem: p for p in sorted((specs / "discovery").glob("*.json"))}
    out = dict(vendored)
    lock = read_lock(specs)
    if lock:
        base = client_documents_dir()
        for key, entry in lock.items():
            if key not in out and not entry.vendored:
                out[key] = base / f"{key}.json"
    return dict(sorted(out.items()))


def client_version() -> str:
    from importlib.metadata import version

    return version(CLIENT)


def locked_versions(specs: Path) -> list[str]:
    """The client versions the lock's documents came from (one, after update-specs)."""
    return sorted({e.source.split(":", 1)[0].removeprefix(f"{CLIENT}==") for e in read_lock(specs).values() if e.source.startswith(f"{CLIENT}==")})


def client_problems(specs: Path) -> list[str]:
    """The lock names the client its documents came from; a different installed
    client (a pin moved without ``kccgen update-specs``) is one clear line,
    not a sha mismatch on whichever document happens to be read first."""
    installed = client_version()
    locked = locked_versions(specs)
    stale = [v for v in locked if v != installed]
    if not stale:
        return []
    return [
        f"specs/{LOCK_NAME}: documents are locked from {CLIENT}=={', '.join(stale)} but {installed} is installed "
        f"(the pin moved): run `kccgen update-specs` to lock its documents, then `make generate`"
    ]


@cache
def _checked(path: Path, sha256: str, key: str, lock: str) -> bytes:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DocumentError(lock, f"{key} is locked but {CLIENT} does not ship it ({path.name}); run `kccgen update-specs`") from None
    if sha256_of(data) != sha256:
        raise DocumentError(
            lock,
            f"{key}: the installed {CLIENT} ships different bytes (sha256 {sha256_of(data)[:12]}…, "
            f"locked {sha256[:12]}…); run `kccgen update-specs` to take the new document"
        )
    return data


def read_document(specs: Path, key: str) -> bytes:
    """The bytes of one pinned document, verified against the lock when locked."""
    vendored = specs / "discovery" / f"{key}.json"
    if vendored.exists():
        return vendored.read_bytes()
    entry = read_lock(specs).get(key)
    if entry is None:
        raise DocumentError(f"specs/{LOCK_NAME}", f"no Discovery document {key}: neither specs/discovery/{key}.json nor an entry in {LOCK_NAME}")
    return _checked(client_documents_dir() / f"{key}.json", entry.sha256, key, f"specs/{LOCK_NAME}")


# --- versions: which document of an API serves a resource ------------------------------

# alpha, beta, preview and the "v1p1beta1" family are not GA; "v1b3" (Dataflow's
# production API) is.
_NOT_GA = re.compile(r"alpha|beta|preview|dev|test")


def split_key(key: str) -> tuple[str, str, str]:
    """``admin.directory_v1`` -> (name, family, version): ("admin", "directory", "v1").
    A family is a separately versioned API sharing a name (Admin SDK's directory
    and reports)."""
    name, _, ver = key.partition(".")
    family, _, v = ver.rpartition("_")
    return name, family, v


def is_ga(key: str) -> bool:
    return not _NOT_GA.search(split_key(key)[2])


def _version_order(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", version))


def newest_ga(keys: Iterable[str]) -> dict[tuple[str, str], str]:
    """(name, family) -> the newest GA document key among ``keys``."""
    best: dict[tuple[str, str], str] = {}
    for key in sorted(keys):
        if not is_ga(key):
            continue
        name, family, version = split_key(key)
        cur = best.get((name, family))
        if cur is None or _version_order(version) > _version_order(split_key(cur)[2]):
            best[(name, family)] = key
    return best


def is_beta(key: str) -> bool:
    """A beta document (``v1beta1``, ``v1p1beta1``, ``v2beta``), not an alpha or preview one."""
    version = split_key(key)[2]
    return "beta" in version and not re.search(r"alpha|preview|dev|test", version)


def served_stage(key: str) -> str:
    """Which documents serve Kinds: ``ga`` and ``beta`` ones (``""`` for alpha, preview...)."""
    return "ga" if is_ga(key) else "beta" if is_beta(key) else ""


def preferred(keys: Iterable[str]) -> list[str]:
    """One API's (name, family) documents in the order a resource is read from
    them: GA versions newest first, then beta versions newest first; alpha and
    preview documents are left out (they serve no Kind)."""
    keys = list(keys)
    ga = sorted((k for k in keys if is_ga(k)), key=lambda k: _version_order(split_key(k)[2]), reverse=True)
    beta = sorted((k for k in keys if is_beta(k)), key=lambda k: _version_order(split_key(k)[2]), reverse=True)
    return ga + beta


def api_documents(keys: Iterable[str], name: str, family: str) -> list[str]:
    """The documents of API ``name`` (and ``family``) among ``keys``, in ``preferred`` order."""
    return preferred(k for k in keys if split_key(k)[:2] == (name, family))
