"""Running the real reconciler against mockgcp in-process and counting its requests.

Every row gets a fresh, seeded mockgcp state on one shared server (stopping a
server takes half a second); set-up runs before the request log is cleared,
so only the measured reconcile is counted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from bench.calls_cases import NAMESPACE
from kccgen.mockgcp.engine import MockGCP
from kccgen.mockgcp.normalize import call_sequence
from kccgen.mockgcp.server import MockServer
from kccgen.runtime.gcp import Gcp
from kccgen.runtime.reconciler import Reconciler, Result
from kccgen.runtime.refs import PROJECT_ID_ANNOTATION, InMemoryStore

PROJECT = "bench-project"
LRO_POLLS = 1  # mockgcp's default: an operation is done on its first poll


class Harness:
    """mockgcp in-process, a Gcp client with no LRO sleep, and an object store."""

    def __init__(self, server: MockServer) -> None:
        self.server = server
        self.gcp = Gcp(server.base_url, lro_interval=0)
        self.store = InMemoryStore(default_namespace=NAMESPACE)
        self.store.add(
            {
                "kind": "Namespace",
                "metadata": {"name": NAMESPACE, "annotations": {PROJECT_ID_ANNOTATION: PROJECT}},
            }
        )

    def apply(self, obj: dict[str, Any]) -> Result:
        result = Reconciler(self.gcp, self.store).reconcile(obj)
        self.store.add(result.obj)
        return result

    def delete(self, obj: dict[str, Any]) -> Result:
        return Reconciler(self.gcp, self.store).delete(obj)

    def ready(self, obj: dict[str, Any]) -> dict[str, Any]:
        r = self.apply(obj)
        if not r.ready:
            raise RuntimeError(
                f"set-up: {obj['kind']}/{obj['metadata']['name']}: {r.reason}: {r.message}"
            )
        return r.obj

    def measure(self, step: Callable[[], Result]) -> tuple[Result, list[str]]:
        self.server.clear_log()
        result = step()
        return result, call_sequence(list(self.server.log))


@contextmanager
def mock_server() -> Iterator[MockServer]:
    """One mockgcp server for many rows (stopping a server takes half a second)."""
    with MockServer(MockGCP(lro_polls=LRO_POLLS, seed=0)) as server:
        yield server


@contextmanager
def harness(server: MockServer, deps: Iterable[dict[str, Any]] = ()) -> Iterator[Harness]:
    """A fresh, seeded mockgcp state on ``server`` with ``deps`` ready, and an empty request log."""
    server.engine = MockGCP(lro_polls=LRO_POLLS, seed=0)
    server.clear_log()
    h = Harness(server)
    for d in deps:
        h.ready(d)
    yield h


def resource_id(obj: dict[str, Any]) -> str:
    """The last segment of status.externalRef: what spec.resourceID takes."""
    return str(obj["status"]["externalRef"]).rsplit("/", 1)[-1]
