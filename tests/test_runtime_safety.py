"""Runtime safety (issue 12). Creates that never duplicate: a create whose ID the
service picks is announced (persisted) before it is sent and sent once; after a
lost answer or an interrupted run the resource is looked for (its one-time label,
else its content) and adopted, created when surely absent, or CreateOutcomeUnknown
until the user settles it: never a second resource. A delete whose parent object is gone still deletes;
state-into-spec merge keeps enforcing what it merged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kccgen.mockgcp import MockServer
from kccgen.runtime.gcp import Gcp
from kccgen.runtime.local import StateDir, apply
from kccgen.runtime.reconciler import ANN_CREATE_PENDING, CREATE_LABEL

CREATE = "monitoring.projects.notificationChannels.create"


def _channel(resource_id: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": "email", "displayName": "ops", "labels": {"email_address": "ops@example.com"}}
    if resource_id:
        spec["resourceID"] = resource_id
    return {
        "apiVersion": "monitoring.cnrm.cloud.google.com/v1beta1",
        "kind": "MonitoringNotificationChannel",
        "metadata": {"name": "ops", "namespace": "default"},
        "spec": spec,
    }


def _channels(s: MockServer) -> list[dict[str, Any]]:
    out = s.client("monitoring").projects().notificationChannels().list(name="projects/p").execute()
    return list(out.get("notificationChannels") or [])


def _creates(s: MockServer) -> int:
    return sum(1 for e in s.log if e.method == "POST" and e.url.split("?")[0].endswith("/notificationChannels"))


def _apply(state: StateDir, s: MockServer, obj: dict[str, Any]) -> Any:
    [(row, result)] = _apply_all(state, s, [obj])
    return row, result


def _apply_all(state: StateDir, s: MockServer, objs: list[dict[str, Any]]) -> Any:
    """Apply under the state's lock; every object must become Ready unless it is one."""
    with state.lock():
        out = apply(objs, state, Gcp(s.base_url, host_paths=True, backoff=0.0), "p")
    if len(objs) > 1:
        assert all(r.ready for r, _ in out), [r for r, _ in out]
    return out


def test_a_lost_answer_to_a_create_is_settled_by_its_label_never_a_second_resource(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "state")
    with MockServer() as s:
        s.engine.faults.add(method=CREATE, drop_answer=True, times=1)
        row, result = _apply(state, s, _channel())
        assert row.ready, row.message  # listed, recognised by its one-time label, adopted
        assert len(_channels(s)) == 1 and _creates(s) == 1  # httplib2 used to send the POST twice
        assert result.obj["status"]["externalRef"] == _channels(s)[0]["name"]
        assert ANN_CREATE_PENDING not in (result.obj["metadata"].get("annotations") or {})
        assert any(e.reason == "Adopted" for e in result.events)
        assert _channels(s)[0]["userLabels"] == {CREATE_LABEL: _channels(s)[0]["userLabels"][CREATE_LABEL]}
        writes = len(s.log)
        row, result = _apply(state, s, _channel())  # the label is never drift
        assert row.ready and row.reason == "UpToDate", row.message
        assert [e.method for e in s.log[writes:]] == ["GET"]
        assert "userLabels" not in result.obj["status"].get("observedState", {})


def test_a_lost_answer_whose_resource_cannot_be_told_apart_is_create_outcome_unknown(tmp_path: Path) -> None:
    """An intent without a token (written before the label existed) is looked for
    by content; two unowned channels with that content are a doubt, never a guess."""
    state = StateDir(tmp_path / "state")
    with MockServer() as s:
        for _ in range(2):
            body = {k: v for k, v in _channel()["spec"].items()}
            s.client("monitoring").projects().notificationChannels().create(name="projects/p", body=body).execute()
        obj = _channel()
        obj["metadata"]["annotations"] = {ANN_CREATE_PENDING: "2026-01-01T00:00:00Z"}
        row, result = _apply(state, s, obj)
        assert (row.ready, row.reason) == (False, "CreateOutcomeUnknown"), row.message
        assert "2 listed resources could be it" in row.message and "spec.resourceID" in row.message
        assert _creates(s) == 2 and len(_channels(s)) == 2
        assert ANN_CREATE_PENDING in result.obj["metadata"]["annotations"]
        # The user settles it: delete the object (no externalRef: nothing in GCP)
        # and apply it again with the ID of the one that is theirs.
        rid = _channels(s)[0]["name"].rsplit("/", 1)[-1]
        from kccgen.runtime.local import delete

        with state.lock():
            [(gone, _)] = delete([_channel()], state, Gcp(s.base_url, host_paths=True), "p")
        assert gone.ready and len(_channels(s)) == 2, gone.message
        row, result = _apply(state, s, _channel(rid))
        assert row.ready, row.message
        assert result.obj["status"]["externalRef"] == f"projects/p/notificationChannels/{rid}"


