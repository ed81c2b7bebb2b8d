"""Shared helpers for spec loading: readable errors with JSON paths."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from kccgen.generator.diagnostics import SpecError, json_path


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


def read_yaml(path: Path, file: str) -> Any:
    """Parse a YAML spec file; unreadable or malformed input is a SpecError."""
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise SpecError(file, "", f"cannot read: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise SpecError(file, "", f"invalid YAML: {e}".replace("\n", " ")) from None
