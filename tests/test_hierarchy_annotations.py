"""Config Connector's folder-id / organization-id annotations name a Folder's (or a
Project's) parent where spec names neither; a required parent that nothing names
is refused before any GCP call."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.scenarios import Harness, harness, kcc_object


@pytest.fixture
def h() -> Iterator[Harness]:
    with harness(host_paths=True) as hh:
        yield hh



def _folder(annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return kcc_object("Folder", "team", {"displayName": "Team"}, annotations)


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
