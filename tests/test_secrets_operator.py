"""Issue 29, point 3 in a cluster: ``kccctl operator`` reads SQLUser's password from a
Secret on the envtest API server started with ``--core-api`` (Secrets, Events and
Namespaces are stored; there are no controllers). The password reaches mockgcp's
request body and nowhere else: not the object in the cluster, its Events or the
operator's log. Changing the Secret is picked up on the next reconcile (the
reconcile-interval annotation) and sent with one write."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kccgen.mockgcp.server import MockServer
from tests.support.envtest import Kube as Kubectl
from tests.support.operator import Kube, OperatorProcess, core_server

NS = "sec"
PROJECT = "sec-project"
KINDS = ("SQLInstance", "SQLUser")
PASSWORD = "pw-op-51c0de-never-shown"
NEW_PASSWORD = "pw-op-99ab12-never-shown"
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    with core_server(tmp_path_factory.mktemp("secrets-server"), KINDS, NS) as kube:
        yield kube


def _secret(core: Any, value: str, create: bool) -> None:
    from kubernetes import client

    body = client.V1Secret(metadata=client.V1ObjectMeta(name="db", namespace=NS), data={"password": base64.b64encode(value.encode()).decode()})
    if create:
        core.create_namespaced_secret(NS, body)
    else:
        core.replace_namespaced_secret("db", NS, body)


def test_the_operator_sends_the_secret_and_shows_it_nowhere(server: Kubectl, tmp_path: Path) -> None:
    from kubernetes import client

    kube = Kube(server.kubeconfig)
    core = client.CoreV1Api(kube.api.api_client)
    _secret(core, PASSWORD, create=True)
    meta = {"namespace": NS, "annotations": {"cnrm.cloud.google.com/project-id": PROJECT, "cnrm.cloud.google.com/reconcile-interval-in-seconds": "2"}}
    instance = {"kind": "SQLInstance", "metadata": {"name": "db1", **meta}, "spec": {"databaseVersion": "POSTGRES_15", "region": "us-central1", "settings": {"tier": "db-custom-1-3840"}}}
    user = {"kind": "SQLUser", "metadata": {"name": "app", **meta}, "spec": {"instanceRef": {"name": "db1"}, "password": {"valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}}}}
    log = tmp_path / "operator.log"
    with MockServer() as mock:
        op = OperatorProcess(server.kubeconfig, mock.base_url, log, ("--crd-pattern", ";".join(KINDS), "--project", PROJECT, "--namespace", NS)).start()
        try:
            kube.apply(instance)
            kube.apply(user)
            kube.wait_ready("SQLUser", NS, "app", timeout=120)
            assert any(PASSWORD in (e.request_body or "") for e in mock.log if e.method in WRITES), "the password never reached the API"

            before = len(mock.log)
            _secret(core, NEW_PASSWORD, create=False)
            deadline = time.monotonic() + 60
            while not any(NEW_PASSWORD in (e.request_body or "") for e in list(mock.log)[before:]) and time.monotonic() < deadline:
                time.sleep(0.2)
            sent = [e for e in list(mock.log)[before:] if e.method in WRITES]
            assert [e for e in sent if NEW_PASSWORD in (e.request_body or "")], "the changed Secret was never sent"
            assert len([e for e in sent if "/users" in e.url]) == 1, [(e.method, e.url) for e in sent]
            time.sleep(3)  # more reconciles: still one write
            assert len([e for e in list(mock.log)[before:] if e.method in WRITES and "/users" in e.url]) == 1

            shown = [str(kube.get("SQLUser", NS, "app")), log.read_text(errors="replace")]
            shown += [f"{e.reason} {e.message}" for e in core.list_namespaced_event(NS).items]
            assert any("SQLUser" in s or "app" in s for s in shown[2:]), "no Event was recorded: the grep would prove nothing"
            for text in shown:
                assert PASSWORD not in text and NEW_PASSWORD not in text
        finally:
            assert op.stop() == 0, op.tail()
