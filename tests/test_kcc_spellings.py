"""Config Connector's spellings of our field names (generator/ir/spellings.py).

Its direct Kinds write ``ruleID``, ``imageURI``, ``sizeGB`` where the API says
``ruleId``, ``imageUri``, ``sizeGb``. Every such alias is checked here, for every
Kind: it is grounded in Config Connector's CRD paths (specs/kcc/evidence.yaml),
its value is moved to our field before anything reads the spec, the CRD and the
model accept it, both spellings at once are refused, and the API field keeps its
Python attribute. One Kind is applied through kccctl on mockgcp: the request
carries only the API's name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import celpy
import pytest
import yaml
from celpy.adapter import json_to_cel

from kccgen.contract import Alias
from kccgen.generator.spec.claims import load_evidence
from kccgen.mockgcp.engine import MockGCP
from kccgen.mockgcp.server import MockServer
from kccgen.runtime.adapter import adapter_for
from kccgen.runtime.aliases import AliasConflict, canonical_spec
from kccgen.runtime.registry import types_modules
from tests.conftest import REPO

EVIDENCE = load_evidence(REPO / "specs").kinds
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def is_spelling(a: Alias) -> bool:
    """An alias that respells its target's last name in letter case only, beside it."""
    parent, _, leaf = a.field.rpartition(".")
    t_parent, _, t_leaf = a.target.rpartition(".")
    return parent == t_parent and leaf != t_leaf and leaf.lower() == t_leaf.lower() and not a.values and not a.items


def _spellings() -> list[tuple[str, Alias]]:
    out = []
    for kind in sorted(EVIDENCE):
        try:
            a = adapter_for(kind)
        except KeyError:
            continue
        out += [(kind, x) for x in a.aliases if is_spelling(x)]
    return out


SPELLINGS = _spellings()


def _nest(path: str, value: Any) -> dict[str, Any]:
    """A spec holding ``value`` at a dotted path; ``[]`` steps make one-element lists."""
    head, _, rest = path.partition(".")
    inner: Any = _nest(rest, value) if rest else value
    return {head.removesuffix("[]"): [inner] if head.endswith("[]") else inner}


def _get(node: Any, path: str) -> Any:
    for part in path.split("."):
        node = node[part.removesuffix("[]")]
        if part.endswith("[]"):
            node = node[0]
    return node


def test_the_spellings_are_many_and_each_is_config_connectors() -> None:
    assert len(SPELLINGS) > 100, len(SPELLINGS)
    for kind, a in SPELLINGS:
        leaf = a.field.rsplit(".", 1)[-1]
        # the same name under the same parent name in Config Connector's CRD (our copy of a
        # class it respells may sit on more paths than its CRD has)
        theirs = {p.rsplit(".", 1)[-1] for p in EVIDENCE[kind].fields}
        assert leaf in theirs, (kind, a.field)


@pytest.mark.parametrize(("kind", "alias"), SPELLINGS, ids=[f"{k}:{a.field}" for k, a in SPELLINGS])
def test_every_spelling_moves_to_our_field(kind: str, alias: Alias) -> None:
    spec = _nest(alias.field, "kcc-value")
    out = canonical_spec(adapter_for(kind), spec)
    assert _get(out, alias.target) == "kcc-value"
    with pytest.raises(AliasConflict, match="set one of the two"):
        both = _nest(alias.field, "a")
        tgt = _nest(alias.target, "b")
        _merge(both, tgt)
        canonical_spec(adapter_for(kind), both)


def _merge(a: dict[str, Any], b: dict[str, Any]) -> None:
    for k, v in b.items():
        if k in a and isinstance(a[k], dict) and isinstance(v, dict):
            _merge(a[k], v)
        elif k in a and isinstance(a[k], list) and isinstance(v, list):
            _merge(a[k][0], v[0])
        else:
            a[k] = v


