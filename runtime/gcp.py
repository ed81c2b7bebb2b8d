"""GCP calls for the adapters: Discovery clients, retries, LROs, typed errors.

Clients are built from the pinned Discovery documents (specs/discovery), with
an endpoint override for mockgcp and emulators, or Application Default
Credentials for real GCP. Transient answers (429, 500, 502, 503, 504 and
dropped connections) are retried with jittered exponential backoff, bounded
and logged; everything else becomes a typed error.
"""

from __future__ import annotations

import json
import logging
import random
import re
import threading
import time
from collections.abc import Callable
from functools import reduce
from typing import Any, assert_never

from kccgen import data_dir
from kccgen.contract import (
    PROJECT_NUMBER,
    Adapter,
    Call,
    Lro,
    located_parent,
    template_value,
    uses_project_number,
)
from kccgen.documents import read_document
from kccgen.runtime.identity import loaded_identity, rehome

log = logging.getLogger("kccgen.gcp")
SPECS = data_dir("specs")
TRANSIENT = frozenset({429, 500, 502, 503, 504})


class GcpError(Exception):
    """A GCP answer that is not success; ``code`` is the HTTP status (0: no answer)."""

    def __init__(self, code: int, message: str, status: str = "") -> None:
        super().__init__(f"{code} {status}".strip() + f": {message}")  # "409 ALREADY_EXISTS: ...", "409: Conflict"
        self.code = code
        self.message = message
        self.status = status


class NotFound(GcpError):
    pass


class AlreadyExists(GcpError):
    pass


class InvalidArgument(GcpError):
    pass


class PermissionDenied(GcpError):
    pass


class FailedPrecondition(GcpError):
    pass


#: Answers that say the request was refused before any processing: 429 (quota)
#: and 503 (UNAVAILABLE: Google's AIP-194 retries it for every method).
UNPROCESSED = frozenset({429, 503})


class Transient(GcpError):
    """Still failing after every retry (429/5xx/connection).

    ``processed``: whether the service may have acted on the request (it was
    sent and the answer was lost, timed out, or was a 500/502/504). A refused
    connection, a name that does not resolve, 429 and 503 say it did not:
    a create that met them is simply not made, never of unknown outcome."""

    def __init__(self, code: int, message: str, status: str = "", processed: bool | None = None) -> None:
        super().__init__(code, message, status)
        self.processed = code not in UNPROCESSED if processed is None else processed


class NotSent(ConnectionError):
    """No connection was made (refused, unresolvable name): nothing reached the service."""


def lost_race(e: GcpError) -> bool:
    """A write refused because the resource changed since it was read (409,
    ABORTED, a 412 on a stale etag or fingerprint): read again and retry."""
    return isinstance(e, FailedPrecondition) or e.status == "ABORTED" or e.code == 409


def _connect_error(e: BaseException) -> bool:
    """Whether ``e`` happened before the request left: refused or no such host."""
    import socket

    import httplib2

    return isinstance(e, (ConnectionRefusedError, socket.gaierror, NotSent, httplib2.ServerNotFoundError))


class OperationFailed(GcpError):
    """A long-running operation that ended in error."""


_BY_CODE: dict[int, type[GcpError]] = {
    400: InvalidArgument,
    403: PermissionDenied,
    404: NotFound,
    409: AlreadyExists,
    412: FailedPrecondition,
}


def _from_http_error(e: Any) -> GcpError:
    import http.client

    code = int(getattr(e.resp, "status", 0) or 0)
    # Without a JSON error body, the HTTP reason ("Conflict"), never the repr
    # of the client's exception object.
    reason = getattr(e, "reason", None) or getattr(e.resp, "reason", None) or http.client.responses.get(code, "")
    message, status = str(reason).strip() or f"HTTP {code}", ""
    try:
        err = json.loads(e.content.decode()).get("error", {})
        message, status = err.get("message", message), err.get("status", "")
    except (ValueError, AttributeError):
        pass
    cls = Transient if code in TRANSIENT else _BY_CODE.get(code, GcpError)
    return cls(code, message, status)


