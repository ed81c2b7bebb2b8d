"""Kind-config field overrides change what the CRD says, and reference names drop ``Reference``."""

from __future__ import annotations

from kccgen.discovery.behaviours import Behaviour, Fact, classify, without_markers
from kccgen.generator.ir.krm import overridden_description
from kccgen.generator.ir.references import ref_field_name
from kccgen.runtime.identity import identity_for
from kccgen.runtime.refs import references_of
from tests.conftest import REPO


def test_an_override_replaces_the_description_markers() -> None:
    text = "[Output Only] The URL of the network to which all instances belong."
    assert without_markers(text) == "The URL of the network to which all instances belong."
    assert without_markers("Output only. Immutable. The name.") == "The name."
    assert without_markers("The name. Immutable.") == "The name. Immutable."  # only leading markers
    facts = (Fact(Behaviour.IMMUTABLE, "override:specs/kinds/compute.yaml: insert takes it"),)
    out = overridden_description(text, facts)
    assert out == "Immutable. The URL of the network to which all instances belong."
    assert {f.behaviour for f in classify(out)} == {Behaviour.IMMUTABLE}


def test_the_committed_crd_states_the_override() -> None:
    crd = (REPO / "generated" / "crds" / "computeinstancegroups.compute.cnrm.cloud.google.com.yaml").read_text(encoding="utf-8")
    assert "networkRef:" in crd
    assert "[Output Only] The URL of the network" not in crd.split("status:", 1)[0]


def test_a_reference_field_drops_the_reference_suffix() -> None:
    assert ref_field_name("noteReference", "note", False) == "noteRef"
    assert ref_field_name("keyReferences", "cryptoKey", True) == "keyRefs"


def test_the_attestor_names_a_global_note() -> None:
    """ContainerAnalysisNote is pinned to the global form (kind file override), which
    the attestor's noteReference names, so its noteRef points at it."""
    assert identity_for("ContainerAnalysisNote").template == "projects/{project}/notes/{note}"
    refs = {r.path: r.target for r in references_of("BinaryAuthorizationAttestor")}
    assert refs["userOwnedGrafeasNote.noteRef"] == "ContainerAnalysisNote"
