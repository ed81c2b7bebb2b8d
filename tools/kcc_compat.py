"""Google Config Connector's own test fixtures against our CRDs and pydantic models.

For every document of one of our Kinds in a ``create.yaml`` / ``update.yaml``
under ``<kcc>/fixtures`` (placeholders substituted), this tool:

(a) validates the whole object against our CRD's ``openAPIV3Schema``
    (``generated/crds``) with jsonschema (Draft 2020-12; no format checks). The
    schema is read as the API server reads it under strict field validation
    (``kubectl --validate=strict``): an object node with neither
    ``additionalProperties`` nor ``x-kubernetes-preserve-unknown-fields``
    rejects unknown fields instead of pruning them, a
    ``x-kubernetes-preserve-unknown-fields`` node accepts anything, the root
    ``metadata`` (ObjectMeta, validated by the API server itself) accepts any
    keys, and the other ``x-kubernetes-*`` keys (CEL rules included) are
    ignored;
(b) parses it with our ``<Kind>`` pydantic model (``extra="forbid"``).

The errors of both are turned into reasons (JSON path, error kind, message),
deduplicated on (path, error kind), and each reason is classified with
``LEGACY``: a (Kind, path pattern, error kind) that KCC spells differently
from the API we derive everything from is a "legacy Config Connector shape";
anything not in that table is "our defect".

``python -m tools.kcc_compat`` (from the repo root) writes docs/kcc-compat.md;
``--check`` only compares. tests/test_kcc_compat.py is the drift test.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import yaml
from pydantic import BaseModel, ValidationError

from kccgen.runtime.admission import path_text as format_path
from kccgen.runtime.admission import strict_schema
from kccgen.runtime.registry import types_modules
from tools.reports import write_or_check

REPO = Path(__file__).resolve().parent.parent
DEFAULT_KCC = REPO.parent / "shared" / "compat" / "kcc"
DOC_PATH = Path("docs") / "kcc-compat.md"

PLACEHOLDERS = {
    "${projectId}": "example-project",
    "${uniqueId}": "abc123",
    "${projectNumber}": "123456789012",
}
FIXTURE_FILES = ("create.yaml", "update.yaml")

LEGACY_SHAPE = "legacy Config Connector shape"
OUR_DEFECT = "our defect"


class ErrorKind(StrEnum):
    UNKNOWN_FIELD = "unknown-field"
    REQUIRED = "required"
    TYPE = "type"
    ENUM = "enum"
    PATTERN = "pattern"
    LENGTH = "length"
    OTHER = "other"


# --- the classification ------------------------------------------------------------------
#
# (Kind, path pattern, error kind) -> why the fixture's shape is Config
# Connector's and not a defect of ours. A pattern is a generic path: ``[]`` is
# any list index, ``*`` any single map key. Anything not matched here is
# "our defect". tests/test_kcc_compat.py checks that every entry is used and
# that every path it covers exists in KCC's own CRD for the Kind. KCC's older
# names that the kind configs declare as ``aliases:`` (routingMode,
# lifecycleRule, numNodes...) are accepted and need no entry.
LEGACY: dict[tuple[str, str, ErrorKind], str] = {
    ("MonitoringNotificationChannel", "spec.sensitiveLabels", ErrorKind.UNKNOWN_FIELD): (
        "KCC's sensitiveLabels (authToken/password/serviceKey read from a Kubernetes Secret) "
        "has no API field: the API takes these values in labels (ours: spec.labels)"
    ),
}


@cache
def _pattern(p: str) -> re.Pattern[str]:
    return re.compile("^" + re.escape(p).replace(r"\*", r"[^.\[\]]+") + "$")


def generic(path: str) -> str:
    """``spec.conditions[0].x`` -> ``spec.conditions[].x``."""
    return re.sub(r"\[\d+\]", "[]", path)


def legacy_key(kind: str, path: str, error: ErrorKind) -> tuple[str, str, ErrorKind] | None:
    """The LEGACY entry covering a reason, or None (our defect)."""
    g = generic(path)
    hits = [k for k in LEGACY if k[0] == kind and k[2] == error and _pattern(k[1]).match(g)]
    if len(hits) > 1:
        raise ValueError(f"{kind} {path} {error}: several LEGACY entries match: {hits}")
    return hits[0] if hits else None


# --- rows ----------------------------------------------------------------------------------

SOURCES = ("CRD", "model")


@dataclass(frozen=True, order=True)
class Reason:
    """One reason a fixture document is rejected, deduplicated over CRD and model."""

    path: str  # JSON path, e.g. spec.conditions[0].conditionSql.rowCountTest.threshold
    error: ErrorKind
    message: str
    value: str | None  # compact JSON of the offending value; None when it is missing
    sources: tuple[str, ...]  # which of SOURCES rejected it
    legacy: str | None  # the LEGACY explanation; None: our defect

    @property
    def is_defect(self) -> bool:
        return self.legacy is None

    @property
    def classification(self) -> str:
        return OUR_DEFECT if self.legacy is None else LEGACY_SHAPE


@dataclass(frozen=True, order=True)
class Row:
    """One fixture document of one of our Kinds."""

    fixture: str  # path relative to fixtures/, with #<n> when the file has several documents
    kind: str
    reasons: tuple[Reason, ...]

    @property
    def accepted(self) -> bool:
        return not self.reasons

    @property
    def defects(self) -> tuple[Reason, ...]:
        return tuple(r for r in self.reasons if r.is_defect)

    @property
    def status(self) -> str:
        if self.accepted:
            return "accepted"
        return "rejected: our defect" if self.defects else "rejected: legacy only"


# --- fixtures on disk ----------------------------------------------------------------------


def substitute(text: str) -> str:
    for k, v in PLACEHOLDERS.items():
        text = text.replace(k, v)
    return text


@dataclass(frozen=True)
class FixtureDoc:
    fixture: str
    obj: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.obj.get("kind"))


def fixture_docs(fixtures: Path, kinds: frozenset[str]) -> list[FixtureDoc]:
    """Every document of one of ``kinds`` in a create/update file, in path order."""
    files = sorted(
        (p.relative_to(fixtures).as_posix(), p)
        for p in fixtures.rglob("*.yaml")
        if p.name in FIXTURE_FILES
    )
    out: list[FixtureDoc] = []
    for rel, path in files:
        docs = [d for d in yaml.safe_load_all(substitute(path.read_text(encoding="utf-8"))) if d]
        for i, d in enumerate(docs, start=1):
            if isinstance(d, dict) and d.get("kind") in kinds:
                out.append(FixtureDoc(rel if len(docs) == 1 else f"{rel}#{i}", d))
    return out


# --- CRD schemas as jsonschema -------------------------------------------------------------


@cache
def crd_schemas(crd_dir: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """(apiVersion, Kind) -> openAPIV3Schema for every CRD version in a directory, read
    once per process (callers share the result: copy before changing it)."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for path in sorted(crd_dir.glob("*.yaml")):
        # libyaml: a thousand generated CRDs are ~40 MB of YAML.
        for doc in yaml.load_all(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader):
            if not doc or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc["spec"]
            for v in spec["versions"]:
                key = (f"{spec['group']}/{v['name']}", str(spec["names"]["kind"]))
                out[key] = v["schema"]["openAPIV3Schema"]
    return out


