"""Scenario scaffolding: a realistic object per generated Kind (its facts live in
tests/kinds/<Kind>/scenario.yaml), and a harness that reconciles them against
mockgcp and reads back the exact HTTP exchanges.

Stable on purpose (other test modules import it):

* ``PROJECT``, ``NAMESPACE``, ``namespace_object()``;
* ``manifest(kind)``: a fresh KRM object for ``kind`` (its fixture's spec);
* ``parents(kind)``: the Kinds that must exist (reconciled, with
  ``status.externalRef``) before ``kind`` can be created (the objects its
  fixture refers to by name);
* ``Harness``: a MockServer + Gcp + InMemoryStore; ``reconcile(obj)`` runs the
  Reconciler and stores the result, ``calls()`` / ``writes()`` read the mock's
  request log (``mark()`` / ``since`` to look at one step), ``raw(api)`` is a
  discovery client that changes GCP behind the controller's back.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kccgen.mockgcp.engine import MockGCP
from kccgen.mockgcp.httplog import HttpLogEntry
from kccgen.mockgcp.normalize import call_sequence
from kccgen.mockgcp.server import MockServer
from kccgen.runtime.gcp import Gcp
from kccgen.runtime.lifecycle import Lifecycle, RecordingGcp
from kccgen.runtime.reconciler import Reconciler, Result
from kccgen.runtime.refs import PROJECT_ID_ANNOTATION, InMemoryStore
from tests.support.kinds import api_version, facts, parents

PROJECT = "p"
NAMESPACE = "ns"
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
FORCE_ACQUIRE = "cnrm.cloud.google.com/force-acquire"

def name_of(kind: str) -> str:
    """metadata.name of ``kind``'s fixture object (tests/kinds/<Kind>/scenario.yaml)."""
    return facts(kind).metadata.name


def rest_path(kind: str, external_ref: str) -> str:
    """The REST path (with leading /) of a resource: where GET and PATCH go."""
    return f"/{facts(kind).restPrefix}{external_ref}"


def namespace_object(project: str = PROJECT, namespace: str = NAMESPACE) -> dict[str, Any]:
    return {"kind": "Namespace", "metadata": {"name": namespace, "annotations": {PROJECT_ID_ANNOTATION: project}}}


