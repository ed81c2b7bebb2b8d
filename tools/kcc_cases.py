"""Config Connector's own test cases through ``kccctl`` on mockgcp (issue 31's measure).

Config Connector tests each Kind with folders under
``pkg/test/resourcefixture/testdata/basic/``: ``create.yaml`` (the object),
``dependencies.yaml`` (the objects it refers to), ``update.yaml`` (the object
changed) and ``_http.log`` (what it sent to real GCP). For every case whose Kind
we serve under Config Connector's group, this applies the dependencies and the
object as ``kccctl apply`` does (manifest loading, admission, reconcile) on one
mockgcp, then ``update.yaml``, then deletes them all. A case that needs a Kind
we do not serve is skipped, and counted. The placeholders (``${uniqueId}``,
``${projectId}``, ...) are filled per case.

    python -m tools.kcc_cases MIRROR            # writes docs/kcc-cases.md
    python -m tools.kcc_cases MIRROR --check    # exit 1 if it is stale
    python -m tools.kcc_cases MIRROR --case pubsub/pubsubsnapshot   # prints, writes nothing
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kccgen.runtime.admission import YAML_LOADER
from kccgen.runtime.gcp import Gcp
from kccgen.runtime.local import Row, apply, delete
from kccgen.runtime.manifests import ManifestError, load_manifests
from kccgen.runtime.registry import kind_index
from kccgen.runtime.state import StateDir
from tools.kcc_lifecycle import mockgcp
from tools.kcc_samples import _cell, _git, _pct
from tools.reports import write_or_check

REPO = Path(__file__).resolve().parent.parent
DOC_PATH = "docs/kcc-cases.md"
ROOT = "pkg/test/resourcefixture/testdata/basic/"
FILES = ("dependencies.yaml", "create.yaml", "update.yaml")

#: Config Connector's test placeholders, as this run fills them ({project}, {unique}: the case's)
PLACEHOLDERS = {
    "uniqueId": "{unique}",
    "projectId": "{project}",
    "PROJECT_ID": "{project}",
    "projectNumber": "123456789012",
    "TEST_ORG_ID": "123456789012",
    "organizationID": "123456789012",
    "TEST_FOLDER_ID": "123456789013",
    "ISOLATED_TEST_ORG_NAME": "organizations/123456789012",
    "BILLING_ACCOUNT_ID": "000000-000000-000000",
    "BILLING_ACCOUNT_ID_FOR_BILLING_RESOURCES": "000000-000000-000000",
}
_PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9_]+)\}")


def fill(text: str, project: str, unique: str) -> str:
    """The case's placeholders filled in its strings; an unknown ``*PROJECT*`` one is the
    run's project. Config Connector's harness fills the parsed objects, so a value stays
    a string (``organization-id: ${TEST_ORG_ID}``); the objects are written back as YAML."""

    def one(m: re.Match[str]) -> str:
        name = m.group(1)
        if name in PLACEHOLDERS:
            return PLACEHOLDERS[name].format(project=project, unique=unique)
        return project if "PROJECT" in name.upper() else f"example-{name.lower().replace('_', '-')}"

    def walk(node: Any) -> Any:
        if isinstance(node, str):
            return _PLACEHOLDER.sub(one, node)
        if isinstance(node, dict):
            return {walk(k): walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    try:
        docs = [walk(d) for d in yaml.load_all(text, Loader=YAML_LOADER) if d is not None]
    except yaml.YAMLError:
        return _PLACEHOLDER.sub(one, text)  # as text: the loader then says what is wrong with it
    return yaml.safe_dump_all(docs, sort_keys=False)


@dataclass(frozen=True)
class Case:
    """One test case folder: its files by name, as committed."""

    path: str  # under ROOT: pubsub/pubsubsnapshot/pubsubsnapshot-full
    files: tuple[tuple[str, str], ...]

    def text(self, name: str) -> str | None:
        return dict(self.files).get(name)

    def kind(self) -> tuple[str, str]:
        """(Kind, group) of create.yaml's object."""
        for d in yaml.safe_load_all(self.text("create.yaml") or ""):
            if isinstance(d, dict) and d.get("kind"):
                return str(d["kind"]), str(d.get("apiVersion", "")).split("/")[0]
        return "", ""

    def kinds(self) -> set[tuple[str, str]]:
        """(Kind, group) of every object of the case, dependencies included."""
        out = set()
        for name in FILES:
            try:
                docs = list(yaml.safe_load_all(self.text(name) or ""))
            except yaml.YAMLError:
                continue
            out |= {(str(d["kind"]), str(d.get("apiVersion", "")).split("/")[0]) for d in docs if isinstance(d, dict) and d.get("kind")}
        return out


