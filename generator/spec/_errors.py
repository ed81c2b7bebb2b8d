"""Shared helpers for spec loading: readable errors with JSON paths."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from kccgen.discovery.errors import SpecError


def read_yaml(path: Path, file: str) -> Any:
    """Parse a YAML spec file; unreadable or malformed input is a SpecError."""
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise SpecError(file, "", f"cannot read: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise SpecError(file, "", f"invalid YAML: {e}".replace("\n", " ")) from None
