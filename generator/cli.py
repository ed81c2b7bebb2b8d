"""``kccgen``: generate, check, list Kinds, refresh specs.

Input errors print one line (file#json/path: message) and exit 2 without
touching generated/; a stale tree makes ``check`` exit 1 with a diff summary.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from kccgen import data_dir
from kccgen.discovery.errors import SpecError
from kccgen.documents import client_problems
from kccgen.generator.bundle import (
    DEFAULT_IMAGE,
    DEFAULT_NAMESPACE,
    BundleError,
    Options,
    build,
    generated_dir,
    summary,
    write_bundle,
)
from kccgen.generator.cache import RenderCache, UnitMemo, digest
from kccgen.generator.diagnostics import Reporter
from kccgen.generator.emit.files import (
    INDEX_PATH,
    Unit,
    index_entries,
    index_source,
    render_unit,
    units,
)
from kccgen.generator.emit.policies import index_entries as policy_index
from kccgen.generator.emit.policies import policy_files
from kccgen.generator.ir.build import build_ir
from kccgen.generator.ir.model import IR
from kccgen.generator.kindset import kind_set_problems, previous_kinds
from kccgen.generator.prefixes import problems as prefix_problems
from kccgen.generator.render import format_many
from kccgen.generator.spec.loader import Specs, load_accepted, load_specs, retired_kinds
from kccgen.generator.stamp import (
    STAMP,
    code_digest,
    inputs_digest,
    is_up_to_date,
    outputs_digest,
    stamp_text,
)
from kccgen.generator.surface import (
    Explainer,
    breaking_changes,
    built_surface,
    contradicted,
    previous_surface,
    surface_problems,
)
from kccgen.generator.write import compare_trees, write_trees


def _build(specs_dir: Path) -> IR:
    return build_ir(load_specs(specs_dir), Reporter())


@contextlib.contextmanager
def _build_without_gc() -> Iterator[None]:
    """Reading the documents and building the IR allocate millions of objects that
    all live until the run ends; the cyclic collector walked them again and again
    (a third of the build's time). It is off for the build (34 MB more at 1,045
    Kinds), and what was built is then frozen out of later collections, in this
    process and the render workers it forks."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.freeze()


def _build_checked(args: argparse.Namespace, memo: UnitMemo | None = None, explain: Explainer | None = None) -> tuple[str, IR, list[str]]:
    """What generate and check both do first: the inputs digest (taken before the
    specs are read), the IR, the Kinds the tree on disk has that this run would
    drop without a retirement entry, and the breaking changes to their spec paths
    that no entry of specs/accepted-changes.yaml accepts (generator/surface.py)."""
    inputs = inputs_digest(args.specs)
    with _build_without_gc():
        specs = load_specs(args.specs)
        ir = build_ir(specs, Reporter(), memo=memo)
    return inputs, ir, _gate(args, specs, ir, memo, explain)


def _gate(args: argparse.Namespace, specs: Specs, ir: IR, memo: UnitMemo | None, explain: Explainer | None = None) -> list[str]:
    """The Kinds and spec paths this IR would drop or break without an entry
    (with ``explain``, each with its cause)."""
    try:
        previous = previous_kinds(args.root)
        was, now = previous_surface(args.root), built_surface(ir, memo)
    except ValueError as e:
        return [str(e)]
    retired = frozenset(r.kind for r in specs.retired_kinds.kinds)
    vanished = (lambda kind: explain.vanished(kind, now, ir)) if explain is not None else None
    problems = kind_set_problems(previous, ir.kind_names | frozenset(policy_index()), specs.retired_kinds, specs.retired_kinds_file, vanished) + prefix_problems(specs)
    changes = breaking_changes(was, now, retired)
    change = (lambda c: explain.change(c, now)) if explain is not None else None
    return problems + surface_problems(changes, specs.accepted_changes, specs.accepted_changes_file, now, retired, change)


def _render_unit(u: Unit) -> dict[str, str]:
    return format_many(render_unit(u))


