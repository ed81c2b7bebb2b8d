"""Values the service spells its own way are sent and compared in its spelling
(issue 12, rule fixes): a bucket's ``eu`` is ``EU``; a Spanner instance's
config ``regional-us-central1`` is ``projects/P/instanceConfigs/...``. The rule
is data in each adapter (kccgen.contract.Canonical), derived from the Discovery
description or stated in the kind config, never code per Kind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kccgen.contract import Canonical
from kccgen.generator.ir.canonical import expansion
from kccgen.mockgcp import MockServer
from kccgen.runtime.adapter import adapter_for
from kccgen.runtime.gcp import Gcp
from kccgen.runtime.local import StateDir, apply


def _apply(state: StateDir, s: MockServer, obj: dict[str, Any]) -> Any:
    with state.lock():
        [(row, _result)] = apply([obj], state, Gcp(s.base_url, host_paths=True), "p")
    return row


def test_the_rules_are_data_in_the_adapters() -> None:
    assert Canonical(field="location", case="upper") in adapter_for("StorageBucket").canonical
    assert Canonical(field="config", expand="projects/{project}/instanceConfigs/{}") in adapter_for("SpannerInstance").canonical


def test_a_form_in_the_description_becomes_an_expansion() -> None:
    assert expansion("projects//instanceConfigs/", "projects/{project}/instances/{instance}") == "projects/{project}/instanceConfigs/{}"
    assert expansion("projects/{project}/locations/{zone}", "projects/{project}/instances/{instance}/clusters/{cluster}") == "projects/{project}/locations/{}"
    assert expansion("organizations//things/", "projects/{project}/instances/{instance}") is None  # nothing fills organizations


def test_a_lower_case_bucket_location_is_not_drift(tmp_path: Path) -> None:
    bucket = {
        "apiVersion": "storage.cnrm.cloud.google.com/v1beta1",
        "kind": "StorageBucket",
        "metadata": {"name": "kccgen-canonical-bucket", "namespace": "default"},
        "spec": {"location": "eu"},
    }
    state = StateDir(tmp_path / "st")
    with MockServer() as s:
        row = _apply(state, s, bucket)
        assert row.ready, row.message
        assert [e.request_json["location"] for e in s.log if e.method == "POST"] == ["EU"]
        mark = len(s.log)
        row = _apply(state, s, bucket)  # used to be UpdateFailed: "cannot change immutable field location"
        assert (row.ready, row.reason) == (True, "UpToDate"), row.message
        assert [e.method for e in s.log[mark:]] == ["GET"]


def test_a_short_spanner_config_is_expanded_as_config_connector_does(tmp_path: Path) -> None:
    instance = {
        "apiVersion": "spanner.cnrm.cloud.google.com/v1beta1",
        "kind": "SpannerInstance",
        "metadata": {"name": "canonical-instance", "namespace": "default"},
        "spec": {"config": "regional-us-central1", "displayName": "Canonical", "numNodes": 1},
    }
    state = StateDir(tmp_path / "st")
    with MockServer() as s:
        row = _apply(state, s, instance)
        assert row.ready, row.message
        [create] = [e.request_json for e in s.log if e.method == "POST"]
        assert create["instance"]["config"] == "projects/p/instanceConfigs/regional-us-central1"
        mark = len(s.log)
        row = _apply(state, s, instance)
        assert (row.ready, row.reason) == (True, "UpToDate"), row.message
        assert [e.method for e in s.log[mark:]] == ["GET"]
