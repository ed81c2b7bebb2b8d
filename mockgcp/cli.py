"""``mockgcp serve`` (also ``kccctl mockgcp serve``): run the emulator until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import NoReturn

from kccgen.mockgcp.engine import MockGCP
from kccgen.mockgcp.faults import FaultSet
from kccgen.mockgcp.server import MockServer


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad argument in one line (``mockgcp serve: error:
    ...``, exit 2) rather than the usage block and the message."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(2)


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port: 0 to 65535 (0: any free port)")
    return port


def _count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"{n} is negative")
    return n


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--port", type=_port, default=8089, help="port on 127.0.0.1 (0: any free port)")
    p.add_argument("--faults", type=Path, help="fault rules, JSON or YAML list (see mockgcp/faults.py); change them while it runs at /_mockgcp/faults")
    p.add_argument("--log", type=Path, help="append every exchange to this file (_http.log format)")
    p.add_argument("--state", type=Path, help="load state from this JSON file, and dump it there on exit")
    p.add_argument("--lro-polls", type=_count, default=1, help="polls before an operation is done (0: at once)")
    p.add_argument("--seed", type=int, default=0, help="seed for generated IDs and fault probabilities")


def serve(args: argparse.Namespace, p: argparse.ArgumentParser) -> int:
    """Everything a flag names is checked before the port is taken: a bad
    flag is one line from ``p.error`` (exit 2), never a traceback."""
    engine = MockGCP(lro_polls=args.lro_polls, seed=args.seed)
    if args.faults:
        try:
            engine.faults = FaultSet.from_file(args.faults, args.seed)
        except OSError as e:
            p.error(f"argument --faults: cannot read {args.faults}: {e.strerror}")
        except ValueError as e:
            p.error(f"argument --faults: {e}")
    if args.state and args.state.exists():
        try:
            engine.load(json.loads(args.state.read_text()))
        except (OSError, ValueError, KeyError) as e:
            p.error(f"argument --state: {args.state}: cannot load state: {e}")
    if args.log:
        try:
            with args.log.open("a", encoding="utf-8"):
                pass
        except OSError as e:
            p.error(f"argument --log: cannot append to {args.log}: {e.strerror}")
    try:
        server = MockServer(engine, port=args.port)
    except OSError as e:
        p.error(f"argument --port: cannot listen on 127.0.0.1:{args.port}: {e.strerror}")
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
        try:
            args.state.write_text(json.dumps(engine.dump(), indent=2, sort_keys=True))
        except OSError as e:
            print(f"{p.prog}: error: cannot write state to {args.state}: {e.strerror}", file=sys.stderr)
            return 1
    print("mockgcp stopped", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = _Parser(prog="mockgcp", description="A local GCP REST emulator derived from the pinned Discovery documents.")
    sub = p.add_subparsers(dest="cmd", required=True)
    sp = sub.add_parser("serve", help="serve every pinned API on one port until Ctrl-C or SIGTERM")
    add_arguments(sp)
    args = p.parse_args(argv)
    return serve(args, sp)


def run() -> None:
    """Console entry point (``mockgcp``); a closed pipe is not an error."""
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    sys.exit(code)
