"""Kind prefixes are recorded, not recomputed: a rebrand never renames Kinds.

An auto kind file's Kinds are named ``<prefix><Resource>``, and the prefix was
computed from the Discovery document's canonical name and title on every run.
When Google renamed "Vertex AI API" to "Agent Platform API", 47 Kinds became
``AIPlatform*`` instead of ``Aiplatform*``. So the prefix is data: written
into the kind file (``kindPrefix:``) the first time, by
``python -m tools.auto_kind_files`` (which makes the file) or its
``--record-prefixes``, and kept whatever the title says later. generate and
check refuse an auto file without one, naming the value to record.
"""

from __future__ import annotations

import re
from pathlib import Path

from kccgen.discovery.errors import SpecError
from kccgen.generator.ir.build import doc_key, doc_keys
from kccgen.generator.naming import service_prefix
from kccgen.generator.spec.loader import Specs

_AUTO_LINE = re.compile(r"^auto:.*$", re.M)


def unrecorded(specs: Specs) -> dict[str, str]:
    """Auto kind files without ``kindPrefix``: file -> the prefix today's document gives."""
    out: dict[str, str] = {}
    for file, kf in specs.kinds:
        if not kf.auto or kf.kind_prefix is not None:
            continue
        try:
            keys = doc_keys(specs, file, kf)
            if kf.version is not None:
                key = doc_key(specs, file, kf)
                keys = [key, *(k for k in keys if k != key)]
        except SpecError:
            continue  # the build reports the missing document
        if keys and keys[0] in specs.discovery:
            primary = specs.discovery[keys[0]]
            out[file] = service_prefix(kf.service_name, primary.canonical_name, primary.title)
    return out


def problems(specs: Specs) -> list[str]:
    return [
        f"{file}#/kindPrefix: not recorded; its Kinds would be renamed whenever the Discovery title changes. "
        f"Record today's prefix: `kindPrefix: {prefix}` (python -m tools.auto_kind_files --record-prefixes writes every one)"
        for file, prefix in sorted(unrecorded(specs).items())
    ]


def record(specs: Specs, root: Path) -> list[str]:
    """Write each missing ``kindPrefix`` into its file (after ``auto:``, comments
    kept); the files written."""
    written = []
    for file, prefix in sorted(unrecorded(specs).items()):
        path = root / "kinds" / Path(file).name
        text = path.read_text(encoding="utf-8")
        line = f"kindPrefix: {prefix}  # recorded once: a later Discovery title never renames the Kinds"
        m = _AUTO_LINE.search(text)
        new = f"{text[: m.end()]}\n{line}{text[m.end() :]}" if m else f"{text.rstrip()}\n{line}\n"
        path.write_text(new, encoding="utf-8")
        written.append(str(path))
    return written
