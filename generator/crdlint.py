"""``kccgen lint-crds``: apiextensions structural rules plus our conventions.

Structural (apiextensions.k8s.io/v1): every node has a type (or preserves
unknown fields / is int-or-string), no ``properties`` beside
``additionalProperties``, arrays have ``items``, no ``$ref`` and no logical
junctors carrying types. Conventions, as Config Connector's CRD tests check
them: output-only fields only under ``status.observedState``; no references
in status; short names, category ``gcp``, printer columns and labels present;
every ``*Ref`` is a reference object with the form rules. CEL cost: each
rule's estimated cost, times how often it can run, within the API server's
budget (:mod:`kccgen.generator.celcost`), so a CRD the server would refuse
is reported here first.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kccgen.discovery.behaviours import Behaviour, classify
from kccgen.generator import celcost
from kccgen.generator.emit.crds import RUNTIME_CHECKED
from kccgen.generator.naming import API_NAMED_REF, CEL_RESERVED, cel_field

REQUIRED_COLUMNS = ("Age", "Ready", "Status", "Status Age")
REQUIRED_LABELS = ("cnrm.cloud.google.com/managed-by-kcc", "cnrm.cloud.google.com/stability-level")
_JUNCTORS = ("allOf", "anyOf", "oneOf", "not")


@dataclass(frozen=True, order=True)
class Problem:
    file: str
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}#{self.path}: {self.message}"


def _walk(node: Any, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    if not isinstance(node, dict):
        return
    yield path, node
    for k, v in (node.get("properties") or {}).items():
        yield from _walk(v, f"{path}/properties/{k}")
    if isinstance(node.get("items"), dict):
        yield from _walk(node["items"], f"{path}/items")
    if isinstance(node.get("additionalProperties"), dict):
        yield from _walk(node["additionalProperties"], f"{path}/additionalProperties")


def structural(schema: dict[str, Any], base: str) -> Iterator[tuple[str, str]]:
    for path, node in _walk(schema, base):
        preserve = node.get("x-kubernetes-preserve-unknown-fields") is True
        if "type" not in node and not preserve and not node.get("x-kubernetes-int-or-string"):
            yield path, "no type (structural schemas type every node)"
        if "properties" in node and "additionalProperties" in node:
            yield path, "properties and additionalProperties together"
        if node.get("type") == "array" and "items" not in node:
            yield path, "array without items"
        if "$ref" in node:
            yield path, "$ref is not allowed in CRD schemas"
        for j in _JUNCTORS:
            if j in node:
                yield from _junctor(node[j], f"{path}/{j}")
        if node.get("type") not in (None, "object", "array", "string", "integer", "number", "boolean"):
            yield path, f"unknown type {node.get('type')!r}"


_NOT_IN_JUNCTORS = ("type", "description", "default", "additionalProperties", "nullable")


def _junctor(node: Any, path: str) -> Iterator[tuple[str, str]]:
    """Inside allOf/anyOf/oneOf/not, structural schemas may only constrain, not type."""
    items = node if isinstance(node, list) else [node]
    for i, item in enumerate(items):
        where = f"{path}/{i}" if isinstance(node, list) else path
        if not isinstance(item, dict):
            continue
        for key in _NOT_IN_JUNCTORS:
            if key in item:
                yield where, f"{key} inside a logical junctor (not structural)"
        for k, v in (item.get("properties") or {}).items():
            yield from _junctor(v, f"{where}/properties/{k}")
        for j in _JUNCTORS:
            if j in item:
                yield from _junctor(item[j], f"{where}/{j}")


def conventions(crd: dict[str, Any]) -> Iterator[tuple[str, str]]:
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    kind = str(names.get("kind", ""))
    if crd.get("apiVersion") != "apiextensions.k8s.io/v1" or crd.get("kind") != "CustomResourceDefinition":
        yield "", "not an apiextensions.k8s.io/v1 CustomResourceDefinition"
    name = str((crd.get("metadata") or {}).get("name", ""))
    if not _DNS_SUBDOMAIN.fullmatch(name) or len(name) > 253:
        yield "/metadata/name", f"{name!r} is not a lowercase RFC 1123 subdomain (the API server refuses it)"
    want = {f"gcp{kind.lower()}", f"gcp{names.get('plural', '')}"}
    if not want <= set(names.get("shortNames") or []):
        yield "/spec/names/shortNames", f"short names must include {sorted(want)}"
    if "gcp" not in (names.get("categories") or []):
        yield "/spec/names/categories", "category gcp is missing"
    labels = (crd.get("metadata") or {}).get("labels") or {}
    for label in REQUIRED_LABELS:
        if label not in labels:
            yield "/metadata/labels", f"label {label} is missing"
    for i, v in enumerate(spec.get("versions") or []):
        vp = f"/spec/versions/{i}"
        cols = {c.get("name") for c in v.get("additionalPrinterColumns") or []}
        missing = [c for c in REQUIRED_COLUMNS if c not in cols]
        if missing:
            yield f"{vp}/additionalPrinterColumns", f"printer columns missing: {', '.join(missing)}"
        if "status" not in (v.get("subresources") or {}):
            yield f"{vp}/subresources", "status subresource is missing"
        root = ((v.get("schema") or {}).get("openAPIV3Schema")) or {}
        yield from ((p, m) for p, m in structural(root, f"{vp}/schema/openAPIV3Schema"))
        yield from celcost.problems(root, f"{vp}/schema/openAPIV3Schema")
        yield from _reserved_words(root, f"{vp}/schema/openAPIV3Schema")
        props = root.get("properties") or {}
        sbase = f"{vp}/schema/openAPIV3Schema/properties"
        # an IAM Kind (generator/emit/policies.py) manages a policy: no observed state,
        # and memberFrom names objects by name alone, as in Config Connector
        iam = ((crd.get("metadata") or {}).get("annotations") or {}).get("kccgen.dev/shape") == "iam-policy"
        yield from _unbounded_rule_lists(props.get("spec") or {}, f"{sbase}/spec", False)
        for path, node in _walk(props.get("spec") or {}, f"{sbase}/spec"):
            facts = classify(node.get("description"))
            if any(f.behaviour is Behaviour.OUTPUT_ONLY for f in facts) and not path.endswith("/spec"):
                yield path, "output-only field in spec (it belongs under status.observedState)"
            for name, child in (node.get("properties") or {}).items():
                if str(child.get("description", "")).startswith(API_NAMED_REF):
                    continue  # the API's own *Ref name on a plain value (generator/naming.py)
                if name == "secretKeyRef" and set(child.get("properties") or {}) == {"name", "key"}:
                    continue  # a sensitive field's Secret key (generator/ir/secrets.py), no resource
                if name == "secretRef" and set(child.get("properties") or {}) == {"name", "namespace"}:
                    continue  # a Secret whose keys fill the object (SecretObject, generator/ir/secrets.py), no resource
                if name.endswith("Ref") and not (iam and path.endswith("/memberFrom")):
                    yield from _check_ref(child, f"{path}/properties/{name}")
                if name.endswith("Refs"):
                    if child.get("type") != "array" or "maxItems" not in child:
                        yield f"{path}/properties/{name}", "a Refs list needs type array and maxItems (bounds the CEL cost)"
                    if not child.get("x-kubernetes-validations") and RUNTIME_CHECKED not in str(child.get("description", "")):
                        yield f"{path}/properties/{name}", "a Refs list needs its CEL list rules"
                    yield from _check_ref(child.get("items") or {}, f"{path}/properties/{name}/items")
        status = props.get("status") or {}
        for path, node in _walk(status, f"{sbase}/status"):
            for name, child in (node.get("properties") or {}).items():
                if str(child.get("description", "")).startswith(API_NAMED_REF):
                    continue
                if name.endswith(("Ref", "Refs")) and name != "externalRef":
                    yield f"{path}/properties/{name}", "references are not allowed in status"
        if "observedState" not in (status.get("properties") or {}) and not iam:
            yield f"{sbase}/status", "status.observedState is missing"


_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_SELECTED = re.compile(r"(?<!has\()\b(?:self|oldSelf)((?:\.\w+)+)")


def _reserved_words(node: Any, path: str) -> Iterator[tuple[str, str]]:
    """A rule that selects a property spelled like a CEL reserved word: the server knows it
    only as ``__word__``, so ``self.package`` names nothing (and prices as unbounded)."""
    if not isinstance(node, dict):
        return
    for i, r in enumerate(node.get("x-kubernetes-validations") or []):
        for m in _SELECTED.finditer(str(r.get("rule", ""))):
            bad = [w for w in m.group(1).split(".")[1:] if w in CEL_RESERVED]
            if bad:
                yield f"{path}/x-kubernetes-validations/{i}/rule", f"CEL selects reserved word {bad[0]!r}: write {cel_field(bad[0])}"
    for k, v in (node.get("properties") or {}).items():
        yield from _reserved_words(v, f"{path}/properties/{k}")
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            yield from _reserved_words(node[key], f"{path}/{key}")


def _unbounded_rule_lists(node: Any, path: str, unbounded: bool) -> Iterator[tuple[str, str]]:
    """A CEL rule under an array (or map) without a size bound makes the API
    server's cost estimate assume the largest possible list and refuse the CRD."""
    if not isinstance(node, dict):
        return
    if node.get("x-kubernetes-validations") and unbounded:
        yield path, "CEL rule under an unbounded list or map: bound every array (maxItems) above it"
    for k, v in (node.get("properties") or {}).items():
        yield from _unbounded_rule_lists(v, f"{path}/properties/{k}", unbounded)
    if isinstance(node.get("items"), dict):
        yield from _unbounded_rule_lists(node["items"], f"{path}/items", unbounded or "maxItems" not in node)
    if isinstance(node.get("additionalProperties"), dict):
        yield from _unbounded_rule_lists(node["additionalProperties"], f"{path}/additionalProperties", unbounded or "maxProperties" not in node)


def _check_ref(node: dict[str, Any], path: str) -> Iterator[tuple[str, str]]:
    props = node.get("properties") or {}
    if node.get("type") != "object" or "external" not in props:
        yield path, "a *Ref field must be an object with external"
        return
    if "name" in props:
        rules = " ".join(r.get("rule", "") for r in node.get("x-kubernetes-validations") or [])
        if "has(self.external) != has(self.name)" not in rules and RUNTIME_CHECKED not in str(node.get("description", "")):
            yield path, "a reference with name needs the exactly-one-of external/name rule"
    elif "external" not in (node.get("required") or []):
        yield path, "an external-only reference must require external"


def lint_file(path: Path, display: str | None = None) -> list[Problem]:
    file = display or str(path)
    try:
        # libyaml: a thousand CRDs are ~40 MB of YAML, minutes for the pure-Python loader
        docs = [d for d in yaml.load_all(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader) if d]
    except (OSError, yaml.YAMLError) as e:
        return [Problem(file, "", f"cannot read: {e}".replace("\n", " "))]
    out: list[Problem] = []
    for d in docs:
        out.extend(Problem(file, p, m) for p, m in conventions(d))
    return sorted(set(out))
