"""Every generated module imports and exposes the KRM and API models."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from pydantic import ValidationError

from kccgen.generator.ir.model import IR
from kccgen.runtime.registry import kind_index
from tests.conftest import REPO
from tests.support.kinds import CURATED_KINDS, POLICY_KINDS

MODULES = sorted(
    "kccgen." + p.relative_to(REPO).with_suffix("").as_posix().replace("/", ".")
    for p in (REPO / "generated").rglob("*.py")
    if "__pycache__" not in p.parts
)

# Run in child processes: a thousand Kinds' models would stay in this process's memory.
_IMPORT_ALL = """
import importlib, json, sys, traceback
failed = {}
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except Exception:
        failed[name] = traceback.format_exc(limit=-3)
print(json.dumps(failed))
"""


def test_every_module_imports() -> None:
    """Every generated module, split over two processes (the machines have two cores)."""
    halves = [MODULES[0::2], MODULES[1::2]]

    def run(names: list[str]) -> dict[str, str]:
        r = subprocess.run([sys.executable, "-c", _IMPORT_ALL, *names], capture_output=True, text=True, check=False)
        assert r.returncode == 0, r.stderr
        out: dict[str, str] = json.loads(r.stdout)
        return out

    with ThreadPoolExecutor(2) as pool:
        failed = {k: v for part in pool.map(run, halves) for k, v in part.items()}
    assert not failed, "\n".join(f"{m}:\n{tb}" for m, tb in sorted(failed.items()))


def test_the_index_lists_every_types_module(ir: IR) -> None:
    """generated/kinds.json (the runtime's registry) names exactly the generated Kinds and their files."""
    index = {k: e for k, e in kind_index().items() if k not in POLICY_KINDS}
    assert list(index) == sorted(k.kind for k in ir.kinds)
    assert set(kind_index()) - set(index) == POLICY_KINDS  # and the IAM Kinds, which no document builds
    for k in ir.kinds:
        entry = index[k.kind]
        assert f"kccgen.generated.{entry['module']}_types" in MODULES, entry
        assert entry["apiVersion"] == f"{k.group}/{k.version}"
        assert (REPO / "generated" / entry["crd"]).is_file(), entry


@pytest.mark.parametrize("kind", CURATED_KINDS)
def test_curated_module_imports(kind: str) -> None:
    for suffix in ("_types", "_reference", "_mutability", "_adapter"):
        importlib.import_module(f"kccgen.generated.{kind_index()[kind]['module']}{suffix}")


def test_one_types_module_per_kind(ir: IR) -> None:
    types = sorted(m for m in MODULES if m.endswith("_types"))
    assert len(types) == len(ir.kinds) + len(POLICY_KINDS)
    for k in (k for k in ir.kinds if k.kind in set(CURATED_KINDS)):
        mod = importlib.import_module(f"kccgen.generated.{k.package.replace('/', '.')}.{k.lower}_types")
        for suffix in ("", "Spec", "Status", "ObservedState", "API"):
            assert hasattr(mod, k.kind + suffix), (k.kind, suffix)
        cls = getattr(mod, k.kind)
        assert k.kind == cls.KIND and f"{k.group}/{k.version}" == cls.API_VERSION


def _topic_module():  # type: ignore[no-untyped-def]
    return importlib.import_module("kccgen.generated.pubsub.v1beta1.pubsubtopic_types")


def test_krm_object_parses_and_dumps_camel_case() -> None:
    m = _topic_module()
    obj = m.PubSubTopic.model_validate(
        {
            "apiVersion": "pubsub.cnrm.cloud.google.com/v1beta1",
            "kind": "PubSubTopic",
            "metadata": {"name": "t1", "namespace": "ns"},
            "spec": {
                "projectRef": {"external": "projects/p"},
                "messageRetentionDuration": "86600s",
                "messageStoragePolicy": {"allowedPersistenceRegions": ["us-central1"]},
            },
            "status": {"externalRef": "projects/p/topics/t1", "observedState": {"state": "ACTIVE"}},
        }
    )
    assert obj.spec.message_retention_duration == "86600s"
    assert obj.spec.project_ref.external == "projects/p"
    dumped = obj.model_dump(mode="json", by_alias=True, exclude_unset=True)
    assert dumped["spec"]["messageStoragePolicy"] == {"allowedPersistenceRegions": ["us-central1"]}
    assert dumped["status"]["observedState"] == {"state": "ACTIVE"}


def test_krm_rejects_unknown_and_output_only_fields_in_spec() -> None:
    m = _topic_module()
    base = {"projectRef": {"external": "projects/p"}}
    with pytest.raises(ValidationError) as e:
        m.PubSubTopicSpec.model_validate({**base, "messageRetentionDurationn": "1s"})
    assert "messageRetentionDurationn" in str(e.value)
    with pytest.raises(ValidationError):
        m.PubSubTopicSpec.model_validate({**base, "state": "ACTIVE"})  # output-only
    # projectRef may come from the project-id annotation instead; keyRingRef may not.
    m.PubSubTopicSpec.model_validate({})
    ck = importlib.import_module("kccgen.generated.kms.v1beta1.kmscryptokey_types")
    with pytest.raises(ValidationError):
        ck.KMSCryptoKeySpec.model_validate({})
    assert "project_ref" not in ck.KMSCryptoKeySpec.model_fields  # covered by keyRingRef
    with pytest.raises(ValidationError):
        m.PubSubTopicSpec.model_validate({**base, "messageRetentionDuration": "ten minutes"})


def test_api_models_keep_wire_forms() -> None:
    mon = importlib.import_module("kccgen.generated.monitoring.v1beta1.monitoring_v3_api")
    for payload in ({"thresholdValue": 1}, {"thresholdValue": 1.5}):
        assert mon.MetricThreshold.model_validate(payload).model_dump(mode="json", by_alias=True, exclude_unset=True) == payload
    sp = importlib.import_module("kccgen.generated.spanner.v1beta1.spanner_v1_api")
    for payload in ({"edition": "ENTERPRISE"}, {"edition": 2}):
        assert sp.Instance.model_validate(payload).model_dump(mode="json", by_alias=True, exclude_unset=True) == payload
    cmp = importlib.import_module("kccgen.generated.compute.v1beta1.compute_v1_api")
    n = cmp.Network.model_validate({"id": "18446744073709551615"})
    assert n.id == "18446744073709551615"
    with pytest.raises(ValidationError):
        cmp.Network.model_validate({"id": "12x"})


def test_class_names_are_path_based(ir: IR) -> None:
    """No datamodel-codegen numbered fallbacks such as State1."""
    import json
    import re

    from kccgen.documents import document_paths

    schema_ids = set()
    for p in document_paths(REPO / "specs").values():  # vendored and pinned-client documents alike
        schema_ids.update(json.loads(p.read_text())["schemas"])
    for p in (REPO / "generated").rglob("*.py"):
        names = re.findall(r"^class (\w+)", p.read_text(), re.M)
        # a fallback is a stem that is a class too plus a counter (State, State1); Md5 and
        # Nat64 (beside Nat) are field names
        numbered = [n for n in names if (m := re.fullmatch(r"(.*[A-Za-z])[1-9]", n)) and m.group(1) in names and n not in schema_ids]
        assert numbered == [], p
        assert len(names) == len(set(names)), p


def test_no_generator_import_in_generated() -> None:
    for p in Path(REPO / "generated").rglob("*.py"):
        assert "import generator" not in p.read_text() and "from generator" not in p.read_text(), p
