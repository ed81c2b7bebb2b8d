"""``kccctl``: operate on generated Kinds locally.

This slice lists the Kinds whose generated modules are importable; later
issues add reference normalisation, apply and delete.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys


def discover_kinds() -> dict[str, str]:
    """Kind name -> module, found by importing every generated ``*_types`` module."""
    import generated

    found: dict[str, str] = {}
    for info in pkgutil.walk_packages(generated.__path__, "generated."):
        if not info.name.endswith("_types"):
            continue
        mod = importlib.import_module(info.name)
        kind = info.name.rsplit(".", 1)[-1].removesuffix("_types")
        for obj in vars(mod).values():
            name = getattr(obj, "KIND", None) if isinstance(obj, type) else None
            if name and obj.__module__ == mod.__name__ and str(name).lower() == kind:
                found[str(name)] = info.name
    return dict(sorted(found.items()))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="kccctl", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("kinds", help="list the Kinds this installation can reconcile")
    args = p.parse_args(argv)
    if args.cmd == "kinds":
        for kind, module in discover_kinds().items():
            print(f"{kind}\t{module}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
