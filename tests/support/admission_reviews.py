"""AdmissionReviews as a Kubernetes API server sends them to a validating webhook,
and objects recorded from a real (envtest) API server to put in them.

* ``admission_review(operation, obj, old)``: an admission.k8s.io/v1
  AdmissionReview request (kind, resource, requestKind, names, userInfo,
  options, dryRun) for a CREATE, UPDATE or DELETE;
* ``Recorder(kube)``: installs a Kind's CRD on the envtest server, applies
  objects (server-side apply, as kubectl does), writes status through the
  status subresource, and returns what the server stored (uid,
  resourceVersion, generation, managedFields): the objects an API server puts
  in ``object`` / ``oldObject``.
"""

from __future__ import annotations

import copy
import json
import uuid
from typing import Any

from kccgen.runtime import registry
from tests.support.envtest import Kube
from tests.support.operator import crd_file

FIELD_MANAGER = "kubectl"


def resource_of(kind: str) -> tuple[str, str]:
    """(plural, group) of the Kind's CRD."""
    group, _, plural = registry.resource_of(kind)
    return plural, group


def admission_review(
    operation: str,
    obj: dict[str, Any] | None = None,
    old: dict[str, Any] | None = None,
    *,
    uid: str | None = None,
    dry_run: bool = False,
    field_manager: str = FIELD_MANAGER,
) -> dict[str, Any]:
    """The AdmissionReview an API server sends for ``operation`` on ``obj``
    (``old``: the stored object, for UPDATE and DELETE)."""
    some = obj if obj is not None else old
    assert some is not None, "an AdmissionReview is about an object"
    group, _, version = str(some["apiVersion"]).rpartition("/")
    kind = str(some["kind"])
    plural, _ = resource_of(kind)
    meta = some.get("metadata") or {}
    options_kind = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}[operation]
    options: dict[str, Any] = {"apiVersion": "meta.k8s.io/v1", "kind": options_kind}
    if operation != "DELETE":
        options["fieldManager"] = field_manager
    gvk = {"group": group, "version": version, "kind": kind}
    gvr = {"group": group, "version": version, "resource": plural}
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid or str(uuid.uuid4()),
            "kind": gvk,
            "resource": gvr,
            "requestKind": gvk,
            "requestResource": gvr,
            "name": meta.get("name", ""),
            "namespace": meta.get("namespace", ""),
            "operation": operation,
            "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]},
            "object": copy.deepcopy(obj) if operation != "DELETE" else None,
            "oldObject": copy.deepcopy(old) if operation != "CREATE" else None,
            "dryRun": dry_run,
            "options": options,
        },
    }


class Recorder:
    """Objects as a real API server stores them (envtest)."""

    def __init__(self, kube: Kube) -> None:
        self.kube = kube

    def install(self, *kinds: str) -> None:
        files = [crd_file(k) for k in kinds]
        errors = self.kube.apply_files(files, jobs=1)
        assert not errors.strip(), errors
        names = {f"{resource_of(k)[0]}.{resource_of(k)[1]}" for k in kinds}
        crds = self.kube.established(names, timeout=60)
        assert all(crds.get(n) for n in names), crds

    def get(self, kind: str, namespace: str, name: str) -> dict[str, Any]:
        plural, group = resource_of(kind)
        got: dict[str, Any] = self.kube.get_json(f"{plural}.{group}", name, "-n", namespace, "--show-managed-fields")
        return got

    def apply(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Server-side apply ``obj`` (its metadata.generation and status left out,
        as in a manifest) and return the stored object."""
        body = copy.deepcopy(obj)
        body.pop("status", None)
        meta = body.setdefault("metadata", {})
        for k in ("generation", "uid", "resourceVersion", "creationTimestamp", "managedFields"):
            meta.pop(k, None)
        out = self.kube.apply(body, manager=FIELD_MANAGER)
        assert out.returncode == 0, out.stderr
        return self.get(str(obj["kind"]), meta["namespace"], meta["name"])

    def set_status(self, obj: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
        """Merge ``status`` through the status subresource, as the controller does."""
        plural, group = resource_of(str(obj["kind"]))
        meta = obj["metadata"]
        out = self.kube.kubectl(
            "patch", f"{plural}.{group}", meta["name"], "-n", meta["namespace"],
            "--subresource=status", "--type=merge", "-p", json.dumps({"status": status}),
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        return self.get(str(obj["kind"]), meta["namespace"], meta["name"])

    def delete(self, obj: dict[str, Any]) -> None:
        plural, group = resource_of(str(obj["kind"]))
        meta = obj["metadata"]
        self.kube.kubectl("delete", f"{plural}.{group}", meta["name"], "-n", meta["namespace"], "--ignore-not-found", "--wait=false")
