"""``kccgen parity``: field parity of our CRDs with Google Config Connector's.

Per Kind it compares the spec field paths of our CRD (from the IR's
mutability table, the source of truth for what the runtime reconciles) with
the spec of KCC's CRD for the same Kind (read from a directory of KCC CRD
YAML files, ``<plural>.<service>.yaml``):

* **shared**: the same path on both sides;
* **KCC-only**: a path only KCC spells, each with a reason computed by the
  rules below (first match wins). A path no rule explains is ``unexplained``:
  reasons are never guessed;
* **ours-only**: API-backed paths of our spec that KCC has under no name,
  the schema lag kccgen closes. Listed separately, not counted as lag: our
  counterparts of KCC's renamed fields, API fields KCC carries outside its
  spec (``ELSEWHERE``: labels taken from ``metadata.labels``, shown by KCC's
  recorded requests) and KRM-only fields KCC lacks (``projectRef`` where KCC
  uses the project-id annotation).

Rules for a KCC-only path, in order:

1. a curated entry of ``MAPPINGS`` (KCC path prefix -> our path, with the
   evidence). An entry only applies when it checks out: the KCC path must not
   exist in the Discovery schema (else it is no rename), and our counterpart
   must exist (or the method parameter it names must). A failing entry is a
   reported problem, never a silent explanation;
2. the KCC path is the API field our reference replaces (KCC keeps
   ``notificationChannels``; ours is ``notificationChannelRefs``);
3. a KCC ``<apiField>Ref`` for an API field our reference names differently;
4. our ``status.observedState`` has the path: the API makes it output-only;
5. it is a query parameter of the resource's create/update/delete method;
6. the Discovery schema has no such field at all: a KCC-only convenience;
7. otherwise ``unexplained``.

Paths are relative to ``spec``: ``a.b``, ``a[].b`` for list items, ``a.*.b``
for map values. ``*Ref`` fields and KCC's ``{name, namespace, external}``
reference objects are leaves. Output is sorted and contains no absolute path,
so the committed report is reproducible.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from kccgen.discovery.behaviours import Behaviour
from kccgen.discovery.document import DiscoveryDoc, JsonSchema
from kccgen.generator.ir.build import build_ir
from kccgen.generator.ir.model import IR, KindIR, MethodIR, MutabilityIR, ReferenceIR
from kccgen.generator.spec.loader import Specs, load_specs

STATUS = "status.observedState."

Category = Literal[
    "renamed-in-api",
    "kcc-rename",
    "kcc-flatten",
    "reference-naming",
    "output-only",
    "method-parameter",
    "kcc-only",
    "unexplained",
]

# Report order and meaning of each reason.
CATEGORIES: dict[Category, str] = {
    "renamed-in-api": "renamed in the API: KCC keeps the old name, the API keeps it only as a backward-compatible alias",
    "kcc-rename": "KCC renames the API field (the Discovery document has only the API name)",
    "kcc-flatten": "KCC flattens or restructures the API field (hoisted, list for map, enum for boolean...)",
    "reference-naming": "reference naming differs: same API field, another KRM field name",
    "output-only": "output-only in the API: ours is in status.observedState",
    "method-parameter": "an API method parameter, not a field of the resource",
    "kcc-only": "KCC-only convenience field: not in the Discovery schema",
    "unexplained": "unexplained: the API has the field and no rule accounts for KCC's path",
}


@dataclass(frozen=True)
class Mapping:
    """A curated correspondence between a KCC path and ours, with evidence.

    ``kcc`` is a path or a prefix: ``lifecycleRule`` also covers
    ``lifecycleRule[].action.type``, rewritten to ``ours`` + the rest
    (``lifecycle.rule[].action.type``). With ``subtree`` every path under
    ``kcc`` corresponds to ``ours`` as a whole. ``ours`` is relative to spec
    unless it starts with ``status.observedState.``; ``None`` for a method
    parameter (``param``: ``"delete:force"``) or a field with no counterpart.
    """

    kind: str
    kcc: str
    ours: str | None
    category: Category
    evidence: str
    subtree: bool = False
    param: str | None = None


# Evidence quotes the sources verbatim in double quotes (whitespace, quote marks
# and backticks aside): tests/test_parity.py finds each in the Kind's Discovery
# document or KCC CRD.
MAPPINGS: tuple[Mapping, ...] = (
    Mapping(
        "ArtifactRegistryRepository",
        "cleanupPolicies[]",
        "cleanupPolicies.*",
        "kcc-flatten",
        "Discovery artifactregistry.v1 Repository.cleanupPolicies is a map (additionalProperties: "
        'CleanupPolicy); KCC\'s CRD makes it a list, its description still says "Map keys are policy IDs"',
    ),
    Mapping(
        "ComputeNetwork",
        "routingMode",
        "routingConfig.routingMode",
        "kcc-flatten",
        "Discovery compute.v1 has routingMode only in NetworkRoutingConfig (Network.routingConfig); KCC "
        'hoists it to the top level, same description: "The network-wide routing mode to use"',
    ),
    Mapping(
        "ComputeSubnetwork",
        "secondaryIpRange",
        "secondaryIpRanges",
        "kcc-rename",
        "Discovery compute.v1 Subnetwork.secondaryIpRanges (array of SubnetworkSecondaryRange); "
        "KCC uses the singular Terraform block name secondary_ip_range",
    ),
    Mapping(
        "DNSManagedZone",
        "reverseLookup",
        "status.observedState.reverseLookupConfig",
        "kcc-flatten",
        'Discovery dns.v1 ManagedZone.reverseLookupConfig: "The presence of this field indicates that this '
        'is a managed reverse lookup zone"; its only property, kind, is readOnly, and KCC models the '
        "presence as a boolean. Ours has the object only in status.observedState (all its fields are "
        "output-only), so kccgen cannot request a reverse lookup zone: a gap on our side",
    ),
    Mapping(
        "MonitoringNotificationChannel",
        "forceDelete",
        None,
        "method-parameter",
        "the query parameter force of monitoring.projects.notificationChannels.delete, same description: "
        '"the notification channel will be deleted regardless of its use in alert policies"',
        param="delete:force",
    ),
    Mapping(
        "MonitoringNotificationChannel",
        "sensitiveLabels",
        "labels",
        "kcc-only",
        "Discovery monitoring.v3 NotificationChannel has no sensitiveLabels; KCC's CRD: \"The name of the "
        'field, eg: password, will be the key in the labels map in the api request" (values may come '
        "from Secrets)",
        subtree=True,
    ),
    Mapping(
        "SecretManagerSecret",
        "replication.auto",
        "replication.automatic",
        "kcc-rename",
        "Discovery secretmanager.v1 Replication has automatic (Automatic) and userManaged, no auto; "
        "KCC's own replication.automatic is a boolean (shape differs, below)",
    ),
    Mapping(
        "SpannerInstance",
        "numNodes",
        "nodeCount",
        "kcc-rename",
        'Discovery spanner.v1 Instance.nodeCount: "The number of nodes allocated to this instance"; '
        "no schema of spanner.v1 has numNodes (Terraform's num_nodes)",
    ),
    Mapping(
        "StorageBucket",
        "bucketPolicyOnly",
        "iamConfiguration.bucketPolicyOnly.enabled",
        "renamed-in-api",
        'Discovery storage.v1 Bucket.iamConfiguration.bucketPolicyOnly: "The feature was formerly known as '
        "Bucket Policy Only. For backward compatibility, this field will be populated with identical "
        'information as the uniformBucketLevelAccess field"; KCC\'s CRD: "this field has been renamed by Google"',
    ),
    Mapping(
        "StorageBucket",
        "uniformBucketLevelAccess",
        "iamConfiguration.uniformBucketLevelAccess.enabled",
        "kcc-flatten",
        "Discovery storage.v1 Bucket.iamConfiguration.uniformBucketLevelAccess.enabled; KCC hoists the boolean",
    ),
    Mapping(
        "StorageBucket",
        "publicAccessPrevention",
        "iamConfiguration.publicAccessPrevention",
        "kcc-flatten",
        "Discovery storage.v1 Bucket.iamConfiguration.publicAccessPrevention; KCC hoists it to the top level",
    ),
    Mapping(
        "StorageBucket",
        "requesterPays",
        "billing.requesterPays",
        "kcc-flatten",
        "Discovery storage.v1 Bucket.billing.requesterPays; KCC hoists it to the top level",
    ),
    Mapping(
        "StorageBucket",
        "lifecycleRule",
        "lifecycle.rule",
        "kcc-flatten",
        "Discovery storage.v1 Bucket.lifecycle.rule (array); KCC flattens lifecycle.rule to lifecycleRule",
    ),
    Mapping(
        "StorageBucket",
        "lifecycleRule[].condition.withState",
        "lifecycle.rule[].condition.isLive",
        "kcc-flatten",
        'Discovery storage.v1 Bucket.lifecycle.rule[].condition.isLive is a boolean: "If the value is true, '
        "this condition matches live objects; if the value is false, it matches archived objects\"; KCC's "
        'withState is a string over it: "Supported values include: LIVE, ARCHIVED, ANY."',
    ),
    Mapping(
        "StorageBucket",
        "encryption.kmsKeyRef",
        "encryption.defaultKmsKeyRef",
        "reference-naming",
        "Discovery storage.v1 Bucket.encryption.defaultKmsKeyName; KCC names the reference kmsKeyRef, "
        "ours is named after the API field",
    ),
)


@dataclass(frozen=True)
class Elsewhere:
    """An API field of our spec that KCC's CRD carries outside ``spec``.

    ``fixture`` is the KCC test fixture (below ``compat/kcc/fixtures``) whose
    recorded requests show it; tests/test_parity.py checks them.
    """

    kind: str
    ours: str
    kcc: str
    fixture: str

    @property
    def evidence(self) -> str:
        return (
            f"KCC's recorded requests (fixtures/{self.fixture}/_http.log) send {self.kcc} (with KCC's managed-by-cnrm) "
            f"as the API's {self.ours}"
        )


_LABELS = "metadata.labels"
ELSEWHERE: tuple[Elsewhere, ...] = (
    Elsewhere(
        "ArtifactRegistryRepository",
        "labels",
        _LABELS,
        "basic/artifactregistry/v1beta1/artifactregistryrepository/artifactregistryrepository",
    ),
    Elsewhere(
        "DNSManagedZone", "labels", _LABELS, "basic/dns/v1beta1/dnsmanagedzone/dnsmanagedzone"
    ),
    Elsewhere("KMSCryptoKey", "labels", _LABELS, "basic/kms/v1beta1/kmscryptokey/kmscryptokey"),
    Elsewhere(
        "MonitoringAlertPolicy",
        "userLabels",
        _LABELS,
        "basic/monitoring/v1beta1/monitoringalertpolicy/monitoringalertpolicy",
    ),
    Elsewhere(
        "MonitoringNotificationChannel",
        "userLabels",
        _LABELS,
        "basic/monitoring/v1beta1/monitoringnotificationchannel/monitoringnotificationchannel",
    ),
    Elsewhere(
        "PubSubSubscription",
        "labels",
        _LABELS,
        "basic/pubsub/v1beta1/pubsubsubscription/basicpubsubsubscription",
    ),
    Elsewhere("PubSubTopic", "labels", _LABELS, "basic/pubsub/v1beta1/pubsubtopic/pubsubtopic"),
    Elsewhere(
        "StorageBucket", "labels", _LABELS, "basic/storage/v1beta1/storagebucket/storagebucketbasic"
    ),
)


# --- KCC CRDs ------------------------------------------------------------------------

_REF_KEYS = frozenset({"external", "name", "namespace", "kind"})


@dataclass(frozen=True)
class KccField:
    path: str
    shape: str  # object / map / array / scalar / any
    ref: bool  # a reference leaf (*Ref, or a {name, namespace, external} object)


def _ref_like(node: dict[str, Any]) -> bool:
    props = node.get("properties")
    if not isinstance(props, dict) or not props or not set(props) <= _REF_KEYS:
        return False
    if "external" not in props and "name" not in props:
        return False
    return all(isinstance(v, dict) and v.get("type") == "string" for v in props.values())


def _kcc_shape(node: dict[str, Any]) -> str:
    t = node.get("type")
    if t == "array":
        return "array"
    if t == "object":
        return "map" if "additionalProperties" in node and "properties" not in node else "object"
    return "any" if t is None else "scalar"


def kcc_fields(spec: dict[str, Any]) -> list[KccField]:
    """Spec field paths of a KCC CRD's openAPIV3Schema ``spec`` node."""
    out: list[KccField] = []

    def props(node: dict[str, Any], prefix: str) -> None:
        for name in sorted(node.get("properties") or {}):
            sub = node["properties"][name]
            path = f"{prefix}.{name}" if prefix else name
            items = sub.get("items") if sub.get("type") == "array" else None
            ref = (
                name.endswith(("Ref", "Refs"))
                or _ref_like(sub)
                or (isinstance(items, dict) and _ref_like(items))
            )
            out.append(KccField(path, _kcc_shape(sub), ref))
            if not ref:
                descend(sub, path)

    def descend(node: dict[str, Any], path: str) -> None:
        if node.get("type") == "array" and isinstance(node.get("items"), dict):
            descend(node["items"], path + "[]")
        elif node.get("properties"):
            props(node, path)
        elif isinstance(node.get("additionalProperties"), dict) and node[
            "additionalProperties"
        ].get("properties"):
            props(node["additionalProperties"], path + ".*")

    props(spec, "")
    return out


