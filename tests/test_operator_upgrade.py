"""An operator newer than its installed CRDs (the bundle not yet re-applied):
a CRD whose status has no ``createPending`` prunes the create intent, so the
operator notices it on the first write and keeps the intent in the annotation
for that Kind. The create still happens once, and nothing is left behind."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from kccgen.mockgcp.server import MockServer
from kccgen.runtime.operator import STATUS_INTENT
from kccgen.runtime.reconciler import ANN_CREATE_PENDING
from tests.support import envtest as support
from tests.support.envtest import Kube as Kubectl
from tests.support.operator import Kube, OperatorProcess, crd_file, object_set

PROJECT = "old-project"
NS = "old"
KIND = "MonitoringNotificationChannel"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    work = tmp_path_factory.mktemp("old-crds")
    crd = yaml.safe_load(crd_file(KIND).read_text(encoding="utf-8"))
    for version in crd["spec"]["versions"]:
        status = version["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]
        assert status.pop(STATUS_INTENT), "the generated CRD has the field"
    old = work / "old-crd.yaml"
    old.write_text(yaml.safe_dump(crd), encoding="utf-8")
    with support.running(work) as kube:
        errors = kube.apply_files([old])
        name = crd["metadata"]["name"]
        assert kube.established({name}).get(name), errors
        yield kube


def test_an_older_crd_keeps_the_intent_in_the_annotation_and_creates_once(server: Kubectl, tmp_path: Path) -> None:
    kube = Kube(server.kubeconfig)
    args = ("--crd-pattern", KIND, "--project", PROJECT, "--namespace", NS)
    with MockServer() as mock:
        op = OperatorProcess(server.kubeconfig, mock.base_url, tmp_path / "op.log", args).start()
        objs = object_set([KIND], 3, NS, PROJECT, prefix="old")
        try:
            for o in objs:
                kube.apply(o)
            got = [kube.wait_ready(KIND, NS, o["metadata"]["name"], timeout=60) for o in objs]
        finally:
            assert op.stop() == 0, op.tail()
        posts = [e for e in mock.log if e.method == "POST" and "notificationChannels" in e.url]
        assert len(posts) == 3, [e.url for e in posts]
    for g in got:
        assert ANN_CREATE_PENDING not in (g["metadata"].get("annotations") or {}) and STATUS_INTENT not in g["status"]
    assert f"has no status.{STATUS_INTENT}" in op.log.read_text(errors="replace")
