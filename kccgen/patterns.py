"""Which Kinds a pattern selects: one rule for the install bundle and the operator.

Like Azure Service Operator's ``--crd-pattern``, a pattern is a list of globs
separated by ``,`` or ``;``. Each glob is matched, case-insensitively, against
a Kind's service (``pubsub``), its group (``pubsub.cnrm.cloud.google.com``),
``group/Kind`` (``pubsub.cnrm.cloud.google.com/PubSubTopic``) and the Kind
itself (``PubSubTopic``). ``*`` (or an empty pattern) selects everything. A
glob prefixed with ``!`` removes what it matches. So ``pubsub;storage`` is two
services, ``*/Compute*`` every Compute Kind, ``monitoring;!*Snooze`` the
monitoring service without its snoozes.

Dependency-free: the generator and the runtime both import it.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable

GROUP_SUFFIX = ".cnrm.cloud.google.com"


def globs(pattern: str | Iterable[str] | None) -> list[str]:
    """The pattern's globs, in order; ``None`` or empty: everything."""
    if pattern is None:
        return ["*"]
    parts = [pattern] if isinstance(pattern, str) else list(pattern)
    out = [g.strip() for p in parts for g in re.split(r"[,;]", p) if g.strip()]
    return out or ["*"]


def problem(pattern: str | Iterable[str] | None) -> str | None:
    """Why the pattern is malformed (a glob with ``/`` on both sides, a lone ``!``), or None."""
    for g in globs(pattern):
        body = g.removeprefix("!")
        if not body:
            return f"empty glob {g!r} in pattern"
        if body.count("/") > 1:
            return f"glob {g!r} has more than one '/': write GROUP/KIND"
    return None


def _names(kind: str, group: str) -> tuple[str, ...]:
    service = group.removesuffix(GROUP_SUFFIX)
    return (service.lower(), group.lower(), f"{group}/{kind}".lower(), kind.lower())


def selects(pattern: str | Iterable[str] | None, kind: str, group: str) -> bool:
    """Whether the pattern selects ``kind`` of ``group``: some positive glob
    matches it and no ``!`` glob after that does (the last word wins)."""
    chosen = False
    names = _names(kind, group)
    gs = globs(pattern)
    if all(g.startswith("!") for g in gs):
        chosen = True  # only exclusions: from everything
    for g in gs:
        negative = g.startswith("!")
        body = g.removeprefix("!").lower()
        if any(fnmatch.fnmatchcase(n, body) for n in names):
            chosen = not negative
    return chosen


def select(pattern: str | Iterable[str] | None, kinds: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The (Kind, group) pairs the pattern selects, in the order given."""
    return [(k, g) for k, g in kinds if selects(pattern, k, g)]
