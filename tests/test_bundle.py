"""``kccgen bundle``: the operator's install bundle.

What must hold, each checked against an oracle the bundle code does not share:

1. a pattern selects exactly the Kinds whose group it names (computed here from
   generated/kinds.json), and the RBAC and webhook rules name exactly those
   groups, versions and plurals (read from the copied CRDs themselves);
2. RBAC has no wildcard and binds nothing but its own roles;
3. two runs are byte-identical;
4. a bad pattern is exit 2, names the pattern, and leaves an old bundle whole;
5. every non-CRD object passes the Kubernetes API's OpenAPI models
   (tests/support/k8s_schema.py), and kustomize itself builds the directory;
6. the bundle's CRDs are Established on a real API server.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from kccgen.generator.cli import main
from tests.support import envtest as envtest_support
from tests.support.cli import REPO, run_module
from tests.support.envtest import Kube
from tests.support.k8s_schema import validate, validate_file

GENERATED = REPO / "generated"
KINDS: dict[str, dict[str, Any]] = json.loads((GENERATED / "kinds.json").read_text(encoding="utf-8"))
TWO = "pubsub;storage"
TWO_GROUPS = {"pubsub.cnrm.cloud.google.com", "storage.cnrm.cloud.google.com"}
OWN_FILES = ("deployment.yaml", "namespace.yaml", "rbac.yaml", "service.yaml", "serviceaccount.yaml", "webhook.yaml")
# Everything the operator may touch besides the selected Kinds (generator/bundle.py: least privilege).
FIXED_RULES = [
    {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": [""], "resources": ["events"], "verbs": ["create"]},
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "create", "update"]},
    {
        "apiGroups": ["admissionregistration.k8s.io"],
        "resources": ["validatingwebhookconfigurations"],
        "resourceNames": ["kccgen-validating"],
        "verbs": ["get", "patch"],
    },
]


def _group(kind: str) -> str:
    return str(KINDS[kind]["apiVersion"]).split("/")[0]


def bundle(out: Path, *args: str, capsys: pytest.CaptureFixture[str] | None = None) -> tuple[int, str]:
    """``kccgen bundle --out OUT ARGS`` in process; (exit code, stderr) when capsys is given."""
    code = main(["--root", str(REPO), "bundle", "--out", str(out), *args])
    err = capsys.readouterr().err if capsys is not None else ""
    return code, err


def tree(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def docs(d: Path, name: str) -> list[dict[str, Any]]:
    return [x for x in yaml.safe_load_all((d / name).read_text(encoding="utf-8")) if x is not None]


def one(d: Path, name: str) -> dict[str, Any]:
    (obj,) = docs(d, name)
    return obj


def by_kind(d: Path, name: str) -> dict[str, dict[str, Any]]:
    return {x["kind"]: x for x in docs(d, name)}


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("two") / "bundle"
    assert bundle(out, "--crd-pattern", TWO)[0] == 0
    return out


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every Kind, with every option set."""
    out = tmp_path_factory.mktemp("full") / "bundle"
    args = ["--namespace", "cnrm-ops", "--image", "registry.example/kccgen-operator:1.2.3", "--project", "my-proj",
            "--endpoint", "http://mockgcp.cnrm-ops:8080", "--gcp-service-account", "kcc@my-proj.iam.gserviceaccount.com"]
    assert bundle(out, *args)[0] == 0
    return out


# 1. selection: CRDs, RBAC and webhook name exactly the selected Kinds