def _merge(into: dict[str, str], files: dict[str, str], unit: str) -> None:
    for path, text in files.items():
        if into.setdefault(path, text) != text:
            raise RuntimeError(f"{path}: two API units write different content ({unit})")


def render_all(ir: IR, progress: bool = True, workers: int | None = None, cache: RenderCache | None = None, memo: UnitMemo | None = None) -> dict[str, str]:
    """Render every API unit (its slice of the IR only), in parallel processes,
    formatted; units whose slice is unchanged come from ``cache``, and units the
    build skipped (``ir.cached``) from ``memo``. A progress bar on a terminal.
    Results are keyed by path and sorted, so the order in which workers finish
    cannot leak into the output."""
    salt = code_digest() if cache is not None else ""
    results: dict[str, str] = {}
    for cu in ir.cached:
        if memo is None:
            raise ValueError(f"{cu.name}: a cached unit needs the memo that skipped its build")
        _merge(results, memo.kept(cu.name)[0], cu.name)

    def put(u: Unit, key: str, files: dict[str, str]) -> None:
        if cache is None:
            return
        built: dict[str, object] | None = None
        if memo is not None and u.name in memo.inputs:
            built = {
                "inputs": memo.inputs[u.name],
                "kinds": [[k.group, k.kind, k.config_file] for k in u.ir.kinds],
                "index": index_entries(u.ir.kinds),
            }
        cache.put(u.name, key, files, built)

    todo: list[tuple[Unit, str]] = []
    for u in units(ir):
        key = digest(u.ir, salt) if cache is not None else ""
        hit = cache.get(u.name, key) if cache is not None else None
        if hit is None:
            todo.append((u, key))
        else:
            _merge(results, hit, u.name)
            if memo is not None and u.name in memo.inputs:
                put(u, key, hit)  # built again with the same slice: keep its new build key
    # Largest units first: a big API started last would leave a core idle.
    todo.sort(key=lambda uk: (-len(uk[0].ir.kinds), uk[0].name))
    n = workers if workers is not None else min(len(todo), os.cpu_count() or 1)
    show = progress and sys.stderr.isatty() and bool(todo)
    with contextlib.ExitStack() as stack:
        bar = task = None
        if show:
            from rich.progress import Progress

            bar = stack.enter_context(Progress(transient=True))
            task = bar.add_task("rendering generated/", total=len(todo))
        done: Iterable[tuple[Unit, str, dict[str, str]]]
        if n <= 1:
            done = ((u, key, _render_unit(u)) for u, key in todo)
        else:
            pool = stack.enter_context(ProcessPoolExecutor(max_workers=n))
            futures = {pool.submit(_render_unit, u): (u, key) for u, key in todo}
            done = ((*futures[f], f.result()) for f in as_completed(futures))
        for u, key, files in done:
            _merge(results, files, u.name)
            put(u, key, files)
            if bar is not None and task is not None:
                bar.update(task, advance=1, description=u.name)
    return dict(sorted(results.items()))


def render_tree(inputs: str, ir: IR, cache: RenderCache | None = None, memo: UnitMemo | None = None) -> dict[str, str]:
    """All generated files, stamp included (see generator/stamp.py). ``inputs`` is
    ``inputs_digest`` taken before the specs were read: a spec or generator edit made
    while a run is under way then leaves a stale stamp, so the next run redoes it."""
    files = render_all(ir, cache=cache, memo=memo)
    cached: dict[str, object] = {}
    for cu in ir.cached:
        assert memo is not None  # render_all refused a cached unit without one
        cached.update(memo.kept(cu.name)[1])
    files.update(format_many(policy_files(ir.iam_targets)))  # the IAM Kinds (generator/emit/policies.py)
    files[INDEX_PATH] = index_source(ir, cached, policy_index())
    files[STAMP] = stamp_text(inputs, outputs_digest(files), len(ir.errors))
    return dict(sorted(files.items()))


def _cache(args: argparse.Namespace) -> RenderCache | None:
    return None if getattr(args, "no_cache", False) else RenderCache(args.root)


