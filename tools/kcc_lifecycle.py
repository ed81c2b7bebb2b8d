"""Config Connector's own sample objects through the generated lifecycle, on mockgcp.

``python -m tools.kcc_lifecycle MIRROR`` reads ``config/samples/resources/`` of a
k8s-config-connector git directory (nothing is checked out or copied), takes
the Kinds its samples use most (``--top``, 40), and for each Kind we serve runs
one of its sample folders, every object of it, through the same suite as
``kccctl verify`` (runtime/lifecycle.py) on a mockgcp started for the run:
every object Ready, a re-apply of the Kind's object sends one GET and no
write, one field changed sends one write, and deleting them all leaves the
resource gone. It writes docs/kcc-lifecycle.md: per Kind, the sample folder
and the outcome, or why we do not serve the Kind and which issue will.

A folder is run as Config Connector's users apply it: its ``${PROJECT_ID?}``
style placeholders filled in (``PLACEHOLDERS``), in dependency order. The
folders whose every object we serve come first, fewest objects first; the
first that passes is reported, else the first failure.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kccgen.runtime.lifecycle import Lifecycle, Outcome, RecordingGcp
from kccgen.runtime.registry import types_modules
from tools.kcc_samples import REPO, _git, claim_reasons, cnrm_objects, mirror_texts
from tools.reports import write_or_check

DOC_PATH = Path("docs") / "kcc-lifecycle.md"

#: What Config Connector's samples leave to the user, as the suite fills it in.
#: ``{project}`` is the run's project.
PLACEHOLDERS = {
    "PROJECT_ID": "{project}",
    "PROJECT_NUMBER": "123456789012",
    "ORG_ID": "123456789012",
    "FOLDER_ID": "123456789013",
    "BILLING_ACCOUNT_ID": "000000-000000-000000",
}
_PLACEHOLDER = re.compile(r"\$\{([A-Z0-9_]+)\??\}")

#: The open issue that serves a Kind, by the first word of its claim's reason
#: (specs/kcc/claims.yaml) or of why it is not generated (docs/coverage.md).
ISSUE_BY_REASON = {
    "iam": "#29 (IAM for every resource)",
    "sub-resource": "#30 (the irregular resources as data)",
    "split": "#30 (the irregular resources as data)",
    "shape": "#30 (the irregular resources as data)",
    "settings": "#30 (the irregular resources as data)",
    "action": "#26 (this issue: left undone, see the note)",
    "other-schema": "#26 (this issue: an older schema, left undone)",
    "no-document": "none: the pinned client has no Discovery document for it",
}


@dataclass(frozen=True)
class Folder:
    """One sample folder: its files, read once; its objects for any project."""

    path: str
    files: tuple[tuple[str, str], ...]

    def objects_for(self, project: str) -> list[dict[str, Any]]:
        """Its Config Connector objects in file order, placeholders filled for ``project``,
        after its v1 Secrets (what sensitive fields read)."""
        filled = [(p, fill(t, project)) for p, t in self.files]
        secrets = [d for _, t in filled for d in _documents(t) if d.get("apiVersion") == "v1" and d.get("kind") == "Secret"]
        return secrets + [s.obj for s in cnrm_objects(filled)]

    @property
    def objects(self) -> list[dict[str, Any]]:
        return self.objects_for("project")


def _documents(text: str) -> list[dict[str, Any]]:
    try:
        return [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]
    except yaml.YAMLError:
        return []


@dataclass(frozen=True)
class Row:
    kind: str
    objects: int  # sample objects of the Kind, over all samples
    folder: str = ""
    outcome: Outcome | None = None
    why: str = ""  # not served: the reason and the issue


def fill(text: str, project: str) -> str:
    """The sample's placeholders filled in (an unknown one keeps a readable stand-in)."""
    return _PLACEHOLDER.sub(lambda m: PLACEHOLDERS.get(m.group(1), "example-" + m.group(1).lower().replace("_", "-")).format(project=project), text)


def folders(texts: Iterable[tuple[str, str]]) -> list[Folder]:
    """Every sample folder that holds a Config Connector object."""
    by_dir: dict[str, list[tuple[str, str]]] = {}
    for path, text in sorted(texts):
        by_dir.setdefault(path.rsplit("/", 1)[0], []).append((path, text))
    return [f for f in (Folder(p, tuple(files)) for p, files in sorted(by_dir.items())) if f.objects]


def top_kinds(texts: Iterable[tuple[str, str]], n: int) -> list[tuple[str, int]]:
    """The ``n`` Kinds with the most sample objects (ties by name)."""
    counts = Counter(str(s.obj.get("kind")) for s in cnrm_objects(texts))
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


def candidates(kind: str, all_folders: Sequence[Folder], served: Mapping[str, str]) -> list[Folder]:
    """The folders holding ``kind`` that we could run: every object's Kind served
    under its group first, then the Kind's own folders, fewest objects first."""
    have = [f for f in all_folders if any(o.get("kind") == kind for o in f.objects)]

    def unserved(f: Folder) -> int:
        return sum(1 for o in f.objects if o.get("kind") != "Secret" and served.get(str(o.get("kind"))) != str(o.get("apiVersion", "")).split("/")[0])

    return sorted(have, key=lambda f: (unserved(f) > 0, f.path.split("/")[0] != kind.lower(), len(f.objects), f.path))


