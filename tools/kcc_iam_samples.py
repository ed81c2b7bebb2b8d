"""Config Connector's IAM samples (IAMPolicy, IAMPartialPolicy, IAMPolicyMember,
IAMAuditConfig) validated against our CRDs and applied on mockgcp.

``python -m tools.kcc_iam_samples MIRROR`` reads the sample folders of the four
IAM Kinds from a k8s-config-connector git directory (nothing is checked out or
copied), fills their placeholders as tools/kcc_lifecycle does, and for each
folder: validates every Config Connector object against generated/crds (as the
API server would: structure, apiVersion, CEL); applies the folder with
``kccctl apply``'s code on a fresh mockgcp; counts each IAM object's policy
calls (the minimum: one read and one write when its part is missing); applies
again (the minimum: one read, no write); deletes the folder and checks that the
policies no longer hold what the IAM objects owned. It writes
docs/kcc-iam-samples.md.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kccgen.runtime.adapter import policy_for
from kccgen.runtime.gcp import Gcp
from kccgen.runtime.local import StateDir, apply, delete
from tools.kcc_lifecycle import Folder, folders
from tools.kcc_samples import REPO, Validator, mirror_texts
from tools.reports import write_or_check

DOC_PATH = Path("docs") / "kcc-iam-samples.md"
IAM_DIRS = ("iamauditconfig", "iampartialpolicy", "iampolicy", "iampolicymember")
PROJECT = "kcc-iam-samples"


@dataclass(frozen=True)
class FolderResult:
    path: str
    objects: int  # Config Connector objects
    iam_objects: int
    invalid: tuple[str, ...]  # "Kind/name: first error"
    not_ready: tuple[str, ...]  # "Kind/name: reason: message"
    first: tuple[int, int]  # IAM reads, writes of the first apply
    again: tuple[int, int]  # the same, of the second
    left: tuple[str, ...]  # owned parts still in a policy after the delete

    @property
    def ok(self) -> bool:
        reads, writes = self.first
        return (
            not self.invalid
            and not self.not_ready
            and reads == self.iam_objects
            and writes <= self.iam_objects
            and self.again == (self.iam_objects, 0)
            and not self.left
        )


def _iam_calls(calls: list[str]) -> tuple[int, int]:
    return sum(1 for c in calls if c.endswith(".getIamPolicy")), sum(1 for c in calls if c.endswith(".setIamPolicy"))


def run_folder(folder: Folder, validator: Validator) -> FolderResult:
    from kccgen.mockgcp import MockServer

    objs = folder.objects_for(PROJECT)
    cnrm = [o for o in objs if o.get("apiVersion") != "v1"]
    invalid = tuple(f"{o.get('kind')}/{o['metadata']['name']}: {errs[0]}" for o in cnrm if (errs := validator.errors(o)))
    iam = [o for o in cnrm if policy_for(str(o.get("kind"))) is not None]
    with MockServer() as s, tempfile.TemporaryDirectory() as tmp:
        state = StateDir(Path(tmp) / "state")
        gcp = Gcp(s.base_url, host_paths=True)
        gcp.keep_calls = True
        with state.lock():
            out = apply(objs, state, gcp, PROJECT)
        not_ready = tuple(f"{r.kind}/{r.name}: {r.reason}: {res.message}" for r, res in out if not r.ready and r.kind != "Secret")
        first = _iam_calls(gcp.calls)
        gcp.calls.clear()
        with state.lock():
            apply(objs, state, gcp, PROJECT)
        again = _iam_calls(gcp.calls)
        owned = [(res.obj.get("status") or {}) for r, res in out if r.kind in {str(o.get("kind")) for o in iam}]
        with state.lock():
            delete(objs, state, gcp, PROJECT)
        left = tuple(_left(s.engine.policies, owned))
    return FolderResult(folder.path, len(cnrm), len(iam), invalid, not_ready, first, again, left)


def _left(policies: dict[str, Any], owned: list[dict[str, Any]]) -> list[str]:
    """Members an IAM object wrote that some policy still holds (after all were deleted)."""
    held = {(b.get("role"), m) for p in policies.values() for b in p.get("bindings") or [] for m in b.get("members") or []}
    out = []
    for st in owned:
        b = st.get("binding")
        if b and (b.get("role"), b.get("member")) in held:
            out.append(f"{b['role']} {b['member']}")
        for lb in st.get("lastAppliedBindings") or []:
            out += [f"{lb['role']} {m}" for m in lb.get("members") or [] if (lb.get("role"), m) in held]
    return out


def report(results: list[FolderResult], commit: str) -> str:
    objs = sum(r.objects for r in results)
    iam = sum(r.iam_objects for r in results)
    valid = objs - sum(len(r.invalid) for r in results)
    ready = sum(r.objects - len(r.not_ready) for r in results)
    lines = [
        "# Config Connector's IAM samples on mockgcp",
        "",
        f"Written by `python -m tools.kcc_iam_samples MIRROR` from k8s-config-connector {commit}: the sample",
        "folders of IAMPolicy, IAMPartialPolicy, IAMPolicyMember and IAMAuditConfig, placeholders filled,",
        "validated against generated/crds, applied on mockgcp, applied again, deleted.",
        "Calls are each IAM object's `getIamPolicy`/`setIamPolicy`; the minimum is one read (and one",
        "write where its part is missing) on the first apply, one read and no write on the second.",
        "",
        f"**{len(results)} folders, {objs} objects ({iam} IAM objects): {valid} valid, {ready} Ready; "
        f"{sum(r.ok for r in results)} folders at the minimum calls with nothing left after the delete.**",
        "",
        "| folder | objects | IAM objects | valid | Ready | first apply (reads/writes) | again | left after delete | ok |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r.path} | {r.objects} | {r.iam_objects} | {r.objects - len(r.invalid)} | {r.objects - len(r.not_ready)} | "
            f"{r.first[0]}/{r.first[1]} | {r.again[0]}/{r.again[1]} | {len(r.left)} | {'yes' if r.ok else 'no'} |"
        )
    problems = [(r.path, p) for r in results for p in (*r.invalid, *r.not_ready, *(f"left: {x}" for x in r.left))]
    if problems:
        lines += ["", "## Problems", ""] + [f"- {path}: {p}" for path, p in problems]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.kcc_iam_samples", description=(__doc__ or "").split("\n")[0])
    ap.add_argument("mirror", type=Path, help="a k8s-config-connector git directory (bare is fine)")
    ap.add_argument("--ref", default="HEAD")
    ap.add_argument("--check", action="store_true", help=f"exit 1 if {DOC_PATH} is stale")
    args = ap.parse_args(argv)
    from tools.kcc_samples import _git

    texts = [(p, t) for p, t in mirror_texts(args.mirror, args.ref) if p.split("/", 1)[0] in IAM_DIRS]
    validator = Validator(REPO / "generated" / "crds")
    results = [run_folder(f, validator) for f in folders(texts)]
    commit = _git(args.mirror, "rev-parse", args.ref).strip()[:12]
    text = report(results, commit)
    for r in results:
        print(f"{'ok ' if r.ok else 'NO '} {r.path}: {r.objects} objects, first {r.first}, again {r.again}", file=sys.stderr)
    return write_or_check(REPO / DOC_PATH, text, args.check, "python -m tools.kcc_iam_samples MIRROR")


if __name__ == "__main__":
    raise SystemExit(main())