def _memo(args: argparse.Namespace) -> UnitMemo | None:
    """The build memo, unless caches are off or ``--full`` asks for every unit built."""
    if getattr(args, "no_cache", False) or getattr(args, "full", False):
        return None
    return UnitMemo(args.root, code_digest())


def _client_agrees(args: argparse.Namespace) -> bool:
    """Whether the installed client is the one the lock names (else say so, once)."""
    problems = client_problems(args.specs)
    for msg in problems:
        print(f"error: {msg}", file=sys.stderr)
    return not problems


def cmd_generate(args: argparse.Namespace) -> int:
    t0 = time.perf_counter()
    if not _client_agrees(args):
        return 2
    if not args.force and is_up_to_date(args.root, args.specs):
        print(f"generated/ is up to date; nothing to do ({time.perf_counter() - t0:.1f}s; --force regenerates)")
        return 0
    memo = _memo(args)
    inputs, ir, problems = _build_checked(args, memo)
    if problems:  # nothing written: generated/ keeps every Kind it had
        for msg in problems:
            print(f"error: {msg}", file=sys.stderr)
        return 2
    files = render_tree(inputs, ir, _cache(args), memo)
    write_trees(args.root, files)
    if memo is not None:
        memo.save()
    for d in ir.diagnostics:
        print(f"warning: {d}", file=sys.stderr)
    built = f" ({len(ir.kind_names) - len(ir.kinds)} unchanged)" if ir.cached else ""
    print(f"generated {len(files)} files for {len(ir.kind_names)} Kinds{built} in {time.perf_counter() - t0:.1f}s")
    return _report_skipped(ir)


def _report_skipped(ir: IR) -> int:
    """A configured Kind whose methods fit no contract shape is not generated: an
    error (exit 1) naming the method, while the other Kinds are written."""
    for sk in ir.errors:
        print(f"error: {sk}", file=sys.stderr)
    auto = len(ir.skipped) - len(ir.errors)
    if auto:
        print(f"note: {auto} derived Kinds not generated; `kccgen coverage` lists each with the reason", file=sys.stderr)
    return 1 if ir.errors else 0


def cmd_check(args: argparse.Namespace) -> int:
    """The drift gate. When the stamp matches the current inputs (specs, generator,
    templates, tool pins) and every file on disk, the tree is what those inputs
    produced: no re-render (seconds, not minutes, at a thousand Kinds). A stale
    input, an edited, missing or stray file, or ``--full`` re-renders and diffs."""
    if not _client_agrees(args):
        return 1
    if not args.full and not args.no_cache and is_up_to_date(args.root, args.specs):
        stale = contradicted(*load_accepted(args.specs), previous_surface(args.root), retired_kinds(args.specs))
        for msg in stale:
            print(f"error: {msg}", file=sys.stderr)
        n = len(previous_kinds(args.root))
        print(f"generated/ is up to date ({n} Kinds; the stamp matches the inputs and every file; --full re-renders)")
        return 1 if stale else 0
    memo = _memo(args)
    inputs, ir, problems = _build_checked(args, memo)
    for msg in problems:
        print(f"error: {msg}", file=sys.stderr)
    diff = compare_trees(args.root, render_tree(inputs, ir, _cache(args), memo))
    if memo is not None:
        memo.save()
    if diff.clean and not problems:
        print(f"generated/ is up to date ({len(ir.kind_names)} Kinds)")
        return _report_skipped(ir)
    if diff.clean:
        _report_skipped(ir)
        return 1
    print(diff.summary(), file=sys.stderr)
    _report_skipped(ir)
    return 1


