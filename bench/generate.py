"""Generation cost: cold, no-op, one-API change, peak memory, against a floor.

``make bench`` runs this after the reconcile benchmark. In one run, on a
temporary copy of the committed specs (the repository is not touched):

- **cold**: ``kccgen generate --force`` into an empty root (no tree, no cache:
  every unit is built and rendered; the caches it leaves serve the next steps);
- **no-op**: ``kccgen generate`` again (the stamp says nothing changed);
- **one-API change**: one field description of a vendored document edited
  (lock digest updated), then ``kccgen generate``: only that API's unit is
  built and rendered again (the others' build inputs are unchanged);
- **bump**: ``kccgen bump`` of the installed client against a directory of its
  documents where the same vendored document's descriptions changed again (as a
  release that only rewords one API): its time against the one-API change's,
  and the files it rewrote (all of that API's, no CRD whose schema is the same);
- **peak memory**: the largest resident set of the cold run's processes;
- **floor**: what any generator must do, timed in-process in the same run:
  parse every pinned document and write the cold run's bytes to a new tree.

Each is a separate ``kccgen`` process, timed by wall clock; the ratio to the
floor is reported because the machines are shared and noisy. Writes
bench/generate.json and prints markdown rows for the README's table.
"""

from __future__ import annotations

import argparse
import datetime
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.run import machine  # noqa: E402
from kccgen.documents import sha256_of  # noqa: E402

OUT = REPO / "bench" / "generate.json"
KCCGEN = [sys.executable, "-m", "kccgen.generator.cli"]


