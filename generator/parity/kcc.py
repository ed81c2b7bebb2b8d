"""Config Connector's side: the spec field paths of a KCC CRD YAML file.

Paths are relative to ``spec``: ``a.b``, ``a[].b`` for list items, ``a.*.b``
for map values. ``*Ref`` fields and KCC's ``{name, namespace, external}``
reference objects are leaves, as our references are.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kccgen.generator.ir.model import KindIR

_REF_KEYS = frozenset({"external", "name", "namespace", "kind"})


@dataclass(frozen=True)
class KccField:
    """One spec path of a KCC CRD, with what the comparison needs of its schema node."""

    path: str
    shape: str  # object / map / array / scalar / any
    ref: bool  # a reference leaf (*Ref, or a {name, namespace, external} object)


def _ref_like(node: dict[str, Any]) -> bool:
    props = node.get("properties")
    if not isinstance(props, dict) or not props or not set(props) <= _REF_KEYS:
        return False
    if "external" not in props and "name" not in props:
        return False
    return all(isinstance(v, dict) and v.get("type") == "string" for v in props.values())


def _kcc_shape(node: dict[str, Any]) -> str:
    t = node.get("type")
    if t == "array":
        return "array"
    if t == "object":
        return "map" if "additionalProperties" in node and "properties" not in node else "object"
    return "any" if t is None else "scalar"


def kcc_fields(spec: dict[str, Any]) -> list[KccField]:
    """Spec field paths of a KCC CRD's openAPIV3Schema ``spec`` node."""
    out: list[KccField] = []

    def props(node: dict[str, Any], prefix: str) -> None:
        for name in sorted(node.get("properties") or {}):
            sub = node["properties"][name]
            path = f"{prefix}.{name}" if prefix else name
            items = sub.get("items") if sub.get("type") == "array" else None
            ref = (
                name.endswith(("Ref", "Refs"))
                or _ref_like(sub)
                or (isinstance(items, dict) and _ref_like(items))
            )
            out.append(KccField(path, _kcc_shape(sub), ref))
            if not ref:
                descend(sub, path)

    def descend(node: dict[str, Any], path: str) -> None:
        if node.get("type") == "array" and isinstance(node.get("items"), dict):
            descend(node["items"], path + "[]")
        elif node.get("properties"):
            props(node, path)
        elif isinstance(node.get("additionalProperties"), dict) and node[
            "additionalProperties"
        ].get("properties"):
            props(node["additionalProperties"], path + ".*")

    props(spec, "")
    return out


@dataclass(frozen=True)
class KccCrd:
    """One KCC CRD as the report cites it: its file, version and spec paths."""

    file: str
    version: str  # the CRD version read (storage version, else the last)
    kcc_version: str  # cnrm.cloud.google.com/version annotation
    fields: tuple[KccField, ...]


def crd_file(kind: KindIR) -> str:
    """KCC's file name for the Kind's CRD: ``<plural>.<service>.yaml``."""
    return f"{kind.plural}.{kind.group.split('.')[0]}.yaml"


def load_kcc_crd(path: Path) -> KccCrd:
    """The spec paths of the storage version (else the last) of a KCC CRD file."""
    # libyaml when present: the pure-Python loader takes ~0.1 s per CRD.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    doc: dict[str, Any] = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
    versions: list[dict[str, Any]] = doc["spec"]["versions"]
    version = next((v for v in versions if v.get("storage")), versions[-1])
    spec: dict[str, Any] = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    annotations = (doc.get("metadata") or {}).get("annotations") or {}
    return KccCrd(
        path.name,
        str(version["name"]),
        str(annotations.get("cnrm.cloud.google.com/version", "")),
        tuple(kcc_fields(spec)),
    )
