"""Emit ``generated/crds/<plural>.<group>.yaml``: built as objects, dumped with sorted keys.

The schema is structural (every node typed; Struct/``any`` fields use
``x-kubernetes-preserve-unknown-fields``; recursion is cut the same way,
because CRD schemas cannot use ``$ref``). CEL rules cover what needs no GCP
call: the form of every reference, the ``<kind>Refs`` list rules, and the
identity fields.

Other immutable fields get NO CEL rule on purpose: the runtime checks them,
because ``cnrm.cloud.google.com/force-acquire`` must be able to bypass the
check and CEL cannot read annotations. A CEL rule would refuse the update at
admission, before force-acquire could take effect.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from kccgen.contract import Locations
from kccgen.discovery.behaviours import Behaviour
from kccgen.generator import celcost
from kccgen.generator.emit.types import FORMAT_PATTERNS, INT64_FORMATS, summary
from kccgen.generator.ir.model import IR, AliasIR, FieldIR, KindIR, ModelSet, ObjectIR, TypeIR
from kccgen.generator.naming import API_NAMED_REF, cel_field

# Bounds that keep the CEL cost estimate small: the API server multiplies a
# rule's cost by the maximum size of every list above it, so every array
# holding a rule is bounded too, not only the <kind>Refs lists.
MAX_REFS = 50
MAX_REF_LEN = 512
MAX_RULED_LIST = 100
# A ruled list inside a ruled list costs the product of both bounds: the
# O(n^2) uniqueness rule of a 50-entry Refs list under a 100-entry list was
# estimated at 5.6x the API server's per-rule budget (MonitoringAlertPolicy's
# alertStrategy.notificationChannelStrategy[].notificationChannelRefs), so
# every array nested under a ruled list is capped lower (kccgen lint-crds
# checks the resulting cost).
MAX_NESTED_RULED_LIST = 16

LABELS = {
    "cnrm.cloud.google.com/managed-by-kcc": "true",
    "cnrm.cloud.google.com/stability-level": "stable",
    "cnrm.cloud.google.com/system": "true",
}

# Config Connector's columns, without its per-column descriptions: kubectl
# never shows them, and in every version of every CRD they cost 0.3 MB.
PRINTER_COLUMNS = [
    {"jsonPath": ".metadata.creationTimestamp", "name": "Age", "type": "date"},
    {"jsonPath": ".status.conditions[?(@.type=='Ready')].status", "name": "Ready", "type": "string"},
    {"jsonPath": ".status.conditions[?(@.type=='Ready')].reason", "name": "Status", "type": "string"},
    {"jsonPath": ".status.conditions[?(@.type=='Ready')].lastTransitionTime", "name": "Status Age", "type": "date"},
]


def ref_schema(target: str, external_only: bool, description: str) -> dict[str, Any]:
    ext = {"type": "string", "maxLength": MAX_REF_LEN, "description": f"The {target}'s externalRef (asset-inventory name without the service domain)."}
    if external_only:
        return {
            "type": "object",
            "description": description,
            "properties": {"external": ext},
            "required": ["external"],
        }
    return {
        "type": "object",
        "description": description,
        "properties": {
            "external": ext,
            "name": {"type": "string", "maxLength": MAX_REF_LEN, "description": f"The metadata.name of a {target} object."},
            "namespace": {"type": "string", "maxLength": MAX_REF_LEN, "description": f"The metadata.namespace of the {target} object; defaults to this object's namespace."},
        },
        "x-kubernetes-validations": [
            {"rule": "has(self.external) != has(self.name)", "message": "exactly one of external or name must be set"},
            {"rule": "!has(self.namespace) || has(self.name)", "message": "namespace is only allowed with name"},
        ],
    }


def refs_list_rules(external_only: bool) -> list[dict[str, str]]:
    rules = [
        {
            "rule": "self.all(r, has(r.external)) || self.all(r, has(r.name))",
            "message": "use external for every entry or name for every entry, not a mix",
        }
    ]
    if external_only:
        rules = []
    rules.append(
        {
            "rule": "self.filter(r, has(r.external)).all(r, self.filter(s, has(s.external) && s.external == r.external).size() == 1)",
            "message": "external values must be unique",
        }
    )
    return rules


def identity_rule(field: str, is_ref: bool) -> dict[str, str]:
    """Presence-aware: neither clearing nor setting an unset field passes.

    ``self.x == oldSelf.x`` alone would raise on a missing field and, worse,
    let a cleared-then-set value through. A ref may switch between its
    external and name forms; the runtime checks that both name the same
    resource as status.externalRef.
    """
    f = cel_field(field)
    same = f"self.{f} == oldSelf.{f}"
    if is_ref:
        same = f"({same} || has(self.{f}.external) != has(oldSelf.{f}.external))"
    return {
        "rule": f"has(self.{f}) == has(oldSelf.{f}) && (!has(self.{f}) || {same})",
        "message": f"{field} is immutable: it is part of the resource's identity",
    }


def create_only_rule(field: str, is_ref: bool) -> dict[str, str]:
    """An immutable field GCP never reports back: the runtime cannot compare it with the
    live resource, so only the old-versus-new check at admission can refuse a change.
    Presence-aware as :func:`identity_rule`; a reference may switch forms."""
    rule = identity_rule(field, is_ref)["rule"]
    return {"rule": rule, "message": f"{field} is immutable: it is sent only when the resource is created, and GCP never reports it back"}


#: How a field with Config Connector's other form (kccgen.contract.Form) is described.
OTHER_FORM_NOTES = {
    "json": "Config Connector's form is accepted too: a string holding the value as JSON.",
    "true": "Config Connector's form is accepted too: true (the empty object) or false (unset).",
    "list": "Config Connector's form is accepted too: the object's list itself.",
}


def alias_rule(a: AliasIR) -> dict[str, str] | None:
    """A Config Connector alias and the field it stands for may not both be set:
    the runtime would have to pick one, and a silent pick hides a mistake. A
    nested alias is checked in each object on its path (``[]``: every element);
    one named as its own field (another type for it) needs no rule, nor one beside
    its field in a nested object (that object's own rule says it: generator/ir/aliases.py)."""
    if a.field == a.target:
        return None
    if "." in a.field and a.field.rpartition(".")[0] == a.target.rpartition(".")[0]:
        return None
    message = f"{a.field} is Config Connector's name for {a.target}: set one of the two, not both"
    if "." not in a.field:
        parts = [cel_field(p) for p in a.target.split(".")]
        target = " && ".join(f"has(self.{'.'.join(parts[:n])})" for n in range(1, len(parts) + 1))
        return {"rule": f"!has(self.{cel_field(a.field)}) || !({target})", "message": message}
    return {"rule": _both_unset(a.field.split("."), a.target.split("."), "self", 0), "message": message}


def _chain(var: str, parts: list[str]) -> str:
    return " && ".join(f"has({var}.{'.'.join(cel_field(p) for p in parts[:n])})" for n in range(1, len(parts) + 1))


def _both_unset(field: list[str], target: list[str], var: str, depth: int) -> str:
    """CEL: not both paths set below ``var``; they share their steps up to the last list."""
    lists = [k for k, p in enumerate(field) if p.endswith("[]")]
    if not lists:
        return f"!({_chain(var, field)}) || !({_chain(var, target)})"
    k = lists[0]
    head = [p.removesuffix("[]") for p in field[: k + 1]]
    x = f"x{depth}"
    inner = _both_unset(field[k + 1 :], target[k + 1 :], x, depth + 1)
    return f"!({_chain(var, head)}) || {var}.{'.'.join(cel_field(p) for p in head)}.all({x}, {inner})"


def _through(a: AliasIR, formed: tuple[str, ...]) -> bool:
    """Whether an alias or its target names a field of another form, or a path through one."""
    return any(p == f or p.startswith((f + ".", f + "[")) for p in (a.field, a.target) for f in formed)


def location_rules(loc: Locations | None) -> list[dict[str, str]]:
    """Config Connector's ``location`` is identity (immutable) and, where the Kind
    has a region or zone field, another name for it: exactly one of the two."""
    if loc is None:
        return []
    rules = [identity_rule(loc.field, False)]
    if loc.param:
        f, p = cel_field(loc.field), cel_field(loc.param)
        rules.append({"rule": f"has(self.{p}) != has(self.{f})", "message": f"set exactly one of {loc.param} and {loc.field} (Config Connector's name for it)"})
    return rules


def parent_rules(fields: tuple[str, ...]) -> list[dict[str, str]]:
    """A Kind under several top-level parents (project, folder, organization, billing
    account): each parent field is identity, and at most one may be set (none: the
    project comes from the project-id annotation)."""
    if not fields:
        return []
    rules = [identity_rule(f, True) for f in fields[1:]]  # the project's rule comes with the identity params
    count = " + ".join(f"(has(self.{cel_field(f)}) ? 1 : 0)" for f in fields)
    rules.append({"rule": f"{count} <= 1", "message": f"set at most one of {', '.join(fields)}"})
    return rules


def _has_rules(node: object) -> bool:
    """Whether a schema subtree carries any CEL rule."""
    if isinstance(node, dict):
        return "x-kubernetes-validations" in node or any(_has_rules(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_rules(v) for v in node)
    return False


def _cap_nested_lists(node: object) -> None:
    """Lower the bound of every ruled array or map below a ruled list or map to MAX_NESTED_RULED_LIST."""
    if isinstance(node, dict):
        if node.get("type") == "array" and ("x-kubernetes-validations" in node or _has_rules(node.get("items"))):
            node["maxItems"] = min(int(node.get("maxItems", MAX_NESTED_RULED_LIST)), MAX_NESTED_RULED_LIST)
        if isinstance(node.get("additionalProperties"), dict) and _has_rules(node["additionalProperties"]):
            node["maxProperties"] = min(int(node.get("maxProperties", MAX_NESTED_RULED_LIST)), MAX_NESTED_RULED_LIST)
        for v in node.values():
            _cap_nested_lists(v)
    elif isinstance(node, list):
        for v in node:
            _cap_nested_lists(v)


class SchemaBuilder:
    def __init__(self, ir: IR, k: KindIR) -> None:
        self.ir = ir
        self.k = k
        self.models: ModelSet = k.krm_models
        self.ref_classes = {cls: mod for mod, cls in k.ref_imports}
        self.in_status = False

    def _external_only(self, cls: str) -> bool:
        t = self.ir.target(cls.removesuffix("Ref"))
        return not (t.ours or t.by_name)

    def type_schema(self, t: TypeIR, description: str, stack: tuple[str, ...]) -> dict[str, Any]:
        s: dict[str, Any]
        if t.kind == "object" and t.ref is not None and t.ref in self.ref_classes:
            return ref_schema(t.ref.removesuffix("Ref"), self._external_only(t.ref), description)
        if t.kind == "array" and t.item is not None and t.item.kind == "object" and t.item.ref in self.ref_classes:
            cls = t.item.ref
            assert cls is not None
            ext_only = self._external_only(cls)
            s = {
                "type": "array",
                "maxItems": MAX_REFS,
                "items": ref_schema(cls.removesuffix("Ref"), ext_only, f"A reference to a {cls.removesuffix('Ref')}."),
                "x-kubernetes-validations": refs_list_rules(ext_only),
            }
        elif t.kind == "string" and t.format in INT64_FORMATS:
            # String form kept (int64 past 2^53 survives); integers accepted as in KCC's CRDs.
            s = {"x-kubernetes-int-or-string": True, "pattern": FORMAT_PATTERNS[t.format]}
        elif t.kind == "string":
            s = {"type": "string"}
            if t.format in FORMAT_PATTERNS:
                s["pattern"] = FORMAT_PATTERNS[t.format]
        elif t.kind == "integer":
            s = {"type": "integer"}
        elif t.kind == "number":
            s = {"type": "number"}
        elif t.kind == "boolean":
            s = {"type": "boolean"}
        elif t.kind == "enum":
            assert t.ref is not None
            enum = next(e for e in self.models.enums if e.name == t.ref)
            s = {"type": "string", "enum": [v.value for v in enum.values]}
        elif t.kind == "any":
            s = {"x-kubernetes-preserve-unknown-fields": True}
        elif t.kind == "array":
            assert t.item is not None
            s = {"type": "array", "items": self.type_schema(t.item, "", stack)}
            if _has_rules(s["items"]):
                s["maxItems"] = MAX_RULED_LIST
                _cap_nested_lists(s["items"])
        elif t.kind == "map":
            assert t.item is not None
            if t.item.kind == "any":
                s = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
            else:
                s = {"type": "object", "additionalProperties": self.type_schema(t.item, "", stack)}
                if _has_rules(s["additionalProperties"]):  # a map is a list to the cost estimate
                    s["maxProperties"] = MAX_RULED_LIST
                    _cap_nested_lists(s["additionalProperties"])
        elif t.kind == "object":
            assert t.ref is not None
            if t.ref in stack:
                s = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                description = (description + " " if description else "") + f"(Recursive {t.ref}: nested levels are not validated by the CRD.)"
            else:
                s = self.object_schema(self.models.object(t.ref), (*stack, t.ref))
        else:
            raise ValueError(t.kind)
        if description:
            s["description"] = description
        return s

    def object_schema(self, o: ObjectIR, stack: tuple[str, ...]) -> dict[str, Any]:
        if o.kinds:
            # a reference whose kind key picks the Kind: a reference object's schema and rules, and kind
            ref = ref_schema(" or ".join(o.kinds), False, o.description)
            ref.pop("description")
            ref["properties"]["kind"] = {"type": "string", "enum": list(o.kinds), "maxLength": MAX_REF_LEN, "description": f"The Kind of the object `name` names (default {o.kinds[0]})."}
            return ref
        props = {f.name: self.field_schema(f, stack) for f in o.fields}
        s: dict[str, Any] = {"type": "object"}
        if props:
            s["properties"] = props
        req = sorted(f.name for f in o.fields if f.required)
        if req:
            s["required"] = req
        rules = []
        if o.exactly_one:
            count = " + ".join(f"(has(self.{cel_field(k)}) ? 1 : 0)" for k in o.exactly_one)
            rules.append({"rule": f"{count} == 1", "message": f"set exactly one of {', '.join(o.exactly_one)}"})
        formed = {f.name for f in o.fields if f.other_form}
        for group in o.at_most_one:
            if formed & set(group):
                continue  # a node of any value is no field to CEL (the API server refuses the rule); the runtime checks it
            count = " + ".join(f"(has(self.{cel_field(k)}) ? 1 : 0)" for k in group)
            rules.append({"rule": f"{count} <= 1", "message": f"set at most one of {', '.join(group)}"})
        for group in o.one_required:
            rules.append({"rule": " || ".join(f"has(self.{cel_field(k)})" for k in group), "message": f"{' or '.join(group)} is required"})
        if rules:
            s["x-kubernetes-validations"] = rules
        return s

    def field_schema(self, f: FieldIR, stack: tuple[str, ...]) -> dict[str, Any]:
        if f.other_form:
            # the API's object or Config Connector's other form: no one structural type takes
            # both, so the node takes any value; the model checks it and the runtime rewrites it
            return {"x-kubernetes-preserve-unknown-fields": True, "description": f"{f.description} {OTHER_FORM_NOTES[f.other_form]}".strip()}
        return self.type_schema(f.type, summary(f.description) if self.in_status else f.description, stack)

    def spec_schema(self) -> dict[str, Any]:
        s = self.object_schema(self.k.spec, (self.k.spec.name,))
        s["description"] = f"{self.k.kind}Spec defines the desired state of {self.k.kind}."
        # A nested identity field (androidpublisher's regionsVersion.version) gets
        # no admission rule: has() on it raises when its parent is absent. The
        # runtime still refuses the change (its mutability row is identity).
        ids = [p for p in self.k.identity.params if p.covered_by is None and "." not in p.krm_field]
        rules = [identity_rule(p.krm_field, p.role == "parent") for p in ids]
        id_fields = {p.krm_field for p in self.k.identity.params}
        # A create-only parameter whose name is no CEL identifier (androidpublisher's
        # `regionsVersion.version` query parameter) gets no rule: it would need
        # Kubernetes' __dot__ escaping, and is left to the create call.
        create_only = {
            f.name: f for f in self.k.spec.fields if {Behaviour.IMMUTABLE, Behaviour.INPUT_ONLY} <= f.behaviours and f.name not in id_fields and not f.other_form
        }
        rules += [create_only_rule(f.name, f.type.ref in self.ref_classes) for f in create_only.values() if f.name.isidentifier()]
        # an alias of a create-only field is create-only too (ComputeNodeGroup's size): a change
        # to it would reach only a parameter GCP never reports back, and be lost without a word
        rules += [
            create_only_rule(a.field, create_only[a.target].type.ref in self.ref_classes)
            for a in self.k.aliases
            if a.target in create_only and a.field != a.target and a.field.isidentifier()
        ]
        # target "": sent nowhere; one through a field of another form (a node of any value) is no
        # field to CEL, which the API server refuses: the runtime refuses both spellings instead
        formed = tuple(f.path for f in self.k.forms)
        rules += [
            r
            for r in map(alias_rule, (a for a in self.k.aliases if a.target and not _through(a, formed)))
            if r is not None
        ]
        rules += location_rules(self.k.locations)
        rules += parent_rules(self.k.identity.parent_fields)
        s["x-kubernetes-validations"] = [*s.get("x-kubernetes-validations", []), *rules]
        return s

    def status_schema(self) -> dict[str, Any]:
        # Output-only fields are described by their first sentence: users write
        # spec, not status, and whole descriptions there were 40 % of the CRDs.
        self.in_status = True
        try:
            observed = self.object_schema(self.k.observed_state, (self.k.observed_state.name,))
        finally:
            self.in_status = False
        observed["description"] = f"The state of the {self.k.kind} as GCP reports it (output-only fields)."
        return {
            "type": "object",
            "description": f"{self.k.kind}Status defines the observed state of {self.k.kind}.",
            "properties": {
                # The status boilerplate is in every CRD: the standard condition
                # fields without their per-field texts (Kubernetes documents them),
                # about 0.8 MB over 1,258 Kinds, which the size budget needs.
                "conditions": {
                    "type": "array",
                    "description": "Conditions represent the latest available observations of the object's current state.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "lastTransitionTime": {"type": "string"},
                            "message": {"type": "string"},
                            "observedGeneration": {"type": "integer"},
                            "reason": {"type": "string"},
                            "status": {"type": "string"},
                            "type": {"type": "string"},
                        },
                    },
                },
                "createPending": {"type": "string", "description": "A create in flight (the service picks the ID)."},
                "externalRef": {"type": "string", "description": f"A unique specifier for the {self.k.kind} in GCP: {self.k.identity.template}."},
                "observedGeneration": {"type": "integer", "description": "The generation most recently observed by the controller."},
                "observedState": observed,
            },
        }