def _run(root: Path, specs: Path, *args: str) -> tuple[float, str]:
    t = time.perf_counter()
    r = subprocess.run([*KCCGEN, "--root", str(root), "--specs", str(specs), *args], capture_output=True, text=True, check=False)
    dt = time.perf_counter() - t
    if r.returncode not in (0, 1):  # 1: derived Kinds skipped with reasons is not a failure here
        raise SystemExit(f"kccgen {' '.join(args)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    return dt, r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""


def _edit_one_document(specs: Path) -> str:
    """Change one description in the first vendored document; keep the lock true."""
    lock_path = specs / "discovery.lock.json"
    lock = json.loads(lock_path.read_text(encoding="utf-8"))
    key = sorted(k for k, v in lock["documents"].items() if v.get("vendored"))[0]
    path = specs / "discovery" / f"{key}.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    schema = sorted(doc["schemas"])[0]
    doc["schemas"][schema]["description"] = doc["schemas"][schema].get("description", "") + " (bench edit)"
    data = json.dumps(doc, indent=2, sort_keys=True).encode()
    path.write_bytes(data)
    lock["documents"][key]["sha256"] = sha256_of(data)
    lock_path.write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return key


def _bump_one_api(root: Path, specs: Path, base: Path) -> tuple[float, str, list[str]]:
    """A bump whose only change is the descriptions of one vendored document."""
    from kccgen.documents import client_documents_dir, client_version

    lock = json.loads((specs / "discovery.lock.json").read_text(encoding="utf-8"))["documents"]
    key = sorted(k for k, v in lock.items() if v.get("vendored"))[0]  # the one-API change's document: the same work
    docs = base / "documents"
    docs.mkdir()
    for p in client_documents_dir().glob("*.json"):
        (docs / p.name).symlink_to(p)
    (docs / f"{key}.json").unlink()
    doc = json.loads((specs / "discovery" / f"{key}.json").read_bytes())
    for schema in doc["schemas"].values():
        for prop in (schema.get("properties") or {}).values():
            if "description" in prop:
                prop["description"] += " (bench: reworded)"
    (docs / f"{key}.json").write_text(json.dumps(doc, indent=2), encoding="utf-8")
    tree = {p: p.read_bytes() for sub in ("generated", "surface") for p in (root / sub).rglob("*") if p.is_file()}
    t, _ = _run(root, specs, "bump", client_version(), "--no-docs", "--documents", str(docs))
    after = {p: p.read_bytes() for sub in ("generated", "surface") for p in (root / sub).rglob("*") if p.is_file()}
    changed = sorted(str(p.relative_to(root)) for p in set(tree) | set(after) if tree.get(p) != after.get(p) and p.name != ".kccgen-stamp")
    return t, key, changed


def _outside(root: Path, key: str, files: list[str]) -> list[str]:
    """The files of ``files`` that belong to no Kind of document ``key``: its Kinds
    are those its surface records list; their files are those kinds.json names."""
    kinds: set[str] = set()
    for rec in (root / "surface").glob(f"{key}*.json"):
        kinds |= set(json.loads(rec.read_text(encoding="utf-8"))["kinds"])
    index = json.loads((root / "generated" / "kinds.json").read_text(encoding="utf-8"))
    modules = {index[k]["module"].rsplit(".", 1)[0].replace(".", "/") for k in kinds}
    own = {f"generated/{index[k]['crd']}" for k in kinds} | {f"generated/{index[k]['module'].replace('.', '/')}_" for k in kinds}
    own |= {f"generated/{m}/{key.replace('.', '_')}_api.py" for m in modules}  # the document's payload module
    return [f for f in files if not f.startswith("surface/" + key) and f not in own and not any(f.startswith(o) for o in own if o.endswith("_"))]


def _floor(specs: Path, tree: Path, dest: Path) -> float:
    """Parse every pinned document, then write ``tree``'s bytes to ``dest``."""
    from kccgen.generator.spec.loader import load_specs

    t = time.perf_counter()
    s = load_specs(specs)
    for key in sorted(s.discovery):
        s.discovery[key]
    files = {p.relative_to(tree): p.read_bytes() for p in sorted(tree.rglob("*")) if p.is_file()}
    for rel, data in files.items():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_bytes(data)
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--output", type=Path, default=OUT)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kccgen-bench-") as tmp:
        base = Path(tmp)
        specs = base / "specs"
        shutil.copytree(REPO / "specs", specs)
        root = base / "root"
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        cold, cold_line = _run(root, specs, "generate", "--force")
        peak_mb = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
        noop, _ = _run(root, specs, "generate")
        edited = _edit_one_document(specs)
        one, one_line = _run(root, specs, "generate")
        bump, bumped, rewritten = _bump_one_api(root, specs, base)
        outside = _outside(root, bumped, rewritten)
        floor = _floor(specs, root / "generated", base / "floor")
        files = [p for p in (root / "generated").rglob("*") if p.is_file()]
        size = sum(p.stat().st_size for p in files)
        kinds = len(list((root / "generated").glob("*/*/*_types.py")))
    result: dict[str, Any] = {
        "benchmark": "kccgen generate on the committed specs (a temporary copy)",
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine(),
        "kinds": kinds,
        "files": len(files),
        "bytes": size,
        "kb_per_kind": round(size / 1000 / max(kinds, 1), 1),
        "cold_seconds": round(cold, 1),
        "cold_output": cold_line,
        "noop_seconds": round(noop, 2),
        "one_api_seconds": round(one, 1),
        "one_api_edited": edited,
        "one_api_output": one_line,
        "bump_one_api_seconds": round(bump, 1),
        "bump_one_api_document": bumped,
        "bump_to_one_api": round(bump / one, 2) if one else None,
        "bump_files_rewritten": len(rewritten),
        "bump_files_outside_the_api": outside,
        "peak_rss_mb": round(peak_mb),
        "floor_seconds": round(floor, 1),
        "cold_to_floor": round(cold / floor, 1) if floor else None,
    }
    args.output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.output.relative_to(REPO) if args.output.is_relative_to(REPO) else args.output}")
    print(
        f"| `kccgen generate`, {kinds:,} Kinds ({size / 1e6:.0f} MB, {result['kb_per_kind']} KB/Kind; `make bench`) | "
        f"cold {cold:.0f} s ({result['cold_to_floor']}x the floor of {floor:.1f} s: parse every document, write the same bytes); "
        f"no-op {noop:.2f} s; one-API change ({edited}) {one:.1f} s; peak {peak_mb:.0f} MB |"
    )
    print(
        f"| `kccgen bump`, one API's descriptions reworded ({bumped}) | {bump:.1f} s = {result['bump_to_one_api']}x the one-API change; "
        f"{len(rewritten)} files rewritten, {len(outside)} outside {bumped}'s Kinds |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
