"""Objects read from a Secret's keys (kccgen.contract.SecretObject): Config
Connector's BigQueryConnectionConnection ``cloudSQL: {instanceRef, databaseRef,
credential: {secretRef: {name}}}``, as its IAM sample folder with a BigQuery
connection writes it (a kubernetes.io/basic-auth Secret's ``username`` and
``password``). The request carries the instance's connection name, the
database's name and the two strings, never the reference; the values appear
nowhere else; a changed Secret is one write; a missing one or key is
DependencyNotFound naming it, before any call."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from kccgen.contract import SecretObject
from kccgen.runtime.adapter import adapter_for
from kccgen.runtime.admission import admission_errors
from kccgen.runtime.secrets import ANN_SECRET_DIGEST
from tests.support.scenarios import NAMESPACE, PROJECT, Harness, harness, kcc_object

PASSWORD = "bq-pw-51c0ffee-never-shown"
NEW_PASSWORD = "bq-pw-77beef-also-never-shown"


@pytest.fixture
def h() -> Iterator[Harness]:
    with harness(host_paths=True) as hh:
        yield hh


def _secret(h: Harness, password: str, **extra: str) -> None:
    h.store.add(
        {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/basic-auth", "metadata": {"name": "bq-cred", "namespace": NAMESPACE}, "stringData": {"username": "reader", "password": password, **extra}}
    )


def _sql(h: Harness) -> None:
    h.ready(kcc_object("SQLInstance", "db1", {"databaseVersion": "MYSQL_5_7", "region": "us-central1", "settings": {"tier": "db-custom-1-3840"}}))
    h.ready(kcc_object("SQLDatabase", "app", {"instanceRef": {"name": "db1"}, "charset": "utf8"}))


def _connection(**credential: Any) -> dict[str, Any]:
    cloud_sql = {"instanceRef": {"name": "db1"}, "databaseRef": {"name": "app"}, "type": "MYSQL", "credential": credential or {"secretRef": {"name": "bq-cred"}}}
    return kcc_object("BigQueryConnectionConnection", "conn", {"location": "us-central1", "projectRef": {"external": PROJECT}, "cloudSQL": cloud_sql})


def test_the_adapter_reads_the_credential_from_a_secret() -> None:
    a = adapter_for("BigQueryConnectionConnection")
    assert a.secret_objects == (SecretObject("cloudSql.credential", (("password", "password"), ("username", "username"))),)


def test_the_request_carries_the_secrets_strings_and_nothing_else_does(h: Harness) -> None:
    _sql(h)
    _secret(h, PASSWORD)
    since = h.mark()
    obj = h.ready(_connection())
    (create,) = h.writes(since)
    assert create.request_json["cloudSql"] == {
        "instanceId": f"{PROJECT}:us-central1:db1",  # the instance's connection name, as Config Connector sends it
        "database": "app",
        "type": "MYSQL",
        "credential": {"username": "reader", "password": PASSWORD},
    }
    assert PASSWORD not in json.dumps(obj)  # status, annotations: a digest at most
    assert obj["metadata"]["annotations"][ANN_SECRET_DIGEST].startswith("sha256:")
    assert obj["spec"]["cloudSQL"]["credential"] == {"secretRef": {"name": "bq-cred"}}  # the spec as written

    since = h.mark()
    assert h.reconcile(obj).ready and h.writes(since) == []  # unchanged Secret: no write

    _secret(h, NEW_PASSWORD)
    since = h.mark()
    again = h.ready(obj)
    (patch,) = h.writes(since)
    assert patch.method == "PATCH" and patch.request_json["cloudSql"]["credential"]["password"] == NEW_PASSWORD
    assert NEW_PASSWORD not in json.dumps(again)


def test_the_fields_themselves_still_work_and_both_at_once_are_refused(h: Harness) -> None:
    _sql(h)
    since = h.mark()
    h.ready(_connection(username="u", password="p"))
    (create,) = h.writes(since)
    assert create.request_json["cloudSql"]["credential"] == {"username": "u", "password": "p"}
    both = _connection(password="p", secretRef={"name": "bq-cred"})
    assert any("at most one of secretRef, password" in e for e in admission_errors(both))  # the API server's CEL, and kccctl's
    assert admission_errors(_connection()) == []


@pytest.mark.parametrize("missing", ["secret", "key"])
def test_a_missing_secret_or_key_is_dependency_not_found_before_any_call(h: Harness, missing: str) -> None:
    _sql(h)
    if missing == "key":
        h.store.add({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "bq-cred", "namespace": NAMESPACE}, "stringData": {"username": "reader"}})
    since = h.mark()
    r = h.reconcile(_connection())
    assert (r.ready, r.reason) == (False, "DependencyNotFound")
    assert f"Secret {NAMESPACE}/bq-cred" in r.message and "cloudSql.credential" in r.message
    if missing == "key":
        assert "'password'" in r.message
    assert h.writes(since) == []
