"""``kccgen bump [VERSION]`` (``make bump VERSION=…``): a client bump is one command.

It moves the google-api-python-client pin everywhere it is written and installs
that client (the pin files are restored when pip refuses), pins its documents
(everything or nothing, generator/update_specs.py), writes kind files for new
APIs with their prefixes recorded, and regenerates. When the regeneration needs
human decisions (a Kind or field that would go, a reference to classify) it
writes nothing to generated/ and lists *all* of them, each with the file and
JSON path to edit and the Discovery change that caused it; the same command,
run again after they are written, goes on. Then it refreshes the derived
documents (coverage, field parity, the verified list) and writes the changelog
``docs/changes/<from>-<to>.md``.

Between rounds the bump's starting point (the client it came from and its
documents' revisions) is kept in ``.kccgen-cache/bump.json``, so the changelog
spans the whole bump, and is removed when it completes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kccgen.discovery.errors import SpecError
from kccgen.documents import (
    CLIENT,
    LOCK_NAME,
    client_version,
    locked_versions,
    newest_ga,
    read_document,
    read_lock,
    split_key,
)
from kccgen.generator.autokinds import record_prefixes, write_auto_kind_files
from kccgen.generator.changelog import Rebrand, Side, cause, kind_cause, render
from kccgen.generator.diagnostics import Reporter
from kccgen.generator.emit.surface import SURFACE_DIR
from kccgen.generator.ir.build import build_ir, doc_keys
from kccgen.generator.ir.model import IR
from kccgen.generator.naming import service_prefix
from kccgen.generator.spec.loader import Specs, load_specs
from kccgen.generator.surface import (
    Change,
    Explainer,
    KindSurface,
    breaking_changes,
    built_surface,
    previous_surface,
    surface_in,
)
from kccgen.generator.update_specs import available, package_documents_dir, update_specs

PIN_FILES = ("pyproject.toml", "constraints.txt", "README.md")
STATE = Path(".kccgen-cache") / "bump.json"
CHANGES_DIR = Path("docs") / "changes"


class BumpError(Exception):
    """A step that cannot go on; the message is the one line to print."""


# --- the pin ------------------------------------------------------------------


def pinned_version(root: Path) -> str:
    m = re.search(rf"^{re.escape(CLIENT)}==(\S+)", (root / "constraints.txt").read_text(encoding="utf-8"), re.M)
    if m is None:
        raise BumpError(f"constraints.txt: no `{CLIENT}==VERSION` line to move")
    return m.group(1)


def move_pin(root: Path, old: str, new: str) -> dict[Path, str]:
    """Write ``new`` wherever ``old`` is pinned or named; the files' previous texts."""
    pattern = re.compile(rf"({re.escape(CLIENT)}(?:==| ))({re.escape(old)})(?![\w.])")
    before: dict[Path, str] = {}
    for name in PIN_FILES:
        path = root / name
        if not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        moved = pattern.sub(lambda m: m.group(1) + new, text)
        if moved != text:
            before[path] = text
            path.write_text(moved, encoding="utf-8")
    if not any(p.name == "constraints.txt" for p in before):
        for path, text in before.items():
            path.write_text(text, encoding="utf-8")
        raise BumpError(f"constraints.txt: {CLIENT}=={old} not found; nothing moved")
    return before


