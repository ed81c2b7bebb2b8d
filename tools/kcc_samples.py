"""Config Connector's published sample manifests against our CRDs.

``python -m tools.kcc_samples MIRROR`` reads ``config/samples/resources/`` of a
k8s-config-connector git directory (a bare mirror is enough: files are read
with ``git ls-tree`` / ``git show``, nothing is checked out or copied) and
validates every object whose Kind we generate against our CRD's
``openAPIV3Schema``, as an API server with strict field validation would:

* structure, with jsonschema (tools/kcc_compat.strict_schema: required fields,
  types, enums, patterns, unknown fields refused);
* the ``apiVersion`` our CRD serves;
* the CEL rules (``x-kubernetes-validations``) that need no old object, with
  cel-python when it is installed; a rule that raises rejects the object, as
  on the API server.

It also parses each object with our pydantic ``<Kind>`` model, which is what
``kccctl`` loads, and counts the objects where the two verdicts differ. It
writes docs/kcc-samples.md: per Kind, objects total and valid and the first
error of each failure; totals for the curated Kinds (listed under ``kinds:``
in specs/kinds/) and for every Kind we share with Config Connector.
tests/test_kcc_samples.py runs the same validation on the compat folder's
fixtures, which every checkout has.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from kccgen.generator.spec.kinds import load_kinds_file
from kccgen.runtime.admission import cel_errors
from tools.kcc_compat import (
    DEFAULT_KCC,
    crd_errors,
    crd_schemas,
    format_path,
    kind_models,
    model_errors,
    validator,
)
from tools.reports import write_or_check

REPO = Path(__file__).resolve().parent.parent
SAMPLES = "config/samples/resources"
DOC_PATH = Path("docs") / "kcc-samples.md"


@dataclass(frozen=True)
class Sample:
    """One object of one of our Kinds in a sample file."""

    source: str  # path of the file (with #<n> when it holds several documents)
    obj: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.obj.get("kind"))


@dataclass(frozen=True)
class Checked:
    sample: Sample
    errors: tuple[str, ...]
    model_agrees: bool = True  # our pydantic <Kind> (what kccctl loads) gives the same verdict

    @property
    def valid(self) -> bool:
        return not self.errors


# --- reading samples -----------------------------------------------------------------------


def _git(mirror: Path, *args: str) -> str:
    r = subprocess.run(["git", "--git-dir", str(mirror), *args], capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} in {mirror} failed: {r.stderr.strip()}")
    return r.stdout


def samples_from_texts(texts: Iterable[tuple[str, str]], kinds: frozenset[str]) -> list[Sample]:
    """Every document of one of ``kinds`` in (path, YAML text) pairs, in path order."""
    out: list[Sample] = []
    for path, text in sorted(texts):
        try:
            docs = [d for d in yaml.safe_load_all(text) if d]
        except yaml.YAMLError:
            continue  # not a manifest (KCC keeps a few templated files)
        for i, d in enumerate(docs, start=1):
            if isinstance(d, dict) and d.get("kind") in kinds:
                out.append(Sample(path if len(docs) == 1 else f"{path}#{i}", d))
    return out


def mirror_texts(mirror: Path, ref: str = "HEAD") -> Iterator[tuple[str, str]]:
    """(path, text) of every YAML file under the samples folder of a git directory."""
    for path in _git(mirror, "ls-tree", "-r", "--name-only", ref, f"{SAMPLES}/").splitlines():
        if path.endswith((".yaml", ".yml")):
            yield path.removeprefix(f"{SAMPLES}/"), _git(mirror, "show", f"{ref}:{path}")


# --- validating ----------------------------------------------------------------------------


class Validator:
    """Our CRDs as an API server reads them: structure, apiVersion and CEL."""

    def __init__(self, crd_dir: Path, models: Mapping[str, type[BaseModel]] | None = None) -> None:
        self.models = dict(models or {})
        found = crd_schemas(crd_dir)
        # One schema per Kind: every version a CRD serves has the same (kccVersions), the
        # storage version's comes first.
        self.schemas: dict[str, dict[str, Any]] = {}
        self.api_versions: dict[str, list[str]] = {}
        for (av, kind), s in found.items():
            self.schemas.setdefault(kind, s)
            self.api_versions.setdefault(kind, []).append(av)
        self.validators = {kind: validator(s) for kind, s in self.schemas.items()}

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(self.schemas)

    def errors(self, obj: Mapping[str, Any]) -> tuple[str, ...]:
        kind = str(obj.get("kind"))
        out: list[str] = []
        if obj.get("apiVersion") not in self.api_versions[kind]:
            out.append(f"apiVersion: {obj.get('apiVersion')!r} is not served; ours: {', '.join(map(repr, self.api_versions[kind]))}")
        out += sorted(f"{format_path(e.loc)}: {e.error} ({e.message})" for e in crd_errors(self.validators[kind], obj))
        if not out and cel_available():
            out += [f"{where}: CEL {msg}" for where, msg in cel_errors(self.schemas[kind], obj, ())]
        return tuple(out)

    def check(self, samples: Iterable[Sample]) -> list[Checked]:
        out: list[Checked] = []
        for s in samples:
            errors = self.errors(s.obj)
            model = self.models.get(s.kind)
            agrees = model is None or (not list(model_errors(model, s.obj))) == (not errors)
            out.append(Checked(s, errors, agrees))
        return out


@cache
def cel_available() -> bool:
    try:
        import celpy  # noqa: F401
    except ImportError:
        return False
    return True


# --- which Kinds ------------------------------------------------------------------------------


def curated_kinds(specs: Path) -> frozenset[str]:
    """Kinds listed by hand under ``kinds:`` in the kind configs (not derived by ``auto``)."""
    return frozenset(k.kind for p in sorted((specs / "kinds").glob("*.yaml")) for k in load_kinds_file(p).kinds)


def kcc_kinds(kcc: Path) -> frozenset[str] | None:
    """Config Connector's Kinds (compat kinds.tsv), or None when the table is absent."""
    table = kcc / "kinds.tsv"
    if not table.is_file():
        return None
    rows = [ln.split("\t") for ln in table.read_text(encoding="utf-8").splitlines() if ln and not ln.startswith("#")]
    return frozenset(r[0] for r in rows[1:])


