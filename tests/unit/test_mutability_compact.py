"""kccgen.contract.field_rules: compact rows expand to FieldRules, deriving what rows leave out."""

from __future__ import annotations

from typing import Any

import pytest

from kccgen.contract import (
    KRM_ONLY_SOURCE,
    STATUS_SOURCE,
    Behaviour,
    Fact,
    FieldRule,
    FieldType,
    TypeKind,
    field_rules,
)

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
