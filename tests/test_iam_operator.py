"""Issue 29's concurrency acceptance with the operator among the writers: IAMPolicyMember
objects on one bucket applied by three ``kccctl apply`` processes (separate state
directories) and by ``kccctl operator`` on the envtest API server at once, mockgcp
refusing a third of the ``setIamPolicy`` calls as an etag conflict. The policy ends
with exactly the union; deleting members (in the cluster and through kccctl)
leaves exactly the others and the partial policy's bindings."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kccgen.mockgcp.server import MockServer
from kccgen.runtime.iam import as_sets
from tests.support import envtest as support
from tests.support.envtest import Kube as Kubectl
from tests.support.operator import Kube, OperatorProcess, crd_file

REPO = Path(__file__).resolve().parents[1]
NS = "iam"
PROJECT = "iam-project"
KINDS = ("IAMPartialPolicy", "IAMPolicyMember", "StorageBucket")
IAM = "iam.cnrm.cloud.google.com/v1beta1"
ROLE = "roles/storage.objectViewer"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    with support.running(tmp_path_factory.mktemp("iam-server")) as kube:
        files = [crd_file(k) for k in KINDS]
        errors = kube.apply_files(files)
        names = {f.name.removesuffix(".yaml") for f in files}
        assert all(kube.established(names).values()), errors
        yield kube


def _member(i: int, ns: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": f"m{i:02d}"}
    if ns:
        meta["namespace"] = ns
    return {"apiVersion": IAM, "kind": "IAMPolicyMember", "metadata": meta, "spec": {"member": f"user:u{i:02d}@example.com", "role": ROLE, "resourceRef": {"kind": "StorageBucket", "external": "b1"}}}


PARTIAL = {
    "apiVersion": IAM,
    "kind": "IAMPartialPolicy",
    "metadata": {"name": "pp"},
    "spec": {"resourceRef": {"kind": "StorageBucket", "external": "b1"}, "bindings": [{"role": "roles/storage.admin", "members": [{"member": "group:admins@example.com"}]}]},
}
BUCKET = {"apiVersion": "storage.cnrm.cloud.google.com/v1beta1", "kind": "StorageBucket", "metadata": {"name": "b1", "annotations": {"cnrm.cloud.google.com/project-id": PROJECT}}, "spec": {"location": "US"}}


def _kccctl(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "kccgen.runtime.cli", *args], cwd=REPO, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _policy(mock: MockServer) -> dict[tuple[str, str], set[str]]:
    key = next(k for k in mock.engine.policies if k.endswith("b/b1") or k.endswith("|b1"))
    return as_sets(mock.engine.policies[key].get("bindings"))


def test_kccctl_processes_and_the_operator_end_with_the_union(server: Kubectl, tmp_path: Path) -> None:
    kube = Kube(server.kubeconfig)
    with MockServer() as mock:
        common = ("--endpoint", mock.base_url, "--project", PROJECT, "--host-paths")
        bucket = tmp_path / "bucket.yaml"
        bucket.write_text(yaml.safe_dump(BUCKET), encoding="utf-8")
        first = _kccctl("apply", "-f", str(bucket), "--state", str(tmp_path / "s0"), *common)
        assert first.wait(300) == 0, first.stdout.read() if first.stdout else ""
        conflicts = mock.engine.faults.add(method="storage.buckets.setIamPolicy", status=412, message="etag mismatch", probability=1 / 3)
        op = OperatorProcess(server.kubeconfig, mock.base_url, tmp_path / "operator.log", ("--crd-pattern", ";".join(KINDS), "--project", PROJECT, "--namespace", NS)).start()
        try:
            kube_objs = [_member(i, NS) for i in range(15, 20)]
            files = []
            for n, part in enumerate(([_member(i) for i in range(0, 5)], [_member(i) for i in range(5, 10)], [*(_member(i) for i in range(10, 15)), PARTIAL])):
                f = tmp_path / f"part{n}.yaml"
                f.write_text(yaml.safe_dump_all(part), encoding="utf-8")
                files.append(f)
            procs = [_kccctl("apply", "-f", str(f), "--state", str(tmp_path / f"s{n + 1}"), *common) for n, f in enumerate(files)]
            for o in kube_objs:
                kube.apply(o)
            outs = [(p.wait(300), p.stdout.read() if p.stdout else "") for p in procs]
            assert all(code == 0 for code, _ in outs), outs
            for o in kube_objs:
                kube.wait_ready("IAMPolicyMember", NS, o["metadata"]["name"], timeout=120)
            assert conflicts.fired > 0
            want = {(ROLE, ""): {f"user:u{i:02d}@example.com" for i in range(20)}, ("roles/storage.admin", ""): {"group:admins@example.com"}}
            assert _policy(mock) == want

            # five deleted in the cluster, five through kccctl, at once
            gone = _kccctl("delete", *(f"iampolicymember/m{i:02d}" for i in range(0, 5)), "--state", str(tmp_path / "s1"), *common)
            for i in range(15, 20):
                kube.delete("IAMPolicyMember", NS, f"m{i:02d}")
            assert gone.wait(300) == 0, gone.stdout.read() if gone.stdout else ""
            for i in range(15, 20):
                kube.wait_gone("IAMPolicyMember", NS, f"m{i:02d}", timeout=120)
            deadline = time.monotonic() + 30
            want[(ROLE, "")] = {f"user:u{i:02d}@example.com" for i in range(5, 15)}
            while _policy(mock) != want and time.monotonic() < deadline:
                time.sleep(0.2)
            assert _policy(mock) == want
        finally:
            assert op.stop() == 0, op.tail()