@dataclass(frozen=True)
class KccCrd:
    file: str
    version: str  # the CRD version read (storage version, else the last)
    kcc_version: str  # cnrm.cloud.google.com/version annotation
    fields: tuple[KccField, ...]


def crd_file(kind: KindIR) -> str:
    return f"{kind.plural}.{kind.group.split('.')[0]}.yaml"


def load_kcc_crd(path: Path) -> KccCrd:
    # libyaml when present: the pure-Python loader takes ~0.1 s per CRD.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    doc: dict[str, Any] = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
    versions: list[dict[str, Any]] = doc["spec"]["versions"]
    version = next((v for v in versions if v.get("storage")), versions[-1])
    spec: dict[str, Any] = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    annotations = (doc.get("metadata") or {}).get("annotations") or {}
    return KccCrd(
        path.name,
        str(version["name"]),
        str(annotations.get("cnrm.cloud.google.com/version", "")),
        tuple(kcc_fields(spec)),
    )


# --- Discovery --------------------------------------------------------------------------


def _deref(doc: DiscoveryDoc, node: JsonSchema) -> JsonSchema:
    while node.ref is not None:
        node = doc.schemas[node.ref]
    return node


def discovery_lookup(doc: DiscoveryDoc, schema: str, path: str) -> tuple[JsonSchema | None, str]:
    """The Discovery schema node at ``path`` below ``schema``; else (None, why)."""
    node = doc.schemas[schema]
    walked = schema
    for seg in path.split("."):
        node = _deref(doc, node)
        if seg == "*":
            if node.additional_properties is None:
                return None, f"{walked} is not a map"
            node, walked = node.additional_properties, walked + ".*"
            continue
        name, lists = seg.split("[", 1)[0], seg.count("[]")
        if name not in node.properties:
            return None, f"{walked} has no property {name}"
        node, walked = node.properties[name], f"{walked}.{name}"
        for _ in range(lists):
            node = _deref(doc, node)
            if node.items is None:
                return None, f"{walked} is not a list"
            node, walked = node.items, walked + "[]"
    return _deref(doc, node), ""


