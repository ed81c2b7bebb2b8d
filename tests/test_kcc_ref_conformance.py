"""Google Config Connector's own test fixtures against our reference rules.

For every ``create.yaml`` / ``update.yaml`` of our 14 Kinds under the KCC
fixtures (placeholders substituted):

1. ``check_object`` finds no reference error, except the ones listed in
   DOCUMENTED_DIFFERENCES with the same reason;
2. every reference-looking field of the fixture's spec (a key ending in
   ``Ref``/``Refs``, or an object / list of objects with only
   ``name``/``namespace``/``external``) is either a field of our reference
   table for that Kind or a documented difference, because ``check_object``
   only looks at OUR paths and a KCC naming difference would otherwise pass
   unnoticed;
3. every DOCUMENTED_DIFFERENCES entry is used at least once (the table cannot
   rot);
4. resolution: the fixture's dependencies.yaml goes into an InMemoryStore
   with the test Namespace (KCC's harness puts every object in namespace
   ``${uniqueId}``, annotated ``cnrm.cloud.google.com/project-id:
   ${projectId}``); each dependency of a Kind we generate gets
   ``status.externalRef = identity_from_spec(...)`` (repeated until stable,
   parents may come later in the file; Kinds we do not generate keep no
   externalRef), then every reference at a path of our table that is not a
   documented difference resolves through ``resolve_object`` to a canonical
   externalRef of its target.

A printed summary gives the counts (``pytest -s`` shows it).
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from kccgen.runtime.identity import identity_for
from kccgen.runtime.refs import (
    PROJECT_ID_ANNOTATION,
    InMemoryStore,
    Reason,
    RefError,
    check_object,
    identity_from_spec,
    iter_field,
    references_of,
    resolve_object,
)
from tests.conftest import REPO
from tests.support.kinds import CURATED_KINDS, GENERATED_KINDS, kcc_kinds

FIXTURES = REPO.parent / "shared" / "compat" / "kcc" / "fixtures"

pytestmark = pytest.mark.skipif(
    not FIXTURES.is_dir(), reason=f"KCC fixtures not found at {FIXTURES}"
)

# The curated Kinds: the fixtures are Config Connector's manifests for them.
OURS = frozenset(CURATED_KINDS)
# A derived Kind met as a dependency is written in Config Connector's shape, which may not be
# the API's (LoggingLink without spec.location): when its identity cannot be read from that
# object it keeps no externalRef, and a reference to it is counted, not failed.
GENERATED = frozenset(GENERATED_KINDS)

PROJECT = "example-project"
UNIQUE = "abc123"
PLACEHOLDERS = {
    "${projectId}": PROJECT,
    "${uniqueId}": UNIQUE,
    "${projectNumber}": "123456789012",
}
# KCC's test harness creates one namespace per test, named ${uniqueId} (see
# metadata.namespace in the _generated_object_*.golden.yaml files) and
# annotated with the project.
NAMESPACE = UNIQUE
NAMESPACE_OBJECT = {
    "apiVersion": "v1",
    "kind": "Namespace",
    "metadata": {"name": NAMESPACE, "annotations": {PROJECT_ID_ANNOTATION: PROJECT}},
}


@dataclass(frozen=True)
class Difference:
    """Why a KCC fixture's reference does not pass our rules as written."""

    why: str
    # The check_object reason it explains, for a path in our table; None: KCC
    # spells a reference field our table does not have (found by the walk).
    error: Reason | None = None


# Keyed by (Kind, spec path pattern): ``[]`` is a list step, ``*`` one map key.
DOCUMENTED_DIFFERENCES: dict[tuple[str, str], Difference] = {
    (
        "SecretManagerSecret",
        "spec.replication.auto.customerManagedEncryption.kmsKeyRef",
    ): Difference(
        "KCC's replication.auto is the API's replication.automatic "
        "(ours: spec.replication.automatic.customerManagedEncryption.kmsKeyRef)"
    ),
    ("ComputeSubnetwork", "spec.secondaryIpRange[].reservedInternalRangeRef"): Difference(
        "KCC's secondaryIpRange[] is the API's secondaryIpRanges[] "
        "(ours: spec.secondaryIpRanges[].reservedInternalRangeRef, external only)"
    ),
    ("MonitoringNotificationChannel", "spec.sensitiveLabels.*.valueFrom.secretKeyRef"): Difference(
        "a Kubernetes Secret key selector (name + key), not a GCP resource reference"
    ),
    ("MonitoringAlertPolicy", "spec.notificationChannels"): Difference(
        "KCC's notificationChannels (a list of {name}) is our notificationChannelRefs"
    ),
}


