"""Real GCP payloads round-trip through the generated ``<Kind>API`` models.

Every ``_http.log`` recorded by Config Connector (the sibling checkout
``../shared/compat/kcc/fixtures``) is parsed; each response body is classified
against the Discovery methods of our Kinds:

* a 2xx response whose Discovery response schema is the Kind's resource
  schema (get / create / patch / ... of ``Topic``) is a Kind payload;
* a list response (``ListTopicsResponse``, ``NetworkList``, ``Buckets``) holds
  one Kind payload per item;
* a finished ``google.longrunning.Operation`` whose ``response`` is an ``Any``
  (``"@type": "type.googleapis.com/google.spanner.admin.instance.v1.Instance"``)
  of the Kind's resource schema holds one Kind payload: the ``response`` minus
  the ``@type`` key, which belongs to the ``Any`` wrapper and not to the message;
* a gRPC ``Get<Schema>`` / ``Create<Schema>`` / ``Update<Schema>`` call of the
  Discovery document's proto package (``google.monitoring.v3``) returns the
  resource (AIP-131/133/134); its JSON is the same proto3 JSON mapping as REST.

Each Kind payload must validate, dump back to exactly the recorded JSON
(``model_dump(mode="json", by_alias=True, exclude_unset=True)``, compared
type-strictly so ``1``/``1.0``/``True`` differences show), and must not have
been accepted through ``extra="allow"``: unknown keys are failures unless
listed, with a reason, in ``ALLOWED_UNKNOWN_FIELDS``.

Everything else (errors, ``Empty``, IAM policies, operations without a
payload, dependencies such as Projects) is counted as skipped by category.
Run with ``-s`` to see the counts printed by ``test_summary``.
"""

from __future__ import annotations

import importlib
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from pydantic import BaseModel, ValidationError

from kccgen.discovery.document import DiscoveryDoc
from kccgen.generator.ir.model import IR, KindIR
from kccgen.generator.spec.loader import Specs
from tests.support.httplog import HttpLogEntry, format_http_log, parse_http_log, read_http_log
from tests.support.kinds import kcc_kinds

COMPAT = Path(__file__).resolve().parents[1] / ".." / "shared" / "compat" / "kcc"
FIXTURES = COMPAT / "fixtures"
LOGS: list[Path] = sorted(FIXTURES.rglob("_http.log")) if FIXTURES.is_dir() else []

# Measured: 256 Kind payloads in the 43 recorded logs. The floor sits a little
# below so fixtures may change a bit without churn; test_summary also fails when
# any Kind has no payload at all.
MIN_PAYLOADS = 250

# Unknown fields tolerated in recorded payloads, keyed by (Kind, JSON path with
# list indexes written [*]); the value says why. Anything not listed fails, and
# an entry that no payload needs any more fails too (see test_summary).
ALLOWED_UNKNOWN_FIELDS: dict[tuple[str, str], str] = {}

# The recordings are normalized: values that differ per run are replaced by
# placeholders (${projectId}, ${uniqueId}, ...). Most sit in plain strings and
# are kept, but GCP really sends a project number as digits, and the models
# pattern-check uint64 strings (Bucket.projectNumber), so digits are put back
# (wherever the placeholder appears) before validating. Add a placeholder here
# only when it stands for a value with a checked format.
RECORDING_PLACEHOLDERS: dict[str, str] = {
    "${projectNumber}": "123456789012",
}

_PATH_PARAM = re.compile(r"\{\+?[^}]+\}")
_LRO_KEYS = frozenset({"name", "metadata", "done", "error", "response"})


# --------------------------------------------------------------------------
# Discovery routes of every Kind


@dataclass(frozen=True)
class Route:
    kind: KindIR
    method_id: str  # pubsub.projects.topics.getIamPolicy
    http_method: str
    pattern: re.Pattern[str]
    literal_len: int  # characters outside placeholders: the more specific route wins
    response: str | None  # Discovery response schema name


