"""Walking a KCC path through a Discovery schema: is it an API field, and if not, why not."""

from __future__ import annotations

from kccgen.discovery.document import DiscoveryDoc, JsonSchema


def _deref(doc: DiscoveryDoc, node: JsonSchema) -> JsonSchema:
    while node.ref is not None:
        node = doc.schemas[node.ref]
    return node


def discovery_lookup(doc: DiscoveryDoc, schema: str, path: str) -> tuple[JsonSchema | None, str]:
    """The Discovery schema node at ``path`` below ``schema``; else (None, why)."""
    node = doc.schemas[schema]
    walked = schema
    for seg in path.split("."):
        node = _deref(doc, node)
        if seg == "*":
            if node.additional_properties is None:
                return None, f"{walked} is not a map"
            node, walked = node.additional_properties, walked + ".*"
            continue
        name, lists = seg.split("[", 1)[0], seg.count("[]")
        if name not in node.properties:
            return None, f"{walked} has no property {name}"
        node, walked = node.properties[name], f"{walked}.{name}"
        for _ in range(lists):
            node = _deref(doc, node)
            if node.items is None:
                return None, f"{walked} is not a list"
            node, walked = node.items, walked + "[]"
    return _deref(doc, node), ""


def property_anywhere(doc: DiscoveryDoc, name: str) -> bool:
    """Whether any schema of ``doc`` has a property ``name``: a rename elsewhere, or none at all."""

    def walk(node: JsonSchema) -> bool:
        if name in node.properties:
            return True
        kids = [*node.properties.values(), node.items, node.additional_properties]
        return any(walk(k) for k in kids if k is not None)

    return any(walk(s) for s in doc.schemas.values())
