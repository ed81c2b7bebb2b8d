"""The CEL cost estimate of ``kccgen lint-crds`` (kccgen.generator.celcost).

The exact figures were read from a real API server's refusals (Kubernetes
1.36.4, ``estimated rule cost exceeds budget by factor of 1.086270x`` is
10,862,700 over 10,000,000); tests/test_envtest_crds.py checks the verdicts
against the server itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kccgen.generator import celcost
from kccgen.generator.crdlint import lint_file
from tests.support.costcrd import MEASURED, UNIQUE, costly_crd, probe_node, root
from tests.support.crds import load_crd
from tests.support.kinds import batched_params

CRD_DIR = Path(__file__).resolve().parents[2] / "generated" / "crds"


def _top(outer: int | None, inner: int | None, length: int | None) -> celcost.RuleCost:
    return max(celcost.rule_costs(root(costly_crd(outer, inner, length)), ""), key=lambda r: r.total)


@pytest.mark.parametrize(
    ("outer", "inner", "length", "total"),
    [
        (100, 50, 512, 55_906_300),  # MonitoringAlertPolicy before the fix: the server said 5.6x
        (100, 22, 512, 10_862_700),  # server: 1.086270x
        (100, 21, 512, 9_900_700),  # server: accepted
        (20, 50, 512, 11_181_260),  # server: 1.118126x
        (100, 50, 64, 11_156_300),  # server: 1.115630x
        (100, 16, 512, 5_759_700),  # MonitoringAlertPolicy after the fix
    ],
)
def test_estimate_matches_the_server(outer: int, inner: int, length: int, total: int) -> None:
    assert _top(outer, inner, length).total == total


def test_unbounded_nested_list_is_reported_with_path_rule_and_cost() -> None:
    problems = list(celcost.problems(root(costly_crd(None, 16, 512)), "/schema"))
    per_rule = [m for p, m in problems if p == "/schema/properties/spec/properties/groups/items/properties/refs/x-kubernetes-validations/0/rule"]
    assert len(per_rule) == 1
    assert "per-rule budget 10,000,000" in per_rule[0] and UNIQUE in per_rule[0]
    assert any("per-CRD budget 100,000,000" in m for _, m in problems)


def test_bounded_nested_list_passes() -> None:
    assert list(celcost.problems(root(costly_crd(100, 16, 512)), "")) == []


def test_lint_crds_reports_the_unbounded_crd(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(costly_crd(100, None, 512)))
    messages = [p.message for p in lint_file(bad)]
    assert any(m.startswith("CEL rule cost ") and "exceeds the API server's per-rule budget" in m for m in messages), messages


@pytest.mark.parametrize(("rule", "cost"), sorted(MEASURED.items()))
def test_small_rules_cost_what_the_server_says(rule: str, cost: int) -> None:
    assert celcost.rule_cost(rule, probe_node(rule)) == cost


def test_unreadable_rule_is_reported_not_priced_at_zero() -> None:
    schema = {"type": "object", "x-kubernetes-validations": [{"rule": "self.a ==="}]}
    [(path, message)] = list(celcost.problems(schema, ""))
    assert path == "/x-kubernetes-validations/0/rule" and "cannot be estimated" in message


def _kind(path: Path) -> str:
    return str(load_crd(path)["spec"]["names"]["kind"])


@pytest.mark.parametrize("paths", batched_params(sorted(CRD_DIR.glob("*.yaml")), _kind, lambda p: p.name.split(".", 1)[0]))
def test_every_generated_rule_is_estimated(paths: list[Path]) -> None:
    for path in paths:
        costs = list(celcost.rule_costs(root(load_crd(path)), ""))
        assert costs and all(not c.error for c in costs), path.name


def _ref_node() -> dict[str, object]:
    from kccgen.generator.emit.crds import ref_schema

    return ref_schema("StorageBucket", False, "A bucket.")


def test_fit_cel_budget_drops_only_what_the_server_cannot_price() -> None:
    """A reference five lists deep costs ~20 M (over the 10 M per-rule budget): its
    rules go and its description says the runtime checks it; a shallow one keeps them."""
    from kccgen.generator.emit.crds import RUNTIME_CHECKED, fit_cel_budget

    deep: dict[str, object] = {"type": "object", "properties": {"bucketRef": _ref_node()}}
    for bound in (16, 16, 16, 16, 100):
        deep = {"type": "array", "maxItems": bound, "items": {"type": "object", "properties": {"x": deep}}}
    root = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "x-kubernetes-validations": [{"rule": "has(self.a) == has(oldSelf.a)", "message": "a is immutable"}],
                "properties": {"a": {"type": "string"}, "shallowRef": _ref_node(), "deep": deep},
            }
        },
    }
    assert list(celcost.problems(root, ""))  # as built, the server would refuse it
    assert fit_cel_budget(root) == 1
    assert list(celcost.problems(root, "")) == []
    spec = root["properties"]["spec"]  # type: ignore[index]
    assert spec["x-kubernetes-validations"] and spec["properties"]["shallowRef"]["x-kubernetes-validations"]
    node = spec["properties"]["deep"]
    for _ in range(5):
        node = node["items"]["properties"]["x"]
    ref = node["properties"]["bucketRef"]
    assert "x-kubernetes-validations" not in ref
    assert ref["description"].endswith(RUNTIME_CHECKED)


def test_the_committed_crds_pass_lint_crds() -> None:
    """``make check``'s lint-crds, inside the test run: a CRD shape the linter does
    not know (a credential's ``secretRef`` once) fails here, not only in CI."""
    from tests.conftest import REPO

    problems = [p for crd in sorted((REPO / "generated" / "crds").glob("*.yaml")) for p in lint_file(crd)]
    assert problems == []
