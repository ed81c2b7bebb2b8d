"""Limits the service enforces beyond a request's shape: label syntax and
count, enum values, numeric ranges stated in descriptions, location names.

``check_request`` runs after the strict body check (mockgcp.bodies), on the
body with JSON field names, and on the URL's location segments. Each API's
limits are worked out once, from its document and ``limits.yaml``
(mockgcp.limitdata): label rules on every collection's ``labels`` map; enum
values everywhere (Discovery's ``enum``); ranges read from the descriptions
(mockgcp.ranges) of the vendored documents, the curated Kinds' APIs, whose
prose has been reviewed. A broken limit is 400 INVALID_ARGUMENT naming the
field, as the service answers.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any

from kccgen.discovery.document import DiscoveryDoc, JsonSchema
from kccgen.mockgcp.apis import snake
from kccgen.mockgcp.catalog import Api, Route
from kccgen.mockgcp.errors import ApiError
from kccgen.mockgcp.limitdata import Limits, label_problem, limits, location_form
from kccgen.mockgcp.ranges import Range, derive, numeric

#: Parents a location segment may follow: projects/P/locations/L, ...
_PARENTS = frozenset({"projects", "organizations", "folders", "billingAccounts"})
#: URL segment -> (the form its value must have, the field name errors use).
_SEGMENTS = {"locations": ("any", "location"), "regions": ("region", "region"), "zones": ("zone", "zone")}
_NUMERIC_FORMATS = frozenset({"int32", "uint32", "int64", "uint64", "double", "float"})


@dataclass(frozen=True)
class ApiLimits:
    """One API's limits: (schema, field) -> what applies."""

    labels: frozenset[tuple[str, str]]
    ranges: dict[tuple[str, str], tuple[Range, str]]  # -> (range, "number" | "duration")
    locations: frozenset[tuple[str, str]]


def _matches(api: str, entry_api: str) -> bool:
    return fnmatch.fnmatchcase(api, entry_api)


def _numeric_kind(prop: JsonSchema) -> str | None:
    if prop.type in ("integer", "number"):
        return "number"
    if prop.type == "string" and prop.format in _NUMERIC_FORMATS:
        return "number"
    if prop.type == "string" and prop.format == "google-duration":
        return "duration"
    return None


def derived_ranges(doc: DiscoveryDoc, table: Limits) -> dict[tuple[str, str], tuple[Range, str]]:
    """Every range of a document: read from descriptions, less ``ranges.skip``,
    plus ``ranges.add``. Output-only fields get none (a write ignores them)."""
    out: dict[tuple[str, str], tuple[Range, str]] = {}
    for sname, schema in doc.schemas.items():
        for fname, prop in schema.properties.items():
            kind = _numeric_kind(prop)
            if kind is None or prop.read_only:
                continue
            r = derive(prop.description, kind, fname)
            if r is not None:
                out[(sname, fname)] = (r, kind)
    for e in table.ranges.skip:
        if _matches(doc.key, e.api):
            out.pop((e.schema_, e.field), None)
    for e in table.ranges.add:
        added = doc.schemas.get(e.schema_, JsonSchema()).properties.get(e.field) if _matches(doc.key, e.api) else None
        added_kind = _numeric_kind(added) if added is not None else None
        if added_kind is not None:
            out[(e.schema_, e.field)] = (Range(e.min, e.max, source=f"limits.yaml: {e.source}"), added_kind)
    return out


def api_limits(api: Api, curated: bool) -> ApiLimits:
    """The API's limits, worked out on first use and kept on the Api."""
    if isinstance(api.limits, ApiLimits):
        return api.limits
    table = limits()
    doc = api.doc
    exempt = {(e.schema_, e.field) for e in table.labels.exempt if _matches(doc.key, e.api)}
    labelled: set[tuple[str, str]] = set()
    for coll in api.collections.values():
        prop = doc.schemas[coll.schema].properties.get("labels")
        if prop is None or prop.read_only or prop.additional_properties is None or prop.additional_properties.type != "string":
            continue
        if "output only" in (prop.description or "").lower() or (coll.schema, "labels") in exempt:
            continue
        labelled.add((coll.schema, "labels"))
    labelled |= {(e.schema_, e.field) for e in table.labels.also if _matches(doc.key, e.api)}
    located = frozenset((e.schema_, e.field) for e in table.locations.fields if _matches(doc.key, e.api))
    out = ApiLimits(frozenset(labelled), derived_ranges(doc, table) if curated else {}, located)
    api.limits = out
    return out


# --- checking a request ---------------------------------------------------------------


