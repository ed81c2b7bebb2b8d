"""A conservative static estimate of a CRD's CEL rule costs, as the API server makes it.

The apiextensions-apiserver refuses a CRD whose rule, times the number of
times the rule can run (the product of the ``maxItems``/``maxProperties``
above it), is estimated above ``PER_RULE_LIMIT``, or whose rules together
exceed ``PER_CRD_LIMIT``. Finding that out only from a server is late, so
``kccgen lint-crds`` reproduces the estimate: cel-go's ``checker/cost.go``
(comprehension = range size x (loop condition + step); string equality
0.1 per byte of the shorter side; select and identifier 1; ``has()`` 0, as
Kubernetes configures it) with Kubernetes' size estimates (maxLength x 4
bytes per character; unbounded lists, maps and strings sized by the 3 MiB
request limit). Functions it does not model are charged linearly in the
size of their operands, which is never below cel-go's own figure.
Constants: k8s.io/apiextensions-apiserver validation.go and
k8s.io/apiserver/pkg/cel (Kubernetes 1.36).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

PER_RULE_LIMIT = 10_000_000  # StaticEstimatedCostLimit
PER_CRD_LIMIT = 100_000_000  # StaticEstimatedCRDCostLimit
MAX_REQUEST = 3 * 1024 * 1024  # DefaultMaxRequestSizeBytes
MAX_COST = 2**64 - 1
# No value is larger than a request: the size of anything not bounded otherwise.
UNKNOWN = MAX_REQUEST

_MIN_SIZE = {"string": 2, "integer": 1, "number": 1, "boolean": 4, "object": 2, "array": 2}


class CelSyntaxError(ValueError):
    """A rule the small parser cannot read: reported, never silently priced at zero."""


def _cap(n: int) -> int:
    return min(n, MAX_COST)


def _factor(n: int, f: float) -> int:
    """cel-go's MultiplyByCostFactor: rounded up."""
    return _cap(math.ceil(n * f)) if n < MAX_COST else MAX_COST


def min_size(s: dict[str, Any]) -> int:
    """The smallest JSON encoding of a value of schema ``s`` (Kubernetes' MinSerializedSize)."""
    return _MIN_SIZE.get(str(s.get("type")), 1)


def max_size(s: dict[str, Any]) -> int:
    """How many bytes (strings) or entries (lists, maps) a value can have, at most."""
    t = s.get("type")
    if t == "array":
        if "maxItems" in s:
            return int(s["maxItems"])
        return (MAX_REQUEST - 2) // (min_size(s.get("items") or {}) + 1)
    if t == "object" and isinstance(s.get("additionalProperties"), dict):
        if "maxProperties" in s:
            return int(s["maxProperties"])
        return (MAX_REQUEST - 2) // (min_size(s["additionalProperties"]) + 6)
    if t == "string" and "enum" not in s and "maxLength" in s:
        return int(s["maxLength"]) * 4
    if t == "string" and "enum" in s:
        return max((len(str(v).encode()) for v in s["enum"]), default=0)
    if t == "string" or s.get("x-kubernetes-int-or-string"):
        return MAX_REQUEST - 2
    return 1 if t in ("integer", "number", "boolean") else UNKNOWN


# --- parsing ---------------------------------------------------------------------

_TOKEN = re.compile(
    r"""\s*(?:(?P<num>0x[0-9a-fA-F]+u?|\d+\.\d*(?:[eE][+-]?\d+)?|\d+(?:[eE][+-]?\d+)?u?)
    |(?P<str>[rRbB]{0,2}(?:'''[\s\S]*?'''|\"\"\"[\s\S]*?\"\"\"|'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"))
    |(?P<id>[A-Za-z_][A-Za-z0-9_]*)
    |(?P<op>\|\||&&|==|!=|<=|>=|[-+*/%!<>?:.,()\[\]{}]))""",
    re.VERBOSE,
)


@dataclass(frozen=True)
class Node:
    op: str  # lit, id, select, has, call, index, list, map, cond
    name: str = ""
    args: tuple[Node, ...] = ()
    target: Node | None = None
    size: int = 1  # literals: their size


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise CelSyntaxError(f"cannot read {text[pos:pos + 20]!r}")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


