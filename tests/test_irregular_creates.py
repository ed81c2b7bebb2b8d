"""Creates, updates and deletes that fit no standard method, as data (issue 30's
"not generated" rows): a wrapped create the service names or whose name or own
<x>Id travels inside the resource, a flat create request of its own (the ID in a
field named after the collection, in a resource field it carries, at the
resource's own path, or picked by the service, its answer holding the resource),
a wrapped whole-resource update, a field mask in an options object, a delete verb
on the name with an all-optional request, a number the service assigns as the
ID, and an operations.get of simple parameters. Each Kind's example (the
objects ``kccctl example`` writes) goes through the runtime on mockgcp; the
requests are checked as the document and the recordings spell them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kccgen.contract import (
    CreateAtPath,
    CreateServiceAssigned,
    CreateWithNameInBody,
    CreateWrapped,
    DeleteByVerb,
    UpdateMaskInBody,
    UpdateReplace,
)
from kccgen.discovery.document import parse_discovery, schema_path, schema_paths
from kccgen.discovery.errors import SpecError
from kccgen.documents import read_document
from kccgen.mockgcp.overrides import load_overrides
from kccgen.runtime.adapter import adapter_for
from kccgen.runtime.example import Examples
from kccgen.runtime.reconciler import CREATE_LABEL
from tests.conftest import REPO
from tests.support.scenarios import Harness, harness, kcc_object, path_of


@pytest.fixture
def h() -> Iterator[Harness]:
    with harness(host_paths=True) as hh:  # several APIs serve .../datasets: the host names which
        yield hh


def _writes(h: Harness, since: int) -> list[Any]:
    """The writes since ``since``; a read by POST (contentwarehouse's documents:get) is none."""
    return [w for w in h.writes(since) if not path_of(w).endswith(":get")]


def _apply(h: Harness, kind: str) -> tuple[dict[str, Any], list[Any]]:
    """The Kind's example Ready on mockgcp, its dependencies first: (the object, the writes its create sent)."""
    objs = Examples().manifests(kind)
    for o in objs[:-1]:
        h.ready(o)
    since = h.mark()
    obj = h.ready(objs[-1])
    return obj, _writes(h, since)


def _reapply_writes_nothing(h: Harness, obj: dict[str, Any]) -> None:
    since = h.mark()
    again = h.reconcile(obj)
    assert again.ready, again.message
    assert _writes(h, since) == []


def test_a_wrapped_create_the_service_names(h: Harness) -> None:
    a = adapter_for("HealthcareMessage")
    assert isinstance(a.create, CreateServiceAssigned) and a.create.resource_field == "message"
    obj, writes = _apply(h, "HealthcareMessage")
    (create,) = writes
    assert create.method == "POST" and set(create.request_json) == {
        "message"
    }  # the resource inside, no name of ours
    assert "name" not in create.request_json["message"]
    assert (
        obj["status"]["externalRef"].rsplit("/", 1)[-1].isdigit()
    )  # the service's ID, from the answer
    _reapply_writes_nothing(h, obj)


def test_a_wrapped_create_with_the_full_name_or_the_own_id_inside(h: Harness) -> None:
    task = adapter_for("CloudTasksTask").create
    assert isinstance(task, CreateWrapped) and (task.id_field, task.full_name) == (
        "task.name",
        True,
    )
    obj, (create,) = _apply(h, "CloudTasksTask")
    assert (
        create.request_json["task"]["name"] == obj["status"]["externalRef"]
    )  # projects/.../queues/q/tasks/t
    _reapply_writes_nothing(h, obj)
    promo = adapter_for("MerchantAPIPromotion").create
    assert isinstance(promo, CreateWrapped) and (promo.id_field, promo.full_name) == (
        "promotion.promotionId",
        False,
    )
    obj, (create,) = _apply(h, "MerchantAPIPromotion")
    assert (
        create.request_json["promotion"]["promotionId"]
        == obj["status"]["externalRef"].rsplit("/", 1)[-1]
    )
    _reapply_writes_nothing(h, obj)


def test_a_wrapped_whole_resource_update_and_a_mask_in_an_options_object(h: Harness) -> None:
    rules = adapter_for("ContentWarehouseRuleSet").update
    assert isinstance(rules, UpdateReplace) and rules.resource_field == "ruleSet"
    obj, _ = _apply(h, "ContentWarehouseRuleSet")
    since = h.mark()
    h.ready({**obj, "spec": {**obj["spec"], "description": "changed"}})
    (upd,) = _writes(h, since)
    assert (
        upd.method == "PATCH"
        and set(upd.request_json) == {"ruleSet"}
        and upd.request_json["ruleSet"]["description"] == "changed"
    )

    doc = adapter_for("ContentWarehouseDocument")
    assert (
        isinstance(doc.update, UpdateMaskInBody)
        and doc.update.mask_field == "updateOptions.updateMask"
    )
    assert isinstance(doc.delete, DeleteByVerb) and doc.delete.call.method == "delete"
    obj, _ = _apply(h, "ContentWarehouseDocument")
    since = h.mark()
    h.ready({**obj, "spec": {**obj["spec"], "displayName": "changed"}})
    (upd,) = _writes(h, since)
    assert upd.request_json == {
        "document": {"displayName": "changed"},
        "updateOptions": {"updateMask": "displayName"},
    }
    since = h.mark()
    h.delete(obj)
    (delete,) = _writes(h, since)
    assert (
        delete.method == "POST"
        and path_of(delete).endswith(":delete")
        and delete.request_json == {}
    )


def test_a_delete_verb_after_the_name_with_an_optional_request(h: Harness) -> None:
    obj, _ = _apply(h, "ComputeGlobalVMExtensionPolicy")
    ext = obj["status"]["externalRef"]
    assert f"compute.v1|{ext}" in h.server.engine.resources
    since = h.mark()
    h.delete(obj)
    (delete,) = _writes(h, since)
    assert (
        delete.method == "POST"
        and path_of(delete).endswith(f"{ext}/delete")
        and delete.request_json == {}
    )
    assert (
        f"compute.v1|{ext}" not in h.server.engine.resources
    )  # mockgcp read the verb as the delete


def test_flat_create_requests(h: Harness) -> None:
    lic = adapter_for("LicensingLicenseAssignment").create
    assert isinstance(lic, CreateWithNameInBody) and (lic.name_field, lic.request_fields) == (
        "userId",
        (),
    )
    obj, (create,) = _apply(h, "LicensingLicenseAssignment")
    assert create.request_json == {
        "userId": obj["status"]["externalRef"].rsplit("/", 1)[-1]
    }  # LicenseAssignmentInsert{userId}
    _reapply_writes_nothing(h, obj)

    script = adapter_for("ScriptProject").create
    assert isinstance(script, CreateServiceAssigned) and (
        script.id_field,
        script.request_fields,
    ) == ("scriptId", ("parentId", "title"))
    obj, (create,) = _apply(h, "ScriptProject")
    assert set(create.request_json) <= {
        "parentId",
        "title",
    }  # CreateProjectRequest: no scriptId, the service picks it
    assert (
        obj["status"]["externalRef"].startswith("projects/")
        and obj["status"]["externalRef"] != "projects/"
    )
    _reapply_writes_nothing(h, obj)

    track = adapter_for("AndroidPublisherTrack").create
    assert (
        isinstance(track, CreateWithNameInBody)
        and track.name_field == "track"
        and track.request_fields == ("track",)
    )

    settings = adapter_for("ContentCheckoutsetting").create
    assert (
        isinstance(settings, CreateAtPath)
        and settings.name_field is None
        and settings.request_fields == ("uriSettings",)
    )
    obj, (create,) = _apply(h, "ContentCheckoutsetting")
    assert path_of(create).endswith(
        "/freelistingsprogram/checkoutsettings"
    )  # a singleton: POSTed to its own path
    _reapply_writes_nothing(h, obj)


def test_an_answer_that_holds_the_resource_beside_a_private_key(h: Harness) -> None:
    cert = adapter_for("SQLSSLCert").create
    assert isinstance(cert, CreateServiceAssigned) and (cert.id_field, cert.answer_field) == (
        "sha1Fingerprint",
        "clientCert.certInfo",
    )
    obj, writes = _apply(h, "SQLSSLCert")
    (create,) = writes
    assert set(create.request_json or {}) <= {"commonName"}  # SslCertsInsertRequest
    assert "PRIVATE KEY" in create.response_body  # the service gives it once...
    assert "PRIVATE KEY" not in json.dumps(obj)  # ...and it is kept nowhere
    assert obj["status"]["externalRef"].split("/sslCerts/")[1] == obj["status"][
        "observedState"
    ].get("sha1Fingerprint", obj["status"]["externalRef"].split("/sslCerts/")[1])
    _reapply_writes_nothing(h, obj)

    key, (create,) = _apply(h, "IAMServiceAccountKey")
    assert set(create.request_json) <= {"keyAlgorithm", "privateKeyType"}
    assert "privateKeyData" not in json.dumps(key)  # not in status, not in spec


def test_an_operation_named_by_simple_parameters_is_polled() -> None:
    # appengine: an app's create answers an operation named apps/A/operations/O, polled
    # through apps.operations.get's two parameters (appsId, operationsId)
    with harness(lro_polls=2, host_paths=True) as h:
        _apply(h, "AppEngineApp")
        polls = [
            e
            for e in h.entries()
            if e.method == "GET"
            and path_of(e).split("v1/", 1)[-1].startswith("apps/")
            and "/operations/" in path_of(e)
        ]
        assert polls and all(e.status_code == 200 for e in polls)


def test_ids_from_named_fields_numbers_and_simple_operations(h: Harness) -> None:
    # a firewall rule is named by its priority
    rule, writes = _apply(h, "AppEngineFirewallRule")
    (create,) = writes
    assert str(create.request_json["priority"]) == rule["status"]["externalRef"].rsplit("/", 1)[-1]
    _reapply_writes_nothing(h, rule)

    version, (create,) = _apply(h, "ScriptVersion")
    assert (
        "versionNumber" not in create.request_json
        and version["status"]["externalRef"].rsplit("/", 1)[-1].isdigit()
    )
    _reapply_writes_nothing(h, version)

    schema, (create,) = _apply(h, "ManagedKafkaSchemaVersion")
    assert str(create.request_json["version"]) == schema["status"]["externalRef"].rsplit("/", 1)[-1]
    _reapply_writes_nothing(h, schema)


def test_schema_paths_name_every_path_and_one_only_when_unique() -> None:
    doc = parse_discovery(read_document(REPO / "specs", "sqladmin.v1"), "sqladmin.v1")
    assert schema_paths(doc, "SslCertsInsertResponse", "SslCert") == [
        "serverCaCert",
        "clientCert.certInfo",
    ]
    assert (
        schema_path(doc, "SslCertsInsertResponse", "SslCert") is None
    )  # which one is the new cert, the document does not say
    assert schema_path(doc, "SslCertDetail", "SslCert") == "certInfo"
    assert schema_path(doc, "SslCert", "SslCert") == ""


def test_a_mockgcp_id_field_override_names_a_field_the_resource_has(tmp_path: Path) -> None:
    bad = tmp_path / "overrides.yaml"
    bad.write_text("overrides:\n  - {api: drive.v2, resource: properties, idField: 3, reason: x}\n")
    with pytest.raises(SpecError, match="idField"):
        load_overrides(bad)


def test_a_lost_answer_of_a_wrapped_service_named_create_finds_the_one_made() -> None:
    """The one-time label goes on the wrapped resource (``{message: {labels}}``), so
    after a lost answer the message it made is found by that label in the store's
    list and taken: one message, never a second create."""
    a = adapter_for("HealthcareMessage").create
    assert isinstance(a, CreateServiceAssigned) and (a.label_field, a.items_field) == (
        "labels",
        "hl7V2Messages",
    )
    with harness(host_paths=True) as h:
        objs = Examples().manifests("HealthcareMessage")
        for o in objs[:-1]:
            h.ready(o)
        lost = h.server.engine.faults.add(
            method="healthcare.projects.locations.datasets.hl7V2Stores.messages.create",
            drop_answer=True,
            times=1,
        )
        since = h.mark()
        obj = h.ready(
            objs[-1]
        )  # the answer lost: the message it made is looked for, by its label, and taken
        assert lost.fired == 1  # the create's answer was lost
        creates = [w for w in h.writes(since) if w.method == "POST"]
        assert len(creates) == 1 and CREATE_LABEL in creates[0].request_json["message"]["labels"]
        made = [k for k in h.server.engine.resources if "/messages/" in k]
        assert len(made) == 1 and obj["status"]["externalRef"] == made[0].split("|", 1)[1]
        _reapply_writes_nothing(h, obj)


def test_a_reference_whose_kind_key_picks_the_kind(h: Harness) -> None:
    """Config Connector's attachmentTargetRef names a Folder by name (``kind: Folder``,
    the default) or an organization by ``external``; another kind is refused by name."""
    from kccgen.runtime.refs import check_object, references_of

    (ref,) = [
        r
        for r in references_of("ComputeFirewallPolicyAssociation")
        if r.api_path == "attachmentTarget"
    ]
    assert (ref.target, ref.kinds, ref.path) == ("Folder", ("Organization",), "attachmentTargetRef")
    policy = h.ready(
        kcc_object(
            "ComputeFirewallPolicy",
            "pol",
            {"organizationRef": {"external": "organizations/123"}, "shortName": "pol"},
        )
    )
    folder = h.ready(
        kcc_object("Folder", "fold", {"displayName": "F", "organizationRef": {"external": "123"}})
    )
    for name, target, want in (
        ("by-folder", {"kind": "Folder", "name": "fold"}, folder["status"]["externalRef"]),
        ("by-org", {"external": "organizations/123"}, "organizations/123"),
    ):
        since = h.mark()
        h.ready(
            kcc_object(
                "ComputeFirewallPolicyAssociation",
                name,
                {"firewallPolicyRef": {"name": "pol"}, "attachmentTargetRef": target},
            )
        )
        (add,) = h.writes(since)
        assert (
            path_of(add).endswith("/addAssociation")
            and add.request_json["attachmentTarget"] == want
        )
    assert policy["status"]["externalRef"]
    wrong = kcc_object(
        "ComputeFirewallPolicyAssociation",
        "by-project",
        {
            "firewallPolicyRef": {"name": "pol"},
            "attachmentTargetRef": {"kind": "Project", "name": "p"},
        },
    )
    (err,) = check_object(wrong)
    assert (
        err.path == "spec.attachmentTargetRef"
        and "'Project' is not one of Folder, Organization" in err.message
    )
    refused = h.reconcile(wrong)
    assert not refused.ready and "Project" in refused.message


def test_a_resource_read_through_its_parents_get(h: Harness) -> None:
    """monitoring v1's metricsScopes.projects has no get: a monitored project is read
    from its scope's ``monitoredProjects`` (kind config ``get.resource``), made by
    ``projects.create`` with its full name and removed by its delete."""
    a = adapter_for("MonitoringMonitoredProject")
    assert a.get.resource == ("locations", "global", "metricsScopes") and a.read_list is not None
    obj = kcc_object("MonitoringMonitoredProject", "watched", {"metricsScope": "scoping"})
    since = h.mark()
    obj = h.ready(obj)
    assert obj["status"]["externalRef"] == "locations/global/metricsScopes/scoping/projects/watched"
    (create,) = h.writes(since)
    assert path_of(create).endswith(
        "locations/global/metricsScopes/scoping/projects"
    ) and create.request_json == {"name": obj["status"]["externalRef"]}
    since = h.mark()
    assert h.reconcile(obj).ready and h.writes(since) == []
    assert [path_of(e) for e in h.entries(since)] == [
        "v1/locations/global/metricsScopes/scoping"
    ]  # one read, of the scope
    since = h.mark()
    h.delete(obj)
    (delete,) = h.writes(since)
    assert delete.method == "DELETE" and path_of(delete).endswith(
        "metricsScopes/scoping/projects/watched"
    )
    assert not [
        k for k in h.server.engine.resources if k.endswith("/projects/watched")
    ]  # the scope lists it no more


def test_a_plain_parent_field_may_name_the_parent_in_full(h: Harness) -> None:
    """Config Connector's metricsScope is the scope's name; its last segment, after
    the collection the template names it in, is the identity's value."""
    from kccgen.runtime.identity import identity_for

    ident = identity_for("MonitoringMonitoredProject")
    assert (
        ident.spec_value({"metricsScope": "locations/global/metricsScopes/s1"}, "metricsScope")
        == "s1"
    )
    assert ident.spec_value({"metricsScope": "s1"}, "metricsScope") == "s1"
    assert (
        ident.spec_value({"metricsScope": "projects/p/topics/t"}, "metricsScope")
        == "projects/p/topics/t"
    )  # not its form: left, refused later
    obj = h.ready(
        kcc_object(
            "MonitoringMonitoredProject",
            "watched",
            {"metricsScope": "locations/global/metricsScopes/scoping"},
        )
    )
    assert obj["status"]["externalRef"] == "locations/global/metricsScopes/scoping/projects/watched"
    since = h.mark()
    assert h.reconcile(obj).ready and h.writes(since) == []
