"""Emit ``<kind>_mutability.py``: the Kind's kccgen.contract.FieldRule records, written as rows.

Each rule is written as a short row that ``kccgen.contract.field_rules``
expands; a row carries an override only where the derivation (API path from
the field path, sources from the facts and a few per-Kind texts) differs from
the IR. Facts and types become module constants. The emitter expands its own
rows and refuses to write a table whose expansion differs from the IR's rules.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from kccgen.contract import (
    API_PATH,
    Fact,
    FieldRow,
    FieldRule,
    FieldType,
    RowOverrides,
    field_rule,
    field_rules,
)
from kccgen.generator.ir.model import KindIR, MutabilityIR
from kccgen.generator.render import py_source

SPEC = "spec."
STATUS = "status.observedState."
_OVERRIDE_ORDER = ("api_path", "identity", "updatable_source", "readable_source")
V = TypeVar("V")


def rule(m: MutabilityIR) -> FieldRule:
    return FieldRule(
        path=m.path,
        api_path=m.api_path,
        type=m.field_type,
        facts=m.facts,
        updatable=m.updatable,
        updatable_source=m.updatable_source,
        readable=m.readable,
        readable_source=m.readable_source,
        identity=m.identity,
    )


@dataclass(frozen=True)
class Form:
    """The per-Kind texts field_rules derives sources from (its keyword arguments)."""

    get: str
    update: str | None
    identity: str = ""
    fixed: str = ""


def _most_common(values: Iterable[str]) -> str | None:
    """The most frequent value; ties go to the smallest, so the choice is deterministic."""
    counts = Counter(values)
    return min(counts, key=lambda v: (-counts[v], v)) if counts else None


def _key(r: FieldRule) -> tuple[bool, str]:
    """(status, the path under spec. or status.observedState.)."""
    for status, prefix in ((False, SPEC), (True, STATUS)):
        if r.path.startswith(prefix):
            return status, r.path.removeprefix(prefix)
    raise ValueError(f"{r.path}: neither a spec. nor a status.observedState. path")


def _given(r: FieldRule) -> RowOverrides:
    """The overrides every derivation needs: an API path that is not the row's path, identity."""
    given: RowOverrides = {}
    if r.api_path != _key(r)[1]:
        given["api_path"] = r.api_path
    if r.identity:
        given["identity"] = True
    return given


def _derive(r: FieldRule, form: Form, given: RowOverrides) -> FieldRule:
    status, key = _key(r)
    row: FieldRow = (key, r.type, r.facts, r.updatable, r.readable, given)
    return field_rule(row, status=status, get=form.get, update=form.update, identity=form.identity, fixed=form.fixed)


def _template(r: FieldRule) -> str | None:
    """The update text that derives ``r``'s source: its API path at the end becomes API_PATH."""
    assert r.api_path is not None
    text = r.updatable_source.removesuffix(r.api_path) if r.updatable_source.endswith(r.api_path) else r.updatable_source
    if API_PATH in text:
        return None  # field_rule would replace it too
    return text + API_PATH if text != r.updatable_source else text


def form_of(k: KindIR, rules: Sequence[FieldRule]) -> Form:
    """The texts that leave the fewest overrides: ``update`` is the most common source of
    an updatable field with its API path replaced by API_PATH; ``fixed`` the most common
    source of a spec field that the other texts do not derive."""
    spec = [r for r in rules if not _key(r)[0]]
    update: str | None = None
    if k.methods.update is not None:
        update = _most_common(t for r in spec if r.updatable and r.api_path is not None and (t := _template(r)) is not None) or ""
    base = Form(get=k.methods.get.id, update=update, identity=k.identity.template)
    unexplained = Counter(r.updatable_source for r in spec if _derive(r, base, _given(r)).updatable_source != r.updatable_source)
    shared = _most_common(s for s, n in unexplained.items() if n > 1)
    return Form(base.get, base.update, base.identity, shared or "")


def row_of(r: FieldRule, form: Form) -> FieldRow:
    """The row that expands to ``r``: overrides only where the derivation differs."""
    key = _key(r)[1]
    given = _given(r)
    derived = _derive(r, form, given)
    if derived.updatable_source != r.updatable_source:
        given["updatable_source"] = r.updatable_source
    if derived.readable_source != r.readable_source:
        given["readable_source"] = r.readable_source
    return (key, r.type, r.facts, r.updatable, r.readable, given) if given else (key, r.type, r.facts, r.updatable, r.readable)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").upper()


def _type_name(t: FieldType) -> str:
    """``STRING``, ``STRING_INT64``, ``ARRAY_OF_OBJECT``, ``MAP_OF_STRING``."""
    name = t.kind.name + (f"_{_slug(t.format)}" if t.format else "")
    return name + (f"_OF_{_type_name(t.item)}" if t.item is not None else "")


