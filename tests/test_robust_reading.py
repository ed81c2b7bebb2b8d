"""Reading as Kubernetes reads (issue 31, "robust reading").

An unquoted timestamp in a manifest is the string it is in JSON, as the API
server's YAML-to-JSON keeps it, not a datetime a string field refuses (Config
Connector's test cases write ``startTime: 2026-11-10T00:00:00Z``). An identity
the service answers in a form we cannot read fails that object with its reason,
never the whole apply.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kccgen.runtime import reconciler as reconciler_module
from kccgen.runtime.admission import YAML_LOADER, admission_errors
from kccgen.runtime.identity import IdentityError
from kccgen.runtime.manifests import load_manifests
from tests.support.scenarios import Harness, harness, kcc_object


def test_an_unquoted_timestamp_is_read_as_the_string_it_is(tmp_path: Path) -> None:
    manifest = tmp_path / "secret.yaml"
    manifest.write_text(
        "apiVersion: secretmanager.cnrm.cloud.google.com/v1beta1\nkind: SecretManagerSecret\nmetadata:\n  name: s\n"
        "spec:\n  expireTime: 2030-08-22T23:20:50.52Z\n  replication: {automatic: {}}\n",
        encoding="utf-8",
    )
    (obj,) = load_manifests([manifest])
    assert obj["spec"]["expireTime"] == "2030-08-22T23:20:50.52Z"
    assert admission_errors(obj) == []


def test_other_scalars_keep_their_yaml_types() -> None:
    doc = yaml.load("a: 2026-11-10\nb: 1\nc: true\nd: 1.5\ne: null\nf: '2026-11-10'", Loader=YAML_LOADER)
    assert doc == {"a": "2026-11-10", "b": 1, "c": True, "d": 1.5, "e": None, "f": "2026-11-10"}


@pytest.fixture
def h() -> Any:
    with harness(host_paths=True) as hh:
        yield hh


def test_an_identity_that_cannot_be_read_fails_its_object_and_the_next_one_still_reconciles(h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    real = reconciler_module.Reconciler._values

    def unreadable(self: Any, obj: dict[str, Any], a: Any, ext: Any) -> Any:
        if obj["metadata"]["name"] == "bad":  # as the identity's parse raises, reading the name it was given
            raise IdentityError("PubSubTopic", "v3/projects/p/topics/bad", "projects/{project}/topics/{topic}")
        return real(self, obj, a, ext)

    monkeypatch.setattr(reconciler_module.Reconciler, "_values", unreadable)
    bad = h.reconcile(kcc_object("PubSubTopic", "bad", {}))
    assert not bad.ready and bad.reason == "UpdateFailed" and "v3/projects/p/topics/bad" in bad.message
    assert h.reconcile(kcc_object("PubSubTopic", "good", {})).ready


def test_a_user_named_create_answered_in_another_spelling_keeps_its_own_name(h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    def other_form(self: Any, a: Any, result: Any, values: Any) -> str:
        raise IdentityError("PubSubTopic", f"v1/{result.get('name')}", "projects/{project}/topics/{topic}")

    monkeypatch.setattr(reconciler_module.Reconciler, "_external_from", other_form)
    r = h.reconcile(kcc_object("PubSubTopic", "t", {}))
    assert r.ready, r.message
    assert r.obj["status"]["externalRef"].endswith("/topics/t")
