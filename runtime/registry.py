"""Find generated modules by Kind name without importing the generator.

``generated/kinds.json`` (written by ``kccgen generate``) lists every generated
Kind with its module stem, so listing Kinds or loading one Kind imports only
that Kind's modules: at a thousand Kinds importing every ``*_types`` module
takes most of a minute.
"""

from __future__ import annotations

import difflib
import importlib
import json
import pkgutil
from collections.abc import Iterator, Mapping
from functools import cache
from importlib import resources
from types import ModuleType
from typing import TypedDict

_LOADED = False


class IndexEntry(TypedDict):
    apiVersion: str  # the storage version's
    servedVersions: list[str]  # every version the CRD serves (Config Connector's names too)
    crd: str  # path under generated/
    module: str  # module stem under kccgen.generated: pubsub.v1.pubsubtopic


@cache
def kind_index() -> dict[str, IndexEntry]:
    """Kind -> where its generated files are, sorted by Kind."""
    text = resources.files("kccgen.generated").joinpath("kinds.json").read_text(encoding="utf-8")
    data: dict[str, IndexEntry] = json.loads(text)
    return dict(sorted(data.items()))


def unknown_kind(kind: str, known: list[str] | tuple[str, ...]) -> str:
    """The message for a Kind nobody generated: the closest names, not a thousand."""
    by_lower = {k.lower(): k for k in known}
    close = difflib.get_close_matches(kind.lower(), list(by_lower), n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(repr(by_lower[c]) for c in close)}?" if close else ""
    return f"unknown Kind {kind!r}{hint} ({len(known)} Kinds known; `kccctl kinds` lists them)"


def resolve_kind(text: str) -> str:
    """The Kind kubectl would take ``text`` for: the Kind, lowercase, plural
    (``pubsubtopics``, ``-ies``/``-es`` too), the short name (``gcppubsubtopic``)
    or ``plural.group``; KeyError otherwise."""
    index = kind_index()
    if text in index:
        return text
    name, _, group = text.partition(".")
    forms: set[str] = set()
    for lower in {name.lower(), name.lower().removeprefix("gcp")}:  # gcppubsubtopic: the CRDs' short names
        forms |= {lower, lower.removesuffix("s"), lower.removesuffix("es"), lower.removesuffix("ies") + "y" if lower.endswith("ies") else lower}
    hits = [k for k in index if k.lower() in forms and (not group or index[k]["apiVersion"].split("/", 1)[0] == group)]
    if len(hits) == 1:
        return hits[0]
    raise KeyError(unknown_kind(text, tuple(index)))


def resource_of(kind: str) -> tuple[str, str, str]:
    """(group, storage version, plural) of a generated Kind: what the Kubernetes API
    addresses it by. The CRD file is named ``<plural>.<group>.yaml``, as the CRD is."""
    entry = kind_index().get(kind)
    if entry is None:
        raise KeyError(unknown_kind(kind, tuple(kind_index())))
    group, _, version = entry["apiVersion"].partition("/")
    return group, version, entry["crd"].rsplit("/", 1)[-1].removesuffix(f".{group}.yaml")


def module_for(kind: str, suffix: str) -> str:
    """``kccgen.generated.<svc>.<ver>.<kind><suffix>`` for a generated Kind."""
    entry = kind_index().get(kind)
    if entry is None:
        raise KeyError(unknown_kind(kind, tuple(kind_index())))
    return f"kccgen.generated.{entry['module']}{suffix}"


class _KindModules(Mapping[str, ModuleType]):
    """Kind -> one of its generated modules, imported on first access."""

    def __init__(self, suffix: str) -> None:
        self._suffix = suffix

    def __getitem__(self, kind: str) -> ModuleType:
        return importlib.import_module(module_for(kind, self._suffix))

    def __contains__(self, kind: object) -> bool:
        return kind in kind_index()

    def __iter__(self) -> Iterator[str]:
        return iter(kind_index())

    def __len__(self) -> int:
        return len(kind_index())


def types_modules() -> Mapping[str, ModuleType]:
    """Kind name -> its generated ``*_types`` module (imported when looked up)."""
    return _KindModules("_types")


def load_reference_module(kind: str) -> bool:
    """Import one generated Kind's ``*_reference`` module (it registers the Kind's
    identity and Ref type); False when the Kind is not generated."""
    if kind not in kind_index():
        return False
    importlib.import_module(module_for(kind, "_reference"))
    return True


def load_reference_modules() -> None:
    """Import every ``*_reference`` module once (generated and external Kinds); each registers its Kind."""
    global _LOADED
    if _LOADED:
        return
    import kccgen.generated

    for info in pkgutil.walk_packages(kccgen.generated.__path__, "kccgen.generated."):
        if info.name.endswith("_reference"):
            importlib.import_module(info.name)
    _LOADED = True
