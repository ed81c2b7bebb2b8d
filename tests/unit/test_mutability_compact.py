"""Compact ``<kind>_mutability.py`` modules: their rows expand to exactly the IR's rules.

The emitter writes each FieldRule as a row that ``kccgen.contract.field_rules``
expands, overriding only what the derivation gets wrong. For every curated
Kind, the rules the emitted source registers (and those the committed module
registers in the runtime) must equal the old-style list: ``rule(m)`` for each
MutabilityIR, sorted by path. The other tests show that these comparisons can
fail: every override a row carries changes its rule when dropped, and an edited
source registers different rules.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any
from unittest import mock

import pytest

import kccgen.runtime.mutability
from kccgen.contract import (
    KRM_ONLY_SOURCE,
    STATUS_SOURCE,
    Behaviour,
    Fact,
    FieldRow,
    FieldRule,
    FieldType,
    TypeKind,
    field_rule,
    field_rules,
)
from kccgen.generator.emit.mutability import form_of, mutability_source, row_of, rule
from kccgen.generator.ir.model import IR, KindIR
from kccgen.runtime.mutability import mutability_of
from kccgen.runtime.registry import module_for
from tests.conftest import REPO
from tests.support.kinds import CURATED_KINDS, GENERATED_KINDS, batched_params

BUDGET = 10_000  # bytes per mutability module, on average over the curated Kinds


def kind_ir(ir: IR, kind: str) -> KindIR:
    return next(k for k in ir.kinds if k.kind == kind)


def expected(k: KindIR) -> tuple[FieldRule, ...]:
    """The rules as the emitter wrote them before rows: one per MutabilityIR, sorted by path."""
    return tuple(rule(m) for m in sorted(k.mutability, key=lambda m: m.path))


def registered(source: str) -> tuple[str, tuple[FieldRule, ...]]:
    """Execute a mutability module's source; what it passes to register_mutability."""
    calls: list[tuple[str, tuple[FieldRule, ...]]] = []
    namespace: dict[str, Any] = {"__name__": "_mutability_under_test"}
    with mock.patch.object(kccgen.runtime.mutability, "register_mutability", lambda kind, rules: calls.append((kind, rules))):
        exec(compile(source, "<mutability>", "exec"), namespace)
    assert len(calls) == 1
    assert calls[0][1] is namespace["FIELDS"]
    return calls[0]


def committed_file(kind: str) -> str:
    return REPO.joinpath(*module_for(kind, "_mutability").split(".")[1:]).with_suffix(".py").read_text()


# One test per curated Kind, one walking every derived Kind (tests/support/kinds.py).
KIND_BATCHES = batched_params(GENERATED_KINDS, str, str)


@pytest.mark.parametrize("kinds", KIND_BATCHES)
def test_emitted_rows_expand_to_the_ir_rules(ir: IR, kinds: list[str]) -> None:
    for kind in kinds:
        k = kind_ir(ir, kind)
        assert registered(mutability_source(k)) == (kind, expected(k)), kind


@pytest.mark.parametrize("kinds", KIND_BATCHES)
def test_committed_module_registers_the_ir_rules(ir: IR, kinds: list[str]) -> None:
    """The committed (formatted) file, and the table the runtime reads from it."""
    for kind in kinds:
        rules = expected(kind_ir(ir, kind))
        assert registered(committed_file(kind)) == (kind, rules), kind
        assert mutability_of(kind) == {r.path: r for r in rules}, kind  # a repeated path: the last rule wins


@pytest.mark.parametrize("kinds", KIND_BATCHES)
def test_every_override_is_needed(ir: IR, kinds: list[str]) -> None:
    for kind in kinds:
        _every_override_is_needed(kind_ir(ir, kind))


def _every_override_is_needed(k: KindIR) -> None:
    """Dropping any one override of any row gives a different rule: rows carry no
    redundant values, and a lost override cannot go unnoticed."""
    rules = expected(k)
    form = form_of(k, rules)
    checked = 0
    for r in rules:
        row = row_of(r, form)
        status = r.path.startswith("status.")
        assert field_rule(row, status=status, **dataclasses.asdict(form)) == r
        if len(row) == 5:
            continue
        for key in row[5]:
            fewer = {k2: v for k2, v in row[5].items() if k2 != key}
            short: FieldRow = (*row[:5], fewer)  # type: ignore[assignment]
            assert field_rule(short, status=status, **dataclasses.asdict(form)) != r, (r.path, key)
            checked += 1
    assert checked or all(len(row_of(r, form)) == 5 for r in rules)


def test_the_rows_carry_overrides(ir: IR) -> None:
    """The checks above are not vacuous: the curated Kinds have reference fields
    (an API path that is not the KRM path) and identity fields to override."""
    topic = kind_ir(ir, "PubSubTopic")
    rules = expected(topic)
    form = form_of(topic, rules)
    overrides = {}
    for r in rules:
        row = row_of(r, form)
        if len(row) == 6:
            overrides[r.path] = row[5]
    assert overrides["spec.kmsKeyRef"] == {"api_path": "kmsKeyName"}
    assert overrides["spec.projectRef"] == {"api_path": None, "identity": True}


