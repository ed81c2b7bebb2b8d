"""Write an ``auto: true`` kind file for every pinned API that has none.

``python -m tools.auto_kind_files [SPECS]`` (default ``specs``): one
``specs/kinds/<api>.yaml`` (``<api>.<version>.yaml`` for families such as
``admin.directory_v1``) holding ``api:``, ``auto: true`` and, when an API has
several GA documents pinned, ``version:``; an API whose kind file already
exists is left alone (add ``auto: true`` there by hand, after review). This is
how issue 11's 1,045-Kind tree was made. Each new file gets the ``kindPrefix``
today's document gives, recorded once (kccgen.generator.prefixes);
``--record-prefixes`` records it in every auto file that has none.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml


def _record_prefixes(specs: Path) -> int:
    from kccgen.generator.prefixes import record
    from kccgen.generator.spec.loader import load_specs

    written = record(load_specs(specs), specs)
    print(f"recorded kindPrefix in {len(written)} kind files under {specs / 'kinds'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    only_prefixes = "--record-prefixes" in args
    args = [a for a in args if a != "--record-prefixes"]
    specs = Path((args or ["specs"])[0])
    if only_prefixes:
        return _record_prefixes(specs)
    docs = json.loads((specs / "discovery.lock.json").read_text(encoding="utf-8"))["documents"]
    versions: dict[str, list[str]] = {}
    for key in sorted(docs):
        name, _, ver = key.partition(".")
        versions.setdefault(name, []).append(ver)
    covered = {str((yaml.safe_load(p.read_text(encoding="utf-8")) or {}).get("api")) for p in (specs / "kinds").glob("*.yaml")}
    written = 0
    for name, vers in sorted(versions.items()):
        if name in covered:
            continue
        for v in vers:
            path = specs / "kinds" / (f"{name}.yaml" if len(vers) == 1 else f"{name}.{v}.yaml")
            path.write_text(f"api: {name}\nauto: true\n" + (f"version: {v}\n" if len(vers) > 1 else ""), encoding="utf-8")
            written += 1
    print(f"wrote {written} auto kind files under {specs / 'kinds'}")
    return _record_prefixes(specs) if written else 0


if __name__ == "__main__":
    sys.exit(main())