def _names(groups: dict[str, list[V]], taken: set[str]) -> dict[V, str]:
    """A unique constant name per value: its group's name, then ``_2``, ``_3``...
    in the order given (the caller sorts each group)."""
    out: dict[V, str] = {}
    for base in sorted(groups):
        n = 1
        for value in groups[base]:
            name = base
            while name in taken:
                n += 1
                name = f"{base}_{n}"
            taken.add(name)
            out[value] = name
    return out


def constants(rules: Sequence[FieldRule]) -> tuple[dict[Fact, str], dict[FieldType, str]]:
    """Module constants for every fact and type the rows use: facts named after
    their behaviour (``OPTIONAL``, ``OUTPUT_ONLY_2``: in source order), types after
    their structure. Names depend on the set of values only, not on row order."""
    taken = {"KIND", "FIELDS"}
    by_behaviour: dict[str, list[Fact]] = {}
    for f in sorted({f for r in rules for f in r.facts}):
        by_behaviour.setdefault(f.behaviour.name, []).append(f)
    by_shape: dict[str, list[FieldType]] = {}
    for t in sorted({r.type for r in rules}, key=py_source):
        by_shape.setdefault(_type_name(t), []).append(t)
    fact_names = _names(by_behaviour, taken)
    return dict(sorted(fact_names.items())), dict(sorted(_names(by_shape, taken).items(), key=lambda kv: kv[1]))


def _row_source(row: FieldRow, fact_names: dict[Fact, str], type_names: dict[FieldType, str]) -> str:
    key, type_, facts, updatable, readable = row[:5]
    items = [_literal(key), type_names[type_], _tuple([fact_names[f] for f in facts]), _literal(updatable), _literal(readable)]
    if len(row) == 6:
        given = sorted(row[5].items(), key=lambda kv: _OVERRIDE_ORDER.index(kv[0]))
        items.append("{" + ", ".join(f"{_literal(k)}: {_literal(v)}" for k, v in given) + "}")
    return "(" + ", ".join(items) + ")"


def _literal(value: object) -> str:
    """Source for a row value in double quotes, as ruff would write it (the rows are
    kept out of ruff's reach, one per line)."""
    text = py_source(value)
    if isinstance(value, str) and text.startswith("'") and '"' not in value:
        text = f'"{text[1:-1]}"'  # repr chose single quotes and escaped none: the text holds no quote
    return text


def _tuple(items: Sequence[str]) -> str:
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def mutability_source(k: KindIR) -> str:
    rules = tuple(rule(m) for m in sorted(k.mutability, key=lambda m: m.path))
    form = form_of(k, rules)
    rows = {status: [row_of(r, form) for r in rules if _key(r)[0] is status] for status in (False, True)}
    expanded = field_rules(get=form.get, update=form.update, identity=form.identity, fixed=form.fixed, spec=rows[False], observed=rows[True])
    if expanded != rules:
        bad = next((a.path for a, b in zip(expanded, rules, strict=False) if a != b), k.kind)
        raise AssertionError(f"{k.kind}: the rows do not expand to the IR's rules (first difference: {bad})")
    fact_names, type_names = constants(rules)
    names = {"FieldRule", "field_rules"}
    defs = [f"{name} = {py_source(f, names)}\n" for f, name in fact_names.items()]
    defs += [f"{name} = {py_source(t, names)}\n" for t, name in type_names.items()]
    args = [f"get={_literal(form.get)}", f"update={_literal(form.update)}"]
    args += [f"{arg}={_literal(v)}" for arg, v in (("identity", form.identity), ("fixed", form.fixed)) if v]
    for section, status in (("spec", False), ("observed", True)):
        if rows[status]:
            body = "".join(f"        {_row_source(r, fact_names, type_names)},\n" for r in rows[status])
            args.append(f"{section}=(\n{body}    )")
    call = "".join(f"    {a},\n" for a in args)
    return (
        f'"""{k.kind} field rules: behaviours, updatable, readable, identity, each with its source.\n\n'
        f"Generated by kccgen from {k.config_file} and specs/discovery/{k.api.doc_key}.json; do not edit.\n"
        f"Update method: {k.methods.update.id if k.methods.update else 'none'} ({type(k.methods.update_shape).__name__}).\n"
        "Each row is (path under spec. or status.observedState., type, facts, updatable, readable)\n"
        "and then the values that differ from what kccgen.contract.field_rules derives.\n"
        '"""\n\n'
        "from __future__ import annotations\n\n"
        f"from kccgen.contract import {', '.join(sorted(names))}\n"
        "from kccgen.runtime.mutability import register_mutability\n\n"
        f'KIND = "{k.kind}"\n\n'
        f"{''.join(defs)}\n"
        "# fmt: off\n"
        f"FIELDS: tuple[FieldRule, ...] = field_rules(\n{call})\n"
        "# fmt: on\n\n"
        "register_mutability(KIND, FIELDS)\n"
    )
