"""The CEL rules of generated/crds/*.yaml, compiled and evaluated with cel-python.

Kubernetes semantics reproduced here: a rule runs at the schema node that
carries it, ``self`` is the value there, a transition rule (one that mentions
``oldSelf``) runs only on UPDATE when the old value exists at that node, and
a rule passes only when it evaluates to ``true``; a rule that raises (for
example on a missing field) rejects the object like a ``false`` would.

1. Every ``x-kubernetes-validations`` rule of every CRD (walked through
   ``properties``, ``items`` and ``additionalProperties``) compiles.
2. Verdicts on concrete values:
   - the identity (transition) rules on ``spec``, for every CRD and every
     identity field found in the rules themselves (a new Kind is covered
     without editing this file): unchanged, changed, cleared, set after
     being unset, external <-> name switch of a ref, unrelated fields;
     none of them may raise when the field is missing on either side;
   - the reference-form rules on every ``*Ref`` object;
   - the ``*Refs`` list rules on every reference list;
   - the bounds that keep the estimated CEL cost small.

A defect is kept with the CORRECT expectation and marked
``xfail(strict=True)``.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import celpy
import pytest

from kccgen.generator.emit.crds import RUNTIME_CHECKED
from kccgen.generator.emit.policies import GROUP as IAM_GROUP
from kccgen.generator.emit.policies import KINDS as IAM_KINDS
from kccgen.generator.naming import API_NAMED_REF, CEL_RESERVED, cel_field
from kccgen.generator.spec.claims import load_evidence
from kccgen.generator.spec.loader import load_specs
from tests.conftest import REPO
from tests.support.crds import load_crd
from tests.support.kinds import GENERATED_KINDS, batched_params, configured_kinds, representatives

CRD_DIR = Path(__file__).resolve().parent.parent / "generated" / "crds"
# the IAM Kinds (kccgen.dev/shape: iam-policy) own a part of a policy: no identity, resourceRef names any Kind
CRD_FILES = sorted(p for p in CRD_DIR.glob("*.yaml") if p.name not in {f"{plural}.{IAM_GROUP}.yaml" for _, plural, *_ in IAM_KINDS})
FILE_KIND = {p.name: str(load_crd(p)["spec"]["names"]["kind"]) for p in CRD_FILES}

PASS = "pass"
FAIL = "fail"
ERROR = "error"

MISSING = object()  # the field is absent on that side

COMPREHENSIONS = (".all(", ".exists(", ".exists_one(", ".filter(", ".map(")


# --- collecting the rules -------------------------------------------------------


@dataclass(frozen=True)
class Node:
    """A schema node: the CRD file it is in, its JSON path, its ancestors' bounds."""

    file: str
    version: str
    path: str  # JSON path of the value, e.g. ".spec.notificationChannelRefs[*]"
    schema: dict[str, Any] = field(compare=False, hash=False, repr=False)
    # (path, schema) of every array / map node above this one
    containers: tuple[tuple[str, dict[str, Any]], ...] = field(compare=False, hash=False, repr=False)
    key: str | None = None  # property name that holds this node, None for items / map values

    @property
    def short(self) -> str:
        return self.file.split(".", 1)[0]

    @property
    def kind(self) -> str:
        return FILE_KIND[self.file]

    @property
    def where(self) -> str:
        return f"{self.file} ({self.version}) {self.path}"


@dataclass(frozen=True)
class Rule:
    node: Node
    index: int
    rule: str
    message: str

    @property
    def id(self) -> str:
        return f"{self.node.short}:{self.node.path}#{self.index}"

    @property
    def where(self) -> str:
        return f"{self.node.where} x-kubernetes-validations[{self.index}] {self.rule!r}"

    @property
    def is_transition(self) -> bool:
        return re.search(r"\boldSelf\b", self.rule) is not None


def _walk(
    schema: Any,
    file: str,
    version: str,
    path: str,
    containers: tuple[tuple[str, dict[str, Any]], ...],
    key: str | None,
) -> Iterator[Node]:
    if not isinstance(schema, dict):
        return
    yield Node(file, version, path, schema, containers, key)
    for name, child in (schema.get("properties") or {}).items():
        yield from _walk(child, file, version, f"{path}.{name}", containers, name)
    if isinstance(schema.get("items"), dict):
        inner = (*containers, (path, schema))
        yield from _walk(schema["items"], file, version, f"{path}[*]", inner, None)
    if isinstance(schema.get("additionalProperties"), dict):
        inner = (*containers, (path, schema))
        yield from _walk(schema["additionalProperties"], file, version, f"{path}{{*}}", inner, None)





def all_nodes() -> list[Node]:
    out: list[Node] = []
    for path in CRD_FILES:
        crd = load_crd(path)
        for v in crd["spec"]["versions"]:
            root = v["schema"]["openAPIV3Schema"]
            out.extend(_walk(root, path.name, v["name"], "", (), None))
    return out


NODES = all_nodes()


