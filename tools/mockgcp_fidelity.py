"""Replay Config Connector's recorded GCP traffic against mockgcp: docs/mockgcp-fidelity.md.

For every ``_http.log`` under ``<kcc>/fixtures`` that belongs to one of our
Kinds (the fixture directory names the Kind), the HTTP exchanges are replayed
in order against a fresh ``MockGCP(lro_polls=1)``:

* gRPC entries are skipped (counted); so are requests to hosts mockgcp does not
  serve (counted per host as "not served: <host>"). Hosts are matched against
  the pinned Discovery documents' ``rootUrl``.
* Placeholders are filled consistently (``FIXED``: ``${projectId}`` ->
  ``example-project``, ``${uniqueId}`` -> ``abc123``, ``${projectNumber}`` ->
  ``123456789012``). A placeholder the client chose (``${networkID}`` in a
  compute insert body) gets a fixed value of its own (``network-abc123``)
  the first time it is needed.
* Values the *service* generates are mapped: when the recorded response's
  top-level ``name`` holds a placeholder the recorded request did not
  (an operation's ``${operationID}``, monitoring's numeric
  ``${notificationChannelID}``), the recorded name is matched against the
  mock's name for the same exchange and the placeholder is bound to what the
  mock generated. Later requests use that binding: an operation poll goes to
  the operation the mock returned for the latest earlier request that
  started one. When several live bindings exist (three notification
  channels recorded under one placeholder), a GET picks the one whose mock
  resource agrees best with the recorded response (status, then equal
  top-level values), and the following PATCH/DELETE of the same URL uses the
  same pick; a successful DELETE retires it.

Each replayed exchange is compared on (a) the status code and (b) the set of
top-level response fields. Every mismatch gets one or more reasons from
``explain_reasons()``: rules over the request, the recorded and the mock
response, the earlier exchanges of the log and the Discovery documents
(custom method not implemented, a field the recording has and the mock does
not fill and why: output-only, input-only, unknown to the pinned schema...;
eventual consistency in the recording; a request that follows a create the
mock refused), plus two small tables of field facts the documents cannot
tell (``RECORDED_ONLY``, ``MOCK_ONLY``). A reason's cause is a *mock gap*
(mockgcp behaves unlike the recorded API) or a *recording artefact* (a fact
of the recorded run no emulator should reproduce). A mismatch no rule
explains is listed as ``UNEXPLAINED`` (tests/test_mockgcp_fidelity.py fails
on one).

``python -m tools.mockgcp_fidelity`` (from the repo root) writes
docs/mockgcp-fidelity.md; ``--check`` only compares. The document holds only
recorded facts, statuses and field names, never values the mock generates,
so it is stable across runs.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

from kccgen.discovery.behaviours import Behaviour, classify
from kccgen.mockgcp.catalog import Api, Route
from kccgen.mockgcp.engine import MockGCP, Response
from kccgen.mockgcp.httplog import HttpLogEntry, read_http_log
from tools.mockgcp_defaults import created_key
from tools.reports import write_or_check

REPO = Path(__file__).resolve().parent.parent
DEFAULT_KCC = REPO.parent / "shared" / "compat" / "kcc"
DOC_PATH = Path("docs") / "mockgcp-fidelity.md"
TARGET = 0.90  # overall status-code match the tests require

FIXED = {
    "projectId": "example-project",
    "uniqueId": "abc123",
    "projectNumber": "123456789012",
}
_PLACEHOLDER = re.compile(r"\$\{([A-Za-z][A-Za-z0-9_]*)\}")
UNEXPLAINED = "UNEXPLAINED"


# --- Kinds and logs ---------------------------------------------------------------------


def our_kinds(repo: Path = REPO) -> list[str]:
    out: list[str] = []
    for p in sorted((repo / "specs" / "kinds").glob("*.yaml")):
        raw = yaml.safe_load(p.read_text()) or {}
        out += [k["kind"] for k in raw.get("kinds") or []]
    return sorted(out)


def kind_of(rel: Path, kinds: Sequence[str]) -> str | None:
    """The Kind a fixture directory belongs to: the first path part naming one."""
    lower = {k.lower(): k for k in kinds}
    for part in rel.parts:
        if part.lower() in lower:
            return lower[part.lower()]
    return None


def logs_by_kind(fixtures: Path, kinds: Sequence[str]) -> list[tuple[str, str, Path]]:
    """(Kind, test name relative to the fixtures, log path), sorted."""
    out = []
    for log in sorted(fixtures.rglob("_http.log")):
        rel = log.parent.relative_to(fixtures)
        kind = kind_of(rel, kinds)
        if kind is not None:
            out.append((kind, rel.as_posix(), log))
    return sorted(out)


# --- placeholders and service-generated values ---------------------------------------------


def _stem(name: str) -> str:
    s = re.sub(r"(?i)id$", "", name) or name
    return re.sub(r"(?<!^)(?=[A-Z])", "-", s).lower()


@dataclass
class Bindings:
    """Placeholder -> value(s), as the replay learns them."""

    bound: dict[str, list[str]] = field(default_factory=dict)  # live values, latest last
    chosen: dict[str, str] = field(default_factory=dict)  # pick among several

    def value(self, name: str) -> str:
        if name in FIXED:
            return FIXED[name]
        vals = self.bound.get(name)
        if not vals:
            vals = self.bound[name] = [f"{_stem(name)}-{FIXED['uniqueId']}"]
        if len(vals) > 1 and name in self.chosen and self.chosen[name] in vals:
            return self.chosen[name]
        return vals[-1]

    def ambiguous(self, text: str) -> list[str]:
        """Placeholders in ``text`` with several live values (operations excepted)."""
        return sorted({n for n in _PLACEHOLDER.findall(text) if len(self.bound.get(n, [])) > 1 and "operation" not in n.lower()})

    def fill(self, text: str) -> str:
        return _PLACEHOLDER.sub(lambda m: self.value(m.group(1)), text)

    def fill_json(self, v: Any) -> Any:
        if isinstance(v, str):
            return self.fill(v)
        if isinstance(v, list):
            return [self.fill_json(x) for x in v]
        if isinstance(v, dict):
            return {self.fill(k): self.fill_json(x) for k, x in v.items()}
        return v

    def learn(self, recorded: str, mock: str, skip: set[str]) -> list[str]:
        """Bind the placeholders of ``recorded`` (not in ``skip``) to what ``mock`` holds there."""
        names: list[str] = []
        rx = ""
        pos = 0
        for m in _PLACEHOLDER.finditer(recorded):
            rx += re.escape(recorded[pos : m.start()])
            n = m.group(1)
            if n in FIXED or n in skip:
                rx += re.escape(self.value(n))
            else:
                rx += "(.+?)"
                names.append(n)
            pos = m.end()
        rx += re.escape(recorded[pos:])
        if not names:
            return []
        hit = re.fullmatch(rx, mock)
        if hit is None:
            return []
        learned = []
        for n, v in zip(names, hit.groups(), strict=True):
            vals = self.bound.setdefault(n, [])
            if v not in vals:
                vals.append(v)
                learned.append(n)
            self.chosen.pop(n, None)
        return learned

    def retire(self, name: str, value: str) -> None:
        vals = self.bound.get(name, [])
        if value in vals and len(vals) > 1:
            vals.remove(value)
        self.chosen.pop(name, None)


# --- one exchange -------------------------------------------------------------------------


@dataclass(frozen=True)
class Exchange:
    kind: str
    test: str
    index: int  # 1-based entry number in the log
    method: str
    path: str  # recorded URL path, placeholders kept, no host or query
    api: str  # doc key mockgcp routes the host to
    route: str  # Discovery method id mockgcp chose ("" when none)
    recorded_status: int
    mock_status: int
    recorded_fields: frozenset[str]
    mock_fields: frozenset[str]
    reasons: tuple[Reason, ...] = ()  # empty when the exchange matches

    @property
    def explanation(self) -> str:
        return "; ".join(r.text() for r in self.reasons)

    @property
    def unexplained(self) -> bool:
        return not self.reasons or any(r.category.startswith(UNEXPLAINED) for r in self.reasons)

    @property
    def status_ok(self) -> bool:
        return self.recorded_status == self.mock_status

    @property
    def fields_ok(self) -> bool:
        return self.recorded_fields == self.mock_fields


@dataclass
class LogResult:
    kind: str
    test: str
    exchanges: list[Exchange] = field(default_factory=list)
    grpc_methods: Counter[str] = field(default_factory=Counter)
    not_served: Counter[str] = field(default_factory=Counter)

    @property
    def grpc(self) -> int:
        return sum(self.grpc_methods.values())


def _fields(body: Any) -> frozenset[str]:
    return frozenset(body) if isinstance(body, dict) else frozenset()


def _url_parts(url: str) -> tuple[str, str, str]:
    u = urlsplit(url)
    return u.hostname or "", u.path, u.query


def _top_equal(a: Any, b: Any) -> int:
    if not isinstance(a, dict) or not isinstance(b, dict):
        return 0
    return sum(1 for k, v in a.items() if k in b and b[k] == v)


class Replay:
    """One log against one fresh engine."""

    def __init__(self, kind: str, test: str, specs: Path) -> None:
        self.engine = MockGCP(specs, lro_polls=1)
        self.hosts = {a.doc.host: k for k, a in self.engine.apis.items()}
        self.b = Bindings()
        self.result = LogResult(kind, test)
        self.history: list[tuple[HttpLogEntry, Exchange, Response]] = []

    def run(self, entries: list[HttpLogEntry]) -> LogResult:
        for i, e in enumerate(entries, 1):
            if e.is_grpc:
                self.result.grpc_methods[e.url] += 1
                continue
            host, _, _ = _url_parts(e.url)
            if host not in self.hosts:
                self.result.not_served[host] += 1
                continue
            self.result.exchanges.append(self.one(i, e))
        return self.result

    def _send(self, e: HttpLogEntry) -> tuple[Route | None, Response]:
        _, path, query = _url_parts(self.b.fill(e.url))
        body = self.b.fill_json(copy.deepcopy(e.request_json)) if e.request_json is not None else None
        if body is None and e.request_body:
            body = self.b.fill(e.request_body)
        try:
            return self.engine.handle(e.method, path, parse_qs(query, keep_blank_values=True), body, fault=None)
        except Exception as exc:  # an engine bug is a finding, not a crash of the report
            return None, Response(599, {"error": {"code": 599, "message": f"engine raised {type(exc).__name__}: {exc}"}})

    def _pick(self, e: HttpLogEntry) -> None:
        """Choose among several live values of a placeholder in this request."""
        names = self.b.ambiguous(e.url)
        if not names:
            return
        if e.method != "GET":
            return  # keep the pick of the GET before it
        for n in names:
            best: tuple[int, int, int] | None = None
            best_v = None
            for pos, v in enumerate(self.b.bound[n]):
                self.b.chosen[n] = v
                _, resp = self._send(e)
                score = (int(resp.status == e.status_code), _top_equal(e.response_json, self._recordedish(resp.body)), pos)
                if best is None or score > best:
                    best, best_v = score, v
            assert best_v is not None
            self.b.chosen[n] = best_v

    def _recordedish(self, mock_body: Any) -> Any:
        """The mock body with bound values put back as placeholders (for comparisons)."""
        text = json.dumps(mock_body)
        for n, vals in self.b.bound.items():
            for v in vals:
                if len(v) > 3:
                    text = text.replace(v, "${" + n + "}")
        for n, v in FIXED.items():
            text = text.replace(v, "${" + n + "}")
        return json.loads(text)

    def one(self, i: int, e: HttpLogEntry) -> Exchange:
        self._pick(e)
        used = {n: self.b.value(n) for n in _PLACEHOLDER.findall(e.url)}
        route, resp = self._send(e)
        host, path, _ = _url_parts(e.url)
        rec_status = e.status_code or 0
        # learn service-generated values from the top-level name
        in_request = set(_PLACEHOLDER.findall(e.url)) | set(_PLACEHOLDER.findall(e.request_body or ""))
        rec_name = e.response_json.get("name") if isinstance(e.response_json, dict) else None
        mock_name = resp.body.get("name") if isinstance(resp.body, dict) else None
        if isinstance(rec_name, str) and isinstance(mock_name, str):
            self.b.learn(rec_name, mock_name, in_request)
        if e.method == "DELETE" and e.ok and 200 <= resp.status < 300:
            for n in self.b.ambiguous(e.url):
                self.b.retire(n, used[n])
        x = Exchange(
            kind=self.result.kind,
            test=self.result.test,
            index=i,
            method=e.method,
            path=path,
            api=self.hosts[host],
            route=route.method.id if route is not None else "",
            recorded_status=rec_status,
            mock_status=resp.status,
            recorded_fields=_fields(e.response_json),
            mock_fields=_fields(resp.body),
        )
        if not (x.status_ok and x.fields_ok):
            x = dataclasses.replace(x, reasons=tuple(explain_reasons(self, e, x, resp)))
        self.history.append((e, x, resp))
        return x


# --- explanations ---------------------------------------------------------------------------
#
# A mismatch is explained by one or more reasons. A reason is a category (what
# the summary counts: no per-log names in it) and an optional detail (which
# earlier exchange, which method...). Rules are tried in order; a status
# mismatch gets one reason, a field-set mismatch one per differing field.

# Facts about specific fields the Discovery documents cannot tell, each seen in
# the recordings: (doc key, response schema, field) -> why the recording has it
# and the mock does not.
RECORDED_ONLY: dict[tuple[str, str, str], str] = {
    ("cloudkms.v1", "CryptoKey", "primary"): (
        "recording has output-only `primary` (CryptoKey): the real API creates version 1 with an "
        "ENCRYPT_DECRYPT key, the mock creates no CryptoKeyVersion"
    ),
    ("cloudkms.v1", "ListCryptoKeyVersionsResponse", "cryptoKeyVersions"): (
        "recording lists `cryptoKeyVersions`: version 1 the real API created with the key, "
        "the mock creates no CryptoKeyVersion"
    ),
    ("cloudkms.v1", "ListCryptoKeyVersionsResponse", "totalSize"): (
        "recording has `totalSize` (ListCryptoKeyVersionsResponse) the mock's list doesn't fill"
    ),
    ("storage.v1", "Bucket", "acl"): (
        "recording has `acl` (Bucket): PATCH defaults to projection=full, the mock ignores projection"
    ),
    ("storage.v1", "Bucket", "defaultObjectAcl"): (
        "recording has `defaultObjectAcl` (Bucket): PATCH defaults to projection=full, the mock ignores projection"
    ),
    ("storage.v1", "Objects", "prefixes"): (
        "recording lists `prefixes` (folders in the real bucket that no recorded request created); "
        "the mock's bucket is empty"
    ),
    ("compute.v1", "Network", "subnetworks"): (
        "recording has output-only `subnetworks` (Network): an auto-mode network "
        "(autoCreateSubnetworks: true) gets one subnetwork per region, the mock creates none"
    ),
    ("compute.v1", "Network", "internalIpv6Range"): (
        "recording has `internalIpv6Range` (Network): allocated from fd20::/20 when "
        "enableUlaInternalIpv6 is turned on, the mock allocates none"
    ),
    ("dns.v1", "ManagedZone", "nameServers"): (
        "recording has output-only `nameServers` (ManagedZone) for a private zone; the mock "
        "fills name servers for public zones only"
    ),
    ("secretmanager.v1", "Secret", "expireTime"): (
        "recording has `expireTime` (Secret) computed from the input-only `ttl` the request sent; "
        "the mock does not compute it"
    ),
}
# Of those, the ones that are facts of the recorded environment, not of the API.
RECORDING_ONLY_FACTS = frozenset({("storage.v1", "Objects", "prefixes")})
# (doc key, response schema, field) -> why the mock has it and the recording does not.
MOCK_ONLY: dict[tuple[str, str, str], str] = {
    ("storage.v1", "Bucket", "owner"): (
        "mock answers with `owner` (Bucket): the real API returns it only with projection=full "
        "(the PATCH default), not on insert/get (noAcl)"
    ),
}


MOCK = "mock gap"
RECORDING = "recording artefact"


@dataclass(frozen=True)
class Reason:
    category: str
    detail: str = ""
    cause: str = MOCK  # MOCK: mockgcp behaves differently; RECORDING: the recording is not reproducible

    def text(self) -> str:
        return f"{self.category} ({self.detail})" if self.detail else self.category


def _error_message(body: Any) -> str:
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return str(body["error"].get("message", ""))
    return ""


def _behaviours(api: Api, schema: str | None, name: str) -> set[Behaviour] | None:
    if schema is None or schema not in api.doc.schemas:
        return None
    prop = api.doc.schemas[schema].properties.get(name)
    if prop is None:
        return None
    return {f.behaviour for f in classify(prop.description, prop.read_only)}


def _emptyish(v: Any) -> bool:
    if isinstance(v, dict):
        return all(_emptyish(x) for x in v.values())
    if isinstance(v, list):
        return all(_emptyish(x) for x in v)
    return v in (False, 0, "", None)


def _plain_path(url: str) -> str:
    return urlsplit(url).path.lstrip("/")


def explain_reasons(rp: Replay, e: HttpLogEntry, x: Exchange, resp: Response) -> list[Reason]:
    found = rp.engine.route(e.method, _plain_path(rp.b.fill(e.url)))
    route = found[0] if found else None
    if route is not None and route.api != x.api:
        return [Reason(f"mock routed a {x.api} request to {route.api} (it routes by path and ignores the host)", route.method.id)]
    if not x.status_ok:
        return [_status_reason(rp, e, x, resp, route)]
    return _field_reasons(rp, e, x, resp, route)


def _resource_path(rp: Replay, e: HttpLogEntry) -> str:
    """The filled URL path without the ``:verb`` of a custom method."""
    return _plain_path(rp.b.fill(e.url)).split(":", 1)[0]


def _created_path(rp: Replay, e: HttpLogEntry) -> str | None:
    """The path of the resource a create exchange makes (filled), if it is one."""
    found = rp.engine.route(e.method, _plain_path(rp.b.fill(e.url)))
    if found is None or found[0].role != "create":
        return None
    route = found[0]
    api = rp.engine.apis[route.api]
    coll = api.collections.get(route.resource)
    if coll is None:
        return None
    u = urlsplit(rp.b.fill(e.url))
    body = rp.b.fill_json(e.request_json) if e.request_json is not None else None
    key = created_key(api, coll, route.method, u.path.lstrip("/"), parse_qs(u.query), body, None)
    return coll.prefix + key if key else None


def _status_reason(rp: Replay, e: HttpLogEntry, x: Exchange, resp: Response, route: Route | None) -> Reason:
    msg = _error_message(resp.body)
    if x.mock_status == 599:
        return Reason(f"engine exception: {msg.split(':', 1)[0]}", msg)
    if route is None:
        return Reason(f"no route in the pinned {x.api} Discovery document for this {x.method}")
    if x.mock_status == 501:
        if route.verb in ("getIamPolicy", "setIamPolicy", "testIamPermissions"):
            return Reason(f"mock 501 for IAM ({route.method.id})")
        return Reason(f"custom method not implemented ({route.method.id})")
    if x.mock_status == 400 and 200 <= x.recorded_status < 300 and msg.startswith("Invalid JSON payload received. Unknown name"):
        return Reason(
            f"mock refuses a request field the pinned {x.api} Discovery document does not define; "
            "the recorded API (a newer revision) accepted it",
            msg,
        )
    here = _plain_path(rp.b.fill(e.url)).split(":", 1)[0]
    earlier = [(pe, px) for pe, px, _ in rp.history]
    if x.mock_status == 400 and e.request_body is None and "JSON object" in msg:
        return Reason(
            "mock rejects a create with no request body (the real API creates the resource with all fields unset)",
            route.method.id,
        )
    if e.method == "GET" and x.recorded_status == 404 and 200 <= x.mock_status < 300:
        same = [(pe, px) for pe, px in earlier if _resource_path(rp, pe) == here]
        if same and same[-1][0].ok and same[-1][0].method in ("PUT", "POST"):
            return Reason(
                "eventual consistency in the recording: a GET right after a successful create answered 404 "
                "(the mock is read-after-write consistent)",
                f"create was #{same[-1][1].index}",
                RECORDING,
            )
    if 200 <= x.recorded_status < 300 and x.mock_status == 404:
        for pe, px in reversed(earlier):
            made = _created_path(rp, pe)
            if made and not px.status_ok and 200 <= px.recorded_status < 300 and (here == made or here.startswith(made + "/")):
                return Reason("follows a create that failed in the mock", f"create was #{px.index}")
        if not any(here in (_resource_path(rp, pe), _created_path(rp, pe)) for pe, _ in earlier):
            return Reason(
                "resource created outside the recorded log: the recording's first request already finds it",
                cause=RECORDING,
            )
    return Reason(f"{UNEXPLAINED}: recorded {x.recorded_status}, mock {x.mock_status}", msg)


def _field_reasons(rp: Replay, e: HttpLogEntry, x: Exchange, resp: Response, route: Route | None) -> list[Reason]:
    api = rp.engine.apis[x.api]
    schema = route.method.response.ref if route is not None and route.method.response is not None else None
    here = _resource_path(rp, e)
    replaced = any(
        pe.method == "PUT" and px.route.endswith(".update") and _resource_path(rp, pe) == here for pe, px, _ in rp.history
    ) or (e.method == "PUT" and x.route.endswith(".update"))
    out: list[Reason] = []
    for f in sorted(x.recorded_fields - x.mock_fields):
        beh = _behaviours(api, schema, f)
        known = RECORDED_ONLY.get((x.api, schema or "", f))
        if known:
            out.append(Reason(known, cause=RECORDING if (x.api, schema or "", f) in RECORDING_ONLY_FACTS else MOCK))
        elif beh is None:
            out.append(Reason(f"recording has `{f}`, unknown to the pinned {x.api} {schema} schema"))
        elif Behaviour.OUTPUT_ONLY in beh:
            out.append(Reason(f"recording has output-only `{f}` ({schema}) the mock doesn't fill"))
        elif f in rp.engine.defaults.get(x.api, {}).get(schema or "", {}) and replaced:
            out.append(
                Reason(
                    f"recording has server default `{f}` ({schema}) after a whole-resource update (PUT): "
                    "the mock applies mockgcp/defaults.json on create only, the update dropped it"
                )
            )
        else:
            out.append(Reason(f"recording has `{f}` ({schema}) the mock doesn't fill"))
    mock_body = resp.body if isinstance(resp.body, dict) else {}
    for f in sorted(x.mock_fields - x.recorded_fields):
        beh = _behaviours(api, schema, f)
        known = MOCK_ONLY.get((x.api, schema or "", f))
        v = mock_body.get(f)
        if known:
            out.append(Reason(known))
        elif f == "done" and v is False:
            out.append(Reason("mock answers `done: false` on a pending operation; the real API omits false values"))
        elif beh is not None and Behaviour.INPUT_ONLY in beh:
            out.append(Reason(f"mock echoes input-only `{f}` ({schema}); the real API never returns it"))
        elif _emptyish(v):
            out.append(
                Reason(f"mock keeps `{f}` ({schema}) whose value is empty/false; the real API leaves this field out then")
            )
        elif beh is not None and Behaviour.OUTPUT_ONLY in beh:
            out.append(Reason(f"mock fills output-only `{f}` ({schema}) the real API leaves unset"))
        else:
            out.append(Reason(f"{UNEXPLAINED}: mock answers with `{f}` ({schema}) the recording lacks"))
    return out


# --- the whole report ----------------------------------------------------------------------


def replay_all(kcc: Path = DEFAULT_KCC, repo: Path = REPO) -> list[LogResult]:
    kinds = our_kinds(repo)
    out = []
    for kind, test, log in logs_by_kind(kcc / "fixtures", kinds):
        out.append(Replay(kind, test, repo / "specs").run(read_http_log(log)))
    return out


@dataclass(frozen=True)
class Totals:
    logs: int
    exchanges: int
    status_ok: int
    fields_ok: int
    grpc: int
    not_served: int

    @property
    def status_rate(self) -> float:
        return self.status_ok / self.exchanges if self.exchanges else 1.0

    @property
    def fields_rate(self) -> float:
        return self.fields_ok / self.exchanges if self.exchanges else 1.0


def totals(results: Sequence[LogResult]) -> Totals:
    xs = [x for r in results for x in r.exchanges]
    return Totals(
        logs=len(results),
        exchanges=len(xs),
        status_ok=sum(x.status_ok for x in xs),
        fields_ok=sum(x.fields_ok for x in xs),
        grpc=sum(r.grpc for r in results),
        not_served=sum(sum(r.not_served.values()) for r in results),
    )


def mismatches(results: Sequence[LogResult]) -> list[Exchange]:
    return [x for r in results for x in r.exchanges if not (x.status_ok and x.fields_ok)]


def categories(results: Sequence[LogResult]) -> Counter[tuple[str, str]]:
    """Mismatching exchanges per (reason category, cause); an exchange may count under several."""
    out: Counter[tuple[str, str]] = Counter()
    for x in mismatches(results):
        out.update({(r.category, r.cause) for r in x.reasons} or {(UNEXPLAINED, MOCK)})
    return out


def status_by_cause(results: Sequence[LogResult]) -> Counter[str]:
    """Status-code mismatches per cause (MOCK / RECORDING)."""
    return Counter(x.reasons[0].cause if x.reasons else MOCK for r in results for x in r.exchanges if not x.status_ok)


def _pct(n: int, d: int) -> str:
    return f"{100 * n / d:.1f}%" if d else "n/a"


def _cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def render_markdown(results: Sequence[LogResult]) -> str:
    t = totals(results)
    out = [
        "# mockgcp fidelity against Config Connector's recorded traffic",
        "",
        "<!-- Generated by `python -m tools.mockgcp_fidelity`; do not edit. "
        "tests/test_mockgcp_fidelity.py fails when this file is stale. -->",
        "",
        "Every `_http.log` of one of our Kinds under Config Connector's fixtures is replayed, "
        "in order, against a fresh `MockGCP(lro_polls=1)` (placeholders filled consistently; "
        "operation names and service-generated IDs mapped to the mock's own). Each exchange "
        "is compared on its status code and on the set of top-level response fields. gRPC "
        "entries and requests to APIs mockgcp does not serve are not replayed; they are "
        "counted on their own. How it works: the docstring of tools/mockgcp_fidelity.py.",
        "",
        "## Totals",
        "",
        f"Overall: {t.exchanges} exchanges replayed from {t.logs} logs; status codes match in "
        f"{t.status_ok} ({_pct(t.status_ok, t.exchanges)}), response field sets in {t.fields_ok} "
        f"({_pct(t.fields_ok, t.exchanges)}). Target: status codes ≥ {TARGET:.0%}. "
        f"Not replayed: {t.grpc} gRPC, {t.not_served} to APIs mockgcp does not serve.",
        "",
        "| Kind | Logs | Exchanges replayed | Status codes match | Field sets match | gRPC skipped | Not served |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    by_kind: dict[str, list[LogResult]] = defaultdict(list)
    for r in results:
        by_kind[r.kind].append(r)
    for kind in sorted(by_kind):
        k = totals(by_kind[kind])
        ns: Counter[str] = Counter()
        for r in by_kind[kind]:
            ns.update(r.not_served)
        served = ", ".join(f"{h}: {n}" for h, n in sorted(ns.items())) or "0"
        out.append(
            f"| {kind} | {k.logs} | {k.exchanges} | {k.status_ok} ({_pct(k.status_ok, k.exchanges)}) "
            f"| {k.fields_ok} ({_pct(k.fields_ok, k.exchanges)}) | {k.grpc} | {_cell(served)} |"
        )
    out.append(
        f"| **Total** | {t.logs} | {t.exchanges} | {t.status_ok} ({_pct(t.status_ok, t.exchanges)}) "
        f"| {t.fields_ok} ({_pct(t.fields_ok, t.exchanges)}) | {t.grpc} | {t.not_served} |"
    )
    out.append("")
    ns_all: Counter[str] = Counter()
    for r in results:
        ns_all.update(r.not_served)
    out += ["### Not served", "", "| Host | Requests not replayed |", "|---|---:|"]
    out += [f"| not served: {h} | {n} |" for h, n in sorted(ns_all.items())]
    out.append("")
    grpc: Counter[tuple[str, str]] = Counter()
    for r in results:
        grpc.update({(r.kind, m): n for m, n in r.grpc_methods.items()})
    if grpc:
        out += [
            "### gRPC, not replayed",
            "",
            "mockgcp serves REST only; these Kinds' controllers talk gRPC to the service.",
            "",
            "| Kind | gRPC method | Calls |",
            "|---|---|---:|",
        ]
        out += [f"| {k} | `{m}` | {n} |" for (k, m), n in sorted(grpc.items())]
        out.append("")

    ms = mismatches(results)
    cats = categories(results)
    by_cause = status_by_cause(results)
    out += [
        "## Mismatch categories",
        "",
        f"Status-code mismatches: {by_cause[MOCK]} {MOCK}s, {by_cause[RECORDING]} {RECORDING}s "
        f"(with every {MOCK} fixed, status codes would match in "
        f"{_pct(t.status_ok + by_cause[MOCK], t.exchanges)}). A *{MOCK}* is mockgcp behaving unlike the "
        f"recorded API; a *{RECORDING}* is a fact of the recorded run no emulator should reproduce. "
        "An exchange with several differing fields counts under each of their reasons.",
        "",
        "| Exchanges | Cause | Explanation |",
        "|---:|---|---|",
    ]
    out += [
        f"| {n} | {cause} | {_cell(c)} |"
        for (c, cause), n in sorted(cats.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    out.append("")
    out += ["## Every mismatch", ""]
    for kind in sorted(by_kind):
        kms = [x for x in ms if x.kind == kind]
        out += [f"### {kind}", ""]
        if not kms:
            out += ["None.", ""]
            continue
        out += ["| Test | # | Request | Recorded | Mock | Explanation |", "|---|---:|---|---:|---:|---|"]
        for x in kms:
            out.append(
                f"| {x.test} | {x.index} | `{x.method} {_cell(x.path)}` | {x.recorded_status} | {x.mock_status} | {_cell(x.explanation)} |"
            )
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.mockgcp_fidelity", description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--kcc", type=Path, default=DEFAULT_KCC, help="KCC compat dir (with fixtures/)")
    ap.add_argument("--check", action="store_true", help=f"exit 1 if {DOC_PATH} is stale")
    args = ap.parse_args(argv)
    if not (args.kcc / "fixtures").is_dir():
        print(f"no fixtures at {args.kcc / 'fixtures'}", file=sys.stderr)
        return 2
    results = replay_all(args.kcc)
    text = render_markdown(results)
    code = write_or_check(REPO / DOC_PATH, text, args.check, "python -m tools.mockgcp_fidelity")
    if args.check:
        return code
    t = totals(results)
    print(f"wrote {DOC_PATH}: {t.exchanges} exchanges, status match {_pct(t.status_ok, t.exchanges)}, fields match {_pct(t.fields_ok, t.exchanges)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
