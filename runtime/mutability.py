"""Per-field mutability tables, registered by generated ``<kind>_mutability`` modules.

The runtime reads them for the immutability check, the diff (only readable
fields can be compared) and externally managed fields.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FieldMutability:
    path: str
    api_path: str | None
    type: str
    behaviours: frozenset[str]
    identity: bool
    updatable: bool
    readable: bool
    provenance: dict[str, Any]

    @property
    def immutable(self) -> bool:
        return "immutable" in self.behaviours or self.identity


_TABLES: dict[str, dict[str, FieldMutability]] = {}


def register_mutability(kind: str, table: dict[str, dict[str, Any]]) -> None:
    _TABLES[kind] = {
        path: FieldMutability(
            path=path,
            api_path=row["api_path"],
            type=row["type"],
            behaviours=frozenset(row["behaviours"]),
            identity=row["identity"],
            updatable=row["updatable"],
            readable=row["readable"],
            provenance=row["provenance"],
        )
        for path, row in table.items()
    }


def mutability_of(kind: str) -> dict[str, FieldMutability]:
    if kind not in _TABLES:
        import importlib

        from kccgen.runtime.registry import module_for

        importlib.import_module(module_for(kind, "_mutability"))
    return _TABLES[kind]


@functools.cache
def by_api_path(kind: str) -> dict[str, FieldMutability]:
    """Spec rows keyed by API path without list steps (``labels``, ``routingConfig.routingMode``)."""
    return {r.api_path.replace("[]", ""): r for r in mutability_of(kind).values() if r.api_path and r.path.startswith("spec.")}
