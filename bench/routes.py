"""Route lookup with every pinned Discovery document loaded: linear scan versus the index.

``python bench/routes.py`` loads all documents into one mockgcp catalog, then
asks for one path per route of a sample (a path made from the route's own
template) in two ways: the linear scan mockgcp used before (every route's
regex, most specific first, over all APIs) and ``RouteIndex.match`` over the
same routes. It prints the load time, the route count and the median time per
lookup of each, and checks both give the same answer.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kccgen.mockgcp.catalog import Route
from kccgen.mockgcp.engine import MockGCP
from kccgen.mockgcp.routing import RouteIndex
from tests.test_mockgcp_routing import _sample_path


def linear(routes: list[Route], http: str, path: str) -> list[Route]:
    found: list[Route] = []
    for r in routes:
        if found and r.specificity < found[0].specificity:
            break
        if r.http == http and r.regex.match(path) and (not found or r.regex.pattern == found[0].regex.pattern):
            found.append(r)
    return found


def main() -> None:
    eng = MockGCP()
    t = time.perf_counter()
    for key in eng.apis:
        eng.apis[key]
    load = time.perf_counter() - t
    routes = sorted((r for k in eng.catalog.routes for r in eng.catalog.routes[k]), key=lambda r: (-r.specificity, r.api, r.resource, r.verb))
    t = time.perf_counter()
    index = RouteIndex(routes)
    build = time.perf_counter() - t
    rng = random.Random(1)
    sample = [(r.http, p) for r in rng.sample(routes, 400) if (p := _sample_path(r.regex.pattern))]
    lin, idx = [], []
    for http, path in sample:
        t = time.perf_counter()
        a = linear(routes, http, path)
        lin.append(time.perf_counter() - t)
        t = time.perf_counter()
        b = [r for r, _ in index.match(http, path)]
        idx.append(time.perf_counter() - t)
        assert a == b, (http, path)
    print(f"documents: {len(eng.catalog.routes)}, routes: {len(routes)}; load {load:.1f} s, index build {build * 1000:.0f} ms")
    print(f"lookups: {len(sample)}; linear scan median {statistics.median(lin) * 1e6:.0f} µs, index median {statistics.median(idx) * 1e6:.1f} µs")


if __name__ == "__main__":
    main()