class _Parser:
    """CEL's grammar (cel-spec), enough of it for CRD rules; macros stay calls."""

    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> str:
        return self.toks[self.i][1] if self.i < len(self.toks) else ""

    def take(self, want: str | None = None) -> tuple[str, str]:
        if self.i >= len(self.toks) or (want is not None and self.toks[self.i][1] != want):
            raise CelSyntaxError(f"expected {want or 'more'} at token {self.i}")
        self.i += 1
        return self.toks[self.i - 1]

    def parse(self) -> Node:
        e = self.expr()
        if self.i != len(self.toks):
            raise CelSyntaxError(f"unexpected {self.peek()!r}")
        return e

    def expr(self) -> Node:
        c = self.binary(0)
        if self.peek() == "?":
            self.take()
            t = self.binary(0)
            self.take(":")
            return Node("cond", args=(c, t, self.expr()))
        return c

    _LEVELS = (("||",), ("&&",), ("==", "!=", "<", "<=", ">", ">=", "in"), ("+", "-"), ("*", "/", "%"))

    def binary(self, level: int) -> Node:
        if level == len(self._LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek() in self._LEVELS[level] and self.toks[self.i][0] in ("op", "id"):
            op = self.take()[1]
            left = Node("call", op, (left, self.binary(level + 1)))
        return left

    def unary(self) -> Node:
        if self.peek() in ("!", "-") and self.toks[self.i][0] == "op":
            op = self.take()[1]
            return Node("call", "u" + op, (self.unary(),))
        return self.member()

    def member(self) -> Node:
        e = self.primary()
        while self.peek() in (".", "["):
            if self.take()[1] == ".":
                if self.peek() == "?":
                    self.take()
                name = self.take()[1]
                if self.peek() == "(":
                    e = Node("call", name, self.call_args(), target=e)
                else:
                    e = Node("select", name, target=e)
            else:
                e = Node("index", args=(e, self.expr()))
                self.take("]")
        return e

    def call_args(self) -> tuple[Node, ...]:
        self.take("(")
        args: list[Node] = []
        while self.peek() != ")":
            args.append(self.expr())
            if self.peek() == ",":
                self.take()
        self.take(")")
        return tuple(args)

    def primary(self) -> Node:
        kind, tok = self.take()
        if kind == "num" or tok in ("true", "false", "null"):
            return Node("lit")
        if kind == "str":
            body = tok.lstrip("rRbB")
            quote = 3 if body[:3] in ("'''", '"""') else 1
            return Node("lit", size=len(body) - 2 * quote)
        if tok == ".":
            return self.primary()
        if kind == "id":
            if self.peek() == "(":
                args = self.call_args()
                if tok == "has":
                    return Node("has", args=args)
                return Node("call", tok, args)
            return Node("id", tok)
        if tok == "(":
            e = self.expr()
            self.take(")")
            return e
        if tok == "[":
            items: list[Node] = []
            while self.peek() != "]":
                items.append(self.expr())
                if self.peek() == ",":
                    self.take()
            self.take("]")
            return Node("list", args=tuple(items), size=len(items))
        if tok == "{":
            entries: list[Node] = []
            while self.peek() != "}":
                entries.append(self.expr())
                self.take(":")
                entries.append(self.expr())
                if self.peek() == ",":
                    self.take()
            self.take("}")
            return Node("map", args=tuple(entries), size=len(entries) // 2)
        raise CelSyntaxError(f"unexpected {tok!r}")


def parse(rule: str) -> Node:
    return _Parser(rule).parse()


# --- costing ---------------------------------------------------------------------

_ANY: dict[str, Any] = {}
_MACROS = ("all", "exists", "exists_one", "filter", "map")


@dataclass(frozen=True)
class Est:
    """A cost and the value's schema (None: unknown) and size (bytes or entries)."""

    cost: int
    schema: dict[str, Any] | None
    size: int


def _child(s: dict[str, Any] | None, name: str) -> dict[str, Any] | None:
    if s is None:
        return None
    props = s.get("properties") or {}
    if name in props:
        return dict(props[name])
    if isinstance(s.get("additionalProperties"), dict):
        return dict(s["additionalProperties"])
    return None


def _items(s: dict[str, Any] | None) -> dict[str, Any] | None:
    """What iterating a list (its items) or a map (its keys) binds."""
    if s is None:
        return None
    if s.get("type") == "array":
        return dict(s.get("items") or {})
    return {"type": "string"}


def _est(s: dict[str, Any] | None) -> int:
    return UNKNOWN if s is None else max_size(s)


class _Coster:
    def __init__(self, self_schema: dict[str, Any]) -> None:
        self.scope: list[tuple[str, dict[str, Any] | None]] = [("self", self_schema), ("oldSelf", self_schema)]

    def lookup(self, name: str) -> dict[str, Any] | None:
        bound = [schema for var, schema in self.scope if var == name]
        return bound[-1] if bound else None

    def cost(self, e: Node) -> Est:
        if e.op == "lit":
            return Est(0, None, e.size)
        if e.op == "id":
            s = self.lookup(e.name)
            return Est(1, s, _est(s))
        if e.op == "select":
            assert e.target is not None
            t = self.cost(e.target)
            s = _child(t.schema, e.name)
            return Est(_cap(t.cost + 1), s, _est(s))
        if e.op == "has":
            inner = e.args[0]
            t = self.cost(inner.target) if inner.op == "select" and inner.target else self.cost(inner)
            return Est(t.cost, {"type": "boolean"}, 1)
        if e.op == "index":
            t, i = self.cost(e.args[0]), self.cost(e.args[1])
            s = _child(t.schema, "") if t.schema and t.schema.get("type") == "object" else _items(t.schema)
            return Est(_cap(t.cost + i.cost + 1), s, _est(s))
        if e.op == "list":
            parts = [self.cost(a) for a in e.args]
            return Est(_cap(10 + sum(p.cost for p in parts)), {"type": "array"}, e.size)
        if e.op == "map":
            parts = [self.cost(a) for a in e.args]
            return Est(_cap(30 + sum(p.cost for p in parts)), {"type": "object"}, e.size)
        if e.op == "cond":
            c, t, f = (self.cost(a) for a in e.args)
            return Est(_cap(c.cost + max(t.cost, f.cost)), t.schema, max(t.size, f.size))
        if e.target is not None and e.name in _MACROS and e.args and e.args[0].op == "id":
            return self.macro(e)
        return self.call(e)

    def macro(self, e: Node) -> Est:
        """cel-go's comprehension cost: range + init + n x (condition + step) + result."""
        assert e.target is not None
        rng = self.cost(e.target)
        n = rng.size
        self.scope.append((e.args[0].name, _items(rng.schema)))
        try:
            body = [self.cost(a).cost for a in e.args[1:]]
        finally:
            self.scope.pop()
        pred = body[0]
        if e.name == "all":  # cond @not_strictly_false(r) 2; step r && p
            init, per, result = 0, 2 + 1 + pred, 1
        elif e.name == "exists":  # cond @not_strictly_false(!r) 3; step r || p
            init, per, result = 0, 3 + 1 + pred, 1
        elif e.name == "exists_one":  # step p ? r + 1 : r; result r == 1
            init, per, result = 0, pred + 2, 2
        elif e.name == "filter":  # step p ? r + [x] : r
            init, per, result = 10, pred + 13, 1
        else:  # map: step r + [f] (with a filter: p ? r + [f] : r)
            init, per, result = 10, sum(body) + 12, 1
        total = _cap(rng.cost + init + result + _cap(n * per))
        if e.name in ("filter", "map"):
            item = _items(rng.schema) if e.name == "filter" else None
            return Est(total, {"type": "array", "items": item} if item is not None else None, n)
        return Est(total, {"type": "boolean"}, 1)

    def call(self, e: Node) -> Est:
        args = [self.cost(a) for a in e.args]
        tgt = self.cost(e.target) if e.target is not None else None
        base = sum(a.cost for a in args) + (tgt.cost if tgt else 0)
        sizes = [a.size for a in args] + ([tgt.size] if tgt else [])
        name = e.name
        boolean = {"type": "boolean"}
        if name in ("||", "&&"):
            return Est(_cap(base), boolean, 1)
        if name in ("==", "!=", "<", "<=", ">", ">="):
            return Est(_cap(base + _factor(min(sizes), 0.1)), boolean, 1)
        if name == "in":
            container = args[1].schema or {}
            linear = container.get("type") == "array" or args[1].schema is None
            return Est(_cap(base + (args[1].size if linear else 1)), boolean, 1)
        if name == "+":
            kinds = {(a.schema or {}).get("type") for a in args}
            size = _cap(sum(sizes))
            if "array" in kinds:
                return Est(_cap(base + 1), args[0].schema, size)
            if kinds & {"string", None}:
                return Est(_cap(base + _factor(size, 0.1)), {"type": "string"}, size)
            return Est(_cap(base + 1), args[0].schema, 1)
        if name in ("size", "int", "uint", "double", "bool", "type", "dyn") or name.startswith("u") or name in ("-", "*", "/", "%"):
            schema = {"type": "integer"} if name in ("size", "-", "*", "/", "%", "int", "uint") else (args[0].schema if args else None)
            return Est(_cap(base + 1), schema, 1)
        if name in ("startsWith", "endsWith") and tgt is not None:
            return Est(_cap(base + _factor(args[0].size, 0.1)), boolean, 1)
        if name == "contains" and tgt is not None:
            return Est(_cap(base + _cap(_factor(tgt.size, 0.1) * _factor(args[0].size, 0.1))), boolean, 1)
        if name == "matches":
            text, regex = (tgt.size, args[0].size) if tgt else (args[0].size, args[1].size)
            return Est(_cap(base + _cap(_factor(text + 1, 0.1) * _factor(regex, 0.25))), boolean, 1)
        # Not modelled: linear in every operand, never below cel-go's (O(1) or O(n)) figure.
        return Est(_cap(base + 1 + sum(sizes)), None, _cap(max(sizes, default=1)))


def rule_cost(rule: str, schema: dict[str, Any]) -> int:
    """The estimated cost of one run of ``rule`` at a node of ``schema``."""
    return _Coster(schema).cost(parse(rule)).cost


@dataclass(frozen=True)
class RuleCost:
    path: str  # JSON path of the rule inside the CRD
    rule: str
    cost: int  # one run
    cardinality: int  # how many times it can run per object
    error: str = ""

    @property
    def total(self) -> int:
        return _cap(self.cost * self.cardinality)


def rule_costs(schema: dict[str, Any], path: str, cardinality: int = 1) -> Iterator[RuleCost]:
    """Every rule under ``schema`` (an openAPIV3Schema) with its cost and cardinality."""
    for i, v in enumerate(schema.get("x-kubernetes-validations") or []):
        rule = str(v.get("rule", ""))
        where = f"{path}/x-kubernetes-validations/{i}/rule"
        try:
            yield RuleCost(where, rule, rule_cost(rule, schema), cardinality)
        except CelSyntaxError as e:
            yield RuleCost(where, rule, MAX_COST, cardinality, str(e))
    for k, v in (schema.get("properties") or {}).items():
        yield from rule_costs(v, f"{path}/properties/{k}", cardinality)
    if isinstance(schema.get("items"), dict):
        yield from rule_costs(schema["items"], f"{path}/items", _cap(cardinality * max_size(schema)))
    if isinstance(schema.get("additionalProperties"), dict):
        yield from rule_costs(schema["additionalProperties"], f"{path}/additionalProperties", _cap(cardinality * max_size(schema)))


def problems(schema: dict[str, Any], path: str) -> Iterator[tuple[str, str]]:
    """(path, message) for every rule over the per-rule budget, and for the schema's total."""
    total = 0
    for rc in rule_costs(schema, path):
        if rc.error:
            yield rc.path, f"CEL rule cost cannot be estimated ({rc.error}): {rc.rule}"
            continue
        total = _cap(total + rc.total)
        if rc.total > PER_RULE_LIMIT:
            yield rc.path, (
                f"CEL rule cost {rc.total:,} ({rc.cost:,} per run x {rc.cardinality:,} runs) exceeds the API server's "
                f"per-rule budget {PER_RULE_LIMIT:,} ({rc.total / PER_RULE_LIMIT:.1f}x): {rc.rule}"
            )
    if total > PER_CRD_LIMIT:
        yield path, f"CEL rule costs total {total:,}, over the API server's per-CRD budget {PER_CRD_LIMIT:,} ({total / PER_CRD_LIMIT:.1f}x)"