@cache
def _pattern(p: str) -> re.Pattern[str]:
    return re.compile("^" + re.escape(p).replace(r"\*", r"[^.\[\]]+") + "$")


def generic(path: str) -> str:
    """``spec.topics[0].topicRef`` -> ``spec.topics[].topicRef``."""
    return re.sub(r"\[\d+\]", "[]", path)


def documented(kind: str, path: str) -> tuple[str, str] | None:
    """The DOCUMENTED_DIFFERENCES key covering a (generic or concrete) path."""
    g = generic(path)
    hits = [
        key
        for key in DOCUMENTED_DIFFERENCES
        if key[0] == kind and (_pattern(key[1]).match(g) or _pattern(key[1] + "[]").match(g))
    ]
    assert len(hits) <= 1, f"{kind} {path}: several documented differences match: {hits}"
    return hits[0] if hits else None


def our_paths(kind: str) -> set[str]:
    return {f"spec.{f.path}" for f in references_of(kind)}


# --- fixtures on disk -----------------------------------------------------------------


def substitute(text: str) -> str:
    for k, v in PLACEHOLDERS.items():
        text = text.replace(k, v)
    return text


def load_docs(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [d for d in yaml.safe_load_all(substitute(path.read_text(encoding="utf-8"))) if d]


def in_namespace(obj: dict[str, Any]) -> dict[str, Any]:
    obj.setdefault("metadata", {}).setdefault("namespace", NAMESPACE)
    return obj


@dataclass(frozen=True)
class Doc:
    case: str  # fixture directory relative to FIXTURES
    file: str  # create.yaml / update.yaml
    obj: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.obj["kind"])

    def __str__(self) -> str:
        return f"{self.case}/{self.file} {self.kind}"


def case_dirs() -> list[Path]:
    return sorted({p.parent for p in FIXTURES.rglob("create.yaml")})


def case_docs(case: Path) -> list[Doc]:
    rel = case.relative_to(FIXTURES).as_posix()
    return [
        Doc(rel, name, in_namespace(d))
        for name in ("create.yaml", "update.yaml")
        for d in load_docs(case / name)
        if d.get("kind") in OURS
    ]


# --- reference-looking fields of a spec --------------------------------------------------

REF_KEYS = frozenset({"name", "namespace", "external"})


def _ref_shaped(v: object) -> bool:
    return (
        isinstance(v, Mapping)
        and bool(v)
        and set(v) <= REF_KEYS
        and ("name" in v or "external" in v)
        and all(isinstance(x, str) for x in v.values())
    )


def ref_occurrences(spec: Mapping[str, Any]) -> Iterator[tuple[str, str, Any]]:
    """(generic path, concrete path, value) of every reference-looking field."""

    def walk(node: Any, g: str, c: str) -> Iterator[tuple[str, str, Any]]:
        if isinstance(node, Mapping):
            for k, v in node.items():
                gk, ck = f"{g}.{k}", f"{c}.{k}"
                is_list_of_refs = isinstance(v, list) and bool(v) and all(_ref_shaped(i) for i in v)
                if str(k).endswith(("Ref", "Refs")) or _ref_shaped(v) or is_list_of_refs:
                    yield gk, ck, v
                else:
                    yield from walk(v, gk, ck)
        elif isinstance(node, list):
            for i, item in enumerate(node):
                yield from walk(item, f"{g}[]", f"{c}[{i}]")

    yield from walk(spec, "spec", "spec")


def n_refs(value: Any) -> int:
    return len(value) if isinstance(value, list) else 1


# --- the store a reconciler would see once dependencies are ready -------------------------