def rules_of(node: Node) -> list[Rule]:
    return [
        Rule(node, i, str(r["rule"]), str(r.get("message", "")))
        for i, r in enumerate(node.schema.get("x-kubernetes-validations") or [])
    ]


RULES = [r for n in NODES for r in rules_of(n)]


def is_ref_node(node: Node) -> bool:
    props = node.schema.get("properties") or {}
    # kind: a reference whose kind key picks the Kind it names (Config Connector's attachmentTargetRef)
    return node.schema.get("type") == "object" and "external" in props and set(props) <= {"external", "name", "namespace", "kind"}


def runtime_checked(node: Node) -> bool:
    """The generator dropped this node's rules to fit the API server's CEL budget
    (generator/emit/crds.py fit_cel_budget) and says so; the runtime checks it."""
    return RUNTIME_CHECKED in str(node.schema.get("description", "")) and not node.schema.get("x-kubernetes-validations")


def api_named_ref(node: Node) -> bool:
    """A plain API field whose own name ends in Ref/Refs, marked as such."""
    return str(node.schema.get("description", "")).startswith(API_NAMED_REF)


REF_NODES = [n for n in NODES if is_ref_node(n)]
NAMED_REF_NODES = [n for n in REF_NODES if "name" in n.schema["properties"]]
EXTERNAL_ONLY_REF_NODES = [n for n in REF_NODES if "name" not in n.schema["properties"]]


NODE_AT = {(n.file, n.version, n.path): n for n in NODES}
SPEC_NODE: dict[str, Node] = {}  # CRD file -> its first version's .spec node
for _n in NODES:
    if _n.path == ".spec":
        SPEC_NODE.setdefault(_n.file, _n)


def _items_node(node: Node) -> Node | None:
    return NODE_AT.get((node.file, node.version, f"{node.path}[*]"))


REFS_LIST_NODES = [
    n
    for n in NODES
    if n.schema.get("type") == "array" and (item := _items_node(n)) is not None and is_ref_node(item)
]


# --- evaluating -------------------------------------------------------------------


@cache
def _env() -> celpy.Environment:
    return celpy.Environment()


@cache
def program(rule: str) -> Any:
    env = _env()
    return env.program(env.compile(rule))


@dataclass(frozen=True)
class Outcome:
    verdict: str  # PASS, FAIL or ERROR
    detail: str = ""


def unescaped(name: str) -> str:
    """A property name from a rule's escaped spelling (``__package__`` -> ``package``)."""
    return next((w for w in CEL_RESERVED if name == f"__{w}__"), name)


def escaped(value: Any) -> Any:
    """An object as the API server shows it to CEL: property names escaped (``__package__``)."""
    if isinstance(value, dict):
        # the server answers has(self.namespace) and has(self.__namespace__) alike (probed on
        # envtest), while a plain selection needs the escaped name: both keys are there
        out = {k: escaped(v) for k, v in value.items()}
        out.update({cel_field(k): escaped(v) for k, v in value.items()})
        return out
    if isinstance(value, list):
        return [escaped(v) for v in value]
    return value


def evaluate(rule: str, value: Any, old: Any = MISSING) -> Outcome:
    """Evaluate like the API server: only ``true`` passes; an error is reported as ERROR."""
    activation: dict[str, Any] = {"self": celpy.json_to_cel(escaped(value))}
    if old is not MISSING:
        activation["oldSelf"] = celpy.json_to_cel(escaped(old))
    try:
        result = program(rule).evaluate(activation)
    except celpy.CELEvalError as e:
        return Outcome(ERROR, f"raised {e!r}")
    if isinstance(result, celpy.CELEvalError):
        return Outcome(ERROR, f"returned {result!r}")
    if isinstance(result, (celpy.celtypes.BoolType, bool)):
        return Outcome(PASS if bool(result) else FAIL)
    return Outcome(ERROR, f"non-bool result {result!r}")


def describe(rule: Rule, value: Any, old: Any = MISSING) -> str:
    where = f"{rule.where}\n  self={value!r}"
    if old is not MISSING:
        where += f"\n  oldSelf={old!r}"
    return where


# --- 1. every rule compiles -------------------------------------------------------


def test_all_crds_are_walked() -> None:
    """One CRD per generated Kind, the curated ones among them: no Kind is missing from the walk."""
    kinds = sorted(load_crd(p)["spec"]["names"]["kind"] for p in CRD_FILES)
    assert kinds == list(GENERATED_KINDS), [p.name for p in CRD_FILES]
    assert set(configured_kinds()) <= set(kinds)