def _error(message: str, field: str, legacy: bool) -> ApiError:
    details = [] if legacy else [{"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [{"field": field, "description": message}]}]
    return ApiError(400, message, details=details)


def check_path(path: str, legacy: bool) -> None:
    """A location segment of the URL (``projects/P/locations/L``, compute's
    ``regions/R``, ``zones/Z``) must have a location's form; "-" (every
    location, in a list) is allowed."""
    parts = path.split("?", 1)[0].split("/")
    rules = limits().locations
    for i in range(2, len(parts) - 1):
        seg = parts[i]
        if seg not in _SEGMENTS or parts[i - 2] not in _PARENTS:
            continue
        value = parts[i + 1].split(":", 1)[0]
        kind, name = _SEGMENTS[seg]
        if value and value != "-" and not location_form(value, kind, rules):
            raise _error(f"Invalid value for field '{name}': '{value}'. Unknown {name}: {_FORMS[kind]}.", name, legacy)


_FORMS = {
    "region": "a region is named like us-central1",
    "zone": "a zone is named like us-central1-a",
    "any": "a location is a region such as us-central1, a zone such as us-central1-a, a multi-region such as us or nam4, or global",
}


def check_request(api: Api, route: Route, path: str, body: Any, curated: bool) -> None:
    """ApiError 400 for the first limit the request breaks."""
    legacy = api.legacy_errors
    check_path(path, legacy)
    request = route.method.request.ref if route.method.request else None
    if request is None or not isinstance(body, dict):
        return
    _Walk(api.doc, api_limits(api, curated), legacy).node(request, body, [])


class _Walk:
    def __init__(self, doc: DiscoveryDoc, lim: ApiLimits, legacy: bool) -> None:
        self.doc, self.lim, self.legacy = doc, lim, legacy

    def where(self, at: list[str]) -> str:
        """The field as errors name it: proto (snake_case) names for the newer
        APIs, ``resource.<JSON name>`` for compute, storage and dns."""
        if self.legacy:
            return ".".join(["resource", *at])
        return ".".join(snake(p) if not p.startswith("[") else p for p in at).replace(".[", "[")

    def resolve(self, node: JsonSchema, name: str | None) -> tuple[JsonSchema, str | None]:
        depth = 0
        while node.ref is not None and depth < 64:
            name = node.ref
            node = self.doc.schemas[node.ref]
            depth += 1
        return node, name

    def node(self, schema: str, value: dict[str, Any], at: list[str]) -> None:
        self.object(self.doc.schemas[schema], schema, value, at, 0)

    def object(self, node: JsonSchema, name: str | None, value: dict[str, Any], at: list[str], depth: int) -> None:
        if depth > 64:
            return
        for k, v in value.items():
            prop = node.properties.get(k)
            if prop is None:
                continue
            here = [*at, k]
            if name is not None:
                if (name, k) in self.lim.labels and isinstance(v, dict):
                    self.labels(v, here)
                if (name, k) in self.lim.ranges:
                    self.range(v, *self.lim.ranges[(name, k)], here)
                if (name, k) in self.lim.locations and isinstance(v, str) and not location_form(v, "any", limits().locations):
                    raise _error(f"Invalid value for field '{self.where(here)}': '{v}'. Unknown location: {_FORMS['any']}.", self.where(here), self.legacy)
            self.value(prop, v, here, depth + 1)

    def value(self, prop: JsonSchema, v: Any, at: list[str], depth: int) -> None:
        node, name = self.resolve(prop, None)
        if node.enum and isinstance(v, str) and v not in node.enum:
            self.enum(node, v, at)
        if node.type == "any":
            return
        if isinstance(v, dict):
            if node.properties:
                self.object(node, name, v, at, depth)
            elif node.additional_properties is not None:
                for k, item in v.items():
                    self.value(node.additional_properties, item, [*at, f"[{k}]"], depth + 1)
        elif isinstance(v, list) and node.items is not None:
            for i, item in enumerate(v):
                self.value(node.items, item, [*at, f"[{i}]"], depth + 1)

    def enum(self, node: JsonSchema, v: str, at: list[str]) -> None:
        field = self.where(at)
        shown = ", ".join(node.enum[:12]) + (", ..." if len(node.enum) > 12 else "")
        if self.legacy:
            raise _error(f"Invalid value for field '{field}': '{v}'. Must be one of [{shown}].", field, True)
        raise _error(f'Invalid value at \'{field}\' (TYPE_ENUM), "{v}" (one of {shown})', field, False)

    def labels(self, labels: dict[str, Any], at: list[str]) -> None:
        rules = limits().labels
        field = self.where(at)
        if len(labels) > rules.max_entries:
            raise _error(f"Invalid value for field '{field}': {len(labels)} labels; a resource can have at most {rules.max_entries}.", field, self.legacy)
        for k, v in labels.items():
            problem = label_problem(k, v, rules)
            if problem is not None:
                raise _error(f"Invalid value for field '{field}': {problem}", field, self.legacy)

    def range(self, v: Any, r: Range, kind: str, at: list[str]) -> None:
        n = numeric(v, kind)
        # Zero is "not set": a proto3 scalar at 0 is never sent on the wire ("If
        # this parameter is 0, a default value of 10 seconds is used"), and a zero
        # duration clears one (Cloud KMS answered 200 to rotationPeriod "0s" with
        # updateMask=rotationPeriod: compat/kcc/fixtures/basic/kms/v1beta1/
        # kmscryptokey/kmscryptokey/_http.log).
        if n is None or n == 0 or r.admits(n):
            return
        field = self.where(at)
        shown = v if isinstance(v, str) else f"{v:g}" if isinstance(v, float) else v
        unit = " seconds" if kind == "duration" else ""
        raise _error(f"Invalid value for field '{field}': {shown}. It must be {r.text()}{unit} ({r.source}).", field, self.legacy)