def dependency_store(case: Path) -> InMemoryStore:
    store = InMemoryStore([NAMESPACE_OBJECT], default_namespace=NAMESPACE)
    for d in load_docs(case / "dependencies.yaml"):
        store.add(in_namespace(d))
    changed = True
    while changed:
        changed = False
        for obj in store.objects():
            if obj["kind"] not in GENERATED or (obj.get("status") or {}).get("externalRef"):
                continue
            try:
                ext = identity_from_spec(obj, store)
            except RefError as e:
                if obj["kind"] not in OURS and e.reason != Reason.NOT_READY:
                    continue  # a derived Kind in Config Connector's shape
                assert e.reason == Reason.NOT_READY, (
                    f"{case.name}: {obj['kind']} {obj['metadata']['name']}: {e}"
                )
                continue  # a parent that is not ready yet; next round
            if ext:  # None: a service-generated ID (MonitoringNotificationChannel)
                obj.setdefault("status", {})["externalRef"] = ext
                store.add(obj)
                changed = True
    return store


def _delete(obj: dict[str, Any], concrete: str) -> None:
    """Remove the value at a concrete path such as ``spec.a[0].bRef``."""
    steps: list[str | int] = []
    for part in concrete.split("."):
        m = re.fullmatch(r"([^\[]+)((?:\[\d+\])*)", part)
        assert m, concrete
        steps.append(m.group(1))
        steps.extend(int(i) for i in re.findall(r"\[(\d+)\]", m.group(2)))
    node: Any = obj
    for s in steps[:-1]:
        node = node[s]
    del node[steps[-1]]


# --- one pass over everything, shared by the tests ------------------------------------------


@dataclass
class Analysis:
    cases: int = 0
    docs: list[Doc] = field(default_factory=list)
    kinds: set[str] = field(default_factory=set)
    leftover_placeholders: list[str] = field(default_factory=list)
    refs_found: int = 0  # reference values in the fixtures' specs (list entries counted)
    refs_in_our_table: int = 0
    undocumented_errors: list[str] = field(default_factory=list)
    unknown_ref_fields: list[str] = field(default_factory=list)
    used: Counter[tuple[str, str]] = field(default_factory=Counter)
    resolution_failures: list[str] = field(default_factory=list)
    # references to a derived Kind whose fixture object is in Config Connector's shape
    kcc_shaped_targets: list[str] = field(default_factory=list)
    resolved_by_name: list[tuple[Doc, str, str, str, Mapping[str, Any]]] = field(
        default_factory=list
    )
    resolved_by_external: list[tuple[Doc, str, str]] = field(default_factory=list)


def _name_refs(obj: Mapping[str, Any]) -> Iterator[tuple[str, str, dict[str, Any] | list[Any]]]:
    """(concrete path, target, value) of refs written with name at our paths."""
    spec = obj.get("spec") or {}
    for f in references_of(str(obj["kind"])):
        for where, value in iter_field(spec, f.path):
            items = value if f.many and isinstance(value, list) else [value]
            if any(isinstance(i, Mapping) and i.get("name") for i in items):
                yield f"spec.{where}", f.target, value


