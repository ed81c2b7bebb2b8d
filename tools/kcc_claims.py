"""Propose ``specs/kcc/claims.yaml``: which of our resources each Config Connector Kind is.

``python -m tools.kcc_claims [--write]`` reads the evidence extract
(``specs/kcc/evidence.yaml``: Config Connector's name templates, hosts and spec
fields per Kind) and every resource of every pinned Discovery document, and
pairs each Kind with the resources whose name template has the same shape
(``kccgen.generator.kcc.template_matches``) on the same service. It prints the
pairs and the Kinds it could not pair; ``--write`` writes a draft claims file
in which every claim already made is kept as it is, so a person's decisions
(``none:`` reasons, a chosen form) survive a re-run. The generator checks
every claim (``kccgen.generator.kcc.check_claims``); this tool only drafts.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from kccgen.discovery.document import iter_resources
from kccgen.generator.ir.candidates import method_exclusion
from kccgen.generator.ir.identity import rest_of
from kccgen.generator.kcc import (
    CLAIMS_PATH,
    load_claims,
    load_evidence,
    name_shapes,
    services_of,
    template_matches,
)
from kccgen.generator.spec.loader import load_specs

REPO = Path(__file__).resolve().parent.parent


def resource_templates(specs_dir: Path) -> list[tuple[str, str, str, str, bool]]:
    """(api name, document key, resource path, name template, usable) of every
    resource with a get method, over every pinned document."""
    specs = load_specs(specs_dir)
    out = []
    for key in sorted(specs.discovery):
        doc = specs.discovery[key]
        for dotted, res in iter_resources(doc):
            get = res.methods.get("get")
            if get is None:
                continue
            template, _ = rest_of(get)
            out.append((doc.name, key, dotted, template, method_exclusion(res, dotted) is None))
    return out


def _current(coverage_json: Path) -> dict[str, tuple[str, str, str]]:
    """(api resource) -> (our Kind, tier, serving document) from the committed coverage report."""
    if not coverage_json.is_file():
        return {}
    rows = json.loads(coverage_json.read_text(encoding="utf-8"))["rows"]
    return {f"{r['api'].split('.')[0]} {r['resource']}": (r["kind"], r["tier"], r["api"]) for r in rows}


def propose(specs_dir: Path) -> tuple[dict[str, str], dict[str, list[str]]]:
    """(Kind -> "api resource" for the Kinds with one best resource, Kind -> the
    ambiguous or empty candidate lists for the others). Among several resources
    with a matching name, those of the Kind's service (its host, else its group)
    win, then the one our Kind of the same name serves, then the ones that are
    Kinds at all (not another form, not excluded)."""
    evidence = load_evidence(specs_dir)
    resources = resource_templates(specs_dir)
    current = _current(specs_dir.parent / "docs" / "coverage.json")
    paired: dict[str, str] = {}
    open_: dict[str, list[str]] = {}
    for kind, ev in sorted(evidence.kinds.items()):
        shapes = name_shapes(ev)
        hits = [(api, key, dotted, usable) for api, key, dotted, t, usable in resources if any(template_matches(s, t) for s in shapes)]
        same = [h for h in hits if h[0] in services_of(ev)] or hits
        found = sorted({f"{api} {dotted}" for api, _, dotted, usable in same if usable}) or sorted({f"{api} {dotted}" for api, _, dotted, _ in same})
        named = [f for f in found if current.get(f, ("", "", ""))[0] == kind]
        kinds = [f for f in found if current.get(f, ("", "", ""))[1] in ("curated", "generated", "verified")]
        best = named if len(named) == 1 else kinds if len(kinds) == 1 else found
        if len(best) == 1:
            paired[kind] = best[0]
        else:
            open_[kind] = found
    return paired, open_


def review(specs_dir: Path) -> list[str]:
    """What the generator says of the claims file: its own check, run on the
    selected Kinds and their identities (kccgen.generator.ir.build._check_claims),
    one line per refused claim, then one line per claim with where it stands."""
    from kccgen.generator.diagnostics import Reporter
    from kccgen.generator.ir import build

    specs = load_specs(specs_dir)
    rep = Reporter()
    selected = build.select_kinds(specs, True, rep)
    shaped, _skipped = build.resolve_shapes(selected)
    failed: list[Any] = []
    identities = build.resolve_identities(specs, shaped, rep, failed)
    errors = build._check_claims(specs, selected, [sh for sh in shaped if sh.sel.cfg.kind in identities], identities)
    out = [f"REFUSED\t{e}" for e in errors]
    built = {sh.sel.cfg.kind for sh in shaped if sh.sel.cfg.kind in identities}
    for kind, c in sorted(specs.claims.served.items()):
        out.append(f"{kind}\t{c}\t{'a Kind' if kind in built else 'not generated'}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.kcc_claims", description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--specs", type=Path, default=REPO / "specs")
    ap.add_argument("--review", action="store_true", help="check the claims file as the generator will, one line per claim")
    ap.add_argument("--write", action="store_true", help=f"write a draft {CLAIMS_PATH} (claims already made are kept)")
    args = ap.parse_args(argv)
    if args.review:
        lines = review(args.specs)
        print("\n".join(lines))
        print(f"{sum(ln.startswith('REFUSED') for ln in lines)} claims refused", file=sys.stderr)
        return 0
    paired, open_ = propose(args.specs)
    for kind, res in sorted(paired.items()):
        print(f"{kind}\t{res}")
    for kind, found in sorted(open_.items()):
        print(f"{kind}\t?\t{' | '.join(found) or 'no resource has its name'}")
    print(f"{len(paired)} paired, {len(open_)} open", file=sys.stderr)
    if args.write:
        path = args.specs.parent / CLAIMS_PATH if (args.specs.parent / CLAIMS_PATH).parent.is_dir() else args.specs / "kcc" / "claims.yaml"
        have = load_claims(args.specs).raw if path.is_file() else {}
        merged: dict[str, object] = {k: have.get(k, v) for k, v in paired.items()}
        for kind in open_:
            merged[kind] = have.get(kind, {"none": "unpaired", "note": "; ".join(open_[kind]) or "no resource has its name"})
        merged.update({k: v for k, v in have.items() if k not in merged})
        path.write_text(yaml.safe_dump({"claims": dict(sorted(merged.items()))}, sort_keys=True, width=200), encoding="utf-8")
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
