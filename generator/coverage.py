"""``kccgen coverage``: one row per resource of every pinned document.

Each resource is a Kind (tier ``curated``: a hand-reviewed kind config;
``generated``: derived by an ``auto`` kind file and emitted) or is excluded
with the reason. The report also counts config lines per auto Kind and, when
Config Connector's Kind list is at hand (``--kcc``), how many of the Kinds
both projects have carry Config Connector's name.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

from kccgen.discovery.document import iter_resources
from kccgen.documents import served_stage
from kccgen.generator.ir.candidates import method_exclusion
from kccgen.generator.ir.model import IR, Candidate
from kccgen.generator.naming import singular
from kccgen.generator.spec.kinds import KindsFile
from kccgen.generator.spec.loader import Specs


@dataclass(frozen=True)
class Row:
    api: str  # the document that serves the resource (or would)
    resource: str
    kind: str
    tier: str
    reason: str
    config_lines: float
    also: tuple[str, ...] = ()  # the other pinned documents that have it
    stage: str = ""  # "ga" or "beta": what kind of document serves it ("" for alpha, preview)


@dataclass(frozen=True)
class KccMatch:
    kcc_kind: str
    group: str
    ours: str  # our Kind for the same resource ("" if none)
    resource: str
    ours_group: str = ""
    plural: str = ""  # Config Connector's CRD plural ("" when not compared)
    ours_plural: str = ""
    versions: tuple[str, ...] = ()  # the versions Config Connector serves
    ours_versions: tuple[str, ...] = ()  # the versions our CRD serves

    @property
    def missing_versions(self) -> tuple[str, ...]:
        """Config Connector's version names our CRD does not serve (its manifests would be refused)."""
        return tuple(v for v in self.versions if v not in self.ours_versions) if self.ours_versions else ()

    @property
    def matched(self) -> bool:
        """Config Connector's Kind, group and plural."""
        return self.ours == self.kcc_kind and self.ours_group == self.group and self.ours_plural == self.plural


@dataclass(frozen=True)
class Coverage:
    rows: tuple[Row, ...]
    auto_lines: int
    auto_kinds: int
    kcc: tuple[KccMatch, ...]
    unresolved: tuple[tuple[str, str], ...]  # (Kind, field and candidates)

    def count(self, tier: str) -> int:
        return sum(r.tier == tier for r in self.rows)

    @property
    def kinds(self) -> int:
        return sum(r.tier in ("curated", "generated", "verified") for r in self.rows)

    @property
    def beta_kinds(self) -> int:
        return sum(r.tier in ("curated", "generated", "verified") and r.stage == "beta" for r in self.rows)

    @property
    def lines_per_auto_kind(self) -> float:
        return self.auto_lines / self.auto_kinds if self.auto_kinds else 0.0

    @property
    def kcc_matched(self) -> int:
        return sum(m.matched for m in self.kcc)

    @property
    def kcc_versions_served(self) -> int:
        """Shared Kinds whose CRD serves every version name Config Connector serves."""
        return sum(m.matched and not m.missing_versions for m in self.kcc)


def config_lines(path: Path) -> int:
    """Lines a person wrote: not blank, not a comment."""
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip() and not line.lstrip().startswith("#"))


def auto_lines(path: Path, kf: KindsFile) -> int:
    """Lines an auto file spends on derived Kinds: all of them when it lists no
    curated Kind, else its ``auto``, ``overrides``, ``exclude`` and ``locations`` lines."""
    if not kf.kinds:
        return config_lines(path)
    overrides = {r: o.model_dump(by_alias=True, exclude_defaults=True) for r, o in kf.overrides.items()}
    locations = kf.locations.model_dump(by_alias=True, exclude_defaults=True) if kf.locations else None
    extra = {k: v for k, v in (("overrides", overrides), ("exclude", kf.exclude), ("locations", locations)) if v}
    # kccVersions: a line for the key and one per version (a flow list of Kinds)
    versions = 1 + len(kf.kcc_versions) if kf.kcc_versions else 0
    return 1 + (len(yaml.safe_dump(extra).splitlines()) if extra else 0) + versions


def passing_kinds(verified_json: Path | None) -> frozenset[str]:
    """Kinds whose generated lifecycle suite passed (``kccctl verify --write``);
    tests/test_lifecycle.py re-runs each, so the file cannot claim a pass."""
    if verified_json is None or not verified_json.exists():
        return frozenset()
    data = json.loads(verified_json.read_text())
    return frozenset(k for k, v in data.get("kinds", {}).items() if v.get("pass"))