def test_rules_collected(capsys: pytest.CaptureFixture[str]) -> None:
    assert RULES, "no x-kubernetes-validations rule found in generated/crds"
    per_file = {p.name: sum(1 for r in RULES if r.node.file == p.name) for p in CRD_FILES}
    assert all(per_file.values()), f"CRDs without any CEL rule: {[f for f, n in per_file.items() if not n]}"
    with capsys.disabled():
        print(
            f"\n[test_crd_cel] {len(RULES)} CEL rules in {len(CRD_FILES)} CRDs "
            f"({sum(r.is_transition for r in RULES)} transition rules, "
            f"{len(NAMED_REF_NODES)} ref objects with rules, {len(EXTERNAL_ONLY_REF_NODES)} external-only refs, "
            f"{len(REFS_LIST_NODES)} Refs lists)"
        )


def _first_of_each_text(rules: list[Rule]) -> list[Rule]:
    """One rule per distinct (rule, message) text: a thousand CRDs repeat the same
    reference and list rules thousands of times, and compiling one copy proves them all."""
    seen: dict[tuple[str, str], Rule] = {}
    for r in rules:
        seen.setdefault((r.rule, r.message), r)
    return list(seen.values())


UNIQUE_RULES = _first_of_each_text(RULES)


@pytest.mark.parametrize("rule", UNIQUE_RULES, ids=[r.id for r in UNIQUE_RULES])
def test_rule_compiles(rule: Rule) -> None:
    try:
        program(rule.rule)
    except celpy.CELParseError as e:  # pragma: no cover - reported as the failure
        pytest.fail(f"{rule.where}: does not compile: {e}")
    assert rule.message, f"{rule.where}: no message"


def test_every_rule_has_a_message() -> None:
    assert [r.where for r in RULES if not r.message] == []


def test_transition_rules_only_on_spec() -> None:
    """oldSelf is only used by the identity rules on spec (a list rule with oldSelf would judge order)."""
    assert [r.where for r in RULES if r.is_transition and r.node.path != ".spec"] == []


# --- 2a. identity rules on spec -----------------------------------------------------

_IDENTITY_RULE = re.compile(r"^has\(self\.(\w+)\) == has\(oldSelf\.\1\)")
_IDENTITY_MESSAGE = re.compile(
    r"^(\w+) is immutable: it (is part of the resource's identity|is sent only when the resource is created, and GCP never reports it back)$"
)


@dataclass(frozen=True)
class IdentityField:
    rule: Rule
    field: str
    is_ref: bool  # a reference object (may switch between external and name)
    has_name_form: bool
    create_only: bool  # not identity: an immutable input GCP never reports back
    schema: dict[str, Any]


def identity_fields(crd_file: str) -> list[IdentityField]:
    spec = SPEC_NODE[crd_file]
    out = []
    for r in rules_of(spec):
        if not r.is_transition:
            continue
        m = _IDENTITY_RULE.match(r.rule)
        assert m is not None, f"{r.where}: not an identity rule of the known shape"
        name = unescaped(m.group(1))
        msg = _IDENTITY_MESSAGE.match(r.message)
        assert msg is not None and msg.group(1) == name, f"{r.where}: message {r.message!r} names another field"
        prop = (spec.schema.get("properties") or {}).get(name)
        assert prop is not None, f"{r.where}: spec has no property {name!r}"
        props = prop.get("properties") or {}
        is_ref = prop.get("type") == "object" and "external" in props
        create_only = msg.group(2).startswith("is sent only")
        out.append(IdentityField(r, name, is_ref, is_ref and "name" in props, create_only, prop))
    return out


IDENTITY = {p.name: identity_fields(p.name) for p in CRD_FILES}

_STRING_VALUES = {"location": ("us-central1", "europe-west1"), "region": ("us-central1", "europe-west1")}


def _values(f: IdentityField) -> tuple[Any, Any]:
    """Two different values of a plain field, of its schema type."""
    if f.field in _STRING_VALUES:
        return _STRING_VALUES[f.field]
    t = f.schema.get("type")
    if t == "object":  # a map
        return {"k": "a"}, {"k": "b"}
    if t in ("boolean", "integer", "number") or "enum" in f.schema:
        return _sample(f.schema, False), _sample(f.schema, True)
    return "a", "b"


def base_value(f: IdentityField, form: str = "external") -> Any:
    if f.is_ref:
        if form == "name":
            return {"name": f"{f.field.removesuffix('Ref').lower()}-a"}
        return {"external": "projects/p" if f.field == "projectRef" else f"projects/p/{f.field}/a"}
    return _values(f)[0]