def test_pattern_selects_exactly_the_kinds_of_its_groups(two: Path) -> None:
    expected = {k for k in KINDS if _group(k) in TWO_GROUPS}
    assert {_group(k) for k in expected} == TWO_GROUPS  # both services have Kinds
    files = {p.name for p in (two / "crds").iterdir()}
    assert files == {Path(KINDS[k]["crd"]).name for k in expected}
    for k in expected:  # byte-identical copies
        assert (two / KINDS[k]["crd"]).read_bytes() == (GENERATED / KINDS[k]["crd"]).read_bytes(), k
    got = {yaml.safe_load((two / "crds" / f).read_text(encoding="utf-8"))["spec"]["names"]["kind"] for f in files}
    assert got == expected
    kust = one(two, "kustomization.yaml")
    assert kust["resources"] == sorted(kust["resources"])
    assert set(kust["resources"]) == set(tree(two)) - {"kustomization.yaml"}


def _served(d: Path) -> set[tuple[str, str, str]]:
    """(group, version, plural) the bundle's CRDs serve, read from the CRDs."""
    out = set()
    for f in (d / "crds").iterdir():
        crd = yaml.safe_load(f.read_text(encoding="utf-8"))
        for v in crd["spec"]["versions"]:
            if v["served"]:
                out.add((crd["spec"]["group"], v["name"], crd["spec"]["names"]["plural"]))
    return out


def test_rbac_and_webhook_name_exactly_the_selected_resources(two: Path) -> None:
    served = _served(two)
    assert {g for g, _, _ in served} == TWO_GROUPS
    plurals = {(g, p) for g, _, p in served}
    role = by_kind(two, "rbac.yaml")["ClusterRole"]
    kind_rules = [r for r in role["rules"] if r not in FIXED_RULES]
    granted: dict[tuple[str, str], list[str]] = {}
    for r in kind_rules:
        assert len(r["apiGroups"]) == 1 and "resourceNames" not in r, r
        for res in r["resources"]:
            key = (r["apiGroups"][0], res)
            assert key not in granted, f"{key} granted twice"
            granted[key] = r["verbs"]
    want = {}
    for g, p in plurals:
        want[(g, p)] = ["get", "list", "watch", "patch"]
        want[(g, f"{p}/status")] = ["patch"]
        want[(g, f"{p}/finalizers")] = ["patch"]
    assert granted == want
    (hook,) = one(two, "webhook.yaml")["webhooks"]
    matched = set()
    for r in hook["rules"]:
        assert r["operations"] == ["CREATE", "UPDATE"]
        matched |= {(g, v, p) for g in r["apiGroups"] for v in r["apiVersions"] for p in r["resources"]}
    assert matched == served


def test_operator_runs_with_the_bundles_pattern(two: Path) -> None:
    (c,) = one(two, "deployment.yaml")["spec"]["template"]["spec"]["containers"]
    assert c["command"] == [
        "kccctl", "operator", "--crd-pattern", TWO, "--health-port", "8080", "--metrics-bind", "0.0.0.0", "--webhook-port", "9443",
        "--webhook-service", "kccgen-webhook", "--webhook-namespace", "kccgen-system", "--webhook-config", "kccgen-validating",
    ]
    assert c["image"] == "kccgen-operator:0.1.0"


# 2. least privilege


@pytest.mark.parametrize("which", ["two", "full"])
def test_rbac_has_no_wildcard_and_no_foreign_binding(which: str, request: pytest.FixtureRequest) -> None:
    d: Path = request.getfixturevalue(which)
    objs = docs(d, "rbac.yaml")
    assert sorted(o["kind"] for o in objs) == ["ClusterRole", "ClusterRoleBinding"]
    for o in objs:
        for r in o.get("rules", []):
            assert set(r) <= {"apiGroups", "resources", "verbs", "resourceNames"}, r
            for key in ("apiGroups", "resources", "verbs", "resourceNames"):
                assert all("*" not in v for v in r.get(key, [])), (o["kind"], r)
    role, binding = (next(o for o in objs if o["kind"] == k) for k in ("ClusterRole", "ClusterRoleBinding"))
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role["metadata"]["name"]}
    assert role["metadata"]["name"] not in {"cluster-admin", "admin", "edit"}
    assert role["rules"][: len(FIXED_RULES)] == FIXED_RULES  # nothing else that is not a selected Kind
    ns = one(d, "namespace.yaml")["metadata"]["name"]
    for b in (o for o in objs if o["kind"].endswith("Binding")):
        assert b["subjects"] == [{"kind": "ServiceAccount", "name": "kccgen-operator", "namespace": ns}]


