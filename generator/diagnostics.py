"""Warnings that point at a file and a JSON path (errors: kccgen.discovery.errors).

Every problem the generator finds in its inputs is reported as
``<file>: <doc>#/<json/path>: <message>`` so a maintainer can jump to it; the
CLI turns a :class:`SpecError` into a one-line message and exit code 2.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True, order=True)
class Diagnostic:
    """A non-fatal finding (unsupported construct, cross-check disagreement)."""

    location: str  # e.g. "pubsub.v1#/schemas/Topic/properties/foo"
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.location}: [{self.code}] {self.message}"


@dataclass
class Reporter:
    """Collects diagnostics; sorted on output so runs are comparable."""

    items: list[Diagnostic] = field(default_factory=list)

    def warn(self, location: str, code: str, message: str) -> None:
        self.items.append(Diagnostic(location, code, message))

    def extend(self, diags: Iterable[Diagnostic]) -> None:
        self.items.extend(diags)

    def sorted(self) -> list[Diagnostic]:
        return sorted(set(self.items))