def identity_cases(f: IdentityField) -> list[tuple[str, Any, Any, str]]:
    """(case, old value, new value, expected verdict of the field's rule)."""
    if not f.is_ref:
        a, b = _values(f)
        return [
            ("unchanged", a, a, PASS),
            ("changed", a, b, FAIL),
            ("cleared", a, MISSING, FAIL),
            ("set-after-unset", MISSING, a, FAIL),
            ("unset-both", MISSING, MISSING, PASS),
        ]
    ext = base_value(f, "external")
    ext2 = {"external": ext["external"] + "-other"}
    cases = [
        ("unchanged-external", ext, ext, PASS),
        ("changed-external", ext, ext2, FAIL),
        ("cleared", ext, MISSING, FAIL),
        ("set-after-unset", MISSING, ext, FAIL),
        ("unset-both", MISSING, MISSING, PASS),
    ]
    if f.has_name_form:
        nm = base_value(f, "name")
        cases += [
            ("unchanged-name", nm, nm, PASS),
            ("changed-name", nm, {"name": nm["name"] + "-other"}, FAIL),
            ("changed-namespace", nm, {**nm, "namespace": "other"}, FAIL),
            ("cleared-name-form", nm, MISSING, FAIL),
            ("set-after-unset-name-form", MISSING, nm, FAIL),
            ("switch-external-to-name", ext, nm, PASS),
            ("switch-name-to-external", nm, ext, PASS),
            ("switch-namespaced-name-to-external", {**nm, "namespace": "ns"}, ext, PASS),
        ]
    return cases


def _sample(schema: dict[str, Any], second: bool) -> Any:
    t = schema.get("type")
    if "enum" in schema:
        values = schema["enum"]
        return values[min(1, len(values) - 1)] if second else values[0]
    if t == "string":
        return "y" if second else "x"
    if t == "integer":
        return 2 if second else 1
    if t == "number":
        return 2.5 if second else 1.5
    if t == "boolean":
        return second
    if t == "array":
        return []
    return {}


