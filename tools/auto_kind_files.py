"""Write an ``auto: true`` kind file for every pinned API that has none.

``python -m tools.auto_kind_files [SPECS]`` (default ``specs``): one
``specs/kinds/<api>.yaml`` (``<api>.<version>.yaml`` for families such as
``admin.directory_v1``) holding ``api:``, ``auto: true`` and, when an API has
several GA documents pinned, ``version:``; an API whose kind file already
exists is left alone (add ``auto: true`` there by hand, after review). This is
how issue 11's 1,045-Kind tree was made.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml


def main(argv: list[str] | None = None) -> int:
    specs = Path((argv or sys.argv[1:] or ["specs"])[0])
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
