"""Config Connector manifests that our Kinds must accept as KCC does.

* ``spec`` is required only when a field inside it is: KCC's manifests omit
  it for a bare PubSubTopic or StorageBucket, and the CRD, the pydantic model
  and ``kccctl`` must agree on that.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kccgen.runtime.adapter import adapter_for
from kccgen.runtime.local import ManifestError, load_manifests
from kccgen.runtime.registry import types_modules
from tests.support.kinds import POLICY_KINDS, batched_params, representatives
from tools.kcc_compat import crd_schemas

CRDS = Path(__file__).resolve().parent.parent / "generated" / "crds"
SCHEMAS = {kind: s for (_, kind), s in crd_schemas(CRDS).items() if kind not in POLICY_KINDS}
API_VERSIONS = {kind: av for (av, kind) in crd_schemas(CRDS) if kind not in POLICY_KINDS}


def _bare(kind: str) -> dict[str, Any]:
    return {"apiVersion": API_VERSIONS[kind], "kind": kind, "metadata": {"name": "x"}}


def _spec_has_required(kind: str) -> bool:
    """A required spec field, or one of two that name the same thing (a region or
    zone field and Config Connector's ``location``, kind file ``locations:``)."""
    loc = adapter_for(kind).locations
    return bool(SCHEMAS[kind]["properties"]["spec"].get("required")) or bool(loc and loc.param)


def test_both_cases_exist() -> None:
    """The rule is exercised both ways, so the tests below can fail."""
    flags = {_spec_has_required(k) for k in SCHEMAS}
    assert flags == {True, False}


@pytest.mark.parametrize("kinds", batched_params(sorted(SCHEMAS), str, str))
def test_crd_requires_spec_only_when_a_spec_field_is_required(kinds: list[str]) -> None:
    for kind in kinds:
        root = SCHEMAS[kind]
        assert ("spec" in (root.get("required") or [])) == _spec_has_required(kind), kind


def _required(kind: str) -> tuple[str, ...]:
    return tuple(SCHEMAS[kind]["properties"]["spec"].get("required") or ())


# each model is one import: every curated Kind, and one derived Kind per set of required fields
@pytest.mark.parametrize("kind", representatives(sorted(SCHEMAS), str, _required))
def test_model_agrees_with_the_crd_on_a_missing_spec(kind: str) -> None:
    model = getattr(types_modules()[kind], kind)
    if _spec_has_required(kind):
        with pytest.raises(ValueError, match="spec"):
            model.model_validate(_bare(kind))
    else:
        obj = model.model_validate(_bare(kind))
        assert obj.model_dump(by_alias=True, exclude_none=True)["spec"] == {}


def test_kccctl_loads_a_manifest_without_spec(tmp_path: Path) -> None:
    optional = next(k for k in sorted(SCHEMAS) if not _spec_has_required(k))
    required = next(k for k in sorted(SCHEMAS) if _spec_has_required(k))
    ok = tmp_path / "ok.yaml"
    ok.write_text(yaml.safe_dump(_bare(optional)), encoding="utf-8")
    assert [d["kind"] for d in load_manifests([ok])] == [optional]
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(_bare(required)), encoding="utf-8")
    with pytest.raises(ManifestError, match=rf"{required} x: spec: Field required"):
        load_manifests([bad])
