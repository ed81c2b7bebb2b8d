"""A TCP forwarder whose port can refuse connections for a while: a GCP endpoint
that is down (connection refused), then back on the same address."""

from __future__ import annotations

import socket
import threading
from contextlib import suppress


class Proxy:
    """127.0.0.1:``port`` forwards to ``target``; :meth:`down` closes the port
    (clients get connection refused), :meth:`up` opens it again."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = int(s.getsockname()[1])
        self._listener: socket.socket | None = None
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()

    @property
    def listening(self) -> bool:
        return self._listener is not None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def up(self) -> None:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", self.port))
        s.listen(128)
        self._listener = s
        threading.Thread(target=self._accept, args=(s,), daemon=True).start()

    def down(self) -> None:
        """Refuse new connections and cut the open ones."""
        s, self._listener = self._listener, None
        if s is not None:
            with suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()
        with self._lock:
            conns, self._conns = self._conns, []
        for c in conns:
            with suppress(OSError):
                c.close()

    def _accept(self, s: socket.socket) -> None:
        while True:
            try:
                client, _ = s.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pipe, args=(a, b), daemon=True).start()


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    with suppress(OSError):
        while data := src.recv(65536):
            dst.sendall(data)
    for sock in (src, dst):
        with suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
