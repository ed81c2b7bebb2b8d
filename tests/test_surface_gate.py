"""The surface gate end to end: a Discovery field renamed under a Kind users
already write is refused by generate and check until it is accepted."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.conftest import REPO
from tests.support.specs import keep_claims

TOPIC = """api: pubsub
version: v1
kinds:
  - kind: PubSubTopic
    resource: projects.topics
    references:
      ingestionDataSourceSettings.cloudStorage.bucket: {target: none, reason: the slice has no StorageBucket}
      ingestionDataSourceSettings.awsMsk.topic: {target: none, reason: not a Pub/Sub topic}
      ingestionDataSourceSettings.confluentCloud.topic: {target: none, reason: not a Pub/Sub topic}
      messageTransforms[].aiInference.endpoint: {target: none, reason: the slice has no VertexAIEndpoint}
      messageTransforms[].javascriptUdf.functionName: {target: none, reason: a function name}
      schemaSettings.schema: {target: none, reason: the slice has no PubSubSchema}
"""

LINE = (
    "error: surface/pubsub.v1.json: PubSubTopic spec.kmsKeyRef: removed "
    "(was object, reference to KMSCryptoKey; renamed to spec.cryptoKeyRef?): a breaking change; "
    "accept it in specs/accepted-changes.yaml (kind: PubSubTopic, path: spec.kmsKeyRef, change: removed, reason), "
    "or keep spec.kmsKeyRef as a deprecated alias of spec.cryptoKeyRef (its kind config's aliases: "
    "{field: kmsKeyRef, apiField: cryptoKeyName, deprecated: true, reason}), or keep the surface"
)


def _slice(tmp: Path) -> Path:
    """PubSubTopic and the KMS Kinds its kmsKeyRef names: a generation of seconds."""
    specs = tmp / "specs"
    shutil.copytree(REPO / "specs", specs, ignore=shutil.ignore_patterns("__pycache__"))
    (specs / "retired-kinds.yaml").unlink(missing_ok=True)  # renamedTo Kinds the slice does not generate
    (specs / "accepted-changes.yaml").unlink(missing_ok=True)
    for f in (specs / "kinds").glob("*.yaml"):
        if f.name != "cloudkms.yaml":
            f.unlink()
    kms = specs / "kinds" / "cloudkms.yaml"
    kms.write_text(re.sub(r"(?m)^auto: true\n", "", kms.read_text(encoding="utf-8")), encoding="utf-8")
    (specs / "kinds" / "pubsub.yaml").write_text(TOPIC, encoding="utf-8")
    keep_claims(specs, {"pubsub", "cloudkms"}, derived=False)
    return specs


def runner(root: Path, specs: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``kccgen ARGS`` on ``root`` and ``specs``, in a process of its own."""
    cmd = [sys.executable, "-m", "kccgen.generator.cli", "--root", str(root), "--specs", str(specs)]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*cmd, *args], capture_output=True, text=True, check=False, timeout=600)

    return run


def _tree(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for sub in ("generated", "surface") for p in (root / sub).rglob("*") if p.is_file()}


def test_a_renamed_field_fails_generate_and_check_until_accepted(tmp_path: Path) -> None:
    specs = _slice(tmp_path)
    root = tmp_path / "repo"
    run = runner(root, specs)

    r = run("generate", "--force")
    assert r.returncode == 0, r.stderr
    record = root / "surface" / "pubsub.v1.json"
    assert '"spec.kmsKeyRef": "object ref=KMSCryptoKey api=kmsKeyName"' in record.read_text(encoding="utf-8")

    doc_path = specs / "discovery" / "pubsub.v1.json"
    doc = json.loads(doc_path.read_text(encoding="utf-8"))
    props = doc["schemas"]["Topic"]["properties"]
    props["cryptoKeyName"] = props.pop("kmsKeyName")
    doc_path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    before = _tree(root)

    r = run("check")
    assert r.returncode == 1
    assert LINE in r.stderr.splitlines(), r.stderr
    r = run("generate", "--force")
    assert r.returncode == 2
    assert [line for line in r.stderr.splitlines() if line.startswith("error:")] == [LINE]
    assert _tree(root) == before  # nothing written

    (specs / "accepted-changes.yaml").write_text(
        "changes:\n  - kind: PubSubTopic\n    path: spec.kmsKeyRef\n    change: removed\n"
        "    reason: the test renames the API field\n",
        encoding="utf-8",
    )
    r = run("generate")
    assert r.returncode == 0, r.stderr
    text = record.read_text(encoding="utf-8")
    assert '"spec.cryptoKeyRef": "object ref=KMSCryptoKey api=cryptoKeyName"' in text and "spec.kmsKeyRef" not in text
    # the record now holds the change: the entry stays, with its reason, and check passes
    r = run("check")
    assert r.returncode == 0, r.stderr


def test_a_renamed_field_kept_as_a_deprecated_alias(tmp_path: Path) -> None:
    """The preferred answer to a rename: the alias the error names keeps the old
    path (same type, same reference), so no entry is needed and manifests apply."""
    specs = _slice(tmp_path)
    root = tmp_path / "repo"
    run = runner(root, specs)

    assert run("generate", "--force").returncode == 0
    doc_path = specs / "discovery" / "pubsub.v1.json"
    doc = json.loads(doc_path.read_text(encoding="utf-8"))
    props = doc["schemas"]["Topic"]["properties"]
    props["cryptoKeyName"] = props.pop("kmsKeyName")
    doc_path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    (specs / "kinds" / "pubsub.yaml").write_text(
        TOPIC + "    aliases:\n      - {field: kmsKeyRef, apiField: cryptoKeyName, deprecated: true, reason: Topic.kmsKeyName was renamed}\n",
        encoding="utf-8",
    )
    r = run("generate")
    assert r.returncode == 0, r.stderr
    text = (root / "surface" / "pubsub.v1.json").read_text(encoding="utf-8")
    assert '"spec.kmsKeyRef": "object ref=KMSCryptoKey' in text and '"spec.cryptoKeyRef": "object ref=KMSCryptoKey api=cryptoKeyName"' in text
    crd = next((root / "generated" / "crds").glob("*pubsubtopics*.yaml")).read_text(encoding="utf-8")
    assert "Deprecated: the API renamed this field; use spec.cryptoKeyRef" in crd
    assert run("check").returncode == 0