class SendOnce:
    """An httplib2-shaped transport that sends each request exactly once, on a
    fresh connection. httplib2 sends a request again when the connection closes
    before the answer (its stale keep-alive rule, whatever ``RETRIES`` says): for
    a create whose ID the service picks, that second POST made a second
    resource. A dropped answer is an error here; the caller decides."""

    def __init__(self, credentials: Any = None, timeout: float = 120.0) -> None:
        self.credentials = credentials
        self.timeout = timeout

    def request(self, uri: str, method: str = "GET", body: Any = None, headers: Any = None, **_: Any) -> tuple[Any, bytes]:
        import http.client
        from urllib.parse import urlsplit

        import httplib2

        hdrs = dict(headers or {})
        if self.credentials is not None and hasattr(self.credentials, "before_request"):
            import google_auth_httplib2

            self.credentials.before_request(google_auth_httplib2.Request(httplib2.Http()), method, uri, hdrs)
        u = urlsplit(uri)
        conn_cls = http.client.HTTPSConnection if u.scheme == "https" else http.client.HTTPConnection
        conn = conn_cls(u.hostname or "", u.port, timeout=self.timeout)
        try:
            conn.connect()
        except OSError as e:
            conn.close()
            if _connect_error(e):
                raise NotSent(f"{method} {uri}: {type(e).__name__}: {e}") from e
            raise ConnectionError(f"{method} {uri}: {type(e).__name__}: {e}") from e
        try:
            conn.request(method, u.path + (f"?{u.query}" if u.query else ""), body=body, headers=hdrs)
            r = conn.getresponse()
            content = r.read()
        except http.client.HTTPException as e:  # RemoteDisconnected is also an OSError
            raise ConnectionError(f"{method} {uri}: {type(e).__name__}: {e}") from e
        finally:
            conn.close()
        info = {k.lower(): v for k, v in r.getheaders()}
        info["status"] = str(r.status)
        return httplib2.Response(info), content


#: Where a project's number is read (Config Connector's recorded traffic: v1 projects.get).
PROJECT_NUMBER_DOC = "cloudresourcemanager.v1"


_NEEDS_NUMBER: dict[str, bool] = {}


def _needs_number(a: Adapter) -> bool:
    """``uses_project_number``, once per Kind: every reconcile step asks."""
    found = _NEEDS_NUMBER.get(a.kind)
    if found is None:
        found = _NEEDS_NUMBER[a.kind] = uses_project_number(a)
    return found


def with_project_number(gcp: Any, a: Adapter, values: dict[str, str]) -> dict[str, str]:
    """``values`` with the project's number added where the adapter's templates
    name it (``Adapter`` templates with ``{projectNumber}``); unchanged otherwise."""
    if PROJECT_NUMBER in values or not values.get("project") or not _needs_number(a):
        return values
    return {**values, PROJECT_NUMBER: gcp.project_number(values["project"])}