@pytest.fixture(scope="module")
def analysis() -> Analysis:
    a = Analysis()
    for case in case_dirs():
        docs = case_docs(case)
        if not docs:
            continue
        a.cases += 1
        for name in ("create.yaml", "update.yaml", "dependencies.yaml"):
            src = case / name
            if src.is_file() and "${" in substitute(src.read_text(encoding="utf-8")):
                a.leftover_placeholders.append(f"{case.relative_to(FIXTURES)}/{name}")
        store = dependency_store(case)
        for doc in docs:
            a.docs.append(doc)
            a.kinds.add(doc.kind)
            ours = our_paths(doc.kind)

            # 1. check_object: every error is a documented difference with that reason.
            errors = check_object(doc.obj)
            for e in errors:
                key = documented(doc.kind, e.path)
                if key is None or DOCUMENTED_DIFFERENCES[key].error != e.reason:
                    a.undocumented_errors.append(f"{doc}: {e.path}: {e.reason}: {e.message}")
                else:
                    a.used[key] += 1

            # 2. reference-looking fields: ours, or documented.
            for g, c, value in ref_occurrences(doc.obj.get("spec") or {}):
                a.refs_found += n_refs(value)
                if g in ours:
                    a.refs_in_our_table += n_refs(value)
                    continue
                key = documented(doc.kind, g)
                if key is None or DOCUMENTED_DIFFERENCES[key].error is not None:
                    a.unknown_ref_fields.append(
                        f"{doc}: {c} = {value!r} is not in our table {sorted(ours)}"
                    )
                else:
                    a.used[key] += 1

            # 4. resolution (documented differences at our paths left out).
            obj = copy.deepcopy(doc.obj)
            for e in sorted(errors, key=lambda e: e.path, reverse=True):
                if documented(doc.kind, e.path):
                    _delete(obj, e.path)
            try:
                resolved = resolve_object(obj, store)
            except RefError as e:
                target = next((f.target for f in references_of(doc.kind) if e.path == f"spec.{f.path}"), "")
                if e.reason == Reason.NOT_READY and target in GENERATED - OURS:
                    a.kcc_shaped_targets.append(f"{doc}: {e.path}: {target}")
                    continue
                a.resolution_failures.append(f"{doc}: {e.path}: {e.reason}: {e.message}")
                continue
            by_name = {p: (target, value) for p, target, value in _name_refs(obj)}
            for p, ext in resolved.items():
                if p in by_name:
                    target, value = by_name[p]
                    refs = value if isinstance(value, list) else [value]
                    exts = ext if isinstance(ext, list) else [ext]
                    for ref, one in zip(refs, exts, strict=True):
                        dep = store.get(
                            target, str(ref.get("namespace") or NAMESPACE), str(ref["name"])
                        )
                        assert dep is not None
                        a.resolved_by_name.append((doc, p, target, one, dep))
                else:
                    for one in ext if isinstance(ext, list) else [ext]:
                        a.resolved_by_external.append((doc, p, one))
    return a


# --- tests ----------------------------------------------------------------------------


def test_fixtures_cover_every_kind_config_connector_shares(analysis: Analysis) -> None:
    shared = OURS & kcc_kinds()
    assert shared and analysis.kinds == shared, f"no fixture for {sorted(shared - analysis.kinds)}"


def test_every_placeholder_is_substituted(analysis: Analysis) -> None:
    assert analysis.leftover_placeholders == []


def test_check_object_errors_are_documented_differences(analysis: Analysis) -> None:
    assert analysis.undocumented_errors == [], "\n".join(analysis.undocumented_errors)


def test_reference_fields_are_in_our_table_or_documented(analysis: Analysis) -> None:
    assert analysis.unknown_ref_fields == [], "\n".join(analysis.unknown_ref_fields)


def test_every_documented_difference_is_used(analysis: Analysis) -> None:
    unused = sorted(set(DOCUMENTED_DIFFERENCES) - set(analysis.used))
    assert unused == [], f"documented differences no fixture needs any more: {unused}"


def test_documented_differences_are_consistent_with_our_tables() -> None:
    """Error entries name a path we have; naming entries a path we do not have."""
    for (kind, pattern), diff in DOCUMENTED_DIFFERENCES.items():
        assert kind in OURS, kind
        assert diff.why and "\n" not in diff.why
        in_table = any(_pattern(pattern).match(p) for p in our_paths(kind))
        assert in_table == (diff.error is not None), (kind, pattern, diff)


def test_named_references_resolve_to_canonical_external_refs(analysis: Analysis) -> None:
    assert analysis.resolution_failures == [], "\n".join(analysis.resolution_failures)
    assert analysis.resolved_by_name, "no name reference resolved"
    for doc, path, target, ext, dep in analysis.resolved_by_name:
        ident = identity_for(target)
        assert ident.normalize(ext) == ext, (str(doc), path, ext)
        params = ident.parse(ext)
        # The ID is the referenced object's resourceID, else its metadata.name.
        own_id = ident.params[-1]
        assert params[own_id] == (
            (dep.get("spec") or {}).get("resourceID") or dep["metadata"]["name"]
        ), (str(doc), path, ext)
        if "project" in params:
            assert params["project"] == PROJECT, (str(doc), path, ext)
    for doc, path, ext in analysis.resolved_by_external:
        target = next(
            f.target for f in references_of(doc.kind) if generic(path) == f"spec.{f.path}"
        )
        assert identity_for(target).normalize(ext) == ext, (str(doc), path, ext)


