"""IR stage: Discovery schemas -> named API payload classes.

Only schemas reachable from the Kinds' resources and method bodies are
converted, so compute's ~900 schemas shrink to what Network and Subnetwork
use. Inline objects and enums are named after their path (``TopicState``,
``BucketLifecycleRuleAction``) so names survive unrelated API changes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from kccgen.discovery.behaviours import Behaviour as B
from kccgen.discovery.behaviours import Fact, classify
from kccgen.discovery.document import DiscoveryDoc, JsonSchema, Method
from kccgen.discovery.errors import json_path
from kccgen.generator.diagnostics import Reporter
from kccgen.generator.ir.model import EnumIR, EnumValue, FieldIR, ModelSet, ObjectIR, TypeIR
from kccgen.generator.naming import BUILTIN_NAMES, class_from_path, pascal

_SCALARS = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean", "any": "any"}


class ApiModelBuilder:
    def __init__(self, doc: DiscoveryDoc, reporter: Reporter, create_method_ids: frozenset[str]) -> None:
        self.doc = doc
        self.reporter = reporter
        self.create_method_ids = create_method_ids
        self.objects: dict[str, ObjectIR] = {}
        self.enums: dict[str, EnumIR] = {}
        self._building: set[str] = set()
        self._schema_class: dict[str, str] = {}
        # A class named like a builtin (migrationcenter's ImportError) would be
        # shadowed by it while pydantic resolves annotations: such names are taken.
        self._taken: dict[str, str] = {name: "python builtins" for name in BUILTIN_NAMES}  # class name -> source
        for sid in sorted(doc.schemas):
            self._schema_class[sid] = self._claim(pascal(sid), json_path("schemas", sid))

    def _loc(self, path: str) -> str:
        return f"{self.doc.key}#{path}"

    def _claim(self, name: str, source: str, suffix: str = "Value") -> str:
        """Reserve a class name; a clash with another source gets a named suffix."""
        cand = name
        while cand in self._taken and self._taken[cand] != source:
            cand += suffix
        self._taken[cand] = source
        return cand

    def schema_class(self, sid: str) -> str:
        """Class name for named schema ``sid``; builds it on first use."""
        name = self._schema_class[sid]
        if name not in self.objects and name not in self._building:
            self._building.add(name)
            node = self.doc.schemas[sid]
            path = json_path("schemas", sid)
            self.objects[name] = self._object(name, node, (sid,), path)
            self._building.discard(name)
        return name

    def _object(self, name: str, node: JsonSchema, owner: tuple[str, ...], path: str) -> ObjectIR:
        fields = []
        if node.additional_properties is not None and node.properties:
            self.reporter.warn(self._loc(path), "unsupported", "properties and additionalProperties together; additionalProperties ignored")
        for pname, prop in node.properties.items():
            ppath = f"{path}/properties/{pname}"
            t = self.type_of(prop, (*owner, pname), ppath)
            if t is None:
                continue
            facts = list(classify(prop.description, prop.read_only))
            if prop.annotations is not None:
                for mid in prop.annotations.required:
                    if mid in self.create_method_ids:
                        facts.append(Fact(B.REQUIRED, f"annotations.required:{mid}"))
            fields.append(
                FieldIR(
                    name=pname,
                    type=t,
                    description=(prop.description or "").strip(),
                    facts=tuple(sorted(set(facts))),
                    source=self._loc(ppath),
                    deprecated=prop.deprecated,
                    api_name=pname,
                )
            )
        return ObjectIR(name, (node.description or "").strip(), tuple(fields), self._loc(path), open=True)

    def type_of(self, node: JsonSchema, owner: tuple[str, ...], path: str) -> TypeIR | None:
        if node.ref is not None:
            target = self.doc.schemas[node.ref]
            if target.type not in (None, "object"):
                return self.type_of(target, (node.ref,), json_path("schemas", node.ref))
            return TypeIR("object", ref=self.schema_class(node.ref))
        t = node.type
        if t == "string" and node.enum:
            return TypeIR("enum", format=node.format, ref=self._enum(node, owner, path))
        if t in _SCALARS:
            return TypeIR(_SCALARS[t], format=node.format)  # type: ignore[arg-type]
        if t == "array":
            if node.items is None:
                self.reporter.warn(self._loc(path), "unsupported", "array without items; field skipped")
                return None
            item = self.type_of(node.items, owner, f"{path}/items")
            return None if item is None else TypeIR("array", item=item)
        if t == "object":
            if node.properties:
                name = self._claim(class_from_path(*owner), path)
                if name not in self.objects and name not in self._building:
                    self._building.add(name)
                    self.objects[name] = self._object(name, node, (name,), path)
                    self._building.discard(name)
                return TypeIR("object", ref=name)
            if node.additional_properties is not None:
                item = self.type_of(node.additional_properties, (*owner, "value"), f"{path}/additionalProperties")
                return None if item is None else TypeIR("map", item=item)
            return TypeIR("map", item=TypeIR("any"))
        self.reporter.warn(self._loc(path), "unsupported", f"type {t!r} is not supported; field skipped")
        return None

    def _enum(self, node: JsonSchema, owner: tuple[str, ...], path: str) -> str:
        name = self._claim(class_from_path(*owner), path, suffix="Enum")
        if name not in self.enums:
            descs = node.enum_descriptions
            depr = node.enum_deprecated
            values = tuple(
                EnumValue(v, descs[i] if i < len(descs) else "", bool(depr[i]) if i < len(depr) else False)
                for i, v in enumerate(node.enum)
            )
            self.enums[name] = EnumIR(name, (node.description or "").strip(), values, self._loc(path))
        return name

    def model_set(self) -> ModelSet:
        return ModelSet(
            tuple(self.objects[k] for k in sorted(self.objects)),
            tuple(self.enums[k] for k in sorted(self.enums)),
        )


    def parameters_class(self, name: str, method: Method, params: tuple[str, ...], location: str) -> str:
        """A class for some query parameters of a method (a create's inputs such as
        ``?predefinedAcl=``), typed as if they were a schema's properties."""
        props = {}
        for pname in params:
            p = method.parameters[pname]
            node = JsonSchema.model_validate(
                {"type": p.type, "format": p.format, "description": p.description, "enum": p.enum, "enumDescriptions": p.enum_descriptions}
            )
            props[pname] = JsonSchema.model_validate({"type": "array", "items": node.model_dump(by_alias=True)}) if p.repeated else node
        node = JsonSchema(type="object", description=f"Query parameters of {method.id} that set up the new resource.", properties=props)
        cls = self._claim(name, location)
        obj = self._object(cls, node, (cls,), location.split("#", 1)[1] + "/parameters")
        # A parameter's JSON path has no /properties step: .../methods/insert/parameters/predefinedAcl.
        fields = tuple(
            replace(
                f,
                source=f.source.replace("/parameters/properties/", "/parameters/"),
                # a required parameter (?initialNodeCount=): the create cannot be sent without it
                facts=tuple(sorted({*f.facts, Fact(B.REQUIRED, f"create-only: {method.id} query parameter {f.name}")})) if method.parameters[f.name].required else f.facts,
            )
            for f in obj.fields
        )
        self.objects[cls] = replace(obj, fields=fields)
        return cls


def build_api_models(
    doc: DiscoveryDoc,
    roots: Iterable[str],
    reporter: Reporter,
    create_method_ids: frozenset[str],
    parameter_sets: Iterable[tuple[str, Method, tuple[str, ...], str]] = (),
) -> tuple[ModelSet, dict[str, str]]:
    """Classes for every schema reachable from ``roots``, and one per parameter set
    (class name, method, parameter names, method location); returns (models, schema
    id or method id -> class)."""
    b = ApiModelBuilder(doc, reporter, create_method_ids)
    names = {sid: b.schema_class(sid) for sid in sorted(set(roots))}
    for cls, method, params, location in sorted(parameter_sets, key=lambda x: x[1].id):
        names[method.id] = b.parameters_class(cls, method, params, location)
    return b.model_set(), names