def _property_anywhere(doc: DiscoveryDoc, name: str) -> bool:
    def walk(node: JsonSchema) -> bool:
        if name in node.properties:
            return True
        kids = [*node.properties.values(), node.items, node.additional_properties]
        return any(walk(k) for k in kids if k is not None)

    return any(walk(s) for s in doc.schemas.values())


# --- comparison -------------------------------------------------------------------------


@dataclass(frozen=True)
class KccOnly:
    path: str
    category: Category
    detail: str
    ours: str | None = None  # our counterpart (relative to spec, or a status.observedState path)


@dataclass(frozen=True)
class ShapeDiff:
    path: str
    kcc: str
    ours: str


@dataclass(frozen=True)
class KindParity:
    kind: str
    crd: KccCrd
    doc_key: str
    revision: str
    schema: str
    kcc_paths: tuple[str, ...]
    our_paths: tuple[str, ...]
    shared: tuple[str, ...]
    kcc_only: tuple[KccOnly, ...]
    ours_only: tuple[str, ...]  # API-backed: the schema lag
    ours_elsewhere: tuple[Elsewhere, ...]  # API-backed, carried outside KCC's spec
    ours_krm_only: tuple[str, ...]  # no API field behind them
    ours_matched: tuple[str, ...]  # counterparts of KCC-only paths (renamed, refs)
    shape_diffs: tuple[ShapeDiff, ...]


