"""Load a whole specs/ directory: Discovery documents, asset names, kind configs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kccgen.discovery.document import DiscoveryDoc, load_discovery
from kccgen.discovery.errors import SpecError
from kccgen.generator.spec.asset_names import AssetNameTable, load_asset_names
from kccgen.generator.spec.kinds import (
    ExternalKindsFile,
    KindsFile,
    load_external_kinds,
    load_kinds_file,
)


@dataclass(frozen=True)
class Specs:
    root: Path
    discovery: dict[str, DiscoveryDoc]  # keyed "pubsub.v1"
    discovery_files: dict[str, str]  # key -> display path, for diagnostics
    asset_names: AssetNameTable
    kinds: tuple[tuple[str, KindsFile], ...]  # (display path, config), sorted by path
    external_kinds: ExternalKindsFile
    external_kinds_file: str


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
    docs: dict[str, DiscoveryDoc] = {}
    files: dict[str, str] = {}
    for p in sorted(ddir.glob("*.json")):
        disp = _display(root, p)
        doc = load_discovery(p, disp)
        if p.stem != doc.key:
            raise SpecError(disp, "/name", f"file is named {p.name} but holds {doc.key}")
        docs[doc.key] = doc
        files[doc.key] = disp
    assets = load_asset_names(root / "asset-names.yaml", _display(root, root / "asset-names.yaml"))
    kinds = []
    for p in sorted((root / "kinds").glob("*.yaml")):
        disp = _display(root, p)
        kinds.append((disp, load_kinds_file(p, disp)))
    ext_path = root / "external-kinds.yaml"
    ext_disp = _display(root, ext_path)
    external = load_external_kinds(ext_path, ext_disp) if ext_path.exists() else ExternalKindsFile(kinds=())
    return Specs(root, docs, files, assets, tuple(kinds), external, ext_disp)


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
    return Specs(root, docs, files, assets, base.kinds, base.external_kinds, base.external_kinds_file)
