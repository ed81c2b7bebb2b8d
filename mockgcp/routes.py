"""Discovery documents -> a route table and resource collections.

A route is (HTTP method, regex over ``servicePath + path``) -> the Discovery
method. Collections (a Discovery resource with a ``get`` returning a schema)
carry the method shapes the generator already knows how to read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from kccgen.contract import (
    CreateAtPath,
    CreateServiceAssigned,
    CreateWithIdParam,
    CreateWithNameInBody,
    CreateWrapped,
    FingerprintGuard,
    MetagenerationGuard,
    NoCreate,
    UpdateMaskInBody,
    UpdateMaskInQuery,
    UpdateMerge,
    UpdateReplace,
)
from kccgen.discovery.behaviours import Behaviour, classify
from kccgen.discovery.document import (
    DiscoveryDoc,
    JsonSchema,
    Method,
    iter_resources,
    load_discovery,
)
from kccgen.discovery.paths import rest_prefix, url_regex
from kccgen.generator.ir.methods import resolve_methods
from kccgen.generator.ir.model import MethodIR, Methods
from kccgen.generator.spec.kinds import KindConfig


@dataclass(frozen=True)
class Route:
    api: str  # doc key, e.g. pubsub.v1
    method: Method
    http: str
    regex: re.Pattern[str]
    specificity: int
    resource: str  # dotted Discovery resource path, e.g. projects.topics
    verb: str  # get, create, patch, getIamPolicy...


@dataclass
class Collection:
    api: str
    resource: str  # projects.topics
    schema: str  # Topic
    methods: LegacyMethods
    prefix: str  # REST prefix before resource names: "v1/", "compute/v1/", "storage/v1/"
    collection_segment: str  # "topics", "networks", "b"
    output_only: frozenset[str] = frozenset()
    immutable: frozenset[str] = frozenset()
    input_only: frozenset[str] = frozenset()  # taken on write, never returned by GET
    service_generated: bool = False


@dataclass(frozen=True)
class LegacyMethods:
    """The engine's view of a collection's methods (string styles), read off the
    generator's contract shapes. Interim: mockgcp is moving to its own inference."""

    get: MethodIR
    create: MethodIR | None
    update: MethodIR | None
    delete: MethodIR | None
    create_style: str
    create_id_param: str | None
    create_wrapper_field: str | None
    update_style: str
    update_mask: str | None
    update_wrapper_field: str | None
    fingerprint_field: str | None
    precondition_param: str | None

    @classmethod
    def of(cls, m: Methods) -> LegacyMethods:
        c, u = m.create_shape, m.update_shape
        create_style, cid, cwrap = {
            CreateAtPath: ("put-name", None, None),
            CreateWithNameInBody: ("name-in-body", None, None),
            CreateServiceAssigned: ("service-generated", None, None),
            NoCreate: ("none", None, None),
        }.get(type(c), ("none", None, None))
        if isinstance(c, CreateWithIdParam):
            create_style, cid = "id-query", c.id_param
        if isinstance(c, CreateWrapped):
            create_style, cid, cwrap = "wrapper", c.id_field, c.resource_field
        update_style, mask, uwrap, fp, pre = "none", None, None, None, None
        if isinstance(u, UpdateMaskInQuery):
            update_style, mask = "mask-query", u.mask_param
        elif isinstance(u, UpdateMaskInBody):
            update_style, mask, uwrap = "wrapper-mask", u.mask_field, u.resource_field
        elif isinstance(u, UpdateMerge | UpdateReplace):
            update_style = "whole-resource"
            if isinstance(u.guard, FingerprintGuard):
                fp = u.guard.field
            if isinstance(u.guard, MetagenerationGuard):
                pre = u.guard.param
        return cls(m.get, m.create, m.update, m.delete, create_style, cid, cwrap, update_style, mask, uwrap, fp, pre)


@dataclass
class Api:
    doc: DiscoveryDoc
    collections: dict[str, Collection] = field(default_factory=dict)  # by resource path

    @property
    def key(self) -> str:
        return self.doc.key

    @property
    def legacy_errors(self) -> bool:
        """compute, storage and dns answer with the v1-style ``errors`` list too."""
        return self.doc.name in ("compute", "storage", "dns")