def validator(schema: Mapping[str, Any]) -> Any:
    return jsonschema.Draft202012Validator(strict_schema(dict(schema)))


# --- raw errors -> reasons -----------------------------------------------------------------

Loc = tuple[str | int, ...]


@dataclass(frozen=True)
class _Raw:
    loc: Loc
    error: ErrorKind
    message: str
    source: str


def _json_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def crd_errors(v: Any, obj: Mapping[str, Any]) -> Iterator[_Raw]:
    for e in v.iter_errors(obj):
        base: Loc = tuple(e.absolute_path)
        name = str(e.validator)
        if name == "additionalProperties" and isinstance(e.instance, Mapping):
            allowed = set(e.schema.get("properties") or {})
            for k in sorted(set(e.instance) - allowed):
                yield _Raw((*base, k), ErrorKind.UNKNOWN_FIELD, "unknown field", "CRD")
        elif name == "required" and isinstance(e.instance, Mapping):
            for k in e.validator_value:
                if k not in e.instance:
                    yield _Raw((*base, k), ErrorKind.REQUIRED, "required field is missing", "CRD")
        elif name == "type":
            want = e.validator_value
            want_s = " or ".join(want) if isinstance(want, list) else str(want)
            got = _json_type(e.instance)
            yield _Raw(base, ErrorKind.TYPE, f"got {got}, want {want_s}", "CRD")
        elif name == "enum":
            yield _Raw(
                base, ErrorKind.ENUM, f"not one of {len(e.validator_value)} allowed values", "CRD"
            )
        elif name == "pattern":
            yield _Raw(base, ErrorKind.PATTERN, f"does not match {e.validator_value}", "CRD")
        elif name in ("maxLength", "minLength", "maxItems", "minItems"):
            yield _Raw(base, ErrorKind.LENGTH, f"{name} {e.validator_value}", "CRD")
        else:
            yield _Raw(base, ErrorKind.OTHER, e.message, "CRD")


