"""The reference graph (``kccgen refs``) and how kind-config reference entries fail.

The graph tests run ``python -m kccgen.generator.cli refs --format json`` once and
check the reference fields every Kind must have (Kind, ``spec.<path>``,
target Kind, form), and that the printed graph is the table the runtime
enforces (``kccgen.runtime.refs.references_of``).

The negative tests copy specs/ into a temporary root, change one
``references:`` entry of a kind config and run ``generate``:

* removing the PubSubTopic veto of ``ingestionDataSourceSettings.awsMsk.topic``
  does NOT fail: the name signal ("field name 'topic' is PubSubTopic's ID")
  silently turns the Kafka topic name into a wrong ``awsMsk.topicRef`` to
  PubSubTopic (about 10 s: a full generate);
* removing the ``conditions[].name`` veto of MonitoringAlertPolicy, naming an
  API path that does not exist, or naming an unknown target Kind each stop the
  generation with exit 2 and one ``error: specs/kinds/<api>.yaml#/kinds/N/...``
  line, leaving generated/ untouched (about 1 s each).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kccgen.runtime.refs import references_of
from tests.conftest import REPO
from tests.support.cli import Run
from tests.support.kinds import CURATED_KINDS, GENERATED_KINDS, refs
from tests.support.specs import curated_specs

OURS = GENERATED_KINDS
NAME = "external | name"
EXTERNAL_ONLY = "external only"


def kccgen(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kccgen.generator.cli", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


@pytest.fixture(scope="module")
def graph() -> list[dict[str, str]]:
    r = kccgen("refs", "--format", "json")
    assert r.returncode == 0, r.stderr
    rows: list[dict[str, str]] = json.loads(r.stdout)
    assert rows and all(
        set(row) == {"kind", "path", "target", "form", "api_path", "source"} for row in rows
    )
    return rows


def _index(rows: list[dict[str, str]]) -> dict[tuple[str, str], dict[str, str]]:
    out: dict[tuple[str, str], dict[str, str]] = {}
    for row in rows:
        key = (row["kind"], row["path"])
        assert key not in out, f"duplicate graph row {key}"
        out[key] = row
    return out


# --- the graph -------------------------------------------------------------------


def test_graph_covers_exactly_our_kinds(graph: list[dict[str, str]]) -> None:
    """Every curated Kind has reference rows; a derived Kind without a parent reference may have none."""
    kinds = {row["kind"] for row in graph}
    assert kinds <= set(OURS)
    assert set(CURATED_KINDS) <= kinds


@pytest.mark.parametrize("kind", CURATED_KINDS)
def test_graph_has_exactly_the_kinds_references(graph: list[dict[str, str]], kind: str) -> None:
    """tests/kinds/<Kind>/refs.yaml lists every reference field: none lost, none new."""
    printed = sorted((r["path"], r["target"], r["form"]) for r in graph if r["kind"] == kind)
    assert printed == sorted((r.path, r.target, r.form) for r in refs(kind).references)
    for row in graph:
        assert row["api_path"] and row["source"], row


def test_crypto_key_has_no_project_ref(graph: list[dict[str, str]]) -> None:
    rows = _index(graph)
    assert ("KMSCryptoKey", "spec.projectRef") not in rows
    assert rows[("KMSCryptoKey", "spec.keyRingRef")]["api_path"] == "{keyRing}"


# Kinds whose projectRef a kind config names on an API field (not the identity's {project})
CONFIGURED_PROJECT_REFS = frozenset({"ApigeeOrganization"})


def test_project_refs_come_from_the_identity_template(graph: list[dict[str, str]]) -> None:
    for row in graph:
        if row["path"] == "spec.projectRef":
            assert row["target"] == "Project", row
            if row["source"].startswith("config: "):
                # a kind config's: the create's ?parent=projects/P of an ApigeeOrganization
                assert row["kind"] in CONFIGURED_PROJECT_REFS, row
                continue
            # {project}, or the identity's other project (a Shared VPC service project's {serviceProject})
            assert re.fullmatch(r"\{\w*[pP]roject\}", row["api_path"]), row
            assert row["source"].startswith(f"identity parameter {row['api_path']} of "), row


def test_graph_is_the_table_the_runtime_enforces(graph: list[dict[str, str]]) -> None:
    """What ``kccgen refs`` prints is what ``check_object``/``resolve_object`` walk."""
    for kind in OURS:
        printed = {
            row["path"].removeprefix("spec."): (
                row["target"],
                row["api_path"],
                row["form"].startswith(EXTERNAL_ONLY),
                row["form"].endswith(", list"),
            )
            for row in graph
            if row["kind"] == kind
        }
        runtime = {
            f.path: (f.target, f.api_path, f.external_only, f.many) for f in references_of(kind)
        }
        assert printed == runtime, kind


# --- kind-config references: what a missing, wrong or stale entry does ---------------

SENTINEL = "generated/SENTINEL.txt"


def generate(root: Path) -> Run:
    r = kccgen("--root", str(root), "--specs", str(root / "specs"), "generate")
    return Run(r.returncode, r.stdout, r.stderr)


def edit(path: Path, old: str, new: str) -> None:
    """Replace exactly one occurrence (fails loudly when the spec changed under the test)."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path.name}: expected one {old!r}, found {text.count(old)}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted((root / "generated").rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def root(tmp_path: Path) -> Path:
    curated_specs(tmp_path)
    (tmp_path / "generated").mkdir()
    (tmp_path / SENTINEL).write_text("generate must not touch this tree on bad input\n")
    return tmp_path