def claim_reasons(specs: Path) -> dict[str, str]:
    """Config Connector Kind -> why we do not serve it, from specs/kcc/claims.yaml."""
    from kccgen.generator.spec.claims import REASONS, load_claims

    claims = load_claims(specs)
    out = {k: f"{u.reason}: {u.note or REASONS[u.reason]}" for k, u in claims.unserved.items()}
    out.update({k: f"{c}: not generated (see docs/coverage.md)" for k, c in claims.served.items()})
    return out


# --- the report -------------------------------------------------------------------------------


def _pct(valid: int, total: int) -> str:
    return f"{100 * valid / total:.1f} %" if total else "—"


def _cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def totals(rows: Sequence[Checked], kinds: frozenset[str]) -> tuple[int, int]:
    """(valid, total) over the objects of ``kinds``."""
    mine = [r for r in rows if r.sample.kind in kinds]
    return sum(r.valid for r in mine), len(mine)


def cnrm_objects(texts: Iterable[tuple[str, str]]) -> list[Sample]:
    """Every Config Connector object (``*.cnrm.cloud.google.com`` group) in the sample files."""
    out: list[Sample] = []
    for path, text in sorted(texts):
        try:
            docs = [d for d in yaml.safe_load_all(text) if d]
        except yaml.YAMLError:
            continue
        for i, d in enumerate(docs, start=1):
            if isinstance(d, dict) and str(d.get("apiVersion", "")).split("/")[0].endswith(".cnrm.cloud.google.com"):
                out.append(Sample(path if len(docs) == 1 else f"{path}#{i}", d))
    return out


@dataclass(frozen=True)
class Figures:
    """The three figures over all Config Connector objects of the samples."""

    total: int
    served: int  # name a Kind we serve under its group and Kind
    valid: int  # and validate against our CRD
    unserved: tuple[tuple[str, int, str], ...]  # (group/Kind, objects, why not served)
    invalid: tuple[tuple[str, int, str], ...]  # (Kind, invalid objects, the most common first error)


def figures(objects: Sequence[Sample], rows: Sequence[Checked], groups: Mapping[str, set[str]], reasons: Mapping[str, str]) -> Figures:
    """``groups``: our Kind -> the groups its CRD serves; ``reasons``: Config Connector
    Kind -> why it is not served (from the claims file)."""
    served = [o for o in objects if str(o.obj.get("apiVersion", "")).split("/")[0] in groups.get(o.kind, set())]
    by_source = {(r.sample.source, r.sample.kind): r for r in rows}
    checked = [by_source[(o.source, o.kind)] for o in served if (o.source, o.kind) in by_source]
    missing: dict[str, int] = {}
    for o in objects:
        if o not in served:
            key = f"{str(o.obj.get('apiVersion', '')).split('/')[0].split('.')[0]}/{o.kind}"
            missing[key] = missing.get(key, 0) + 1
    bad: dict[str, list[str]] = {}
    for r in checked:
        if not r.valid:
            bad.setdefault(r.sample.kind, []).append(r.errors[0])
    invalid = [(k, len(errs), max(sorted(set(errs)), key=errs.count)) for k, errs in bad.items()]
    return Figures(
        len(objects),
        len(served),
        sum(r.valid for r in checked),
        tuple(sorted(((k, n, reasons.get(k.split("/", 1)[1], "not a Config Connector Kind we know")) for k, n in missing.items()), key=lambda x: (-x[1], x[0]))),
        tuple(sorted(invalid, key=lambda x: (-x[1], x[0]))),
    )


