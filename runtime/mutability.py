"""Per-field rules, registered by generated ``<kind>_mutability`` modules.

The runtime reads them for the immutability check, the diff (only readable
fields can be compared; types decide how values compare) and externally
managed fields. The records are kccgen.contract.FieldRule; a module writes
them as rows that kccgen.contract.field_rules expands.
"""

from __future__ import annotations

import functools

from kccgen.contract import FieldRule, TypeKind

_TABLES: dict[str, dict[str, FieldRule]] = {}


def register_mutability(kind: str, rules: tuple[FieldRule, ...]) -> None:
    _TABLES[kind] = {r.path: r for r in rules}


def mutability_of(kind: str) -> dict[str, FieldRule]:
    if kind not in _TABLES:
        import importlib

        from kccgen.runtime.registry import module_for

        importlib.import_module(module_for(kind, "_mutability"))
    return _TABLES[kind]


@functools.cache
def by_api_path(kind: str) -> dict[str, FieldRule]:
    """Spec rows keyed by API path without list steps (``labels``, ``routingConfig.routingMode``)."""
    return {r.api_path.replace("[]", ""): r for r in mutability_of(kind).values() if r.api_path and r.path.startswith("spec.")}


def is_map(rule: FieldRule | None) -> bool:
    return rule is not None and rule.type.kind is TypeKind.MAP