@dataclass(frozen=True)
class ParityReport:
    kinds: tuple[KindParity, ...]
    missing_crds: tuple[str, ...]  # Kinds with no KCC CRD file
    problems: tuple[str, ...]  # curated entries that did not check out or were not used


@dataclass(frozen=True)
class OurSide:
    """What the classifier needs of one Kind of ours."""

    spec: frozenset[str]
    status: frozenset[str]  # full paths: status.observedState.x
    rows: dict[str, MutabilityIR]  # by full path, first row wins
    references: tuple[ReferenceIR, ...]
    methods: tuple[MethodIR, ...]
    doc: DiscoveryDoc
    schema: str


def our_side(kind: KindIR, doc: DiscoveryDoc) -> OurSide:
    rows: dict[str, MutabilityIR] = {}
    for m in kind.mutability:
        rows.setdefault(m.path, m)
    ms = kind.methods
    return OurSide(
        spec=frozenset(p.removeprefix("spec.") for p in rows if p.startswith("spec.")),
        status=frozenset(p for p in rows if p.startswith(STATUS)),
        rows=rows,
        references=kind.references,
        methods=tuple(x for x in (ms.create, ms.update, ms.delete) if x is not None),
        doc=doc,
        schema=kind.resource_schema,
    )


def _mapping_for(kind: str, path: str) -> Mapping | None:
    hits = [
        m
        for m in MAPPINGS
        if m.kind == kind
        and (path == m.kcc or (path.startswith(m.kcc) and path[len(m.kcc)] in ".["))
    ]
    return max(hits, key=lambda m: len(m.kcc)) if hits else None


