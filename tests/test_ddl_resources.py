"""A resource made by a statement and a schema that is only appended to: SpannerDatabase.

Config Connector's recorded traffic (spanner/v1beta1/spannerdatabase, hand-written
extract): ``POST v1/projects/{p}/instances/{i}/databases`` with the body
``{createStatement: "CREATE DATABASE `db`"}``, polled at
``.../databases/{db}/operations/{op}``; then ``PATCH .../databases/{db}/ddl``
with ``{statements: ["CREATE TABLE t1 (t1 INT64 NOT NULL,) PRIMARY KEY(t1)"]}``,
polled; the delete is ``DELETE .../databases/{db}``. Here: the create is a
``CreateByStatement`` (kind config ``shape: statement``), the schema an
append-only companion (getDdl / updateDdl).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kccgen.contract import CreateByStatement
from kccgen.runtime.adapter import adapter_for
from tests.support.scenarios import PROJECT, Harness, harness, kcc_object, path_of

DB = f"projects/{PROJECT}/instances/i1/databases/db1"
T1 = "CREATE TABLE t1 (t1 INT64 NOT NULL,) PRIMARY KEY(t1)"
T2 = "CREATE TABLE t2 (t2 INT64 NOT NULL,) PRIMARY KEY(t2)"


@pytest.fixture
def h() -> Iterator[Harness]:
    with harness() as hh:
        hh.ready(kcc_object("SpannerInstance", "i1", {"config": "regional-us-central1", "displayName": "i1", "numNodes": 1}))
        yield hh


def _db(name: str = "db1", **spec: Any) -> dict[str, Any]:
    return kcc_object("SpannerDatabase", name, {"instanceRef": {"name": "i1"}, **spec})


def _writes(h: Harness, since: int) -> list[tuple[str, str, Any]]:
    return [(e.method, path_of(e).split("/instances/i1/", 1)[-1], e.request_json) for e in h.writes(since)]


def test_the_adapter_creates_by_statement_and_keeps_the_ddl_beside() -> None:
    a = adapter_for("SpannerDatabase")
    assert isinstance(a.create, CreateByStatement) and a.create.statement_field == "createStatement"
    assert dict(a.create.statements) == {"": "CREATE DATABASE `{id}`", "POSTGRESQL": 'CREATE DATABASE "{id}"'}
    (ddl,) = a.companions
    assert (ddl.field, ddl.get.method, ddl.update.method, ddl.api_field, ddl.append_only) == ("ddl", "getDdl", "updateDdl", "statements", True)
    assert a.delete.call.method == "dropDatabase"  # type: ignore[union-attr]


def test_create_appends_the_schema_and_only_new_statements_are_sent(h: Harness) -> None:
    since = h.mark()
    obj = h.ready(_db(ddl=[T1]))
    assert obj["status"]["externalRef"] == DB
    assert _writes(h, since) == [
        ("POST", "databases", {"createStatement": "CREATE DATABASE `db1`"}),  # as Config Connector sends it
        ("PATCH", "databases/db1/ddl", {"statements": [T1]}),
    ]

    since = h.mark()
    assert h.reconcile(obj).ready and h.writes(since) == []  # GET of the database and of its DDL, no write

    since = h.mark()
    obj = h.ready({**obj, "spec": {**obj["spec"], "ddl": [T1, T2]}})
    assert _writes(h, since) == [("PATCH", "databases/db1/ddl", {"statements": [T2]})]  # the new one only

    since = h.mark()
    refused = h.reconcile({**obj, "spec": {**obj["spec"], "ddl": [T2]}})
    assert not refused.ready and "spec.ddl" in refused.message and "appended" in refused.message and h.writes(since) == []

    since = h.mark()
    h.ready({**obj, "spec": {**obj["spec"], "enableDropProtection": True}})
    ((method, path, body),) = _writes(h, since)
    assert method == "PATCH" and path == "databases/db1" and body == {"enableDropProtection": True}

    since = h.mark()
    off = h.ready({**obj, "spec": {**obj["spec"], "enableDropProtection": False}})
    assert h.delete(off).deleted
    assert [(m, p) for m, p, _ in _writes(h, since)][-1] == ("DELETE", "databases/db1")


def test_a_postgresql_database_is_named_in_double_quotes(h: Harness) -> None:
    since = h.mark()
    h.ready(_db("pg1", databaseDialect="POSTGRESQL"))
    ((method, path, body),) = _writes(h, since)
    assert (method, path) == ("POST", "databases") and body == {"createStatement": 'CREATE DATABASE "pg1"', "databaseDialect": "POSTGRESQL"}