def test_an_edited_source_registers_other_rules(ir: IR) -> None:
    """The comparison fails when the emitted text loses an override."""
    k = kind_ir(ir, "PubSubTopic")
    source = mutability_source(k)
    edited, n = re.subn(r', \{"api_path": "kmsKeyName"\}', "", source)
    assert n == 1
    kind, rules = registered(edited)
    assert kind == "PubSubTopic" and rules != expected(k)
    changed = [(a, b) for a, b in zip(rules, expected(k), strict=True) if a != b]
    assert [(a.path, a.api_path, b.api_path) for a, b in changed] == [("spec.kmsKeyRef", "kmsKeyRef", "kmsKeyName")]


def test_modules_fit_the_size_budget() -> None:
    """Rows keep the committed modules small: at about 1,000 Kinds, one FieldRule call
    per field broke the budget of generated/ (80 KB per Kind on average)."""
    sizes = [len(committed_file(kind).encode()) for kind in CURATED_KINDS]
    assert sum(sizes) / len(sizes) <= BUDGET


def test_the_source_does_not_depend_on_the_ir_order(ir: IR) -> None:
    """Rows, constants and their names come out the same from reordered input.

    Rules of one path keep their order (sorting is stable, and the runtime keeps
    the last of them): ComputeSubnetwork has two ``spec.region`` rules, the
    identity's and the API field's.
    """
    reordered = 0
    for k in ir.kinds:
        shuffled = dataclasses.replace(k, mutability=tuple(sorted(k.mutability, key=lambda m: m.path, reverse=True)))
        if shuffled.mutability == k.mutability:
            continue  # a table already in that order (one row, or rows sorted backwards)
        reordered += 1
        assert mutability_source(shuffled) == mutability_source(k), k.kind
    assert reordered > len(ir.kinds) // 2


OPT = Fact(Behaviour.OPTIONAL, "description:'Optional.'")
IMM = Fact(Behaviour.IMMUTABLE, "description:'Immutable.'")
OUT = Fact(Behaviour.OUTPUT_ONLY, "readOnly")
INP = Fact(Behaviour.INPUT_ONLY, "description:'Input only.'")
STR = FieldType(TypeKind.STRING)
FORM: dict[str, Any] = {"get": "x.get", "update": "x.patch with updateMask={api_path}", "identity": "p/{p}/x/{x}"}


def _sources(rules: tuple[FieldRule, ...]) -> list[tuple[str, str | None, str, str]]:
    return [(r.path, r.api_path, r.updatable_source, r.readable_source) for r in rules]


def test_field_rules_derives_what_rows_leave_out() -> None:
    rules = field_rules(
        **FORM,
        spec=(
            ("a.b", STR, (OPT,), True, True),
            ("c", STR, (IMM,), False, True),
            ("d", STR, (INP,), True, False),
            ("eRef", STR, (), True, True, {"api_path": "e"}),
            ("f", STR, (OUT, IMM), False, True),
            ("projectRef", STR, (), False, False, {"api_path": None, "identity": True}),
        ),
        observed=(("state", STR, (OUT,), False, True),),
    )
    assert _sources(rules) == [
        ("spec.a.b", "a.b", "x.patch with updateMask=a.b", "x.get returns a.b"),
        ("spec.c", "c", "immutable (description:'Immutable.')", "x.get returns c"),
        ("spec.d", "d", "x.patch with updateMask=d", "input-only (description:'Input only.'): GET never returns it"),
        ("spec.eRef", "e", "x.patch with updateMask=e", "x.get returns e"),
        ("spec.f", "f", "output-only", "x.get returns f"),
        ("spec.projectRef", None, "identity (p/{p}/x/{x})", KRM_ONLY_SOURCE),
        ("status.observedState.state", "state", STATUS_SOURCE, "x.get returns state"),
    ]
    assert [r.identity for r in rules] == [False] * 5 + [True, False]


def test_field_rules_without_an_update_method() -> None:
    """Every spec field but the identity takes ``fixed``, whatever its facts say."""
    rules = field_rules(
        get="x.get",
        update=None,
        identity="x/{x}",
        fixed="no update method for x",
        spec=(("c", STR, (IMM,), False, True), ("f", STR, (OUT,), False, True), ("name", STR, (), False, False, {"api_path": None, "identity": True})),
    )
    assert [r.updatable_source for r in rules] == ["no update method for x", "no update method for x", "identity (x/{x})"]


def test_field_rules_refuses_rows_it_cannot_complete() -> None:
    with pytest.raises(ValueError, match=r"spec\.g: no source can be derived"):
        field_rules(**FORM, spec=(("g", STR, (), False, True),))  # not updatable, and no fact or fixed says why
    with pytest.raises(ValueError, match=r"cannot override \['path'\]"):
        field_rules(**FORM, spec=(("g", STR, (), True, True, {"path": "spec.h"}),))  # type: ignore[typeddict-unknown-key]