def render_figures(f: Figures) -> list[str]:
    def pct(n: int) -> str:
        return f"{100 * n / f.total:.1f} %" if f.total else "—"

    out = [
        "## All Config Connector objects",
        "",
        "| objects | name a Kind we serve (group and Kind) | validate against our CRDs |",
        "|---:|---:|---:|",
        f"| {f.total} | {f.served} ({pct(f.served)}) | {f.valid} ({pct(f.valid)}) |",
        "",
        "Kinds the samples use that we do not serve, by objects:",
        "",
        "| group/Kind | objects | why |",
        "|---|---:|---|",
    ]
    out += [f"| {k} | {n} | {_cell(why)} |" for k, n, why in f.unserved]
    out += ["", "Served Kinds whose samples do not all validate, by invalid objects (the most common first error):", "", "| Kind | invalid | first error |", "|---|---:|---|"]
    out += [f"| {k} | {n} | {_cell(e)} |" for k, n, e in f.invalid]
    return [*out, ""]


def render_markdown(rows: Sequence[Checked], curated: frozenset[str], shared: frozenset[str], source: str, figs: Figures | None = None) -> str:
    rows = sorted(rows, key=lambda r: (r.sample.kind, r.sample.source))
    cv, ct = totals(rows, curated)
    sv, st = totals(rows, shared)
    out = [
        "# Config Connector's sample manifests against our CRDs",
        "",
        "<!-- Generated by `python -m tools.kcc_samples MIRROR`; do not edit. -->",
        "",
        f"Source: `{SAMPLES}/` of {source}. Every object whose Kind we generate is validated "
        "against our CRD's openAPIV3Schema as an API server with strict field validation would: "
        "structure with jsonschema (required fields, types, enums, patterns, unknown fields "
        "refused), the served apiVersion, and the CEL rules that need no old object"
        + (" (cel-python)" if cel_available() else " (not evaluated: cel-python is not installed)")
        + ". Only the first error of each object is shown.",
        "",
        "## Totals",
        "",
        "| Kinds | objects | valid | share |",
        "|---|---:|---:|---:|",
        f"| curated ({len(curated)}) | {ct} | {cv} | {_pct(cv, ct)} |",
        f"| shared with Config Connector ({len(shared)}) | {st} | {sv} | {_pct(sv, st)} |",
        "",
        f"Our pydantic `<Kind>` models (what `kccctl` loads) give a different verdict on "
        f"{sum(not r.model_agrees for r in rows)} of these objects.",
        "",
        *(render_figures(figs) if figs is not None else []),
        "## Per Kind",
        "",
        "| Kind | curated | objects | valid |",
        "|---|---|---:|---:|",
    ]
    for kind in sorted(shared | curated):
        mine = [r for r in rows if r.sample.kind == kind]
        out.append(f"| {kind} | {'yes' if kind in curated else 'no'} | {len(mine)} | {sum(r.valid for r in mine)} |")
    out += ["", "## Failures", ""]
    failures = [r for r in rows if not r.valid]
    if not failures:
        out += ["None.", ""]
    else:
        out += ["| Kind | sample | first error |", "|---|---|---|"]
        out += [f"| {r.sample.kind} | `{r.sample.source}` | {_cell(r.errors[0])} |" for r in failures]
        out.append("")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.kcc_samples", description=(__doc__ or "").split("\n")[0])
    ap.add_argument("mirror", type=Path, help="a k8s-config-connector git directory (bare is fine)")
    ap.add_argument("--ref", default="HEAD", help="the commit to read (default HEAD)")
    ap.add_argument("--kcc", type=Path, default=DEFAULT_KCC, help="KCC compat dir (kinds.tsv names the shared Kinds)")
    ap.add_argument("--check", action="store_true", help=f"exit 1 if {DOC_PATH} is stale")
    ap.add_argument("--crds", type=Path, default=REPO / "generated" / "crds", help="the CRDs to validate against (default generated/crds)")
    args = ap.parse_args(argv)
    v = Validator(args.crds, kind_models() if args.crds == REPO / "generated" / "crds" else {})
    commit = _git(args.mirror, "rev-parse", args.ref).strip()
    texts = list(mirror_texts(args.mirror, args.ref))
    rows = v.check(samples_from_texts(texts, v.kinds))
    curated = curated_kinds(REPO / "specs") & v.kinds
    kcc = kcc_kinds(args.kcc)
    shared = v.kinds if kcc is None else v.kinds & kcc
    groups = {kind: {av.split("/")[0] for av in avs} for kind, avs in v.api_versions.items()}
    figs = figures(cnrm_objects(texts), rows, groups, claim_reasons(REPO / "specs"))
    text = render_markdown(rows, curated, shared, f"GoogleCloudPlatform/k8s-config-connector@{commit[:10]}", figs)
    code = write_or_check(REPO / DOC_PATH, text, args.check, "python -m tools.kcc_samples MIRROR")
    if args.check:
        return code
    cv, ct = totals(rows, curated)
    sv, st = totals(rows, shared)
    print(f"wrote {DOC_PATH}: curated {cv}/{ct} ({_pct(cv, ct)}), shared {sv}/{st} ({_pct(sv, st)})")
    print(f"all Config Connector objects: {figs.total}; served {figs.served} ({_pct(figs.served, figs.total)}); valid {figs.valid} ({_pct(figs.valid, figs.total)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
