"""Reconcile overhead: what mapping and diffing cost per object, without HTTP.

``make bench`` runs this. For 1,000 objects of the 14 Kinds (the realistic
objects of ``bench/calls.py``, each with its own labels; one in ten with one
field drifted), it times what a reconcile does between the GET and the
decision to write: ``kccgen.runtime.adapter.spec_to_api`` (spec -> API payload) and
``kccgen.runtime.reconciler.diff`` (against the live payload, with the mutability
check). HTTP is excluded: the live payloads are what mockgcp's GET answered
for each Kind, fetched once before timing, and references are resolved before
timing too.

In the same run it times a baseline over the same payloads: ``copy.deepcopy``
of the spec and a plain ``!=`` per top-level field against the live payload,
the least a mapper plus diff could do. The result is the median of ``RUNS``
passes over all objects (garbage collection off while timing, as ``timeit``
does), per object, and the ratio to the baseline.

Writes bench/results.json (with the machine, the Python and the date: it is a
results file) and prints a markdown row for the README's "Measured" table.
"""

from __future__ import annotations

import argparse
import copy
import datetime
import gc
import json
import os
import platform
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a script: mockgcp and bench are not installed packages
    sys.path.insert(0, str(REPO))

from bench.calls import CASES, Case, harness, mock_server, set_path  # noqa: E402
from kccgen.contract import Adapter  # noqa: E402
from kccgen.runtime.adapter import adapter_for, spec_to_api  # noqa: E402
from kccgen.runtime.identity import identity_for  # noqa: E402
from kccgen.runtime.reconciler import diff, without_create_label  # noqa: E402
from kccgen.runtime.refs import resolve_object  # noqa: E402

OUT = REPO / "bench" / "results.json"
OBJECTS = 1000
RUNS = 11
DRIFT_EVERY = 10  # every tenth object has one field drifted from the live payload
LABEL_FIELDS = ("labels", "userLabels")


@dataclass(frozen=True)
class Item:
    kind: str
    adapter: Adapter
    spec: dict[str, Any]
    resolved: dict[str, Any]
    actual: dict[str, Any]
    drifted: bool
    values: dict[str, str]  # the identity's values (short names expand with them: SpannerInstance config)


def live_payloads() -> dict[str, tuple[dict[str, Any], dict[str, Any], dict[str, str]]]:
    """Kind -> (resolved references, the payload mockgcp's GET answers, the identity's values), fetched once."""
    out: dict[str, tuple[dict[str, Any], dict[str, Any], dict[str, str]]] = {}
    with mock_server() as server:
        for case in CASES:
            with harness(server) as h:
                for d in case.deps:
                    h.ready(d)
                obj = h.ready(case.obj())
                r, calls = h.measure(lambda obj=obj: h.apply(obj))  # type: ignore[misc]
                assert r.reason == "UpToDate" and len(calls) == 1, (case.kind, calls)
                body = server.log[-1].response_json
                assert isinstance(body, dict)
                # as the reconciler sees it: without the label a service-named create carries
                body = without_create_label(adapter_for(case.kind), body)
                values = identity_for(case.kind).parse(str(r.obj["status"]["externalRef"]))
                out[case.kind] = (resolve_object(obj, h.store), body, values)
    return out


def build_items(n: int = OBJECTS) -> list[Item]:
    live = live_payloads()
    cases: list[Case] = sorted(CASES, key=lambda c: c.kind)
    items: list[Item] = []
    for i in range(n):
        case = cases[i % len(cases)]
        resolved, payload, values = live[case.kind]
        spec, actual = copy.deepcopy(case.spec), copy.deepcopy(payload)
        for f in LABEL_FIELDS:  # every object its own labels, live and desired alike
            if isinstance(spec.get(f), dict):
                spec[f]["shard"] = actual[f]["shard"] = f"s{i:04d}"
        drifted = i % DRIFT_EVERY == DRIFT_EVERY - 1 and case.drift is not None
        if drifted:
            assert case.drift is not None
            set_path(spec, *case.drift)
        items.append(Item(case.kind, adapter_for(case.kind), spec, resolved, actual, drifted, values))
    for it in items:  # the workload is what it claims: drift found exactly where made
        found = diff(
            spec_to_api(it.spec, it.adapter, it.resolved, it.values),
            it.actual,
            it.adapter,
            check_mutability=True,
        )
        assert bool(found) == it.drifted, (it.kind, it.drifted, found)
    return items


