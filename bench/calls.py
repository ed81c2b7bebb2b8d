"""How many GCP requests each reconcile makes, against the least it could make.

Every scenario runs the real ``kccgen.runtime.reconciler.Reconciler`` through
``kccgen.runtime.gcp.Gcp`` against mockgcp served in-process (``MockServer`` on
127.0.0.1, a fresh state per row), and counts the requests in mockgcp's request
log. Set-up (dependencies, the resource to acquire) runs before the log is
cleared, so only the measured reconcile is counted.

    .venv/bin/python bench/calls.py           # rewrites bench/calls.md
    .venv/bin/python bench/calls.py --check   # exits 1 when bench/calls.md is stale

The output is deterministic: mockgcp is seeded, operation names and generated
numbers are replaced by placeholders (``kccgen.mockgcp.normalize.call_sequence``),
and nothing depends on time. ``tests/test_calls_table.py`` recomputes the
up-to-date and verify-only rows live.

This is the command; the parts are beside it: ``calls_cases.yaml`` (one
realistic object per generated Kind, read by ``calls_cases.py``; ``CASES`` is
shared with ``bench/run.py``), ``calls_harness.py`` (mockgcp and the
reconciler), ``calls_scenarios.py``, ``calls_minimum.py`` (the least each
scenario could do, and why a row does more) and ``calls_render.py``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script: mockgcp is not an installed package
    sys.path.insert(0, str(REPO))

from bench.calls_cases import CASES, Case, set_path, validate_cases  # noqa: E402
from bench.calls_harness import harness, mock_server  # noqa: E402
from bench.calls_render import render  # noqa: E402
from bench.calls_scenarios import run_all  # noqa: E402
from tools.reports import write_or_check  # noqa: E402

# What bench/run.py takes from here.
__all__ = ["CASES", "Case", "harness", "main", "mock_server", "set_path"]

OUT = REPO / "bench" / "calls.md"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--check", action="store_true", help="exit 1 if bench/calls.md differs from a fresh run"
    )
    p.add_argument("--output", type=Path, default=OUT)
    args = p.parse_args(argv)
    validate_cases(CASES)
    text = render(run_all())
    code = write_or_check(args.output, text, args.check, ".venv/bin/python bench/calls.py")
    if args.check:
        if code == 0:
            print(f"{args.output} is current")
        return code
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