def spec_required(k: KindIR) -> bool:
    """Whether ``spec`` must be present: only when a field in it is required.

    Config Connector's manifests omit ``spec`` for Kinds whose every field is
    optional (a bare PubSubTopic or StorageBucket); requiring it anyway would
    refuse them for no reason. The pydantic ``<Kind>`` model agrees (files.py).
    """
    return any(f.required for f in k.spec.fields) or bool(k.locations and k.locations.param)


#: Appended to the description of a node whose rules the CEL budget could not afford.
RUNTIME_CHECKED = (
    "(No CRD rule here: at this depth the API server's CEL cost budget would refuse it; "
    "kccgen's runtime checks this value's form.)"
)


def _node_at(root: dict[str, Any], rule_path: str) -> dict[str, Any]:
    """The schema node holding a rule, from its ``rule_costs`` path
    (``/properties/spec/.../x-kubernetes-validations/0/rule``)."""
    node = root
    for part in rule_path.strip("/").split("/x-kubernetes-validations/")[0].split("/"):
        node = node[part]
    return node


def fit_cel_budget(root: dict[str, Any]) -> int:
    """Drop the rules the API server would refuse to price, most expensive node
    first: every rule over the per-rule budget, then until the schema's total fits.
    Only reference rules below spec can go (the identity rules on spec run once);
    the runtime checks every reference's form wherever it is (runtime/refs.py), so
    nothing goes unchecked, it is only checked later. Returns the nodes stripped."""
    worst: dict[str, int] = {}  # node -> its dearest rule
    cost: dict[str, int] = {}  # node -> all its rules
    for rc in celcost.rule_costs(root, ""):
        node = rc.path.split("/x-kubernetes-validations/")[0]
        worst[node] = max(worst.get(node, 0), rc.total)
        cost[node] = cost.get(node, 0) + rc.total
    total = sum(cost.values())
    stripped = 0
    for node in sorted(cost, key=lambda n: (-worst[n], -cost[n], n)):
        if worst[node] <= celcost.PER_RULE_LIMIT and total <= celcost.PER_CRD_LIMIT:
            break
        if node == "/properties/spec":
            raise ValueError(f"the identity rules on spec cost {cost[node]:,}: over the API server's budget")
        schema = _node_at(root, node + "/x-kubernetes-validations/0")
        del schema["x-kubernetes-validations"]
        schema["description"] = f"{schema['description']} {RUNTIME_CHECKED}" if schema.get("description") else RUNTIME_CHECKED
        total -= cost[node]
        stripped += 1
    return stripped


