"""Errors and warnings that point at a file and a JSON path.

Every problem the generator finds in its inputs is reported as
``<file>: <doc>#/<json/path>: <message>`` so a maintainer can jump to it; the
CLI turns a :class:`SpecError` into a one-line message and exit code 2.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field


def json_path(*parts: object) -> str:
    """Join path parts as a JSON pointer (``/schemas/Topic/properties/foo``)."""
    out = []
    for p in parts:
        s = str(p).replace("~", "~0").replace("/", "~1")
        out.append(s)
    return "/" + "/".join(out) if out else ""


class SpecError(Exception):
    """An input that cannot be used: names the file and the JSON path."""

    def __init__(self, file: str, path: str, message: str) -> None:
        self.file = file
        self.path = path
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.file}#{self.path}" if self.path else self.file
        return f"{where}: {self.message}"


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
