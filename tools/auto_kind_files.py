"""Write an ``auto: true`` kind file for every pinned API that has none.

``python -m tools.auto_kind_files [SPECS]`` (default ``specs``): the maintainer's
hand command for what ``kccgen bump`` does after pinning new documents
(kccgen.generator.autokinds). An API whose kind file already exists is left
alone (add ``auto: true`` there by hand, after review). Each new file gets the
``kindPrefix`` today's document gives, recorded once; ``--record-prefixes``
records it in every auto file that has none.
"""

from __future__ import annotations

import sys
from pathlib import Path

from kccgen.generator.autokinds import record_prefixes, write_auto_kind_files


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    only_prefixes = "--record-prefixes" in args
    args = [a for a in args if a != "--record-prefixes"]
    specs = Path((args or ["specs"])[0])
    if not only_prefixes:
        written = write_auto_kind_files(specs)
        print(f"wrote {len(written)} auto kind files under {specs / 'kinds'}")
        if not written:
            return 0
    print(f"recorded kindPrefix in {len(record_prefixes(specs))} kind files under {specs / 'kinds'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
