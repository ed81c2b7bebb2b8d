"""The IAM Kinds (issue 29, point 1): IAMPolicy, IAMPartialPolicy, IAMPolicyMember and
IAMAuditConfig on mockgcp. Each owns its part of a resource's policy and nothing
else; concurrent writers (several kccctl processes, conflicts injected on a third
of the writes) end with exactly the union; an up-to-date object costs one read;
what no call can fix is refused before any call.

Not covered here: the operator beside the kccctl processes (the operator runs the
same Reconciler, whose read-modify-write is what this test exercises)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kccgen.contract import Owns
from kccgen.mockgcp import MockServer
from kccgen.runtime.adapter import adapter_for, policy_for
from kccgen.runtime.iam import Want, as_sets, merged, principal_problem, static_problems
from kccgen.runtime.reconciler import Reconciler
from kccgen.runtime.refs import InMemoryStore
from kccgen.runtime.registry import kind_index

REPO = Path(__file__).resolve().parents[1]
IAM = "iam.cnrm.cloud.google.com/v1beta1"


def _obj(kind: str, name: str, spec: dict[str, Any], api: str = IAM, **ann: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if ann:
        meta["annotations"] = ann
    return {"apiVersion": api, "kind": kind, "metadata": meta, "spec": spec}


BUCKET = _obj("StorageBucket", "b1", {"location": "US"}, "storage.cnrm.cloud.google.com/v1beta1", **{"cnrm.cloud.google.com/project-id": "p1"})
BUCKET_REF = {"kind": "StorageBucket", "name": "b1"}


def _member(i: int) -> dict[str, Any]:
    return _obj("IAMPolicyMember", f"m{i:02d}", {"member": f"user:u{i:02d}@example.com", "role": "roles/storage.objectViewer", "resourceRef": BUCKET_REF})


PARTIAL = _obj(
    "IAMPartialPolicy",
    "pp",
    {"resourceRef": BUCKET_REF, "bindings": [{"role": "roles/storage.admin", "members": [{"member": "group:admins@example.com"}]}, {"role": "roles/storage.objectViewer", "members": [{"member": "domain:example.com"}]}]},
)


# --- the policy arithmetic ---------------------------------------------------------------------


def test_a_member_is_added_and_removed_without_touching_the_others() -> None:
    live = {"etag": "e", "bindings": [{"role": "roles/a", "members": ["user:x@example.com"]}]}
    w = Want({("roles/a", ""): {"user:y@example.com"}}, {})
    assert as_sets(merged(live, w)["bindings"]) == {("roles/a", ""): {"user:x@example.com", "user:y@example.com"}}
    assert as_sets(merged(merged(live, w), w, removing=True)["bindings"]) == {("roles/a", ""): {"user:x@example.com"}}


def test_a_condition_makes_another_binding_entry() -> None:
    cond = {"title": "t", "expression": "true"}
    w = Want(as_sets([{"role": "roles/a", "members": ["user:x@example.com"], "condition": cond}]), {})
    out = merged({"bindings": [{"role": "roles/a", "members": ["user:x@example.com"]}]}, w)
    assert len(out["bindings"]) == 2 and any(b.get("condition") == cond for b in out["bindings"])
    assert merged(out, w, removing=True)["bindings"] == [{"role": "roles/a", "members": ["user:x@example.com"]}]


def test_the_whole_policy_replaces_and_an_audit_config_owns_one_service() -> None:
    live = {"bindings": [{"role": "roles/a", "members": ["user:x@example.com"]}], "auditConfigs": [{"service": "s1", "auditLogConfigs": [{"logType": "DATA_READ"}]}]}
    whole = Want({("roles/b", ""): {"user:y@example.com"}}, {}, whole=True, audit={}, audit_whole=True)
    assert merged(live, whole) == {"bindings": [{"role": "roles/b", "members": ["user:y@example.com"]}]}
    one = Want({}, {}, audit={"s2": [("ADMIN_READ", ())]})
    both = merged(live, one)
    assert [a["service"] for a in both["auditConfigs"]] == ["s1", "s2"]
    assert [a["service"] for a in merged(both, one, removing=True)["auditConfigs"]] == ["s1"]


@pytest.mark.parametrize("member", ["user:a@example.com", "serviceAccount:x@p.iam.gserviceaccount.com", "allUsers", "principalSet://iam.googleapis.com/x", "domain:example.com"])
def test_principals(member: str) -> None:
    assert principal_problem(member) is None


@pytest.mark.parametrize("member", ["a@example.com", "user:", "everyone", "user:a b"])
def test_not_principals(member: str) -> None:
    assert principal_problem(member) is not None


# --- refused before any call ------------------------------------------------------------------


class _NoCalls:
    """A GCP client that fails the test on any call."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"a GCP call was made: {name}")