def test_a_lost_answer_without_a_label_is_settled_by_content_among_unowned_resources(tmp_path: Path) -> None:
    """MonitoringGroup has no labels map: the listed group with the object's
    content that no other object owns is the one."""
    state = StateDir(tmp_path / "state")

    def group(name: str) -> dict[str, Any]:
        return {
            "apiVersion": "monitoring.cnrm.cloud.google.com/v1alpha1",
            "kind": "MonitoringGroup",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"displayName": "same", "filter": 'resource.type = "gce_instance"'},
        }

    with MockServer() as s:
        assert _apply_all(state, s, [group("first")])[0][0].ready
        s.engine.faults.add(method="monitoring.projects.groups.create", drop_answer=True, times=1)
        row, result = _apply(state, s, group("second"))  # same content as the first, which is owned
        assert row.ready, row.message
        groups = s.client("monitoring").projects().groups().list(name="projects/p").execute()["group"]
        assert len(groups) == 2
        assert result.obj["status"]["externalRef"] != yaml_load(state.path(group("first")).read_text(encoding="utf-8"))["status"]["externalRef"]


def test_an_intent_left_by_an_interrupted_run_is_looked_for_before_creating(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "state")

    def crash_after_persisting(obj: dict[str, Any]) -> None:
        state.write(obj)
        raise KeyboardInterrupt  # kill -9 between the intent and the POST

    with MockServer() as s:
        from kccgen.runtime.reconciler import Reconciler
        from kccgen.runtime.refs import InMemoryStore

        with pytest.raises(KeyboardInterrupt):
            obj = _channel()
            obj["metadata"]["annotations"] = {"cnrm.cloud.google.com/project-id": "p"}
            Reconciler(Gcp(s.base_url, host_paths=True), InMemoryStore(), persist=crash_after_persisting).reconcile(obj)
        assert ANN_CREATE_PENDING in state.path(obj).read_text(encoding="utf-8")
        row, _ = _apply(state, s, obj)
        assert row.ready, row.message  # not listed: the POST never left, so it is sent now
        assert _creates(s) == 1 and len(_channels(s)) == 1


def test_a_refused_create_settles_the_intent_and_the_next_apply_creates(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "state")
    with MockServer() as s:
        s.engine.faults.add(method=CREATE, status=400, message="bad channel", times=1)
        row, result = _apply(state, s, _channel())
        assert (row.ready, row.reason) == (False, "UpdateFailed") and "bad channel" in row.message
        assert ANN_CREATE_PENDING not in (result.obj["metadata"].get("annotations") or {})
        row, _ = _apply(state, s, _channel())
        assert row.ready, row.message
        assert len(_channels(s)) == 1


def test_a_user_named_create_whose_answer_is_lost_acquires_on_409(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "state")
    topic = {"apiVersion": "pubsub.cnrm.cloud.google.com/v1beta1", "kind": "PubSubTopic", "metadata": {"name": "t", "namespace": "default"}, "spec": {}}
    with MockServer() as s:
        s.engine.faults.add(method="pubsub.projects.topics.create", drop_answer=True, times=1)
        with state.lock():
            [(row, _)] = apply([topic], state, Gcp(s.base_url, host_paths=True, backoff=0.0), "p")
        assert row.ready, row.message  # the retried PUT met 409: the topic is ours, acquired
        assert row.external_ref == "projects/p/topics/t"


def test_delete_uses_status_external_ref_when_the_parent_object_is_gone(tmp_path: Path) -> None:
    """kubectl delete -f deletes in file order: the parent's object may go first."""
    from kccgen.runtime.example import Examples
    from kccgen.runtime.local import delete

    parent, child = Examples("p").manifests("AIPlatformArtifact")[-2:]
    assert child["spec"]["metadataStoreRef"] == {"name": parent["metadata"]["name"]}
    state = StateDir(tmp_path / "state")
    with MockServer() as s:
        gcp = Gcp(s.base_url, host_paths=True)
        ext = _apply_all(state, s, [parent, child])[-1][0].external_ref
        with state.lock():
            state.remove(parent)  # the parent's object is gone; its resource is not
            [(row, result)] = delete([child], state, gcp, "p")
        assert row.ready and row.reason == "Deleted", row.message
        assert any(e.reason == "ParentGone" for e in result.events)
        s.clear_log()
        from kccgen.runtime.adapter import adapter_for
        from kccgen.runtime.gcp import NotFound
        from kccgen.runtime.identity import identity_for

        a = adapter_for("AIPlatformArtifact")
        with pytest.raises(NotFound):
            gcp.call(a, a.get, dict(identity_for("AIPlatformArtifact").parse(ext)))