class Gcp:
    """Calls Discovery methods described by adapter descriptors."""

    def __init__(
        self,
        endpoint: str | None = None,
        *,
        credentials: Any = None,
        retries: int = 4,
        backoff: float = 0.2,
        lro_timeout: float = 600.0,
        lro_interval: float = 0.2,
        sleep: Callable[[float], None] = time.sleep,
        seed: int | None = None,
        host_paths: bool = False,
        qps: float | None = None,
        lro_max_interval: float = 5.0,
        keep_calls: bool = True,
        on_request: Callable[[str, str], None] | None = None,
    ) -> None:
        """``qps``: at most this many requests per second to each API and project
        (None: no limit). Safe to share between threads: the Discovery clients are
        built once per API, each thread sends over its own connection.
        ``keep_calls=False``: a long-running process (the operator) keeps no log
        of its requests; ``on_request(api method, HTTP verb)`` counts them instead."""
        self.endpoint = endpoint.rstrip("/") + "/" if endpoint else None
        # mockgcp serves every API on one port under its own host as the first
        # path segment (``/pubsub.googleapis.com/v1/...``), so APIs with the same
        # URL templates never collide; emulators of one API want plain paths.
        self.host_paths = host_paths
        self.credentials = credentials
        self.retries = retries
        self.backoff = backoff
        self.lro_timeout = lro_timeout
        self.lro_interval = lro_interval
        self.sleep = sleep
        self.rng = random.Random(seed)
        self.lro_max_interval = lro_max_interval
        self.qps = qps
        self._clients: dict[str, Any] = {}
        self._creds: Any = None  # what the clients were built with (for SendOnce)
        self.calls: list[str] = []  # "GET pubsub.projects.topics.get" per request sent (keep_calls)
        self.keep_calls = keep_calls
        self.on_request = on_request
        # Called (from the request's thread) when an answer comes after requests
        # failed for want of one: the operator wakes what backed off meanwhile.
        self.on_recover: Callable[[], None] | None = None
        self.failing = False  # the last request got no usable answer (transient)
        self._lock = threading.Lock()  # clients and the QPS schedule
        self._local = threading.local()  # each thread's HTTP connection
        self._next_slot: dict[str, float] = {}  # API (and project) -> earliest time of its next request
        self._resources: dict[tuple[str, tuple[str, ...]], Any] = {}
        self._numbers: dict[str, str] = {}  # project ID -> number: it never changes

    def client(self, doc: str) -> Any:
        with self._lock:
            return self._client(doc)

    def _client(self, doc: str) -> Any:
        if doc not in self._clients:
            from googleapiclient.discovery import build_from_document

            raw = read_document(SPECS, doc).decode("utf-8")
            options = None
            creds = self.credentials
            if self.endpoint is not None:
                head = json.loads(raw)
                service_path = head.get("servicePath", "")
                host = str(head.get("rootUrl", "")).split("//", 1)[-1].rstrip("/") + "/" if self.host_paths else ""
                options = {"api_endpoint": self.endpoint + host + service_path}
                if creds is None:
                    from google.auth.credentials import AnonymousCredentials

                    creds = AnonymousCredentials()  # type: ignore[no-untyped-call]
            elif creds is None:
                import google.auth

                creds, _ = google.auth.default()
            self._creds = creds
            self._clients[doc] = build_from_document(raw, client_options=options, credentials=creds)
        return self._clients[doc]

    def _http(self) -> Any:
        """This thread's transport: httplib2 connections are not thread-safe."""
        http = getattr(self._local, "http", None)
        if http is None:
            import google_auth_httplib2
            from googleapiclient.http import build_http

            http = google_auth_httplib2.AuthorizedHttp(self._creds, http=build_http()) if self._creds is not None else build_http()
            self._local.http = http
        return http

    def _throttle(self, doc: str) -> None:
        """Wait for this API's (and project's) next slot: ``qps`` requests a second, whatever the threads."""
        if not self.qps:
            return
        with self._lock:
            now = time.monotonic()
            slot = max(now, self._next_slot.get(doc, now))
            self._next_slot[doc] = slot + 1.0 / self.qps
        if slot > now:
            time.sleep(slot - now)

    def _resource(self, doc: str, chain: tuple[str, ...]) -> Any:
        """The client's resource at ``chain``, kept: the Discovery client builds
        every method of a resource each time it is reached (7 ms for one GET)."""
        key = (doc, chain)
        found = self._resources.get(key)
        if found is None:
            # The Discovery client renames a resource that is a Python keyword
            # (networkconnectivity's projects.locations.global) with a trailing "_".
            found = reduce(lambda c, name: (getattr(c, name, None) or getattr(c, name + "_"))(), chain, self.client(doc))
            self._resources[key] = found
        return found

    def execute(self, what: str, request: Any, idempotent: bool = True, project: str = "") -> Any:
        """Run one request with bounded, jittered retries on transient failures.

        ``idempotent=False`` (a create whose ID the service picks): only 429 is
        retried, the one answer that says the request was not processed. After a
        5xx or a dropped connection the resource may exist, and sending the POST
        again would create a second one; the request goes through ``SendOnce``,
        which, unlike httplib2, never sends it twice by itself.
        """
        import httplib2
        from googleapiclient.errors import HttpError

        attempt = 0
        outage = self.failing  # the request before this one got no answer either
        doc = what.split(" ", 1)[0]
        slot = f"{doc}/{project}" if project else doc  # each project has its own quota
        while True:
            self._throttle(slot)
            if self.keep_calls:
                self.calls.append(f"{request.method} {what}")
            if self.on_request is not None:
                self.on_request(what, request.method)
            try:
                if idempotent:
                    out = request.execute(http=self._http(), num_retries=0)
                else:
                    out = request.execute(http=SendOnce(self._creds), num_retries=0)
                self._answered()
                return out
            except HttpError as e:
                err = _from_http_error(e)
                if not isinstance(err, Transient):
                    self._answered()
                if isinstance(err, Transient):  # which endpoint is failing, for the user
                    err = Transient(err.code, f"{err.message} ({request.method} {request.uri})", err.status, err.processed)
            except (httplib2.HttpLib2Error, ConnectionError, OSError) as e:
                sent = not _connect_error(e)
                where = "" if str(getattr(request, "uri", "")) in str(e) else f"{request.method} {request.uri}: "
                err = Transient(0, f"{where}{'connection failed' if sent else 'not sent, no connection'}: {e}", processed=sent)
            # A create whose ID the service picks is sent again only after an
            # answer that says the first was not processed.
            if isinstance(err, Transient):
                self.failing = True
            # In a known outage the caller's backoff paces the retries, not this loop.
            if not isinstance(err, Transient) or attempt >= self.retries or (not idempotent and err.processed) or outage:
                raise err
            delay = self.backoff * (2**attempt) * (0.5 + self.rng.random())
            # The object's failure, if the retries run out, is the line the user sees.
            log.debug("%s: %s; retry %d/%d in %.2fs", what, err, attempt + 1, self.retries, delay)
            self.sleep(delay)
            attempt += 1

    def _answered(self) -> None:
        if self.failing:
            self.failing = False
            if self.on_recover is not None:
                self.on_recover()

    def call(
        self, a: Adapter, c: Call, values: dict[str, str], body: Any = None, extra: dict[str, Any] | None = None, *, idempotent: bool = True
    ) -> Any:
        resource, templates = c.resource or a.resource, c.params
        ident = loaded_identity(a.kind)
        other = ident.parent_of(values) if ident is not None else None
        if other is not None and resource[:1] == ("projects",):
            # The folder (organization, billing account) form of the resource: the
            # same methods under the other top-level collection.
            resource = (other[0], *resource[1:])
            templates = tuple((name, rehome(tpl, *other)) for name, tpl in templates)
        try:
            params = {name: tpl.format(**values) for name, tpl in templates}
        except KeyError as e:  # the object gives no value for a parameter: its failure, not the run's
            missing = next(f"{name}={tpl}" for name, tpl in templates if "{" + str(e.args[0]) + "}" in tpl)
            raise GcpError(0, f"{a.doc} {'.'.join(resource)}.{c.method}: no value for {missing} (the object does not give {e.args[0]})") from None
        params.update(extra or {})
        method = getattr(self._resource(a.doc, resource), c.method)
        try:
            request = method(**params, body=body) if body is not None else method(**params)
        except TypeError as e:  # the client's check of the request (Missing required parameter "initialNodeCount")
            raise GcpError(0, f"{a.doc} {'.'.join(resource)}.{c.method}: {e}") from None
        return self.execute(f"{a.doc} {'.'.join(resource)}.{c.method}", request, idempotent, values.get("project", ""))

    def project_number(self, project: str) -> str:
        """The project's number (Resource Manager ``projects.get``, as Config
        Connector reads it), for APIs that name a project by it; looked up once."""
        if project.isdigit():
            return project
        with self._lock:
            known = self._numbers.get(project)
        if known is None:
            request = self._resource(PROJECT_NUMBER_DOC, ("projects",)).get(projectId=project)
            answer = self.execute(f"{PROJECT_NUMBER_DOC} projects.get", request, True, project) or {}
            known = str(answer.get("projectNumber") or "")
            if not known.isdigit():
                raise GcpError(0, f"{PROJECT_NUMBER_DOC} projects.get {project}: no projectNumber in the answer")
            with self._lock:
                self._numbers[project] = known
        return known

    def list_all(self, a: Adapter, c: Call, values: dict[str, str], items_field: str, max_pages: int = 100) -> list[dict[str, Any]]:
        """Every resource of a collection, page by page (``nextPageToken``)."""
        out: list[dict[str, Any]] = []
        token = None
        for _ in range(max_pages):
            page = self.call(a, c, values, extra={"pageToken": token} if token else None) or {}
            out.extend(x for x in page.get(items_field) or [] if isinstance(x, dict))
            token = page.get("nextPageToken")
            if not token:
                return out
        raise GcpError(0, f"{a.doc} {'.'.join(a.resource)}.{c.method}: more than {max_pages} pages")

    # --- long-running operations ---------------------------------------------------

    def wait(self, a: Adapter, c: Call, op: Any, values: dict[str, str]) -> Any:
        """Wait for the operation a call returned; its resource (google.longrunning) or None.

        A method without an operation answers with the resource itself: returned as is.
        """
        if c.lro is Lro.NONE or not isinstance(op, dict):
            return op
        deadline = time.monotonic() + self.lro_timeout
        interval = self.lro_interval
        while True:
            done, result = self._op_state(c.lro, op)
            if done:
                return result
            if time.monotonic() > deadline:
                raise Transient(0, f"operation {op.get('name') or op.get('id')} not done after {self.lro_timeout:.0f}s")
            self.sleep(interval)
            interval = min(interval * 1.5, self.lro_max_interval)  # backoff: long operations are polled less often
            op = self._poll(a, c.lro, op, values)

    @staticmethod
    def _op_state(style: Lro, op: dict[str, Any]) -> tuple[bool, Any]:
        match style:
            case Lro.GOOGLE_LONGRUNNING:
                if not op.get("done"):
                    return False, None
                if "error" in op:
                    err = op["error"]
                    raise OperationFailed(int(err.get("code", 0)), str(err.get("message", "operation failed")), "OPERATION_ERROR")
                resp = dict(op.get("response") or {})
                resp.pop("@type", None)
                return True, resp or None
            case Lro.LOCATED:
                if str(op.get("status", "")).upper() != "DONE":
                    return False, None
                err = op.get("error") or {}
                if err.get("code") or err.get("message"):
                    raise OperationFailed(int(err.get("code", 0) or 0), str(err.get("message") or op.get("statusMessage") or "operation failed"), "OPERATION_ERROR")
                return True, None
            case Lro.COMPUTE | Lro.DNS:
                if str(op.get("status", "")).upper() != "DONE":
                    return False, None
                errors = (op.get("error") or {}).get("errors") or []
                if errors:
                    code = int(op.get("httpErrorStatusCode", 0) or 0)
                    raise OperationFailed(code, "; ".join(str(e.get("message")) for e in errors), "OPERATION_ERROR")
                return True, None
            case Lro.NONE:
                return True, op
            case _:
                assert_never(style)

    def _poll(self, a: Adapter, style: Lro, op: dict[str, Any], values: dict[str, str]) -> Any:
        match style:
            case Lro.GOOGLE_LONGRUNNING | Lro.LOCATED:
                name = str(op.get("name", ""))
                if style is Lro.LOCATED and "/" not in name:
                    name = f"{located_parent(template_value(a.template, values))}/operations/{name}"
                for key, getter in sorted(a.operations, key=lambda kv: -len(kv[1].pattern)):
                    if getter.pattern and (m := re.match(getter.pattern, name)):
                        # the whole name in one parameter, or (named groups) its parts (appengine's appsId, operationsId)
                        kwargs = m.groupdict() or {getter.params[0][0]: name}
                        req = self._resource(a.doc, getter.resource).get(**kwargs)
                        return self.execute(f"{a.doc} {key}.get", req, project=values.get("project", ""))
                raise GcpError(0, f"no operations.get in {a.doc} for {name!r}")
            case Lro.COMPUTE:
                scope = "regionOperations" if "region" in values else "zoneOperations" if "zone" in values else "globalOperations"
                return self._get_operation(a, scope, {**values, "operation": str(op["name"])})
            case Lro.DNS:
                return self._get_operation(a, "managedZoneOperations", {**values, "operation": str(op["id"])})
            case Lro.NONE:
                return op
            case _:
                assert_never(style)

    def _get_operation(self, a: Adapter, key: str, values: dict[str, str]) -> Any:
        getter = a.operation(key)
        params = {k: v.format(**values) for k, v in getter.params}
        return self.execute(f"{a.doc} {key}.get", self._resource(a.doc, getter.resource).get(**params), project=values.get("project", ""))
