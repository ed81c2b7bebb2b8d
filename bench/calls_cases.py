"""The objects the call counts run on: calls_cases.yaml, one case per curated Kind.

The Kinds come from the registry of generated code, not from the data file:
a generated Kind with no case is an error naming it, never a silently missing
row, and so is a case for a Kind that is not generated.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from kccgen.discovery.errors import SpecError, did_you_mean, json_path
from kccgen.generator.spec.kinds import load_strict
from kccgen.runtime.registry import kind_index, types_modules

CASES_FILE = Path(__file__).with_name("calls_cases.yaml")
NAMESPACE = "default"


def curated_kinds() -> list[str]:
    """The generated Kinds a kind config lists under ``kinds:`` (hand-reviewed; the
    derived Kinds of ``auto`` files are measured by ``kccctl verify`` instead)."""
    from kccgen import data_dir
    from kccgen.generator.spec.loader import load_specs

    listed = {k.kind for _, f in load_specs(data_dir("specs")).kinds for k in f.kinds}
    return [k for k in kind_index() if k in listed]


@cache
def _model(kind: str) -> Any:
    """A Kind's generated model class (its module imported on first use)."""
    return getattr(types_modules()[kind], kind)


def manifest(
    kind: str, name: str, spec: dict[str, Any], annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": NAMESPACE, "generation": 1}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {
        "apiVersion": _model(kind).API_VERSION,
        "kind": kind,
        "metadata": meta,
        "spec": copy.deepcopy(spec),
    }


@dataclass(frozen=True)
class Case:
    """One Kind: a realistic object (shaped like Config Connector's test
    fixtures), the objects it refers to, and the changes the scenarios make.

    ``update``: a mutable field (dotted spec path) and its new value, or None
    when the Kind has no update method. ``drift``: a field that makes a
    verify-only object differ from the live resource (may be immutable:
    force-acquire never writes), or None when no readable field can differ.
    """

    kind: str
    name: str
    spec: dict[str, Any]
    deps: tuple[dict[str, Any], ...] = ()
    update: tuple[str, Any] | None = None
    drift: tuple[str, Any] | None = None

    def obj(self) -> dict[str, Any]:
        return manifest(self.kind, self.name, self.spec)


def set_path(spec: dict[str, Any], dotted: str, value: Any) -> None:
    node = spec
    *parents, last = dotted.split(".")
    for p in parents:
        node = node.setdefault(p, {})
    node[last] = copy.deepcopy(value)


# --- the data file -----------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Change(_Strict):
    path: str
    value: Any


class _Dependency(_Strict):
    kind: str
    spec: dict[str, Any]


class _CaseEntry(_Strict):
    name: str
    spec: dict[str, Any]
    deps: tuple[str, ...] = ()
    update: _Change | None = None
    drift: _Change | None = None


class _CasesFile(_Strict):
    dependencies: dict[str, _Dependency] = {}
    kinds: dict[str, _CaseEntry]


def _change(c: _Change | None) -> tuple[str, Any] | None:
    return None if c is None else (c.path, c.value)


def load_cases(path: Path = CASES_FILE, kinds: list[str] | None = None) -> tuple[Case, ...]:
    """One case per Kind of ``kinds`` (default: every curated Kind), in that order."""
    data = load_strict(_CasesFile, path, None)
    file = str(path)
    kinds = curated_kinds() if kinds is None else kinds

    def check_kind(kind: str, *where: object) -> None:
        if kind not in kinds:
            msg = f"unknown Kind {kind!r}: not a generated Kind{did_you_mean(kind, kinds)}"
            raise SpecError(file, json_path(*where), msg)

    for name, dep in data.dependencies.items():
        check_kind(dep.kind, "dependencies", name, "kind")
    for kind in data.kinds:
        check_kind(kind, "kinds", kind)
    cases = []
    for kind in kinds:
        entry = data.kinds.get(kind)
        if entry is None:
            msg = f"no scenario data for the generated Kind {kind!r}: add a case for it"
            raise SpecError(file, json_path("kinds"), msg)
        deps = []
        for i, name in enumerate(entry.deps):
            if name not in data.dependencies:
                msg = f"unknown dependency {name!r}{did_you_mean(name, data.dependencies)}"
                raise SpecError(file, json_path("kinds", kind, "deps", i), msg)
            deps.append(manifest(data.dependencies[name].kind, name, data.dependencies[name].spec))
        cases.append(
            Case(
                kind,
                entry.name,
                entry.spec,
                tuple(deps),
                _change(entry.update),
                _change(entry.drift),
            )
        )
    return tuple(cases)


def validate_cases(cases: tuple[Case, ...]) -> None:
    """Every object (and dependency) parses with its Kind's generated model."""
    for c in cases:
        for o in (c.obj(), *c.deps):
            _model(o["kind"]).model_validate(o)


CASES = load_cases()