@dataclass(frozen=True)
class Catalog:
    routes: tuple[Route, ...]
    kinds: tuple[KindIR, ...]
    docs: dict[str, DiscoveryDoc]  # by doc_key
    models: dict[str, type[BaseModel]]  # Kind -> <Kind>API

    def match(self, method: str, url: str) -> Route | None:
        """The most specific route whose HTTP method and URL (no query) match."""
        base = url.split("?", 1)[0]
        hits = [r for r in self.routes if r.http_method == method and r.pattern.fullmatch(base)]
        if not hits:
            return None
        best = max(r.literal_len for r in hits)
        top = [r for r in hits if r.literal_len == best]
        assert len({r.method_id for r in top}) == 1, f"{method} {url} is ambiguous: {[r.method_id for r in top]}"
        return top[0]

    def list_items_key(self, kind: KindIR, schema: str) -> str | None:
        """The property of a list response schema holding the Kind's resources."""
        s = self.docs[kind.api.doc_key].schemas.get(schema)
        if s is None:
            return None
        keys = [
            name
            for name, prop in s.properties.items()
            if prop.type == "array" and prop.items is not None and prop.items.ref == kind.resource_schema
        ]
        return keys[0] if len(keys) == 1 else None


def _route_pattern(doc: DiscoveryDoc, path: str) -> tuple[re.Pattern[str], int]:
    base = doc.root_url + doc.service_path
    parts = _PATH_PARAM.split(path)
    rx = re.escape(base) + "[^/]+".join(re.escape(p) for p in parts)
    return re.compile(rx), len(base) + sum(len(p) for p in parts)


def _api_model(k: KindIR) -> type[BaseModel]:
    mod = importlib.import_module(f"kccgen.generated.{k.package.replace('/', '.')}.{k.lower}_types")
    model = getattr(mod, f"{k.kind}API")
    assert isinstance(model, type) and issubclass(model, BaseModel)
    return model


def build_catalog(specs: Specs, ir: IR) -> Catalog:
    routes: list[Route] = []
    for k in ir.kinds:
        doc = specs.discovery[k.api.doc_key]
        for m in doc.resource(k.resource).methods.values():
            pattern, literal_len = _route_pattern(doc, m.flat_path or m.path)
            response = m.response.ref if m.response is not None else None
            routes.append(Route(k, m.id, m.http_method, pattern, literal_len, response))
        get = doc.resource(k.resource).methods[k.methods.get.name]
        assert get.response is not None and get.response.ref == k.resource_schema, k.kind
    return Catalog(
        routes=tuple(routes),
        kinds=ir.kinds,
        docs={k.api.doc_key: specs.discovery[k.api.doc_key] for k in ir.kinds},
        models={k.kind: _api_model(k) for k in ir.kinds},
    )


# --------------------------------------------------------------------------
# Classifying recorded responses


@dataclass(frozen=True)
class Payload:
    kind: str
    via: str  # how it was found: "http", "list item", "operation", "grpc"
    where: str  # entry and JSON location, for messages
    body: dict[str, Any]


@dataclass
class Classified:
    payloads: list[Payload] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)


def _is_lro(body: dict[str, Any]) -> bool:
    return "name" in body and set(body) <= _LRO_KEYS


def _lro_payload(cat: Catalog, url: str, body: dict[str, Any]) -> tuple[KindIR, dict[str, Any]] | str:
    """The Kind payload of a finished google.longrunning Operation, or a skip category."""
    if not body.get("done"):
        return "long-running operation: not done"
    response = body.get("response")
    if not isinstance(response, dict) or not isinstance(response.get("@type"), str):
        return "long-running operation: done without a response"
    schema = response["@type"].rsplit(".", 1)[-1]
    host = urlsplit(url).netloc
    for k in cat.kinds:
        doc = cat.docs[k.api.doc_key]
        if doc.host == host and k.resource_schema == schema:
            # "@type" is the Any wrapper's type URL, not a field of the message.
            return k, {key: v for key, v in response.items() if key != "@type"}
    return f"long-running operation: response {schema} is not a Kind resource"


def _grpc_kind(cat: Catalog, target: str) -> KindIR | None:
    """The Kind whose resource a Get/Create/Update gRPC call returns."""
    service, _, rpc = target.lstrip("/").partition("/")
    package = service.rsplit(".", 1)[0]
    for k in cat.kinds:
        doc = cat.docs[k.api.doc_key]
        s = k.resource_schema
        if package == f"google.{doc.name}.{doc.version}" and rpc in (f"Get{s}", f"Create{s}", f"Update{s}"):
            return k
    return None


