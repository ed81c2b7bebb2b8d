"""Per-Kind mockgcp lifecycle cases (``tests/kinds/<Kind>/mockgcp.yaml``) and their driver.

A case is data: the API (Discovery name + version), each call as an accessor chain
(``projects.topics.create``) with keyword params and a body, how its operation is
waited on, and the output-only fields the real service fills in. ``load_case(kind)``
reads one strictly (an unknown key, a duplicate key or an unknown placeholder is an
error naming the file and the key); ``Driver`` runs it through google-api-python-client.

Placeholders in strings: ``${project}``; ``${<var>}`` (the case's ``vars``, which may
use earlier ones); ``${created.<path>}`` (the created resource), ``${current.<path>}``
(the resource a patch starts from), ``${self.<path>}`` (the resource an output check
reads). A string that is one placeholder takes the value as it is (not as a string);
inside a ``regex:`` matcher the substituted text is matched literally.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from types import MappingProxyType
from typing import Any, Literal

from pydantic import Field, model_validator

from kccgen.mockgcp.server import MockServer
from tests.support.kinds import KINDS_DIR, Strict, load_fact

FILE = "mockgcp.yaml"
PROJECT = "mock-project"
RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
_PLACEHOLDER = re.compile(r"\$\{([^}]*)\}")
_SCOPES = ("created", "current", "self")
_NAMED = ("rfc3339", "present")
MAX_POLLS = 10
_NONE: Mapping[str, Any] = MappingProxyType({})


class Wait(Strict):
    """How a call's answer (an operation) is waited on, the way each API's clients do.

    longrunning: a google.longrunning Operation, polled with the accessor chain ``get``
    (``projects.locations.operations.get``) by its ``name``; compute-global /
    compute-regional: a compute#operation polled through ``globalOperations.get`` /
    ``regionOperations.get`` (``region``); dns: a dns#operation polled through
    ``managedZoneOperations.get`` (``managedZone``) by its ``id``.
    """

    style: Literal["longrunning", "compute-global", "compute-regional", "dns"]
    get: str | None = None
    region: str | None = None
    managedZone: str | None = None

    @model_validator(mode="after")
    def _fields_fit_style(self) -> Wait:
        need = {
            "longrunning": {"get"},
            "compute-global": set(),
            "compute-regional": {"region"},
            "dns": {"managedZone"},
        }[self.style]
        have = {k for k in ("get", "region", "managedZone") if getattr(self, k) is not None}
        if have != need:
            raise ValueError(f"wait style {self.style!r} takes {sorted(need)}, got {sorted(have)}")
        return self


class Check(Strict):
    """One field check: ``equals`` an exact value, ``match`` a named matcher (rfc3339,
    present, ``regex:<pattern>`` matched in full), ``length`` of a list, ``each``: a
    matcher every item of a list satisfies."""

    equals: Any = None
    match: str | None = None
    length: int | None = None
    each: str | None = None

    @model_validator(mode="after")
    def _something(self) -> Check:
        if not self.model_fields_set:
            raise ValueError("a check needs equals, match, length or each")
        for m in (self.match, self.each):
            if m is not None and m not in _NAMED and not m.startswith("regex:"):
                raise ValueError(f"unknown matcher {m!r} (rfc3339, present or regex:<pattern>)")
        return self


class Call(Strict):
    """One call: ``client.<chain>(**params, body=body)``; ``answer`` checks the immediate
    answer, ``wait`` polls its operation, ``done`` checks the finished operation."""

    call: str
    params: dict[str, Any] = Field(default_factory=dict)
    #: None: no body is passed (``{}`` passes an empty one)
    body: Any = None
    wait: Wait | None = None
    answer: dict[str, Check] = Field(default_factory=dict)
    done: dict[str, Check] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _done_needs_wait(self) -> Call:
        if self.done and self.wait is None:
            raise ValueError("done checks need a wait")
        return self


class Get(Strict):
    call: str
    params: dict[str, Any] = Field(default_factory=dict)


class Patched(Strict):
    path: str
    value: Any


class Patch(Call):
    """The update of one mutable field: ``patched`` shows on the next get, the
    ``unchanged`` paths keep their values."""

    patched: Patched
    unchanged: tuple[str, ...] = ()


class ListCall(Get):
    #: the key of the answer that holds the items
    items: str
    #: the path of an item (and of the resource) compared for "the resource is listed"
    name: str = "name"


class Case(Strict):
    """``tests/kinds/<Kind>/mockgcp.yaml``."""

    api: str
    version: str
    vars: dict[str, str] = Field(default_factory=dict)
    #: calls that make what the resource needs (its topic, its network)
    setup: tuple[Call, ...] = ()
    #: with a wait, the created resource is read with ``get`` once the operation is done
    create: Call
    get: Get
    output: dict[str, Check]
    #: None: the API has no update
    patch: Patch | None = None
    list_: ListCall = Field(alias="list")
    delete: Call

    @model_validator(mode="after")
    def _placeholders(self) -> Case:
        known = {"project"}
        for k, v in self.vars.items():
            if k in known or k in _SCOPES:
                raise ValueError(f"vars.{k}: name already taken")
            _known_placeholders(v, known, f"vars.{k}")
            known.add(k)
        _known_placeholders(self.model_dump(by_alias=True, exclude={"vars"}), known, "")
        return self

    @property
    def waits(self) -> bool:
        """Whether the lifecycle (create, patch, delete; not setup) polls an operation."""
        return any(
            c is not None and c.wait is not None for c in (self.create, self.patch, self.delete)
        )


def _known_placeholders(value: Any, known: set[str], at: str) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _known_placeholders(v, known, f"{at}.{k}" if at else str(k))
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            _known_placeholders(v, known, f"{at}.{i}")
    elif isinstance(value, str):
        for ref in _PLACEHOLDER.findall(value):
            if ref not in known and ref.split(".", 1)[0] not in _SCOPES:
                raise ValueError(f"{at}: unknown placeholder ${{{ref}}}")


@cache
def load_case(kind: str) -> Case:
    """``tests/kinds/<kind>/mockgcp.yaml``."""
    return load_fact(kind, FILE, Case)


def case_kinds() -> frozenset[str]:
    """The Kinds whose fixture folder holds a mockgcp case."""
    return frozenset(p.parent.name for p in KINDS_DIR.glob(f"*/{FILE}"))


def path_of(obj: Any, dotted: str) -> Any:
    """The value at ``dotted`` (``a.b``, ``conditions.0.name``), or None."""
    for part in dotted.split("."):
        if isinstance(obj, dict):
            obj = obj.get(part)
        elif isinstance(obj, list) and part.isdigit() and int(part) < len(obj):
            obj = obj[int(part)]
        else:
            return None
    return obj


class Driver:
    """One Kind's run against a MockServer: its client, the scope placeholders read
    and the number of polls each operation took."""

    def __init__(self, server: MockServer, case: Case) -> None:
        self.s = server
        self.case = case
        self._client: Any = None
        self.created: dict[str, Any] | None = None
        self.polls: list[int] = []
        self.scope: dict[str, Any] = {"project": PROJECT}
        for k, v in case.vars.items():
            self.scope[k] = self.subst(v)

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = self.s.client(self.case.api, self.case.version)
        return self._client

    # --- placeholders ------------------------------------------------------------------

    def _lookup(self, ref: str, scopes: Mapping[str, Any]) -> Any:
        scope, _, rest = ref.partition(".")
        if scope in _SCOPES:
            if scope not in scopes:
                raise KeyError(f"${{{ref}}}: no {scope} resource at this point")
            return path_of(scopes[scope], rest) if rest else scopes[scope]
        return self.scope[ref]

    def subst(self, value: Any, scopes: Mapping[str, Any] = _NONE) -> Any:
        if isinstance(value, dict):
            return {k: self.subst(v, scopes) for k, v in value.items()}
        if isinstance(value, list):
            return [self.subst(v, scopes) for v in value]
        if not isinstance(value, str):
            return value
        whole = _PLACEHOLDER.fullmatch(value)
        if whole:
            return self._lookup(whole.group(1), scopes)
        return _PLACEHOLDER.sub(lambda m: str(self._lookup(m.group(1), scopes)), value)

    def _pattern(self, pattern: str, scopes: Mapping[str, Any] = _NONE) -> str:
        return _PLACEHOLDER.sub(lambda m: re.escape(str(self._lookup(m.group(1), scopes))), pattern)

    # --- calls -------------------------------------------------------------------------

    def request(
        self,
        chain: str,
        params: dict[str, Any],
        body: Any = None,
        *,
        scopes: Mapping[str, Any] = _NONE,
    ) -> Any:
        """The HttpRequest of ``client.<chain>(**params, body=body)``."""
        *path, method = chain.split(".")
        obj = self.client
        for part in path:
            obj = getattr(obj, part)()
        kwargs = self.subst(params, scopes)
        if body is not None:
            kwargs["body"] = self.subst(body, scopes)
        return getattr(obj, method)(**kwargs)

    def call(self, c: Call, scopes: Mapping[str, Any] = _NONE) -> Any:
        """Run ``c``: its answer, or with a wait, the finished operation."""
        out = self.request(c.call, c.params, c.body, scopes=scopes).execute()
        self.check(c.answer, out, scopes)
        if c.wait is not None:
            out = self.wait(c.wait, out)
            self.check(c.done, out, scopes)
        return out

    def setup(self) -> None:
        for c in self.case.setup:
            self.call(c)
        self.polls.clear()  # only the lifecycle's operations are counted

    def create(self) -> dict[str, Any]:
        """Create the resource; with a wait, read it once its operation is done."""
        out = self.call(self.case.create)
        if self.case.create.wait is not None:
            out = self.get().execute()
        self.created = dict(out)
        return dict(out)

    def get(self) -> Any:
        """The HttpRequest reading the resource."""
        return self.request(self.case.get.call, self.case.get.params, scopes=self._scopes())

    def patch(self, current: dict[str, Any]) -> None:
        assert self.case.patch is not None
        self.call(self.case.patch, {**self._scopes(), "current": current})

    def list_names(self) -> list[Any]:
        lc = self.case.list_
        items = self.request(lc.call, lc.params, scopes=self._scopes()).execute().get(lc.items, [])
        return [path_of(r, lc.name) for r in items]

    def name_of(self, resource: dict[str, Any]) -> Any:
        return path_of(resource, self.case.list_.name)

    def delete(self) -> None:
        self.call(self.case.delete, self._scopes())

    def _scopes(self) -> dict[str, Any]:
        return {} if self.created is None else {"created": self.created}

    # --- checks --------------------------------------------------------------------------

    def check_output(self, resource: dict[str, Any]) -> None:
        self.check(self.case.output, resource, self._scopes())

    def check(
        self, checks: dict[str, Check], obj: dict[str, Any], scopes: Mapping[str, Any] = _NONE
    ) -> None:
        scopes = {**scopes, "self": obj}
        for path, chk in checks.items():
            value = path_of(obj, path)
            if "equals" in chk.model_fields_set:
                want = self.subst(chk.equals, scopes)
                assert value == want, f"{path}: {value!r} != {want!r}"
            if chk.match is not None:
                assert self._matches(chk.match, value, scopes), (
                    f"{path}: {value!r} is not {chk.match}"
                )
            if chk.length is not None:
                assert isinstance(value, list) and len(value) == chk.length, (
                    f"{path}: {value!r} has not {chk.length} items"
                )
            if chk.each is not None:
                assert isinstance(value, list) and value, (
                    f"{path}: {value!r} is not a non-empty list"
                )
                for v in value:
                    assert self._matches(chk.each, v, scopes), (
                        f"{path}: item {v!r} is not {chk.each}"
                    )

    def _matches(self, matcher: str, value: Any, scopes: Mapping[str, Any] = _NONE) -> bool:
        if matcher == "rfc3339":
            return isinstance(value, str) and RFC3339.match(value) is not None
        if matcher == "present":
            return bool(value)
        pattern = self._pattern(matcher.removeprefix("regex:"), scopes)
        return isinstance(value, str) and re.fullmatch(pattern, value, re.DOTALL) is not None

    # --- waiting on operations, the way each API's clients do ------------------------------

    def wait(self, w: Wait, op: dict[str, Any]) -> dict[str, Any]:
        if w.style == "longrunning":
            assert w.get is not None
            return self._wait_longrunning(w.get, op)
        if w.style == "dns":
            return self._wait_dns(op, self.subst(w.managedZone))
        return self._wait_compute(
            op, self.subst(w.region) if w.style == "compute-regional" else None
        )

    def _counted(self, n: int) -> None:
        self.polls.append(n)

    def _wait_longrunning(self, get: str, op: dict[str, Any]) -> dict[str, Any]:
        assert op.get("done", False) is False, op  # lro_polls=2: never done on the first answer
        assert "response" not in op and "error" not in op
        n = 0
        while not op.get("done"):
            op = self.request(get, {"name": op["name"]}).execute()
            n += 1
            assert n <= MAX_POLLS
        self._counted(n)
        assert "error" not in op, op
        return dict(op)

    def _wait_compute(self, op: dict[str, Any], region: str | None) -> dict[str, Any]:
        assert op["kind"] == "compute#operation" and op["status"] == "RUNNING", op
        n = 0
        while op["status"] != "DONE":
            if region:
                op = (
                    self.client.regionOperations()
                    .get(project=PROJECT, region=region, operation=op["name"])
                    .execute()
                )
            else:
                op = (
                    self.client.globalOperations()
                    .get(project=PROJECT, operation=op["name"])
                    .execute()
                )
            n += 1
            assert n <= MAX_POLLS
        self._counted(n)
        assert op["progress"] == 100 and "error" not in op, op
        return dict(op)

    def _wait_dns(self, op: dict[str, Any], zone: str) -> dict[str, Any]:
        assert op["kind"] == "dns#operation" and op["status"] == "pending", op
        n = 0
        while op["status"] != "done":
            op = (
                self.client.managedZoneOperations()
                .get(project=PROJECT, managedZone=zone, operation=op["id"])
                .execute()
            )
            n += 1
            assert n <= MAX_POLLS
        self._counted(n)
        return dict(op)