def coverage(specs: Specs, ir: IR, kcc_tsv: Path | None = None, verified_json: Path | None = None) -> Coverage:
    built = {k.kind for k in ir.kinds}
    verified = passing_kinds(verified_json)
    skipped = {s.kind: s.reason for s in ir.skipped}
    auto_files = {file for file, kf in specs.kinds if kf.auto}
    lines = {file: auto_lines(specs.root.parent / file, kf) if kf.auto else config_lines(specs.root.parent / file) for file, kf in specs.kinds}
    per_file_kinds: dict[str, int] = {}
    for c in ir.candidates:
        if c.kind in built and c.tier == "generated":
            per_file_kinds[c.config_file] = per_file_kinds.get(c.config_file, 0) + 1
    rows: list[Row] = []
    covered: set[tuple[str, str]] = set()

    def lines_of(c: Candidate) -> float:
        n = per_file_kinds.get(c.config_file, 0)
        return round(lines[c.config_file] / n, 2) if n else 0.0

    for c in ir.candidates:
        covered.add((c.doc_key, c.resource))
        covered.update((k, c.resource) for k in c.also)
        stage = served_stage(c.doc_key)
        if c.tier == "generated" and c.kind not in built:
            rows.append(Row(c.doc_key, c.resource, c.kind, "excluded", f"not generated: {skipped.get(c.kind, 'unknown')}", 0.0, c.also, stage))
        else:
            tier = "verified" if c.tier == "generated" and c.kind in verified else c.tier
            rows.append(Row(c.doc_key, c.resource, c.kind, tier, c.reason, lines_of(c) if c.tier == "generated" else 0.0, c.also, stage))
    for k in ir.kinds:
        if (k.api.doc_key, k.resource) in covered:
            continue
        covered.add((k.api.doc_key, k.resource))
        rows.append(Row(k.api.doc_key, k.resource, k.kind, "curated", "", 0.0, (), served_stage(k.api.doc_key)))
    files = {kf.api: file for file, kf in specs.kinds}
    for key in sorted(specs.discovery):
        doc = specs.discovery[key]
        for dotted, res in iter_resources(doc):
            if (key, dotted) in covered:
                continue
            if doc.name in files:
                other = f"not derived: {files[doc.name]} lists its Kinds (no auto: true)"
            else:
                other = f"API not configured: no kind file for {doc.name}"
            rows.append(Row(key, dotted, "", "excluded", method_exclusion(res, dotted) or other, 0.0, (), served_stage(key)))
    auto_kinds = sum(per_file_kinds.values())
    spent = sum(lines[f] for f in auto_files)
    unresolved = tuple(sorted((k.kind, u) for k in ir.kinds for u in k.unresolved))
    kcc = _kcc_matches(specs, ir, rows, kcc_tsv) if kcc_tsv is not None and kcc_tsv.exists() else ()
    return Coverage(tuple(sorted(rows, key=lambda r: (r.api, r.resource))), spent, auto_kinds, kcc, unresolved)


def _kcc_matches(specs: Specs, ir: IR, rows: list[Row], tsv: Path) -> tuple[KccMatch, ...]:
    """Config Connector Kinds paired with the resource they name: our Kind of
    the same name (in any group), else, in a group we generate, the resource
    whose singular name ends the Kind name. A pair matches when the Kind, the
    group and the plural are all Config Connector's (``KccMatch.matched``)."""
    group_of_api = {kf.api: kf.group for _, kf in specs.kinds}
    ours = {(r.api, r.resource): r.kind for r in rows if r.tier in ("curated", "generated", "verified")}
    group_of = {k.kind: (k.group, k.plural) for k in ir.kinds}
    served = {k.kind: k.served_versions for k in ir.kinds}
    by_kind = {kind: key for key, kind in ours.items()}
    by_group: dict[str, list[tuple[str, str]]] = {}
    for api, res in ours:
        g = group_of_api.get(api.split(".")[0])
        if g:
            by_group.setdefault(g, []).append((api, res))
    out = []
    for line in tsv.read_text(encoding="utf-8").splitlines():
        if line.startswith(("#", "kind\t")) or not line.strip():
            continue
        kind, group, plural, versions = [*line.split("\t"), "", "", ""][:4]
        best = by_kind.get(kind)
        if best is None:
            for api, res in sorted(by_group.get(group, [])):
                if kind.lower().endswith(singular(res.rsplit(".", 1)[-1]).lower()):
                    best = (api, res)
                    break
        if best is not None:
            ours_kind = ours[best]
            our_group, our_plural = group_of.get(ours_kind, ("", ""))
            out.append(
                KccMatch(
                    kind, group, ours_kind, f"{best[0]} {best[1]}", our_group, plural, our_plural,
                    tuple(sorted(v for v in versions.split(",") if v)), tuple(sorted(served.get(ours_kind, ()))),
                )
            )
    return tuple(sorted(out, key=lambda m: m.kcc_kind))


