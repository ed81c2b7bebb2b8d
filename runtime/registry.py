"""Find generated modules by Kind name without importing the generator."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

_LOADED = False


def _walk(suffix: str) -> list[str]:
    import kccgen.generated

    return sorted(
        info.name for info in pkgutil.walk_packages(kccgen.generated.__path__, "kccgen.generated.") if info.name.endswith(suffix)
    )


def load_reference_modules() -> None:
    """Import every ``*_reference`` module once; each registers its Kind."""
    global _LOADED
    if _LOADED:
        return
    for name in _walk("_reference"):
        importlib.import_module(name)
    _LOADED = True


def types_modules() -> dict[str, Any]:
    """Kind name -> its generated ``*_types`` module."""
    found: dict[str, Any] = {}
    for name in _walk("_types"):
        mod = importlib.import_module(name)
        kind = name.rsplit(".", 1)[-1].removesuffix("_types")
        for obj in vars(mod).values():
            k = getattr(obj, "KIND", None) if isinstance(obj, type) else None
            if k and obj.__module__ == mod.__name__ and str(k).lower() == kind:
                found[str(k)] = mod
    return dict(sorted(found.items()))


def module_for(kind: str, suffix: str) -> str:
    """``kccgen.generated.<svc>.<ver>.<kind><suffix>`` for a generated Kind."""
    want = f"{kind.lower()}{suffix}"
    for name in _walk(suffix):
        if name.rsplit(".", 1)[-1] == want:
            return name
    raise KeyError(f"no generated {suffix} module for Kind {kind!r}")