def why_not_served(kind: str, reasons: Mapping[str, str]) -> str:
    reason = reasons.get(kind, "not in specs/kcc/claims.yaml")
    head = reason.split(":", 1)[0].strip()
    if "not generated" in reason:
        head = "shape"
    return f"{reason} — {ISSUE_BY_REASON.get(head, 'no issue yet')}"


def run_kind(lc: Lifecycle, kind: str, cands: Sequence[Folder], tries: int) -> tuple[str, Outcome]:
    """The first of ``cands`` (up to ``tries``) whose lifecycle passes, else the first failure."""
    first: tuple[str, Outcome] | None = None
    for f in cands[:tries]:
        main = next(i for i, o in enumerate(f.objects) if o.get("kind") == kind)
        out = lc.run_objects(kind, f.objects_for, main)
        if out.passed:
            return f.path, out
        first = first or (f.path, out)
    assert first is not None
    return first


def render(rows: Sequence[Row], source: str, top: int) -> str:
    served = [r for r in rows if r.outcome is not None]
    passed = [r for r in served if r.outcome is not None and r.outcome.passed]
    lines = [
        "# Config Connector's sample objects through the lifecycle",
        "",
        "<!-- Generated by `python -m tools.kcc_lifecycle MIRROR`; do not edit. -->",
        "",
        f"Source: `config/samples/resources/` of {source}. The {top} Kinds its samples use most; for each Kind we",
        "serve, one sample folder (every object in it, placeholders filled in) runs the generated lifecycle on",
        "mockgcp: every object Ready, a re-apply with one GET and no write, one field changed with one write,",
        "then everything deleted and the resource gone.",
        "",
        f"**{len(passed)} of {len(served)} served Kinds pass**; {len(rows) - len(served)} of the {len(rows)} are not served.",
        "",
        "| Kind | sample objects | sample folder | result |",
        "|---|---:|---|---|",
    ]
    for r in rows:
        if r.outcome is None:
            result = f"not served: {r.why}"
        elif r.outcome.passed:
            result = "PASS" + (f" (changed `{r.outcome.update_field}`)" if r.outcome.update_field else " (no mutable field)")
        else:
            result = f"FAIL at {r.outcome.step}: {r.outcome.message}"
        lines.append(f"| {r.kind} | {r.objects} | {r.folder and '`' + r.folder + '`'} | {result.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


@contextlib.contextmanager
def mockgcp() -> Any:
    """A mockgcp child process for the run; yields its URL."""
    proc = subprocess.Popen([sys.executable, "-m", "kccgen.mockgcp", "serve", "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("mockgcp listening on "):
            raise SystemExit(f"mockgcp did not start: {line.strip()}")
        yield line.split()[-1]
    finally:
        proc.terminate()
        proc.wait()


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.kcc_lifecycle", description=(__doc__ or "").split("\n")[0])
    ap.add_argument("mirror", type=Path, help="a k8s-config-connector git directory (bare is fine)")
    ap.add_argument("--ref", default="HEAD", help="the commit to read (default HEAD)")
    ap.add_argument("--top", type=int, default=40, help="how many of the most used Kinds (default 40)")
    ap.add_argument("--tries", type=int, default=6, help="sample folders tried per Kind before reporting the first failure")
    ap.add_argument("--check", action="store_true", help=f"exit 1 if {DOC_PATH} is stale")
    ap.add_argument("--kind", action="append", default=[], help="run only this Kind (repeatable); prints the results and writes nothing")
    args = ap.parse_args(argv)
    commit = _git(args.mirror, "rev-parse", args.ref).strip()
    texts = list(mirror_texts(args.mirror, args.ref))
    known = types_modules()
    served = {k: str(m.API_VERSION).split("/")[0] for k, m in ((k, getattr(mod, k)) for k, mod in known.items())}
    reasons = claim_reasons(REPO / "specs")
    project = "kcc-sample-project"
    rows: list[Row] = []
    with mockgcp() as endpoint:
        lc = Lifecycle(RecordingGcp(endpoint, lro_interval=0.0, retries=0, sleep=lambda s: None, host_paths=True), project)
        all_folders = folders(texts)
        chosen = [(k, c) for k, c in top_kinds(texts, 10**6) if k in args.kind] if args.kind else top_kinds(texts, args.top)
        for kind, count in chosen:
            group = next((str(o.get("apiVersion")).split("/")[0] for f in all_folders for o in f.objects if o.get("kind") == kind), "")
            if served.get(kind) != group:
                rows.append(Row(kind, count, why=why_not_served(kind, reasons)))
                continue
            folder, out = run_kind(lc, kind, candidates(kind, all_folders, served), args.tries)
            rows.append(Row(kind, count, folder, out))
    if args.kind:
        for r in rows:
            print(f"{r.kind}: {r.folder or '-'}: " + (r.why if r.outcome is None else "PASS" if r.outcome.passed else f"FAIL at {r.outcome.step}: {r.outcome.message}"))
        return 0
    text = render(rows, f"GoogleCloudPlatform/k8s-config-connector@{commit[:10]}", args.top)
    code = write_or_check(REPO / DOC_PATH, text, args.check, "python -m tools.kcc_lifecycle MIRROR")
    if args.check:
        return code
    ran = [r for r in rows if r.outcome is not None]
    print(f"wrote {DOC_PATH}: {sum(1 for r in ran if r.outcome and r.outcome.passed)} of {len(ran)} served Kinds pass; {len(rows) - len(ran)} not served")
    for r in ran:
        if r.outcome and not r.outcome.passed:
            print(f"  {r.kind}: {r.folder}: {r.outcome.step}: {r.outcome.message}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