def cmd_kinds(args: argparse.Namespace) -> int:
    """Kinds table; rich on a terminal, plain aligned text when piped."""
    ir = _build(args.specs)
    header = ("Kind", "group/version", "API resource", "externalRef template", "spec fields", "status fields")
    rows = [
        (
            k.kind,
            f"{k.group}/{k.version}",
            f"{k.api.doc_key} {k.resource}",
            k.identity.template + ("" if k.identity.template_source == "asset-inventory" else " (REST)"),
            str(len(k.spec.fields)),
            str(len(k.observed_state.fields)),
        )
        for k in ir.kinds
    ]
    disagreements = [(k.kind, d) for k in ir.kinds for d in k.identity.disagreements]
    footer = [
        f"asset-table/Discovery cross-check: {len(ir.kinds)} templates checked against the get path "
        f"and name pattern; {len(disagreements)} disagreement(s)",
        *(f"  {kind}: {d}" for kind, d in disagreements),
    ]
    if sys.stdout.isatty() and not args.plain:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=f"{len(ir.kinds)} Kinds")
        for col in header:
            table.add_column(col, overflow="fold")
        for row in rows:
            table.add_row(*row)
        console = Console()
        console.print(table)
        for line in footer:
            console.print(line, markup=False)
        return 0
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
    for r in (header, *rows):
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    print("\n".join(footer))
    return 0


def cmd_refs(args: argparse.Namespace) -> int:
    """The reference graph: Kind, spec field path, target Kind, and why."""
    ir = _build(args.specs)
    rows = [("Kind", "field path", "target", "form", "API field", "inferred from")]
    for k in ir.kinds:
        for r in k.references:
            form = "external only" if r.external_only else "external | name"
            if r.many:
                form += ", list"
            rows.append((k.kind, f"spec.{r.krm_path}", r.target, form, r.api_path, r.source))
    if args.format == "json":
        import json

        keys = ("kind", "path", "target", "form", "api_path", "source")
        print(json.dumps([dict(zip(keys, row, strict=True)) for row in rows[1:]], indent=2))
        return 0
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row[:5], widths, strict=True)) + "  " + row[5])
    targets = sorted({row[2] for row in rows[1:]})
    print(f"{len(rows) - 1} reference fields in {len(ir.kinds)} Kinds; targets: {', '.join(targets)}")
    return 0


def cmd_lint_crds(args: argparse.Namespace) -> int:
    from kccgen.generator.crdlint import lint_file

    files = [Path(f) for f in args.files] or sorted((args.root / "generated" / "crds").glob("*.yaml"))
    if not files:
        print("error: no CRDs to lint (generated/crds/*.yaml is empty)", file=sys.stderr)
        return 2
    problems = [p for f in files for p in lint_file(f, str(f.relative_to(args.root)) if f.is_relative_to(args.root) else str(f))]
    for p in problems:
        print(p, file=sys.stderr)
    print(f"lint-crds: {len(files)} CRDs, {len(problems)} problem(s)")
    return 1 if problems else 0


def cmd_lag(args: argparse.Namespace) -> int:
    from kccgen.generator.lag import run

    if (args.old is None) == (args.from_package is None):
        print("error: give OLD_SPECS_DIR or --from-package VERSION (one of them)", file=sys.stderr)
        return 2
    new = args.new or args.specs
    try:
        print(run(args.old, new, args.from_package, args.format), end="")
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


def cmd_parity(args: argparse.Namespace) -> int:
    """Field parity with Config Connector's CRDs; --write updates docs/field-parity.md."""
    from kccgen.generator.parity import run as parity_run

    kcc = args.kcc or (args.root.resolve().parent / "shared" / "compat" / "kcc" / "crds")
    if not kcc.is_dir():
        print(f"error: {kcc}: Config Connector CRDs not found (pass --kcc DIR)", file=sys.stderr)
        return 2
    text = parity_run(args.specs, kcc)
    if args.write:
        out = args.root / "docs" / "field-parity.md"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        print(f"wrote {out}")
    else:
        print(text, end="")
    return 0


