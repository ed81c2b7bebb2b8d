"""Emit pydantic v2 models through datamodel-code-generator.

The generator builds an OpenAPI components document from the IR (names are
already decided there) and lets datamodel-code-generator write the classes:
snake_case attributes with camelCase aliases, descriptions kept.
"""

from __future__ import annotations

import json
import re
import warnings
from typing import Any

from kccgen.generator.ir.model import (
    IR,
    ApiModule,
    EnumIR,
    FieldIR,
    KindIR,
    ModelSet,
    ObjectIR,
    TypeIR,
)

# Discovery string formats get a pattern so malformed values fail validation
# while the wire form (int64 as string, nanosecond timestamps) round-trips.
FORMAT_PATTERNS: dict[str, str] = {
    "int64": r"^-?[0-9]+$",
    "uint64": r"^[0-9]+$",
    "google-duration": r"^-?[0-9]+(\.[0-9]{0,9})?s$",
    "google-datetime": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})$",
    "date-time": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})$",
    "date": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
    "byte": r"^[A-Za-z0-9+/_-]*={0,2}$",
}

_REF = "#/components/schemas/"


INT64_FORMATS = frozenset({"int64", "uint64"})
INT64_CLASSES = {"int64": "Int64String", "uint64": "UInt64String"}


def _type_schema(t: TypeIR, int_enums: bool) -> dict[str, Any]:
    if t.kind == "string":
        s: dict[str, Any] = {"type": "string"}
        if t.format in FORMAT_PATTERNS:
            s["pattern"] = FORMAT_PATTERNS[t.format]
        if t.format in INT64_FORMATS and not int_enums:
            # KRM side: the string form stays canonical (no precision loss past
            # 2^53), and a plain integer as Config Connector's CRDs take it is
            # accepted too; the adapter sends the string to the API. One named
            # string type per format, so codegen makes no per-field classes.
            assert t.format is not None
            return {"anyOf": [{"type": "integer"}, {"$ref": _REF + INT64_CLASSES[t.format]}]}
        return s
    if t.kind == "number" and int_enums:
        # proto3 JSON writes whole doubles as 1, not 1.0; int | float keeps
        # the payload's form so real responses round-trip exactly.
        return {"anyOf": [{"type": "integer"}, {"type": "number"}]}
    if t.kind in ("integer", "number", "boolean"):
        return {"type": t.kind}
    if t.kind == "any":
        return {}
    if t.kind == "object":
        assert t.ref is not None
        return {"$ref": _REF + t.ref}
    if t.kind == "enum":
        assert t.ref is not None
        if int_enums:
            # The wire protocol may send enums as numbers
            # ($alt=json;enum-encoding=int), as recorded GCP traffic shows.
            return {"anyOf": [{"$ref": _REF + t.ref}, {"type": "integer"}]}
        return {"$ref": _REF + t.ref}
    if t.kind == "array":
        assert t.item is not None
        return {"type": "array", "items": _type_schema(t.item, int_enums)}
    if t.kind == "map":
        assert t.item is not None
        return {"type": "object", "additionalProperties": _type_schema(t.item, int_enums)}
    raise ValueError(f"unknown type kind {t.kind}")


_LEAD = re.compile(r"^(?:(?:Optional|Required|Output only|Input only|Immutable|Identifier|Deprecated)\.\s*)*")
_SENTENCE = re.compile(r"(.+?(?<!e\.g)(?<!i\.e)(?<!etc)(?<!vs)[.!?])(?=\s|$)", re.S)


def summary(text: str) -> str:
    """The leading behaviour words ("Optional.") and the first sentence, on one line."""
    lead = _LEAD.match(text)
    head = lead.group(0) if lead else ""
    m = _SENTENCE.match(text[len(head):])
    first = m.group(1) if m else text[len(head):]
    return " ".join((head + first).split())


#: The model's type for Config Connector's other form of a field (kccgen.contract.Form).
OTHER_FORMS: dict[str, dict[str, Any]] = {"json": {"type": "string"}, "true": {"type": "boolean"}, "list": {"type": "array", "items": {}}}


def _field_schema(f: FieldIR, int_enums: bool, docs: str) -> dict[str, Any]:
    s = _type_schema(f.type, int_enums)
    if f.other_form:
        s = {"anyOf": [s, OTHER_FORMS[f.other_form]]}
    text = f.description if docs == "full" else summary(f.description) if docs == "summary" else ""
    if text:
        s = {"allOf": [s], "description": text} if "$ref" in s else {**s, "description": text}
    return s


def docstring_safe(text: str) -> str:
    """A class description becomes a triple-quoted docstring: one ending in a quote
    or a backslash (monitoring's SLO goal, '... return successfully."') would close it early."""
    text = text.replace('"' * 3, "'" * 3)
    return text + " " if text.endswith(('"', "\\")) else text


