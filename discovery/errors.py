"""Input errors that point at a file and a JSON path.

Every layer that reads a Discovery document or a spec file reports a problem
as ``<file>#/<json/path>: <message>`` so a maintainer can jump to it; the
commands turn a :class:`SpecError` into one line and exit code 2.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from pydantic import ValidationError


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


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` when a close match exists, else ``""``."""
    close = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def from_validation_error(file: str, err: ValidationError, prefix: tuple[object, ...] = ()) -> SpecError:
    """Report the first validation error with its JSON path."""
    first = err.errors(include_url=False)[0]
    loc = tuple(p for p in first["loc"] if not (isinstance(p, str) and p.startswith("function-")))
    msg = first["msg"]
    if first["type"] == "extra_forbidden" and loc:
        key = str(loc[-1])
        ctx_model = first.get("ctx", {}) or {}
        allowed = ctx_model.get("allowed", ())
        msg = f"unknown key {key!r}{did_you_mean(key, allowed)}"
    return SpecError(file, json_path(*prefix, *loc), msg)