def latest_version() -> str:
    """The newest release on the package index pip is configured for."""
    cmd = [sys.executable, "-m", "pip", "index", "versions", CLIENT, "--disable-pip-version-check"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    m = re.search(rf"{re.escape(CLIENT)} \(([^)]+)\)", proc.stdout)
    if proc.returncode != 0 or m is None:
        raise BumpError(f"could not ask pip for the newest {CLIENT} ({proc.stderr.strip()[-200:] or 'no answer'}); name a VERSION")
    return m.group(1)


def install(root: Path, version: str) -> None:
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-c", "constraints.txt", f"{CLIENT}=={version}"]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        last = [line for line in proc.stderr.strip().splitlines() if line.strip()][-3:]
        raise BumpError(f"pip could not install {CLIENT}=={version}: {' '.join(last)}")


# --- the state kept between rounds ----------------------------------------------


@dataclass
class State:
    source: str  # the client the committed tree was generated from
    target: str
    revisions: dict[str, str]  # the documents locked before the bump
    add_all: bool  # the lock held every API the source client ships: so do the new ones

    @classmethod
    def load(cls, root: Path) -> State | None:
        try:
            return cls(**json.loads((root / STATE).read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            return None

    def save(self, root: Path) -> None:
        path = root / STATE
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(asdict(self), indent=1, sort_keys=True), encoding="utf-8")


def locked_version(specs: Path) -> str:
    versions = locked_versions(specs)
    return versions[0] if len(versions) == 1 else client_version()


BEFORE = Path(".kccgen-cache") / "bump" / "before"


def start(root: Path, specs: Path, target: str, source: Path | None = None) -> State:
    """The bump's starting point, kept across rounds (a new target starts anew):
    the client and revisions locked now, and a copy of the vendored documents
    (the old side of each cause; the locked ones come from the package index)."""
    st = State.load(root)
    if st is not None and st.target == target:
        return st
    lock = read_lock(specs)
    try:
        shipped = set(newest_ga(available(source or package_documents_dir())).values())
    except OSError:
        shipped = set()
    before = root / BEFORE
    shutil.rmtree(before, ignore_errors=True)
    before.mkdir(parents=True)
    for p in sorted((specs / "discovery").glob("*.json")):
        shutil.copyfile(p, before / p.name)
    # the surface the bump starts from: a round that wrote the tree and then
    # failed (a derived document) must not make the next round's changelog empty
    if (root / SURFACE_DIR).is_dir():
        shutil.copytree(root / SURFACE_DIR, before / SURFACE_DIR)
    st = State(locked_version(specs), target, {k: e.revision for k, e in lock.items()}, bool(shipped) and shipped <= set(lock))
    st.save(root)
    return st


# --- the old side's documents, for the causes -----------------------------------


def old_side(root: Path, st: State, new: Side) -> Side:
    """The documents of the client the bump started from, from the package index
    (pip's cache), kept under .kccgen-cache/bump/<version>/. Without them each
    cause names the new document only."""
    dest = root / ".kccgen-cache" / "bump" / st.source
    ddir = dest / "discovery"
    before = root / BEFORE

    def read(key: str) -> dict[str, Any] | None:
        for d in (before, ddir):
            p = d / f"{key}.json"
            if p.exists():
                doc: dict[str, Any] = json.loads(p.read_bytes())
                return doc
        return new.read(key) if st.source == st.target and new.revisions.get(key) == st.revisions.get(key) else None

    if st.source != st.target and not ddir.is_dir():
        from kccgen.generator.lag import package_specs

        try:
            package_specs(st.source, sorted(st.revisions), dest)
        except (RuntimeError, StopIteration, OSError) as e:
            print(f"warning: the documents of {CLIENT}=={st.source} are not available ({e}); causes name the new documents only", file=sys.stderr)
    return Side(st.source, st.revisions, read)


def new_side(specs: Path, version: str) -> Side:
    lock = read_lock(specs)

    def read(key: str) -> dict[str, Any] | None:
        try:
            doc: dict[str, Any] = json.loads(read_document(specs, key))
            return doc
        except (OSError, ValueError, SpecError):
            return None

    return Side(version, {k: e.revision for k, e in lock.items()}, read)


def rebrands(specs: Specs, old: Side, new: Side, was: dict[str, KindSurface], now: dict[str, KindSurface]) -> list[Rebrand]:
    """APIs whose title changed so that the prefix it gives changed: their recorded
    ``kindPrefix`` kept the Kinds' names (kccgen.generator.prefixes)."""
    out = []
    for file, kf in specs.kinds:
        if kf.kind_prefix is None:
            continue
        try:
            keys = doc_keys(specs, file, kf)
        except SpecError:
            continue
        if not keys:
            continue
        if old.revisions.get(keys[0]) == new.revisions.get(keys[0]):
            continue  # the same revision: the same title (and no document read)
        o, n = old.doc(keys[0]), new.doc(keys[0])
        if not o or not n or o.get("title") == n.get("title"):
            continue
        was_prefix = service_prefix(kf.service_name, o.get("canonicalName"), o.get("title"))
        now_prefix = service_prefix(kf.service_name, n.get("canonicalName"), n.get("title"))
        if was_prefix == now_prefix:
            continue
        # the Kinds served before and now: a new Kind was never named otherwise
        kinds = tuple(sorted(k for k, s in now.items() if k in was and s.schema.split("#")[0] in keys and k.startswith(kf.kind_prefix)))
        out.append(Rebrand(kf.api, file, kf.kind_prefix, str(o.get("title")), str(n.get("title")), kinds))
    return sorted(out, key=lambda r: r.api)


# --- the run ------------------------------------------------------------------------

BuildChecked = Callable[[argparse.Namespace, Any, Explainer], tuple[str, IR, list[str]]]
Gate = Callable[[argparse.Namespace, Specs, IR, Any, Explainer], list[str]]


@dataclass
class Causes:
    """The gates' Explainer for a bump: each cause read from the two documents."""

    was: dict[str, KindSurface]
    old: Side
    new: Side

    def change(self, c: Change, now: Mapping[str, KindSurface]) -> str:
        return cause(c.kind, c.path, self.was.get(c.kind), now.get(c.kind), self.old, self.new, frozenset(now))

    def vanished(self, kind: str, now: Mapping[str, KindSurface], ir: IR) -> str:
        return kind_cause(kind, self.was.get(kind), {sk.kind: sk.reason for sk in ir.skipped}, self.old, self.new, now)


def _step(label: str, t0: float) -> None:
    print(f"-- {label} ({time.perf_counter() - t0:.1f}s)", flush=True)


def decisions(
    args: argparse.Namespace, build_checked: BuildChecked, gate: Gate, memo: Any, was: dict[str, KindSurface], old: Side, new: Side
) -> tuple[IR | None, str, list[str], dict[str, KindSurface]]:
    """The IR and every decision the regeneration needs. A strict build stops at
    its first kind-config problem, so on one the build is redone collecting them
    all (every unit built: no memo), and the Kind and surface gates still run on
    what it built; that IR is for reporting only. The gates give each line its
    cause (``Causes``)."""
    causes = Causes(was, old, new)
    try:
        inputs, ir, problems = build_checked(args, memo, causes)
        report: IR | None = ir
    except SpecError:
        collected: list[SpecError] = []
        specs = load_specs(args.specs)
        try:
            ir = build_ir(specs, Reporter(), collect=collected)
        except SpecError as e:  # a problem the build cannot go on from
            return None, "", [str(x) for x in [*collected, e]], {}
        inputs, report, memo = "", None, None
        problems = [str(e) for e in collected] + gate(args, specs, ir, None, causes)
    return report, inputs, problems, built_surface(ir, memo)


def run_docs(args: argparse.Namespace) -> list[str]:
    """Refresh the documents derived from generated/; the ones that failed."""
    base = [sys.executable, "-m", "kccgen.generator.cli", "--root", str(args.root), "--specs", str(args.specs)]
    kccctl = Path(sys.executable).with_name("kccctl")
    steps = [
        ("docs/coverage.md, docs/coverage.json", [*base, "coverage", "--write"]),
        ("docs/field-parity.md", [*base, "parity", "--write"]),
        ("docs/verified.json", [str(kccctl), "verify", "--write", "docs/verified.json"]),
    ]
    failed = []
    for label, cmd in steps:
        out = args.root / label.split(",")[0]
        before = out.stat().st_mtime_ns if out.exists() else None
        proc = subprocess.run(cmd, cwd=args.root, capture_output=True, text=True, check=False)
        tail = (proc.stdout.strip().splitlines() or [""])[-1]
        # verify exits 1 when a Kind fails its lifecycle: that is the list's content, not a failure to write it
        written = out.exists() and out.stat().st_mtime_ns != before
        if proc.returncode == 0 or (label == "docs/verified.json" and proc.returncode == 1 and written):
            print(f"   refreshed {label}" + (f" ({tail})" if label == "docs/verified.json" else ""))
        else:
            failed.append(f"{label}: `{' '.join(cmd[1:] if cmd[0] == sys.executable else cmd)}` exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
    return failed


LOCK = Path(".kccgen-cache") / "bump.lock"


def _exclusive(root: Path) -> Any:
    """Hold the bump's lock file, or None when another bump holds it. Two bumps
    at once would interleave pins, specs and the kept starting point. The lock
    goes with the process (and its exec); a crash leaves nothing to clean."""
    import fcntl

    path = root / LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    f = path.open("a+")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.close()
        return None
    return f


def bump(args: argparse.Namespace, build_checked: BuildChecked, gate: Gate, render_write: Callable[[str, IR, Any], int], memo: Any) -> int:
    """The whole bump; exit 0 done, 2 decisions or a refused step (nothing lost)."""
    t0 = time.perf_counter()
    root, specs = args.root, args.specs
    lock = _exclusive(root)
    if lock is None:
        print(f"error: {root / LOCK}: another kccgen bump is running in this checkout; nothing was changed", file=sys.stderr)
        return 2
    try:
        target = args.version or latest_version()
        st = start(root, specs, target, args.documents)
        installed = client_version()
        if installed != target:
            pinned = pinned_version(root)
            before = move_pin(root, pinned, target)
            _step(f"pin {CLIENT} {pinned} -> {target} in {', '.join(sorted(p.name for p in before))}; installing", t0)
            try:
                install(root, target)
            except BumpError:
                for path, text in before.items():
                    path.write_text(text, encoding="utf-8")
                raise
            # this process imported the old client: go on in a fresh one
            argv = [sys.executable, "-m", "kccgen.generator.cli", "--root", str(root), "--specs", str(specs), "bump", target]
            argv += ["--no-docs"] if args.no_docs else []
            argv += ["--documents", str(args.documents)] if args.documents else []
            sys.stdout.flush()
            os.execv(sys.executable, argv)
    except BumpError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        changes = update_specs(specs, args.documents, add_all=st.add_all)
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    moved = [c for c in changes if not c.same_bytes]
    _step(f"{CLIENT} {target}: {len(changes)} documents pinned, {sum(c.old_revision is None for c in moved)} added, {len(moved)} changed", t0)
    known = frozenset(split_key(k)[:2] for k in st.revisions)
    written = write_auto_kind_files(specs, frozenset(split_key(k)[:2] for k in read_lock(specs)) - known)
    prefixes = record_prefixes(specs) if written else []
    _step(f"kind files for new APIs: {len(written)} written, {len(prefixes)} prefixes recorded", t0)
    kept = root / BEFORE / SURFACE_DIR
    was = surface_in(kept) if kept.is_dir() else previous_surface(root)
    new = new_side(specs, target)
    old = old_side(root, st, new)
    ir, inputs, todo, now = decisions(args, build_checked, gate, memo, was, old, new)
    if todo or ir is None:
        print(f"\n{len(todo)} decision(s) before {CLIENT} {target} can be generated; nothing was written to generated/.", file=sys.stderr)
        print("Write them all, then run the same command again:", file=sys.stderr)
        for i, msg in enumerate(todo, 1):
            print(f"{i}. {msg}", file=sys.stderr)
        return 2
    rc = render_write(inputs, ir, memo)
    _step(f"generated {len(ir.kind_names)} Kinds ({len(ir.kinds)} built, {len(ir.kind_names) - len(ir.kinds)} unchanged)", t0)
    spec_model = load_specs(specs)
    text = render(old, new, was, now, breaking_changes(was, now, frozenset(r.kind for r in spec_model.retired_kinds.kinds)), spec_model.accepted_changes, spec_model.retired_kinds, rebrands(spec_model, old, new, was, now))
    out = root / CHANGES_DIR / f"{st.source}-{st.target}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    _step(f"changelog {out.relative_to(root)}", t0)
    failed = [] if args.no_docs else run_docs(args)
    if not args.no_docs:
        _step("derived documents", t0)
    for msg in failed:
        print(f"error: {msg}", file=sys.stderr)
    if failed:
        return 1
    (root / STATE).unlink(missing_ok=True)
    shutil.rmtree(root / BEFORE, ignore_errors=True)
    print(f"bumped {CLIENT} {st.source} -> {st.target} in {time.perf_counter() - t0:.1f}s; review `git diff --stat` and {out.relative_to(root)}")
    return rc


__all__ = ["LOCK_NAME", "BumpError", "Change", "bump", "move_pin", "pinned_version"]