def cmd_coverage(args: argparse.Namespace) -> int:
    """Every resource of every pinned document: Kind (and tier) or excluded with the reason."""
    from kccgen.generator.coverage import coverage, render_json, render_markdown
    from kccgen.generator.spec.loader import load_specs

    specs = load_specs(args.specs)
    ir = build_ir(specs, Reporter())
    kcc = args.kcc or (args.root.resolve().parent / "shared" / "compat" / "kcc" / "kinds.tsv")
    cov = coverage(specs, ir, kcc if kcc.exists() else None, args.root / "docs" / "verified.json")
    text = render_markdown(cov)
    if args.write:
        docs = args.root / "docs"
        docs.mkdir(parents=True, exist_ok=True)
        (docs / "coverage.md").write_text(text, encoding="utf-8")
        (docs / "coverage.json").write_text(render_json(cov), encoding="utf-8")
        print(f"wrote {docs / 'coverage.md'} and {docs / 'coverage.json'}")
    summary = text.split("\n## ", 1)[0]
    print(summary if args.write or args.summary else text, end="" if text.endswith("\n") else "\n")
    return 0


def cmd_update_specs(args: argparse.Namespace) -> int:
    from kccgen.generator.update_specs import package_version, update_specs

    try:
        changes = update_specs(args.specs, extra=tuple(args.apis), add_all=args.all, vendor=args.vendor)
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    moved = [c for c in changes if not c.same_bytes]
    added = sum(c.old_revision is None for c in moved)
    print(
        f"google-api-python-client {package_version()}: {len(changes)} documents pinned "
        f"(specs/discovery.lock.json), {added} added, {len(moved) - added} changed"
    )
    for c in moved:
        print("\n".join(c.lines()))
    return 0


def cmd_bump(args: argparse.Namespace) -> int:
    """Move the client pin, re-pin, regenerate, refresh the derived documents and
    write the changelog (kccgen.generator.bump); decisions are listed all at once."""
    from kccgen.generator.bump import bump

    def render_write(inputs: str, ir: IR, memo: UnitMemo | None) -> int:
        write_trees(args.root, render_tree(inputs, ir, _cache(args), memo))
        if memo is not None:
            memo.save()
        return _report_skipped(ir)

    return bump(args, _build_checked, _gate, render_write, _memo(args))


