"""mockgcp/overrides.yaml: mockgcp's only facts besides the Discovery documents.

The committed table loads and every entry carries a reason; the loader
refuses what it does not understand, naming the file and the key; and the
facts take effect from the table alone (the generator's kind configs are
never read).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kccgen import data_dir
from kccgen.discovery.errors import SpecError
from kccgen.mockgcp.catalog import load_apis
from kccgen.mockgcp.engine import MockGCP
from kccgen.mockgcp.overrides import OVERRIDES_FILE, load_overrides

SPECS = data_dir("specs")


def test_committed_table_loads_with_reasons() -> None:
    table = load_overrides()
    assert table
    assert all(len(o.reason) > 20 for o in table)
    apis, _ = load_apis(SPECS)
    subs = apis["pubsub.v1"].collections["projects.subscriptions"]
    assert {"topic", "enableMessageOrdering", "filter"} <= subs.immutable
    assert "location" in apis["storage.v1"].collections["buckets"].immutable


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "overrides.yaml"
    p.write_text(text)
    return p


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("overrides:\n  - {api: pubsub.v1, resource: projects.topics, immutabel: [labels], reason: r}\n", "#/overrides/0/immutabel", "unknown key 'immutabel' (did you mean 'immutable'?)"),
        ("overrides:\n  - {api: pubsub.v1, resource: projects.topics, immutable: [labels]}\n", "#/overrides/0/reason", "'reason' is required"),
        ("overrides:\n  - {api: pubsub.v1, resource: projects.topics, reason: r}\n", "#/overrides/0", "states no fact"),
        ("overrides:\n  - {api: pubsub.v1, resource: projects.topics, immutable: labels, reason: r}\n", "#/overrides/0/immutable", "list of top-level field names"),
        ("overrides:\n  - {api: pubsub.v1, resource: projects.topics, serviceAssignedId: yes please, reason: r}\n", "#/overrides/0/serviceAssignedId", "true or false"),
        ("overide: []\n", "#/overide", "unknown key 'overide'"),
    ],
)
def test_shape_errors_name_the_file_and_key(tmp_path: Path, text: str, where: str, message: str) -> None:
    p = _write(tmp_path, text)
    with pytest.raises(SpecError) as e:
        load_overrides(p)
    assert str(e.value).startswith(f"{p}{where}: ")
    assert message in str(e.value)


@pytest.mark.parametrize(
    ("entry", "where", "message"),
    [
        ("{api: pubsub.v2, resource: projects.topics, immutable: [labels], reason: r}", "/api", "no Discovery document 'pubsub.v2' (did you mean 'pubsub.v1'?)"),
        ("{api: pubsub.v1, resource: projects.topic, immutable: [labels], reason: r}", "/resource", "pubsub.v1 has no collection 'projects.topic' (a resource whose get returns a schema) (did you mean 'projects.topics'?)"),
        ("{api: pubsub.v1, resource: projects.topics, immutable: [lables], reason: r}", "/immutable", "pubsub.v1 projects.topics has no top-level field 'lables' (did you mean 'labels'?)"),
    ],
)
def test_entries_must_name_what_the_documents_have(tmp_path: Path, entry: str, where: str, message: str) -> None:
    p = _write(tmp_path, f"overrides:\n  - {entry}\n")
    with pytest.raises(SpecError) as e:
        load_apis(SPECS, p)
    assert str(e.value) == f"{p}#/overrides/0{where}: {message}"


def test_facts_come_from_the_table_alone(tmp_path: Path) -> None:
    empty = _write(tmp_path, "overrides: []\n")
    apis, _ = load_apis(SPECS, empty)
    assert "topic" not in apis["pubsub.v1"].collections["projects.subscriptions"].immutable
    # the same document with a table that makes a topic's labels immutable
    table = _write(tmp_path, "overrides:\n  - {api: pubsub.v1, resource: projects.topics, immutable: [labels], reason: a test fact}\n")
    apis, _ = load_apis(SPECS, table)
    assert "labels" in apis["pubsub.v1"].collections["projects.topics"].immutable


def test_service_assigned_ids_from_prose_or_the_table(tmp_path: Path) -> None:
    apis, _ = load_apis(SPECS)
    mon = apis["monitoring.v3"].collections
    assert "is assigned by" in mon["projects.alertPolicies"].service_assigned
    assert "automatically assigned by the server" in mon["projects.notificationChannels"].service_assigned
    assert apis["pubsub.v1"].collections["projects.topics"].service_assigned == ""
    table = _write(tmp_path, "overrides:\n  - {api: pubsub.v1, resource: projects.schemas, serviceAssignedId: true, reason: a test fact}\n")
    apis, _ = load_apis(SPECS, table)
    assert apis["pubsub.v1"].collections["projects.schemas"].service_assigned.endswith("a test fact")


def test_immutable_subscription_topic_is_refused() -> None:
    eng = MockGCP()
    for t in ("a", "b"):
        eng.handle("PUT", f"/v1/projects/p/topics/{t}", {}, {})
    eng.handle("PUT", "/v1/projects/p/subscriptions/s", {}, {"topic": "projects/p/topics/a"})
    _, resp = eng.handle("PATCH", "/v1/projects/p/subscriptions/s", {}, {"subscription": {"topic": "projects/p/topics/b"}, "updateMask": "topic"})
    assert resp.status == 400 and "topic" in resp.body["error"]["message"]


def test_a_settable_field_is_kept_on_create_only(tmp_path: Path) -> None:
    """An unmanaged instance group's network: Discovery says output-only, the
    service takes it on insert and returns it (recorded traffic)."""
    apis, _ = load_apis(SPECS)
    groups = apis["compute.v1"].collections["instanceGroups"]
    assert "network" not in groups.output_only and "network" in groups.immutable
    bare, _ = load_apis(SPECS, _write(tmp_path, "overrides: []\n"))
    assert "network" in bare["compute.v1"].collections["instanceGroups"].output_only
    eng = MockGCP()
    base = "/compute/v1/projects/p/zones/us-central1-a/instanceGroups"
    _, resp = eng.handle("POST", base, {}, {"name": "g1", "network": "projects/p/global/networks/n1"})
    assert resp.status == 200, resp.body
    _, got = eng.handle("GET", f"{base}/g1", {}, None)
    assert str(got.body.get("network", "")).endswith("projects/p/global/networks/n1")


def test_the_file_is_package_data() -> None:
    assert OVERRIDES_FILE.parent.name == "mockgcp" and OVERRIDES_FILE.is_file()