def _read_blobs(mirror: Path, ref: str, paths: Sequence[str]) -> list[str]:
    """The files' texts, through one ``git cat-file --batch`` (thousands of files)."""
    proc = subprocess.run(
        ["git", "--git-dir", str(mirror), "cat-file", "--batch"], input="".join(f"{ref}:{p}\n" for p in paths).encode(), capture_output=True, check=True
    )
    out, data, pos = [], proc.stdout, 0
    for p in paths:
        end = data.index(b"\n", pos)
        header = data[pos:end].decode().split()
        if len(header) < 3 or header[1] != "blob":
            raise SystemExit(f"git cat-file {ref}:{p}: {' '.join(header)}")
        size = int(header[2])
        out.append(data[end + 1 : end + 1 + size].decode("utf-8", "replace"))
        pos = end + 1 + size + 1
    return out


def cases(mirror: Path, ref: str = "HEAD", under: Sequence[str] = ()) -> list[Case]:
    """Every folder under ROOT with a create.yaml (``under``: only those below these
    paths), read from the git directory."""
    names = [p for p in _git(mirror, "ls-tree", "-r", "--name-only", ref, ROOT).splitlines() if p.rsplit("/", 1)[-1] in FILES]
    names = [p for p in names if not under or any(p.removeprefix(ROOT).startswith(u) for u in under)]
    by_dir: dict[str, list[tuple[str, str]]] = {}
    for p, text in zip(names, _read_blobs(mirror, ref, names), strict=True):
        d, _, name = p.rpartition("/")
        by_dir.setdefault(d, []).append((name, text))
    return [Case(d.removeprefix(ROOT), tuple(sorted(files))) for d, files in sorted(by_dir.items()) if "create.yaml" in dict(files)]


@dataclass
class Outcome:
    """What one case came to: skipped (why), or each step's result."""

    case: str
    kind: str
    skipped: str = ""
    created: bool = False
    updated: bool | None = None  # None: no update.yaml (or no create)
    deleted: bool = False
    step: str = ""  # the first failed step: load, create, update, delete
    message: str = ""
    tags: list[str] = field(default_factory=list)


def served_kinds() -> dict[str, str]:
    """Kind -> KRM group, of every Kind we serve (from the index: no module imported)."""
    return {k: e["apiVersion"].split("/")[0] for k, e in kind_index().items()}


def _load(folder: Path, texts: Iterable[tuple[str, str]]) -> list[dict[str, Any]]:
    paths = []
    for name, text in texts:
        p = folder / name
        p.write_text(text, encoding="utf-8")
        paths.append(p)
    return load_manifests(paths)


def _first_line(s: str) -> str:
    return s.strip().splitlines()[0][:300] if s.strip() else ""


def _main_row(rows: Sequence[tuple[Row, Any]], kind: str, name: str) -> Row | None:
    return next((r for r, _ in rows if r.kind == kind and r.name == name), None)