def _classify_entry(cat: Catalog, e: HttpLogEntry, where: str, out: Classified) -> None:
    body = e.response_json
    if not e.ok:
        out.skipped["error response"] += 1
        return
    if e.is_grpc:
        k = _grpc_kind(cat, e.url)
        if k is None:
            out.skipped["gRPC: not a Kind get/create/update"] += 1
        elif not isinstance(body, dict):
            out.skipped["gRPC: no JSON object body"] += 1
        else:
            out.payloads.append(Payload(k.kind, "grpc", where, body))
        return
    if e.response_body is None:
        out.skipped["no response body"] += 1
        return
    if not isinstance(body, dict):
        out.skipped["non-JSON or non-object body"] += 1
        return

    route = cat.match(e.method, e.url)
    if route is not None and route.response == route.kind.resource_schema:
        out.payloads.append(Payload(route.kind.kind, "http", where, body))
        return
    if route is not None and route.response is not None:
        key = cat.list_items_key(route.kind, route.response)
        if key is not None:
            items = body.get(key, [])
            assert isinstance(items, list), f"{where}: {key} is not a list"
            if not items:
                out.skipped["list response: empty"] += 1
            for i, item in enumerate(items):
                out.payloads.append(Payload(route.kind.kind, "list item", f"{where} {key}[{i}]", item))
            return
    if _is_lro(body):
        got = _lro_payload(cat, e.url, body)
        if isinstance(got, str):
            out.skipped[got] += 1
        else:
            k, payload = got
            out.payloads.append(Payload(k.kind, "operation", f"{where} response", payload))
        return
    if str(body.get("kind", "")).endswith("#operation"):
        out.skipped[f"operation: {body['kind']}"] += 1
        return
    if route is not None:
        out.skipped[f"Kind method, other response: {route.response or '(none declared)'}"] += 1
        return
    out.skipped[f"not a Kind method: {urlsplit(e.url).netloc}"] += 1


def classify_log(cat: Catalog, path: Path) -> Classified:
    out = Classified()
    for i, e in enumerate(read_http_log(path), start=1):
        _classify_entry(cat, e, f"entry {i} ({e.method} {e.url})", out)
    return out


# --------------------------------------------------------------------------
# Checking one payload


def _diff(want: Any, got: Any, path: str) -> Iterator[str]:
    """Type-strict JSON comparison: 1 vs 1.0 vs True are all different."""
    if type(want) is not type(got):
        yield f"{path}: recorded {want!r} ({type(want).__name__}), dumped {got!r} ({type(got).__name__})"
    elif isinstance(want, dict):
        for key in sorted(want.keys() | got.keys()):
            if key not in got:
                yield f"{path}.{key}: recorded {want[key]!r}, missing from the dump"
            elif key not in want:
                yield f"{path}.{key}: not recorded, dumped {got[key]!r}"
            else:
                yield from _diff(want[key], got[key], f"{path}.{key}")
    elif isinstance(want, list):
        if len(want) != len(got):
            yield f"{path}: recorded {len(want)} items, dumped {len(got)}"
        for i, (w, g) in enumerate(zip(want, got, strict=False)):
            yield from _diff(w, g, f"{path}[{i}]")
    elif want != got:
        yield f"{path}: recorded {want!r}, dumped {got!r}"


