"""``kccctl``: operate on generated Kinds locally.

``kccctl ref normalize KIND VALUE`` answers "what do I put in external?":
it prints the canonical externalRef for any accepted spelling, or exits 2
naming the Kind, the value and the expected format.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from kccgen.runtime.identity import IdentityError, identity_for, known_kinds
from kccgen.runtime.registry import kind_index, module_for, types_modules, unknown_kind


def _apply_or_delete(args: argparse.Namespace) -> int:
    from kccgen.runtime.gcp import Gcp
    from kccgen.runtime.local import (
        ManifestError,
        StateDir,
        StateLocked,
        StateUnwritable,
        apply,
        delete,
        load_manifests,
        namespace_problem,
        table,
    )

    problem = namespace_problem(args.namespace)
    if problem:
        print(f"error: --namespace: {problem}", file=sys.stderr)
        return 2
    targets = getattr(args, "target", None) or []
    if bool(targets) == bool(args.filename):
        print(f"error: {args.cmd} takes -f FILENAME" + (", or KIND NAME..." if args.cmd == "delete" else ""), file=sys.stderr)
        return 2
    try:
        objs = _stored_objects(targets, StateDir(args.state), args.namespace) if targets else load_manifests(args.filename, args.namespace, recursive=args.recursive)
    except (ManifestError, KeyError) as e:
        print(f"error: {e.args[0] if isinstance(e, KeyError) else e}", file=sys.stderr)
        return 2
    if not objs:  # an empty file, or a folder without manifests: kubectl's words and status
        print(f"error: no objects passed to {args.cmd}", file=sys.stderr)
        return 1
    dry_run = "server" if args.cmd == "diff" else args.dry_run
    # A client dry run sends nothing: it needs no credentials (and never looks them up).
    if args.endpoint is None and dry_run != "client" and not _have_credentials():
        return 2
    state = StateDir(args.state)
    gcp = Gcp(args.endpoint, host_paths=args.host_paths, qps=args.qps or None)
    try:
        with state.lock(wait=not args.no_wait, notify=lambda msg: print(msg, file=sys.stderr)), (_progress(len(objs), args.cmd) if args.cmd != "delete" else contextlib.nullcontext(None)) as on_done:
            remembered = state.remembered_project()
            project = args.project or remembered
            if args.project and dry_run is None and args.project != remembered:
                try:
                    state.remember_project(args.project)
                except OSError as e:
                    raise StateUnwritable(f"cannot write {state.root / '.settings.json'}: {e.strerror or e}") from None
            if args.cmd == "delete":
                results = delete(objs, state, gcp, project, args.namespace, dry_run=dry_run)
            else:
                results = apply(objs, state, gcp, project, args.namespace, dry_run=dry_run, workers=args.workers, on_done=on_done)
    except (ManifestError, StateLocked, StateUnwritable) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for msg in state.problems:
        print(f"warning: {msg}", file=sys.stderr)
    if args.cmd == "diff":
        return _print_diff(results)
    rows = [r for r, _ in results]
    print(table(rows, "READY" if args.cmd == "apply" else "DELETED"))
    if dry_run is not None:
        return 0 if all(r.ready or r.reason in PLANNED for r in rows) else 1
    return 0 if all(r.ready for r in rows) else 1


# What a dry run reports for an object it would write; waiting on a dependency
# that would itself be created is part of the plan, not an error.
PLANNED = frozenset({"WouldCreate", "WouldUpdate", "WouldDelete", "DependencyNotReady", "Valid"})


def _print_diff(results: list[Any]) -> int:
    """kubectl diff's contract: 0 nothing would change, 1 something would, 2 an error."""
    import json

    changed = errors = 0
    for row, result in results:
        if row.ready:
            continue
        what = f"{row.kind} {(result.obj.get('metadata') or {}).get('namespace') or '-'}/{row.name}"
        if row.reason in PLANNED:
            changed += 1
            print(f"{what}: {row.message}")
            for path, desired, live in result.changes:
                sign = "+" if live is None else "~"
                old = "" if live is None else f"{json.dumps(live, sort_keys=True)} => "
                print(f"  {sign} {path}: {old}{json.dumps(desired, sort_keys=True)}")
        else:
            errors += 1
            print(f"error: {what}: {row.reason}: {row.message}", file=sys.stderr)
    return 2 if errors else 1 if changed else 0


