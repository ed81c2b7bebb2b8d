"""tools/kcc_samples.py: Config Connector's manifests validated against our CRDs.

The published samples need the network (``fetch``) and are never committed;
the compat folder's fixtures (Config Connector's own create/update manifests
for our curated Kinds) are on every machine, so the same validation runs on
them here with a floor: the figure cannot fall without this test failing.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from tests.conftest import COMPAT, REPO
from tools.kcc_compat import fixture_docs, kind_models
from tools.kcc_samples import (
    Checked,
    Sample,
    Validator,
    cel_available,
    curated_kinds,
    kcc_kinds,
    render_markdown,
    samples_from_texts,
    totals,
)

FIXTURES = COMPAT / "fixtures"
# Valid fixture objects of the curated Kinds, measured when the aliases landed
# (72 of 82; the rest are KCC shapes listed in docs/kcc-compat.md). Raise it
# when a change makes more of them valid; never lower it to make a change pass.
FLOOR = 72

needs_fixtures = pytest.mark.skipif(not FIXTURES.is_dir(), reason=f"KCC fixtures not found at {FIXTURES}")


@pytest.fixture(scope="module")
def v() -> Validator:
    return Validator(REPO / "generated" / "crds", kind_models())


@pytest.fixture(scope="module")
def fixture_rows(v: Validator) -> list[Checked]:
    docs = fixture_docs(FIXTURES, v.kinds)
    return v.check(Sample(d.fixture, d.obj) for d in docs)


@needs_fixtures
def test_fixtures_of_curated_kinds_stay_valid(fixture_rows: list[Checked]) -> None:
    curated = curated_kinds(REPO / "specs")
    valid, total = totals(fixture_rows, curated)
    assert total >= 80, "the compat folder lost fixtures: the floor means nothing"
    failures = [f"{r.sample.source}: {r.errors[0]}" for r in fixture_rows if not r.valid]
    assert valid >= FLOOR, f"{valid}/{total} valid, floor {FLOOR}:\n" + "\n".join(failures)


@needs_fixtures
def test_kccctl_models_agree_with_the_crds_on_every_fixture(fixture_rows: list[Checked]) -> None:
    assert [r.sample.source for r in fixture_rows if not r.model_agrees] == []


@needs_fixtures
def test_every_curated_kind_is_a_config_connector_kind(v: Validator) -> None:
    """The curated Kinds are the conformance set: each must have Config Connector's samples to meet."""
    shared = kcc_kinds(COMPAT)
    assert shared is not None
    curated = curated_kinds(REPO / "specs")
    assert curated <= v.kinds, sorted(curated - v.kinds)
    assert sorted(curated - shared) == []
    # Derived Kinds reach beyond Config Connector: the shared share is a part, not the whole.
    assert len(v.kinds & shared) < len(v.kinds)


# --- the validator on hand-made objects ---------------------------------------------------------

NETWORK: dict[str, Any] = {
    "apiVersion": "compute.cnrm.cloud.google.com/v1beta1",
    "kind": "ComputeNetwork",
    "metadata": {"name": "n"},
    "spec": {"routingMode": "REGIONAL", "autoCreateSubnetworks": False},
}


def _with(obj: dict[str, Any], **spec: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["spec"].update(spec)
    return out


def test_a_kcc_network_and_a_bare_one_are_valid(v: Validator) -> None:
    assert v.errors(NETWORK) == ()
    assert v.errors({k: val for k, val in NETWORK.items() if k != "spec"}) == ()


@pytest.mark.parametrize(
    ("obj", "first"),
    [
        (_with(NETWORK, bogus=1), "spec.bogus: unknown-field (unknown field)"),
        (_with(NETWORK, routingMode="SIDEWAYS"), "spec.routingMode: enum (not one of 2 allowed values)"),
        (_with(NETWORK, mtu="big"), "spec.mtu: type (got string, want integer)"),
        ({**NETWORK, "apiVersion": "compute.cnrm.cloud.google.com/v1alpha1"}, "apiVersion: 'compute.cnrm.cloud.google.com/v1alpha1' is not served"),
    ],
)
def test_structural_errors(v: Validator, obj: dict[str, Any], first: str) -> None:
    assert v.errors(obj)[0].startswith(first)


@pytest.mark.skipif(not cel_available(), reason="cel-python is not installed")
def test_cel_rules_are_evaluated(v: Validator) -> None:
    both = _with(NETWORK, routingConfig={"routingMode": "GLOBAL"})
    assert v.errors(both) == (
        "spec: CEL routingMode is Config Connector's name for routingConfig.routingMode: set one of the two, not both",
    )
    sub = {
        "apiVersion": "compute.cnrm.cloud.google.com/v1beta1",
        "kind": "ComputeSubnetwork",
        "metadata": {"name": "s"},
        "spec": {"region": "r", "ipCidrRange": "10.0.0.0/16", "networkRef": {"name": "n", "external": "projects/p/global/networks/n"}},
    }
    assert v.errors(sub) == ("spec.networkRef: CEL exactly one of external or name must be set",)


def test_samples_from_texts_keeps_our_kinds_and_numbers_documents(v: Validator) -> None:
    texts = [
        ("b/two.yaml", "kind: PubSubTopic\nmetadata: {name: t}\n---\nkind: NoSuchKind\n"),
        ("a/one.yaml", "kind: ComputeNetwork\n"),
        ("c/bad.yaml", "kind: [unclosed\n"),
    ]
    assert [s.source for s in samples_from_texts(texts, v.kinds)] == ["a/one.yaml", "b/two.yaml#1"]


def test_report_totals_and_determinism(v: Validator) -> None:
    rows = v.check([Sample("x.yaml", NETWORK), Sample("y.yaml", _with(NETWORK, bogus=1))])
    text = render_markdown(rows, frozenset({"ComputeNetwork"}), v.kinds, "test")
    assert "| curated (1) | 2 | 1 | 50.0 % |" in text
    assert "| ComputeNetwork | `y.yaml` | spec.bogus: unknown-field (unknown field) |" in text
    assert render_markdown(list(reversed(rows)), frozenset({"ComputeNetwork"}), v.kinds, "test") == text


def test_config_connector_version_names_are_served(v: Validator, tmp_path: Any) -> None:
    """A derived Kind Config Connector serves as v1beta1 takes its manifests at that version,
    in the CRD and in kccctl's model; the storage version is still ours."""
    from kccgen.runtime.local import load_manifests
    from kccgen.runtime.registry import kind_index

    index = kind_index()
    kind = next(k for k in sorted(index) if len(index[k]["servedVersions"]) > 1 and k not in curated_kinds(REPO / "specs"))
    group, storage = index[kind]["apiVersion"].split("/")
    assert index[kind]["servedVersions"][0] == storage
    for version in index[kind]["servedVersions"]:
        obj = {"apiVersion": f"{group}/{version}", "kind": kind, "metadata": {"name": "x"}}
        assert not [e for e in v.errors(obj) if e.startswith("apiVersion")], version
        f = tmp_path / f"{version}.yaml"
        f.write_text(yaml.safe_dump({**obj, "spec": {}}))
        try:
            load_manifests([f])
        except Exception as e:  # a missing required field is fine; the apiVersion is what is tested
            assert "apiVersion" not in str(e), (version, e)
    obj = {"apiVersion": f"{group}/v9", "kind": kind, "metadata": {"name": "x"}}
    assert v.errors(obj)[0].startswith("apiVersion")