_PYDANTIC_KINDS = {
    "extra_forbidden": ErrorKind.UNKNOWN_FIELD,
    "missing": ErrorKind.REQUIRED,
    "enum": ErrorKind.ENUM,
    "literal_error": ErrorKind.ENUM,
    "string_pattern_mismatch": ErrorKind.PATTERN,
    "string_too_long": ErrorKind.LENGTH,
    "string_too_short": ErrorKind.LENGTH,
    "too_long": ErrorKind.LENGTH,
    "too_short": ErrorKind.LENGTH,
}


_MISSING = object()


def _step(node: Any, part: str | int) -> Any:
    """``node[part]`` in the data, or _MISSING."""
    if isinstance(node, Mapping):
        return node.get(part, _MISSING)
    if isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
        return node[part]
    return _MISSING


def _data_loc(obj: Any, loc: Sequence[str | int]) -> Loc:
    """A pydantic loc as a path in the data: union-member tags are dropped."""
    out: list[str | int] = []
    node = obj
    for i, part in enumerate(loc):
        nxt = _step(node, part)
        if nxt is _MISSING and i < len(loc) - 1:
            continue  # e.g. "function-after[...]" or a union member's name
        node = nxt  # the last part may be missing: a required field
        out.append(part)
    return tuple(out)


def model_errors(model: type[BaseModel], obj: Mapping[str, Any]) -> Iterator[_Raw]:
    try:
        model.model_validate(obj)
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            t = str(err["type"])
            kind = _PYDANTIC_KINDS.get(t)
            if kind is None:
                kind = ErrorKind.TYPE if t.endswith(("_type", "_parsing")) else ErrorKind.OTHER
            msg = {
                ErrorKind.UNKNOWN_FIELD: "unknown field",
                ErrorKind.REQUIRED: "required field is missing",
            }.get(kind, str(err["msg"]))
            yield _Raw(_data_loc(obj, err["loc"]), kind, msg, "model")


def value_at(obj: Any, loc: Loc) -> Any:
    node = obj
    for part in loc:
        node = _step(node, part)
        if node is _MISSING:
            break
    return node


