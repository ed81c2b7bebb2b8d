"""Minimal valid manifests for any generated Kind, derived from its generated tables.

``kccctl example KIND`` and the lifecycle suite (kccgen.runtime.lifecycle) both
start from here, so an example that stops validating shows up as a failed
lifecycle, not as a stale document. The object carries its identity fields, the
spec fields the mutability table marks required (nested ones only under a
required parent), each with a value of the field's type, enum or format; a
reference to a Kind we generate names an example object of that Kind, which is
returned too, dependencies first; any other target gets an ``external`` value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kccgen.contract import Behaviour, FieldRule, Owns, PolicyAdapter, TypeKind
from kccgen.runtime.adapter import adapter_for, policy_for
from kccgen.runtime.identity import identity_for
from kccgen.runtime.mutability import mutability_of
from kccgen.runtime.refs import RefField, choices_of, references_of
from kccgen.runtime.registry import types_modules, unknown_kind

DEFAULT_PROJECT = "example-project"
NAMESPACE = "default"

# Plausible values by parameter or field name: GCP rejects "example" as a region.
_BY_NAME = {"location": "us-central1", "region": "us-central1", "zone": "us-central1-a", "project": DEFAULT_PROJECT}
_BY_FORMAT = {
    "google-duration": "3600s",
    "google-datetime": "2030-01-01T00:00:00Z",
    "date-time": "2030-01-01T00:00:00Z",
    "int64": "1",
    "uint64": "1",
    "byte": "ZXhhbXBsZQ==",
    "google-fieldmask": "labels",
    "date": "2030-01-01",
}


def example_name(kind: str) -> str:
    """``example-pubsubtopic``: lower case, starts with a letter, fits 63 characters (most ID rules)."""
    return f"ex-{kind.lower()}"[:63]


def schema_node(root: Mapping[str, Any], defs: Mapping[str, Any], path: str) -> Mapping[str, Any] | None:
    """The pydantic JSON schema node of a spec path (``a.b[].c``), following $ref/anyOf."""

    def deref(node: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
        while node is not None:
            if "$ref" in node:
                node = defs.get(str(node["$ref"]).rsplit("/", 1)[-1])
            elif "anyOf" in node:
                node = next((x for x in node["anyOf"] if x.get("type") != "null"), None)
            elif "allOf" in node and len(node["allOf"]) == 1:
                node = node["allOf"][0]
            else:
                return node
        return None

    node = deref(root)
    for part in path.split("."):
        if node is None:
            return None
        node = deref((node.get("properties") or {}).get(part.removesuffix("[]")))
        if part.endswith("[]") and node is not None:
            node = deref(node.get("items"))
    return node


def enum_values(node: Mapping[str, Any] | None) -> list[str]:
    vals = [str(v) for v in (node or {}).get("enum") or [] if isinstance(v, str)]
    good = [v for v in vals if not v.endswith("_UNSPECIFIED") and v != "UNSPECIFIED"]
    return good or vals


def scalar_value(rule: FieldRule, node: Mapping[str, Any] | None, name: str) -> Any:
    """A plausible value of one leaf field: its enum's first real value, its format, or its type."""
    leaf = rule.type.leaf()
    if leaf.kind is TypeKind.ENUM or enum_values(node):
        vals = enum_values(node)
        return vals[0] if vals else "EXAMPLE"
    if leaf.kind is TypeKind.BOOLEAN:
        return True
    if leaf.kind is TypeKind.INTEGER:
        return "1" if leaf.format in ("int64", "uint64") else 1
    if leaf.kind is TypeKind.NUMBER:
        return 1.0
    if leaf.format in _BY_FORMAT:
        return _BY_FORMAT[leaf.format]
    if name in _BY_NAME:
        return _BY_NAME[name]
    pattern = str((node or {}).get("pattern") or "")
    if pattern and not re.match(pattern, "example"):
        return "1" if re.match(pattern, "1") else "example"
    return "example"