def unrelated_change(crd_file: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(old, new) of every top-level spec field that is not an identity field."""
    spec = SPEC_NODE[crd_file]
    ids = {f.field for f in IDENTITY[crd_file]}
    old: dict[str, Any] = {}
    new: dict[str, Any] = {}
    for name, prop in (spec.schema.get("properties") or {}).items():
        if name in ids:
            continue
        if prop.get("type") in ("string", "integer", "number", "boolean"):
            old[name], new[name] = _sample(prop, False), _sample(prop, True)
        else:  # objects, lists, maps: unset before, set now
            new[name] = _sample(prop, True)
    return old, new


def base_spec(crd_file: str) -> dict[str, Any]:
    spec = {f.field: base_value(f) for f in IDENTITY[crd_file]}
    spec.update(unrelated_change(crd_file)[0])
    return spec


def _with(spec: dict[str, Any], name: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(spec)
    if value is MISSING:
        out.pop(name, None)
    else:
        out[name] = copy.deepcopy(value)
    return out


def _field_signature(pair: tuple[str, IdentityField]) -> tuple[Any, ...]:
    """What an identity rule's verdicts depend on: its text and its field's schema type."""
    f = pair[1]
    # the rule's text with the field's name taken out: every field gets the same rule
    shape = re.sub(rf"\b{re.escape(f.field)}\b", "F", f.rule.rule), re.sub(rf"^{re.escape(f.field)}\b", "F", f.rule.message)
    values = _STRING_VALUES.get(f.field)
    return (*shape, f.is_ref, f.has_name_form, f.schema.get("type"), tuple(f.schema.get("enum") or ())[:2], values)


IDENTITY_FIELDS = representatives(
    [(crd_file, f) for crd_file, fields in IDENTITY.items() for f in fields],
    kind=lambda pair: FILE_KIND[pair[0]],
    signature=_field_signature,
)

IDENTITY_PARAMS = [
    pytest.param(crd_file, f, case, old, new, expected, id=f"{crd_file.split('.', 1)[0]}:{f.field}:{case}")
    for crd_file, f in IDENTITY_FIELDS
    for case, old, new, expected in identity_cases(f)
]


def test_every_crd_has_identity_rules() -> None:
    missing = [name for name, fields in IDENTITY.items() if not [f for f in fields if not f.create_only]]
    assert not missing, f"CRDs without an identity rule on spec: {missing}"
    for name, fields in IDENTITY.items():
        spec = SPEC_NODE[name]
        if "resourceID" in (spec.schema.get("properties") or {}):
            assert "resourceID" in {f.field for f in fields}, f"{name}: spec.resourceID has no identity rule"
        for f in fields:
            # the external/name switch clause must be there exactly for references
            assert (f"has(self.{f.field}.external)" in f.rule.rule) == f.is_ref, f.rule.where


@pytest.mark.parametrize(("crd_file", "f", "case", "old", "new", "expected"), IDENTITY_PARAMS)
def test_identity_rule(crd_file: str, f: IdentityField, case: str, old: Any, new: Any, expected: str) -> None:
    base = base_spec(crd_file)
    old_spec, new_spec = _with(base, f.field, old), _with(base, f.field, new)
    for other in IDENTITY[crd_file]:
        got = evaluate(other.rule.rule, new_spec, old_spec)
        assert got.verdict != ERROR, f"raised instead of a verdict: {got.detail}\n{describe(other.rule, new_spec, old_spec)}"
        want = expected if other is f else PASS
        assert got.verdict == want, f"case {case}: expected {want}, got {got.verdict}\n{describe(other.rule, new_spec, old_spec)}"


@pytest.mark.parametrize("crd_files", batched_params(IDENTITY, FILE_KIND.__getitem__, lambda n: n.split(".", 1)[0]))
def test_identity_rules_ignore_unrelated_fields(crd_files: list[str]) -> None:
    """A spec whose only identity fields have only identity fields is covered by test_identity_rule
    (a change of one identity field leaves the others' rules passing)."""
    failures = []
    for crd_file in crd_files:
        old_u, new_u = unrelated_change(crd_file)
        ident = {f.field: base_value(f) for f in IDENTITY[crd_file]}
        old_spec, new_spec = {**ident, **old_u}, {**ident, **new_u}
        for f in IDENTITY[crd_file]:
            got = evaluate(f.rule.rule, new_spec, old_spec)
            if got.verdict != PASS:
                failures.append(f"{got.verdict} {got.detail}\n{describe(f.rule, new_spec, old_spec)}")
    assert not failures, "\n".join(failures)


# Negative controls: why the presence-aware form is needed.

NAIVE = "self.resourceID == oldSelf.resourceID"
OLD_ONLY_GUARD = "!has(oldSelf.resourceID) || self.resourceID == oldSelf.resourceID"
PRESENCE_AWARE = (
    "has(self.resourceID) == has(oldSelf.resourceID) && (!has(self.resourceID) || self.resourceID == oldSelf.resourceID)"
)


@pytest.mark.parametrize(
    ("old", "new"),
    [({"resourceID": "a"}, {}), ({}, {"resourceID": "a"}), ({}, {})],
    ids=["cleared", "set-after-unset", "unset-both"],
)
def test_naive_identity_rule_errors_on_missing_field(old: dict[str, Any], new: dict[str, Any]) -> None:
    assert evaluate(NAIVE, new, old).verdict == ERROR  # even an untouched unset field would be refused
    assert evaluate(PRESENCE_AWARE, new, old).verdict != ERROR


def test_old_only_guard_lets_cleared_then_set_through() -> None:
    # Guarding only oldSelf raises when the field is cleared, and passes a value set after being unset.
    assert evaluate(OLD_ONLY_GUARD, {}, {"resourceID": "a"}).verdict == ERROR
    assert evaluate(OLD_ONLY_GUARD, {"resourceID": "b"}, {}).verdict == PASS
    assert evaluate(PRESENCE_AWARE, {"resourceID": "b"}, {}).verdict == FAIL
    assert evaluate(PRESENCE_AWARE, {}, {"resourceID": "a"}).verdict == FAIL


def test_identity_rules_are_the_presence_aware_form() -> None:
    for fields in IDENTITY.values():
        for f in fields:
            n = cel_field(f.field)
            same = f"self.{n} == oldSelf.{n}"
            if f.is_ref:
                same = f"({same} || has(self.{n}.external) != has(oldSelf.{n}.external))"
            assert f.rule.rule == f"has(self.{n}) == has(oldSelf.{n}) && (!has(self.{n}) || {same})", f.rule.where


# --- 2b. reference-form rules --------------------------------------------------------

REF_CASES = [
    ("external-only", {"external": "projects/p/things/t"}, PASS),
    ("name-only", {"name": "t"}, PASS),
    ("both", {"external": "projects/p/things/t", "name": "t"}, FAIL),
    ("neither", {}, FAIL),
    ("namespace+name", {"name": "t", "namespace": "ns"}, PASS),
    ("namespace+external", {"external": "projects/p/things/t", "namespace": "ns"}, FAIL),
    ("namespace-only", {"namespace": "ns"}, FAIL),
]

REF_RULES = {"has(self.external) != has(self.name)", "!has(self.namespace) || has(self.name)"}


def _node_id(n: Node) -> str:
    return f"{n.short}:{n.path}"


def _node_signature(n: Node) -> tuple[Any, ...]:
    """What a node's rule verdicts depend on: its rule texts and its properties."""
    return (tuple((r.rule, r.message) for r in rules_of(n)), tuple(sorted(n.schema.get("properties") or {})))


REF_PARAMS = [
    pytest.param(node, value, expected, id=f"{node.short}:{node.path}:{case}")
    for node in representatives([n for n in NAMED_REF_NODES if not runtime_checked(n)], lambda n: n.kind, _node_signature)
    for case, value, expected in REF_CASES
]


@pytest.mark.parametrize("nodes", batched_params(NAMED_REF_NODES, lambda n: n.kind, _node_id))
def test_every_ref_has_the_form_rules(nodes: list[Node]) -> None:
    assert [n.where for n in nodes if {r.rule for r in rules_of(n)} != REF_RULES and not runtime_checked(n)] == []


@pytest.mark.parametrize(("node", "value", "expected"), REF_PARAMS)
def test_ref_rules(node: Node, value: dict[str, Any], expected: str) -> None:
    rules = rules_of(node)
    assert {r.rule for r in rules} == REF_RULES, node.where
    verdicts = []
    for r in rules:
        got = evaluate(r.rule, value)
        assert got.verdict != ERROR, f"{got.detail}\n{describe(r, value)}"
        verdicts.append(got.verdict)
    overall = PASS if all(v == PASS for v in verdicts) else FAIL
    assert overall == expected, f"{node.where} self={value!r}: expected {expected}, got {list(zip([r.rule for r in rules], verdicts, strict=True))}"


@pytest.mark.parametrize("nodes", batched_params(EXTERNAL_ONLY_REF_NODES, lambda n: n.kind, _node_id))
def test_external_only_ref_shape(nodes: list[Node]) -> None:
    for node in nodes:
        assert set(node.schema["properties"]) == {"external"}, node.where
        assert node.schema.get("required") == ["external"], node.where
        assert not node.schema.get("x-kubernetes-validations"), node.where


def _config_refs(kf: Any) -> list[dict[str, Any]]:
    """Every references entry of a kind file (curated Kinds and derived overrides), as data."""
    entries = [*(k.references.values() for k in kf.kinds), *(o.references.values() for o in kf.overrides.values())]
    return [r.model_dump(by_alias=True) for group in entries for r in group]


def test_ref_nodes_match_ref_field_names() -> None:
    """Every *Ref property / *Refs item is a reference object, and every reference object is one."""
    by_path = {(n.file, n.version, n.path): n for n in NODES}
    # Config Connector's older names (kind config aliases) keep KCC's spelling,
    # e.g. MonitoringAlertPolicy's notificationChannels; their spec rule says so.
    aliases = {
        (n.file, str(r["message"]).split(" is Config Connector's name for ")[0])
        for n in NODES
        if n.path == ".spec"
        for r in n.schema.get("x-kubernetes-validations") or []
        if " is Config Connector's name for " in str(r["message"])
    }
    for n in NODES:
        if n.key is None or n.path.startswith(".status") or api_named_ref(n):
            continue
        secret = n.path.endswith(".valueFrom.secretKeyRef") or (n.key == "secretRef" and set(n.schema.get("properties") or {}) == {"name", "namespace"})
        if n.key.endswith("Ref") and not secret:
            # (a sensitive field's valueFrom.secretKeyRef names a Secret and its key, a
            # credential's secretRef a Secret whose keys fill it: Config Connector's shapes)
            assert is_ref_node(n), f"{n.where}: a *Ref field that is not a reference object"
        if n.key.endswith("Refs"):
            item = by_path.get((n.file, n.version, f"{n.path}[*]"))
            assert item is not None and is_ref_node(item), f"{n.where}: a *Refs list whose items are not references"
    # A kind file may name a reference field as Config Connector does (references.<f>.field:
    # ComputeServiceAttachment's natSubnets, a list of subnetwork references).
    named = {str(ref["field"]) for _, kf in load_specs(REPO / "specs").kinds for ref in _config_refs(kf) if ref.get("field")}
    # So may Config Connector's own CRD (specs/kcc/evidence.yaml ref_paths): its
    # ComputeInstanceGroupManager's targetPools, a list of target pool references.
    kcc_named = {(kind, path.rsplit(".", 1)[-1]) for kind, ev in load_evidence(REPO / "specs").kinds.items() for path, _ in ev.ref_paths}
    for n in REF_NODES:
        parent_key = n.key or by_path[(n.file, n.version, n.path.removesuffix("[*]"))].key or ""
        if (n.file, parent_key) in aliases or parent_key in named or (FILE_KIND[n.file], parent_key) in kcc_named:
            continue
        assert parent_key.endswith(("Ref", "Refs")), f"{n.where}: a reference object under a field not named *Ref/*Refs"


# --- 2c. *Refs list rules ------------------------------------------------------------

A, B, C = (f"projects/p/notificationChannels/{i}" for i in (1, 2, 3))


def list_rule_kind(rule: Rule) -> str:
    if rule.rule == "self.all(r, has(r.external)) || self.all(r, has(r.name))":
        return "mix"
    if rule.rule == "self.filter(r, has(r.external)).all(r, self.filter(s, has(s.external) && s.external == r.external).size() == 1)":
        return "unique"
    raise AssertionError(f"{rule.where}: unknown list rule")


def refs_list_cases(named: bool) -> list[tuple[str, Any, Any, dict[str, str]]]:
    """(case, old list or MISSING, new list, expected verdict per rule kind, as Kubernetes gives it)."""
    ok = {"mix": PASS, "unique": PASS}
    cases: list[tuple[str, Any, Any, dict[str, str]]] = [
        ("all-external-unique", MISSING, [{"external": A}, {"external": B}], ok),
        ("single-external", MISSING, [{"external": A}], ok),
        ("duplicate-externals", MISSING, [{"external": A}, {"external": B}, {"external": A}], {"mix": PASS, "unique": FAIL}),
        ("empty", MISSING, [], ok),
        (
            "reordered-externals",
            [{"external": A}, {"external": B}, {"external": C}],
            [{"external": C}, {"external": A}, {"external": B}],
            ok,
        ),
    ]
    if named:
        cases += [
            ("all-name", MISSING, [{"name": "a"}, {"name": "b", "namespace": "ns"}], ok),
            ("mixed", MISSING, [{"external": A}, {"name": "b"}], {"mix": FAIL, "unique": PASS}),
            ("mixed-name-first", MISSING, [{"name": "b"}, {"external": A}], {"mix": FAIL, "unique": PASS}),
            ("mixed-and-duplicate", MISSING, [{"external": A}, {"name": "b"}, {"external": A}], {"mix": FAIL, "unique": FAIL}),
            ("duplicate-names", MISSING, [{"name": "a"}, {"name": "a"}], ok),
            ("duplicate-names-other-namespace", MISSING, [{"name": "a"}, {"name": "a", "namespace": "ns"}], ok),
            ("reordered-names", [{"name": "a"}, {"name": "b"}], [{"name": "b"}, {"name": "a"}], ok),
        ]
    return cases


def _named_list(node: Node) -> bool:
    item = _items_node(node)
    assert item is not None
    return "name" in item.schema["properties"]


def _mixes_forms(value: list[dict[str, Any]]) -> bool:
    return any("external" in e for e in value) and any("external" not in e for e in value)


# cel-python 0.5.0 does not absorb an error raised inside filter(...).size() on
# the right of a true `||` (CEL, and cel-go in the API server, give true; see
# test_celpy_does_not_absorb_errors_from_filter). On a list that mixes forms the
# unique rule's inner `s.external == r.external` runs for an r without external,
# so cel-python raises where Kubernetes answers true (a duplicate found first
# still gives false in both). Not a CRD defect: such a list
# is refused by the mix rule in either evaluator (test_mixed_list_is_refused).
CELPY_FILTER_QUIRK = (
    "cel-python 0.5.0 evaluator bug, not a CRD defect: `true || <filter error>.size() == 1` raises "
    "instead of giving true, so the unique rule errors on a list mixing external and name entries; "
    "cel-go (Kubernetes) short-circuits and gives the asserted verdict"
)


def _list_rule_param(node: Node, rule: Rule, case: str, old: Any, new: Any, want: str) -> Any:
    kind = list_rule_kind(rule)
    marks = []
    # The rule filters externals first, so cel-python's quirk (CELPY_FILTER_QUIRK,
    # shown by test_celpy_does_not_absorb_errors_from_filter) no longer bites.
    return pytest.param(rule, old, new, want, id=f"{node.short}:{node.path}:{kind}:{case}", marks=marks)


def _list_signature(n: Node) -> tuple[Any, ...]:
    item = _items_node(n)
    assert item is not None
    return (_node_signature(n), _node_signature(item))


REFS_LIST_SAMPLE = representatives([n for n in REFS_LIST_NODES if not runtime_checked(n)], lambda n: n.kind, _list_signature)

REFS_LIST_PARAMS = [
    _list_rule_param(node, rule, case, old, new, expected[list_rule_kind(rule)])
    for node in REFS_LIST_SAMPLE
    for case, old, new, expected in refs_list_cases(_named_list(node))
    for rule in rules_of(node)
]

REFS_LIST_VALUES = [
    pytest.param(node, new, id=f"{node.short}:{node.path}:{case}")
    for node in REFS_LIST_SAMPLE
    for case, _old, new, _expected in refs_list_cases(_named_list(node))
]


def test_refs_lists_found() -> None:
    assert REFS_LIST_NODES, "no *Refs list in generated/crds"
    assert any(n.short == "monitoringalertpolicies" and n.path == ".spec.notificationChannelRefs" for n in REFS_LIST_NODES)


@pytest.mark.parametrize("nodes", batched_params(REFS_LIST_NODES, lambda n: n.kind, _node_id))
def test_refs_list_has_its_rules(nodes: list[Node]) -> None:
    for node in nodes:
        if runtime_checked(node):
            continue
        kinds = sorted(list_rule_kind(r) for r in rules_of(node))
        assert kinds == (["mix", "unique"] if _named_list(node) else ["unique"]), node.where


@pytest.mark.parametrize(("rule", "old", "new", "expected"), REFS_LIST_PARAMS)
def test_refs_list_rule(rule: Rule, old: Any, new: Any, expected: str) -> None:
    # list rules are not transition rules (no oldSelf), so a reordered list is judged on its new value alone
    assert not rule.is_transition, rule.where
    got = evaluate(rule.rule, new, old)
    assert got.verdict != ERROR, f"{got.detail}\n{describe(rule, new, old)}"
    assert got.verdict == expected, f"expected {expected}, got {got.verdict}\n{describe(rule, new, old)}"


@pytest.mark.parametrize(("node", "value"), REFS_LIST_VALUES)
def test_refs_list_entries_are_valid_refs(node: Node, value: list[dict[str, Any]]) -> None:
    """Each entry of every case is a valid reference alone: only the list rules can refuse a mix or a duplicate."""
    item = _items_node(node)
    assert item is not None
    for entry in value:
        for r in rules_of(item):
            assert evaluate(r.rule, entry).verdict == PASS, describe(r, entry)


def test_celpy_does_not_absorb_errors_from_filter() -> None:
    """The evaluator quirk behind CELPY_FILTER_QUIRK, on its own (CEL says: true)."""
    assert evaluate("true || self.all(s, s.x == 1)", [{"x": 1}, {}]).verdict == PASS
    assert evaluate("true || self.filter(s, s.x == 1).size() == 1", [{"x": 1}, {}]).verdict == ERROR


@pytest.mark.parametrize("node", [n for n in REFS_LIST_SAMPLE if _named_list(n)], ids=_node_id)
def test_mixed_list_is_refused(node: Node) -> None:
    """Whatever the unique rule gives on a mix, the mix rule refuses it, so the quirk changes no admission verdict."""
    for value in ([{"external": A}, {"name": "b"}], [{"name": "b"}, {"external": A}]):
        verdicts = {list_rule_kind(r): evaluate(r.rule, value).verdict for r in rules_of(node)}
        assert verdicts["mix"] == FAIL, (node.where, value, verdicts)


# --- 2d. bounds that keep the estimated CEL cost small ------------------------------------


@pytest.mark.parametrize("nodes", batched_params(REFS_LIST_NODES, lambda n: n.kind, _node_id))
def test_refs_list_has_max_items(nodes: list[Node]) -> None:
    for node in nodes:
        max_items = node.schema.get("maxItems")
        assert isinstance(max_items, int) and max_items > 0, f"{node.where}: no maxItems"


@pytest.mark.parametrize("nodes", batched_params(REF_NODES, lambda n: n.kind, _node_id))
def test_ref_strings_have_max_length(nodes: list[Node]) -> None:
    for node in nodes:
        for name, prop in node.schema["properties"].items():
            assert prop.get("type") == "string", f"{node.where}.{name}"
            max_length = prop.get("maxLength")
            assert isinstance(max_length, int) and max_length > 0, f"{node.where}.{name}: no maxLength"


# The API server (apiextensions validation, getExpressionCost) multiplies the
# estimated cost of a rule by the cardinality of the node it sits on; under an
# array without maxItems (or a map without maxProperties) that cardinality is
# maxCardinality(minSize) = 3 MiB / (minSize + 1), 1,048,576 for a list ("[]").
# The unique rule iterates 50 x 50 entries (cost >= 2,500), so under such an
# array it estimates >= 2.6e9, beyond the 100,000,000 StaticEstimatedCRDCostLimit
# (and the 10,000,000 per-rule limit), and the CRD is refused on create. maxItems
# on the Refs list alone is not enough: every container above a comprehension
# rule needs a bound too. (Derived from the API server's formula; no API server
# is available here to run it.)
KNOWN_UNBOUNDED: dict[tuple[str, str], str] = {}

COMPREHENSION_RULES = [r for r in RULES if any(c in r.rule for c in COMPREHENSIONS)]


@pytest.mark.parametrize("rules", batched_params(COMPREHENSION_RULES, lambda r: r.node.kind, lambda r: r.id))
def test_comprehension_rules_have_bounded_ancestors(rules: list[Rule]) -> None:
    """A KNOWN_UNBOUNDED entry (a defect kept with its reason) must still be unbounded."""
    wrong = []
    for rule in rules:
        unbounded = [
            path
            for path, schema in rule.node.containers
            if not isinstance(schema.get("maxItems" if schema.get("type") == "array" else "maxProperties"), int)
        ]
        known = (rule.node.file, rule.node.path) in KNOWN_UNBOUNDED
        if bool(unbounded) != known:
            wrong.append(
                f"{rule.where}: iterates a list but sits under unbounded container(s) {unbounded}; "
                "the estimated cost is multiplied by their request-size cardinality"
                if unbounded
                else f"{rule.where}: listed in KNOWN_UNBOUNDED but bounded now: remove the entry"
            )
    assert not wrong, "\n".join(wrong)


def test_known_unbounded_entries_are_used() -> None:
    used = {(r.node.file, r.node.path) for r in COMPREHENSION_RULES}
    assert set(KNOWN_UNBOUNDED) <= used, set(KNOWN_UNBOUNDED) - used


def test_a_field_named_like_a_cel_reserved_word_is_escaped() -> None:
    """ArtifactRegistryTag's ``package``: the server exposes it as ``__package__``; ``self.package``
    names nothing there (its cost estimate refused the CRD)."""
    from kccgen.generator.emit.crds import identity_rule

    rule = identity_rule("package", False)["rule"]
    assert "self.__package__ == oldSelf.__package__" in rule and "self.package" not in rule
    assert evaluate(rule, {"package": "a"}, {"package": "b"}).verdict == FAIL
    assert evaluate(rule, {"package": "a"}, {"package": "a"}).verdict == PASS