def compact(v: Any, limit: int = 60) -> str:
    s = json.dumps(v, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return s if len(s) <= limit else s[: limit - 1] + "…"


def reasons_for(kind: str, obj: Mapping[str, Any], raws: list[_Raw]) -> tuple[Reason, ...]:
    grouped: dict[tuple[Loc, ErrorKind], dict[str, str]] = defaultdict(dict)
    for r in raws:
        grouped[(r.loc, r.error)].setdefault(r.source, r.message)
    out: list[Reason] = []
    for (loc, error), by_source in grouped.items():
        path = format_path(loc)
        messages = list(dict.fromkeys(by_source[s] for s in SOURCES if s in by_source))
        if len(messages) == 1:
            message = messages[0]
        else:
            message = "; ".join(f"{s}: {by_source[s]}" for s in SOURCES if s in by_source)
        v = value_at(obj, loc)
        key = legacy_key(kind, path, error)
        out.append(
            Reason(
                path=path,
                error=error,
                message=message,
                value=None if v is _MISSING else compact(v),
                sources=tuple(s for s in SOURCES if s in by_source),
                legacy=None if key is None else LEGACY[key],
            )
        )
    return tuple(sorted(out))


# --- the table -----------------------------------------------------------------------------


def kind_models() -> dict[str, type[BaseModel]]:
    """Kind -> its generated ``<Kind>`` pydantic model."""
    out: dict[str, type[BaseModel]] = {}
    for kind, mod in types_modules().items():
        cls = getattr(mod, kind)
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)):
            raise TypeError(f"{mod.__name__}.{kind} is not a pydantic model")
        out[kind] = cls
    return out


def build_table(repo: Path, kcc: Path) -> list[Row]:
    """One row per fixture document of our Kinds, sorted by fixture path."""
    models = kind_models()
    schemas = {kind: s for (_, kind), s in crd_schemas(repo / "generated" / "crds").items()}
    if set(schemas) != set(models):
        raise ValueError(
            f"CRDs and models disagree on the Kinds: {sorted(set(schemas) ^ set(models))}"
        )
    validators = {kind: validator(s) for kind, s in schemas.items()}
    rows: list[Row] = []
    for doc in fixture_docs(kcc / "fixtures", frozenset(models)):
        raws = [
            *crd_errors(validators[doc.kind], doc.obj),
            *model_errors(models[doc.kind], doc.obj),
        ]
        rows.append(Row(doc.fixture, doc.kind, reasons_for(doc.kind, doc.obj, raws)))
    return sorted(rows)


def kcc_crd_errors(kcc: Path, obj: Mapping[str, Any]) -> list[str]:
    """The same strict validation against KCC's own CRD (a check on this tool)."""
    schemas = crd_schemas(kcc / "crds")
    key = (str(obj.get("apiVersion")), str(obj.get("kind")))
    if key not in schemas:
        return [f"no KCC CRD for {key}"]
    return [
        f"{format_path(tuple(e.absolute_path))}: {e.message}"
        for e in validator(schemas[key]).iter_errors(obj)
    ]


# --- markdown -------------------------------------------------------------------------------


def _code(s: str) -> str:
    s = s.replace("\n", " ")
    return f"`` {s} ``" if "`" in s else f"`{s}`"


def _cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def _reason_text(r: Reason) -> str:
    where = _code(r.path)
    value = f" = {_code(r.value)}" if r.value is not None else ""
    head = f"{where}{value}: {r.error} ({r.message}) [{'+'.join(r.sources)}]"
    if r.legacy is None:
        return f"**{OUR_DEFECT}**: {head}"
    return f"{LEGACY_SHAPE}: {head}: {r.legacy}"