def _fact(row: MutabilityIR, b: Behaviour) -> str:
    return next((f.source for f in row.facts if f.behaviour is b), "")


def classify(
    kind: str, side: OurSide, f: KccField, problems: list[str], used: set[Mapping | Elsewhere]
) -> KccOnly:
    """Why KCC has ``f.path`` and our spec does not (see the module docstring)."""
    path = f.path
    in_api, missing = discovery_lookup(side.doc, side.schema, path)

    m = _mapping_for(kind, path)
    if m is not None:
        target = m.ours if m.subtree or m.ours is None else m.ours + path[len(m.kcc) :]
        why = ""
        if in_api is not None:
            why = f"{side.schema}.{path} exists in {side.doc.key}"
        elif m.param is not None:
            verb, param = m.param.split(":")
            method = next((x for x in side.methods if x.verb == verb), None)
            if method is None or param not in method.query_params:
                why = f"no query parameter {param} on the {verb} method"
        elif target is None:
            why = "no counterpart and no parameter"
        elif target.startswith(STATUS):
            if target not in side.status:
                why = f"{target} is not in our status"
        elif target not in side.spec:
            why = f"spec.{target} is not in our spec"
        if not why:
            used.add(m)
            return KccOnly(path, m.category, m.evidence, target)
        problems.append(f"{kind}: mapping {m.kcc} -> {m.ours} does not apply to {path}: {why}")

    for r in side.references:
        if path == r.api_path and r.krm_path in side.spec:
            if f.ref:
                why = f"KCC's reference keeps the API field name {r.api_path}; ours is {r.krm_path} (-> {r.target})"
            else:
                why = f"KCC keeps the API field {r.api_path} as a plain name; ours replaces it with the reference {r.krm_path} (-> {r.target})"
            return KccOnly(path, "reference-naming", why, r.krm_path)
    if f.ref and path.endswith("Ref"):
        for r in side.references:
            if path.removesuffix("Ref") == r.api_path and r.krm_path in side.spec:
                return KccOnly(
                    path,
                    "reference-naming",
                    f"KCC appends Ref to the API field {r.api_path}; ours is {r.krm_path} (-> {r.target})",
                    r.krm_path,
                )

    status = STATUS + path
    if status in side.status:
        src = _fact(side.rows[status], Behaviour.OUTPUT_ONLY)
        how = f"output-only ({src})" if src else "output-only"
        return KccOnly(
            path, "output-only", f"Discovery {side.doc.key} {side.schema}.{path}: {how}", status
        )

    if "." not in path and "[" not in path:
        for method in side.methods:
            if path in method.query_params:
                return KccOnly(path, "method-parameter", f"query parameter {path} of {method.id}")

    if in_api is None:
        name = missing.rsplit(" ", 1)[-1]
        anywhere = (
            ""
            if _property_anywhere(side.doc, name)
            else f"; no schema of {side.doc.key} has a property {name}"
        )
        return KccOnly(path, "kcc-only", f"Discovery {side.doc.key}: {missing}{anywhere}")

    return KccOnly(
        path,
        "unexplained",
        f"{side.doc.key} {side.schema}.{path} exists; ours has neither spec nor status path",
    )


