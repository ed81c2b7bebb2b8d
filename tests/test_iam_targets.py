"""`kccgen coverage` counts the Kinds IAM Kinds can name (issue 29): those whose
resource has getIamPolicy and setIamPolicy. Checked here against the documents
themselves, through each Kind's resource in the surface record."""

from __future__ import annotations

import json
from typing import Any

from kccgen.documents import read_document
from tests.conftest import REPO

COVERAGE = json.loads((REPO / "docs" / "coverage.json").read_text(encoding="utf-8"))


def _resources() -> dict[str, str]:
    out: dict[str, str] = {}
    for rec in (REPO / "surface").glob("*.json"):
        for kind, entry in json.loads(rec.read_text(encoding="utf-8"))["kinds"].items():
            out[kind] = entry["resource"]
    return out


def _methods(resource: str, docs: dict[str, Any]) -> set[str]:
    key, pointer = resource.split("#", 1)
    if key not in docs:
        docs[key] = json.loads(read_document(REPO / "specs", key))
    node: Any = docs[key]
    for part in pointer.strip("/").split("/"):
        node = node[part]
    return set(node.get("methods") or {})


def _own_read(kind: str) -> bool:
    from kccgen.runtime.adapter import adapter_for

    try:
        a = adapter_for(kind)
    except KeyError:
        return True
    return a.get.method == "get" and a.read_list is None


def test_the_iam_targets_are_the_kinds_whose_resource_has_both_policy_methods() -> None:
    targets = set(COVERAGE["iam_targets"])
    assert COVERAGE["summary"]["iam_targets"] == len(targets) > 100
    assert {"PubSubTopic", "StorageBucket", "Project", "Folder", "SecretManagerSecret"} <= targets
    docs: dict[str, Any] = {}
    resources = _resources()
    for kind, resource in sorted(resources.items()):
        # a part of the resource, read through another method or from its list, has not its policy
        own = _own_read(kind)
        has = {"getIamPolicy", "setIamPolicy"} <= _methods(resource, docs) and own
        assert has == (kind in targets), f"{kind}: {resource} has both IAM methods: {has}"
