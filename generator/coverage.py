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
from kccgen.generator.ir.model import IR, Candidate, KindIR
from kccgen.generator.ir.spellings import krm_paths
from kccgen.generator.spec.claims import REASONS
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
    """One of Config Connector's Kinds: served under its Kind, group, plural and
    versions by one of ours, or not, with a reason from ``REASONS``."""

    kcc_kind: str
    group: str
    ours: str  # our Kind for the claimed resource ("" if none is generated)
    resource: str  # the claimed resource ("api.version path"), "" for none
    ours_group: str = ""
    plural: str = ""  # Config Connector's CRD plural
    ours_plural: str = ""
    versions: tuple[str, ...] = ()  # the versions Config Connector serves
    ours_versions: tuple[str, ...] = ()  # the versions our CRD serves
    reason: str = ""  # REASONS key when not served
    note: str = ""  # what the claim or the resource's coverage row says
    # Config Connector's spec paths (specs/kcc/evidence.yaml fields) for a served Kind:
    # how many, how many our CRD has (under the same path), how many of those through an
    # alias (its spelling, not the API's), and the ones it lacks
    kcc_fields: int = 0
    fields_served: int = 0
    fields_aliased: int = 0
    fields_missing: tuple[str, ...] = ()

    @property
    def missing_versions(self) -> tuple[str, ...]:
        """Config Connector's version names our CRD does not serve (its manifests would be refused)."""
        return tuple(v for v in self.versions if v not in self.ours_versions) if self.ours_versions else ()

    @property
    def matched(self) -> bool:
        """Served: Config Connector's Kind, group and plural."""
        return bool(self.ours) and self.ours == self.kcc_kind and self.ours_group == self.group and self.ours_plural == self.plural


@dataclass(frozen=True)
class Coverage:
    rows: tuple[Row, ...]
    auto_lines: int
    auto_kinds: int
    kcc: tuple[KccMatch, ...]
    unresolved: tuple[tuple[str, str], ...]  # (Kind, field and candidates)
    # Kinds a Config Connector Kind table (--kcc kinds.tsv) lists that the evidence file lacks
    kcc_unknown: tuple[str, ...] = ()
    # Kinds whose resource has getIamPolicy and setIamPolicy: what the IAM Kinds
    # (IAMPolicy, IAMPartialPolicy, IAMPolicyMember, IAMAuditConfig) can name
    iam_targets: tuple[str, ...] = ()

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
    as_kinds = {r.kind for r in rows if r.tier != "excluded"}
    for k in ir.kinds:
        # a second Kind on a resource (ServiceIdentity reads Service's services) has a row of its own
        if (k.api.doc_key, k.resource) in covered and k.kind in as_kinds:
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
    kcc = _kcc_matches(specs, ir, rows)
    unknown: tuple[str, ...] = ()
    if kcc_tsv is not None and kcc_tsv.is_file():
        listed = {ln.split("\t", 1)[0] for ln in kcc_tsv.read_text(encoding="utf-8").splitlines() if ln.strip() and not ln.startswith(("#", "kind\t"))}
        unknown = tuple(sorted(listed - set(specs.evidence.kinds)))
    # what IAM Kinds can name: the Kinds whose adapter has the policy methods (a part of a
    # resource read through another of its methods, a policy's rule, has not)
    iam = tuple(sorted({k.kind for k in ir.kinds if k.methods.iam is not None}))
    return Coverage(tuple(sorted(rows, key=lambda r: (r.api, r.resource))), spent, auto_kinds, kcc, unresolved, unknown, iam)


#: What a resource's coverage row says, as the reason its claimed Kind is not served.
_ROW_REASONS: tuple[tuple[str, str], ...] = (
    ("not generated", "shape"),
    ("no get method", "shape"),
    ("no create method", "read-only"),
    ("no create method: created by the service", "read-only"),
    ("IAM policy methods only", "iam"),
    ("another form of", "split"),
    ("the folders form of", "split"),
    ("the organizations form of", "split"),
    ("the billingAccounts form of", "split"),
    ("an earlier model of", "other-schema"),
    ("API not configured", "not-configured"),
)


def _kcc_matches(specs: Specs, ir: IR, rows: list[Row]) -> tuple[KccMatch, ...]:
    """Every Config Connector Kind of the evidence file: the Kind its claim
    gives a resource of ours (served when that Kind is generated), else why not."""
    by_kind = {k.kind: k for k in ir.kinds}
    row_of = {(r.api.split(".")[0], r.resource): r for r in rows}
    out = []
    for kind, ev in sorted(specs.evidence.kinds.items()):
        versions = tuple(sorted(ev.versions))
        claim = specs.claims.served.get(kind)
        if claim is None:
            none = specs.claims.unserved.get(kind)
            reason, note = (none.reason, none.note) if none is not None else ("unpaired", "no claim in specs/kcc/claims.yaml")
            out.append(KccMatch(kind, ev.group, "", "", plural=ev.plural, versions=versions, reason=reason, note=note))
            continue
        ours = by_kind.get(kind)
        row = row_of.get((claim.api, claim.resource))
        where = f"{claim.api}.{claim.version} {claim.resource}" if claim.version else f"{row.api if row else claim.api} {claim.resource}"
        if claim.via:
            where += f" (via {claim.via})"
        if ours is not None and ours.resource == claim.resource:
            total, served, aliased, missing = field_parity(ours, ev.fields)
            out.append(
                KccMatch(kind, ev.group, kind, where, ours.group, ev.plural, ours.plural, versions, tuple(sorted(ours.served_versions)),
                         kcc_fields=total, fields_served=served, fields_aliased=aliased, fields_missing=missing)
            )
            continue
        why = row.reason if row is not None else "the resource is in no coverage row"
        reason = next((r for prefix, r in _ROW_REASONS if why.startswith(prefix)), "shape")
        out.append(KccMatch(kind, ev.group, "", where, plural=ev.plural, versions=versions, reason=reason, note=why))
    return tuple(out)