def ours(it: Item) -> object:
    return diff(
        spec_to_api(it.spec, it.adapter, it.resolved, it.values), it.actual, it.adapter, check_mutability=True
    )


def baseline(it: Item) -> object:
    desired = copy.deepcopy(it.spec)
    return [k for k, v in desired.items() if it.actual.get(k) != v]


def timed_pass(fn: Callable[[Item], object], items: list[Item]) -> tuple[float, dict[str, float]]:
    """(seconds for all items, seconds per Kind) of one pass, garbage collection off."""
    per_kind: Counter[str] = Counter()
    clock = time.perf_counter
    enabled = gc.isenabled()
    gc.disable()
    try:
        t0 = clock()
        for it in items:
            s = clock()
            fn(it)
            per_kind[it.kind] += clock() - s
        total = clock() - t0
    finally:
        if enabled:
            gc.enable()
    return total, dict(per_kind)


def measure(items: list[Item], runs: int) -> dict[str, Any]:
    for fn in (ours, baseline):  # warm-up: imports, lazily loaded tables
        timed_pass(fn, items)
    results: dict[str, list[tuple[float, dict[str, float]]]] = {"ours": [], "baseline": []}
    for _ in range(runs):  # interleaved, so drift in machine load hits both alike
        results["ours"].append(timed_pass(ours, items))
        results["baseline"].append(timed_pass(baseline, items))
    counts = Counter(it.kind for it in items)
    n = len(items)
    out: dict[str, Any] = {}
    for name, passes in results.items():
        per_object = [total / n * 1e6 for total, _ in passes]
        out[name] = {
            "per_object_us_median": round(statistics.median(per_object), 2),
            "per_object_us_min": round(min(per_object), 2),
            "per_object_us_max": round(max(per_object), 2),
            "per_object_us_runs": [round(x, 2) for x in per_object],
            "per_kind_us_median": {
                k: round(statistics.median(kinds[k] / counts[k] * 1e6 for _, kinds in passes), 2)
                for k in sorted(counts)
            },
        }
    out["ratio"] = round(
        out["ours"]["per_object_us_median"] / out["baseline"]["per_object_us_median"], 1
    )
    return out


def machine() -> dict[str, Any]:
    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or None,
        "cpus": os.cpu_count(),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--objects", type=int, default=OBJECTS)
    p.add_argument("--runs", type=int, default=RUNS)
    p.add_argument("--output", type=Path, default=OUT)
    args = p.parse_args(argv)
    started = time.perf_counter()
    items = build_items(args.objects)
    timing = measure(items, args.runs)
    kinds = Counter(it.kind for it in items)
    result = {
        "benchmark": "reconcile overhead: kccgen.runtime.adapter.spec_to_api + kccgen.runtime.reconciler.diff per object, no HTTP",
        "baseline": "copy.deepcopy(spec) + != per top-level field against the live payload",
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine(),
        "workload": {
            "objects": len(items),
            "kinds": dict(sorted(kinds.items())),
            "drifted": sum(it.drifted for it in items),
            "runs": args.runs,
            "statistic": "median over runs of (pass time / objects); gc disabled while timing",
        },
        "ours": timing["ours"],
        "baseline_timing": timing["baseline"],
        "ratio_ours_to_baseline": timing["ratio"],
        "wall_seconds": round(time.perf_counter() - started, 1),
    }
    args.output.write_text(json.dumps(result, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    o, b = timing["ours"], timing["baseline"]
    print(
        f"wrote {args.output.relative_to(REPO) if args.output.is_relative_to(REPO) else args.output}"
    )
    print(
        f"spec_to_api + diff: {o['per_object_us_median']:.1f} µs/object (median of {args.runs}; "
        f"runs {o['per_object_us_min']:.1f}-{o['per_object_us_max']:.1f}); baseline "
        f"{b['per_object_us_median']:.1f} µs; ratio {timing['ratio']}x"
    )
    print(
        "slowest Kinds: "
        + ", ".join(
            f"{k} {v:.0f} µs"
            for k, v in sorted(o["per_kind_us_median"].items(), key=lambda kv: -kv[1])[:3]
        )
    )
    print()
    print(
        f"| reconcile overhead: `spec_to_api` + `diff` per object, {len(items):,} objects of {len(kinds)} Kinds, "
        f"no HTTP (`make bench`) | {o['per_object_us_median']:.0f} µs per object (median of {args.runs}; "
        f"baseline deepcopy + dict compare {b['per_object_us_median']:.1f} µs: {timing['ratio']}x) |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
