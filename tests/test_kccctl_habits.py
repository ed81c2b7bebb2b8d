"""kccctl behaves as kubectl users expect (issue 12, item 6): manifests from
stdin, JSON and ``List`` files, ``-R``; ``diff`` with kubectl's exit codes;
``--dry-run=client|server`` that write nothing."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kccgen.mockgcp import MockServer
from kccgen.runtime.cli import main


def _topic(name: str, env: str = "dev") -> dict[str, Any]:
    return {"apiVersion": "pubsub.cnrm.cloud.google.com/v1beta1", "kind": "PubSubTopic", "metadata": {"name": name}, "spec": {"labels": {"env": env}}}


def _run(capsys: pytest.CaptureFixture[str], s: MockServer, state: Path, *args: str) -> tuple[int, str, str]:
    code = main([*args, "--state", str(state), "--endpoint", s.base_url, "--host-paths", "--project", "p"])
    out, err = capsys.readouterr()
    return code, out, err


def _writes(s: MockServer) -> list[str]:
    return [f"{e.method} {e.url}" for e in s.log if e.method != "GET"]


def test_manifests_from_stdin_json_lists_and_subdirectories(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / "a.json").write_text(json.dumps(_topic("from-json")), encoding="utf-8")
    (tmp_path / "d" / "sub" / "b.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [_topic("in-list")]}), encoding="utf-8")
    with MockServer() as s:
        monkeypatch.setattr("sys.stdin", io.StringIO(yaml.safe_dump(_topic("from-stdin"))))
        code, out, _ = _run(capsys, s, tmp_path / "st", "apply", "-f", "-")
        assert code == 0 and "from-stdin" in out
        code, out, _ = _run(capsys, s, tmp_path / "st", "apply", "-f", str(tmp_path / "d"))
        assert code == 0 and "from-json" in out and "in-list" not in out  # like kubectl: no subdirectories
        code, out, _ = _run(capsys, s, tmp_path / "st", "apply", "-R", "-f", str(tmp_path / "d"))
        assert code == 0 and "from-json" in out and "in-list" in out
        (tmp_path / "bad.json").write_text("{", encoding="utf-8")
        code, _, err = _run(capsys, s, tmp_path / "st", "apply", "-f", str(tmp_path / "bad.json"))
        assert code == 2 and "bad.json: invalid JSON" in err


def test_diff_exits_as_kubectl_diff_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    m = tmp_path / "t.yaml"
    m.write_text(yaml.safe_dump(_topic("t")), encoding="utf-8")
    st = tmp_path / "st"
    with MockServer() as s:
        code, out, _ = _run(capsys, s, st, "diff", "-f", str(m))
        assert code == 1 and "would create projects/p/topics/t" in out and '+ spec.labels: {"env": "dev"}' in out
        assert not _writes(s) and not list(st.rglob("*.yaml"))  # only the lock file
        assert _run(capsys, s, st, "apply", "-f", str(m))[0] == 0
        code, out, _ = _run(capsys, s, st, "diff", "-f", str(m))
        assert (code, out) == (0, "")
        before = sorted((p, p.read_bytes()) for p in st.rglob("*.yaml"))
        writes = len(_writes(s))
        m.write_text(yaml.safe_dump(_topic("t", "prod")), encoding="utf-8")
        code, out, _ = _run(capsys, s, st, "diff", "-f", str(m))
        assert code == 1 and '~ spec.labels: {"env": "dev"} => {"env": "prod"}' in out
        code, out, _ = _run(capsys, s, st, "apply", "--dry-run=server", "-f", str(m))
        assert code == 0 and "WouldUpdate" in out
        code, out, _ = _run(capsys, s, st, "apply", "--dry-run=client", "-f", str(m))
        assert code == 0 and "Valid" in out
        code, out, _ = _run(capsys, s, st, "delete", "--dry-run=server", "-f", str(m))
        assert code == 0 and "would delete projects/p/topics/t" in out
        assert len(_writes(s)) == writes and sorted((p, p.read_bytes()) for p in st.rglob("*.yaml")) == before
        # An error (an immutable change) is exit 2, as kubectl diff's "above 1".
        sub = {
            "apiVersion": "pubsub.cnrm.cloud.google.com/v1beta1",
            "kind": "PubSubSubscription",
            "metadata": {"name": "s"},
            "spec": {"topicRef": {"name": "t"}, "ackDeadlineSeconds": 10},
        }
        m2 = tmp_path / "s.yaml"
        m2.write_text(yaml.safe_dump_all([_topic("t"), sub]), encoding="utf-8")
        assert _run(capsys, s, st, "apply", "-f", str(m2))[0] == 0
        sub["spec"]["filter"] = 'attributes.x = "y"'
        m2.write_text(yaml.safe_dump_all([_topic("t"), sub]), encoding="utf-8")
        code, _, err = _run(capsys, s, st, "diff", "-f", str(m2))
        assert code == 2 and "PubSubSubscription default/s" in err, err


def test_export_applies_back_without_a_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    topic = _topic("t")
    sub = {
        "apiVersion": "pubsub.cnrm.cloud.google.com/v1beta1",
        "kind": "PubSubSubscription",
        "metadata": {"name": "s"},
        "spec": {"topicRef": {"name": "t"}, "ackDeadlineSeconds": 20, "labels": {"team": "a"}, "messageRetentionDuration": "1200s"},
    }
    m = tmp_path / "m.yaml"
    m.write_text(yaml.safe_dump_all([topic, sub]), encoding="utf-8")
    with MockServer() as s:
        assert _run(capsys, s, tmp_path / "st", "apply", "-f", str(m))[0] == 0
        exported = []
        for args in (("PubSubTopic", "t"), ("pubsubsubscriptions", "projects/p/subscriptions/s")):
            code, out, err = _run(capsys, s, tmp_path / "st", "export", *args)
            assert code == 0, err
            exported.append(yaml.safe_load(out))
        assert exported[1]["metadata"]["name"] == "s"
        assert exported[1]["spec"]["topicRef"] == {"external": "projects/p/topics/t"}
        assert exported[1]["spec"]["ackDeadlineSeconds"] == 20 and "resourceID" not in exported[1]["spec"]
        # Applied into a fresh state: acquired, and nothing written to GCP.
        (tmp_path / "x.yaml").write_text(yaml.safe_dump_all(exported), encoding="utf-8")
        writes = len(_writes(s))
        code, out, _ = _run(capsys, s, tmp_path / "fresh", "diff", "-f", str(tmp_path / "x.yaml"))
        assert (code, out) == (0, "")
        code, out, _ = _run(capsys, s, tmp_path / "fresh", "apply", "-f", str(tmp_path / "x.yaml"))
        assert code == 0 and out.count("UpToDate") == 2 and len(_writes(s)) == writes
        code, _, err = _run(capsys, s, tmp_path / "st", "export", "PubSubTopic", "nope/x")
        assert code == 2 and "neither a PubSubTopic object" in err


def test_get_takes_kind_names_as_kubectl_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    m = tmp_path / "t.yaml"
    m.write_text(yaml.safe_dump_all([_topic("a"), _topic("b")]), encoding="utf-8")
    st = tmp_path / "st"
    with MockServer() as s:
        assert _run(capsys, s, st, "apply", "-f", str(m))[0] == 0
    for spelling in ("PubSubTopic", "pubsubtopic", "pubsubtopics", "gcppubsubtopics", "pubsubtopics.pubsub.cnrm.cloud.google.com"):
        assert main(["get", spelling, "-o", "name", "--state", str(st)]) == 0
        assert capsys.readouterr().out == "pubsubtopic.pubsub.cnrm.cloud.google.com/a\npubsubtopic.pubsub.cnrm.cloud.google.com/b\n"  # kubectl: kind.group/name
    assert main(["get", "pubsubtopic/b", "-o", "json", "--state", str(st)]) == 0
    assert json.loads(capsys.readouterr().out)["metadata"]["name"] == "b"
    assert main(["get", "PubSubTopic", "--state", str(st), "-A"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["NAMESPACE", "NAME", "READY", "STATUS", "EXTERNALREF"] and len(out) == 3
    assert main(["get", "PubSubTopic", "--state", str(st), "-n", "other"]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == []
    assert main(["get", "PubSubTopicz", "--state", str(st)]) == 2
    assert "did you mean 'PubSubTopic'" in capsys.readouterr().err
    assert main(["delete", "pubsubtopic", "a", "--state", str(st), "--endpoint", "http://127.0.0.1:9", "--dry-run=client"]) == 0
    assert "pubsubtopic" not in capsys.readouterr().err.lower()
