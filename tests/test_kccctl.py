"""End to end: ``kccctl`` as a user runs it, in a subprocess.

``kccctl ref normalize KIND VALUE`` prints the canonical externalRef and exits
0, or prints one ``error: <Kind>: ...`` line on stderr and exits 2.
``kccctl kinds`` lists the Kinds this installation can reconcile.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kccgen.runtime.example import Examples
from kccgen.runtime.identity import known_kinds
from tests.conftest import REPO
from tests.support.cli import Run
from tests.support.kinds import GENERATED_KINDS, POLICY_KINDS, configured_kinds

SELF_LINK = "https://www.googleapis.com/compute/v1/projects/p/global/networks/n"
CONSOLE_SCRIPT = REPO / ".venv" / "bin" / "kccctl"




def kccctl(*args: str, exe: list[str] | None = None) -> Run:
    cmd = [*(exe or [sys.executable, "-m", "kccgen.runtime.cli"]), *args]
    r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False, timeout=120)
    return Run(r.returncode, r.stdout, r.stderr)


def test_acceptance_compute_self_link() -> None:
    r = kccctl("ref", "normalize", "ComputeNetwork", SELF_LINK)
    assert r.code == 0, r.stderr
    assert r.stdout == "projects/p/global/networks/n\n"
    assert r.stderr == ""


def test_acceptance_installed_console_script() -> None:
    if not CONSOLE_SCRIPT.exists():
        pytest.skip(f"{CONSOLE_SCRIPT} is not installed")
    r = kccctl("ref", "normalize", "ComputeNetwork", SELF_LINK, exe=[str(CONSOLE_SCRIPT)])
    assert r.code == 0, r.stderr
    assert r.stdout == "projects/p/global/networks/n\n"
    assert r.stderr == ""


@pytest.mark.parametrize(
    ("kind", "value", "expected"),
    [
        (
            "ComputeNetwork",
            "https://compute.googleapis.com/compute/beta/projects/p/global/networks/n",
            "projects/p/global/networks/n",
        ),
        (
            "ComputeSubnetwork",
            "https://www.googleapis.com/compute/v1/projects/p/regions/r/subnetworks/s",
            "projects/p/regions/r/subnetworks/s",
        ),
        ("StorageBucket", "gs://my-bucket", "my-bucket"),
        ("StorageBucket", "https://www.googleapis.com/storage/v1/b/my-bucket", "my-bucket"),
        ("PubSubTopic", "//pubsub.googleapis.com/projects/p/topics/t", "projects/p/topics/t"),
        (
            "PubSubTopic",
            "https://pubsub.googleapis.com/v1/projects/p/topics/t?alt=json",
            "projects/p/topics/t",
        ),
        (
            "MonitoringAlertPolicy",
            "projects/123456789/alertPolicies/987654321",
            "projects/123456789/alertPolicies/987654321",
        ),
        ("Project", "my-proj", "projects/my-proj"),
        ("Project", " 123456789\n", "projects/123456789"),
    ],
)
def test_normalize_prints_the_canonical_name(kind: str, value: str, expected: str) -> None:
    r = kccctl("ref", "normalize", kind, value)
    assert (r.code, r.stdout, r.stderr) == (0, expected + "\n", "")


@pytest.mark.parametrize(
    "value",
    [
        "projects/p/networks/n",
        "projects/p/global/networks/n/extra",
        "https://evil.example.com/compute/v1/projects/p/global/networks/n",
        "//pubsub.googleapis.com/projects/p/global/networks/n",
        "",
    ],
)
def test_normalize_invalid_value_exits_2_with_one_error_line(value: str) -> None:
    r = kccctl("ref", "normalize", "ComputeNetwork", value)
    assert r.code == 2
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    line = lines[0]
    assert line.startswith("error: ComputeNetwork: ")
    assert repr(value) in line
    assert "projects/{project}/global/networks/{network}" in line
    assert "Traceback" not in r.stderr


def test_normalize_unknown_kind_exits_2_with_a_suggestion() -> None:
    """A thousand Kinds are not listed in one line: the closest names and the count are."""
    r = kccctl("ref", "normalize", "NoSuchKind", "projects/p/things/t")
    assert r.code == 2
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0] == f"error: unknown Kind 'NoSuchKind' ({len(known_kinds())} Kinds known; `kccctl kinds` lists them)"
    typo = GENERATED_KINDS[0].lower()[:-1]  # lower case and one letter short
    r = kccctl("ref", "normalize", typo, "projects/p/things/t")
    assert r.code == 2
    assert f"error: unknown Kind {typo!r}; did you mean {GENERATED_KINDS[0]!r}" in r.stderr, r.stderr


def test_kinds_lists_the_generated_kinds() -> None:
    r = kccctl("kinds")
    assert r.code == 0, r.stderr
    assert r.stderr == ""
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    assert [row[0] for row in rows] == sorted((*GENERATED_KINDS, *POLICY_KINDS))  # the IAM Kinds too
    assert set(configured_kinds()) <= {row[0] for row in rows}
    for kind, module in rows:
        assert module.startswith("kccgen.generated.") and module.endswith(f".{kind.lower()}_types"), (
            kind,
            module,
        )
        assert (REPO / Path(*module.split(".")[1:])).with_suffix(".py").is_file()


def test_kinds_match_the_generated_types_modules_on_disk() -> None:
    on_disk = sorted(
        p.name.removesuffix("_types.py") for p in (REPO / "generated").glob("*/*/*_types.py")
    )
    assert on_disk == sorted(k.lower() for k in (*GENERATED_KINDS, *POLICY_KINDS))


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["ref"],
        ["ref", "normalize", "ComputeNetwork"],
        ["bogus"],
    ],
)
def test_usage_errors_exit_2(args: list[str]) -> None:
    r = kccctl(*args)
    assert r.code == 2
    assert r.stdout == ""
    assert "usage: kccctl" in r.stderr


def test_example_prints_dependencies_then_the_kind() -> None:
    import yaml

    kind = next(k for k in GENERATED_KINDS if len(Examples().manifests(k)) > 1)  # one with a dependency
    r = kccctl("example", kind, "--project", "my-proj")
    assert r.code == 0, r.stderr
    docs = list(yaml.safe_load_all(r.stdout))
    assert docs[-1]["kind"] == kind
    assert len(docs) > 1
    assert "projects/my-proj" in r.stdout
    bad = kccctl("example", "NoSuchKind")
    assert bad.code == 2 and "unknown Kind 'NoSuchKind'" in bad.stderr


def test_verify_writes_the_outcome_per_kind(tmp_path: Path) -> None:
    import json

    kind = GENERATED_KINDS[0]
    out = tmp_path / "verified.json"
    r = kccctl("verify", kind, "--write", str(out))
    assert r.code == 0, r.stdout + r.stderr
    assert f"{kind}\tPASS" in r.stdout
    assert json.loads(out.read_text())["kinds"][kind]["pass"] is True


def test_apply_with_host_paths_addresses_each_api_at_its_host(tmp_path: Path) -> None:
    import yaml

    from kccgen.mockgcp import MockServer

    kind = next(k for k in GENERATED_KINDS if len(Examples().manifests(k)) > 1)
    manifest = tmp_path / "example.yaml"
    manifest.write_text(yaml.safe_dump_all(Examples("host-proj").manifests(kind)), encoding="utf-8")
    with MockServer() as s:
        paths: list[str] = []
        serve = s._serve
        s._serve = lambda h: (paths.append(h.path), serve(h))[1]  # type: ignore[method-assign]
        common = ("-f", str(manifest), "--state", str(tmp_path / "state"), "--endpoint", s.base_url, "--host-paths")
        r = kccctl("apply", *common)
        assert r.code == 0, r.stdout + r.stderr
        assert paths and all(p.split("/")[1].endswith(".googleapis.com") for p in paths), paths
        d = kccctl("delete", *common)
        assert d.code == 0, d.stdout + d.stderr
