"""``kccgen lag``: what changed between two sets of Discovery documents.

Per Kind it reports fields whose behaviours changed (above all immutable ->
mutable and back: what kccgen enforces changes with them), fields added or
removed, and type changes, computed from the same mutability tables the
generator emits. A second section compares every schema of the same APIs, so
real flips show even when none touches our Kinds.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kccgen.discovery.behaviours import Behaviour, classify
from kccgen.discovery.document import DiscoveryDoc
from kccgen.generator.diagnostics import Reporter
from kccgen.generator.ir.build import build_ir
from kccgen.generator.ir.model import IR, KindIR, MutabilityIR
from kccgen.generator.spec.loader import Specs, load_specs


@dataclass
class FieldChange:
    path: str
    old: str
    new: str
    why: str = ""


@dataclass
class KindLag:
    kind: str
    old_revision: str | None
    new_revision: str | None
    # The Discovery document serving the Kind on each side: a resource moves
    # from a beta to a GA document (or an older to a newer GA one) and its Kind
    # keeps its name, group and spec paths; the move is reported, not a rename.
    old_doc: str | None = None
    new_doc: str | None = None
    became_mutable: list[FieldChange] = field(default_factory=list)
    became_immutable: list[FieldChange] = field(default_factory=list)
    behaviours_changed: list[FieldChange] = field(default_factory=list)
    types_changed: list[FieldChange] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    @property
    def moved(self) -> bool:
        return self.old_doc is not None and self.new_doc is not None and self.old_doc != self.new_doc

    @property
    def empty(self) -> bool:
        return not (self.moved or self.became_mutable or self.became_immutable or self.behaviours_changed or self.types_changed or self.added or self.removed)


@dataclass
class SchemaFlip:
    doc: str
    field: str
    old: list[str]
    new: list[str]


@dataclass
class LagReport:
    old_label: str
    new_label: str
    kinds: list[KindLag]
    schema_flips: list[SchemaFlip]
    documents: dict[str, tuple[str | None, str | None]]
    warnings: list[str]


def _immutable(m: MutabilityIR) -> bool:
    """Effectively immutable: a spec field the update method cannot change
    (marked Immutable, outside an update allow-list, or changed elsewhere)."""
    if m.path.startswith("spec.") and not m.identity and "output-only" not in m.behaviours:
        return not m.updatable
    return "immutable" in m.behaviours


def compare_kind(kind: str, old: KindIR | None, new: KindIR | None) -> KindLag:
    lag = KindLag(
        kind, old.api.revision if old else None, new.api.revision if new else None, old.api.doc_key if old else None, new.api.doc_key if new else None
    )
    o = {m.path: m for m in (old.mutability if old else ())}
    n = {m.path: m for m in (new.mutability if new else ())}
    lag.added = sorted(set(n) - set(o))
    lag.removed = sorted(set(o) - set(n))
    for path in sorted(set(o) & set(n)):
        a, b = o[path], n[path]
        if _immutable(a) and not _immutable(b):
            lag.became_mutable.append(FieldChange(path, "immutable", "mutable", f"now: {b.updatable_source}"))
        elif _immutable(b) and not _immutable(a):
            why = next((f.source for f in b.facts if f.behaviour is Behaviour.IMMUTABLE), b.updatable_source)
            lag.became_immutable.append(FieldChange(path, "mutable", "immutable", why))
        elif a.behaviours != b.behaviours:
            lag.behaviours_changed.append(FieldChange(path, ",".join(a.behaviours) or "-", ",".join(b.behaviours) or "-"))
        if a.type != b.type:
            lag.types_changed.append(FieldChange(path, a.type, b.type))
    return lag


def _behaviours(doc: DiscoveryDoc) -> dict[str, frozenset[str]]:
    out: dict[str, frozenset[str]] = {}
    for sname, schema in doc.schemas.items():
        for pname, prop in schema.properties.items():
            out[f"{sname}.{pname}"] = frozenset(f.behaviour.value for f in classify(prop.description, prop.read_only))
    return out


def schema_flips(old: Specs, new: Specs, keys: set[str]) -> list[SchemaFlip]:
    """Immutable/output-only flips in every schema of the documents ``keys``
    (those the Kinds use) that both sides have."""
    flips = []
    watched = {"immutable", "output-only", "input-only"}
    for key in sorted(keys & set(old.discovery) & set(new.discovery)):
        a, b = _behaviours(old.discovery[key]), _behaviours(new.discovery[key])
        for f in sorted(set(a) & set(b)):
            if (a[f] ^ b[f]) & watched:
                flips.append(SchemaFlip(key, f, sorted(a[f]), sorted(b[f])))
    return flips


def compare(old: Specs, new: Specs, old_label: str, new_label: str) -> LagReport:
    rep_old, rep_new = Reporter(), Reporter()
    old_ir: IR = build_ir(old, rep_old, strict=False)
    new_ir: IR = build_ir(new, rep_new, strict=False)
    kinds = sorted({k.kind for k in old_ir.kinds} | {k.kind for k in new_ir.kinds})

    def get(ir: IR, name: str) -> KindIR | None:
        return next((k for k in ir.kinds if k.kind == name), None)

    used = {k.api.doc_key for ir in (old_ir, new_ir) for k in ir.kinds}
    docs = {
        key: (old.discovery[key].revision if key in old.discovery else None, new.discovery[key].revision if key in new.discovery else None)
        for key in sorted(used)
    }
    return LagReport(
        old_label,
        new_label,
        [compare_kind(k, get(old_ir, k), get(new_ir, k)) for k in kinds],
        schema_flips(old, new, used),
        docs,
        [f"old: {d}" for d in rep_old.sorted()],
    )


def render_text(r: LagReport, limit: int = 25) -> str:
    out = [f"kccgen lag: {r.old_label} -> {r.new_label}", ""]
    out.append("Discovery documents (old revision -> new revision):")
    for key, (a, b) in r.documents.items():
        out.append(f"  {key}: {a or 'absent'} -> {b or 'absent'}")
    total = {"mutable": 0, "immutable": 0, "added": 0, "removed": 0, "types": 0, "behaviours": 0}
    for k in r.kinds:
        out.append("")
        out.append(f"{k.kind} ({k.old_revision or 'absent'} -> {k.new_revision or 'absent'})")
        if k.empty:
            out.append("  no changes")
            continue
        if k.moved:
            out.append(f"  served from {k.new_doc}, was {k.old_doc} (the Kind keeps its name and spec paths)")
        sections: list[tuple[str, list[str]]] = [
            ("immutable -> mutable", [f"{c.path}  ({c.why})" for c in k.became_mutable]),
            ("mutable -> immutable", [f"{c.path}  ({c.why})" for c in k.became_immutable]),
            ("behaviours changed", [f"{c.path}: {c.old} -> {c.new}" for c in k.behaviours_changed]),
            ("type changed", [f"{c.path}: {c.old} -> {c.new}" for c in k.types_changed]),
            ("added", k.added),
            ("removed", k.removed),
        ]
        for title, items in sections:
            if not items:
                continue
            out.append(f"  {title} ({len(items)}):")
            out.extend(f"    {x}" for x in items[:limit])
            if len(items) > limit:
                out.append(f"    ... and {len(items) - limit} more")
        total["mutable"] += len(k.became_mutable)
        total["immutable"] += len(k.became_immutable)
        total["behaviours"] += len(k.behaviours_changed)
        total["types"] += len(k.types_changed)
        total["added"] += len(k.added)
        total["removed"] += len(k.removed)
    moves = [k for k in r.kinds if k.moved]
    out.append("")
    out.append(f"Kinds served from another document: {len(moves)}")
    out.extend(f"  {k.kind}: {k.old_doc} -> {k.new_doc}" for k in moves[: limit * 4])
    out.append("")
    out.append(
        f"Kinds total: {total['mutable']} immutable->mutable, {total['immutable']} mutable->immutable, "
        f"{total['behaviours']} other behaviour changes, {total['types']} type changes, "
        f"{total['added']} fields added, {total['removed']} removed"
    )
    out.append("")
    out.append(f"All schemas of the same APIs: {len(r.schema_flips)} immutable/output-only/input-only flips")
    for f in r.schema_flips[: limit * 4]:
        out.append(f"  {f.doc} {f.field}: {','.join(f.old) or '-'} -> {','.join(f.new) or '-'}")
    if len(r.schema_flips) > limit * 4:
        out.append(f"  ... and {len(r.schema_flips) - limit * 4} more")
    if r.warnings:
        out.append("")
        out.append(f"Warnings reading the old side ({len(r.warnings)}):")
        out.extend(f"  {w}" for w in r.warnings[:limit])
    return "\n".join(out) + "\n"


def render_json(r: LagReport) -> str:
    data: dict[str, Any] = asdict(r)
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def package_specs(version: str, keys: list[str], dest: Path) -> Path:
    """Discovery documents of an older google-api-python-client, from PyPI."""
    wheels = dest / "wheel"
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", f"google-api-python-client=={version}", "-d", str(wheels)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"pip could not download google-api-python-client=={version}: {proc.stderr.strip().splitlines()[-1:]}")
    whl = next(wheels.glob("*.whl"))
    out = dest / "discovery"
    out.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(whl) as z:
        names = set(z.namelist())
        for key in keys:
            member = f"googleapiclient/discovery_cache/documents/{key}.json"
            if member in names:
                (out / f"{key}.json").write_bytes(z.read(member))
    return dest


def run(old_dir: Path | None, new_dir: Path, from_package: str | None, fmt: str) -> str:
    new = load_specs(new_dir)
    with tempfile.TemporaryDirectory(prefix="kccgen-lag-") as tmp:
        if from_package is not None:
            root = package_specs(from_package, sorted(new.discovery), Path(tmp))
            old = load_specs(root, fallback=new_dir)
            old_label = f"google-api-python-client {from_package}"
        else:
            assert old_dir is not None
            old = load_specs(old_dir, fallback=new_dir)
            old_label = str(old_dir)
        from importlib.metadata import version

        new_label = f"{new_dir} (google-api-python-client {version('google-api-python-client')})"
        report = compare(old, new, old_label, new_label)
    return render_json(report) if fmt == "json" else render_text(report)
