"""docs/field-parity.md: current, internally consistent, every KCC-only path explained.

The report compares our CRDs with Config Connector's (``../shared/compat/kcc``);
the module skips when those CRDs are not there. The IR comes from the
session fixtures of conftest.py: it is built once.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from kccgen.generator import parity
from kccgen.generator.ir.model import IR
from kccgen.generator.parity.classify import STATUS, classify, our_side
from kccgen.generator.parity.curated import (
    CATEGORIES,
    CURATED,
    Curated,
    Elsewhere,
    Mapping,
)
from kccgen.generator.parity.kcc import KccField, crd_file, kcc_fields
from kccgen.generator.spec.loader import Specs
from tests.conftest import COMPAT, REPO
from tests.support.kinds import kcc_kinds

CRDS = COMPAT / "crds"
FIXTURES = COMPAT / "fixtures"
DOC = REPO / "docs" / "field-parity.md"

pytestmark = pytest.mark.skipif(not CRDS.is_dir(), reason=f"KCC CRDs not found at {CRDS}")


@pytest.fixture(scope="module")
def report(ir: IR, specs: Specs) -> parity.ParityReport:
    return parity.build(ir, specs, CRDS)


# --- the committed report ------------------------------------------------------------


def test_committed_report_is_current(report: parity.ParityReport) -> None:
    assert parity.render(report) == DOC.read_text(encoding="utf-8"), (
        "docs/field-parity.md is stale: regenerate it with `kccgen parity`"
    )


def test_run_renders_the_same(monkeypatch: pytest.MonkeyPatch, ir: IR, specs: Specs) -> None:
    """``run`` is load + build + render; reuse the session IR instead of rebuilding it."""
    monkeypatch.setattr(parity, "load_specs", lambda _root: specs)
    monkeypatch.setattr(parity, "build_ir", lambda _specs: ir)
    assert parity.run(REPO / "specs", CRDS) == DOC.read_text(encoding="utf-8")


def test_render_is_deterministic(report: parity.ParityReport) -> None:
    text = parity.render(report)
    assert text == parity.render(report)
    assert str(REPO) not in text and str(COMPAT.resolve()) not in text


def test_every_kind_compared(report: parity.ParityReport, ir: IR) -> None:
    """Every Kind with a Config Connector CRD is compared; the others are listed as such."""
    ours = sorted(k.kind for k in ir.kinds)
    assert [k.kind for k in report.kinds] == [k for k in ours if k in kcc_kinds()]
    assert list(report.missing_crds) == [k for k in ours if k not in kcc_kinds()]


# --- consistency ---------------------------------------------------------------------


def test_totals_partition_the_paths(report: parity.ParityReport) -> None:
    for k in report.kinds:
        shared, kcc_only = set(k.shared), {x.path for x in k.kcc_only}
        assert len(kcc_only) == len(k.kcc_only), k.kind
        assert not shared & kcc_only, k.kind
        assert shared | kcc_only == set(k.kcc_paths), k.kind

        parts = [
            set(k.shared),
            set(k.ours_only),
            {e.ours for e in k.ours_elsewhere},
            set(k.ours_matched),
            set(k.ours_krm_only),
        ]
        assert sum(len(p) for p in parts) == len(k.our_paths), f"{k.kind}: overlapping parts"
        assert set().union(*parts) == set(k.our_paths), k.kind

        counterparts = {x.ours for x in k.kcc_only if x.ours and not x.ours.startswith(STATUS)}
        assert set(k.ours_matched) == counterparts - shared, k.kind


def test_totals_add_up(report: parity.ParityReport) -> None:
    t = parity.totals(report)
    assert [r.kind for r in t.kinds] == [k.kind for k in report.kinds]
    for r in t.kinds:
        assert r.shared + r.kcc_only == r.kcc_total, r.kind
        assert (
            r.shared + r.ours_only + r.ours_elsewhere + r.ours_matched + r.ours_krm_only
            == r.ours_total
        ), r.kind
    for name in ("shared", "kcc_only", "ours_only", "ours_elsewhere", "ours_matched", "kcc_total"):
        assert getattr(t.all, name) == sum(getattr(r, name) for r in t.kinds), name
    assert [c for c, _ in t.reasons] == list(CATEGORIES)
    assert sum(n for _, n in t.reasons) == t.all.kcc_only
    assert dict(t.reasons)["unexplained"] == t.all.unexplained


def test_markdown_totals_table_matches(report: parity.ParityReport) -> None:
    t = parity.totals(report)
    text = parity.render(report)
    rows = re.findall(
        r"^\| \**([A-Za-z]+)\** \| \**(\d+)\** \| \**(\d+)\** \| \**(\d+)\** \|$", text, re.M
    )
    expected = [(r.kind, r.shared, r.kcc_only, r.ours_only) for r in (*t.kinds, t.all)]
    assert [(k, int(a), int(b), int(c)) for k, a, b, c in rows] == expected
    reasons = dict(re.findall(r"^\| ([a-z-]+) \| (\d+) \| ", text, re.M))
    assert {c: int(n) for c, n in reasons.items()} == dict(t.reasons)


# --- explanations --------------------------------------------------------------------


def test_no_unexplained_kcc_paths(report: parity.ParityReport) -> None:
    left = [
        f"{k.kind}: {x.path} ({x.detail})"
        for k in report.kinds
        for x in k.kcc_only
        if x.category == "unexplained"
    ]
    assert left == []


def test_curated_entries_all_check_out_and_are_used(report: parity.ParityReport) -> None:
    assert report.problems == ()


@cache
def _source(path: Path) -> str:
    return _normalise(path.read_text(encoding="utf-8"))


def _normalise(text: str) -> str:
    text = text.replace("\\n", " ")
    text = re.sub(r"[\"'`\\]", "", text)
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.parametrize("m", CURATED.mappings, ids=lambda m: f"{m.kind}:{m.kcc}")
def test_mapping_quotes_are_in_the_sources(m: Mapping, ir: IR, specs: Specs) -> None:
    kind = ir.kind(m.kind)
    sources = (
        REPO / "specs" / "discovery" / f"{kind.api.doc_key}.json",
        CRDS / crd_file(kind),
    )
    text = " ".join(_source(p) for p in sources)
    quotes = re.findall(r'"([^"]+)"', m.evidence)
    for q in quotes:
        assert _normalise(q) in text, f"{m.kind} {m.kcc}: {q!r} is in neither source"


def test_known_cases(report: parity.ParityReport) -> None:
    by_kind = {k.kind: k for k in report.kinds}

    def reason(kind: str, path: str) -> tuple[str, str | None]:
        x = next(x for x in by_kind[kind].kcc_only if x.path == path)
        return x.category, x.ours

    assert "kmsKeyRef" in by_kind["PubSubTopic"].shared
    assert reason(
        "SecretManagerSecret", "replication.auto.customerManagedEncryption.kmsKeyRef"
    ) == (
        "kcc-rename",
        "replication.automatic.customerManagedEncryption.kmsKeyRef",
    )
    assert reason("StorageBucket", "encryption.kmsKeyRef") == (
        "reference-naming",
        "encryption.defaultKmsKeyRef",
    )
    assert reason("MonitoringAlertPolicy", "notificationChannels") == (
        "reference-naming",
        "notificationChannelRefs",
    )
    assert reason("DNSManagedZone", "dnssecConfig.kind") == (
        "output-only",
        "status.observedState.dnssecConfig.kind",
    )
    # A create's query parameter is a spec field of ours too (create-only input).
    assert "skipInitialVersionCreation" in by_kind["KMSCryptoKey"].shared
    assert reason("ComputeNetwork", "deleteDefaultRoutesOnCreate")[0] == "kcc-only"
    assert "ingestionDataSourceSettings" in by_kind["PubSubTopic"].ours_only
    assert by_kind["KMSKeyRing"].ours_krm_only == ("projectRef",)


def test_classify_falls_back_to_unexplained(ir: IR, specs: Specs) -> None:
    kind = ir.kind("PubSubTopic")
    side = our_side(kind, specs.discovery[kind.api.doc_key])
    problems: list[str] = []
    used: set[Mapping | Elsewhere] = set()

    # An API field our spec lost: the rules must not invent a reason.
    lost = replace(side, spec=side.spec - {"messageRetentionDuration"})
    field = KccField("messageRetentionDuration", "scalar", False)
    x = classify("PubSubTopic", lost, field, CURATED, problems, used)
    assert x.category == "unexplained"

    # Not in the Discovery schema at all: a KCC-only field, and said so.
    bogus = KccField("bogusField", "scalar", False)
    x = classify("PubSubTopic", side, bogus, CURATED, problems, used)
    assert x.category == "kcc-only" and "no property bogusField" in x.detail
    assert problems == []


def test_a_stale_mapping_is_a_problem_not_a_reason(ir: IR, specs: Specs) -> None:
    kind = ir.kind("PubSubTopic")
    side = our_side(kind, specs.discovery[kind.api.doc_key])
    stale = Mapping(
        kind="PubSubTopic", kcc="bogusField", ours="nowhere", category="kcc-rename", evidence="none"
    )
    curated = Curated("curated.yaml", (stale,), ())
    problems: list[str] = []
    bogus = KccField("bogusField", "scalar", False)
    x = classify("PubSubTopic", side, bogus, curated, problems, set())
    assert x.category == "kcc-only"
    assert problems and "spec.nowhere is not in our spec" in problems[0]


def test_kcc_walk_treats_references_as_leaves() -> None:
    s: dict[str, Any] = {"type": "string"}
    spec: dict[str, Any] = {
        "properties": {
            "fooRef": {"type": "object", "properties": {"name": s, "external": s, "namespace": s}},
            "channels": {
                "type": "array",
                "items": {"type": "object", "properties": {"name": s, "external": s}},
            },
            "svc": {
                "type": "object",
                "properties": {"namespace": {"type": "object", "properties": {"url": s}}},
            },
            "labels": {"type": "object", "additionalProperties": s},
            "rules": {
                "type": "array",
                "items": {"type": "object", "properties": {"age": {"type": "integer"}}},
            },
        }
    }
    fields = {f.path: f for f in kcc_fields(spec)}
    assert sorted(fields) == [
        "channels",
        "fooRef",
        "labels",
        "rules",
        "rules[].age",
        "svc",
        "svc.namespace",
        "svc.namespace.url",
    ]
    assert fields["channels"].ref and fields["fooRef"].ref and not fields["svc"].ref
    assert fields["labels"].shape == "map" and fields["rules"].shape == "array"


# --- labels KCC carries in metadata --------------------------------------------------


def _bodies(log: str) -> list[dict[str, Any]]:
    """The JSON request and response bodies of a KCC ``_http.log``."""
    out = []
    for chunk in re.split(r"\n(?=[{])", log):
        if not chunk.startswith("{"):
            continue
        try:
            body, _ = json.JSONDecoder().raw_decode(chunk)
        except json.JSONDecodeError:
            continue
        if isinstance(body, dict):
            out.append(body)
    return out


@pytest.mark.skipif(not FIXTURES.is_dir(), reason=f"KCC fixtures not found at {FIXTURES}")
@pytest.mark.parametrize("e", CURATED.elsewhere, ids=lambda e: f"{e.kind}:{e.ours}")
def test_labels_from_metadata_are_sent_as_the_api_field(e: Elsewhere) -> None:
    case = FIXTURES / e.fixture
    created = [
        d for d in yaml.safe_load_all((case / "create.yaml").read_text(encoding="utf-8")) if d
    ]
    obj = next(d for d in created if d.get("kind") == e.kind)
    assert e.ours not in (obj.get("spec") or {}), "the fixture sets the field in spec: no evidence"
    labels = (obj.get("metadata") or {}).get("labels") or {}
    sent = [
        b[e.ours]
        for b in _bodies((case / "_http.log").read_text(encoding="utf-8"))
        if isinstance(b.get(e.ours), dict)
    ]
    assert any(
        s.get("managed-by-cnrm") == "true" and all(s.get(k) == v for k, v in labels.items())
        for s in sent
    ), f"{case}: no body with {e.ours} = metadata.labels {labels} + managed-by-cnrm"