def _facts(doc: DiscoveryDoc, schema: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """Top-level output-only, immutable and input-only fields of a schema (from Discovery prose)."""
    out, imm, inp = set(), set(), set()
    for name, prop in doc.schemas[schema].properties.items():
        beh = {f.behaviour for f in classify(prop.description, prop.read_only)}
        if Behaviour.OUTPUT_ONLY in beh:
            out.add(name)
        if Behaviour.IMMUTABLE in beh:
            imm.add(name)
        if Behaviour.INPUT_ONLY in beh:
            inp.add(name)
    return frozenset(out), frozenset(imm), frozenset(inp)


def immutable_overrides(specs: Path) -> dict[tuple[str, str], set[str]]:
    """(doc key, resource) -> top-level fields the kind configs mark immutable,
    with a reason, where Discovery's prose is silent (a subscription's topic)."""
    out: dict[tuple[str, str], set[str]] = {}
    for p in sorted((specs / "kinds").glob("*.yaml")):
        raw = yaml.safe_load(p.read_text()) or {}
        key = f"{raw.get('api')}.{raw.get('version')}"
        for k in raw.get("kinds") or []:
            for path, ov in (k.get("fields") or {}).items():
                if "immutable" in (ov.get("behaviours") or []) and "." not in path:
                    out.setdefault((key, k["resource"]), set()).add(path)
    return out


def service_generated_resources(specs: Path) -> set[tuple[str, str]]:
    """(doc key, resource) pairs whose IDs the service assigns, from the kind configs."""
    out: set[tuple[str, str]] = set()
    for p in sorted((specs / "kinds").glob("*.yaml")):
        raw = yaml.safe_load(p.read_text()) or {}
        key = f"{raw.get('api')}.{raw.get('version')}"
        for k in raw.get("kinds") or []:
            if k.get("idGeneration") == "service":
                out.add((key, k["resource"]))
    return out


def load_apis(specs: Path) -> tuple[dict[str, Api], list[Route]]:
    apis: dict[str, Api] = {}
    routes: list[Route] = []
    generated = service_generated_resources(specs)
    pinned_immutable = immutable_overrides(specs)
    for p in sorted((specs / "discovery").glob("*.json")):
        doc = load_discovery(p)
        api = Api(doc)
        apis[doc.key] = api
        for dotted, res in iter_resources(doc):
            for verb, m in sorted(res.methods.items()):
                rx, spec = url_regex(doc.service_path, m)
                routes.append(Route(doc.key, m, m.http_method, rx, spec, dotted, verb))
            get = res.methods.get("get")
            if get is None or get.response is None or get.response.ref is None:
                continue
            sg = (doc.key, dotted) in generated
            cfg = KindConfig.model_validate({"kind": "Mock", "resource": dotted, "idGeneration": "service" if sg else "user"})
            try:
                methods, schema = resolve_methods(str(p), 0, cfg, doc, res)
            except Exception:  # a collection the generic shapes cannot describe
                continue
            flat = get.flat_path or get.path
            create = methods.create
            seg = ""
            if create is not None:
                seg = (create.flat_path or create.path).rstrip("/").split("/")[-1]
            out_only, imm, inp = _facts(doc, schema)
            imm = imm | frozenset(pinned_immutable.get((doc.key, dotted), set()))
            api.collections[dotted] = Collection(
                api=doc.key,
                resource=dotted,
                schema=schema,
                methods=LegacyMethods.of(methods),
                prefix=doc.service_path + rest_prefix(flat),
                collection_segment=seg,
                output_only=out_only,
                input_only=inp,
                immutable=imm,
                service_generated=sg,
            )
    routes.sort(key=lambda r: (-r.specificity, r.api, r.resource, r.verb))
    return apis, routes


def schema_of(doc: DiscoveryDoc, name: str) -> JsonSchema:
    return doc.schemas[name]