def _stored_objects(targets: list[str], state: Any, namespace: str) -> list[dict[str, Any]]:
    """``KIND NAME...`` or ``KIND/NAME...``: objects of the state directory, as kubectl delete takes them."""
    from kccgen.runtime.local import ManifestError
    from kccgen.runtime.registry import resolve_kind

    wanted: list[tuple[str, str]] = []
    if all("/" in t for t in targets):
        wanted = [(resolve_kind(t.split("/", 1)[0]), t.split("/", 1)[1]) for t in targets]
    elif len(targets) >= 2 and not any("/" in t for t in targets):
        kind = resolve_kind(targets[0])
        wanted = [(kind, n) for n in targets[1:]]
    else:
        raise ManifestError("give KIND NAME [NAME...] or KIND/NAME [KIND/NAME...]")
    stored = {(o.get("kind"), o["metadata"].get("name")): o for o in state.load() if (o["metadata"].get("namespace") or "default") == namespace}
    missing = [f"{k}/{n}" for k, n in wanted if (k, n) not in stored]
    if missing:
        raise ManifestError(f"not in {state.root} (namespace {namespace}): {', '.join(missing)}")
    return [stored[w] for w in wanted]


@contextlib.contextmanager
def _progress(total: int, verb: str) -> Iterator[Callable[[Any], None] | None]:
    """On a terminal, one line per object as it finishes and a progress bar
    (rich); scripts (no terminal) get only the final table."""
    if not sys.stderr.isatty() or total < 2:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    with Progress(TextColumn(verb), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console, transient=True) as bar:
        task = bar.add_task(verb, total=total)

        def done(row: Any) -> None:
            mark = "[green]✓[/]" if row.ready else "[red]✗[/]"
            console.print(f"{mark} {row.kind}/{row.name} {row.reason}", highlight=False)
            bar.advance(task)

        yield done


def _have_credentials() -> bool:
    """Real GCP needs Application Default Credentials: said once, up front."""
    problem = _credentials_problem()
    if problem:
        print(f"error: {problem}", file=sys.stderr)
    return problem is None


def _credentials_problem() -> str | None:
    """Why real GCP cannot be called (no Application Default Credentials), or None:
    said once, up front, instead of a traceback from the first object's GET."""
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError

    try:
        google.auth.default()
    except DefaultCredentialsError as e:
        first = str(e).split(". ")[0]
        return f"no Google credentials ({first}): run `gcloud auth application-default login`, or pass --endpoint URL for mockgcp or an emulator"
    return None


def _kind_or_exit(text: str) -> str | None:
    from kccgen.runtime.registry import resolve_kind

    try:
        return resolve_kind(text)
    except KeyError as e:
        print(f"error: {e.args[0]}", file=sys.stderr)
        return None


def _get(args: argparse.Namespace) -> int:
    from kccgen.runtime.get import get

    return get(args.kind, args.name, args.state, args.namespace, args.all_namespaces, args.output)