def _extras(value: Any, path: str) -> Iterator[str]:
    """JSON paths of every key a model accepted through ``extra="allow"``."""
    if isinstance(value, BaseModel):
        for key in value.model_extra or {}:
            yield f"{path}.{key}"
        for name, info in type(value).model_fields.items():
            if name in value.model_fields_set:
                yield from _extras(getattr(value, name), f"{path}.{info.alias or name}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _extras(item, f"{path}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _extras(item, f"{path}[{key!r}]")


def _pattern_path(path: str) -> str:
    return re.sub(r"\[\d+\]", "[*]", path)


def _concrete(value: Any) -> Any:
    """``value`` with the RECORDING_PLACEHOLDERS of its strings filled in."""
    if isinstance(value, str):
        for placeholder, example in RECORDING_PLACEHOLDERS.items():
            value = value.replace(placeholder, example)
        return value
    if isinstance(value, list):
        return [_concrete(v) for v in value]
    if isinstance(value, dict):
        return {k: _concrete(v) for k, v in value.items()}
    return value


def check_payload(model: type[BaseModel], p: Payload, allowed_seen: set[tuple[str, str]]) -> list[str]:
    """Problems with one payload (empty when it round-trips)."""
    body = _concrete(p.body)
    try:
        parsed = model.model_validate(body)
    except ValidationError as err:
        return [f"{p.kind} {p.where}: does not validate:\n{err}"]
    dumped = parsed.model_dump(mode="json", by_alias=True, exclude_unset=True)
    problems = [f"{p.kind} {p.where}: {d}" for d in _diff(body, dumped, "$")]
    for extra in _extras(parsed, "$"):
        key = (p.kind, _pattern_path(extra))
        if key in ALLOWED_UNKNOWN_FIELDS:
            allowed_seen.add(key)
        else:
            problems.append(f"{p.kind} {p.where}: unknown field {extra} accepted as extra")
    return problems


# --------------------------------------------------------------------------
# Tests


@pytest.fixture(scope="session")
def catalog(specs: Specs, curated_ir: IR) -> Catalog:
    # The recordings are Config Connector's tests of the curated Kinds: their routes
    # classify every payload (a derived Kind's route could claim a dependency's URL).
    return build_catalog(specs, curated_ir)


@pytest.fixture(scope="session")
def classify(catalog: Catalog) -> Callable[[Path], Classified]:
    """Classify a log once per session (the summary reuses the per-log work)."""
    cache: dict[Path, Classified] = {}

    def get(path: Path) -> Classified:
        if path not in cache:
            cache[path] = classify_log(catalog, path)
        return cache[path]

    return get


def _require_fixtures() -> None:
    if not LOGS:
        pytest.skip(f"no recorded GCP traffic: expected _http.log files under {FIXTURES.resolve()}")


_LOG_PARAMS = [pytest.param(p, id=p.relative_to(FIXTURES).as_posix()) for p in LOGS] or [
    pytest.param(None, id="fixtures-missing")
]


@pytest.mark.parametrize("log", _LOG_PARAMS)
def test_http_log_parser_round_trips(log: Path | None) -> None:
    """The parser loses nothing: writing the entries back gives the file byte for byte."""
    _require_fixtures()
    assert log is not None
    text = log.read_text(encoding="utf-8")
    entries = parse_http_log(text, str(log))
    assert entries
    assert format_http_log(entries) == text


@pytest.mark.parametrize("log", _LOG_PARAMS)
def test_recorded_payloads_round_trip(log: Path | None, catalog: Catalog, classify: Callable[[Path], Classified]) -> None:
    _require_fixtures()
    assert log is not None
    problems: list[str] = []
    for p in classify(log).payloads:
        problems += check_payload(catalog.models[p.kind], p, set())
    assert not problems, "\n".join(problems)


def test_summary(catalog: Catalog, classify: Callable[[Path], Classified]) -> None:
    _require_fixtures()
    per_kind: Counter[str] = Counter()
    via: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    allowed_seen: set[tuple[str, str]] = set()
    for log in LOGS:
        c = classify(log)
        skipped += c.skipped
        for p in c.payloads:
            per_kind[p.kind] += 1
            via[p.via] += 1
            check_payload(catalog.models[p.kind], p, allowed_seen)
    total = sum(per_kind.values())

    lines = [f"\nKind payloads checked: {total} (from {len(LOGS)} logs under {FIXTURES.resolve()})"]
    lines += [f"  {k:32} {per_kind[k]:4}" for k in sorted(k.kind for k in catalog.kinds)]
    lines.append("  found as: " + ", ".join(f"{v} {n}" for n, v in sorted(via.items())))
    lines.append(f"Skipped responses: {sum(skipped.values())}")
    lines += [f"  {n:60} {v:4}" for n, v in sorted(skipped.items())]
    print("\n".join(lines))

    assert total >= MIN_PAYLOADS, f"only {total} Kind payloads found in the recordings"
    # Every Kind Config Connector's recordings cover has payloads; a generated Kind
    # outside the compat folder has none to check.
    uncovered = sorted(k.kind for k in catalog.kinds if per_kind[k.kind] == 0 and k.kind in kcc_kinds())
    assert not uncovered, f"Kinds without any recorded payload: {uncovered}"
    stale = sorted(set(ALLOWED_UNKNOWN_FIELDS) - allowed_seen)
    assert not stale, f"ALLOWED_UNKNOWN_FIELDS entries no payload needs any more: {stale}"