def _our_shape(row: MutabilityIR) -> str:
    t = row.type
    for prefix, shape in (("array", "array"), ("map", "map"), ("object", "object"), ("any", "any")):
        if t.startswith(prefix):
            return shape
    return "scalar"


def _shapes_differ(kcc: str, ours: str) -> bool:
    return "any" not in (kcc, ours) and kcc != ours


def compare(
    kind: KindIR,
    doc: DiscoveryDoc,
    crd: KccCrd,
    problems: list[str],
    used: set[Mapping | Elsewhere],
) -> KindParity:
    side = our_side(kind, doc)
    kcc = {f.path: f for f in crd.fields}
    shared = sorted(set(kcc) & side.spec)
    kcc_only = [
        classify(kind.kind, side, kcc[p], problems, used) for p in sorted(set(kcc) - side.spec)
    ]
    matched = {k.ours for k in kcc_only if k.ours is not None and k.ours in side.spec} - set(shared)
    rest = side.spec - set(shared) - matched

    def krm_only(p: str) -> bool:
        return all(m.api_path is None for m in kind.mutability if m.path == "spec." + p)

    api_only = {p for p in rest if not krm_only(p)}
    elsewhere = []
    for e in ELSEWHERE:
        if e.kind != kind.kind:
            continue
        if e.ours in api_only:
            used.add(e)
            elsewhere.append(e)
            api_only.discard(e.ours)
        else:
            problems.append(f"{kind.kind}: {e.ours} (KCC: {e.kcc}) is not an ours-only API field")

    shape_diffs = []
    for p in shared:
        ours = _our_shape(side.rows["spec." + p])
        if _shapes_differ(kcc[p].shape, ours):
            shape_diffs.append(ShapeDiff(p, kcc[p].shape, ours))
    return KindParity(
        kind=kind.kind,
        crd=crd,
        doc_key=doc.key,
        revision=kind.api.revision,
        schema=kind.resource_schema,
        kcc_paths=tuple(sorted(kcc)),
        our_paths=tuple(sorted(side.spec)),
        shared=tuple(shared),
        kcc_only=tuple(kcc_only),
        ours_only=tuple(sorted(api_only)),
        ours_elsewhere=tuple(sorted(elsewhere, key=lambda e: e.ours)),
        ours_krm_only=tuple(sorted(p for p in rest if krm_only(p))),
        ours_matched=tuple(sorted(matched)),
        shape_diffs=tuple(shape_diffs),
    )