def _export(args: argparse.Namespace) -> int:
    """The live resource as a manifest that applies back unchanged. NAME is an
    object in the state directory, or the resource's name (full or its ID)."""
    import yaml

    from kccgen.runtime.adapter import adapter_for, policy_for
    from kccgen.runtime.export import export_manifest
    from kccgen.runtime.gcp import Gcp, GcpError
    from kccgen.runtime.local import StateDir
    from kccgen.runtime.reconciler import read_live
    from kccgen.runtime.secrets import placeholders

    kind = _kind_or_exit(args.kind)
    if kind is None:
        return 2
    if policy_for(kind) is not None:
        print(f"error: {kind} is an IAM Kind: it owns a part of a resource's policy and has no resource of its own to export; `kccctl get` shows the object", file=sys.stderr)
        return 2
    ident = identity_for(kind)
    stored = [
        o
        for o in StateDir(args.state).load()
        if o.get("kind") == kind and o["metadata"].get("name") == args.name and (o["metadata"].get("namespace") or "default") == args.namespace
    ]
    ext = str((stored[0].get("status") or {}).get("externalRef") or "") if stored else ""
    try:
        if not ext:
            try:
                ext = ident.normalize(args.name)
            except IdentityError:
                if not args.project or set(ident.params) != {"project", adapter_for(kind).id_param}:
                    raise
                ext = ident.format(project=args.project, **{adapter_for(kind).id_param: args.name})
    except IdentityError as e:
        print(f"error: {args.name!r} is neither a {kind} object in {args.state} nor a resource name: {e}", file=sys.stderr)
        return 2
    if args.endpoint is None and not _have_credentials():
        return 2
    a = adapter_for(kind)
    gcp = Gcp(args.endpoint, host_paths=args.host_paths)
    try:
        live = read_live(gcp, a, dict(ident.parse(ext)))
        doc = export_manifest(kind, ext, live, args.as_name or (args.name if stored else None), args.namespace)
        fill, notes = placeholders(a, (stored[0].get("spec") if stored else None), str(doc["metadata"]["name"]))
        _deep_merge(doc.setdefault("spec", {}), fill)
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
    except GcpError as e:
        print(f"error: GET {ext}: {e}", file=sys.stderr)
        return 1
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(yaml.safe_dump(doc, sort_keys=False), end="")
    return 0


def _deep_merge(into: dict[str, Any], add: dict[str, Any]) -> None:
    for k, v in add.items():
        if isinstance(v, dict) and isinstance(into.get(k), dict) and "valueFrom" not in v:
            _deep_merge(into[k], v)
        else:
            into[k] = v


def _example(args: argparse.Namespace) -> int:
    import yaml

    from kccgen.runtime.example import DEFAULT_PROJECT, Examples

    try:
        docs = Examples(args.project or DEFAULT_PROJECT).manifests(args.kind)
    except KeyError as e:
        print(f"error: {e.args[0]}", file=sys.stderr)
        return 2
    print(yaml.safe_dump_all(docs, sort_keys=False), end="")
    return 0


def _verify(args: argparse.Namespace) -> int:
    """Run the lifecycle suite; without --endpoint on a mockgcp started for the run
    (a child process: the runtime never imports the emulator)."""
    import contextlib
    import subprocess

    from kccgen.runtime.lifecycle import Lifecycle, RecordingGcp, verified_json

    known = types_modules()
    kinds = args.kinds or list(known)
    unknown = [k for k in kinds if k not in known]
    if unknown:
        for kind in unknown:
            print(f"error: {unknown_kind(kind, list(known))}", file=sys.stderr)
        return 2
    with contextlib.ExitStack() as stack:
        endpoint = args.endpoint
        if endpoint is None:
            proc = subprocess.Popen(
                [sys.executable, "-m", "kccgen.mockgcp", "serve", "--port", "0"], stdout=subprocess.PIPE, text=True
            )
            stack.callback(proc.wait)
            stack.callback(proc.terminate)
            assert proc.stdout is not None
            line = proc.stdout.readline()
            if not line.startswith("mockgcp listening on "):
                print(f"error: mockgcp did not start: {line.strip()}", file=sys.stderr)
                return 2
            endpoint = line.split()[-1]
        lc = Lifecycle(RecordingGcp(endpoint, lro_interval=0.0, retries=0, sleep=lambda s: None, host_paths=True), args.project or "lifecycle-project")
        outcomes = [lc.run(k) for k in kinds]
    for o in outcomes:
        tail = "" if o.passed else f"  {o.step}: {o.message}"
        print(f"{o.kind}\t{'PASS' if o.passed else 'FAIL'}\t{o.seconds:.3f}s{tail}")
    passed = sum(o.passed for o in outcomes)
    print(f"{passed}/{len(outcomes)} verified")
    if args.write:
        args.write.write_text(verified_json(outcomes), encoding="utf-8")
    return 0 if passed == len(outcomes) else 1


