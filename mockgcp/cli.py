"""``mockgcp serve`` (also ``kccctl mockgcp serve``): run the emulator until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from pathlib import Path

from kccgen.mockgcp.engine import MockGCP
from kccgen.mockgcp.faults import FaultSet
from kccgen.mockgcp.server import MockServer


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--port", type=int, default=8089, help="port on 127.0.0.1 (0: any free port)")
    p.add_argument("--faults", type=Path, help="fault rules, JSON or YAML list (see mockgcp/faults.py)")
    p.add_argument("--log", type=Path, help="append every exchange to this file (_http.log format)")
    p.add_argument("--state", type=Path, help="load state from this JSON file, and dump it there on exit")
    p.add_argument("--lro-polls", type=int, default=1, help="polls before an operation is done (0: at once)")
    p.add_argument("--seed", type=int, default=0, help="seed for generated IDs and fault probabilities")


def serve(args: argparse.Namespace) -> int:
    engine = MockGCP(lro_polls=args.lro_polls, seed=args.seed)
    if args.faults:
        try:
            engine.faults = FaultSet.from_file(args.faults, args.seed)
        except (OSError, ValueError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    if args.state and args.state.exists():
        try:
            engine.load(json.loads(args.state.read_text()))
        except (OSError, ValueError, KeyError) as e:
            print(f"error: {args.state}: cannot load state: {e}", file=sys.stderr)
            return 2
    try:
        server = MockServer(engine, port=args.port)
    except OSError as e:
        print(f"error: cannot listen on 127.0.0.1:{args.port}: {e.strerror}", file=sys.stderr)
        return 2
    if args.log:
        server.write_log_to(args.log)
    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    server.start()
    print(f"mockgcp listening on {server.base_url}", flush=True)
    for key in engine.catalog.vendored:
        print(f"  {key:22} api_endpoint={server.endpoint(key)}", flush=True)
    others = len(engine.apis) - len(engine.catalog.vendored)
    print(f"  and {others} more pinned APIs, each at {server.base_url}<its host>/<its servicePath>", flush=True)
    stop.wait()
    server.stop()
    if args.state:
        args.state.write_text(json.dumps(engine.dump(), indent=2, sort_keys=True))
    print("mockgcp stopped", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="mockgcp", description="A local GCP REST emulator derived from the pinned Discovery documents.")
    sub = p.add_subparsers(dest="cmd", required=True)
    add_arguments(sub.add_parser("serve", help="serve every pinned API on one port until Ctrl-C or SIGTERM"))
    args = p.parse_args(argv)
    return serve(args)


def run() -> None:
    """Console entry point (``mockgcp``); a closed pipe is not an error."""
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    sys.exit(code)
