"""``kccgen bundle``: the operator's install bundle, a kustomize directory.

The bundle is data, not a template: every object is built here as a Python
value and serialized with ``yaml.safe_dump(sort_keys=True)``, so two runs give
the same bytes and a reviewer reads one function per object. The CRDs are the
generated ones, copied byte for byte. What the bundle selects (CRDs, RBAC
rules, webhook rules, the operator's ``--crd-pattern``) follows from one
pattern through ``kccgen.patterns``, the rule the operator applies too, so the
operator never watches a Kind it has no permission or CRD for.

RBAC is least privilege: the selected resources by name (their ``status`` and
``finalizers`` subresources), what the operator reads about the cluster (CRDs,
namespaces), its events, ``get`` of the Secrets sensitive fields name, its own webhook configuration (by name, to write the
caBundle). No leases: one replica, no leader election. No
wildcard anywhere and no create/delete on the managed Kinds: users create and
delete those objects; the operator only reconciles them.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kccgen import data_dir
from kccgen.generator.write import write_tree
from kccgen.patterns import globs, problem, selects

NAME = "kccgen"
OPERATOR = "kccgen-operator"  # Deployment, ServiceAccount and RBAC objects
WEBHOOK_SERVICE = "kccgen-webhook"
WEBHOOK_CONFIG = "kccgen-validating"
WEBHOOK_NAME = "validate.kccgen.dev"  # a webhook's name must have three DNS labels
WEBHOOK_PATH = "/validate"
DEFAULT_NAMESPACE = "kccgen-system"
DEFAULT_IMAGE = "kccgen-operator:0.1.0"
HEALTH_PORT = 8080
WEBHOOK_PORT = 9443
KUSTOMIZATION = "kustomization.yaml"

# The operator reconciles objects users create: read and watch them, patch
# their annotations, finalizers and spec (server-side apply is a patch), and
# their status; never create, update (PUT) or delete them. tests/test_operator.py
# checks every request the operator makes on a real API server against these.
RESOURCE_VERBS = ["get", "list", "watch", "patch"]
STATUS_VERBS = ["patch"]
FINALIZER_VERBS = ["patch"]

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


class BundleError(ValueError):
    """An input the bundle cannot be built from; the message is one line for stderr."""


@dataclass(frozen=True)
class Options:
    """What ``kccgen bundle``'s flags choose; the defaults install everything."""

    pattern: str | None = None
    namespace: str = DEFAULT_NAMESPACE
    image: str = DEFAULT_IMAGE
    project: str | None = None
    endpoint: str | None = None
    gcp_service_account: str | None = None


@dataclass(frozen=True)
class KindEntry:
    """One Kind of ``generated/kinds.json``: what the bundle needs of it."""

    kind: str
    group: str
    plural: str
    versions: tuple[str, ...]  # served
    crd: str  # path under generated/: crds/<plural>.<group>.yaml


def generated_dir(root: Path) -> Path:
    """``ROOT/generated`` in a checkout, else the Kinds installed with kccgen."""
    local = root / "generated"
    return local if (local / "kinds.json").is_file() else data_dir("generated")