def cmd_bundle(args: argparse.Namespace) -> int:
    """The operator's install bundle: the selected CRDs, least-privilege RBAC, the
    Deployment and its admission webhook, as a kustomize directory."""
    opts = Options(
        pattern=args.crd_pattern,
        namespace=args.namespace,
        image=args.image,
        project=args.project,
        endpoint=args.endpoint,
        gcp_service_account=args.gcp_service_account,
    )
    try:
        files = build(generated_dir(args.root), opts)
        write_bundle(args.out, files)
    except BundleError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(summary(args.out, files))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="kccgen", description=__doc__)
    p.add_argument("--root", type=Path, default=Path("."), help="repository root (holds generated/)")
    p.add_argument("--specs", type=Path, default=None, help="specs directory (default: the specs installed with kccgen)")
    sub = p.add_subparsers(dest="cmd", required=True)
    gp = sub.add_parser("generate", help="regenerate generated/ (atomic swap)")
    gp.add_argument("--force", action="store_true", help="regenerate even when the stamp says nothing changed")
    gp.add_argument("--no-cache", action="store_true", help="render every API again (ignore .kccgen-cache/)")
    cp = sub.add_parser("check", help="exit 1 when generated/ differs from what specs produce")
    cp.add_argument("--no-cache", action="store_true", help="render every API again (ignore .kccgen-cache/)")
    cp.add_argument("--full", action="store_true", help="re-render and compare even when the stamp matches")
    kp = sub.add_parser("kinds", help="table of Kinds and their identity templates")
    kp.add_argument("--plain", action="store_true", help="plain text even on a terminal")
    rp = sub.add_parser("refs", help="print the reference graph (Kind, field path, target Kind)")
    rp.add_argument("--format", choices=("text", "json"), default="text")
    lp = sub.add_parser("lint-crds", help="structural and convention checks on generated CRDs")
    lp.add_argument("files", nargs="*", help="CRD files (default: generated/crds/*.yaml)")
    gp2 = sub.add_parser("lag", help="schema-lag report: behaviour, field and type changes per Kind")
    gp2.add_argument("old", nargs="?", type=Path, help="OLD specs dir (or a dir of Discovery JSON files)")
    gp2.add_argument("new", nargs="?", type=Path, help="NEW specs dir (default: --specs)")
    gp2.add_argument("--from-package", metavar="VERSION", help="take OLD from google-api-python-client==VERSION (PyPI)")
    gp2.add_argument("--format", choices=("text", "json"), default="text")
    pp = sub.add_parser("parity", help="spec field parity with Config Connector's CRDs (markdown)")
    pp.add_argument("--kcc", type=Path, default=None, help="Config Connector CRDs dir (default: ../shared/compat/kcc/crds)")
    pp.add_argument("--write", action="store_true", help="write docs/field-parity.md")
    cp = sub.add_parser("coverage", help="every resource of every pinned document: Kind, tier, or why not")
    cp.add_argument("--write", action="store_true", help="write docs/coverage.md and docs/coverage.json")
    cp.add_argument("--summary", action="store_true", help="print only the summary")
    cp.add_argument("--kcc", type=Path, default=None, help="Config Connector kinds.tsv (default: ../shared/compat/kcc/kinds.tsv)")
    up = sub.add_parser("update-specs", help="pin Discovery documents from the installed client (refresh, add APIs, --all)")
    up.add_argument("apis", nargs="*", help="API names (newest GA version) or document keys (run.v2) to add")
    up.add_argument("--all", action="store_true", help="add the newest GA version of every API the client ships")
    up.add_argument("--vendor", action="store_true", help="keep a copy of the added documents in specs/discovery/")
    bu = sub.add_parser("bump", help="move the client pin, re-pin the documents, regenerate, refresh the docs, write docs/changes/<from>-<to>.md")
    bu.add_argument("version", nargs="?", default=None, metavar="VERSION", help="google-api-python-client version (default: the newest pip sees)")
    bu.add_argument("--no-docs", action="store_true", help="skip refreshing coverage, field parity and docs/verified.json")
    bu.add_argument("--documents", type=Path, default=None, metavar="DIR", help="take the documents from DIR instead of the installed client (try a bump against edited documents)")
    bu.add_argument("--no-cache", action="store_true", help="render every API again (ignore .kccgen-cache/)")
    bp = sub.add_parser("bundle", help="write the operator's install bundle (kustomize directory: CRDs, RBAC, Deployment, webhook)")
    bp.add_argument("--out", type=Path, required=True, metavar="DIR", help="bundle directory (replaced as a whole)")
    bp.add_argument("--crd-pattern", default=None, metavar="PATTERN", help="Kinds to install, e.g. 'pubsub;storage' (kccgen/patterns.py; default: all)")
    bp.add_argument("--namespace", default=DEFAULT_NAMESPACE, help=f"the operator's namespace (default: {DEFAULT_NAMESPACE})")
    bp.add_argument("--image", default=DEFAULT_IMAGE, help=f"operator image (default: {DEFAULT_IMAGE})")
    bp.add_argument("--project", default=None, help="default GCP project for the operator (--project)")
    bp.add_argument("--endpoint", default=None, metavar="URL", help="GCP endpoint override for the operator (--endpoint), e.g. mockgcp")
    bp.add_argument("--gcp-service-account", default=None, metavar="EMAIL", help="annotate the ServiceAccount for GKE workload identity")
    args = p.parse_args(argv)
    if args.specs is None:
        # update-specs writes documents: into ROOT/specs, never into an installed package.
        args.specs = args.root / "specs" if args.cmd in ("update-specs", "bump") else data_dir("specs")
    handlers = {"generate": cmd_generate, "check": cmd_check, "kinds": cmd_kinds, "refs": cmd_refs, "lint-crds": cmd_lint_crds, "lag": cmd_lag, "parity": cmd_parity, "update-specs": cmd_update_specs, "coverage": cmd_coverage, "bundle": cmd_bundle, "bump": cmd_bump}
    try:
        return handlers[args.cmd](args)
    except SpecError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


def run() -> None:
    """Console entry point: a closed pipe (``| head``) is not an error."""
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    sys.exit(code)


if __name__ == "__main__":
    run()
