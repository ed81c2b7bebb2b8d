"""Per-Kind test facts, found by walking the registry of generated Kinds.

Every generated Kind has a folder ``tests/kinds/<Kind>/`` with hand-written facts
(an independent oracle: written from the API's documentation and Config
Connector's fixtures, never from our output):

* ``scenario.yaml`` -- the object the scenario tests reconcile (``metadata.name``
  and ``spec``; apiVersion and kind come from the registry; the objects it refers
  to by name are its parents), the REST prefix of its URLs, the exact calls and
  request of its create, and its one-field updates with the writes they cost;
* ``shape.yaml`` -- the method shapes (``kccgen.contract`` names) and identity
  template docs/design.md §3 expects;
* ``refs.yaml`` -- every reference field ``kccgen refs`` prints for the Kind;
* ``mockgcp.yaml`` -- its lifecycle as Discovery-client calls on mockgcp
  (schema and driver: tests/support/mockgcp_cases.py).

Tests never hold a list of Kind names or a Kind count: they parametrize over
``GENERATED_KINDS`` (the registry) and read facts with ``facts(kind)``. A folder
for a Kind that is not generated, a generated Kind without a folder, or an
unknown or duplicate key in a fact file is an error naming the file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Iterable
from functools import cache
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from kccgen.generator.emit.policies import KINDS as POLICY_KIND_ROWS
from kccgen.runtime.adapter import adapter_for
from kccgen.runtime.registry import types_modules

KINDS_DIR = Path(__file__).resolve().parents[1] / "kinds"
KCC_CRDS = Path(__file__).resolve().parents[3] / "shared" / "compat" / "kcc" / "crds"
SPECS_KINDS = Path(__file__).resolve().parents[2] / "specs" / "kinds"


class Strict(BaseModel):
    """A fact-file model: unknown keys are errors, values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice in one mapping (it would silently win)."""


def _no_duplicates(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _no_duplicates)


class Metadata(Strict):
    name: str


class Create(Strict):
    """The first reconcile of the object (its parents already exist)."""

    #: the exact calls, normalised by ``call_sequence`` (project ``p``)
    calls: tuple[str, ...]
    #: a regex the object's ``status.externalRef`` matches in full
    externalRef: str
    #: an output-only field the service fills in (None: the API answers none for this resource)
    outputOnly: str | None
    #: top-level fields the create body carries (references resolved): each must equal
    request: dict[str, Any] = {}
    #: the exact create body (the real API's request message), where the test pins it
    body: dict[str, Any] | None = None
    #: query parameters the create carries
    query: dict[str, list[str]] = {}
    #: the service names the resource: externalRef comes from the create's answer
    nameFromAnswer: bool = False


class Update(Strict):
    """One mutable field changed: one GET and one write carrying only the change."""

    id: str
    #: top-level spec fields replaced in the manifest
    spec: dict[str, Any]
    #: exact calls; ``{res}`` is the resource's REST path, ``{op}`` one operation ID
    calls: tuple[str, ...]
    #: body: the write's body is exactly ``body``; query: the mask is the ``updateMask``
    #: query parameter and the body is exactly ``body``; whole: the body holds the changed
    #: top-level fields, objects merged over the live ones, plus any lock token
    style: Literal["body", "query", "whole"]
    body: dict[str, Any]
    mask: str | None = None
    #: a body field the write copies from the live resource (compute's fingerprint)
    lockBody: str | None = None
    #: query parameter -> the live field it is copied from (storage's ifMetagenerationMatch)
    lockQuery: dict[str, str] = {}


class Scenario(Strict):
    """``tests/kinds/<Kind>/scenario.yaml``."""

    metadata: Metadata
    spec: dict[str, Any]
    #: where the resource's REST paths start; the externalRef follows (storage: ``storage/v1/b/``)
    restPrefix: str
    create: Create
    #: empty where the API has no update method, or no field worth one
    updates: tuple[Update, ...]


class Lros(Strict):
    """The ``kccgen.contract.Lro`` member name per method (None: the Kind has no such method)."""

    create: str | None
    update: str | None
    delete: str | None


class Shape(Strict):
    """``tests/kinds/<Kind>/shape.yaml``: the method shapes and identity docs/design.md §3 expects."""

    #: kccgen.contract class names
    create: str
    #: how the ID travels: ``path``, or the parameter / body field that carries it (None: service-assigned)
    idTransport: str | None
    update: str
    #: the mask parameter or body field (None: the update has none)
    mask: str | None
    lro: Lros
    #: the identity template (asset-inventory form, without the service host)
    template: str


class Reference(Strict):
    path: str
    target: str
    form: str


class Refs(Strict):
    """``tests/kinds/<Kind>/refs.yaml``: every reference field of the Kind."""

    references: tuple[Reference, ...]


#: The IAM Kinds (generator/emit/policies.py): in the registry, but no resource of a
#: document, so none of the per-resource tables (IR, identity, mutability from Discovery).
POLICY_KINDS: frozenset[str] = frozenset(k for k, *_ in POLICY_KIND_ROWS)


def _registry_kinds() -> tuple[str, ...]:
    return tuple(sorted(k for k in types_modules() if k not in POLICY_KINDS))


#: The generated resource Kinds, from the registry (the generated ``*_types`` modules), sorted.
GENERATED_KINDS: tuple[str, ...] = _registry_kinds()


def configured_kinds(config: str = "*") -> tuple[str, ...]:
    """The curated Kinds: those a kind config lists under ``kinds:`` (derived Kinds of
    ``auto`` files are not listed). They, and only they, carry hand-kept test facts
    (``tests/kinds/<Kind>/``), KCC conformance fixtures and bench cases; derived
    Kinds are tested from the registry (import, CRD, envtest, lifecycle)."""
    return _configured_kinds(config)


@cache
def _configured_kinds(config: str) -> tuple[str, ...]:
    """The Kinds the kind configs (``specs/kinds/<config>.yaml``, read as plain YAML) ask for."""
    out: list[str] = []
    for path in sorted(SPECS_KINDS.glob(f"{config}.yaml")):
        data = yaml.safe_load(path.read_text()) or {}
        out.extend(str(k["kind"]) for k in data.get("kinds", []) if isinstance(k, dict) and "kind" in k)
    return tuple(sorted(out))


@cache
def kcc_kinds() -> frozenset[str]:
    """The Kinds the Config Connector compat folder holds a CRD (and fixtures) for,
    read as plain YAML: a generated Kind outside it has no KCC conformance data."""
    return frozenset(
        str(yaml.safe_load(p.read_text(encoding="utf-8"))["spec"]["names"]["kind"]) for p in sorted(KCC_CRDS.glob("*.yaml"))
    )


def fixture_kinds() -> tuple[str, ...]:
    """The Kinds that have a folder under ``tests/kinds/``."""
    return tuple(sorted(p.name for p in KINDS_DIR.iterdir() if p.is_dir() and not p.name.startswith("_")))


class FactError(Exception):
    """A fact file is missing or malformed; the message names the file."""


_M = TypeVar("_M", bound=BaseModel)


def load_fact(kind: str, file: str, model: type[_M]) -> _M:
    """``tests/kinds/<kind>/<file>`` read strictly into ``model``; errors name the file."""
    path = KINDS_DIR / kind / file
    if not path.is_file():
        raise FactError(f"{path}: missing: every generated Kind needs its test facts (Kind {kind!r})")
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=UniqueKeyLoader)
        return model.model_validate(data)
    except (yaml.YAMLError, ValidationError) as e:
        raise FactError(f"{path}: {e}") from e


@cache
def facts(kind: str) -> Scenario:
    """``tests/kinds/<kind>/scenario.yaml``."""
    return load_fact(kind, "scenario.yaml", Scenario)


@cache
def refs(kind: str) -> Refs:
    """``tests/kinds/<kind>/refs.yaml``."""
    return load_fact(kind, "refs.yaml", Refs)


@cache
def shape(kind: str) -> Shape:
    """``tests/kinds/<kind>/shape.yaml``."""
    return load_fact(kind, "shape.yaml", Shape)


def api_version(kind: str) -> str:
    """The KRM apiVersion of a generated Kind, from its adapter."""
    return adapter_for(kind).api_version


@cache
def by_name() -> dict[str, str]:
    """metadata.name -> Kind over every fixture manifest (names are unique): the curated
    Kinds, the ones with a folder of facts."""
    out: dict[str, str] = {}
    for kind in fixture_kinds():
        name = facts(kind).metadata.name
        if name in out:
            raise FactError(f"{KINDS_DIR / kind / 'scenario.yaml'}: metadata.name {name!r} also used by {out[name]}")
        out[name] = kind
    return out


def _ref_names(value: Any, key: str = "") -> list[str]:
    if isinstance(value, dict):
        if key.endswith(("Ref", "Refs")) and set(value) == {"name"}:
            return [str(value["name"])]
        return [n for k, v in value.items() for n in _ref_names(v, k)]
    if isinstance(value, list):
        return [n for v in value for n in _ref_names(v, key)]
    return []


def parents(kind: str) -> tuple[str, ...]:
    """The Kinds (in creation order, deepest first) whose fixture objects ``kind``'s manifest
    refers to by name: they must be reconciled first."""
    names = by_name()
    out: list[str] = []
    for ref in _ref_names(facts(kind).spec):
        if ref not in names:
            raise FactError(f"{KINDS_DIR / kind / 'scenario.yaml'}: spec refers to {ref!r}, no fixture has that metadata.name")
        target = names[ref]
        for p in (*parents(target), target):
            if p not in out:
                out.append(p)
    return tuple(out)


#: The curated Kinds that are generated, sorted: the Kinds with test facts.
_CONFIGURED = frozenset(configured_kinds())
CURATED_KINDS: tuple[str, ...] = tuple(k for k in GENERATED_KINDS if k in _CONFIGURED)


#: ``KCCGEN_TEST_EXHAUSTIVE=1`` runs the per-case tests on every derived Kind, not one per shape.
EXHAUSTIVE = os.environ.get("KCCGEN_TEST_EXHAUSTIVE", "") not in ("", "0")

_T = TypeVar("_T")


def representatives(
    items: Iterable[_T],
    kind: Callable[[_T], str],
    signature: Callable[[_T], Hashable],
    keep: Callable[[_T], bool] = lambda _: False,
) -> list[_T]:
    """Every item of a curated Kind, and of the derived Kinds the first item of each
    distinct ``signature`` (the facts the verdict depends on: rule text, schema type, ...);
    ``keep`` names further items always tested (Kinds kccgen only references).

    A thousand derived Kinds repeat a few hundred shapes; testing each shape once keeps
    ``make test`` inside its budget while a new shape still gets its own case. The
    registry-wide checks that are cheap (structure, bounds, imports, the server accepting
    every CRD) still run on every Kind; ``KCCGEN_TEST_EXHAUSTIVE=1`` disables the sampling.
    """
    curated = set(CURATED_KINDS)
    seen: set[Hashable] = set()
    out: list[_T] = []
    for item in items:
        if EXHAUSTIVE or kind(item) in curated or keep(item):
            out.append(item)
            continue
        sig = signature(item)
        if sig not in seen:
            seen.add(sig)
            out.append(item)
    return out


def batched_params(items: Iterable[_T], kind: Callable[[_T], str], ident: Callable[[_T], str]) -> list[Any]:
    """pytest params for a cheap check that must hold on every Kind: one test per
    curated item, and one test that walks all derived items (its message names each
    failing one). Each param is a list of items."""
    import pytest

    curated = set(CURATED_KINDS)
    own: list[Any] = []
    derived: list[_T] = []
    for item in items:
        if kind(item) in curated:
            own.append(pytest.param([item], id=ident(item)))
        else:
            derived.append(item)
    if derived:
        own.append(pytest.param(derived, id="derived"))
    return own
