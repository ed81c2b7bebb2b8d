"""The operator under test: ``kccctl operator`` as a process against the envtest
API server (tests/support/envtest.py) and an in-process mockgcp.

* :class:`Kube` writes and reads objects with the Kubernetes Python client, as
  ``kubectl apply --server-side`` does (field manager ``kubectl-test``), and
  waits for conditions;
* :class:`OperatorProcess` starts ``kccctl operator``, finds its health/metrics
  port in its log, reads ``/metrics``, and stops it with SIGTERM (or kills it);
* :func:`object_set` builds many objects of mixed Kinds with references
  between them from ``kccctl example``'s manifests.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kccgen.runtime.registry import kind_index, resource_of

KCCCTL = Path(sys.executable).parent / "kccctl"
TEST_MANAGER = "kubectl-test"


gvp = resource_of  # (group, version, plural) of a generated Kind


def crd_file(kind: str) -> Path:
    import kccgen.generated

    return Path(kccgen.generated.__path__[0]) / kind_index()[kind]["crd"]


@contextlib.contextmanager
def core_server(work: Path, kinds: Iterable[str], namespace: str) -> Iterator[Any]:
    """An envtest API server started with ``--core-api`` (Namespaces, Secrets, Events
    are stored; no controllers) holding ``namespace`` and the CRDs of ``kinds``."""
    from tests.support import envtest as support

    with support.running(work, "--core-api") as kube:
        ns = work / "ns.yaml"
        ns.write_text(f"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {namespace}\n", encoding="utf-8")
        files = [crd_file(k) for k in kinds]
        errors = kube.apply_files([*files, ns])
        names = {f.name.removesuffix(".yaml") for f in files}
        assert all(kube.established(names).get(n) for n in names), errors
        yield kube


def ready_condition(obj: dict[str, Any] | None) -> dict[str, Any]:
    for c in ((obj or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return dict(c)
    return {}


class Kube:
    """The Kubernetes Python client on the envtest server's kubeconfig."""

    def __init__(self, kubeconfig: Path) -> None:
        from kubernetes import client, config

        cfg = client.Configuration()
        config.load_kube_config(config_file=str(kubeconfig), client_configuration=cfg)
        self.api = client.CustomObjectsApi(client.ApiClient(cfg))

    def apply(self, obj: dict[str, Any], manager: str = TEST_MANAGER) -> dict[str, Any]:
        """Server-side apply, as ``kubectl apply --server-side`` (retried while the
        server's discovery does not know a just-installed Kind)."""
        from kubernetes.client.exceptions import ApiException

        group, version, plural = gvp(obj["kind"])
        meta = obj["metadata"]
        body = {**copy.deepcopy(obj), "apiVersion": obj.get("apiVersion") or f"{group}/{version}"}
        body["metadata"] = {k: v for k, v in meta.items() if k in ("name", "namespace", "annotations", "labels", "finalizers")}
        deadline = time.monotonic() + 10
        while True:
            try:
                got = self.api.patch_namespaced_custom_object(
                    group, version, meta["namespace"], plural, meta["name"], body,
                    field_manager=manager, force=True, _content_type="application/apply-patch+yaml",
                )
                if got:
                    return dict(got)
                problem = "an empty answer"  # a Kind just installed: its endpoint is not served yet
            except ApiException as e:
                if e.status != 404:
                    raise
                problem = str(e)
            if time.monotonic() > deadline:
                raise AssertionError(f"apply {obj['kind']} {meta['namespace']}/{meta['name']}: {problem}")
            time.sleep(0.2)

    def get(self, kind: str, ns: str, name: str) -> dict[str, Any] | None:
        from kubernetes.client.exceptions import ApiException

        group, version, plural = gvp(kind)
        try:
            return dict(self.api.get_namespaced_custom_object(group, version, ns, plural, name))
        except ApiException as e:
            if e.status == 404:
                return None
            raise

    def list(self, kind: str, ns: str) -> list[dict[str, Any]]:
        group, version, plural = gvp(kind)
        return list(self.api.list_namespaced_custom_object(group, version, ns, plural).get("items") or [])

    def delete(self, kind: str, ns: str, name: str) -> None:
        from kubernetes.client.exceptions import ApiException

        group, version, plural = gvp(kind)
        try:
            self.api.delete_namespaced_custom_object(group, version, ns, plural, name)
        except ApiException as e:
            if e.status != 404:
                raise

    def patch_annotations(self, kind: str, ns: str, name: str, annotations: dict[str, str | None]) -> dict[str, Any]:
        group, version, plural = gvp(kind)
        body = {"metadata": {"annotations": annotations}}
        return dict(self.api.patch_namespaced_custom_object(group, version, ns, plural, name, body, _content_type="application/merge-patch+json"))

    def wait(self, kind: str, ns: str, name: str, test: Callable[[dict[str, Any] | None], bool], timeout: float = 30, what: str = "") -> dict[str, Any] | None:
        deadline = time.monotonic() + timeout
        while True:
            obj = self.get(kind, ns, name)
            if test(obj):
                return obj
            if time.monotonic() > deadline:
                raise AssertionError(f"{kind} {ns}/{name}: not {what or 'as expected'} after {timeout}s; last: {json.dumps((obj or {}).get('status'), sort_keys=True)[:800]}")
            time.sleep(0.1)

    def wait_reason(self, kind: str, ns: str, name: str, reason: str, timeout: float = 30) -> dict[str, Any]:
        obj = self.wait(kind, ns, name, lambda o: ready_condition(o).get("reason") == reason, timeout, f"Ready reason {reason}")
        assert obj is not None
        return obj

    def wait_ready(self, kind: str, ns: str, name: str, timeout: float = 30) -> dict[str, Any]:
        obj = self.wait(kind, ns, name, lambda o: ready_condition(o).get("status") == "True" and _current(o), timeout, "Ready")
        assert obj is not None
        return obj

    def wait_gone(self, kind: str, ns: str, name: str, timeout: float = 30) -> None:
        self.wait(kind, ns, name, lambda o: o is None, timeout, "deleted")