def _object_schema(o: ObjectIR, int_enums: bool, docs: str) -> dict[str, Any]:
    s: dict[str, Any] = {"type": "object", "properties": {f.name: _field_schema(f, int_enums, docs) for f in o.fields}}
    if o.description:
        s["description"] = docstring_safe(o.description if docs != "none" else o.description.splitlines()[0])
    req = [f.name for f in o.fields if f.required]
    if req:
        s["required"] = req
    return s


def _enum_schema(e: EnumIR) -> dict[str, Any]:
    lines = [e.description] if e.description else []
    for v in e.values:
        if v.description:
            lines.append(f"{v.value}: {v.description}" + (" (deprecated)" if v.deprecated else ""))
    s: dict[str, Any] = {"type": "string", "enum": [v.value for v in e.values]}
    if lines:
        s["description"] = "\n".join(lines)
    return s


def _leaf(t: TypeIR) -> TypeIR:
    while t.item is not None:
        t = t.item
    return t


def openapi_document(models: ModelSet, title: str, int_enums: bool, docs: str = "full") -> dict[str, Any]:
    """Field descriptions in full, as a ``summary`` (behaviour words and first
    sentence: the KRM types) or ``none`` (the API payload modules, which keep
    each class's first description line). The CRD carries every description in
    full; repeating them in both Python modules cost 18 of 100 MB at a thousand Kinds."""
    schemas: dict[str, Any] = {}
    for o in models.objects:
        schemas[o.name] = _object_schema(o, int_enums, docs)
    for e in models.enums:
        schemas[e.name] = _enum_schema(e)
    if not int_enums:
        used = {_leaf(f.type).format for o in models.objects for f in o.fields}
        for fmt, cls in INT64_CLASSES.items():
            if fmt not in used:
                continue
            schemas[cls] = {"type": "string", "pattern": FORMAT_PATTERNS[fmt], "description": f"A {fmt} in its string form."}
    return {
        "openapi": "3.1.0",
        "info": {"title": title, "version": "generated"},
        "paths": {},
        "components": {"schemas": dict(sorted(schemas.items()))},
    }


def run_codegen(doc: dict[str, Any], *, open_models: bool, names: dict[str, str] | None = None) -> str:
    """datamodel-code-generator on an in-memory document; returns Python source.
    ``names``: ``Class.jsonName`` -> its Python attribute, where the default would clash."""
    from datamodel_code_generator import (
        DataModelType,
        InputFileType,
        PythonVersion,
        generate,
    )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = generate(
            json.dumps(doc, sort_keys=True),
            input_file_type=InputFileType.OpenAPI,
            output_model_type=DataModelType.PydanticV2BaseModel,
            target_python_version=PythonVersion.PY_311,
            snake_case_field=True,
            use_schema_description=True,
            use_standard_collections=True,
            use_union_operator=True,
            # The config (extra keys, population by name) lives on the base
            # class (kccgen.runtime.krm), not in every class: 2 MB at 1,000 Kinds.
            base_class="kccgen.runtime.krm.APIModel" if open_models else "kccgen.runtime.krm.KRMModel",
            use_annotated=True,
            field_constraints=True,
            capitalise_enum_members=True,
            use_double_quotes=True,
            keep_model_order=True,
            disable_timestamp=True,
            custom_file_header="",
            formatters=[],  # the whole tree is formatted once, by ruff (render.format_many)
            aliases=dict[str, str | list[str]](names) if names else None,
        )
    assert isinstance(out, str)
    return out.strip() + "\n"


def api_module_source(mod: ApiModule) -> str:
    doc = openapi_document(mod.models, f"{mod.doc_key} API payloads", int_enums=True, docs="none")
    return run_codegen(doc, open_models=True)


def alias_attribute_names(kind: KindIR) -> dict[str, str]:
    """Python names for Config Connector's derived spellings that snake-case like the
    field beside them (``ruleID`` beside ``ruleId``): the alias gets ``_kcc``, so the API
    field keeps the attribute it always had, whichever of the two sorts first. (The
    kind-config aliases keep the ``_1`` names they were first generated with.)"""
    from datamodel_code_generator.util import camel_to_snake

    leaves = {a.field.rsplit(".", 1)[-1] for a in kind.aliases if a.derived}
    out: dict[str, str] = {}
    for o in kind.krm_models.objects:
        snakes: dict[str, list[str]] = {}
        for f in o.fields:
            snakes.setdefault(camel_to_snake(f.name), []).append(f.name)
        for snake, names in snakes.items():
            if len(names) < 2:
                continue
            for n in names:
                if n in leaves and any(m not in leaves for m in names):
                    out[f"{o.name}.{n}"] = f"{snake}_kcc"
    return out


def kind_module_source(kind: KindIR) -> str:
    doc = openapi_document(kind.krm_models, f"{kind.kind} KRM types", int_enums=False, docs="summary")
    return run_codegen(doc, open_models=False, names=alias_attribute_names(kind))


__all__ = ["IR", "api_module_source", "kind_module_source", "openapi_document"]