def _no_iam_kind() -> str:
    for kind in kind_index():
        if policy_for(kind) is None and adapter_for(kind).iam is None:
            return kind
    raise AssertionError("every Kind has IAM methods")


def _refused(obj: dict[str, Any]) -> str:
    store = InMemoryStore([BUCKET | {"status": {"externalRef": "b1"}}])
    r = Reconciler(_NoCalls(), store).reconcile(obj)  # type: ignore[arg-type]
    assert not r.ready
    p = policy_for(str(obj["kind"]))
    assert p is not None and static_problems(obj, p), "the admission check refuses it too"
    return r.message


def test_a_kind_without_policy_methods_is_refused_by_name() -> None:
    kind = _no_iam_kind()
    msg = _refused(_obj("IAMPolicyMember", "x", {"member": "user:a@example.com", "role": "roles/viewer", "resourceRef": {"kind": kind, "name": "y"}}))
    assert kind in msg and "no IAM policy methods" in msg


def test_a_member_that_is_no_principal_is_refused_by_name() -> None:
    msg = _refused(_obj("IAMPolicyMember", "x", {"member": "jane@example.com", "role": "roles/viewer", "resourceRef": BUCKET_REF}))
    assert "spec.member" in msg and "jane@example.com" in msg


def test_a_condition_without_a_title_is_refused() -> None:
    msg = _refused(_obj("IAMPartialPolicy", "x", {"resourceRef": BUCKET_REF, "bindings": [{"role": "roles/viewer", "condition": {"expression": "true"}, "members": [{"member": "user:a@example.com"}]}]}))
    assert "spec.bindings[0].condition.title" in msg


def test_the_four_kinds_are_served_with_config_connectors_group() -> None:
    owns = {k: p.owns for k in kind_index() if (p := policy_for(k)) is not None}
    assert owns == {"IAMAuditConfig": Owns.AUDIT_CONFIG, "IAMPartialPolicy": Owns.BINDINGS, "IAMPolicy": Owns.POLICY, "IAMPolicyMember": Owns.MEMBER}
    assert {kind_index()[k]["apiVersion"] for k in owns} == {IAM}


# --- on mockgcp ---------------------------------------------------------------------------------


def _kccctl(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "kccgen.runtime.cli", *args], cwd=REPO, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)


def _bucket_policy(s: MockServer) -> dict[tuple[str, str], set[str]]:
    key = next(k for k in s.engine.policies if k.endswith("b1"))
    return as_sets(s.engine.policies[key].get("bindings"))


def _sets(log: list[Any]) -> list[str]:
    return [e.url for e in log if ":setIamPolicy" in e.url or (e.url.split("?")[0].endswith("/iam") and e.method == "PUT")]


