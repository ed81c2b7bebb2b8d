"""HTTP front end: serves every pinned API on one port.

Clients built by google-api-python-client work unchanged with
``client_options={"api_endpoint": server.endpoint(api)}``: the API's host as
the first path segment, then its service path, so APIs whose URL templates
are the same never collide. Un-prefixed paths reach the vendored APIs first, then the one API
that serves them (mockgcp.owners). Every exchange is appended
to a request log in the ``_http.log`` format of Config Connector's recordings.
``/_mockgcp/faults`` (mockgcp.admin) reads and changes the fault rules while it runs.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from kccgen.documents import preferred, read_document
from kccgen.mockgcp import admin
from kccgen.mockgcp.engine import MockGCP
from kccgen.mockgcp.httplog import HttpLogEntry, format_http_log

_REASONS = {200: "OK", 204: "No Content", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 409: "Conflict", 412: "Precondition Failed", 429: "Too Many Requests", 500: "Internal Server Error", 501: "Not Implemented", 503: "Service Unavailable"}
_JSON = "application/json; charset=UTF-8"


class RequestLog(deque[HttpLogEntry]):
    """The last ``maxlen`` exchanges (a long run must not grow without bound; the
    ``--log`` file keeps every one). Slicing works on what is kept."""

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return list(self)[i]
        return super().__getitem__(i)


#: Exchanges kept in memory: far more than any test or scenario makes.
LOG_ENTRIES = 10_000


class MockServer:
    """mockgcp on 127.0.0.1; ``start()`` runs it in a background thread."""

    def __init__(self, engine: MockGCP | None = None, host: str = "127.0.0.1", port: int = 0, log_entries: int = LOG_ENTRIES) -> None:
        self.engine = engine or MockGCP()
        self.log = RequestLog(maxlen=log_entries)
        self._logged = 0  # exchanges written to the file log
        self._log_lock = threading.Lock()
        self._log_file: Path | None = None
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def setup(self) -> None:
                super().setup()
                # Headers and body go out in separate writes; without NODELAY
                # Nagle's algorithm adds ~40 ms to every exchange.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def _serve(self) -> None:
                server._serve(self)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                """A client that went away (a killed process's kept-alive
                connection) is not an error of the emulator: no traceback."""
                if isinstance(sys.exc_info()[1], ConnectionError):
                    return
                super().handle_error(request, client_address)

        self.httpd = Server((host, port), Handler)
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def _key(self, api: str) -> str:
        """A doc key from a key (pubsub.v1) or a name (pubsub), without parsing documents."""
        if api in self.engine.apis:
            return api
        keys = [k for k in self.engine.apis if k.rsplit(".", 1)[0] == api]
        if not keys:
            raise KeyError(f"no API {api!r} in mockgcp (have {', '.join(sorted(self.engine.apis))})")
        # a name means its vendored document (the curated Kinds' version: dns.v1,
        # monitoring.v3), else its newest GA one
        vendored = [k for k in keys if k in self.engine.catalog.vendored]
        return (vendored or preferred(keys) or sorted(keys))[0]

    def endpoint(self, api: str) -> str:
        """The api_endpoint for a Discovery doc key (pubsub.v1) or name (pubsub):
        the API's own host as the first path segment, then its servicePath."""
        host, service_path = self.engine.catalog.host_of(self._key(api))
        return f"{self.base_url}{host}/{service_path}"

    def client(self, api: str, version: str | None = None) -> Any:
        """A google-api-python-client client for ``api`` built from the pinned document."""
        from google.auth.credentials import AnonymousCredentials
        from googleapiclient.discovery import build_from_document

        key = self._key(api if version is None else f"{api}.{version}")
        doc = read_document(self.engine.specs, key).decode("utf-8")
        return build_from_document(doc, client_options={"api_endpoint": self.endpoint(key)}, credentials=AnonymousCredentials())  # type: ignore[no-untyped-call]

    def start(self) -> MockServer:
        # A short poll interval: stop() returns in ~10 ms instead of 0.5 s.
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, name="mockgcp", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> MockServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def write_log_to(self, path: Path) -> None:
        """Append every exchange to ``path`` as it happens (kccctl mockgcp serve --log).
        A file that exists keeps what it holds: the next exchange follows it
        after the usual separator, so runs on one log read as one log. Opening
        it here, once, makes an unwritable path an error now (OSError), not on
        the first request."""
        with path.open("a", encoding="utf-8"):
            pass
        with self._log_lock:
            self._log_file = path
            self._logged = 1 if path.stat().st_size else 0

    def log_text(self) -> str:
        with self._log_lock:
            return format_http_log(self.log)

    def clear_log(self) -> None:
        with self._log_lock:
            self.log.clear()

    # --- one request ----------------------------------------------------------------

    def _serve(self, h: BaseHTTPRequestHandler) -> None:
        url = urlsplit(h.path)
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        text = raw.decode("utf-8", errors="replace") if raw else None
        body: Any = None
        if text:
            try:
                body = json.loads(text)
            except json.JSONDecodeError:
                body = text
        query = parse_qs(url.query)
        host_header = h.headers.get("Host")
        if admin.is_admin(url.path):
            status, answer = admin.faults(self.engine.faults, h.command, body)
            self._answer(h, status, (json.dumps(answer, indent=2, sort_keys=True) + "\n").encode())
            return
        fault = self.engine.pick_fault(h.command, url.path, host_header)
        if fault is not None:
            if fault.latency_ms:
                time.sleep(fault.latency_ms / 1000)
            if fault.drop:  # the client sees the connection close with no answer
                # Logged too (status 000: no answer), so a test can tell a lost
                # request from one never sent.
                found = self.engine.route(h.command, url.path.lstrip("/"), host_header)
                self._log(h.command, url.path, url.query, host_header, found[0] if found else None, body, "000 Dropped", None)
                with contextlib.suppress(OSError):
                    h.connection.shutdown(socket.SHUT_RDWR)
                h.close_connection = True
                return
        route, resp = self.engine.handle(h.command, url.path, query, body, fault, host_header)
        out = b"" if resp.body is None else (json.dumps(resp.body, indent=2, sort_keys=True) + "\n").encode()
        # Log before answering, so a client never sees a response the log lacks.
        self._log(h.command, url.path, url.query, host_header, route, body, f"{resp.status} {_REASONS.get(resp.status, '')}".strip(), out)
        if fault is not None and fault.drop_answer:  # served and logged; the answer is lost
            with contextlib.suppress(OSError):
                h.connection.shutdown(socket.SHUT_RDWR)
            h.close_connection = True
            return
        self._answer(h, resp.status, out)

    @staticmethod
    def _answer(h: BaseHTTPRequestHandler, status: int, out: bytes) -> None:
        h.send_response(status, _REASONS.get(status))
        h.send_header("Content-Type", _JSON)
        h.send_header("Content-Length", str(len(out)))
        h.end_headers()
        if out:
            h.wfile.write(out)

    def _log(self, method: str, path: str, query: str, host_header: str | None, route: Any, body: Any, status: str, out: bytes | None) -> None:
        _, rel = self.engine.scope(path.lstrip("/"), host_header)
        host = self.engine.apis[route.api].doc.host if route is not None else "localhost"
        entry = HttpLogEntry(
            method=method,
            url=f"https://{host}/{rel}" + (f"?{query}" if query else ""),
            request_headers=(("Content-Type", "application/json"),),
            request_body=json.dumps(body, indent=2, sort_keys=True) if body is not None else None,
            status=status,
            response_headers=(("Content-Type", _JSON),) if out is not None else (),
            response_body=out.decode().rstrip("\n") if out else None,
        )
        with self._log_lock:
            self.log.append(entry)
            if self._log_file is not None:
                with self._log_file.open("a", encoding="utf-8") as f:
                    f.write(("\n\n---\n\n" if self._logged else "") + format_http_log([entry]))
                self._logged += 1


@contextlib.contextmanager
def running(engine: MockGCP | None = None) -> Iterator[MockServer]:
    with MockServer(engine) as s:
        yield s
