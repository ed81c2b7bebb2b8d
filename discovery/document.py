"""Typed Discovery documents (https://developers.google.com/discovery/v1/reference).

Only the parts kccgen reads are modelled; unknown keys are kept out of the
way (``extra="ignore"``) because Discovery grows new keys over time and they
must not break regeneration (or the emulator).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from kccgen.discovery.errors import SpecError, did_you_mean, from_validation_error, json_path


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


class Annotations(_Model):
    required: tuple[str, ...] = ()


class JsonSchema(_Model):
    """A Discovery JSON schema node (a named schema, a property or an item)."""

    id: str | None = None
    type: str | None = None
    format: str | None = None
    description: str | None = None
    ref: str | None = Field(default=None, alias="$ref")
    properties: dict[str, JsonSchema] = Field(default_factory=dict)
    items: JsonSchema | None = None
    additional_properties: JsonSchema | None = Field(default=None, alias="additionalProperties")
    enum: tuple[str, ...] = ()
    enum_descriptions: tuple[str, ...] = Field(default=(), alias="enumDescriptions")
    enum_deprecated: tuple[bool, ...] = Field(default=(), alias="enumDeprecated")
    read_only: bool = Field(default=False, alias="readOnly")
    required: bool = False
    deprecated: bool = False
    pattern: str | None = None
    default: str | None = None
    annotations: Annotations | None = None

    @field_validator("additional_properties", mode="before")
    @classmethod
    def _any_or_none(cls, v: Any) -> Any:
        """Discovery sometimes writes ``additionalProperties: true``; treat as ``any``."""
        if isinstance(v, bool):
            return {"type": "any"} if v else None
        return v


class Parameter(_Model):
    type: str | None = None
    location: str | None = None
    required: bool = False
    pattern: str | None = None
    description: str | None = None
    format: str | None = None
    repeated: bool = False
    enum: tuple[str, ...] = ()
    enum_descriptions: tuple[str, ...] = Field(default=(), alias="enumDescriptions")
    default: str | None = None


class RefOnly(_Model):
    """A request/response body; a few APIs describe it inline (no ``$ref``)."""

    ref: str | None = Field(default=None, alias="$ref")


class Method(_Model):
    id: str
    path: str
    flat_path: str | None = Field(default=None, alias="flatPath")
    http_method: str = Field(alias="httpMethod")
    description: str | None = None
    parameters: dict[str, Parameter] = Field(default_factory=dict)
    parameter_order: tuple[str, ...] = Field(default=(), alias="parameterOrder")
    request: RefOnly | None = None
    response: RefOnly | None = None


class Resource(_Model):
    methods: dict[str, Method] = Field(default_factory=dict)
    resources: dict[str, Resource] = Field(default_factory=dict)


class DiscoveryDoc(_Model):
    name: str
    version: str
    revision: str = ""
    title: str | None = None
    canonical_name: str | None = Field(default=None, alias="canonicalName")
    root_url: str = Field(alias="rootUrl")
    service_path: str = Field(default="", alias="servicePath")
    schemas: dict[str, JsonSchema] = Field(default_factory=dict)
    resources: dict[str, Resource] = Field(default_factory=dict)
    methods: dict[str, Method] = Field(default_factory=dict)

    @property
    def key(self) -> str:
        """``pubsub.v1``: the prefix used in diagnostics."""
        return f"{self.name}.{self.version}"

    @property
    def host(self) -> str:
        return self.root_url.split("//", 1)[-1].rstrip("/")

    def resource(self, dotted: str, file: str = "", path: str | None = None) -> Resource:
        """Find ``projects.topics``; a missing segment names what exists.

        ``file``/``path`` say where the name came from (a kind config), so the
        error points there rather than into the Discovery document.
        """
        node: Resource | DiscoveryDoc = self
        walked: list[str] = []
        for part in dotted.split("."):
            children = node.resources
            if part not in children:
                where = ".".join(walked) or "(top level)"
                hint = did_you_mean(part, children)
                raise SpecError(
                    file or self.key,
                    path if path is not None else json_path("resources", *[x for w in walked for x in (w, "resources")], part),
                    f"resource {dotted!r} does not exist in {self.key}: no {part!r} under {where}{hint}",
                )
            node = children[part]
            walked.append(part)
        assert isinstance(node, Resource)
        return node

    def iter_schema_refs(self) -> Iterator[tuple[str, str]]:
        """Yield (json path, $ref) for every reference in the document."""

        def walk(node: JsonSchema, path: tuple[str, ...]) -> Iterator[tuple[str, str]]:
            if node.ref is not None:
                yield json_path(*path), node.ref
            for name, prop in sorted(node.properties.items()):
                yield from walk(prop, (*path, "properties", name))
            if node.items is not None:
                yield from walk(node.items, (*path, "items"))
            if node.additional_properties is not None:
                yield from walk(node.additional_properties, (*path, "additionalProperties"))

        for name, schema in sorted(self.schemas.items()):
            yield from walk(schema, ("schemas", name))

        def walk_methods(res: Resource | DiscoveryDoc, path: tuple[str, ...]) -> Iterator[tuple[str, str]]:
            for mname, m in sorted(res.methods.items()):
                for slot, r in (("request", m.request), ("response", m.response)):
                    if r is not None and r.ref is not None:
                        yield json_path(*path, "methods", mname, slot, "$ref"), r.ref
            for rname, sub in sorted(res.resources.items()):
                yield from walk_methods(sub, (*path, "resources", rname))

        yield from walk_methods(self, ())


def is_field_mask(node: JsonSchema) -> bool:
    return node.type == "string" and node.format == "google-fieldmask"


def request_mask(doc: DiscoveryDoc, request: str) -> tuple[str, JsonSchema] | None:
    """A request's field mask, dotted, and its schema: a field of the request, or
    of an options object beside the resource (contentwarehouse's
    ``UpdateDocumentRequest.updateOptions.updateMask``); the generator and
    mockgcp read an update the same way."""
    props = doc.schemas[request].properties
    for name, prop in sorted(props.items()):
        if is_field_mask(prop):
            return name, prop
    for name, prop in sorted(props.items()):
        inner = doc.schemas.get(prop.ref) if prop.ref else None
        for sub, q in sorted(inner.properties.items()) if inner is not None else ():
            if is_field_mask(q):
                return f"{name}.{sub}", q
    return None


def schema_paths(doc: DiscoveryDoc, start: str, target: str, depth: int = 3) -> list[str]:
    """Every dotted path of object fields from schema ``start`` to a field of
    schema ``target`` within ``depth`` steps ("" when ``start`` is ``target``):
    sqladmin's SslCertsInsertResponse holds an SslCert at ``serverCaCert`` and
    at ``clientCert.certInfo``."""
    found: list[str] = []
    frontier = [(start, "")]
    for _ in range(depth + 1):
        nxt = []
        for schema, path in frontier:
            if schema == target:
                found.append(path)
                continue
            node = doc.schemas.get(schema)
            for name, prop in sorted(node.properties.items()) if node is not None else ():
                if prop.ref:
                    nxt.append((prop.ref, f"{path}.{name}" if path else name))
        frontier = nxt
    return found


def schema_path(doc: DiscoveryDoc, start: str, target: str, depth: int = 3) -> str | None:
    """The one path of :func:`schema_paths`; None when there is none or several
    (which of them holds the new resource, the document does not say)."""
    found = schema_paths(doc, start, target, depth)
    return found[0] if len(found) == 1 else None


def iter_resources(doc: DiscoveryDoc) -> Iterator[tuple[str, Resource]]:
    """Every resource of the document, depth first in name order, as (dotted path, resource)."""

    def walk(node: Resource | DiscoveryDoc, path: tuple[str, ...]) -> Iterator[tuple[str, Resource]]:
        for name, sub in sorted(node.resources.items()):
            here = (*path, name)
            yield ".".join(here), sub
            yield from walk(sub, here)

    yield from walk(doc, ())


def load_discovery(path: Path, display: str | None = None) -> DiscoveryDoc:
    """Load and check one Discovery document; every ``$ref`` must resolve."""
    file = display or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise SpecError(file, "", f"cannot read: {e.strerror}") from None
    return parse_discovery(text, file)


def parse_discovery(text: str | bytes, file: str) -> DiscoveryDoc:
    """Parse and check one Discovery document's text; ``file`` names it in errors.
    pydantic reads the JSON itself (a third faster than ``json.loads`` first);
    a document it refuses is read again the slow way for a precise message."""
    try:
        doc = DiscoveryDoc.model_validate_json(text)
    except ValidationError as e:
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as je:
            raise SpecError(file, "", f"invalid JSON at line {je.lineno} column {je.colno}: {je.msg}") from None
        if not isinstance(raw, dict):
            raise SpecError(file, "", "a Discovery document must be a JSON object") from None
        raise from_validation_error(file, e) from None
    for where, ref in doc.iter_schema_refs():
        if ref not in doc.schemas:
            hint = did_you_mean(ref, doc.schemas)
            raise SpecError(file, where, f"unknown $ref {ref!r} in {doc.key}{hint}")
    return doc