def test_concurrent_writers_end_with_exactly_the_union(tmp_path: Path) -> None:
    members = [_member(i) for i in range(20)]
    files = []
    for n, part in enumerate((members[0:7], members[7:14], [*members[14:20], PARTIAL])):
        f = tmp_path / f"part{n}.yaml"
        f.write_text(yaml.safe_dump_all([BUCKET, *part]), encoding="utf-8")
        files.append(f)
    with MockServer() as s:
        # the bucket first, so the three processes race on its policy alone
        first = _kccctl("apply", "-f", str(files[0]), "--state", str(tmp_path / "s0"), "--endpoint", s.base_url, "--project", "p1", "--host-paths")
        assert first.wait(300) == 0, first.stdout.read() if first.stdout else ""
        conflicts = s.engine.faults.add(method="storage.buckets.setIamPolicy", status=412, message="etag mismatch", probability=1 / 3)
        procs = [
            _kccctl("apply", "-f", str(f), "--state", str(tmp_path / f"s{n}"), "--endpoint", s.base_url, "--project", "p1", "--host-paths")
            for n, f in enumerate(files)
        ]
        outs = [(p.wait(300), p.stdout.read() if p.stdout else "") for p in procs]
        assert all(code == 0 for code, _ in outs), outs
        assert conflicts.fired > 0, "no conflict was injected"
        want = {("roles/storage.objectViewer", ""): {f"user:u{i:02d}@example.com" for i in range(20)} | {"domain:example.com"}, ("roles/storage.admin", ""): {"group:admins@example.com"}}
        assert _bucket_policy(s) == want

        # up to date: one read per object, no write
        s.engine.faults.rules.clear()
        before = len(s.log)
        again = _kccctl("apply", "-f", str(files[1]), "--state", str(tmp_path / "s1"), "--endpoint", s.base_url, "--project", "p1", "--host-paths")
        assert again.wait(300) == 0
        new = s.log[before:]
        assert not _sets(new)
        assert sum(1 for e in new if e.url.split("?")[0].endswith("/iam")) == 7

        # deleting ten members leaves the other ten and the partial policy's bindings
        gone = [f"iampolicymember/m{i:02d}" for i in range(10)]
        outs = []
        for n, names in ((0, gone[:7]), (1, gone[7:])):
            d = _kccctl("delete", *names, "--state", str(tmp_path / f"s{n}"), "--endpoint", s.base_url, "--project", "p1", "--host-paths")
            outs.append((d.wait(300), d.stdout.read() if d.stdout else ""))
        assert all(code == 0 for code, _ in outs), outs
        want[("roles/storage.objectViewer", "")] -= {f"user:u{i:02d}@example.com" for i in range(10)}
        assert _bucket_policy(s) == want


def test_project_and_organization_are_named_by_external(tmp_path: Path) -> None:
    objs = [
        _obj("IAMAuditConfig", "org", {"service": "allServices", "auditLogConfigs": [{"logType": "DATA_WRITE"}], "resourceRef": {"kind": "Organization", "external": "123456"}}),
        _obj("IAMPolicyMember", "proj", {"member": "user:a@example.com", "role": "roles/storage.admin", "resourceRef": {"kind": "Project", "external": "projects/p1"}}),
    ]
    f = tmp_path / "m.yaml"
    f.write_text(yaml.safe_dump_all(objs), encoding="utf-8")
    with MockServer() as s:
        p = _kccctl("apply", "-f", str(f), "--state", str(tmp_path / "s"), "--endpoint", s.base_url, "--project", "p1", "--host-paths")
        out = p.stdout.read() if p.stdout else ""
        assert p.wait(300) == 0, out
        policies = {k.split(":", 1)[-1] if ":" in k else k: v for k, v in s.engine.policies.items()}
        text = json.dumps(policies)
        assert "allServices" in text and "user:a@example.com" in text


def test_status_names_what_each_object_owns(tmp_path: Path) -> None:
    from kccgen.runtime.gcp import Gcp
    from kccgen.runtime.local import StateDir, apply

    cond = {"title": "t", "expression": 'request.time < timestamp("2030-01-01T00:00:00Z")'}
    member = _obj("IAMPolicyMember", "mc", {"member": "user:c@example.com", "role": "roles/storage.admin", "condition": cond, "resourceRef": BUCKET_REF})
    state = StateDir(tmp_path / "s")
    with MockServer() as s, state.lock():
        out = {r.name: res.obj for r, res in apply([BUCKET, member, PARTIAL], state, Gcp(s.base_url, host_paths=True), "p1")}
        policy = next(v for k, v in s.engine.policies.items() if k.endswith("b1"))
    assert out["mc"]["status"]["binding"] == {"role": "roles/storage.admin", "member": "user:c@example.com", "condition": cond}
    assert out["mc"]["status"]["observedGeneration"] == 1 and out["mc"]["status"]["externalRef"] == "b1"
    assert as_sets(out["pp"]["status"]["lastAppliedBindings"]) == {("roles/storage.admin", ""): {"group:admins@example.com"}, ("roles/storage.objectViewer", ""): {"domain:example.com"}}
    assert policy["version"] == 3 and any(b.get("condition") == cond for b in policy["bindings"])  # a condition is written as version 3
