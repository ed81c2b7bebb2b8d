"""The operator at scale: 1,000 objects of mixed Kinds on a real API server.

``make bench`` runs this (it needs the envtest assets: ``make envtest``). One
``kccctl operator`` process against the envtest API server
(../shared/tools/envtest) and a mockgcp process, objects written with the
Kubernetes Python client:

1. 100 objects applied; the time until all are Ready, and the operator's RSS;
2. 900 more; the time until all 1,000 are Ready, and the RSS again (flat
   memory: the RSS at 1,000 over the RSS at 100, the operator's start-up RSS
   subtracted from neither);
3. steady state, every object resyncing (``--resync RESYNC_S``, jittered
   0.5-1.5x): mockgcp's requests over ``WINDOW_S``, against one GET per object
   per resync interval (``objects * WINDOW_S / RESYNC_S``); writes must be 0;
4. while they resync, a new object is applied: the seconds until it is Ready
   (the acceptance bound is 10 s), five times;
5. RSS after the window (no growth while resyncing).

The objects are 250 each of four Kinds of four APIs, as in bench/apply.py
(one of them with a service-assigned ID). Writes bench/operator.json and
prints the README row.
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.apply import KINDS, mockgcp, objects, requests_in  # noqa: E402
from bench.run import machine  # noqa: E402
from tests.support import envtest as envtest_support  # noqa: E402
from tests.support.operator import Kube, OperatorProcess, crd_file, ready_condition  # noqa: E402

OUT = REPO / "bench" / "operator.json"
NAMESPACE = "bench"
RESYNC_S = 30.0
WINDOW_S = 60.0
FIRST = 100
NEW_OBJECTS = 5


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


@contextmanager
def api_server(tmp: Path) -> Iterator[Path]:
    why = envtest_support.missing()
    if why is not None:
        raise SystemExit(f"bench/operator.py needs the envtest server: {why}")
    work = tmp / "envtest"
    work.mkdir()
    env = dict(os.environ, KUBEBUILDER_ASSETS=str(envtest_support.assets()), ENVTEST_WATCH_PID=str(os.getpid()))
    out = subprocess.run([str(envtest_support.TOOLS / "start.sh"), str(work)], env=env, capture_output=True, text=True, timeout=180, check=True)
    try:
        yield Path(out.stdout.strip().splitlines()[-1])
    finally:
        subprocess.run([str(envtest_support.TOOLS / "stop.sh"), str(work)], capture_output=True, timeout=60, check=False)


def all_ready(kube: Kube, names: set[tuple[str, str]], timeout: float) -> float:
    """Seconds until every (Kind, name) is Ready, listing each Kind once per poll."""
    t0 = time.monotonic()
    while True:
        ready = set()
        for kind in {k for k, _ in names}:
            for o in kube.list(kind, NAMESPACE):
                if ready_condition(o).get("status") == "True":
                    ready.add((kind, o["metadata"]["name"]))
        if names <= ready:
            return time.monotonic() - t0
        if time.monotonic() - t0 > timeout:
            raise SystemExit(f"{len(names - ready)} of {len(names)} objects not Ready after {timeout}s")
        time.sleep(0.5)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def writes_in(log: Path) -> int:
    from kccgen.mockgcp.httplog import read_http_log

    return sum(1 for e in read_http_log(log) if e.method in ("POST", "PUT", "PATCH", "DELETE")) if log.exists() else 0


def main() -> int:
    objs = objects()
    for o in objs:
        o["metadata"]["namespace"] = NAMESPACE
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        with api_server(tmp) as kubeconfig, mockgcp(tmp, 0) as (url, log):
            kubectl = envtest_support.Kube(kubeconfig, tmp / "cache")
            files = [crd_file(k) for k in KINDS]
            kubectl.apply_files(files)
            kubectl.established({f.name.removesuffix(".yaml") for f in files})
            kube = Kube(kubeconfig)
            # Baseline in the same run: the same 900 writes with no operator
            # watching (another namespace), so the apply time below can be read.
            t0 = time.monotonic()
            for o in objs[FIRST:]:
                kube.apply({**o, "metadata": {**o["metadata"], "namespace": "baseline"}})
            baseline_apply_s = time.monotonic() - t0
            op = OperatorProcess(
                kubeconfig, url, tmp / "operator.log",
                ("--crd-pattern", ";".join(KINDS), "--project", "bench-project", "--resync", str(RESYNC_S), "--qps", "100", "--namespace", NAMESPACE),
            ).start()
            assert op.proc is not None
            try:
                rss_start = rss_mb(op.proc.pid)
                for o in objs[:FIRST]:
                    kube.apply(o)
                ready_100_s = all_ready(kube, {(o["kind"], o["metadata"]["name"]) for o in objs[:FIRST]}, 300)
                time.sleep(2)
                rss_100 = rss_mb(op.proc.pid)
                t0 = time.monotonic()
                for o in objs[FIRST:]:
                    kube.apply(o)
                apply_s = time.monotonic() - t0
                ready_1000_s = all_ready(kube, {(o["kind"], o["metadata"]["name"]) for o in objs}, 900)
                time.sleep(2)
                rss_1000 = rss_mb(op.proc.pid)
                # Steady state: let the first resync pass (Ready messages settle), then count.
                time.sleep(RESYNC_S * 1.5)
                sent0, writes0 = requests_in(log), writes_in(log)
                t_window = time.monotonic()
                new_ready = []
                for i in range(NEW_OBJECTS):
                    time.sleep(WINDOW_S / (NEW_OBJECTS + 1))
                    new = {
                        "apiVersion": "pubsub.cnrm.cloud.google.com/v1beta1", "kind": "PubSubTopic",
                        "metadata": {"name": f"newcomer-{i}", "namespace": NAMESPACE}, "spec": {},
                    }
                    t1 = time.monotonic()
                    kube.apply(new)
                    kube.wait_ready("PubSubTopic", NAMESPACE, f"newcomer-{i}", timeout=60)
                    new_ready.append(time.monotonic() - t1)
                left = WINDOW_S - (time.monotonic() - t_window)
                if left > 0:
                    time.sleep(left)
                window = time.monotonic() - t_window
                sent = requests_in(log) - sent0 - 2 * NEW_OBJECTS
                writes = writes_in(log) - writes0 - NEW_OBJECTS  # each newcomer: one GET, one PUT
                rss_after = rss_mb(op.proc.pid)
                cpu_s = cpu_seconds(op.proc.pid)
            finally:
                code = op.stop(120)
    expected = len(objs) * window / RESYNC_S
    result: dict[str, Any] = {
        "date": datetime.date.today().isoformat(),
        "machine": machine(),
        "objects": len(objs),
        "kinds": list(KINDS),
        "ready_100_s": round(ready_100_s, 1),
        "apply_900_s": round(apply_s, 1),
        "apply_900_without_operator_s": round(baseline_apply_s, 1),
        "ready_1000_after_last_apply_s": round(ready_1000_s, 1),
        "operator_cpu_s": round(cpu_s, 1),
        "rss_start_mb": round(rss_start, 1),
        "rss_100_mb": round(rss_100, 1),
        "rss_1000_mb": round(rss_1000, 1),
        "rss_after_window_mb": round(rss_after, 1),
        "rss_1000_over_100": round(rss_1000 / rss_100, 2),
        "resync_s": RESYNC_S,
        "window_s": round(window, 1),
        "steady_requests": sent,
        "steady_requests_expected": round(expected),
        "steady_requests_per_object_per_resync": round(sent / expected, 3),
        "steady_writes": writes,
        "new_object_ready_s": [round(x, 2) for x in new_ready],
        "sigterm_exit": code,
    }
    OUT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    print(
        f"| `kccctl operator`, {len(objs):,} objects on the envtest API server (`bench/operator.py`) | "
        f"900 more applied in {apply_s:.0f} s ({baseline_apply_s:.0f} s with no operator), all Ready {ready_1000_s:.1f} s after the last; a new object Ready in {max(new_ready):.1f} s at most while they resync; "
        f"RSS {rss_100:.0f} MB at 100, {rss_1000:.0f} MB at 1,000; "
        f"{sent / expected:.2f} requests per object per resync interval, {writes} writes |"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
