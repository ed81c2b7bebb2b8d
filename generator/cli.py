"""``kccgen``: generate, check, list Kinds, refresh specs.

Input errors print one line (file#json/path: message) and exit 2 without
touching generated/; a stale tree makes ``check`` exit 1 with a diff summary.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from generator.diagnostics import Reporter, SpecError
from generator.emit.files import jobs
from generator.ir.build import build_ir
from generator.ir.model import IR
from generator.spec.loader import load_specs
from generator.write import compare_tree, write_tree


def _build(specs_dir: Path) -> IR:
    return build_ir(load_specs(specs_dir), Reporter())


def render_all(ir: IR, progress: bool = True) -> dict[str, str]:
    """Run every emitter; shows a progress bar on a terminal."""
    todo = list(jobs(ir))
    out: dict[str, str] = {}
    if progress and sys.stderr.isatty():
        from rich.progress import Progress

        with Progress(transient=True) as bar:
            task = bar.add_task("rendering", total=len(todo))
            for path, job in todo:
                bar.update(task, description=path)
                out[path] = job()
                bar.advance(task)
    else:
        for path, job in todo:
            out[path] = job()
    return out


def cmd_generate(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    ir = _build(args.specs)
    files = render_all(ir)
    write_tree(args.root, files)
    for d in ir.diagnostics:
        print(f"warning: {d}", file=sys.stderr)
    print(f"generated {len(files)} files for {len(ir.kinds)} Kinds in {time.perf_counter() - t0:.1f}s")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    ir = _build(args.specs)
    diff = compare_tree(args.root, render_all(ir))
    if diff.clean:
        print(f"generated/ is up to date ({len(ir.kinds)} Kinds)")
        return 0
    print(diff.summary(), file=sys.stderr)
    return 1


def cmd_kinds(args: argparse.Namespace) -> int:
    ir = _build(args.specs)
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{len(ir.kinds)} Kinds")
    for col in ("Kind", "group/version", "API resource", "externalRef template", "spec", "status"):
        table.add_column(col)
    for k in ir.kinds:
        table.add_row(
            k.kind,
            f"{k.group}/{k.version}",
            f"{k.api.doc_key} {k.resource}",
            k.identity.template + ("" if k.identity.template_source == "asset-inventory" else " (REST)"),
            str(len(k.spec.fields)),
            str(len(k.observed_state.fields)),
        )
    console = Console(width=args.width) if args.width else Console()
    console.print(table)
    disagreements = [(k.kind, d) for k in ir.kinds for d in k.identity.disagreements]
    console.print(f"asset-table/Discovery disagreements: {len(disagreements)}")
    for kind, d in disagreements:
        console.print(f"  {kind}: {d}", markup=False)
    return 0


def cmd_update_specs(args: argparse.Namespace) -> int:
    from generator.update_specs import package_version, update_specs

    changes = update_specs(args.specs / "discovery")
    print(f"specs/discovery from google-api-python-client {package_version()}:")
    for c in changes:
        print("\n".join(c.lines()))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="kccgen", description=__doc__)
    p.add_argument("--root", type=Path, default=Path("."), help="repository root (holds generated/)")
    p.add_argument("--specs", type=Path, default=None, help="specs directory (default: ROOT/specs)")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("generate", help="regenerate generated/ (atomic swap)")
    sub.add_parser("check", help="exit 1 when generated/ differs from what specs produce")
    kp = sub.add_parser("kinds", help="table of Kinds and their identity templates")
    kp.add_argument("--width", type=int, default=None)
    sub.add_parser("update-specs", help="refresh specs/discovery from the pinned client")
    args = p.parse_args(argv)
    if args.specs is None:
        args.specs = args.root / "specs"
    handlers = {"generate": cmd_generate, "check": cmd_check, "kinds": cmd_kinds, "update-specs": cmd_update_specs}
    try:
        return handlers[args.cmd](args)
    except SpecError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
