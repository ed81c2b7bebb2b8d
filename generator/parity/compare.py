"""Comparing one Kind's spec paths with KCC's, and every Kind into a ParityReport.

Ours-only paths are split by why KCC lacks them: API fields KCC has under no
name (the schema lag kccgen closes), counterparts of KCC's renamed paths, API
fields KCC carries outside its spec (curated ``elsewhere``) and KRM-only
fields with no API field behind them (``projectRef``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kccgen.discovery.document import DiscoveryDoc
from kccgen.generator.ir.model import IR, KindIR, MutabilityIR
from kccgen.generator.parity.classify import KccOnly, classify, our_side
from kccgen.generator.parity.curated import CURATED, Curated, Elsewhere, Mapping
from kccgen.generator.parity.kcc import KccCrd, crd_file, load_kcc_crd
from kccgen.generator.spec.loader import Specs


@dataclass(frozen=True)
class ShapeDiff:
    """A shared path whose schema shape (object, map, array, scalar) differs."""

    path: str
    kcc: str
    ours: str


@dataclass(frozen=True)
class KindParity:
    """One Kind's comparison: every path of both sides, in exactly one bucket."""

    kind: str
    crd: KccCrd
    doc_key: str
    revision: str
    schema: str
    kcc_paths: tuple[str, ...]
    our_paths: tuple[str, ...]
    shared: tuple[str, ...]
    kcc_only: tuple[KccOnly, ...]
    ours_only: tuple[str, ...]  # API-backed: the schema lag
    ours_elsewhere: tuple[Elsewhere, ...]  # API-backed, carried outside KCC's spec
    ours_krm_only: tuple[str, ...]  # no API field behind them
    ours_matched: tuple[str, ...]  # counterparts of KCC-only paths (renamed, refs)
    shape_diffs: tuple[ShapeDiff, ...]


@dataclass(frozen=True)
class ParityReport:
    """Every Kind compared, with what could not be and the curated entries that failed."""

    kinds: tuple[KindParity, ...]
    missing_crds: tuple[str, ...]  # Kinds with no KCC CRD file
    problems: tuple[str, ...]  # curated entries that did not check out or were not used


def _our_shape(row: MutabilityIR) -> str:
    t = row.type
    for prefix, shape in (("array", "array"), ("map", "map"), ("object", "object"), ("any", "any")):
        if t.startswith(prefix):
            return shape
    return "scalar"


def _shapes_differ(kcc: str, ours: str) -> bool:
    return "any" not in (kcc, ours) and kcc != ours


def compare(
    kind: KindIR,
    doc: DiscoveryDoc,
    crd: KccCrd,
    curated: Curated,
    problems: list[str],
    used: set[Mapping | Elsewhere],
) -> KindParity:
    """One Kind; failing curated entries go to ``problems``, applied ones to ``used``."""
    side = our_side(kind, doc)
    kcc = {f.path: f for f in crd.fields}
    shared = sorted(set(kcc) & side.spec)
    kcc_only = [
        classify(kind.kind, side, kcc[p], curated, problems, used)
        for p in sorted(set(kcc) - side.spec)
    ]
    matched = {k.ours for k in kcc_only if k.ours is not None and k.ours in side.spec} - set(shared)
    rest = side.spec - set(shared) - matched

    def krm_only(p: str) -> bool:
        return all(m.api_path is None for m in kind.mutability if m.path == "spec." + p)

    api_only = {p for p in rest if not krm_only(p)}
    elsewhere = []
    for e in curated.elsewhere:
        if e.kind != kind.kind:
            continue
        if e.ours in api_only:
            used.add(e)
            elsewhere.append(e)
            api_only.discard(e.ours)
        else:
            problems.append(f"{kind.kind}: {e.ours} (KCC: {e.kcc}) is not an ours-only API field")

    shape_diffs = []
    for p in shared:
        ours = _our_shape(side.rows["spec." + p])
        if _shapes_differ(kcc[p].shape, ours):
            shape_diffs.append(ShapeDiff(p, kcc[p].shape, ours))
    return KindParity(
        kind=kind.kind,
        crd=crd,
        doc_key=doc.key,
        revision=kind.api.revision,
        schema=kind.resource_schema,
        kcc_paths=tuple(sorted(kcc)),
        our_paths=tuple(sorted(side.spec)),
        shared=tuple(shared),
        kcc_only=tuple(kcc_only),
        ours_only=tuple(sorted(api_only)),
        ours_elsewhere=tuple(sorted(elsewhere, key=lambda e: e.ours)),
        ours_krm_only=tuple(sorted(p for p in rest if krm_only(p))),
        ours_matched=tuple(sorted(matched)),
        shape_diffs=tuple(shape_diffs),
    )


def build(ir: IR, specs: Specs, kcc_crds: Path, curated: Curated = CURATED) -> ParityReport:
    """Every Kind of ``ir`` against its CRD in ``kcc_crds``; unused curated entries are problems."""
    curated.check_kinds({k.kind for k in ir.kinds})
    problems: list[str] = []
    used: set[Mapping | Elsewhere] = set()
    kinds: list[KindParity] = []
    missing: list[str] = []
    for k in sorted(ir.kinds, key=lambda k: k.kind):
        path = kcc_crds / crd_file(k)
        if not path.is_file():
            missing.append(k.kind)
            continue
        crd = load_kcc_crd(path)
        kinds.append(compare(k, specs.discovery[k.api.doc_key], crd, curated, problems, used))
    present = {k.kind for k in kinds}
    for m in curated.mappings:
        if m not in used and m.kind in present:
            problems.append(f"{m.kind}: mapping {m.kcc} -> {m.ours} explains no KCC path")
    for e in curated.elsewhere:
        if e not in used and e.kind in present:
            problems.append(f"{e.kind}: {e.ours} (KCC: {e.kcc}) was not used")
    return ParityReport(tuple(kinds), tuple(missing), tuple(problems))
