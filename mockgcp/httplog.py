"""Read (and write) the ``_http.log`` format of Config Connector's recorded GCP traffic.

A log is a sequence of entries separated by lines holding only ``---``
(written as a blank line, ``---``, a blank line). An HTTP entry is::

    METHOD URL
    Request-Header: value          (zero or more)
    <blank>
    request body                   (optional, followed by a blank line)
    200 OK
    Response-Header: value         (zero or more)
    <blank>
    response body                  (optional)

A gRPC entry (``GRPC /google.monitoring.v3.AlertPolicyService/GetAlertPolicy``)
has no headers and a gRPC status code name instead of an HTTP status line::

    GRPC /package.Service/Method
    <blank>
    request body
    <blank>
    OK
    <blank>
    response body

Bodies are kept verbatim (``request_body`` / ``response_body``) and, when they
parse as JSON, also decoded (``request_json`` / ``response_json``); a body that
is absent or not JSON decodes to ``None``. Bodies may not contain blank lines
(pretty-printed JSON never does) nor a line holding only ``---``.

``format_http_log`` writes entries back in the same layout, so an emulator can
produce logs that ``parse_http_log`` (and a plain diff) can compare with the
recordings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "GRPC_CODES",
    "HttpLogEntry",
    "HttpLogError",
    "format_http_log",
    "parse_http_log",
    "read_http_log",
]

Headers = tuple[tuple[str, str], ...]

_SEPARATOR = re.compile(r"(?m)^---$")
_HTTP_STATUS = re.compile(r"^(\d{3})(?: .*)?$")
_HEADER = re.compile(r"^([!#$%&'*+.^_`|~0-9A-Za-z-]+): ?(.*)$")

#: gRPC status code names as Go's ``codes.Code.String()`` writes them.
GRPC_CODES: frozenset[str] = frozenset(
    {
        "OK",
        "Canceled",
        "Unknown",
        "InvalidArgument",
        "DeadlineExceeded",
        "NotFound",
        "AlreadyExists",
        "PermissionDenied",
        "ResourceExhausted",
        "FailedPrecondition",
        "Aborted",
        "OutOfRange",
        "Unimplemented",
        "Internal",
        "Unavailable",
        "DataLoss",
        "Unauthenticated",
    }
)


class HttpLogError(ValueError):
    """A log that does not follow the format; names the source and entry."""


def _decode_json(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


@dataclass(frozen=True)
class HttpLogEntry:
    """One request/response exchange."""

    method: str  # "GET", "POST", ... or "GRPC"
    url: str  # full URL with query string, or "/package.Service/Method" for gRPC
    request_headers: Headers
    request_body: str | None
    status: str  # the whole status line: "200 OK", "204 No Content", gRPC "OK"
    response_headers: Headers
    response_body: str | None
    # Decoded bodies; derived from the text above, so not part of equality.
    request_json: Any = field(default=None, compare=False, repr=False)
    response_json: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "request_json", _decode_json(self.request_body))
        object.__setattr__(self, "response_json", _decode_json(self.response_body))

    @property
    def is_grpc(self) -> bool:
        return self.method == "GRPC"

    @property
    def status_code(self) -> int | None:
        """The HTTP status code; ``None`` for gRPC entries (see ``status``)."""
        m = _HTTP_STATUS.match(self.status)
        return int(m.group(1)) if m else None

    @property
    def ok(self) -> bool:
        """2xx for HTTP, ``OK`` for gRPC."""
        code = self.status_code
        if code is None:
            return self.status == "OK"
        return 200 <= code < 300

    def request_header(self, name: str) -> list[str]:
        """All values of a request header (names compare case-insensitively)."""
        return [v for k, v in self.request_headers if k.lower() == name.lower()]

    def response_header(self, name: str) -> list[str]:
        """All values of a response header (names compare case-insensitively)."""
        return [v for k, v in self.response_headers if k.lower() == name.lower()]


def _blocks(lines: list[str]) -> list[list[str]]:
    """Split lines into runs of non-blank lines."""
    out: list[list[str]] = []
    cur: list[str] = []
    for line in lines:
        if line == "":
            if cur:
                out.append(cur)
                cur = []
        else:
            cur.append(line)
    if cur:
        out.append(cur)
    return out


def _headers(lines: list[str], where: str) -> Headers:
    out: list[tuple[str, str]] = []
    for line in lines:
        m = _HEADER.match(line)
        if m is None:
            raise HttpLogError(f"{where}: expected a 'Name: value' header line, got {line!r}")
        out.append((m.group(1), m.group(2)))
    return tuple(out)


def _join(blocks: list[list[str]]) -> str | None:
    if not blocks:
        return None
    return "\n\n".join("\n".join(b) for b in blocks)


def _is_status(block: list[str], grpc: bool) -> bool:
    first = block[0]
    if grpc:
        return len(block) == 1 and (first in GRPC_CODES or first.split(":", 1)[0] in GRPC_CODES)
    return _HTTP_STATUS.match(first) is not None


def _parse_entry(chunk: str, where: str) -> HttpLogEntry:
    lines = chunk.split("\n")
    while lines and lines[0].strip() == "":
        lines.pop(0)
    while lines and lines[-1].strip() == "":
        lines.pop()
    request_line, *rest = lines
    method, sep, url = request_line.partition(" ")
    if not sep or not method.isupper() or not url:
        raise HttpLogError(f"{where}: expected 'METHOD URL', got {request_line!r}")
    grpc = method == "GRPC"

    # Request headers run up to the first blank line.
    try:
        blank = rest.index("")
    except ValueError:
        blank = len(rest)
    req_headers = _headers(rest[:blank], f"{where} (request headers)")
    blocks = _blocks(rest[blank:])

    status_at = next((i for i, b in enumerate(blocks) if _is_status(b, grpc)), None)
    if status_at is None:
        raise HttpLogError(f"{where}: {request_line!r} has no response status line")
    status_block = blocks[status_at]
    return HttpLogEntry(
        method=method,
        url=url,
        request_headers=req_headers,
        request_body=_join(blocks[:status_at]),
        status=status_block[0],
        response_headers=_headers(status_block[1:], f"{where} (response headers)"),
        response_body=_join(blocks[status_at + 1 :]),
    )


def parse_http_log(text: str, source: str = "<http log>") -> list[HttpLogEntry]:
    """Parse the whole text of an ``_http.log``; ``source`` names it in errors."""
    entries: list[HttpLogEntry] = []
    for i, chunk in enumerate(_SEPARATOR.split(text.replace("\r\n", "\n"))):
        if chunk.strip() == "":
            continue
        entries.append(_parse_entry(chunk, f"{source}: entry {i + 1}"))
    return entries


def read_http_log(path: Path) -> list[HttpLogEntry]:
    return parse_http_log(path.read_text(encoding="utf-8"), str(path))


def _format_entry(e: HttpLogEntry) -> str:
    out = [f"{e.method} {e.url}", *(f"{k}: {v}" for k, v in e.request_headers), ""]
    if e.request_body is not None:
        out += [e.request_body, ""]
    out += [e.status, *(f"{k}: {v}" for k, v in e.response_headers), ""]
    if e.response_body is not None:
        out.append(e.response_body)
    return "\n".join(out)


def format_http_log(entries: Iterable[HttpLogEntry]) -> str:
    """Write entries in the recorded layout (the inverse of ``parse_http_log``)."""
    return "\n\n---\n\n".join(_format_entry(e) for e in entries).rstrip("\n")
