"""A Kind whose spec is a part of the resource (kccgen.contract.Adapter.view):
DLPStoredInfoType's spec is the stored infoType's currentVersion.config.

Also the create-request rule behind it: a field that "has no effect" (dlp's
deprecated ``locationId``) is neither the ID nor an input, so DLP's templates
and triggers send their ID as ``templateId`` / ``triggerId``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kccgen.contract import CreateWrapped
from kccgen.runtime.adapter import adapter_for
from tests.support.scenarios import PROJECT, Harness, harness, kcc_object, query_of

LOCATION = "us-west2"


@pytest.fixture
def h() -> Iterator[Harness]:
    with harness(host_paths=True) as hh:
        yield hh


def _stored(**spec: Any) -> dict[str, Any]:
    body = {"projectRef": {"external": f"projects/{PROJECT}"}, "location": LOCATION, "displayName": "sample-type", **spec}
    return kcc_object("DLPStoredInfoType", "regex-type", body)


def test_stored_info_type_round_trip_reads_the_current_versions_config(h: Harness) -> None:
    since = h.mark()
    r = h.reconcile(_stored(regex={"pattern": "([a-z]*)(.+)", "groupIndexes": [0, 1]}))
    assert r.ready, r.message
    assert r.obj["status"]["externalRef"] == f"projects/{PROJECT}/locations/{LOCATION}/storedInfoTypes/regex-type"
    (create,) = h.writes(since)
    assert create.request_json == {"storedInfoTypeId": "regex-type", "config": {"displayName": "sample-type", "regex": {"pattern": "([a-z]*)(.+)", "groupIndexes": [0, 1]}}}

    since = h.mark()
    again = h.reconcile(r.obj)
    assert again.ready and h.writes(since) == [], again.message

    since = h.mark()
    changed = {**again.obj, "spec": {**again.obj["spec"], "description": "now described"}}
    done = h.reconcile(changed)
    assert done.ready, done.message
    (patch,) = h.writes(since)
    assert patch.method == "PATCH" and patch.request_json == {"config": {"description": "now described"}, "updateMask": "description"}
    live = h.server.client("dlp.v2").projects().locations().storedInfoTypes().get(name=r.obj["status"]["externalRef"]).execute()
    assert live["currentVersion"]["config"]["description"] == "now described"
    assert live["currentVersion"]["config"]["regex"]["pattern"] == "([a-z]*)(.+)"
    assert "updateMask" not in query_of(patch)


@pytest.mark.parametrize(("kind", "id_field"), [("DLPJobTrigger", "triggerId"), ("DLPInspectTemplate", "templateId"), ("DLPStoredInfoType", "storedInfoTypeId")])
def test_dlp_creates_name_the_resource_by_its_own_id_field(kind: str, id_field: str) -> None:
    shape = adapter_for(kind).create
    assert isinstance(shape, CreateWrapped) and shape.id_field == id_field
    assert all(i.field != "locationId" for i in shape.inputs)


def test_a_dlp_stored_info_type_without_a_location_is_global(h: Harness) -> None:
    """Config Connector's samples leave DLP's location out: global (kind config default)."""
    obj = _stored(regex={"pattern": "x+"})
    del obj["spec"]["location"]
    r = h.reconcile(obj)
    assert r.ready, r.message
    assert r.obj["status"]["externalRef"] == f"projects/{PROJECT}/locations/global/storedInfoTypes/regex-type"
