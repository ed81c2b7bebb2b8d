"""The least each scenario could do, the outcome it must end with, and why a row does more.

A rule and its justification stand together here: ``measured`` gives a row the
minimum of its scenario, ``RULES`` is the table calls.md prints for it, and
``explain`` names what each call beyond the minimum is (operation polls, the
GET after a compute or dns create); anything else is flagged ``unexplained``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from kccgen.contract import CreateServiceAssigned
from kccgen.runtime.adapter import adapter_for

WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})

# Scenario, minimum, why: the "Minimum possible" table of calls.md.
RULES: tuple[tuple[str, str, str], ...] = (
    (
        "create",
        "GET 1 + the create write 1 (service-generated IDs: the write only)",
        "the GET tells absent from present; a service-generated ID has nothing to GET",
    ),
    ("up-to-date", "GET 1", "one read to compare; no write"),
    (
        "update",
        "GET 1 + the update write 1",
        "one read to diff, one write carrying only the changes",
    ),
    (
        "up-to-date after update",
        "GET 1",
        "the update reached GCP: the next reconcile writes nothing",
    ),
    ("acquire", "GET 1", "the resource matches the spec: read, adopt, no write"),
    (
        "force-acquire (absent, equal, differs)",
        "GET 1, 0 writes",
        "verify-only: never creates, updates or deletes",
    ),
    ("delete", "DELETE 1", "status.externalRef names the resource: no GET needed"),
)
READ_ONLY = frozenset(
    {
        "up-to-date",
        "up-to-date after update",
        "acquire",
        "force-acquire (absent)",
        "force-acquire (equal)",
        "force-acquire (differs)",
    }
)
EXPECTED_REASON = {
    "create": "UpToDate",
    "up-to-date": "UpToDate",
    "acquire": "UpToDate",
    "force-acquire (absent)": "ResourceNotFound",
    "force-acquire (equal)": "UpToDate",
    "force-acquire (differs)": "DriftDetected",
    "delete": "Deleted",
}


@dataclass(frozen=True)
class Row:
    """One measured reconcile, with the minimum it is compared against."""

    scenario: str
    kind: str
    reason: str  # the Ready condition's reason after the measured reconcile
    calls: tuple[str, ...]  # "METHOD path -> status", normalized
    minimum: tuple[tuple[str, int], ...]  # (HTTP method, count), sorted
    note: str = ""  # why the minimum differs by Kind (shown with the explanation)

    @property
    def made(self) -> Counter[str]:
        return Counter(c.split(" ", 1)[0] for c in self.calls)

    @property
    def writes(self) -> int:
        return sum(n for m, n in self.made.items() if m in WRITES)

    @property
    def equal(self) -> bool:
        return dict(self.made) == dict(self.minimum)


def _min(**counts: int) -> tuple[tuple[str, int], ...]:
    return tuple(sorted((m, n) for m, n in counts.items() if n))


def _write_method(calls: list[str], default: str) -> str:
    return next((c.split(" ", 1)[0] for c in calls if c.split(" ", 1)[0] in WRITES), default)


def measured(scenario: str, kind: str, reason: str, calls: list[str]) -> Row:
    """The row of a measured reconcile, with the minimum of ``RULES`` for its scenario."""
    if scenario == "create":
        if isinstance(adapter_for(kind).create, CreateServiceAssigned):
            note = "service-generated ID: nothing to GET before the create"
            return Row(scenario, kind, reason, tuple(calls), _min(POST=1), note)
        minimum = _min(GET=1, **{_write_method(calls, "POST"): 1})
    elif scenario.startswith("update "):
        minimum = _min(GET=1, **{_write_method(calls, "PATCH"): 1})
    elif scenario == "delete":
        minimum = _min(DELETE=1)
    elif scenario in READ_ONLY:
        minimum = _min(GET=1)
    else:
        raise ValueError(f"no minimum for the scenario {scenario!r}")
    return Row(scenario, kind, reason, tuple(calls), minimum)


def _is_poll(call: str) -> bool:
    return call.startswith("GET ") and "/operations/" in call


def explain(row: Row) -> str:
    """Why the calls made differ from the minimum, from what each extra call is."""
    parts: list[str] = []
    if row.note:
        parts.append(row.note)
    expected = EXPECTED_REASON.get(row.scenario, "UpToDate")
    if row.reason != expected:
        parts.append(f"**outcome {row.reason}, expected {expected}**")
    if row.equal:
        return "; ".join(parts)
    a = adapter_for(row.kind)
    polls = [c for c in row.calls if _is_poll(c)]
    rest = [c for c in row.calls if not _is_poll(c)]
    shape = {"create": a.create, "delete": a.delete}.get(
        row.scenario, a.update if row.scenario.startswith("update") else None
    )
    call = getattr(shape, "call", None)  # NoCreate / NoUpdate / NoDelete have none
    style = call.lro if call is not None else "none"
    if polls:
        what = {
            "google.longrunning": "a google.longrunning Operation (its `response` carries the resource)",
            "compute": "a compute Operation",
            "dns": "a dns#operation",
        }.get(style, "an operation")
        parts.append(
            f"+{len(polls)} operation poll(s): the API answers with {what}, polled until `done` "
            "(the number of polls is mockgcp's lro_polls here; on real GCP, however long the operation takes) "
            "- required to report the outcome"
        )
    extra = Counter(c.split(" ", 1)[0] for c in rest) - Counter(dict(row.minimum))
    missing = Counter(dict(row.minimum)) - Counter(c.split(" ", 1)[0] for c in rest)
    if (
        extra.get("GET")
        and row.scenario == "create"
        and style in ("compute", "dns")
        and rest
        and rest[-1].startswith("GET ")
    ):
        parts.append(
            f"+1 GET after the operation: a {style} operation carries no resource (only its targetLink), "
            "so status.observedState needs a GET - required unless observedState is left empty"
        )
        extra["GET"] -= 1
    leftover = +extra
    if leftover or +missing:
        detail = ", ".join(f"{n} more {m}" for m, n in sorted(leftover.items()))
        detail += (", " if detail and +missing else "") + ", ".join(
            f"{n} fewer {m}" for m, n in sorted((+missing).items())
        )
        parts.append(f"**unexplained: {detail}**")
    return "; ".join(parts)
