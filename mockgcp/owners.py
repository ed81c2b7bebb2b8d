"""Which pinned documents serve a URL path that names no host.

A client pointed at mockgcp with a plain endpoint (``kccctl apply --endpoint
URL`` without ``--host-paths``) sends ``v1/projects/p/locations/l/jobs``: the
path the real API has after its host. The vendored APIs are routed first, as
before; a path none of them serves goes to the one pinned document whose
method templates serve it. Several documents can serve the same path (batch,
cloudscheduler and transcoder all have ``v1/projects/*/locations/*/jobs``):
then only the host can tell them apart, and the caller answers with the host
prefixes to use.

Parsing every document takes tens of seconds, so this index reads each one's
method templates from its JSON alone, once, on the first path that needs it.
The answer never depends on which APIs happen to be loaded.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kccgen.mockgcp.routing import template_segments


def _methods(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield from (node.get("methods") or {}).values()
    for sub in (node.get("resources") or {}).values():
        yield from _methods(sub)


def _specificity(segs: tuple[str, ...]) -> int:
    """More literal segments win; a template that swallows the rest ("**") loses a tie."""
    return 2 * sum(1 for s in segs if s not in ("*", "**")) - (1 if segs and segs[-1] == "**" else 0)


def _fits(segs: tuple[str, ...], parts: list[str]) -> bool:
    """Whether a template's segments fit a request path's parts."""
    for i, seg in enumerate(segs):
        if seg == "**":
            return i < len(parts)
        if i >= len(parts) or (seg != "*" and seg != parts[i]):
            return False
    return len(segs) == len(parts)


class PathOwners:
    """Every distinct (HTTP method, template) of the documents, with the
    documents that have it, grouped by segment count and first segment: a
    lookup compares a path with the few hundred templates of its shape."""

    def __init__(self, files: dict[str, Path]) -> None:
        found: dict[tuple[str, tuple[str, ...]], set[str]] = {}
        for key, path in files.items():
            # The bytes as the catalog's host index reads them: the lock's
            # checksum is checked when the API itself loads (Catalog.api).
            doc = json.loads(path.read_bytes())
            service_path = str(doc.get("servicePath") or "")
            for m in _methods(doc):
                patterns = {n: p.get("pattern") for n, p in (m.get("parameters") or {}).items()}
                segs = tuple(template_segments(service_path + str(m.get("path", "")), patterns))
                found.setdefault((str(m.get("httpMethod", "")), segs), set()).add(key)
        self._shaped: dict[tuple[str, int, str], list[tuple[tuple[str, ...], frozenset[str]]]] = {}
        self._rest: dict[str, list[tuple[tuple[str, ...], frozenset[str]]]] = {}
        for (http, segs), keys in found.items():
            entry = (segs, frozenset(keys))
            if "**" in segs:
                self._rest.setdefault(http, []).append(entry)
            else:
                self._shaped.setdefault((http, len(segs), segs[0] if segs else ""), []).append(entry)

    def owners(self, http: str, path: str) -> list[str]:
        """The documents whose most specific template for ``path`` is the best
        any document has, sorted; [] when none serves it."""
        parts = path.split("?", 1)[0].split("/")
        shaped = self._shaped.get((http, len(parts), parts[0]), []) + self._shaped.get((http, len(parts), "*"), [])
        best: dict[str, int] = {}
        for segs, keys in shaped + self._rest.get(http, []):
            if _fits(segs, parts):
                spec = _specificity(segs)
                for k in keys:
                    best[k] = max(spec, best.get(k, spec))
        if not best:
            return []
        top = max(best.values())
        return sorted(k for k, spec in best.items() if spec == top)
