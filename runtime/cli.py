"""``kccctl``: operate on generated Kinds locally.

``kccctl ref normalize KIND VALUE`` answers "what do I put in external?":
it prints the canonical externalRef for any accepted spelling, or exits 2
naming the Kind, the value and the expected format.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from kccgen.runtime.identity import IdentityError, identity_for, known_kinds
from kccgen.runtime.registry import kind_index, module_for, types_modules, unknown_kind


def _apply_or_delete(args: argparse.Namespace) -> int:
    from kccgen.runtime.gcp import Gcp
    from kccgen.runtime.local import (
        ManifestError,
        StateDir,
        StateLocked,
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
    try:
        objs = load_manifests(args.filename, args.namespace)
    except ManifestError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.endpoint is None:
        problem = _credentials_problem()
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            return 2
    run = apply if args.cmd == "apply" else delete
    state = StateDir(args.state)
    try:
        with state.lock(wait=not args.no_wait, notify=lambda msg: print(msg, file=sys.stderr)):
            results = run(objs, state, Gcp(args.endpoint, host_paths=args.host_paths), args.project, args.namespace)
    except (ManifestError, StateLocked) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for msg in state.problems:
        print(f"warning: {msg}", file=sys.stderr)
    rows = [r for r, _ in results]
    print(table(rows, "READY" if args.cmd == "apply" else "DELETED"))
    return 0 if all(r.ready for r in rows) else 1


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


def _get(args: argparse.Namespace) -> int:
    import yaml

    from kccgen.runtime.local import StateDir

    state = StateDir(args.state)
    objs = [o for o in state.load() if o.get("kind") == args.kind and (args.name is None or o["metadata"]["name"] == args.name)]
    for msg in state.problems:
        print(f"warning: {msg}", file=sys.stderr)
    if args.name and not objs:
        print(f"error: {args.kind} {args.name} not found in {args.state}", file=sys.stderr)
        return 1
    if args.output == "yaml":
        print(yaml.safe_dump_all(objs, sort_keys=True), end="")
        return 0
    for o in objs:
        st = o.get("status") or {}
        ready: dict[str, str] = next((c for c in st.get("conditions") or [] if c.get("type") == "Ready"), {})
        print(f"{o['kind']}\t{o['metadata']['name']}\t{ready.get('status', 'Unknown')}\t{ready.get('reason', '')}\t{st.get('externalRef', '')}")
    return 0


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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="kccctl", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("kinds", help="list the Kinds this installation can reconcile")
    rp = sub.add_parser("ref", help="reference tools")
    rsub = rp.add_subparsers(dest="ref_cmd", required=True)
    np_ = rsub.add_parser("normalize", help="print the canonical externalRef of VALUE for KIND")
    np_.add_argument("kind")
    np_.add_argument("value")
    for verb, help_ in (("apply", "reconcile manifests (references first)"), ("delete", "delete in reverse dependency order")):
        ap = sub.add_parser(verb, help=help_)
        ap.add_argument("-f", "--filename", action="append", type=Path, required=True, help="file or directory (repeatable)")
        ap.add_argument("--state", type=Path, default=Path(".kccctl-state"), help="state directory (default .kccctl-state)")
        ap.add_argument("--endpoint", help="GCP endpoint override, e.g. a mockgcp URL (default: real GCP with ADC)")
        ap.add_argument("--project", help="default project (the namespace's cnrm.cloud.google.com/project-id)")
        ap.add_argument("--namespace", default="default")
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
    gp = sub.add_parser("get", help="read objects from the state directory")
    gp.add_argument("kind")
    gp.add_argument("name", nargs="?")
    gp.add_argument("-o", "--output", choices=("table", "yaml"), default="table")
    gp.add_argument("--state", type=Path, default=Path(".kccctl-state"))
    sub.add_parser(
        "mockgcp", help="the local GCP emulator: hands over to the `mockgcp` command (`kccctl mockgcp serve --help`)", add_help=False
    )
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["mockgcp"]:
        return _mockgcp(argv[1:])
    args = p.parse_args(argv)
    if args.cmd in ("apply", "delete"):
        return _apply_or_delete(args)
    if args.cmd == "get":
        return _get(args)
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