def field_parity(k: KindIR, theirs: tuple[str, ...]) -> tuple[int, int, int, tuple[str, ...]]:
    """(Config Connector's spec paths, those our CRD has, those of them only through
    an alias, the ones missing): the paths a Config Connector manifest can write that
    ours takes. A path under a missing one is not counted again (its parent says it)."""
    ours = krm_paths(k.spec, k.krm_models)
    alias_heads = tuple(a.field for a in k.aliases)
    served = aliased = 0
    missing: list[str] = []
    for p in sorted(theirs):
        if "*" in p:
            continue  # map values: the map's own path counts
        if p in ours:
            served += 1
            aliased += any(p == h or p.startswith((h + ".", h + "[]")) for h in alias_heads)
        elif not any(p.startswith((m + ".", m + "[]")) for m in missing):
            missing.append(p)
    return served + len(missing), served, aliased, tuple(missing)


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
        f"- Kinds whose resource has getIamPolicy and setIamPolicy (what IAM Kinds can name): {len(cov.iam_targets)}",
    ]
    if cov.kcc:
        claimed = [m for m in cov.kcc if m.resource]
        out.append(
            f"- Config Connector Kinds: **{cov.kcc_matched} of {len(cov.kcc)} served** under its Kind, group and plural; "
            f"{len(claimed)} are a resource of ours (specs/kcc/claims.yaml), {len(claimed) - cov.kcc_matched} of them not generated"
        )
        if cov.kcc_unknown:
            out.append(f"- Config Connector Kinds missing from the evidence file (refresh it with `python -m tools.kcc_evidence`): {', '.join(cov.kcc_unknown)}")
        total = sum(m.kcc_fields for m in cov.kcc)
        served = sum(m.fields_served for m in cov.kcc)
        out.append(
            f"- Config Connector's spec paths of the Kinds served: **{served} of {total}** ({100.0 * served / total if total else 0.0:.1f} %) "
            f"in our CRDs, {sum(m.fields_aliased for m in cov.kcc)} of them under Config Connector's spelling (an alias)"
        )
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
        by_reason: dict[str, int] = {}
        for m in cov.kcc:
            if not m.matched:
                by_reason[m.reason] = by_reason.get(m.reason, 0) + 1
        out += [
            "",
            "## Config Connector's Kinds",
            "",
            f"Every Kind of Config Connector's (specs/kcc/evidence.yaml, {len(cov.kcc)} Kinds): served under its Kind, group, "
            "plural and versions, or not served with one reason. A claim is checked against the documents when generating.",
            "",
            "| not served because | Kinds |",
            "| --- | ---: |",
        ]
        out += [f"| {REASONS.get(r, r)} (`{r}`) | {n} |" for r, n in sorted(by_reason.items(), key=lambda kv: (-kv[1], kv[0]))]
        out += ["", "| Config Connector Kind | group | served | resource | reason |", "| --- | --- | --- | --- | --- |"]
        out += [
            f"| {m.kcc_kind} | {m.group.split('.')[0]} | {'yes' if m.matched else 'no'} | {m.resource} | {'' if m.matched else f'`{m.reason}`: {m.note}'.replace('|', '/')} |"
            for m in cov.kcc
        ]
        parity = [m for m in cov.kcc if m.matched and m.kcc_fields]
        out += [
            "",
            "## Config Connector's fields",
            "",
            "Per served Kind: Config Connector's spec paths (its CRD, specs/kcc/evidence.yaml), how many our CRD takes "
            "(through an alias: Config Connector's spelling beside the API's) and the ones it lacks (a path under a missing "
            "one is not listed again).",
            "",
            "| Kind | paths | served | aliased | missing |",
            "| --- | ---: | ---: | ---: | --- |",
        ]
        out += [
            f"| {m.ours} | {m.kcc_fields} | {m.fields_served} | {m.fields_aliased} | {', '.join(f'`{p}`' for p in m.fields_missing[:12])}"
            f"{f' and {len(m.fields_missing) - 12} more' if len(m.fields_missing) > 12 else ''} |"
            for m in parity
        ]
        missing = [m for m in cov.kcc if m.matched and m.missing_versions]
        if missing:
            out += ["", "## Config Connector versions not served", "", "| Kind | missing | served |", "| --- | --- | --- |"]
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
            "kcc_kinds": len(cov.kcc),
            "kcc_claimed": sum(1 for m in cov.kcc if m.resource),
            "kcc_matched": cov.kcc_matched,
            "kcc_versions_served": cov.kcc_versions_served,
            "unresolved_references": len(cov.unresolved),
            "iam_targets": len(cov.iam_targets),
        },
        "iam_targets": list(cov.iam_targets),
        "rows": [asdict(r) for r in cov.rows],
        "kcc": [asdict(m) for m in cov.kcc],
        "unresolved": [{"kind": k, "field": u} for k, u in cov.unresolved],
    }
    return json.dumps(body, indent=1, sort_keys=True) + "\n"
