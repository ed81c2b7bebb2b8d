"""Replay one ``_http.log`` against a fresh mockgcp, with placeholders filled and
service-generated values (operation names, assigned IDs) mapped to the mock's own."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

from kccgen.mockgcp.catalog import Route
from kccgen.mockgcp.engine import MockGCP, Response
from kccgen.mockgcp.httplog import HttpLogEntry, read_http_log
from tools.mockgcp_fidelity_explain import explain_reasons
from tools.mockgcp_fidelity_model import FIXED, Exchange, LogResult

REPO = Path(__file__).resolve().parent.parent
DEFAULT_KCC = REPO.parent / "shared" / "compat" / "kcc"
_PLACEHOLDER = re.compile(r"\$\{([A-Za-z][A-Za-z0-9_]*)\}")


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
        # The curated (vendored) APIs: mockgcp serves every pinned API, but the
        # recordings are compared for those its profiles and overrides cover.
        self.hosts = {self.engine.apis[k].doc.host: k for k in self.engine.catalog.vendored}
        self.b = Bindings()
        self.result = LogResult(kind, test)
        self.history: list[tuple[HttpLogEntry, Exchange, Response]] = []
        # recorded etag -> the mock's: a read-modify-write sends back the etag it
        # read (IAM policies), which the mock refuses unless it is its own
        self.etags: dict[str, str] = {}

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
        body = self._swap_etags(body)
        try:
            return self.engine.handle(e.method, path, parse_qs(query, keep_blank_values=True), body, fault=None)
        except Exception as exc:  # an engine bug is a finding, not a crash of the report
            return None, Response(599, {"error": {"code": 599, "message": f"engine raised {type(exc).__name__}: {exc}"}})

    def _swap_etags(self, v: Any) -> Any:
        if isinstance(v, dict):
            return {k: (self.etags.get(x, x) if k == "etag" and isinstance(x, str) else self._swap_etags(x)) for k, x in v.items()}
        if isinstance(v, list):
            return [self._swap_etags(x) for x in v]
        return v

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
        rec_etag = e.response_json.get("etag") if isinstance(e.response_json, dict) else None
        mock_etag = resp.body.get("etag") if isinstance(resp.body, dict) else None
        if isinstance(rec_etag, str) and isinstance(mock_etag, str):
            self.etags[rec_etag] = mock_etag
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


def replay_all(kcc: Path = DEFAULT_KCC, repo: Path = REPO) -> list[LogResult]:
    kinds = our_kinds(repo)
    out = []
    for kind, test, log in logs_by_kind(kcc / "fixtures", kinds):
        out.append(Replay(kind, test, repo / "specs").run(read_http_log(log)))
    return out
