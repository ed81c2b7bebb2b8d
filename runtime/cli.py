"""``kccctl``: operate on generated Kinds locally.

``kccctl ref normalize KIND VALUE`` answers "what do I put in external?":
it prints the canonical externalRef for any accepted spelling, or exits 2
naming the Kind, the value and the expected format.
"""

from __future__ import annotations

import argparse
import os
import sys

from runtime.identity import IdentityError, identity_for, known_kinds
from runtime.registry import types_modules


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="kccctl", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("kinds", help="list the Kinds this installation can reconcile")
    rp = sub.add_parser("ref", help="reference tools")
    rsub = rp.add_subparsers(dest="ref_cmd", required=True)
    np_ = rsub.add_parser("normalize", help="print the canonical externalRef of VALUE for KIND")
    np_.add_argument("kind")
    np_.add_argument("value")
    mp = sub.add_parser("mockgcp", help="the local GCP emulator")
    msub = mp.add_subparsers(dest="mock_cmd", required=True)
    sp = msub.add_parser("serve", help="serve every pinned API on one port until Ctrl-C")
    # mockgcp is a dev/test tool: imported only when asked for.
    from mockgcp.cli import add_arguments

    add_arguments(sp)
    args = p.parse_args(argv)
    if args.cmd == "mockgcp":
        from mockgcp.cli import serve

        return serve(args)
    if args.cmd == "kinds":
        for kind, module in types_modules().items():
            print(f"{kind}\t{module.__name__}")
        return 0
    try:
        ident = identity_for(args.kind)
    except KeyError:
        print(f"error: unknown Kind {args.kind!r}; known: {', '.join(known_kinds())}", file=sys.stderr)
        return 2
    try:
        print(ident.normalize(args.value))
    except IdentityError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


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
