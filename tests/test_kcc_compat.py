"""Config Connector's fixtures against our CRDs and models: docs/kcc-compat.md.

* the committed table equals a fresh one (drift test);
* every LEGACY entry is used, and every path it covers is a field of KCC's own
  CRD for the Kind (so "legacy Config Connector shape" is never a cover for a
  typo or a field nobody has);
* KCC's own CRDs accept every fixture under the same strict validation (the
  validator is not stricter than the API server);
* no reason is "our defect".
"""

from __future__ import annotations

import difflib
from collections import Counter
from typing import Any

import pytest

from tests.conftest import COMPAT, REPO
from tests.support.kinds import kcc_kinds
from tools.kcc_compat import (
    DOC_PATH,
    LEGACY,
    ErrorKind,
    Row,
    build_table,
    crd_schemas,
    fixture_docs,
    generic,
    kcc_crd_errors,
    kind_models,
    legacy_key,
    model_errors,
    reasons_for,
    render_markdown,
    strict_schema,
    validator,
)
from tools.kcc_compat import crd_errors as crd_errors_

FIXTURES = COMPAT / "fixtures"

needs_fixtures = pytest.mark.skipif(
    not FIXTURES.is_dir(),
    reason=f"KCC fixtures not found at {FIXTURES}: docs/kcc-compat.md cannot be checked",
)


@pytest.fixture(scope="module")
def table() -> list[Row]:
    return build_table(REPO, COMPAT)


# --- the committed report ------------------------------------------------------------------


@needs_fixtures
def test_committed_report_is_current(table: list[Row]) -> None:
    fresh = render_markdown(table)
    path = REPO / DOC_PATH
    committed = path.read_text(encoding="utf-8") if path.is_file() else ""
    if committed != fresh:
        diff = "".join(
            list(
                difflib.unified_diff(
                    committed.splitlines(keepends=True),
                    fresh.splitlines(keepends=True),
                    "committed",
                    "fresh",
                )
            )[:60]
        )
        pytest.fail(f"{DOC_PATH} is stale: run `python -m tools.kcc_compat`\n{diff}")


@needs_fixtures
def test_report_is_deterministic(table: list[Row]) -> None:
    assert render_markdown(list(reversed(table))) == render_markdown(table)


@needs_fixtures
def test_fixtures_cover_every_kind_config_connector_shares(table: list[Row]) -> None:
    """Every generated Kind that the compat folder has Config Connector's CRD for has
    fixtures in the table; Kinds Config Connector's folder lacks are simply not there."""
    shared = kcc_kinds() & set(kind_models())
    assert shared, "no generated Kind has a Config Connector CRD in the compat folder"
    assert {r.kind for r in table} == shared


# --- the classification table ----------------------------------------------------------------


@needs_fixtures
def test_every_legacy_entry_is_used(table: list[Row]) -> None:
    used = Counter(
        legacy_key(row.kind, r.path, r.error)
        for row in table
        for r in row.reasons
        if not r.is_defect
    )
    assert sorted(set(LEGACY) - set(used)) == []


def _kcc_node(schema: dict[str, Any], path: str) -> dict[str, Any] | None:
    """The KCC schema node at a generic path (``a.b[].c``), or None."""
    node: dict[str, Any] | None = schema
    for part in path.replace("[]", ".[]").split("."):
        if node is None:
            return None
        if part == "[]":
            node = node.get("items")
        elif part in (node.get("properties") or {}):
            node = node["properties"][part]
        elif isinstance(node.get("additionalProperties"), dict):
            node = node["additionalProperties"]
        else:
            return None
    return node


@needs_fixtures
def test_legacy_paths_are_fields_of_kccs_crd(table: list[Row]) -> None:
    by_kind = {kind: s for (_, kind), s in crd_schemas(COMPAT / "crds").items()}
    missing = [
        f"{row.fixture}: {row.kind} {r.path}"
        for row in table
        for r in row.reasons
        if not r.is_defect and _kcc_node(by_kind[row.kind], generic(r.path)) is None
    ]
    assert missing == []


@needs_fixtures
def test_kccs_own_crds_accept_every_fixture() -> None:
    docs = fixture_docs(FIXTURES, frozenset(kind_models()))
    assert docs
    errors = [f"{d.fixture}: {e}" for d in docs for e in kcc_crd_errors(COMPAT, d.obj)]
    assert errors == []


@needs_fixtures
def test_no_reason_is_our_defect(table: list[Row]) -> None:
    defects = [
        f"{row.fixture}: {r.path} {r.error} ({r.message})" for row in table for r in row.defects
    ]
    assert defects == []


# --- the validator itself (no fixtures needed) ------------------------------------------------


def test_strict_schema_rejects_unknown_fields_but_keeps_open_nodes() -> None:
    schema = {
        "type": "object",
        "properties": {
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "properties": {
                    "any": {"x-kubernetes-preserve-unknown-fields": True},
                    "map": {"type": "object", "additionalProperties": {"type": "string"}},
                    "obj": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    "ref": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}},
                        "x-kubernetes-validations": [{"rule": "false"}],
                    },
                },
            },
        },
    }
    v = validator(schema)
    ok = {
        "metadata": {"name": "n", "annotations": {"a": "b"}, "whatever": 1},
        "spec": {
            "any": [1, {"x": 2}],
            "map": {"k": "v"},
            "obj": {"x": {"y": 1}},
            "ref": {"name": "r"},
        },
    }
    assert list(v.iter_errors(ok)) == []
    bad = {"spec": {"ref": {"name": "r", "extra": 1}, "other": True}, "top": 1}
    raws = sorted((r.loc, r.error) for r in crd_errors_(v, bad))
    assert raws == [
        (("spec", "other"), ErrorKind.UNKNOWN_FIELD),
        (("spec", "ref", "extra"), ErrorKind.UNKNOWN_FIELD),
        (("top",), ErrorKind.UNKNOWN_FIELD),
    ]
    assert "x-kubernetes-validations" not in str(strict_schema(schema))


def test_crd_and_model_errors_are_deduplicated_and_unlisted_ones_are_defects() -> None:
    kind = "PubSubTopic"
    model = kind_models()[kind]
    schema = {k: s for (_, k), s in crd_schemas(REPO / "generated" / "crds").items()}[kind]
    obj = {
        "apiVersion": "pubsub.cnrm.cloud.google.com/v1beta1",
        "kind": kind,
        "metadata": {"name": "t"},
        "spec": {"bogusField": 1, "messageRetentionDuration": 7},
    }
    raws = [*crd_errors_(validator(schema), obj), *model_errors(model, obj)]
    reasons = reasons_for(kind, obj, raws)
    assert [(r.path, r.error, r.sources, r.is_defect) for r in reasons] == [
        ("spec.bogusField", ErrorKind.UNKNOWN_FIELD, ("CRD", "model"), True),
        ("spec.messageRetentionDuration", ErrorKind.TYPE, ("CRD", "model"), True),
    ]
    assert reasons[0].value == "1"