def test_secrets_are_readable_only_where_a_kind_has_a_sensitive_field(two: Path, full: Path) -> None:
    """Pub/Sub and Storage name no Secret; the full bundle has Kinds that do (SQLUser's password)."""
    rules = {which: by_kind(d, "rbac.yaml")["ClusterRole"]["rules"] for which, d in (("two", two), ("full", full))}
    secrets = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}
    assert secrets not in rules["two"]
    assert rules["full"][len(FIXED_RULES)] == secrets


def test_full_bundle_grants_every_kind(full: Path) -> None:
    role = by_kind(full, "rbac.yaml")["ClusterRole"]
    granted = {(g, r) for rule in role["rules"][len(FIXED_RULES):] for g in rule["apiGroups"] for r in rule["resources"]}
    assert {(_group(k), Path(v["crd"]).name.split(".")[0]) for k, v in KINDS.items()} <= granted
    assert len(list((full / "crds").iterdir())) == len(KINDS)


# 3. determinism


def test_two_runs_are_byte_identical(two: Path, tmp_path: Path) -> None:
    again = tmp_path / "elsewhere" / "again"
    assert bundle(again, "--crd-pattern", TWO)[0] == 0
    assert tree(again) == tree(two)
    for name, data in tree(again).items():  # no path of the run leaks into a file
        if not name.startswith("crds/"):
            assert str(tmp_path).encode() not in data and str(two).encode() not in data, name


def test_rerun_replaces_the_bundle(tmp_path: Path) -> None:
    out = tmp_path / "b"
    assert bundle(out, "--crd-pattern", TWO)[0] == 0
    assert bundle(out, "--crd-pattern", "pubsub")[0] == 0
    assert {p.name.split(".")[1] for p in (out / "crds").iterdir()} == {"pubsub"}  # storage CRDs gone
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]  # no temp dir left


# 4. bad input