def run_case(case: Case, gcp: Gcp, served: dict[str, str], n: int) -> Outcome:
    """One case through apply, update and delete on ``gcp``."""
    kind, _ = case.kind()
    out = Outcome(case.path, kind)
    missing = sorted(k for k, g in case.kinds() if served.get(k) != g and k not in ("Secret", "ConfigMap", "Namespace"))
    if missing:
        out.skipped = ("Kind not served: " if kind in missing else "dependency Kind not served: ") + ", ".join(missing)
        return out
    project, unique = f"kcc-case-{n}", f"c{n:05d}"
    with tempfile.TemporaryDirectory(prefix="kcc-case-") as tmp:
        folder = Path(tmp)
        state = StateDir(folder / "state")
        deps = [("dependencies.yaml", fill(t, project, unique))] if (t := case.text("dependencies.yaml")) else []
        created = [("create.yaml", fill(case.text("create.yaml") or "", project, unique))]
        applied: list[dict[str, Any]] = []
        try:
            out.step = "load"
            objs = _load(folder, [*deps, *created])
            name = str(objs[-1]["metadata"]["name"])
            out.step = "create"
            with state.lock():
                rows = apply(objs, state, gcp, project)
            applied = objs
            row = _main_row(rows, kind, name)
            failed = [r for r, _ in rows if not r.ready]
            if row is None or not row.ready:
                first = failed[0] if failed else row
                who = "" if first is None or (first.kind, first.name) == (kind, name) else f"dependency {first.kind}: "
                out.message = who + _first_line(first.message if first else "not applied")
                return out
            out.created = True
            if (u := case.text("update.yaml")) is not None:
                out.step = "load"
                objs = _load(folder, [*deps, ("update.yaml", fill(u, project, unique))])
                out.step = "update"
                with state.lock():
                    rows = apply(objs, state, gcp, project)
                row = _main_row(rows, kind, name)
                out.updated = bool(row and row.ready)
                if not out.updated:
                    out.message = _first_line(row.message if row else "not applied")
                    return out
            out.step = "delete"
            with state.lock():
                rows = delete(applied, state, gcp, project)
            gone = [r for r, _ in rows if r.kind not in ("Secret", "ConfigMap", "Namespace") and r.reason not in ("Deleted", "Abandoned", "NotFound")]
            out.deleted = not gone
            if gone:
                out.message = f"{gone[0].kind}: {_first_line(gone[0].message)}"
                return out
            out.step = ""
        except ManifestError as e:
            out.message = _first_line(str(e)).replace(str(folder) + "/", "")
        except Exception as e:  # a crash is this case's failure, not the run's
            out.message = f"{type(e).__name__}: {_first_line(str(e))}"
        finally:
            if applied and not out.deleted:  # leave nothing for the next case to trip on
                try:
                    with state.lock():
                        delete(applied, state, gcp, project)
                except Exception:  # cleanup only: the case has failed already
                    pass
    return out


@dataclass(frozen=True)
class Totals:
    cases: int
    ran: int
    skipped_kind: int
    skipped_dependency: int
    created: int
    with_update: int
    updated: int
    deleted: int


def totals(outs: Sequence[Outcome]) -> Totals:
    ran = [o for o in outs if not o.skipped]
    upd = [o for o in ran if o.created and o.updated is not None]
    return Totals(
        len(outs),
        len(ran),
        sum(1 for o in outs if o.skipped.startswith("Kind")),
        sum(1 for o in outs if o.skipped.startswith("dependency")),
        sum(1 for o in ran if o.created),
        len(upd),
        sum(1 for o in upd if o.updated),
        sum(1 for o in ran if o.deleted),
    )


