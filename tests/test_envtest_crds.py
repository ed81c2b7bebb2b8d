"""Real API server acceptance: every generated CRD on an envtest server.

cel-python (tests/test_crd_cel.py) and ``kccgen lint-crds`` judge the CRDs
offline; only a real apiextensions-apiserver says whether it accepts them
(structural schema, CEL compilation, CEL cost budget) and enforces them. So:

1. every CRD in generated/crds/ is applied server-side in a few concurrent
   kubectl calls (a thousand CRDs: about 20 s) and each must be Established;
2. each curated Kind's fixture object (tests/kinds/<Kind>/scenario.yaml)
   is created;
3. dropping a required spec field is rejected;
4. the ``resourceID`` transition rule refuses a change on update;
   (3 and 4 on every curated Kind, and on one derived Kind per distinct rule:
   a derived Kind's object is ``kccctl example``'s, built from its schema)
5. ``kccgen lint-crds``'s CEL cost estimate agrees with the server's: same
   verdict near the budget, same cost for each measured rule.

The server comes from tests/support/envtest.py: skipped without the
toolchain locally, a failure under KCCGEN_CI=1.
"""

from __future__ import annotations

import copy
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kccgen.generator import celcost
from kccgen.generator.crdlint import lint_file
from kccgen.runtime.example import Examples
from tests.support.costcrd import MEASURED, PROBE_CARDINALITY, costly_crd, probe_crd, root
from tests.support.crds import load_crd
from tests.support.envtest import Kube
from tests.support.kinds import (
    CURATED_KINDS,
    GENERATED_KINDS,
    api_version,
    batched_params,
    facts,
    representatives,
)

CRD_DIR = Path(__file__).resolve().parent.parent / "generated" / "crds"
CRD_FILES = sorted(CRD_DIR.glob("*.yaml"))


def _crd(path: Path) -> dict[str, Any]:
    return load_crd(path)