@pytest.fixture
def existing(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    """A bundle already on disk, and its bytes."""
    out = tmp_path / "bundle"
    assert bundle(out, "--crd-pattern", "pubsub")[0] == 0
    return out, tree(out)


@pytest.mark.parametrize("pattern", ["nosuchservice", "pubsub/x/y", "!*", "pubsub;!pubsub", "!"])
def test_bad_pattern_is_exit_2_and_writes_nothing(
    pattern: str, existing: tuple[Path, dict[str, bytes]], capsys: pytest.CaptureFixture[str]
) -> None:
    out, before = existing
    code, err = bundle(out, "--crd-pattern", pattern, capsys=capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and repr(pattern) in lines[0], err
    assert tree(out) == before
    assert sorted(p.name for p in out.parent.iterdir()) == ["bundle"]


def test_bad_pattern_exit_code_from_the_command(tmp_path: Path) -> None:
    r = run_module("kccgen.generator.cli", "--root", str(REPO), "bundle", "--out", str(tmp_path / "b"), "--crd-pattern", "nosuchservice")
    assert r.code == 2 and "'nosuchservice'" in r.stderr and len(r.lines) == 1, r.stderr
    assert not (tmp_path / "b").exists()


def test_a_directory_that_is_no_bundle_is_not_replaced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    keep = tmp_path / "notes.txt"
    keep.write_text("mine\n")
    code, err = bundle(tmp_path, capsys=capsys)
    assert code == 2 and "kustomization.yaml" in err
    assert tree(tmp_path) == {"notes.txt": b"mine\n"}


@pytest.mark.parametrize(("flag", "value"), [("--namespace", "Not_A_Label"), ("--gcp-service-account", "nobody")])
def test_bad_option_is_exit_2(flag: str, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = bundle(tmp_path / "b", flag, value, capsys=capsys)
    assert code == 2 and flag in err and repr(value) in err
    assert not (tmp_path / "b").exists()


# 5. the objects are valid Kubernetes objects


@pytest.mark.parametrize("which", ["two", "full"])
def test_objects_pass_the_kubernetes_openapi_models(which: str, request: pytest.FixtureRequest) -> None:
    d: Path = request.getfixturevalue(which)
    kinds = []
    for name in OWN_FILES:
        assert validate_file(d / name) == [], name
        kinds += [o["kind"] for o in docs(d, name)]
    assert sorted(kinds) == sorted([
        "ClusterRole", "ClusterRoleBinding", "Deployment", "Namespace",
        "Service", "ServiceAccount", "ValidatingWebhookConfiguration",
    ])
    assert sorted(p.name for p in d.iterdir()) == sorted([*OWN_FILES, "crds", "kustomization.yaml"])


def test_validator_rejects_unknown_missing_and_mistyped(two: Path) -> None:
    dep = one(two, "deployment.yaml")
    assert validate(dep, "deployment.yaml") == []
    spec = dep["spec"]["template"]["spec"]
    spec["containers"][0]["foo"] = 1  # unknown key
    spec["containers"][0]["ports"][0]["container_port"] = 1  # a Python name, not the wire name
    del spec["containers"][0]["name"]  # required
    dep["spec"]["replicas"] = "1"  # wrong type
    dep["metadata"]["labels"]["x"] = 3  # wrong type in a map
    errors = validate(dep, "deployment.yaml")
    where = [e.split(":", 1)[0] for e in errors]
    assert where == sorted(set(where), key=where.index)  # one line per problem
    assert set(where) == {
        "deployment.yaml#/spec/template/spec/containers/0/foo",
        "deployment.yaml#/spec/template/spec/containers/0/ports/0/container_port",
        "deployment.yaml#/spec/template/spec/containers/0/name",
        "deployment.yaml#/spec/replicas",
        "deployment.yaml#/metadata/labels/x",
    }, errors
    hook = one(two, "webhook.yaml")
    del hook["webhooks"][0]["sideEffects"]
    assert validate(hook, "webhook.yaml") == ["webhook.yaml#/webhooks/0/sideEffects: Field required"]
    assert validate({"apiVersion": "v1", "kind": "Deployment", "metadata": {"name": "x"}}, "d.yaml") == ["d.yaml#/kind: v1 has no Kind Deployment"]


def test_kustomization_uses_only_known_fields(two: Path) -> None:
    kust = one(two, "kustomization.yaml")
    assert set(kust) <= {"apiVersion", "kind", "namespace", "resources", "labels", "commonLabels"}
    assert kust["apiVersion"] == "kustomize.config.k8s.io/v1beta1" and kust["kind"] == "Kustomization"
    assert kust["namespace"] == "kccgen-system"
    assert all(isinstance(r, str) and (two / r).is_file() for r in kust["resources"])


def test_every_object_is_labelled(full: Path) -> None:
    for name in OWN_FILES:
        for o in docs(full, name):
            labels = o["metadata"]["labels"]
            assert labels["app.kubernetes.io/name"] == "kccgen" and labels["app.kubernetes.io/component"], (name, o["kind"])


def test_deployment_is_locked_down(two: Path, full: Path) -> None:
    dep = one(two, "deployment.yaml")
    pod = dep["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    assert dep["spec"]["replicas"] == 1 and pod["serviceAccountName"] == one(two, "serviceaccount.yaml")["metadata"]["name"]
    assert dep["spec"]["selector"]["matchLabels"].items() <= dep["spec"]["template"]["metadata"]["labels"].items()
    assert {(p["name"], p["containerPort"]) for p in c["ports"]} == {("http-metrics", 8080), ("webhook", 9443)}
    assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": 8080}
    assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": 8080}
    assert set(c["resources"]) == {"requests", "limits"}
    sc = c["securityContext"]
    assert sc["runAsNonRoot"] and sc["readOnlyRootFilesystem"] and sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"] == {"drop": ["ALL"]}
    for d in (two, full):
        text = "".join((d / f).read_text() for f in OWN_FILES)
        assert "GOOGLE_APPLICATION_CREDENTIALS" not in text
    assert "annotations" not in one(two, "serviceaccount.yaml")["metadata"]
    assert one(full, "serviceaccount.yaml")["metadata"]["annotations"] == {"iam.gke.io/gcp-service-account": "kcc@my-proj.iam.gserviceaccount.com"}
    (fc,) = one(full, "deployment.yaml")["spec"]["template"]["spec"]["containers"]
    assert fc["image"] == "registry.example/kccgen-operator:1.2.3"
    assert fc["command"][-4:] == ["--project", "my-proj", "--endpoint", "http://mockgcp.cnrm-ops:8080"]
    assert fc["command"][fc["command"].index("--crd-pattern") + 1] == "*"
    assert fc["command"][fc["command"].index("--webhook-namespace") + 1] == "cnrm-ops"


def test_webhook_reaches_the_operator(two: Path) -> None:
    svc = one(two, "service.yaml")
    pod_labels = one(two, "deployment.yaml")["spec"]["template"]["metadata"]["labels"]
    assert svc["spec"]["selector"].items() <= pod_labels.items()
    assert svc["spec"]["ports"] == [{"name": "webhook", "port": 443, "targetPort": 9443, "protocol": "TCP"}]
    cfg = one(two, "webhook.yaml")
    assert cfg["metadata"]["name"] == "kccgen-validating"
    (hook,) = cfg["webhooks"]
    assert hook["clientConfig"] == {"service": {"name": svc["metadata"]["name"], "namespace": "kccgen-system", "path": "/validate", "port": 443}}
    assert (hook["sideEffects"], hook["admissionReviewVersions"], hook["failurePolicy"], hook["timeoutSeconds"]) == ("None", ["v1"], "Fail", 10)


def test_kustomize_builds_the_bundle(two: Path) -> None:
    """kustomize itself (kubectl kustomize, offline) reads the directory."""
    why = envtest_support.missing()
    if why is not None:
        pytest.skip(why)
    out = subprocess.run([str(envtest_support.assets() / "kubectl"), "kustomize", str(two)], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    built = [o for o in yaml.safe_load_all(out.stdout) if o]
    names = {(o["kind"], o["metadata"]["name"]) for o in built}
    own = {(o["kind"], o["metadata"]["name"]) for f in OWN_FILES for o in docs(two, f)}
    crds = {("CustomResourceDefinition", p.name.removesuffix(".yaml")) for p in (two / "crds").iterdir()}
    assert names == own | crds
    for o in built:
        if o["kind"] in {"Deployment", "Service", "ServiceAccount"}:
            assert o["metadata"]["namespace"] == "kccgen-system", o["kind"]


# 6. a real API server


def test_bundle_crds_are_established(envtest: Kube, two: Path) -> None:
    files = sorted((two / "crds").iterdir())
    names = {p.name.removesuffix(".yaml") for p in files}
    assert names == {Path(v["crd"]).name.removesuffix(".yaml") for k, v in KINDS.items() if _group(k) in TWO_GROUPS}
    before = set(envtest.established(set(), timeout=0))
    stderr = envtest.apply_files(files)
    assert stderr == "", stderr
    crds = envtest.established(names)
    assert {n for n in names if crds.get(n)} == names, {n: crds.get(n) for n in names}
    # Whatever else this worker's server holds, applying the bundle added only its own CRDs.
    assert set(crds) - before <= names
    if not any(n.endswith(".cnrm.cloud.google.com") for n in before):  # the server held no Kind before
        assert {n for n in crds if n.endswith(".cnrm.cloud.google.com")} == names