def build(ir: IR, specs: Specs, kcc_crds: Path) -> ParityReport:
    problems: list[str] = []
    used: set[Mapping | Elsewhere] = set()
    kinds: list[KindParity] = []
    missing: list[str] = []
    for k in sorted(ir.kinds, key=lambda k: k.kind):
        path = kcc_crds / crd_file(k)
        if not path.is_file():
            missing.append(k.kind)
            continue
        kinds.append(compare(k, specs.discovery[k.api.doc_key], load_kcc_crd(path), problems, used))
    present = {k.kind for k in kinds}
    for m in MAPPINGS:
        if m not in used and m.kind in present:
            problems.append(f"{m.kind}: mapping {m.kcc} -> {m.ours} explains no KCC path")
    for e in ELSEWHERE:
        if e not in used and e.kind in present:
            problems.append(f"{e.kind}: {e.ours} (KCC: {e.kcc}) was not used")
    return ParityReport(tuple(kinds), tuple(missing), tuple(problems))


# --- totals -----------------------------------------------------------------------------


@dataclass(frozen=True)
class KindTotals:
    kind: str
    shared: int
    kcc_only: int
    ours_only: int  # API fields KCC lacks (schema lag)
    ours_elsewhere: int
    ours_krm_only: int
    ours_matched: int
    kcc_total: int
    ours_total: int
    unexplained: int


@dataclass(frozen=True)
class Totals:
    kinds: tuple[KindTotals, ...]
    all: KindTotals  # kind == "total"
    reasons: tuple[tuple[Category, int], ...]  # every category, in CATEGORIES order


def _kind_totals(k: KindParity) -> KindTotals:
    return KindTotals(
        kind=k.kind,
        shared=len(k.shared),
        kcc_only=len(k.kcc_only),
        ours_only=len(k.ours_only),
        ours_elsewhere=len(k.ours_elsewhere),
        ours_krm_only=len(k.ours_krm_only),
        ours_matched=len(k.ours_matched),
        kcc_total=len(k.kcc_paths),
        ours_total=len(k.our_paths),
        unexplained=sum(1 for x in k.kcc_only if x.category == "unexplained"),
    )


def totals(report: ParityReport) -> Totals:
    rows = tuple(_kind_totals(k) for k in report.kinds)
    names = [f for f in KindTotals.__dataclass_fields__ if f != "kind"]
    sums = {n: sum(getattr(r, n) for r in rows) for n in names}
    counts = Counter(x.category for k in report.kinds for x in k.kcc_only)
    return Totals(rows, KindTotals("total", **sums), tuple((c, counts[c]) for c in CATEGORIES))


# --- markdown ---------------------------------------------------------------------------


def _code(paths: tuple[str, ...] | list[str]) -> str:
    return ", ".join(f"`{p}`" for p in paths) if paths else "(none)"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _ours(x: KccOnly) -> str:
    if x.ours is None:
        return "-"
    return f"`{x.ours}`" if x.ours.startswith(STATUS) else f"`spec.{x.ours}`"


