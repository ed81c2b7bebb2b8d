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


def test_a_field_sent_as_a_method_parameter_names_the_parameter() -> None:
    """SpannerBackup's encryptionConfig.kmsKeyName is a query parameter of backups.create."""
    from kccgen.generator.changelog import Side, cause
    from kccgen.generator.emit.surface import parse_path_value
    from kccgen.generator.surface import KindSurface, PathInfo

    def doc(desc: str) -> dict[str, object]:
        params = {"encryptionConfig.kmsKeyName": {"type": "string", "location": "query", "description": desc}}
        backups = {"methods": {"create": {"parameters": params}}}
        return {"schemas": {"Backup": {"properties": {}}}, "resources": {"projects": {"resources": {"backups": backups}}}}

    res, schema = "spanner.v1#/resources/projects/resources/backups", "spanner.v1#/schemas/Backup"
    was = KindSurface(frozenset(), {"spec.encryptionConfig.kmsKeyName": PathInfo(*parse_path_value("string"))}, "f", res, schema)
    now = KindSurface(frozenset(), {"spec.encryptionConfig.kmsKeyRef": PathInfo(*parse_path_value("object ref=KMSCryptoKey api=encryptionConfig.kmsKeyName"))}, "f", res, schema)
    old = Side("1", {"spanner.v1": "1"}, lambda k: doc("Values are of the form `projects//keys/`."))
    new = Side("2", {"spanner.v1": "2"}, lambda k: doc("Values are of the form `projects/{project}/keys/{key}`."))
    got = cause("SpannerBackup", "spec.encryptionConfig.kmsKeyName", was, now, old, new)
    assert got.startswith("`spanner.v1@2 #/resources/projects/resources/backups/methods/create/parameters/encryptionConfig.kmsKeyName`: description lost")
