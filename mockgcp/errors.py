"""Google JSON error bodies, as the real APIs send them."""

from __future__ import annotations

from typing import Any

_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ALREADY_EXISTS",
    412: "FAILED_PRECONDITION",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    503: "UNAVAILABLE",
}
# The v1-style "errors" list (compute, storage, dns) uses these reasons.
_REASON = {
    400: "invalid",
    404: "notFound",
    409: "alreadyExists",
    412: "conditionNotMet",
    429: "rateLimitExceeded",
    500: "backendError",
    501: "notImplemented",
    503: "backendError",
}


class ApiError(Exception):
    def __init__(self, code: int, message: str, status: str | None = None, details: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status or _STATUS.get(code, "UNKNOWN")
        self.details = details or []

    def body(self, legacy_errors: bool) -> dict[str, Any]:
        """The newer APIs' {code, message, status[, details]}; compute, storage and
        dns (``legacy_errors``) add the v1-style ``errors`` list."""
        err: dict[str, Any] = {"code": self.code, "message": self.message, "status": self.status}
        if legacy_errors:
            err["errors"] = [{"message": self.message, "domain": "global", "reason": _REASON.get(self.code, "error")}]
        elif self.details:
            err["details"] = self.details
        return {"error": err}


def not_found(what: str) -> ApiError:
    return ApiError(404, f"Resource not found (resource={what}).")


def already_exists(what: str) -> ApiError:
    return ApiError(409, f"Resource already exists in the project (resource={what}).")


def invalid(message: str) -> ApiError:
    return ApiError(400, message)


def precondition(message: str) -> ApiError:
    return ApiError(412, message)


def unknown_field(name: str, at: str) -> ApiError:
    """What Google's JSON transcoding answers for a field the request message
    does not define: ``Invalid JSON payload received. Unknown name "foo" at
    'topic': Cannot find field.`` (no ``at`` for a top-level field of the
    request message itself), with a google.rpc.BadRequest detail."""
    where = f" at '{at}'" if at else ""
    msg = f'Invalid JSON payload received. Unknown name "{name}"{where}: Cannot find field.'
    violation = {"field": at, "description": msg} if at else {"description": msg}
    return ApiError(400, msg, details=[{"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [violation]}])