def render(report: ParityReport) -> str:
    t = totals(report)
    kcc_versions = sorted({k.crd.kcc_version for k in report.kinds if k.crd.kcc_version})
    out = [
        "# Field parity with Google Config Connector",
        "",
        "Generated by `kccgen parity` (`generator/parity.py`); do not edit. It compares the spec",
        "field paths of our CRDs (the IR's mutability table) with Config Connector's CRDs for the",
        f"same Kinds (`cnrm.cloud.google.com/version`: {', '.join(kcc_versions) or 'unknown'}).",
        "",
        "Paths are relative to `spec`: `a.b`, `a[].b` for list items, `a.*.b` for map values.",
        "`*Ref` fields and KCC's `{name, namespace, external}` reference objects are leaves.",
        "",
        "- **shared**: the same path in both CRDs.",
        "- **KCC-only**: a path only KCC's CRD has, each with a reason; the rules are in the",
        "  module docstring of `generator/parity.py`, the curated ones (with their evidence)",
        "  in its `MAPPINGS`.",
        "- **ours-only**: API fields of our spec that KCC has under no name: the schema lag",
        "  kccgen closes. Not counted there, and listed per Kind: our counterparts of KCC's",
        f"  renamed fields ({t.all.ours_matched}), API fields KCC carries outside its spec",
        f"  ({t.all.ours_elsewhere}: labels from `metadata.labels`) and KRM-only fields KCC lacks ({t.all.ours_krm_only}).",
        "",
        "## Totals",
        "",
        "| Kind | shared | KCC-only | ours-only |",
        "|---|---:|---:|---:|",
    ]
    out += [f"| {r.kind} | {r.shared} | {r.kcc_only} | {r.ours_only} |" for r in t.kinds]
    out += [
        f"| **total** | **{t.all.shared}** | **{t.all.kcc_only}** | **{t.all.ours_only}** |",
        "",
    ]
    out += [
        "## Why KCC has paths we do not",
        "",
        "| reason | KCC-only paths | meaning |",
        "|---|---:|---|",
    ]
    out += [f"| {c} | {n} | {CATEGORIES[c]} |" for c, n in t.reasons]
    out.append("")
    if report.missing_crds:
        out += ["No KCC CRD for: " + ", ".join(report.missing_crds) + ".", ""]
    if report.problems:
        out += ["## Curated mapping problems", ""] + [f"- {p}" for p in report.problems] + [""]
    for k in report.kinds:
        kt = _kind_totals(k)
        out += [
            f"## {k.kind}",
            "",
            f"KCC `{k.crd.file}` ({k.crd.version}, {kt.kcc_total} paths) vs ours ({kt.ours_total} paths); "
            f"API: Discovery `{k.doc_key}` schema `{k.schema}`, revision {k.revision}.",
            "",
            f"### KCC-only ({kt.kcc_only})",
            "",
        ]
        if k.kcc_only:
            out += ["| KCC path | reason | ours | evidence |", "|---|---|---|---|"]
            first: dict[str, str] = {}
            for x in k.kcc_only:
                detail = f"as for `{first[x.detail]}`" if x.detail in first else _cell(x.detail)
                first.setdefault(x.detail, x.path)
                out.append(f"| `{x.path}` | {x.category} | {_ours(x)} | {detail} |")
        else:
            out.append("(none)")
        out += ["", f"### Ours-only: API fields KCC lacks ({kt.ours_only})", ""]
        out += [f"- `{p}`" for p in k.ours_only] or ["(none)"]
        out.append("")
        if k.ours_krm_only:
            out += [
                f"KRM-only fields of ours KCC's CRD lacks ({kt.ours_krm_only}, no API field behind them): "
                f"{_code(k.ours_krm_only)}"
                + (
                    "; KCC takes the project from the `cnrm.cloud.google.com/project-id` annotation instead."
                    if k.ours_krm_only == ("projectRef",)
                    else "."
                ),
                "",
            ]
        if k.ours_elsewhere:
            out += [f"Ours, carried outside KCC's spec ({kt.ours_elsewhere}):", ""]
            out += [f"- `{e.ours}`: KCC `{e.kcc}`; {e.evidence}" for e in k.ours_elsewhere]
            out.append("")
        if k.ours_matched:
            out += [
                f"Ours, matched to a KCC-only path above ({kt.ours_matched}): {_code(k.ours_matched)}.",
                "",
            ]
        out += [f"### Shared ({kt.shared})", "", _code(k.shared), ""]
        if k.shape_diffs:
            out += ["Shared, but the shape differs:", ""]
            out += [f"- `{d.path}`: KCC {d.kcc}, ours {d.ours}" for d in k.shape_diffs]
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def report(specs_dir: Path, kcc_crds: Path) -> ParityReport:
    specs = load_specs(specs_dir)
    return build(build_ir(specs), specs, kcc_crds)


def run(specs_dir: Path, kcc_crds: Path) -> str:
    """The markdown of ``docs/field-parity.md`` for ``specs_dir`` against ``kcc_crds``."""
    return render(report(specs_dir, kcc_crds))