def assert_one_line_error(
    root: Path, before: dict[str, bytes], run: Run, where: str, *needles: str
) -> str:
    assert run.code == 2, (run.code, run.stdout, run.stderr)
    assert "Traceback" not in run.stderr
    assert len(run.lines) == 1, run.stderr
    line = run.lines[0]
    assert line.startswith(f"error: {where}: "), line
    for needle in needles:
        assert needle in line, (needle, line)
    assert str(root) not in line, "paths in messages are relative"
    assert tree(root) == before, "generated/ was touched"
    return line


def test_removing_aws_msk_veto_silently_infers_a_wrong_topic_ref(root: Path) -> None:
    """Real behaviour: no error. The veto is load-bearing; without it the name
    signal makes the Amazon MSK (Kafka) topic a PubSubTopic reference."""
    edit(
        root / "specs/kinds/pubsub.yaml",
        '      ingestionDataSourceSettings.awsMsk.topic: {target: none, reason: "an Amazon MSK (Kafka) topic name, not a Pub/Sub topic"}\n',
        "",
    )

    run = generate(root)

    assert run.code == 0, run.stderr
    assert not any(line.startswith("error:") for line in run.stderr.splitlines()), run.stderr
    (module,) = (root / "generated").rglob("pubsubtopic_reference.py")
    table = module.read_text(encoding="utf-8")
    assert 'path="ingestionDataSourceSettings.awsMsk.topicRef"' in table
    assert 'api_path="ingestionDataSourceSettings.awsMsk.topic"' in table
    # The sibling Confluent Cloud veto is untouched, so that field stays plain.
    assert "confluentCloud.topicRef" not in table

    r = kccgen("--root", str(root), "--specs", str(root / "specs"), "refs", "--format", "json")
    assert r.returncode == 0, r.stderr
    rows = _index(json.loads(r.stdout))
    wrong = rows[("PubSubTopic", "spec.ingestionDataSourceSettings.awsMsk.topicRef")]
    assert wrong["target"] == "PubSubTopic"
    assert wrong["form"] == NAME
    assert wrong["api_path"] == "ingestionDataSourceSettings.awsMsk.topic"
    assert wrong["source"] == "field name 'topic' is PubSubTopic's ID"
    assert ("PubSubTopic", "spec.ingestionDataSourceSettings.confluentCloud.topicRef") not in rows


def test_removing_conditions_name_veto_is_an_unclassified_reference(root: Path) -> None:
    edit(
        root / "specs/kinds/monitoring.yaml",
        "    references:\n"
        "      conditions[].name:\n"
        "        target: none\n"
        '        reason: "the condition\'s own name, assigned by Cloud Monitoring when the condition is created"\n',
        "",
    )
    before = tree(root)

    run = generate(root)

    assert_one_line_error(
        root,
        before,
        run,
        "specs/kinds/monitoring.yaml#/kinds/0/references",
        "MonitoringAlertPolicy: 1 field(s) look like references but are not classified",
        "conditions[].name: description names 'projects/[PROJECT_ID_OR_NUMBER]/alertPolicies/[POLICY_ID]/conditions/[CONDITION_ID]'",
        "no Kind or asset type has that shape",
    )


def test_reference_entry_for_a_path_that_does_not_exist(root: Path) -> None:
    edit(
        root / "specs/kinds/pubsub.yaml",
        '      messageTransforms[].javascriptUdf.functionName: {target: none, reason: "a JavaScript function name inside the UDF code"}\n'
        "  - kind: PubSubSubscription\n",
        '      messageTransforms[].javascriptUdf.functionName: {target: none, reason: "a JavaScript function name inside the UDF code"}\n'
        '      schemaSettings.noSuchField: {target: PubSubSchema, reason: "a path the Topic schema does not have"}\n'
        "  - kind: PubSubSubscription\n",
    )
    before = tree(root)

    run = generate(root)

    assert_one_line_error(
        root,
        before,
        run,
        "specs/kinds/pubsub.yaml#/kinds/0/references/schemaSettings.noSuchField",
        "PubSubTopic: 'schemaSettings.noSuchField' is not a string field of Topic reachable from spec",
    )


def test_reference_entry_with_unknown_target_kind(root: Path) -> None:
    edit(
        root / "specs/kinds/pubsub.yaml",
        'bigqueryConfig.table: {target: BigQueryTable, reason: "BigQuery table the subscription writes to"}',
        'bigqueryConfig.table: {target: NoSuchKind, reason: "BigQuery table the subscription writes to"}',
    )
    before = tree(root)

    run = generate(root)

    assert_one_line_error(
        root,
        before,
        run,
        "specs/kinds/pubsub.yaml#/kinds/1/references/bigqueryConfig.table/target",
        "PubSubSubscription:",
        "target 'NoSuchKind' is neither a generated Kind nor in specs/external-kinds.yaml",
    )