def _spec_schema(crd: dict[str, Any]) -> dict[str, Any]:
    return dict(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"])


CRDS = {_crd(p)["spec"]["names"]["kind"]: _crd(p) for p in CRD_FILES}


@dataclass(frozen=True)
class Applied:
    """The outcome of applying the whole directory: kubectl's errors, whether
    each CRD on the server is Established, and how long that took."""

    stderr: str
    crds: dict[str, bool]
    seconds: float


@pytest.fixture(scope="module")
def applied(envtest: Kube) -> Applied:
    """All CRDs in a few concurrent server-side applies, then list calls until Established."""
    start = time.monotonic()
    stderr = envtest.apply_files(CRD_FILES)
    crds = envtest.established({_crd(p)["metadata"]["name"] for p in CRD_FILES})
    seconds = time.monotonic() - start
    print(f"applied {len(CRD_FILES)} CRDs in {seconds:.2f}s")
    return Applied(stderr, crds, seconds)


def _file_kind(path: Path) -> str:
    return str(_crd(path)["spec"]["names"]["kind"])


def _file_id(path: Path) -> str:
    return path.name.split(".", 1)[0]


@pytest.mark.parametrize("paths", batched_params(CRD_FILES, _file_kind, _file_id))
def test_crd_is_established(applied: Applied, paths: list[Path]) -> None:
    """The server accepted the CRD (schema, CEL, cost budget) and serves it: every CRD."""
    for path in paths:
        name = _crd(path)["metadata"]["name"]
        errors = [line for line in applied.stderr.splitlines() if name in line]
        assert name in applied.crds, f"{path.name} rejected by the API server: {errors or applied.stderr}"
        assert applied.crds[name], f"{name} is not Established"


@pytest.mark.parametrize("paths", batched_params(CRD_FILES, _file_kind, _file_id))
def test_lint_crds_agrees_with_the_server(applied: Applied, paths: list[Path]) -> None:
    """What ``kccgen lint-crds`` accepts, the server accepts (and the cost check
    is what would differ first)."""
    for path in paths:
        if not lint_file(path):
            assert _crd(path)["metadata"]["name"] in applied.crds, path.name


_EXAMPLES = Examples()


def _fixture(kind: str) -> tuple[str, dict[str, Any]]:
    """metadata.name and spec of a valid object: the curated fixture, else ``kccctl example``'s."""
    if kind in set(CURATED_KINDS):
        return facts(kind).metadata.name, dict(facts(kind).spec)
    obj = _EXAMPLES.build(kind)
    return str(obj["metadata"]["name"]), dict(obj.get("spec") or {})


def _object(kind: str, namespace: str, **spec: Any) -> dict[str, Any]:
    name, base = _fixture(kind)
    body = copy.deepcopy(base)
    body.update(spec)
    return {
        "apiVersion": api_version(kind),
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {k: v for k, v in body.items() if v is not None},
    }


@pytest.mark.parametrize("kind", CURATED_KINDS)
def test_fixture_object_is_created(envtest: Kube, applied: Applied, kind: str) -> None:
    obj = _object(kind, f"valid-{kind.lower()}")
    out = envtest.apply(obj)
    assert out.returncode == 0, out.stderr
    got = envtest.get_json(CRDS[kind]["spec"]["names"]["plural"], obj["metadata"]["name"], "-n", obj["metadata"]["namespace"])
    assert got["spec"] == obj["spec"], "the server pruned or changed fields of a valid object"


def test_an_object_at_config_connectors_version_is_served(envtest: Kube, applied: Applied) -> None:
    """A derived Kind with ``kccVersions``: an object written at Config Connector's version is
    stored, and read back at ours, unchanged (one schema, no conversion)."""
    kind = next(k for k in GENERATED_KINDS if k not in set(CURATED_KINDS) and len(CRDS[k]["spec"]["versions"]) > 1)
    group = CRDS[kind]["spec"]["group"]
    versions = [v["name"] for v in CRDS[kind]["spec"]["versions"]]
    storage = next(v["name"] for v in CRDS[kind]["spec"]["versions"] if v["storage"])
    obj = _object(kind, f"kccversion-{kind.lower()}")
    obj["apiVersion"] = f"{group}/{next(v for v in versions if v != storage)}"
    out = envtest.apply(obj)
    assert out.returncode == 0, out.stderr
    plural = CRDS[kind]["spec"]["names"]["plural"]
    got = envtest.get_json(f"{plural}.{storage}.{group}", obj["metadata"]["name"], "-n", obj["metadata"]["namespace"])
    assert got["apiVersion"] == f"{group}/{storage}" and got["spec"] == obj["spec"]


def _required_signature(pair: tuple[str, str]) -> tuple[Any, ...]:
    """The server's required check does not depend on the field's name: its type and
    whether it is a reference object."""
    kind, field = pair
    prop = _spec_schema(CRDS[kind])["properties"][field]
    return prop.get("type"), "external" in (prop.get("properties") or {})


def _rules_shape(kind: str) -> tuple[str, ...]:
    """The spec's rules with field names taken out: Kinds differ in names, not in rules."""
    rules = (r["rule"] for r in _spec_schema(CRDS[kind]).get("x-kubernetes-validations", []))
    return tuple(sorted({re.sub(r"\b(self|oldSelf)\.\w+", r"\1.F", r) for r in rules}))


REQUIRED = representatives(
    [(kind, f) for kind in GENERATED_KINDS for f in _spec_schema(CRDS[kind]).get("required", [])],
    lambda pair: pair[0],
    _required_signature,
)


@pytest.mark.parametrize(("kind", "field"), REQUIRED, ids=[f"{k}-{f}" for k, f in REQUIRED])
def test_missing_required_field_is_rejected(envtest: Kube, applied: Applied, kind: str, field: str) -> None:
    assert field in _fixture(kind)[1], f"the fixture of {kind} lacks required spec.{field}"
    out = envtest.apply(_object(kind, f"required-{kind.lower()}", **{field: None}))
    assert out.returncode != 0, f"{kind} without spec.{field} was accepted"
    assert f"spec.{field}: Required value" in out.stderr, out.stderr


IMMUTABLE = representatives(
    [k for k in GENERATED_KINDS if any("oldSelf.resourceID" in r["rule"] for r in _spec_schema(CRDS[k]).get("x-kubernetes-validations", []))],
    str,
    _rules_shape,
)


def test_some_kind_has_the_resource_id_rule() -> None:
    """The transition test below must not pass by running on nothing (which Kinds carry
    which identity rule is tests/test_crd_cel.py's business)."""
    assert IMMUTABLE


@pytest.mark.parametrize("kind", IMMUTABLE)
def test_resource_id_change_is_refused_on_update(envtest: Kube, applied: Applied, kind: str) -> None:
    """The CEL transition rule (oldSelf) runs on the real server on UPDATE only."""
    ns = f"immutable-{kind.lower()}"
    created = envtest.apply(_object(kind, ns, resourceID="first-id"))
    assert created.returncode == 0, created.stderr
    same = envtest.apply(_object(kind, ns, resourceID="first-id"))
    assert same.returncode == 0, same.stderr
    changed = envtest.apply(_object(kind, ns, resourceID="second-id"))
    assert changed.returncode != 0, "changing spec.resourceID was accepted"
    assert "resourceID is immutable" in changed.stderr, changed.stderr


def _dry_run(envtest: Kube, crd: dict[str, Any]) -> tuple[bool, str]:
    out = envtest.kubectl("apply", "--server-side", "--dry-run=server", "-f", "-", stdin=json.dumps(crd))
    return out.returncode == 0, out.stderr


BOUNDS = [(100, 21, 512), (100, 22, 512), (20, 50, 512), (100, 50, 50), (100, 50, 64), (None, 16, 512), (100, None, 16), (100, 16, None)]


@pytest.mark.parametrize(("outer", "inner", "length"), BOUNDS, ids=[f"{o}x{i}x{n}" for o, i, n in BOUNDS])
def test_cost_verdict_matches_the_server(envtest: Kube, outer: int | None, inner: int | None, length: int | None) -> None:
    """Near the budget and far over it, lint-crds refuses exactly what the server refuses."""
    crd = costly_crd(outer, inner, length)
    accepted, stderr = _dry_run(envtest, crd)
    ours = list(celcost.problems(root(crd), ""))
    assert accepted == (not ours), f"server accepted={accepted} ({stderr.strip()}); lint-crds: {ours}"


@pytest.mark.parametrize("rule", sorted(MEASURED))
def test_rule_cost_matches_the_server(envtest: Kube, rule: str) -> None:
    """Run PROBE_CARDINALITY times, a rule's total is its per-run cost x the budget: the
    server's refusal states it."""
    crd = probe_crd(sorted(MEASURED).index(rule), rule)
    accepted, stderr = _dry_run(envtest, crd)
    assert not accepted
    factor = re.search(r"estimated rule cost exceeds budget by factor of ([0-9.]+)x", stderr)
    assert factor, stderr
    server = float(factor.group(1)) * celcost.PER_RULE_LIMIT / PROBE_CARDINALITY
    assert celcost.rule_cost(rule, root(crd)["properties"]["spec"]["properties"]["outer"]["items"]["properties"]["inner"]["items"]) == round(server) == MEASURED[rule]