def render_markdown(rows: Sequence[Row]) -> str:
    rows = sorted(rows)
    accepted = sum(r.accepted for r in rows)
    legacy_only = sum(not r.accepted and not r.defects for r in rows)
    with_defects = sum(bool(r.defects) for r in rows)
    n_legacy = sum(1 for row in rows for r in row.reasons if not r.is_defect)
    n_defects = sum(len(row.defects) for row in rows)

    out: list[str] = [
        "# Config Connector fixtures against our CRDs and models",
        "",
        "<!-- Generated by `python -m tools.kcc_compat`; do not edit. "
        "tests/test_kcc_compat.py fails when this file is stale. -->",
        "",
        "Every document of one of our Kinds in Config Connector's test fixtures "
        "(`fixtures/**/{create,update}.yaml`, placeholders substituted) is validated "
        "against our CRD's openAPIV3Schema with jsonschema (Draft 2020-12; unknown fields "
        "rejected as under strict field validation; `x-kubernetes-preserve-unknown-fields` "
        "nodes accept anything; CEL rules are not evaluated) and parsed with our `<Kind>` "
        "pydantic model. Errors of both are deduplicated on (JSON path, error kind); the "
        "source of each is shown as `[CRD]`, `[model]` or `[CRD+model]`. A reason is a "
        f"*{LEGACY_SHAPE}* when `LEGACY` in tools/kcc_compat.py explains it, else "
        f"*{OUR_DEFECT}*.",
        "",
        "## Totals",
        "",
        "| | Fixture documents |",
        "|---|---:|",
        f"| Total | {len(rows)} |",
        f"| Accepted | {accepted} |",
        f"| Rejected, {LEGACY_SHAPE}s only | {legacy_only} |",
        f"| Rejected, with {OUR_DEFECT}s | {with_defects} |",
        "",
        f"Reasons: {n_legacy} {LEGACY_SHAPE}, {n_defects} {OUR_DEFECT}.",
        "",
    ]

    defects: dict[tuple[str, str, ErrorKind], list[tuple[str, Reason]]] = defaultdict(list)
    for row in rows:
        for r in row.defects:
            defects[(row.kind, generic(r.path), r.error)].append((row.fixture, r))
    out += ["## Our defects", ""]
    if not defects:
        out += ["None.", ""]
    else:
        out += [
            "| Kind | Path | Error | Message | Values | Fixture documents |",
            "|---|---|---|---|---|---:|",
        ]
        for (kind, path, error), hits in sorted(defects.items()):
            values = ", ".join(
                _code(v) for v in sorted({r.value for _, r in hits if r.value is not None})
            )
            messages = "; ".join(sorted({r.message for _, r in hits}))
            out.append(
                f"| {kind} | {_code(path)} | {error} | {_cell(messages)} | {_cell(values)} | {len(hits)} |"
            )
        out.append("")

    used: Counter[tuple[str, str, ErrorKind]] = Counter()
    for row in rows:
        for r in row.reasons:
            key = legacy_key(row.kind, r.path, r.error)
            if key is not None:
                used[key] += 1
    out += [
        "## Legacy Config Connector shapes (the `LEGACY` table)",
        "",
        "| Kind | Path pattern | Error | Explanation | Reasons |",
        "|---|---|---|---|---:|",
    ]
    for (kind, pattern, error), why in sorted(LEGACY.items()):
        out.append(
            f"| {kind} | {_code(pattern)} | {error} | {_cell(why)} | {used[(kind, pattern, error)]} |"
        )
    out.append("")

    out += [
        "## Fixture documents",
        "",
        "| Fixture | Kind | Result | Reasons |",
        "|---|---|---|---|",
    ]
    for row in rows:
        reasons = "<br>".join(_cell(_reason_text(r)) for r in row.reasons) or "—"
        out.append(f"| {_code(row.fixture)} | {row.kind} | {row.status} | {reasons} |")
    out.append("")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m tools.kcc_compat", description=(__doc__ or "").split("\n")[0]
    )
    ap.add_argument(
        "--kcc", type=Path, default=DEFAULT_KCC, help="KCC compat dir (fixtures/, crds/)"
    )
    ap.add_argument("--check", action="store_true", help=f"exit 1 if {DOC_PATH} is stale")
    args = ap.parse_args(argv)
    if not (args.kcc / "fixtures").is_dir():
        print(f"no fixtures at {args.kcc / 'fixtures'}", file=sys.stderr)
        return 2
    rows = build_table(REPO, args.kcc)
    text = render_markdown(rows)
    code = write_or_check(REPO / DOC_PATH, text, args.check, "python -m tools.kcc_compat")
    if args.check:
        return code
    defects = sum(len(r.defects) for r in rows)
    print(f"wrote {DOC_PATH}: {len(rows)} fixture documents, {defects} {OUR_DEFECT} reasons")
    return 0


if __name__ == "__main__":
    sys.exit(main())
