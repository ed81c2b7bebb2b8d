"""``kccgen bump`` end to end on a slice, without the network: the documents of the
"new client" are a directory (``--documents``) where PubSubTopic's ``kmsKeyName``
is renamed and a description changed. One round lists the decision with its
cause and writes nothing to generated/; after the alias it names is written,
the same command finishes, writes the changelog and rewrites only that API."""

from __future__ import annotations

import json
from pathlib import Path

from kccgen.documents import client_documents_dir, client_version
from tests.test_surface_gate import TOPIC, _slice, _tree, runner


def _documents(tmp: Path) -> Path:
    """The installed client's documents, with pubsub.v1 edited."""
    out = tmp / "documents"
    out.mkdir()
    for p in client_documents_dir().glob("*.json"):
        (out / p.name).symlink_to(p)
    (out / "pubsub.v1.json").unlink()
    doc = json.loads((client_documents_dir() / "pubsub.v1.json").read_bytes())
    props = doc["schemas"]["Topic"]["properties"]
    props["cryptoKeyName"] = props.pop("kmsKeyName")
    props["messageRetentionDuration"]["description"] = "How long messages are kept. A new sentence."
    doc["revision"] = "29991231"
    (out / "pubsub.v1.json").write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return out


def test_a_bump_lists_its_decisions_then_finishes_with_a_changelog(tmp_path: Path) -> None:
    specs = _slice(tmp_path)
    root = tmp_path / "repo"
    run = runner(root, specs)

    assert run("generate", "--force").returncode == 0
    before = _tree(root)
    version = client_version()
    docs = _documents(tmp_path)

    r = run("bump", version, "--no-docs", "--documents", str(docs))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "1 decision(s) before google-api-python-client" in r.stderr
    line = next(x for x in r.stderr.splitlines() if x.startswith("1. "))
    assert "PubSubTopic spec.kmsKeyRef: removed" in line
    assert "{field: kmsKeyRef, apiField: cryptoKeyName, deprecated: true, reason}" in line
    assert "Cause: `pubsub.v1@" in line and "#/schemas/Topic/properties/kmsKeyName` is not in pubsub.v1@29991231" in line
    assert _tree(root) == before  # nothing written to generated/ or surface/
    lock = json.loads((specs / "discovery.lock.json").read_text(encoding="utf-8"))["documents"]
    assert lock["pubsub.v1"]["revision"] == "29991231"  # the specs moved, atomically

    (specs / "kinds" / "pubsub.yaml").write_text(
        TOPIC + "    aliases:\n      - {field: kmsKeyRef, apiField: cryptoKeyName, deprecated: true, reason: Topic.kmsKeyName was renamed cryptoKeyName}\n",
        encoding="utf-8",
    )
    r = run("bump", version, "--no-docs", "--documents", str(docs))
    assert r.returncode == 0, r.stdout + r.stderr
    log = (root / "docs" / "changes" / f"{version}-{version}.md").read_text(encoding="utf-8")
    assert "| fields kept as deprecated aliases | 1 |" in log
    assert "- `PubSubTopic` `spec.kmsKeyRef` → `cryptoKeyName`: kept as a deprecated alias" in log
    assert "`PubSubTopic`: `spec.cryptoKeyRef`" in log  # the new field, under New spec fields
    assert "changed: `pubsub.v1`" in log and "→ 29991231" in log
    assert not (root / ".kccgen-cache" / "bump.json").exists()

    after = _tree(root)
    changed = sorted(str(p.relative_to(root)) for p in set(before) | set(after) if before.get(p) != after.get(p))
    assert changed and all("pubsub" in p for p in changed if p != "generated/.kccgen-stamp"), changed  # the KMS Kinds' files keep their bytes
    assert run("check").returncode == 0