def manifest(kind: str, name: str | None = None, annotations: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    """A fresh object for ``kind``; keyword arguments replace top-level spec fields
    (``None`` leaves the field out)."""
    body = copy.deepcopy(facts(kind).spec)
    body.update(copy.deepcopy(spec))
    body = {k: v for k, v in body.items() if v is not None}
    meta: dict[str, Any] = {"name": name or name_of(kind), "namespace": NAMESPACE, "generation": 1}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": api_version(kind), "kind": kind, "metadata": meta, "spec": body}


def kcc_object(kind: str, name: str, spec: dict[str, Any], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    """An object of ``kind`` with exactly this spec (no fixture defaults), in the test namespace."""
    meta: dict[str, Any] = {"name": name, "namespace": NAMESPACE, "generation": 1}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": api_version(kind), "kind": kind, "metadata": meta, "spec": spec}


def with_spec(obj: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A copy of ``obj`` (status kept) with top-level spec fields replaced, generation bumped."""
    out = copy.deepcopy(obj)
    out["spec"].update(copy.deepcopy(changes))
    out["metadata"]["generation"] = int(out["metadata"].get("generation") or 1) + 1
    return out


def annotate(obj: dict[str, Any], key: str, value: str | None) -> dict[str, Any]:
    """A copy of ``obj`` with one annotation set (``None``: removed)."""
    out = copy.deepcopy(obj)
    anns = out["metadata"].setdefault("annotations", {})
    if value is None:
        anns.pop(key, None)
    else:
        anns[key] = value
    return out


def path_of(entry: HttpLogEntry) -> str:
    return entry.url.split("://", 1)[-1].split("/", 1)[-1].split("?", 1)[0]


def query_of(entry: HttpLogEntry) -> dict[str, list[str]]:
    from urllib.parse import parse_qs, urlsplit

    return parse_qs(urlsplit(entry.url).query)


class Harness:
    """mockgcp + the reconciler, with the request log as the thing to assert on."""

    def __init__(self, server: MockServer, host_paths: bool = False) -> None:
        """``host_paths``: requests carry the API's host (Resource Manager's
        v1/projects/{p} is a path other APIs have too)."""
        self.server = server
        self.gcp = Gcp(server.base_url, lro_interval=0, sleep=lambda s: None, host_paths=host_paths)
        self.store = InMemoryStore([namespace_object()], default_namespace=NAMESPACE)
        self._clients: dict[str, Any] = {}

    # --- acting ---------------------------------------------------------------------

    def reconcile(self, obj: dict[str, Any]) -> Result:
        result = Reconciler(self.gcp, self.store).reconcile(obj)
        if not result.deleted:
            self.store.add(result.obj)
        return result

    def ready(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Reconcile ``obj``, asserting it is Ready; the object as reconciled."""
        r = self.reconcile(obj)
        assert r.ready, (obj["kind"], r.reason, r.message)
        return r.obj

    def delete(self, obj: dict[str, Any]) -> Result:
        return Reconciler(self.gcp, self.store).delete(obj)

    def create(self, kind: str, **spec: Any) -> Result:
        """Create ``kind`` (its parents first); asserts every step is Ready."""
        for parent in parents(kind):
            if self.store.get(parent, NAMESPACE, name_of(parent)) is None:
                self.create(parent)
        r = self.reconcile(manifest(kind, **spec))
        assert r.ready, (kind, r.reason, r.message)
        return r

    def raw(self, api: str) -> Any:
        """A discovery client on mockgcp: a user changing GCP outside the controller."""
        if api not in self._clients:
            self._clients[api] = self.server.client(api)
        return self._clients[api]

    def stored(self, api: str, key: str) -> dict[str, Any]:
        """mockgcp's stored resource (``"pubsub.v1"``, ``"projects/p/topics/t"``), to
        make it answer the way the real service spells a value."""
        return self.server.engine.resources[f"{api}|{key}"]

    # --- reading the log --------------------------------------------------------------

    @property
    def log(self) -> list[HttpLogEntry]:
        return list(self.server.log)

    def mark(self) -> int:
        """The current log position; pass it as ``since`` to look at one step."""
        return len(self.server.log)

    def entries(self, since: int = 0) -> list[HttpLogEntry]:
        return list(self.server.log)[since:]

    def calls(self, since: int = 0) -> list[str]:
        """``METHOD path -> status`` per exchange (ids and operation names normalised)."""
        return call_sequence(self.entries(since))

    def requests(self, since: int = 0) -> list[str]:
        """``METHOD /path -> status`` per exchange, exactly as sent (no placeholders)."""
        return [f"{e.method} /{path_of(e)} -> {e.status_code}" for e in self.entries(since)]

    def writes(self, since: int = 0) -> list[HttpLogEntry]:
        return [e for e in self.entries(since) if e.method in WRITE_METHODS]


def lifecycle_on(server: MockServer, project: str = "lifecycle-project") -> Lifecycle:
    """The generated lifecycle suite against ``server``, as ``kccctl verify`` runs it:
    no operation wait, no retries, no sleeps."""
    return Lifecycle(RecordingGcp(server.base_url, lro_interval=0, retries=0, sleep=lambda s: None, host_paths=True), project)


@contextmanager
def running_mock(lro_polls: int = 1) -> Iterator[MockServer]:
    """A MockServer that stops at once: ``MockServer.start`` serves with
    ``serve_forever``'s default 0.5 s poll, which ``stop()`` waits out."""
    import threading

    s = MockServer(MockGCP(lro_polls=lro_polls))
    t = threading.Thread(target=s.httpd.serve_forever, kwargs={"poll_interval": 0.01}, name="mockgcp", daemon=True)
    t.start()
    try:
        yield s
    finally:
        s.stop()
        t.join()


@contextmanager
def harness(lro_polls: int = 1, host_paths: bool = False) -> Iterator[Harness]:
    with running_mock(lro_polls) as s:
        yield Harness(s, host_paths)