def test_state_into_spec_merge_keeps_enforcing_what_it_merged(tmp_path: Path) -> None:
    """merge writes the service's values into spec once; a re-applied manifest that
    leaves them out keeps them (as kubectl apply would), so drift is put back."""
    from kccgen.runtime.managed import ANN_MERGED

    topic = {"apiVersion": "pubsub.cnrm.cloud.google.com/v1beta1", "kind": "PubSubTopic", "metadata": {"name": "t", "namespace": "default"}, "spec": {}}
    sub = {
        "apiVersion": "pubsub.cnrm.cloud.google.com/v1beta1",
        "kind": "PubSubSubscription",
        "metadata": {"name": "s", "namespace": "default", "annotations": {"cnrm.cloud.google.com/state-into-spec": "merge"}},
        "spec": {"topicRef": {"name": "t"}},
    }
    state = StateDir(tmp_path / "state")
    with MockServer() as s:
        gcp = Gcp(s.base_url, host_paths=True)
        _apply_all(state, s, [topic, sub])
        stored = yaml_load(state.path(sub).read_text(encoding="utf-8"))
        merged = stored["spec"]["ackDeadlineSeconds"]
        assert "ackDeadlineSeconds" in stored["metadata"]["annotations"][ANN_MERGED].split(",")
        subs = s.client("pubsub").projects().subscriptions()
        subs.patch(name="projects/p/subscriptions/s", body={"subscription": {"ackDeadlineSeconds": merged + 20}, "updateMask": "ackDeadlineSeconds"}).execute()
        with state.lock():
            [(row, _)] = apply([sub], state, gcp, "p")  # the manifest still leaves it out
        assert row.ready, row.message
        assert subs.get(subscription="projects/p/subscriptions/s").execute()["ackDeadlineSeconds"] == merged


def yaml_load(text: str) -> Any:
    import yaml

    return yaml.safe_load(text)


def test_a_failed_read_after_a_compute_create_fails_that_object_and_keeps_its_external_ref(tmp_path: Path) -> None:
    net = {"apiVersion": "compute.cnrm.cloud.google.com/v1beta1", "kind": "ComputeNetwork", "metadata": {"name": "n", "namespace": "default"}, "spec": {"autoCreateSubnetworks": False}}
    state = StateDir(tmp_path / "state")
    with MockServer() as s:
        s.engine.faults.add(method="compute.networks.get", status=404, times=1)  # absent at first
        s.engine.faults.add(method="compute.networks.get", status=503, times=5)  # then unreadable, past every retry
        [(row, result)] = _apply_all(state, s, [net])
        assert (row.ready, row.reason) == (False, "UpdateFailed") and "reading it back failed" in row.message, row.message
        assert result.obj["status"]["externalRef"] == "projects/p/global/networks/n"
        s.clear_log()
        [(row, _)] = _apply_all(state, s, [net])
        assert row.ready, row.message
        assert [e.method for e in s.log] == ["GET"]  # read, found, up to date: no second insert


def test_messages_name_the_manifests_paths() -> None:
    """Drift and update messages say ``spec.topicRef``, where the user writes it, not the API's ``topic``."""
    from kccgen.runtime.adapter import adapter_for
    from kccgen.runtime.reconciler import _spec_path

    a = adapter_for("PubSubSubscription")
    assert _spec_path(a, "topic") == "spec.topicRef"
    assert _spec_path(a, "ackDeadlineSeconds") == "spec.ackDeadlineSeconds"
    assert _spec_path(a, "not-a-field") == "not-a-field"


def test_an_acquired_service_named_resource_deleted_outside_is_not_found_never_created_again(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "state")
    with MockServer() as s:
        made = s.client("monitoring").projects().notificationChannels().create(name="projects/p", body=_channel()["spec"]).execute()
        rid = made["name"].rsplit("/", 1)[-1]
        row, _ = _apply(state, s, _channel(rid))
        assert row.ready and _creates(s) == 1, row.message  # acquired
        s.client("monitoring").projects().notificationChannels().delete(name=made["name"]).execute()
        row, result = _apply(state, s, _channel(rid))
        assert (row.ready, row.reason) == (False, "ResourceNotFound"), row.message
        assert "deleted outside" in row.message and "remove spec.resourceID" in row.message
        assert _creates(s) == 1 and _channels(s) == []  # it used to be made again under a new ID, and the object was stuck
        assert result.obj["status"]["externalRef"] == made["name"]


def test_a_missing_or_unready_reference_is_a_dependency_reason_not_update_failed(tmp_path: Path) -> None:
    """Parent references (identity) and other references alike."""
    state = StateDir(tmp_path / "state")
    sub = {
        "apiVersion": "pubsub.cnrm.cloud.google.com/v1beta1",
        "kind": "PubSubSubscription",
        "metadata": {"name": "s", "namespace": "default"},
        "spec": {"topicRef": {"name": "absent"}},
    }
    key = {
        "apiVersion": "kms.cnrm.cloud.google.com/v1beta1",
        "kind": "KMSCryptoKey",
        "metadata": {"name": "k", "namespace": "default"},
        "spec": {"keyRingRef": {"name": "absent-ring"}, "purpose": "ENCRYPT_DECRYPT"},
    }
    with MockServer() as s:
        for obj, path in ((sub, "spec.topicRef"), (key, "spec.keyRingRef")):
            row, _ = _apply(state, s, obj)
            assert (row.ready, row.reason) == (False, "DependencyNotFound"), row.message
            assert path in row.message
        assert not [e for e in s.log if e.method != "GET"]