def _current(obj: dict[str, Any] | None) -> bool:
    """The status speaks of the object's current generation."""
    obj = obj or {}
    return (obj.get("status") or {}).get("observedGeneration") == (obj.get("metadata") or {}).get("generation")


@dataclass
class OperatorProcess:
    """``kccctl operator`` as a subprocess; its log goes to ``log``."""

    kubeconfig: Path
    endpoint: str
    log: Path
    args: tuple[str, ...] = ()
    proc: subprocess.Popen[bytes] | None = None
    health_port: int = 0
    env: dict[str, str] = field(default_factory=dict)

    def start(self, timeout: float = 60) -> OperatorProcess:
        cmd = [str(KCCCTL), "operator", "--kubeconfig", str(self.kubeconfig), "--endpoint", self.endpoint, "--host-paths", "--health-port", "0", *self.args]
        out = self.log.open("ab")
        self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **self.env})
        deadline = time.monotonic() + timeout
        while not self.health_port:
            m = re.search(r"health and metrics on http://[^:]+:(\d+)", self.log.read_text(errors="replace"))
            if m:
                self.health_port = int(m.group(1))
                break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"kccctl operator did not start:\n{self.tail()}")
            time.sleep(0.1)
        while not self.ready():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"kccctl operator never became ready:\n{self.tail()}")
            time.sleep(0.1)
        return self

    def _get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.health_port}{path}", timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def ready(self) -> bool:
        try:
            return self._get("/readyz")[0] == 200
        except OSError:
            return False

    def metrics(self) -> dict[str, float]:
        """``name{labels}`` -> value, from /metrics (comments dropped)."""
        status, text = self._get("/metrics")
        assert status == 200, text
        out: dict[str, float] = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                out[name] = float(value)
        return out

    def metric_sum(self, prefix: str, **labels: str) -> float:
        total = 0.0
        for name, v in self.metrics().items():
            if name.split("{", 1)[0] == prefix and all(f'{k}="{val}"' in name for k, val in labels.items()):
                total += v
        return total

    def stop(self, timeout: float = 30) -> int:
        """SIGTERM, as Kubernetes stops a pod: the exit status."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"kccctl operator did not stop within {timeout}s of SIGTERM:\n{self.tail()}") from None

    def webhook_port(self) -> int:
        m = re.search(r"admission webhook on https://[^:]+:(\d+)/validate", self.log.read_text(errors="replace"))
        assert m, f"no webhook in the operator's log:\n{self.tail()}"
        return int(m.group(1))

    def review(self, review: dict[str, Any]) -> dict[str, Any]:
        """POST an AdmissionReview to the operator's webhook, as the API server would
        (the certificate is the operator's own: tests/test_webhook.py checks it)."""
        import ssl

        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        req = urllib.request.Request(
            f"https://127.0.0.1:{self.webhook_port()}/validate", json.dumps(review).encode(), {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=15, context=ctx) as r:
            return dict(json.loads(r.read()))

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()

    def tail(self, lines: int = 60) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


def object_set(kinds: Iterable[str], copies: int, namespace: str, project: str, prefix: str = "o") -> list[dict[str, Any]]:
    """``copies`` of each Kind's example with the objects it refers to, renamed
    ``<prefix><i>-<name>`` so each copy refers to its own parents; each object once."""
    from kccgen.runtime.example import Examples

    out: dict[tuple[str, str], dict[str, Any]] = {}
    for kind in kinds:
        base = Examples(project).manifests(kind)
        names = {m["metadata"]["name"] for m in base}
        for i in range(copies):
            for m in base:
                o = copy.deepcopy(m)
                new = f"{prefix}{i}-{o['metadata']['name']}"
                o["metadata"] = {**o["metadata"], "name": new, "namespace": namespace}
                o["spec"] = _renamed(o.get("spec") or {}, names, f"{prefix}{i}-")
                if o["spec"].get("resourceID"):
                    o["spec"]["resourceID"] = new
                out[(o["kind"], new)] = o
    return list(out.values())


def _renamed(node: Any, names: set[str], prefix: str) -> Any:
    if isinstance(node, dict):
        if set(node) <= {"name", "namespace"} and node.get("name") in names:
            return {**node, "name": prefix + node["name"]}
        return {k: _renamed(v, names, prefix) for k, v in node.items()}
    if isinstance(node, list):
        return [_renamed(v, names, prefix) for v in node]
    return node
