"""An indexed route table: a trie over URL path segments.

With every pinned document loaded there are tens of thousands of routes; a
linear scan of their regexes costs milliseconds per request. Each route's
template (``servicePath + path``, reserved parameters expanded through their
``pattern``) is cut into segments: a literal, ``*`` (one segment holding a
parameter) or ``**`` (anything from here on: a parameter whose pattern can span
segments). A lookup walks the trie with the request's segments and checks
only the few routes it reaches against their full regex, so the answer is the
one the scan gave: the most specific match.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kccgen.discovery.document import Method

if TYPE_CHECKING:
    from kccgen.mockgcp.catalog import Route

_PARAM = re.compile(r"\{(\+?)([A-Za-z][A-Za-z0-9_]*)\}")
_LITERAL = re.compile(r"[A-Za-z0-9_~-]+")
_VAR = "\0"


def segments(service_path: str, m: Method) -> list[str]:
    """``v1/projects/*/topics/*``-style segments of a method's URL template."""
    return template_segments(service_path + m.path, {n: p.pattern for n, p in m.parameters.items()})


def template_segments(full: str, patterns: Mapping[str, str | None]) -> list[str]:
    """The segments of a URL template (``servicePath + path``) whose reserved
    parameters (``{+name}``) are expanded through their ``patterns``."""

    def expand(pm: re.Match[str]) -> str:
        reserved, name = pm.group(1), pm.group(2)
        pattern = patterns.get(name)
        if reserved and pattern:
            pat = pattern.removeprefix("^").removesuffix("$").replace("[^/]+", _VAR)
            # Anything but literals and one-segment wildcards may cross a "/".
            return pat if all(_LITERAL.fullmatch(s) or s == _VAR for s in pat.split("/")) else "\1"
        return "\1" if reserved else _VAR

    out: list[str] = []
    for seg in _PARAM.sub(expand, full).split("/"):
        if "\1" in seg:
            out.append("**")
            break
        out.append(seg if _LITERAL.fullmatch(seg) else "*")
    return out


@dataclass
class _Node:
    children: dict[str, _Node] = field(default_factory=dict)
    star: _Node | None = None
    here: list[Route] = field(default_factory=list)  # routes ending at this node
    rest: list[Route] = field(default_factory=list)  # routes with "**" here


class RouteIndex:
    """Routes by HTTP method, each a segment trie; ``add`` is incremental (APIs load lazily)."""

    def __init__(self, routes: Iterable[Route] = ()) -> None:
        self._roots: dict[str, _Node] = {}
        self.size = 0
        self.add(routes)

    def add(self, routes: Iterable[Route]) -> None:
        for r in routes:
            node = self._roots.setdefault(r.http, _Node())
            segs = r.segments
            for i, seg in enumerate(segs):
                if seg == "**":
                    node.rest.append(r)
                    break
                if seg == "*":
                    node.star = node.star or _Node()
                    node = node.star
                else:
                    node = node.children.setdefault(seg, _Node())
                if i == len(segs) - 1:
                    node.here.append(r)
            self.size += 1

    def candidates(self, http: str, path: str) -> list[Route]:
        """Routes whose segment shape fits ``path``, most specific first (not yet regex-checked)."""
        root = self._roots.get(http)
        if root is None:
            return []
        parts = path.split("/")
        found: list[Route] = []
        stack: list[tuple[_Node, int]] = [(root, 0)]
        while stack:
            node, i = stack.pop()
            found.extend(node.rest)
            if i == len(parts):
                found.extend(node.here)
                continue
            child = node.children.get(parts[i])
            if child is not None:
                stack.append((child, i + 1))
            if node.star is not None:
                stack.append((node.star, i + 1))
        found.sort(key=lambda r: (-r.specificity, r.api, r.resource, r.verb))
        return found

    def match(self, http: str, path: str) -> list[tuple[Route, dict[str, str]]]:
        """Every route of the best specificity whose regex matches ``path`` (several only
        when APIs share a URL template); the caller breaks the tie."""
        found: list[tuple[Route, dict[str, str]]] = []
        for r in self.candidates(http, path):
            if found and r.specificity < found[0][0].specificity:
                break
            m = r.regex.match(path)
            if m and (not found or r.regex.pattern == found[0][0].regex.pattern):
                found.append((r, m.groupdict()))
        return found