class Examples:
    """Builds example objects, each Kind once, dependencies before dependants."""

    def __init__(self, project: str = DEFAULT_PROJECT, namespace: str = NAMESPACE) -> None:
        self.project = project
        self.namespace = namespace
        self.generated = types_modules()
        self.objects: dict[str, dict[str, Any]] = {}  # Kind -> object, in dependency order
        self._building: set[str] = set()

    def manifests(self, kind: str) -> list[dict[str, Any]]:
        """The example of ``kind`` last, after the examples it refers to by name."""
        self.build(kind)
        order = list(self.objects)
        return [self.objects[k] for k in order[: order.index(kind) + 1]]

    def build(self, kind: str) -> dict[str, Any]:
        if kind in self.objects:
            return self.objects[kind]
        if kind not in self.generated:
            raise KeyError(unknown_kind(kind, list(self.generated)))
        if (policy := policy_for(kind)) is not None:
            return self._policy(kind, policy)
        self._building.add(kind)
        model = getattr(self.generated[kind], kind)
        schema = model.model_json_schema(by_alias=True)
        defs = schema.get("$defs") or {}
        spec_schema = defs.get(f"{kind}Spec") or {}
        rules = mutability_of(kind)
        refs = {r.path.replace("[]", ""): r for r in references_of(kind)}
        spec: dict[str, Any] = {}
        for param, fld, target in identity_for(kind).spec_fields:
            if fld == "resourceID" or fld in spec or fld in dict(identity_for(kind).defaults):
                continue
            if target:
                spec[fld] = self._ref(target, refs.get(fld))
            elif param in _BY_NAME or f"spec.{fld}" not in rules:
                spec[fld] = _BY_NAME.get(param, "example")
            else:  # an ID of the field's own type (AdExchangeBuyerCreative's integer accountId)
                spec[fld] = scalar_value(rules[f"spec.{fld}"], schema_node(spec_schema, defs, fld), fld)
        # A required oneOf field takes its first key's reference.
        choices = {path.replace("[]", ""): keys[0] for path, keys in choices_of(kind).items() if path}
        # a flattened oneOf (Project's folderRef or organizationRef): only its first key
        others = {r.path for path, keys in choices_of(kind).items() if not path for r in keys[1:]}
        wanted = self._required_paths(rules)
        secrets = adapter_for(kind).secrets
        for path in wanted:
            rel = path.removeprefix("spec.")
            if (rel.split(".")[0] in spec and "." not in rel) or rel in others:
                continue
            rule = rules[path]
            ref = refs.get(rel.replace("[]", ""))
            choice = choices.get(rel.replace("[]", ""))
            if choice is not None:
                one = {choice.choice[1]: self._ref(choice.target, choice)}
                value: Any = [one] if rule.type.kind is TypeKind.ARRAY else one
            elif ref is not None:
                value = self._ref(ref.target, ref)
            else:
                # A list's values come from its items' schema (a list of enums takes an enum value).
                item = rule.type.kind is TypeKind.ARRAY and not rel.endswith("[]")
                node = schema_node(spec_schema, defs, rel + "[]" if item else rel)
                value = self._value(rule, node, rel.rsplit(".", 1)[-1].removesuffix("[]"))
                if rel in secrets:
                    value = {"value": value}  # a sensitive field, given literally
            _put(spec, rel, value, rule)
        example_id = adapter_for(kind).example_id
        if example_id:
            spec["resourceID"] = example_id  # an invented ID would not exist (a service's name)
        obj: dict[str, Any] = {
            "apiVersion": str(model.API_VERSION),
            "kind": kind,
            "metadata": {"name": example_name(kind), "namespace": self.namespace},
            "spec": spec,
        }
        if not any(p == "project" for p, _f, _t in identity_for(kind).spec_fields):
            # No spec field supplies the project (a bucket's insert takes ?project=): the annotation does.
            obj["metadata"]["annotations"] = {"cnrm.cloud.google.com/project-id": self.project}
        self._building.discard(kind)
        self.objects[kind] = obj
        return obj

    def _policy(self, kind: str, policy: PolicyAdapter) -> dict[str, Any]:
        """An IAM Kind's example: a role for a principal on the example PubSubTopic."""
        topic = self.build("PubSubTopic")
        ref = {"kind": "PubSubTopic", "name": topic["metadata"]["name"]}
        member, role = "user:jane@example.com", "roles/pubsub.viewer"
        specs: dict[Owns, dict[str, Any]] = {
            Owns.POLICY: {"resourceRef": ref, "bindings": [{"role": role, "members": [member]}]},
            Owns.BINDINGS: {"resourceRef": ref, "bindings": [{"role": role, "members": [{"member": member}]}]},
            Owns.MEMBER: {"resourceRef": ref, "role": role, "member": member},
            Owns.AUDIT_CONFIG: {
                "resourceRef": {"kind": "Project", "external": f"projects/{self.project}"},
                "service": "allServices",
                "auditLogConfigs": [{"logType": "DATA_READ"}],
            },
        }
        obj = {"apiVersion": policy.api_version, "kind": kind, "metadata": {"name": example_name(kind), "namespace": self.namespace}, "spec": specs[policy.owns]}
        self.objects[kind] = obj
        return obj

    def _required_paths(self, rules: Mapping[str, FieldRule]) -> list[str]:
        """Required spec rows whose every ancestor is required too, parents first."""
        req = {p for p, r in rules.items() if p.startswith("spec.") and Behaviour.REQUIRED in r.behaviours and Behaviour.OUTPUT_ONLY not in r.behaviours}
        out = []
        for p in sorted(req, key=lambda x: (x.count("."), x)):
            parts = p.split(".")
            # a map's values (``nodeTypeConfigs.*.nodeCount``) stand under the map's one example key
            if all(parts[i - 1] == "*" or ".".join(parts[:i]).removesuffix("[]") in req for i in range(2, len(parts))):
                out.append(p)
        return out

    def _value(self, rule: FieldRule, node: Mapping[str, Any] | None, name: str) -> Any:
        kind = rule.type.kind
        if kind is TypeKind.OBJECT:
            return {}
        if kind is TypeKind.MAP:
            item = rule.type.item
            if item is not None and item.kind in (TypeKind.OBJECT, TypeKind.ANY):
                return {"example": {}}  # a map of messages (VMwareEngine nodeTypeConfigs)
            return {"example": scalar_value(rule, None, name)}
        if kind is TypeKind.ANY:
            return {}
        if kind is TypeKind.ARRAY and rule.type.leaf().kind in (TypeKind.OBJECT, TypeKind.ANY):
            return [{}]
        value = scalar_value(rule, node, name)
        return [value] if kind is TypeKind.ARRAY else value

    def _ref(self, target: str, ref: RefField | None) -> Any:
        if target == "Project":
            value: Any = {"external": f"projects/{self.project}"}
        elif target in self.generated and target not in self._building and not (ref and ref.external_only):
            self.build(target)
            value = {"name": example_name(target)}
        else:
            ident = identity_for(target)
            value = {"external": ident.format(**{p: _BY_NAME.get(p, f"ex-{p.lower()}") if p != "project" else self.project for p in ident.params})}
        return [value] if ref is not None and ref.many else value


def _put(spec: dict[str, Any], rel: str, value: Any, rule: FieldRule) -> None:
    """Set ``rel`` (``a.b[].c``) in spec; a list step puts the value in its one item."""
    node: Any = spec
    parts = rel.split(".")
    for part in parts[:-1]:
        key = part.removesuffix("[]")
        if part == "*":  # a map's values: its one example entry
            entry = node.get("example")
            if not isinstance(entry, dict):
                entry = node["example"] = {}
            node = entry
            continue
        if part.endswith("[]"):
            items = node.setdefault(key, [{}])
            if not items or not isinstance(items[0], dict):
                node[key] = items = [{}]
            node = items[0]
        else:
            child = node.get(key)
            if not isinstance(child, dict):
                child = node[key] = {}
            node = child
    last = parts[-1]
    key = last.removesuffix("[]")
    if key in node and isinstance(node[key], dict | list) and node[key]:
        return  # a parent already made room for required children
    if last.endswith("[]") and not isinstance(value, list):
        value = [value]
    node[key] = value