def _operator(args: argparse.Namespace) -> int:
    """Run the operator until SIGINT/SIGTERM (kopf stops its watches and daemons)."""
    import asyncio
    import logging

    from kccgen.patterns import problem
    from kccgen.runtime.local import namespace_problem
    from kccgen.runtime.operator import (
        Operator,
        OperatorError,
        Settings,
        served_kinds,
        settings_summary,
    )

    if args.crd_pattern and problem(args.crd_pattern):
        print(f"error: --crd-pattern {args.crd_pattern!r}: {problem(args.crd_pattern)}", file=sys.stderr)
        return 2
    if not served_kinds(args.crd_pattern):
        print(f"error: --crd-pattern {args.crd_pattern!r} selects no Kind (`kccctl kinds` lists them)", file=sys.stderr)
        return 2
    if not args.endpoint and not _have_credentials():
        print(f"error: {_credentials_problem()}", file=sys.stderr)
        return 2
    for ns in args.namespace:
        if namespace_problem(ns):
            print(f"error: --namespace: {namespace_problem(ns)}", file=sys.stderr)
            return 2
    from kccgen.runtime import logs

    logs.configure(args.log)
    settings = Settings(
        endpoint=args.endpoint,
        project=args.project,
        crd_pattern=args.crd_pattern,
        namespaces=tuple(args.namespace),
        kubeconfig=args.kubeconfig,
        host_paths=args.host_paths,
        workers=args.workers,
        per_kind=args.per_kind,
        reconcile_qps=args.reconcile_qps,
        gcp_qps=args.qps,
        resync_s=args.resync,
        paused=args.actuation_mode == "Paused",
        health_port=None if args.health_port < 0 else args.health_port,
        webhook_port=args.webhook_port,
        webhook_service=args.webhook_service,
        webhook_namespace=args.webhook_namespace,
        webhook_config=args.webhook_config,
        health_host=args.metrics_bind,
        leader_elect=args.leader_elect == "true",
        lease_namespace=args.lease_namespace,
    )
    logging.getLogger("kccgen.operator").info("starting: %s", settings_summary(settings))
    try:
        asyncio.run(Operator(settings).run())
    except OperatorError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


def _mockgcp(argv: list[str]) -> int:
    """``kccctl mockgcp ...`` is ``mockgcp ...``: the runtime never imports the
    emulator (an operator image ships without it), it replaces this process
    with it, so signals and the exit status are the emulator's own."""
    import importlib.util

    if importlib.util.find_spec("kccgen.mockgcp") is None:
        print("error: mockgcp is not installed with this kccctl", file=sys.stderr)
        return 2
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, "-m", "kccgen.mockgcp", *argv])


def version_line() -> str:
    """The package version and which generated tree it carries (the digest of its
    outputs, from ``generated/.kccgen-stamp``) and how many Kinds."""
    from importlib import metadata, resources

    try:
        version = metadata.version("kccgen")
    except metadata.PackageNotFoundError:
        version = "(not installed)"
    try:
        stamp = resources.files("kccgen.generated").joinpath(".kccgen-stamp").read_text(encoding="utf-8")
        digest = next((line.split()[1][:12] for line in stamp.splitlines() if line.startswith("outputs ")), "unstamped")
    except OSError:
        digest = "unstamped"
    return f"kccctl {version} (generated tree {digest}, {len(kind_index())} Kinds)"