def load_kinds(generated: Path) -> list[KindEntry]:
    """Every Kind of ``kinds.json``. The plural comes from the CRD's file name
    (``<plural>.<group>.yaml``, the CRD's own name), which spares parsing 40 MB of
    CRDs; a file named otherwise is an error, not a guess."""
    index = generated / "kinds.json"
    try:
        raw: dict[str, dict[str, Any]] = json.loads(index.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise BundleError(f"{index}: cannot read the Kind index ({e}); run `kccgen generate`") from e
    out = []
    for kind, entry in sorted(raw.items()):
        group, _, _ = str(entry["apiVersion"]).partition("/")
        crd = str(entry["crd"])
        name = Path(crd).name.removesuffix(".yaml")
        plural = name.removesuffix(f".{group}")
        if not crd.startswith("crds/") or plural == name or not plural:
            raise BundleError(f"{index}#/{kind}/crd: {crd!r} is not crds/<plural>.{group}.yaml")
        out.append(KindEntry(kind, group, plural, tuple(entry["servedVersions"]), crd))
    return out


def select_kinds(kinds: Iterable[KindEntry], pattern: str | None) -> list[KindEntry]:
    """The Kinds ``pattern`` selects; a malformed pattern, or one that selects
    nothing (a typo installs an operator that does nothing), is an error."""
    shown = pattern if pattern is not None else "*"
    why = problem(pattern)
    if why is not None:
        raise BundleError(f"--crd-pattern {shown!r}: {why}")
    all_kinds = list(kinds)
    chosen = [k for k in all_kinds if selects(pattern, k.kind, k.group)]
    if not chosen:
        raise BundleError(f"--crd-pattern {shown!r} selects none of the {len(all_kinds)} generated Kinds")
    return chosen


def _check_options(opts: Options) -> None:
    if not _DNS_LABEL.match(opts.namespace):
        raise BundleError(f"--namespace {opts.namespace!r} is not a DNS label (lower-case letters, digits, '-')")
    if not opts.image.strip() or any(c.isspace() for c in opts.image):
        raise BundleError(f"--image {opts.image!r}: give an image reference without spaces")
    if opts.gcp_service_account is not None and "@" not in opts.gcp_service_account:
        raise BundleError(f"--gcp-service-account {opts.gcp_service_account!r} is not a service account email")


def _labels(component: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": NAME, "app.kubernetes.io/component": component}


def _meta(name: str, component: str, namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": _labels(component)}
    if namespace is not None:
        meta["namespace"] = namespace
    return meta


def _by_group(kinds: Iterable[KindEntry]) -> dict[str, list[KindEntry]]:
    groups: dict[str, list[KindEntry]] = defaultdict(list)
    for k in kinds:
        groups[k.group].append(k)
    return {g: sorted(ks, key=lambda k: k.plural) for g, ks in sorted(groups.items())}


#: ``get`` of Secrets, for a bundle whose Kinds have sensitive fields (no list or watch).
SECRETS_RULE: dict[str, Any] = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}


def cluster_rules(kinds: Iterable[KindEntry], reads_secrets: bool = False) -> list[dict[str, Any]]:
    """The ClusterRole's rules: fixed cluster reads first, then three per group.
    ``reads_secrets``: a selected Kind has a sensitive field (valueFrom.secretKeyRef)."""
    rules: list[dict[str, Any]] = [
        # kopf and the operator discover which selected CRDs are installed.
        {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": ["get", "list", "watch"]},
        # Namespace annotations: cnrm.cloud.google.com/project-id, actuation-mode pause.
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["events"], "verbs": ["create"]},
        # Leader election: one replica of the installation reconciles (kccgen.runtime.election).
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "create", "update"]},
        # Only its own webhook configuration, to write the caBundle at start.
        {
            "apiGroups": ["admissionregistration.k8s.io"],
            "resources": ["validatingwebhookconfigurations"],
            "resourceNames": [WEBHOOK_CONFIG],
            "verbs": ["get", "patch"],
        },
    ]
    if reads_secrets:  # only the Secrets a sensitive field names, read when it reconciles
        rules.append(SECRETS_RULE)
    for group, ks in _by_group(kinds).items():
        plurals = [k.plural for k in ks]
        rules.append({"apiGroups": [group], "resources": plurals, "verbs": list(RESOURCE_VERBS)})
        rules.append({"apiGroups": [group], "resources": [f"{p}/status" for p in plurals], "verbs": list(STATUS_VERBS)})
        rules.append({"apiGroups": [group], "resources": [f"{p}/finalizers" for p in plurals], "verbs": list(FINALIZER_VERBS)})
    return rules


def webhook_rules(kinds: Iterable[KindEntry]) -> list[dict[str, Any]]:
    """One rule per group and set of served versions, so the rules match exactly
    the (group, version, plural) triples the CRDs serve, not a cross product."""
    rules = []
    for group, ks in _by_group(kinds).items():
        by_versions: dict[tuple[str, ...], list[str]] = defaultdict(list)
        for k in ks:
            by_versions[tuple(sorted(k.versions))].append(k.plural)
        for versions, plurals in sorted(by_versions.items()):
            rules.append({
                "apiGroups": [group],
                "apiVersions": list(versions),
                "operations": ["CREATE", "UPDATE"],
                "resources": sorted(plurals),
            })
    return rules


