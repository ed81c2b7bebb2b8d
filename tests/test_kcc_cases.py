"""tools/kcc_cases: Config Connector's test case folders through kccctl on mockgcp.

A small git repository stands in for Config Connector's (tests never fetch):
three hand-written case folders in its layout, one that passes create, update
and delete, one refused at load for a field we lack, one skipped for a Kind we
do not serve.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from kccgen.mockgcp.server import MockServer
from kccgen.runtime.gcp import Gcp
from tools.kcc_cases import ROOT, cases, fill, render, run_case, served_kinds, totals

TOPIC = """apiVersion: pubsub.cnrm.cloud.google.com/v1beta1
kind: PubSubTopic
metadata:
  name: topic-${uniqueId}
spec:
  labels: {a: "1"}
"""


def _repo(tmp: Path, files: dict[str, str]) -> Path:
    work = tmp / "kcc"
    for rel, text in files.items():
        p = work / ROOT / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    git = ["git", "-C", str(work), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "cases"], check=True)
    return work / ".git"


def test_cases_pass_fail_and_skip_as_kccctl_would(tmp_path: Path) -> None:
    mirror = _repo(
        tmp_path,
        {
            "pubsub/v1beta1/pubsubtopic/create.yaml": TOPIC,
            "pubsub/v1beta1/pubsubtopic/update.yaml": TOPIC.replace('"1"', '"2"'),
            "pubsub/v1beta1/pubsubtopic-unknown/create.yaml": TOPIC + "  notAField: x\n",
            "made/v1beta1/up/create.yaml": "apiVersion: made.cnrm.cloud.google.com/v1beta1\nkind: MadeUpThing\nmetadata:\n  name: m-${uniqueId}\n",
            "made/v1beta1/up/dependencies.yaml": TOPIC,
        },
    )
    found = cases(mirror)
    assert [c.path for c in found] == ["made/v1beta1/up", "pubsub/v1beta1/pubsubtopic", "pubsub/v1beta1/pubsubtopic-unknown"]
    served = served_kinds()
    with MockServer() as s:
        gcp = Gcp(s.base_url, host_paths=True, retries=0, backoff=0.0, lro_interval=0.0)
        outs = [run_case(c, gcp, served, n) for n, c in enumerate(found)]
    skipped, passed, refused = outs
    assert skipped.skipped == "Kind not served: MadeUpThing"
    assert (passed.created, passed.updated, passed.deleted, passed.step) == (True, True, True, ""), passed.message
    assert not refused.created and refused.step == "load" and "notAField" in refused.message
    t = totals(outs)
    assert (t.cases, t.ran, t.created, t.with_update, t.updated, t.skipped_kind) == (3, 2, 1, 1, 1, 1)
    text = render(outs, "test")
    assert "| **create Ready** | 1 | **50.0 %** of those run |" in text
    assert "pubsub/v1beta1/pubsubtopic-unknown" in text


def test_placeholders_are_filled_per_case_in_strings() -> None:
    out = fill("a: ${projectId} ${uniqueId} ${SOME_TEST_PROJECT} ${Other}\norg: ${TEST_ORG_ID}\n", "p1", "c00001")
    assert yaml.safe_load(out) == {"a": "p1 c00001 p1 example-other", "org": "123456789012"}  # still a string
