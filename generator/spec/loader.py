"""Load a whole specs/ directory: Discovery documents, asset names, kind configs."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kccgen.discovery.document import DiscoveryDoc, load_discovery, parse_discovery
from kccgen.discovery.errors import SpecError
from kccgen.documents import LOCK_NAME, DocumentError, document_paths, read_document
from kccgen.generator.spec.accepted import AcceptedChangesFile, load_accepted_changes
from kccgen.generator.spec.asset_names import AssetNameTable, load_asset_names
from kccgen.generator.spec.claims import Claims, Evidence, load_claims, load_evidence
from kccgen.generator.spec.kinds import (
    ExternalKindsFile,
    KindsFile,
    RetiredKindsFile,
    load_external_kinds,
    load_kinds_file,
    load_retired_kinds,
)

#: Kinds that were generated and are no longer, each with its reason (see generator/kindset.py).
RETIRED_NAME = "retired-kinds.yaml"
#: Breaking changes to Kinds' spec paths, each with its reason (see generator/surface.py).
ACCEPTED_NAME = "accepted-changes.yaml"


@dataclass
class Documents(Mapping[str, DiscoveryDoc]):
    """The pinned documents by key ("pubsub.v1"), parsed on first use: the
    keys are known from file names and the lock, and a run that needs three
    APIs does not parse three hundred."""

    specs: Path
    display: dict[str, str]  # key -> display path
    _parsed: dict[str, DiscoveryDoc] = field(default_factory=dict)
    _sha256: dict[str, str] = field(default_factory=dict)

    def __getitem__(self, key: str) -> DiscoveryDoc:
        doc = self._parsed.get(key)
        if doc is None:
            if key not in self.display:
                raise KeyError(key)
            disp = self.display[key]
            try:
                text = read_document(self.specs, key)
            except DocumentError as e:
                raise SpecError(_display(self.specs, self.specs / LOCK_NAME), f"/documents/{key}", e.message) from None
            doc = parse_discovery(text, disp)
            if doc.key != key:
                raise SpecError(disp, "/name", f"file is named {key}.json but holds {doc.key}")
            self._parsed[key] = doc
            self._sha256[key] = hashlib.sha256(text).hexdigest()
        return doc

    def sha256(self, key: str) -> str:
        """The digest of the bytes ``key`` was parsed from (the build cache's key)."""
        self[key]
        return self._sha256[key]

    def __contains__(self, key: object) -> bool:
        return key in self.display  # without parsing (Mapping's default would)

    def __iter__(self) -> Iterator[str]:
        return iter(self.display)

    def __len__(self) -> int:
        return len(self.display)


@dataclass(frozen=True)
class Specs:
    root: Path
    discovery: Mapping[str, DiscoveryDoc]  # keyed "pubsub.v1", parsed lazily
    discovery_files: dict[str, str]  # key -> display path, for diagnostics
    asset_names: AssetNameTable
    kinds: tuple[tuple[str, KindsFile], ...]  # (display path, config), sorted by path
    external_kinds: ExternalKindsFile
    external_kinds_file: str
    retired_kinds: RetiredKindsFile = field(default_factory=RetiredKindsFile)
    retired_kinds_file: str = "specs/retired-kinds.yaml"
    # Config Connector's Kinds: what serves each (specs/kcc/claims.yaml) and the
    # evidence the claims are checked against (specs/kcc/evidence.yaml).
    claims: Claims = field(default_factory=lambda: Claims({}, {}, {}))
    evidence: Evidence = field(default_factory=lambda: Evidence(kcc_commit="", kinds={}))
    accepted_changes: AcceptedChangesFile = field(default_factory=AcceptedChangesFile)
    accepted_changes_file: str = "specs/accepted-changes.yaml"


def _display(root: Path, path: Path) -> str:
    """Paths in messages are relative to the specs dir's parent: no absolute paths."""
    try:
        return str(path.relative_to(root.parent))
    except ValueError:
        return str(path)


def load_specs(root: Path, fallback: Path | None = None) -> Specs:
    """Load ``root``; with ``fallback``, a root holding only Discovery documents
    (``discovery/`` or the JSON files themselves) borrows asset names and kind
    configs from the fallback specs dir (the lag report's OLD side)."""
    if fallback is not None:
        return _load_with_fallback(root, fallback)
    ddir = root / "discovery"
    if not ddir.is_dir():
        raise SpecError(_display(root, ddir), "", "missing Discovery directory")
    try:
        paths = document_paths(root)
    except DocumentError as e:
        raise SpecError(_display(root, root / LOCK_NAME), "", e.message) from None
    lock_disp = _display(root, root / LOCK_NAME)
    files = {key: _display(root, p) if p.is_relative_to(root) else f"{lock_disp}:{key}" for key, p in paths.items()}
    docs = Documents(root, files)
    assets = load_asset_names(root / "asset-names.yaml", _display(root, root / "asset-names.yaml"))
    kinds = []
    for p in sorted((root / "kinds").glob("*.yaml")):
        disp = _display(root, p)
        kinds.append((disp, load_kinds_file(p, disp)))
    ext_path = root / "external-kinds.yaml"
    ext_disp = _display(root, ext_path)
    external = load_external_kinds(ext_path, ext_disp) if ext_path.exists() else ExternalKindsFile(kinds=())
    ret_path = root / RETIRED_NAME
    ret_disp = _display(root, ret_path)
    retired = load_retired_kinds(ret_path, ret_disp) if ret_path.exists() else RetiredKindsFile()
    accepted, acc_disp = load_accepted(root)
    return Specs(
        root, docs, files, assets, tuple(kinds), external, ext_disp, retired, ret_disp, load_claims(root), load_evidence(root), accepted, acc_disp
    )


def retired_kinds(root: Path) -> frozenset[str]:
    """The Kinds ``root``'s retired-kinds.yaml retires (none when absent)."""
    path = root / RETIRED_NAME
    return frozenset(r.kind for r in load_retired_kinds(path, _display(root, path)).kinds) if path.exists() else frozenset()


def load_accepted(root: Path) -> tuple[AcceptedChangesFile, str]:
    """``root``'s accepted breaking changes and the file's display path (an empty file when absent)."""
    path = root / ACCEPTED_NAME
    disp = _display(root, path)
    return (load_accepted_changes(path, disp) if path.exists() else AcceptedChangesFile()), disp


def _load_with_fallback(root: Path, fallback: Path) -> Specs:
    base = load_specs(fallback)
    ddir = root / "discovery" if (root / "discovery").is_dir() else root
    docs: dict[str, DiscoveryDoc] = {}
    files: dict[str, str] = {}
    for p in sorted(ddir.glob("*.json")):
        disp = _display(root, p)
        doc = load_discovery(p, disp)
        docs[doc.key] = doc
        files[doc.key] = disp
    if not docs:
        raise SpecError(str(ddir), "", "no Discovery documents (*.json) found")
    assets = base.asset_names
    if (root / "asset-names.yaml").exists():
        assets = load_asset_names(root / "asset-names.yaml", _display(root, root / "asset-names.yaml"))
    return Specs(
        root, docs, files, assets, base.kinds, base.external_kinds, base.external_kinds_file, base.retired_kinds, base.retired_kinds_file, base.claims, base.evidence,
        base.accepted_changes, base.accepted_changes_file,
    )