class _Version(argparse.Action):
    """``--version``: computed when asked, not on every run."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, default: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option_string: str | None = None) -> None:
        print(version_line())
        parser.exit()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="kccctl", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action=_Version, help="print the version and the generated tree's digest and Kind count")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("kinds", help="list the Kinds this installation can reconcile")
    rp = sub.add_parser("ref", help="reference tools")
    rsub = rp.add_subparsers(dest="ref_cmd", required=True)
    np_ = rsub.add_parser("normalize", help="print the canonical externalRef of VALUE for KIND")
    np_.add_argument("kind")
    np_.add_argument("value")
    for verb, help_ in (
        ("apply", "reconcile manifests (references first)"),
        ("delete", "delete in reverse dependency order"),
        ("diff", "what apply would write, read from GCP with GETs only (exit 0: nothing, 1: changes, 2: error)"),
    ):
        ap = sub.add_parser(verb, help=help_)
        if verb == "delete":
            ap.add_argument("target", nargs="*", help="KIND NAME... or KIND/NAME... of objects in the state directory (instead of -f)")
        ap.add_argument("-f", "--filename", action="append", type=Path, required=verb != "delete", help="file, directory or - for stdin (repeatable); .yaml, .yml, .json")
        ap.add_argument("-R", "--recursive", action="store_true", help="with a directory, its subdirectories too")
        if verb != "diff":
            ap.add_argument(
                "--dry-run",
                choices=("client", "server"),
                help="client: check the manifests only; server: also read GCP and report what would be written (nothing is written)",
            )
        ap.add_argument("--state", type=Path, default=Path(".kccctl-state"), help="state directory (default .kccctl-state)")
        ap.add_argument("--endpoint", help="GCP endpoint override, e.g. a mockgcp URL (default: real GCP with ADC)")
        ap.add_argument("--project", help="default project (the namespace's cnrm.cloud.google.com/project-id); remembered in the state directory")
        ap.add_argument("--workers", type=int, default=8, help="objects of one dependency level reconciled at once (default 8; 1: one by one)")
        ap.add_argument("--qps", type=float, default=50.0, help="requests per second to each API, whatever the workers (default 50; 0: no limit)")
        ap.add_argument("-n", "--namespace", default="default")
        ap.add_argument("--no-wait", action="store_true", help="fail at once when another kccctl is using the state directory (default: wait for it)")
        ap.add_argument(
            "--host-paths",
            action="store_true",
            help="send each API's requests under its own host on the endpoint (/pubsub.googleapis.com/v1/...): how mockgcp serves every pinned API",
        )
    ep = sub.add_parser("example", help="print a minimal valid manifest for KIND (and the objects it refers to, first)")
    ep.add_argument("kind")
    ep.add_argument("--project", help=f"project of the examples (default {'example-project'})")
    vp = sub.add_parser("verify", help="run the lifecycle suite (create, re-apply, update, delete) for Kinds on mockgcp")
    vp.add_argument("kinds", nargs="*", metavar="KIND", help="Kinds to verify (default: every generated Kind)")
    vp.add_argument("--endpoint", help="a running mockgcp (default: start one for the run)")
    vp.add_argument("--project", help="project prefix of the objects (default lifecycle-project)")
    vp.add_argument("--write", type=Path, help="write per-Kind pass/fail, failing step and message as JSON (docs/verified.json)")
    gp = sub.add_parser("get", help="read objects from the state directory (KIND [NAME] or KIND/NAME; Kind names as kubectl takes them, or a category: gcp)")
    gp.add_argument("kind")
    gp.add_argument("name", nargs="?")
    gp.add_argument("-o", "--output", choices=("table", "wide", "yaml", "json", "name"), default="table")
    gp.add_argument("--state", type=Path, default=Path(".kccctl-state"))
    gp.add_argument("-n", "--namespace", default="default")
    gp.add_argument("-A", "--all-namespaces", action="store_true")
    xp = sub.add_parser("export", help="print a live resource as a manifest that applies back without changes")
    xp.add_argument("kind")
    xp.add_argument("name", help="an object in the state directory, or the resource's name (full, or its ID with --project)")
    xp.add_argument("--state", type=Path, default=Path(".kccctl-state"))
    xp.add_argument("--endpoint", help="GCP endpoint override, e.g. a mockgcp URL (default: real GCP with ADC)")
    xp.add_argument("--project", help="the project of a resource given by its ID")
    xp.add_argument("-n", "--namespace", default="default")
    xp.add_argument("--name", dest="as_name", help="metadata.name of the manifest (default: the object's, or the resource ID)")
    xp.add_argument("--host-paths", action="store_true", help="as for apply: each API under its own host on the endpoint (mockgcp)")
    op = sub.add_parser("operator", help="run the operator: reconcile the cluster's objects of the generated Kinds until interrupted")
    op.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, else the in-cluster service account)")
    op.add_argument("--endpoint", help="GCP endpoint override, e.g. a mockgcp URL (default: real GCP with ADC)")
    op.add_argument("--project", help="default project when neither the object nor its namespace names one")
    op.add_argument("--crd-pattern", help="Kinds to reconcile: globs on service, group, group/Kind or Kind, ',' or ';' separated, '!' excludes (default: all)")
    op.add_argument("--namespace", action="append", default=[], help="reconcile only this namespace (repeatable; default: all namespaces)")
    op.add_argument("--workers", type=int, default=16, help="reconciles running at once (default 16)")
    op.add_argument("--per-kind", type=int, default=4, help="reconciles of one Kind running at once (default 4)")
    op.add_argument("--reconcile-qps", type=float, default=50.0, help="reconciles started per second, all Kinds (default 50; 0: no limit)")
    op.add_argument("--qps", type=float, default=20.0, help="GCP requests per second to each API and project (default 20; 0: no limit)")
    op.add_argument("--resync", type=float, default=600.0, help="seconds between re-reconciles of a Ready object, jittered 0.5-1.5x (default 600)")
    op.add_argument("--actuation-mode", choices=("Reconciling", "Paused"), default="Reconciling", help="Paused: no GCP call for any object")
    op.add_argument("--health-port", type=int, default=8080, help="/healthz, /readyz and /metrics (default 8080; 0: any free port; -1: off)")
    op.add_argument("--webhook-port", type=int, help="serve the validating admission webhook over HTTPS on this port (0: any free port)")
    op.add_argument("--webhook-service", help="the webhook's Service name (its DNS names go into the certificate)")
    op.add_argument("--webhook-namespace", help="the webhook Service's namespace")
    op.add_argument("--webhook-config", help="ValidatingWebhookConfiguration whose caBundle the operator sets at start")
    op.add_argument("--host-paths", action="store_true", help="as for apply: each API under its own host on the endpoint (mockgcp)")
    op.add_argument("--metrics-bind", default="127.0.0.1", metavar="ADDRESS", help="address of /healthz, /readyz and /metrics (default 127.0.0.1; the bundle's pod: 0.0.0.0)")
    op.add_argument(
        "--leader-elect", choices=("true", "false"), default="true",
        help="where the server has coordination.k8s.io Leases, only the instance holding the installation's Lease reconciles (default true)",
    )
    op.add_argument("--lease-namespace", help="namespace of the Lease (default: the pod's namespace, else default)")
    op.add_argument("--log", choices=("debug", "info", "warning"), default="info", help="log level (default info)")
    sub.add_parser(
        "mockgcp", help="the local GCP emulator: hands over to the `mockgcp` command (`kccctl mockgcp serve --help`)", add_help=False
    )
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["mockgcp"]:
        return _mockgcp(argv[1:])
    args = p.parse_args(argv)
    if args.cmd in ("apply", "delete", "diff"):
        return _apply_or_delete(args)
    if args.cmd == "operator":
        return _operator(args)
    if args.cmd == "get":
        return _get(args)
    if args.cmd == "export":
        return _export(args)
    if args.cmd == "example":
        return _example(args)
    if args.cmd == "verify":
        return _verify(args)
    if args.cmd == "kinds":
        for kind in kind_index():
            print(f"{kind}\t{module_for(kind, '_types')}")
        return 0
    try:
        ident = identity_for(args.kind)
    except KeyError:
        print(f"error: {unknown_kind(args.kind, known_kinds())}", file=sys.stderr)
        return 2
    try:
        print(ident.normalize(args.value))
    except IdentityError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


def run() -> None:
    """Console entry point: a closed pipe (``| head``) is not an error; Ctrl-C is
    a one-line message and exit 130, not a traceback (each state file is written
    atomically, and a create in flight left its create-pending intent)."""
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    except KeyboardInterrupt:
        print("\ninterrupted: objects already reconciled keep their state; run the command again to go on", file=sys.stderr)
        code = 130
    sys.exit(code)


if __name__ == "__main__":
    run()
