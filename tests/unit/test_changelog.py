"""A change's cause, read from the two documents."""

from __future__ import annotations

from kccgen.generator.changelog import description_change, locate

DOC = {
    "schemas": {
        "Topic": {"properties": {"cfg": {"$ref": "Cfg"}, "tags": {"type": "array", "items": {"$ref": "Tag"}}}},
        "Cfg": {"properties": {"kmsKeyName": {"type": "string", "description": "The key."}}},
        "Tag": {"properties": {"name": {"type": "string"}}},
    }
}


def test_locate_follows_refs_and_list_items() -> None:
    assert locate(DOC, "pubsub.v1#/schemas/Topic", "cfg.kmsKeyName") == ("#/schemas/Cfg/properties/kmsKeyName", {"type": "string", "description": "The key."})
    assert locate(DOC, "pubsub.v1#/schemas/Topic", "tags[].name") == ("#/schemas/Tag/properties/name", {"type": "string"})
    assert locate(DOC, "pubsub.v1#/schemas/Topic", "cfg.gone") is None
    assert locate(None, "pubsub.v1#/schemas/Topic", "cfg") is None


def test_a_cause_names_the_sentence_and_the_keys_that_changed() -> None:
    old = {"type": "string", "default": "dns#policy", "description": "The kind. Values are of the form `projects//topics/`."}
    new = {"type": "string", "default": "dns#policy", "readOnly": True, "description": "The kind. Output only."}
    assert description_change(old, new) == "description lost “Values are of the form `projects//topics/`.”, gained “Output only.”, readOnly: absent → True"
    assert description_change({"description": "A topic."}, {}).startswith("its description was deleted (was: “A topic.”)")
    assert description_change(old, old) == "the property is unchanged (the change is in how kccgen reads it)"


def test_a_vanished_kind_whose_resource_is_another_kind_names_it() -> None:
    from kccgen.generator.changelog import Side, kind_cause
    from kccgen.generator.surface import KindSurface

    res = "aiplatform.v1#/resources/projects/resources/locations/resources/reasoningEngines/resources/memories"
    was = KindSurface(frozenset({"v1alpha1"}), {}, "surface/aiplatform.v1.json", res, "")
    now = {"AIPlatformReasoningEngineMemory": KindSurface(frozenset({"v1alpha1"}), {}, "surface/aiplatform.v1.json", res, "")}
    side = Side("2.202.0", {"aiplatform.v1": "1"}, lambda key: {"resources": {}})
    assert kind_cause("AIPlatformMemory", was, {}, side, side, now).endswith("is the Kind AIPlatformReasoningEngineMemory now (renamedTo: AIPlatformReasoningEngineMemory)")
    assert kind_cause("AIPlatformMemory", was, {"AIPlatformMemory": "no get method"}, side, side, now) == "now not generated: no get method"
    assert "is not in" in kind_cause("AIPlatformMemory", was, {}, side, side, {})