# Fully spelled out, one per target Kind the fixtures reference by name.
SPOT_CHECKS = {
    (
        "basic/pubsub/v1beta1/pubsubsubscription/pubsubsubscription-push",
        "spec.topicRef",
    ): "projects/example-project/topics/pubsubtopic-abc123",
    (
        "basic/pubsub/v1beta1/pubsubtopic/pubsubtopic",
        "spec.schemaSettings.schemaRef",
    ): "projects/example-project/schemas/pubsubschema-abc123",
    (
        "basic/pubsub/v1beta1/pubsubsubscription/pubsubsubscription-cloudstorage",
        "spec.cloudStorageConfig.bucketRef",
    ): "storagebucket-1-abc123",
    (
        "basic/compute/v1beta1/computesubnetwork/computesubnetwork",
        "spec.networkRef",
    ): "projects/example-project/global/networks/computenetwork-abc123",
    (
        "basic/dns/v1beta1/dnsmanagedzone/dnsmanagedzone",
        "spec.privateVisibilityConfig.networks[0].networkRef",
    ): "projects/example-project/global/networks/default",
    (
        "basic/kms/v1beta1/kmscryptokey/kmscryptokey",
        "spec.keyRingRef",
    ): "projects/example-project/locations/us-central1/keyRings/kmscryptokey-abc123",
    (
        "basic/secretmanager/v1beta1/secretmanagersecret/fullsecretmanagersecret-manual-direct",
        "spec.replication.userManaged.replicas[0].customerManagedEncryption.kmsKeyRef",
    ): "projects/example-project/locations/us-central1/keyRings/kmskeyring-abc123/cryptoKeys/kmscryptokey-abc123",
    (
        "basic/artifactregistry/v1beta1/artifactregistryrepository/artifactregistryrepository",
        "spec.virtualRepositoryConfig.upstreamPolicies[0].repositoryRef",
    ): "projects/example-project/locations/us-west1/repositories/arrepository-abc123-2",
    (
        "basic/storage/v1beta1/storagebucket/storagebucketipfilter",
        "spec.ipFilter.vpcNetworkSources[0].networkRef",
    ): "projects/example-project/global/networks/computenetwork-abc123",
}


def test_resolution_spot_checks(analysis: Analysis) -> None:
    got = {
        (doc.case, path): ext
        for doc, path, _, ext, _ in analysis.resolved_by_name
        if doc.file == "create.yaml"
    }
    for key, want in SPOT_CHECKS.items():
        assert got.get(key) == want, key


def test_identity_matches_kcc_recorded_external_ref() -> None:
    """Where KCC recorded status.externalRef, identity_from_spec computes the same."""
    store = InMemoryStore([NAMESPACE_OBJECT], default_namespace=NAMESPACE)
    seen = 0
    for golden in sorted(FIXTURES.rglob("_generated_object_*.golden.yaml")):
        for obj in load_docs(golden):
            want = (obj.get("status") or {}).get("externalRef")
            if obj.get("kind") not in OURS or not want:
                continue
            seen += 1
            spec_only = {k: v for k, v in obj.items() if k != "status"}
            assert identity_from_spec(spec_only, store) == want, golden.relative_to(FIXTURES)
    assert seen > 0


def test_print_summary(analysis: Analysis) -> None:
    used = sum(analysis.used.values())
    lines = [
        "KCC reference conformance:",
        f"  fixtures (case directories with one of our Kinds): {analysis.cases}",
        f"  documents checked (create.yaml/update.yaml): {len(analysis.docs)} covering {len(analysis.kinds)} Kinds",
        f"  reference values found in specs: {analysis.refs_found} "
        f"({analysis.refs_in_our_table} at paths of our tables, checked by check_object)",
        f"  references resolved: {len(analysis.resolved_by_name)} by name, {len(analysis.resolved_by_external)} by external",
        f"  references to derived Kinds in Config Connector's shape (not resolved): {len(analysis.kcc_shaped_targets)}",
        *(f"    {line}" for line in analysis.kcc_shaped_targets),
        f"  documented differences used: {len(analysis.used)}/{len(DOCUMENTED_DIFFERENCES)} entries, {used} occurrences",
        *(f"    {kind} {pattern}: {n}" for (kind, pattern), n in sorted(analysis.used.items())),
    ]
    print("\n" + "\n".join(lines))
    assert analysis.cases > 0
