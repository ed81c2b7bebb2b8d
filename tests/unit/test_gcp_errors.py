"""GCP errors read as messages, not as the client library's exception reprs."""

from __future__ import annotations

import httplib2
from googleapiclient.errors import HttpError

from kccgen.runtime.gcp import AlreadyExists, Transient, _from_http_error


def _error(status: int, content: bytes, reason: str = "") -> HttpError:
    resp = httplib2.Response({"status": str(status)})
    resp.reason = reason
    return HttpError(resp, content, uri="https://example.googleapis.com/v1/x")


def test_a_json_error_body_gives_code_status_and_message() -> None:
    e = _from_http_error(_error(409, b'{"error": {"code": 409, "message": "Resource already exists", "status": "ALREADY_EXISTS"}}'))
    assert isinstance(e, AlreadyExists)
    assert str(e) == "409 ALREADY_EXISTS: Resource already exists"


def test_a_body_that_is_not_json_gives_the_http_reason_not_a_repr() -> None:
    e = _from_http_error(_error(409, b"<html>conflict</html>", "Conflict"))
    assert str(e) == "409: Conflict" and "HttpError" not in str(e)
    t = _from_http_error(_error(503, b"", ""))
    assert isinstance(t, Transient) and str(t) == "503: Service Unavailable"