def operator_command(opts: Options) -> list[str]:
    """The container's command: the same pattern the bundle was cut with."""
    pattern = ";".join(globs(opts.pattern))
    cmd = [
        "kccctl", "operator",
        "--crd-pattern", pattern,
        "--health-port", str(HEALTH_PORT),
        "--metrics-bind", "0.0.0.0",  # the kubelet's probes reach the pod's address
        "--webhook-port", str(WEBHOOK_PORT),
        "--webhook-service", WEBHOOK_SERVICE,
        "--webhook-namespace", opts.namespace,
        "--webhook-config", WEBHOOK_CONFIG,
    ]
    if opts.project is not None:
        cmd += ["--project", opts.project]
    if opts.endpoint is not None:
        cmd += ["--endpoint", opts.endpoint]
    return cmd


def _namespace(opts: Options) -> dict[str, Any]:
    meta = _meta(opts.namespace, "operator")
    # The operator's pod meets the restricted Pod Security Standard; say so.
    meta["labels"]["pod-security.kubernetes.io/enforce"] = "restricted"
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


def _service_account(opts: Options) -> dict[str, Any]:
    meta = _meta(OPERATOR, "operator", opts.namespace)
    if opts.gcp_service_account is not None:  # GKE workload identity, only when asked
        meta["annotations"] = {"iam.gke.io/gcp-service-account": opts.gcp_service_account}
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta}


def _rbac(kinds: list[KindEntry], opts: Options, reads_secrets: bool = False) -> list[dict[str, Any]]:
    subject = [{"kind": "ServiceAccount", "name": OPERATOR, "namespace": opts.namespace}]
    rbac = "rbac.authorization.k8s.io"
    return [
        {"apiVersion": f"{rbac}/v1", "kind": "ClusterRole", "metadata": _meta(OPERATOR, "rbac"), "rules": cluster_rules(kinds, reads_secrets)},
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "ClusterRoleBinding",
            "metadata": _meta(OPERATOR, "rbac"),
            "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": OPERATOR},
            "subjects": subject,
        },
    ]


def _deployment(opts: Options) -> dict[str, Any]:
    selector = _labels("operator")
    probe = {"initialDelaySeconds": 5, "periodSeconds": 10, "timeoutSeconds": 5}
    container = {
        "name": "operator",
        "image": opts.image,
        "imagePullPolicy": "IfNotPresent",
        "command": operator_command(opts),
        "ports": [
            {"name": "http-metrics", "containerPort": HEALTH_PORT, "protocol": "TCP"},
            {"name": "webhook", "containerPort": WEBHOOK_PORT, "protocol": "TCP"},
        ],
        # Loading a thousand adapters takes a while: liveness waits longer than readiness.
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": HEALTH_PORT}, **probe, "initialDelaySeconds": 30, "failureThreshold": 3},
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": HEALTH_PORT}, **probe},
        "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"cpu": "1", "memory": "1Gi"}},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "readOnlyRootFilesystem": True,
            "runAsNonRoot": True,
        },
        # The root file system is read-only; Python and the webhook's certificate need a /tmp.
        "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(OPERATOR, "operator", opts.namespace),
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": _labels("operator")},
                "spec": {
                    "serviceAccountName": OPERATOR,
                    # A numeric user: the kubelet can check runAsNonRoot whatever the image's USER.
                    "securityContext": {"runAsNonRoot": True, "runAsUser": 65532, "runAsGroup": 65532, "seccompProfile": {"type": "RuntimeDefault"}},
                    "containers": [container],
                    "volumes": [{"name": "tmp", "emptyDir": {}}],
                },
            },
        },
    }


