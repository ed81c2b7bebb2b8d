"""Config Connector's folder-id / organization-id annotations name a Folder's (or a
Project's) parent where spec names neither; a required parent that nothing names
is refused before any GCP call."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kccgen.runtime.adapter import adapter_for
from kccgen.runtime.gcp import Gcp
from tests.support.scenarios import NAMESPACE, Harness, harness


@pytest.fixture
def h() -> Iterator[Harness]:
    with harness() as hh:
        hh.gcp = Gcp(hh.server.base_url, lro_interval=0, sleep=lambda s: None, host_paths=True)
        yield hh


def _obj(kind: str, name: str, spec: dict[str, Any], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": NAMESPACE}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": adapter_for(kind).api_version, "kind": kind, "metadata": meta, "spec": spec}


def _folder(annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return _obj("Folder", "team", {"displayName": "Team"}, annotations)


def test_a_folder_takes_its_organization_from_config_connectors_annotation(h: Harness) -> None:
    since = h.mark()
    r = h.reconcile(_folder({"cnrm.cloud.google.com/organization-id": "123456789"}))
    assert r.ready, r.message
    (create,) = [e for e in h.writes(since) if e.method == "POST"]
    assert create.request_json["parent"] == "organizations/123456789"


def test_a_folder_with_no_parent_anywhere_is_refused_before_any_call(h: Harness) -> None:
    since = h.mark()
    r = h.reconcile(_folder())
    assert not r.ready and "spec.folderRef or spec.organizationRef, or the cnrm.cloud.google.com/folder-id or cnrm.cloud.google.com/organization-id annotation" in r.message
    assert h.entries(since) == []