def render_markdown(cov: Coverage) -> str:
    out = [
        "# Coverage: every resource of every pinned Discovery document",
        "",
        "Written by `kccgen coverage --write`; do not edit. Machine-readable: `docs/coverage.json`.",
        "",
        f"- Kinds: **{cov.kinds}** ({cov.count('curated')} curated, {cov.count('generated')} generated, {cov.count('verified')} verified)",
        f"- Kinds served from a beta document (no GA document has the resource): {cov.beta_kinds}",
        f"- Excluded resources: {cov.count('excluded')}",
        f"- Config lines per auto Kind: {cov.lines_per_auto_kind:.2f} ({cov.auto_lines} lines in auto kind files, {cov.auto_kinds} auto Kinds)",
        f"- Unresolved reference fields (left plain strings): {len(cov.unresolved)}",
    ]
    if cov.kcc:
        rate = 100.0 * cov.kcc_matched / len(cov.kcc)
        out.append(f"- Config Connector Kind names: {cov.kcc_matched} of {len(cov.kcc)} shared resources carry its Kind, group and plural ({rate:.1f} %)")
        vrate = 100.0 * cov.kcc_versions_served / cov.kcc_matched if cov.kcc_matched else 0.0
        out.append(
            f"- Config Connector version names: {cov.kcc_versions_served} of {cov.kcc_matched} Kinds with its name serve every version it serves ({vrate:.1f} %)"
        )
    reasons: dict[str, int] = {}
    for r in cov.rows:
        if r.tier == "excluded":
            key = r.reason.split(":")[0]
            reasons[key] = reasons.get(key, 0) + 1
    out += ["", "## Exclusions by reason", "", "| reason | resources |", "| --- | ---: |"]
    out += [f"| {k} | {v} |" for k, v in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))]
    if cov.kcc:
        out += ["", "## Config Connector names that differ", "", "| Config Connector | ours | resource |", "| --- | --- | --- |"]
        out += [f"| {m.kcc_kind} ({m.group}) | {m.ours} ({m.ours_group}) | {m.resource} |" for m in cov.kcc if not m.matched]
        missing = [m for m in cov.kcc if m.matched and m.missing_versions]
        if missing:
            out += ["", "## Config Connector versions not served (add them under `kccVersions:`)", "", "| Kind | missing | served |", "| --- | --- | --- |"]
            out += [f"| {m.ours} | {', '.join(m.missing_versions)} | {', '.join(m.ours_versions)} |" for m in missing]
    if cov.unresolved:
        out += ["", "## Unresolved references", "", "| Kind | field: candidates |", "| --- | --- |"]
        out += [f"| {k} | {u.replace('|', '/')} |" for k, u in cov.unresolved]
    out += [
        "",
        "## Every resource",
        "",
        "One row per resource of an API: the document that serves it (the newest GA one that has it, else a beta one, "
        "marked *beta*) and the other pinned documents that have it too.",
        "",
        "| API | resource | Kind | tier | reason | also in | config lines |",
        "| --- | --- | --- | --- | --- | --- | ---: |",
    ]
    out += [
        f"| {r.api}{' *beta*' if r.stage == 'beta' else ''} | {r.resource} | {r.kind} | {r.tier} | {r.reason.replace('|', '/')} | {', '.join(r.also)} | {r.config_lines:g} |"
        for r in cov.rows
    ]
    return "\n".join(out) + "\n"


def render_json(cov: Coverage) -> str:
    body = {
        "summary": {
            "kinds": cov.kinds,
            "curated": cov.count("curated"),
            "generated": cov.count("generated"),
            "verified": cov.count("verified"),
            "excluded": cov.count("excluded"),
            "beta": cov.beta_kinds,
            "config_lines_per_auto_kind": round(cov.lines_per_auto_kind, 3),
            "kcc_shared": len(cov.kcc),
            "kcc_matched": cov.kcc_matched,
            "kcc_versions_served": cov.kcc_versions_served,
            "unresolved_references": len(cov.unresolved),
        },
        "rows": [asdict(r) for r in cov.rows],
        "kcc": [asdict(m) for m in cov.kcc],
        "unresolved": [{"kind": k, "field": u} for k, u in cov.unresolved],
    }
    return json.dumps(body, indent=1, sort_keys=True) + "\n"