def version_priority(version: str) -> tuple[int, int, int]:
    """Kubernetes' order of version names: GA before beta before alpha, higher numbers first."""
    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if m is None:
        return (-1, 0, 0)
    stage = {"beta": 1, "alpha": 0}.get(m.group(2) or "", 2)
    return (stage, int(m.group(1)), int(m.group(3) or 0))


def without_descriptions(node: Any) -> Any:
    """A copy of a schema without its descriptions, but for the markers the lint and the
    runtime read (a reference checked at runtime, an API field named like a reference)."""
    if isinstance(node, list):
        return [without_descriptions(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "description" and isinstance(value, str):
            if RUNTIME_CHECKED in value or value.startswith(API_NAMED_REF):
                out[key] = value
        elif key == "properties" and isinstance(value, dict):
            out[key] = {name: without_descriptions(v) for name, v in value.items()}  # a field may be named description
        else:
            out[key] = without_descriptions(value)
    return out


def crd(ir: IR, k: KindIR) -> dict[str, Any]:
    b = SchemaBuilder(ir, k)
    root: dict[str, Any] = {
        "type": "object",
        "description": k.description or k.kind,
        "properties": {
            "apiVersion": {"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."},
            "kind": {"type": "string", "description": "Kind is a string value representing the REST resource this object represents."},
            "metadata": {"type": "object"},
            "spec": b.spec_schema(),
            "status": b.status_schema(),
        },
    }
    if spec_required(k):
        root["required"] = ["spec"]
    fit_cel_budget(root)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": f"{k.plural}.{k.group}",
            "labels": dict(LABELS),
            "annotations": {
                # The document, not its revision (specs/discovery.lock.json has
                # that): a CRD's bytes change only when its schema does.
                "kccgen.dev/discovery": k.api.doc_key,
                "kccgen.dev/kind-config": k.config_file,
            },
        },
        "spec": {
            "group": k.group,
            "names": {
                "categories": ["gcp"],
                "kind": k.kind,
                "listKind": f"{k.kind}List",
                "plural": k.plural,
                "shortNames": list(k.short_names),
                "singular": k.lower,
            },
            "scope": "Namespaced",
            # Config Connector's version names (kccVersions) are served with the same
            # validation, so no conversion is needed; ours is the storage version.
            # The version kubectl prefers (explain, get) comes first and carries the
            # descriptions; the others leave them out (2.9 MB over 163 CRDs).
            "versions": [
                {
                    "name": version,
                    "served": True,
                    "storage": version == k.version,
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": [dict(c) for c in PRINTER_COLUMNS],
                    "schema": {"openAPIV3Schema": root if n == 0 else without_descriptions(root)},
                }
                for n, version in enumerate(sorted(k.served_versions, key=version_priority, reverse=True))
            ],
        },
    }


def crd_path(k: KindIR) -> str:
    return f"generated/crds/{k.plural}.{k.group}.yaml"


def crd_source(ir: IR, k: KindIR) -> str:
    # libyaml's emitter (PyYAML's wheels ship it): 7x the pure-Python one, and
    # always the same one, so the bytes do not depend on what is installed.
    # Long strings stay on one line: folded at 100 columns, each continuation
    # line repeated the deep schema indentation (4 of 50 MB at 1,045 Kinds).
    # A mapping or list of scalars only (a leaf field's schema, an enum, a
    # required list) goes on one line in flow style: the block form gave each
    # of its keys a line of deep indentation (10 of 52.5 MB at 1,274 Kinds).
    return yaml.dump(crd(ir, k), Dumper=_CrdDumper, sort_keys=True, allow_unicode=True, width=1 << 20, default_flow_style=None)


class _CrdDumper(yaml.CSafeDumper):
    """PyYAML's safe dumper, quoting the YAML 1.1 booleans PyYAML does not know:
    the API server's YAML reads a plain ``y`` or ``n`` as a boolean, so Merchant
    API's ``x``/``y`` coordinates made a ``required`` list of a string and a bool."""


_CrdDumper.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:y|Y|n|N)$"), list("yYnN"))