def _crd(kind: str) -> dict[str, Any]:
    for path in (REPO / "generated" / "crds").glob("*.yaml"):
        text = path.read_text(encoding="utf-8")
        if f"\n    kind: {kind}\n" in text:
            d = yaml.load(text, Loader=yaml.CSafeLoader)
            if d["spec"]["names"]["kind"] == kind:
                return d
    raise AssertionError(kind)


BACKUP_PLAN = "BackupDRBackupPlan"
RULE = {"backupRetentionDays": 7, "standardSchedule": {"recurrenceType": "DAILY", "timeZone": "UTC", "backupWindow": {"startHourOfDay": 1, "endHourOfDay": 5}}}


def test_the_crd_and_the_model_take_either_spelling_and_refuse_both() -> None:
    schema = _crd(BACKUP_PLAN)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    rule_schema = schema["properties"]["spec"]["properties"]["backupRules"]["items"]
    assert {"ruleID", "ruleId"} <= set(rule_schema["properties"])
    rules = [r["rule"] for r in rule_schema["x-kubernetes-validations"]]
    env = celpy.Environment()
    at_most = next(r for r in rules if "ruleID" in r and "<= 1" in r)
    program = env.program(env.compile(at_most))
    assert program.evaluate({"self": json_to_cel({**RULE, "ruleID": "a"})})
    assert not program.evaluate({"self": json_to_cel({**RULE, "ruleID": "a", "ruleId": "b"})})
    one = next(r for r in rules if "ruleID" in r and "||" in r and "<=" not in r)  # the required field or its spelling
    assert not env.program(env.compile(one)).evaluate({"self": json_to_cel(RULE)})
    module = types_modules()[BACKUP_PLAN]
    model = module.BackupDRBackupPlan.model_validate(
        {"apiVersion": "backupdr.cnrm.cloud.google.com/v1alpha1", "kind": BACKUP_PLAN, "metadata": {"name": "p"},
         "spec": {"location": "us-central1", "resourceType": "compute.googleapis.com/Instance",
                  "backupVaultRef": {"external": "projects/p/locations/us-central1/backupVaults/v"}, "backupRules": [{**RULE, "ruleID": "daily"}]}}
    )
    rule = model.spec.backup_rules[0]
    assert rule.rule_id_kcc == "daily" and rule.rule_id is None  # the API field keeps its attribute


def test_kccctl_sends_only_the_api_name(tmp_path: Path) -> None:
    from tests.test_kcc_aliases import PROJECT, _kccctl

    vault = {"apiVersion": "backupdr.cnrm.cloud.google.com/v1alpha1", "kind": "BackupDRBackupVault", "metadata": {"name": "vault"},
             "spec": {"location": "us-central1", "backupMinimumEnforcedRetentionDuration": "86400s"}}
    plan = {"apiVersion": "backupdr.cnrm.cloud.google.com/v1alpha1", "kind": BACKUP_PLAN, "metadata": {"name": "plan"},
            "spec": {"location": "us-central1", "resourceType": "compute.googleapis.com/Instance",
                     "backupVaultRef": {"name": "vault"}, "backupRules": [{**RULE, "ruleID": "daily"}]}}
    manifest = tmp_path / "m.yaml"
    manifest.write_text(yaml.safe_dump_all([vault, plan]), encoding="utf-8")
    with MockServer(MockGCP(lro_polls=1)) as s:
        args = ("apply", "-f", str(manifest), "--state", str(tmp_path / "state"), "--endpoint", s.base_url, "--project", PROJECT, "--host-paths")
        r = _kccctl(*args)
        assert r.returncode == 0, r.stdout + r.stderr
        create = next(e.request_json for e in s.log if e.method == "POST" and "/backupPlans" in e.url)
        assert create["backupRules"][0]["ruleId"] == "daily"
        assert "ruleID" not in json.dumps(create)
        s.clear_log()
        r = _kccctl(*args)
        assert r.returncode == 0, r.stdout + r.stderr
        assert [e for e in s.log if e.method in WRITES] == []  # nothing differs on the second apply