def render(outs: Sequence[Outcome], source: str) -> str:
    t = totals(outs)
    reasons = Counter(_category(o) for o in outs if not o.skipped and o.step)
    lines = [
        "# Config Connector's test cases through kccctl on mockgcp",
        "",
        f"Generated by `python -m tools.kcc_cases MIRROR` from {source}, `{ROOT}`: each case's",
        "dependencies and object applied as `kccctl apply` applies them (loading, admission, reconcile),",
        "then its `update.yaml`, then everything deleted. Do not edit by hand.",
        "",
        "| | cases | share |",
        "|---|---:|---:|",
        f"| all cases | {t.cases} | |",
        f"| skipped: the Kind is not served | {t.skipped_kind} | |",
        f"| skipped: a dependency Kind is not served | {t.skipped_dependency} | {_pct(t.skipped_dependency, t.cases - t.skipped_kind)} of the served Kinds' cases |",
        f"| ran | {t.ran} | |",
        f"| **create Ready** | {t.created} | **{_pct(t.created, t.ran)}** of those run |",
        f"| **update Ready** | {t.updated} | **{_pct(t.updated, t.with_update)}** of {t.with_update} created cases with an update |",
        f"| deleted | {t.deleted} | {_pct(t.deleted, t.ran)} |",
        "",
        "## Failures by cause",
        "",
        "| cause | cases |",
        "|---|---:|",
        *(f"| {_cell(k)} | {v} |" for k, v in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))),
        "",
        "## Cases that ran and failed",
        "",
        "| case | Kind | step | message |",
        "|---|---|---|---|",
        *(f"| {o.case} | {o.kind} | {o.step} | {_cell(o.message)} |" for o in outs if not o.skipped and o.step),
        "",
        "## Skipped",
        "",
        "| case | why |",
        "|---|---|",
        *(f"| {o.case} | {_cell(o.skipped)} |" for o in outs if o.skipped and not o.skipped.startswith("Kind not served")),
        "",
    ]
    return "\n".join(lines)


_CAUSES = (
    ("dependency ", "a dependency failed"),
    ("unknown field", "our schema lacks a field Config Connector has"),
    ("Extra inputs are not permitted", "our schema lacks a field Config Connector has"),
    ("required field is missing", "we require a field Config Connector leaves out"),
    ("Field required", "we require a field Config Connector leaves out"),
    ("is not of type", "a value of another type"),
    ("Input should be", "a value of another type"),
)


def _category(o: Outcome) -> str:
    for needle, cause in _CAUSES:
        if needle in o.message:
            return f"{o.step}: {cause}"
    return f"{o.step}: other"


def iter_outcomes(all_cases: Sequence[Case], endpoint: str) -> Iterator[Outcome]:
    served = served_kinds()
    gcp = Gcp(endpoint, host_paths=True, retries=0, backoff=0.0, lro_interval=0.0, sleep=lambda s: None)
    for n, case in enumerate(all_cases):
        yield run_case(case, gcp, served, n)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.kcc_cases", description=(__doc__ or "").split("\n")[0])
    ap.add_argument("mirror", type=Path, help="a k8s-config-connector git directory (bare is fine)")
    ap.add_argument("--ref", default="HEAD", help="the commit to read (default HEAD)")
    ap.add_argument("--check", action="store_true", help=f"exit 1 if {DOC_PATH} is stale")
    ap.add_argument("--case", action="append", default=[], help="run only the cases under this path (repeatable); prints, writes nothing")
    args = ap.parse_args(argv)
    commit = _git(args.mirror, "rev-parse", args.ref).strip()
    chosen = cases(args.mirror, args.ref, args.case)
    with mockgcp() as endpoint:
        outs = list(iter_outcomes(chosen, endpoint))
    if args.case:
        for o in outs:
            print(f"{o.case}: {o.kind}: " + (f"skipped: {o.skipped}" if o.skipped else "PASS" if not o.step else f"FAIL at {o.step}: {o.message}"))
        return 0
    text = render(outs, f"GoogleCloudPlatform/k8s-config-connector@{commit[:10]}")
    code = write_or_check(REPO / DOC_PATH, text, args.check, "python -m tools.kcc_cases MIRROR")
    t = totals(outs)
    print(f"{DOC_PATH}: {t.ran} of {t.cases} cases ran; create Ready {t.created} ({_pct(t.created, t.ran)}), update Ready {t.updated} of {t.with_update} ({_pct(t.updated, t.with_update)}); {t.skipped_dependency} skipped for a dependency Kind")
    return code


if __name__ == "__main__":
    sys.exit(main())
