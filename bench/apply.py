"""kccctl apply throughput: 1,000 objects through mockgcp with 50 ms per request.

``make bench`` runs this. Each run is a real ``kccctl apply`` process against a
mockgcp process of its own (fresh resources), whose every request waits
``LATENCY_MS`` first, as a distant API does:

- sequential: ``--workers 1``, one object after another (kccctl before issue 12);
- concurrent: the defaults (``--workers 8``, ``--qps 50`` per API);
- up to date: the objects applied a third time, without latency (nothing to
  write, not even the state); the CPU time of that kccctl process per object,
  less the CPU of applying one up-to-date object (start-up, imports), and the
  requests it sent per object.

The objects are 250 each of four Kinds of four APIs (topics, buckets, secrets,
notification channels: one with a service-assigned ID). Writes
bench/apply.json (with the machine and the date) and prints the README row.
"""

from __future__ import annotations

import datetime
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.run import machine  # noqa: E402

OUT = REPO / "bench" / "apply.json"
LATENCY_MS = 50
PER_KIND = 250
KINDS = ("PubSubTopic", "StorageBucket", "SecretManagerSecret", "MonitoringNotificationChannel")
BIN = Path(sys.executable).parent


def objects() -> list[dict[str, Any]]:
    from kccgen.runtime.example import Examples

    out = []
    for kind in KINDS:
        base = Examples("bench-project").manifests(kind)[-1]
        for i in range(PER_KIND):
            o = yaml.safe_load(yaml.safe_dump(base))
            o["metadata"]["name"] = f"bench-{kind.lower()}-{i}"
            if kind == "StorageBucket":
                o["spec"].pop("resourceID", None)
            out.append(o)
    return out


@contextmanager
def mockgcp(tmp: Path, latency_ms: int) -> Iterator[tuple[str, Path]]:
    """A mockgcp process; yields its URL and its request log."""
    faults = tmp / f"faults-{latency_ms}.json"
    faults.write_text(json.dumps([{"method": "*", "latency_ms": latency_ms}] if latency_ms else []), encoding="utf-8")
    log = tmp / f"mock-{time.monotonic_ns()}.log"
    proc = subprocess.Popen(
        [str(BIN / "mockgcp"), "serve", "--port", "0", "--faults", str(faults), "--log", str(log)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("mockgcp listening on "), line
        yield line.split()[-1], log
    finally:
        proc.terminate()
        proc.wait(30)


def kccctl_apply(manifest: Path, state: Path, url: str, *extra: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the kccctl process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(
        [str(BIN / "kccctl"), "apply", "-f", str(manifest), "--state", str(state), "--endpoint", url, "--host-paths", "--project", "bench-project", *extra],
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise SystemExit(f"kccctl apply failed ({r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def requests_in(log: Path) -> int:
    """Exchanges in a mockgcp request log."""
    from kccgen.mockgcp.httplog import read_http_log

    return len(read_http_log(log)) if log.exists() else 0


def main() -> int:
    objs = objects()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        manifest = tmp / "objects.yaml"
        manifest.write_text(yaml.safe_dump_all(objs), encoding="utf-8")
        one = tmp / "one.yaml"
        one.write_text(yaml.safe_dump(objs[0]), encoding="utf-8")
        with mockgcp(tmp, LATENCY_MS) as (url, _):
            seq_wall, _cpu = kccctl_apply(manifest, tmp / "seq", url, "--workers", "1")
        with mockgcp(tmp, LATENCY_MS) as (url, _):
            conc_wall, _cpu = kccctl_apply(manifest, tmp / "conc", url)
        with mockgcp(tmp, 0) as (url, log):
            kccctl_apply(manifest, tmp / "again", url)  # creates
            kccctl_apply(manifest, tmp / "again", url)  # Ready messages change from "created" to "up to date"
            sent_before = requests_in(log)
            _, cpu_all = kccctl_apply(manifest, tmp / "again", url)
            sent = requests_in(log) - sent_before
            _, cpu_one = kccctl_apply(one, tmp / "again", url)
    per_object_ms = (cpu_all - cpu_one) / (len(objs) - 1) * 1000
    result = {
        "date": datetime.date.today().isoformat(),
        "machine": machine(),
        "objects": len(objs),
        "kinds": list(KINDS),
        "latency_ms": LATENCY_MS,
        "sequential_s": round(seq_wall, 2),
        "concurrent_s": round(conc_wall, 2),
        "speedup": round(seq_wall / conc_wall, 2),
        "up_to_date_cpu_ms_per_object": round(per_object_ms, 3),
        "up_to_date_requests_per_object": round(sent / len(objs), 3),
    }
    OUT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    print(
        f"| `kccctl apply` of {len(objs)} objects, {LATENCY_MS} ms per request (`bench/apply.py`) | "
        f"{seq_wall:.1f} s one by one, {conc_wall:.1f} s with 8 workers: {seq_wall / conc_wall:.1f}×; "
        f"re-applying them up to date: {per_object_ms:.2f} ms CPU and {sent / len(objs):.2f} requests per object |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