def _service(opts: Options) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _meta(WEBHOOK_SERVICE, "webhook", opts.namespace),
        "spec": {
            "selector": _labels("operator"),
            "ports": [{"name": "webhook", "port": 443, "targetPort": WEBHOOK_PORT, "protocol": "TCP"}],
        },
    }


def _webhook(kinds: list[KindEntry], opts: Options) -> dict[str, Any]:
    # No caBundle: the operator writes it at start. Leaving the field out (not "")
    # means re-applying the bundle does not wipe the operator's certificate.
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": _meta(WEBHOOK_CONFIG, "webhook"),
        "webhooks": [{
            "name": WEBHOOK_NAME,
            "admissionReviewVersions": ["v1"],
            "clientConfig": {"service": {"name": WEBHOOK_SERVICE, "namespace": opts.namespace, "path": WEBHOOK_PATH, "port": 443}},
            "failurePolicy": "Fail",
            "rules": webhook_rules(kinds),
            "sideEffects": "None",
            "timeoutSeconds": 10,
        }],
    }


def _dump(objs: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(objs, sort_keys=True, default_flow_style=False)


def objects(kinds: list[KindEntry], opts: Options, reads_secrets: bool = False) -> dict[str, list[dict[str, Any]]]:
    """The bundle's own objects by file name (CRDs and the kustomization aside)."""
    return {
        "namespace.yaml": [_namespace(opts)],
        "serviceaccount.yaml": [_service_account(opts)],
        "rbac.yaml": _rbac(kinds, opts, reads_secrets),
        "deployment.yaml": [_deployment(opts)],
        "service.yaml": [_service(opts)],
        "webhook.yaml": [_webhook(kinds, opts)],
    }


def build(generated: Path, opts: Options) -> dict[str, str]:
    """Every file of the bundle (relative path -> text), nothing written."""
    _check_options(opts)
    kinds = select_kinds(load_kinds(generated), opts.pattern)
    files: dict[str, str] = {}
    for k in kinds:
        path = generated / k.crd
        try:  # bytes, not read_text: a copy must keep the file's exact line ends
            files[k.crd] = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise BundleError(f"{path}: cannot read the CRD of {k.kind} ({e}); run `kccgen generate`") from e
    reads_secrets = any("secretKeyRef:" in files[k.crd] for k in kinds)  # a sensitive field's CRD shape
    for name, objs in objects(kinds, opts, reads_secrets).items():
        files[name] = _dump(objs)
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "namespace": opts.namespace,
        "resources": sorted(files),
    }
    files[KUSTOMIZATION] = _dump([kustomization])
    return dict(sorted(files.items()))


def write_bundle(out: Path, files: dict[str, str]) -> None:
    """Replace ``out`` with exactly ``files`` (temp dir, then rename: a failure
    leaves the old bundle whole, and CRDs a narrower pattern dropped vanish). An
    existing non-empty directory that is not a bundle is refused, not replaced."""
    out = out.absolute()
    if not out.name:
        raise BundleError(f"--out {str(out)!r}: give a directory below /")
    if out.exists():
        if not out.is_dir():
            raise BundleError(f"--out {str(out)!r} exists and is not a directory")
        if any(out.iterdir()) and not (out / KUSTOMIZATION).is_file():
            raise BundleError(f"--out {str(out)!r} is not empty and holds no {KUSTOMIZATION}: not replacing it")
    try:
        write_tree(out.parent, {f"{out.name}/{rel}": text for rel, text in files.items()}, out.name)
    except OSError as e:
        raise BundleError(f"--out {str(out)!r}: cannot write the bundle ({e})") from e


def summary(out: Path, files: dict[str, str]) -> str:
    """The one line ``kccgen bundle`` prints."""
    crds = [p for p in files if p.startswith("crds/")]
    groups = {Path(p).name.removesuffix(".yaml").split(".", 1)[1] for p in crds}
    size = sum(len(t.encode("utf-8")) for t in files.values())
    return (
        f"wrote {out}: {len(crds)} CRDs in {len(groups)} groups, {len(files)} files, "
        f"{size / 1e6:.1f} MB; install with `kubectl apply --server-side -k {out}`"
    )

