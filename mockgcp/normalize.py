"""Make request logs stable for golden comparisons.

Generated IDs, timestamps, etags/fingerprints and operation names differ on
every run; they are replaced by placeholders in the style of Config
Connector's recordings (``${operationID}``, ``2024-04-01T12:34:56.123456Z``).
Replacement is consistent within a log: the same generated value gets the
same placeholder everywhere, so call sequences stay comparable.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from kccgen.mockgcp.httplog import HttpLogEntry, format_http_log

_RULES: list[tuple[str, re.Pattern[str]]] = [
    ("operation", re.compile(r"operation-\d{10,}-[a-z0-9_-]+-[a-z0-9_-]+-[a-z0-9_-]+")),
    ("timestamp", re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})")),
    ("number", re.compile(r"(?<![\w.])\d{12,20}(?![\w.])")),
]
_KEYED = re.compile(r'"(etag|fingerprint|generation)": "([^"]+)"')
_LRO_NAME = re.compile(r"(/operations/)([a-z0-9_-]{8,})")


def _sub_match(sub: Callable[[str, str], str], kind: str, m: re.Match[str]) -> str:
    return sub(kind, m.group(0))


def normalize_text(text: str) -> str:
    """Replace run-specific values with stable placeholders."""
    seen: dict[str, str] = {}

    def sub(kind: str, value: str) -> str:
        key = f"{kind}:{value}"
        if key not in seen:
            n = sum(1 for k in seen if k.startswith(kind + ":")) + 1
            seen[key] = "2024-04-01T12:34:56.123456Z" if kind == "timestamp" else f"${{{kind}{n}}}"
        return seen[key]

    text = _KEYED.sub(lambda m: f'"{m.group(1)}": "{sub(m.group(1), m.group(2))}"', text)
    # Full compute operation names first, so a name and the path holding it
    # get the same placeholder; then other operation IDs in paths.
    text = _RULES[0][1].sub(lambda m: sub("operation", m.group(0)), text)
    text = _LRO_NAME.sub(lambda m: m.group(1) + sub("operation", m.group(2)), text)
    for kind, rx in _RULES[1:]:
        text = rx.sub(functools.partial(_sub_match, sub, kind), text)
    return text


def normalize_log(entries: list[HttpLogEntry]) -> str:
    return normalize_text(format_http_log(entries))


def call_sequence(entries: list[HttpLogEntry]) -> list[str]:
    """``METHOD path -> status`` per exchange, query and host dropped: what tests assert."""
    out = []
    for e in entries:
        path = re.sub(r"^https?://[^/]+", "", e.url).split("?", 1)[0]
        out.append(f"{e.method} {normalize_text(path)} -> {e.status_code}")
    return out
