"""Slices of the committed specs for tests that run whole generations.

A generation of every pinned API takes minutes; a test that proves how
``generate`` treats bad input, a flipped field or a new kind file needs only
a few APIs. The slice keeps the kind files that list curated Kinds.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

import yaml

from kccgen.generator.spec.kinds import KindsFile
from kccgen.generator.spec.loader import Specs
from tests.conftest import REPO


def curated_specs(dest: Path, derived: bool = False) -> Path:
    """A copy of the committed specs under ``dest/specs`` with only the kind files
    that list curated Kinds; without ``derived`` their ``auto: true`` line goes too,
    so the copy generates exactly the curated Kinds."""
    specs = dest / "specs"
    shutil.copytree(REPO / "specs", specs, ignore=shutil.ignore_patterns("__pycache__"))
    # retired Kinds name derived Kinds (renamedTo) the slice does not generate
    (specs / "retired-kinds.yaml").unlink(missing_ok=True)
    # accepted breaking changes name Kinds the slice may not generate (and its
    # first run records a fresh surface: there is nothing to accept)
    (specs / "accepted-changes.yaml").unlink(missing_ok=True)
    kept: set[str] = set()
    for f in sorted((specs / "kinds").glob("*.yaml")):
        text = f.read_text(encoding="utf-8")
        if "\nkinds:" not in text:
            f.unlink()
            continue
        kept.add(str(yaml.safe_load(text)["api"]))
        if not derived:
            # no derived Kinds: no auto line, and kccVersions keep only the curated Kinds
            text = re.sub(r"(?m)^auto: true\n", "", text)
            f.write_text(_curated_versions(text), encoding="utf-8")
    keep_claims(specs, kept, derived)
    return specs


def keep_claims(specs: Path, apis: set[str], derived: bool) -> None:
    """The claims file cut to the APIs a slice keeps (and, without derived Kinds, to
    the curated Kinds' resources): a claim on an API no kind file reads is an error."""
    path = specs / "kcc" / "claims.yaml"
    if not path.is_file():
        return
    curated = {(str(d["api"]), k["resource"]) for f in (specs / "kinds").glob("*.yaml") for d in [yaml.safe_load(f.read_text(encoding="utf-8"))] for k in d.get("kinds") or []}
    claims = yaml.safe_load(path.read_text(encoding="utf-8"))["claims"]
    named = {m for f in (specs / "kinds").glob("*.yaml") for m in re.findall(r"kind: (\w+)", f.read_text(encoding="utf-8"))}
    kept = {}
    for kind, value in claims.items():
        claim = value if isinstance(value, str) else value.get("claim") if isinstance(value, dict) else None
        if isinstance(claim, str):  # '<api> <resource>', or {claim: ..., via: ...}
            api, res = claim.split()[0].split(".")[0], claim.split()[1]
            if api not in apis or (not derived and (api, res) not in curated):
                continue
            if isinstance(value, dict) and value.get("via") and kind not in named:
                continue  # a Kind of its own kind file (an entry of a router's list), cut from the slice
        kept[kind] = value
    path.write_text(yaml.safe_dump({"claims": kept}, sort_keys=True, width=200), encoding="utf-8")


def _curated_versions(text: str) -> str:
    """``kccVersions`` lines cut to the Kinds the file lists under ``kinds:``."""
    curated = {k["kind"] for k in yaml.safe_load(text).get("kinds") or []}

    def keep(m: re.Match[str]) -> str:
        names = [n.strip() for n in m.group(2).split(",") if n.strip() in curated]
        return f"  {m.group(1)}: [{', '.join(names)}]\n" if names else ""

    block = re.search(r"(?m)^kccVersions:\n((?:  .*\n)*)", text)
    if block is None:
        return text
    body = re.sub(r"(?m)^  (\w+): \[(.*)\]\n", keep, block.group(1))
    return text[: block.start()] + (f"kccVersions:\n{body}" if body else "") + text[block.end() :]


def _curated_names(f: KindsFile) -> dict[str, tuple[str, ...]]:
    curated = {k.kind for k in f.kinds}
    cut = {v: tuple(n for n in names if n in curated) for v, names in f.kcc_versions.items()}
    return {v: names for v, names in cut.items() if names}


def curated_only(specs: Specs) -> Specs:
    """Loaded specs cut the same way: the kind files that list curated Kinds, not auto."""
    kinds = tuple((p, f.model_copy(update={"auto": False, "kcc_versions": _curated_names(f)})) for p, f in specs.kinds if f.kinds)
    curated = {(f.api, k.resource) for _, f in kinds for k in f.kinds}
    served = {k: c for k, c in specs.claims.served.items() if (c.api, c.resource) in curated}
    return dataclasses.replace(specs, kinds=kinds, claims=dataclasses.replace(specs.claims, served=served))


def only_files(specs: Specs, files: dict[str, KindsFile]) -> Specs:
    """Loaded specs with only these kind files (by display path, each maybe edited),
    and only the claims on their APIs."""
    kinds = tuple((p, files[p]) for p, _ in specs.kinds if p in files)
    apis = {f.api for f in files.values()}
    # a Kind claimed via a method of its own kind file (an entry of a router's list) goes with that file
    named = {k.kind for f in files.values() for k in f.kinds} | {o.kind for f in files.values() for o in f.overrides.values() if o.kind}
    served = {k: c for k, c in specs.claims.served.items() if c.api in apis and (c.via is None or k in named)}
    return dataclasses.replace(specs, kinds=kinds, claims=dataclasses.replace(specs.claims, served=served))
