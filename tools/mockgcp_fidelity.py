"""Replay Config Connector's recorded GCP traffic against mockgcp: docs/mockgcp-fidelity.md.

For every ``_http.log`` under ``<kcc>/fixtures`` that belongs to one of our
Kinds (the fixture directory names the Kind), the HTTP exchanges are replayed
in order against a fresh ``MockGCP(lro_polls=1)``:

* gRPC entries are skipped (counted); so are requests to hosts mockgcp does not
  serve (counted per host as "not served: <host>"). Hosts are matched against
  the pinned Discovery documents' ``rootUrl``.
* Placeholders are filled consistently (``FIXED``: ``${projectId}`` ->
  ``example-project``, ``${uniqueId}`` -> ``abc123``, ``${projectNumber}`` ->
  ``123456789012``). A placeholder the client chose (``${networkID}`` in a
  compute insert body) gets a fixed value of its own (``network-abc123``)
  the first time it is needed.
* Values the *service* generates are mapped: when the recorded response's
  top-level ``name`` holds a placeholder the recorded request did not
  (an operation's ``${operationID}``, monitoring's numeric
  ``${notificationChannelID}``), the recorded name is matched against the
  mock's name for the same exchange and the placeholder is bound to what the
  mock generated. Later requests use that binding: an operation poll goes to
  the operation the mock returned for the latest earlier request that
  started one. When several live bindings exist (three notification
  channels recorded under one placeholder), a GET picks the one whose mock
  resource agrees best with the recorded response (status, then equal
  top-level values), and the following PATCH/DELETE of the same URL uses the
  same pick; a successful DELETE retires it.

Each replayed exchange is compared on (a) the status code and (b) the set of
top-level response fields. Every mismatch gets one or more reasons from
``explain_reasons()``: rules over the request, the recorded and the mock
response, the earlier exchanges of the log and the Discovery documents
(custom method not implemented, a field the recording has and the mock does
not fill and why: output-only, input-only, unknown to the pinned schema...;
eventual consistency in the recording; a request that follows a create the
mock refused), plus two small tables of field facts the documents cannot
tell (``RECORDED_ONLY``, ``MOCK_ONLY``). A reason's cause is a *mock gap*
(mockgcp behaves unlike the recorded API) or a *recording artefact* (a fact
of the recorded run no emulator should reproduce). A mismatch no rule
explains is listed as ``UNEXPLAINED`` (tests/test_mockgcp_fidelity.py fails
on one).

The pieces: tools/mockgcp_fidelity_replay.py (logs, placeholders and
bindings, the replay), tools/mockgcp_fidelity_explain.py (the reasons and
their tables), tools/mockgcp_fidelity_report.py (totals and the markdown),
tools/mockgcp_fidelity_model.py (the data they pass); this module is the
command and re-exports what the tests use.

``python -m tools.mockgcp_fidelity`` (from the repo root) writes
docs/mockgcp-fidelity.md; ``--check`` only compares. The document holds only
recorded facts, statuses and field names, never values the mock generates,
so it is stable across runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from tools.mockgcp_fidelity_model import (
    FIXED,
    MOCK,
    RECORDING,
    UNEXPLAINED,
    Exchange,
    LogResult,
    Reason,
)
from tools.mockgcp_fidelity_replay import (
    DEFAULT_KCC,
    REPO,
    Bindings,
    Replay,
    kind_of,
    logs_by_kind,
    our_kinds,
    replay_all,
)
from tools.mockgcp_fidelity_report import (
    TARGET,
    categories,
    mismatches,
    pct,
    render_markdown,
    status_by_cause,
    totals,
)
from tools.reports import write_or_check

DOC_PATH = Path("docs") / "mockgcp-fidelity.md"

__all__ = [
    "DEFAULT_KCC", "DOC_PATH", "FIXED", "MOCK", "RECORDING", "REPO", "TARGET", "UNEXPLAINED", "Bindings", "Exchange",
    "LogResult", "Reason", "Replay", "categories", "kind_of", "logs_by_kind", "mismatches", "our_kinds", "render_markdown",
    "replay_all", "status_by_cause", "totals",
]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.mockgcp_fidelity", description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--kcc", type=Path, default=DEFAULT_KCC, help="KCC compat dir (with fixtures/)")
    ap.add_argument("--check", action="store_true", help=f"exit 1 if {DOC_PATH} is stale")
    args = ap.parse_args(argv)
    if not (args.kcc / "fixtures").is_dir():
        print(f"no fixtures at {args.kcc / 'fixtures'}", file=sys.stderr)
        return 2
    results = replay_all(args.kcc)
    text = render_markdown(results)
    code = write_or_check(REPO / DOC_PATH, text, args.check, "python -m tools.mockgcp_fidelity")
    if args.check:
        return code
    t = totals(results)
    print(f"wrote {DOC_PATH}: {t.exchanges} exchanges, status match {pct(t.status_ok, t.exchanges)}, fields match {pct(t.fields_ok, t.exchanges)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
