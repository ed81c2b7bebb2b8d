"""The frozen intermediate representation every emitter reads.

Nothing here refers to Discovery or YAML any more: names, types and
behaviours are resolved, so emitters and templates never re-derive them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from kccgen.contract import (
    Call,
    Canonical,
    Companion,
    CreateShape,
    DeleteShape,
    FieldType,
    Form,
    IamMethods,
    IamTarget,
    Locations,
    Lro,
    OperationGetter,
    Present,
    ReadByList,
    SecretObject,
    UpdateShape,
)
from kccgen.discovery.behaviours import Behaviour, Fact
from kccgen.generator.diagnostics import Diagnostic

TypeKind = Literal["string", "integer", "number", "boolean", "any", "object", "array", "map", "enum"]


@dataclass(frozen=True)
class EnumValue:
    value: str
    description: str = ""
    deprecated: bool = False


@dataclass(frozen=True)
class EnumIR:
    """A named enum class (named after its path, never ``State1``)."""

    name: str
    description: str
    values: tuple[EnumValue, ...]
    source: str


@dataclass(frozen=True)
class TypeIR:
    kind: TypeKind
    format: str | None = None  # Discovery format: int64, google-duration, byte...
    ref: str | None = None  # class name of an ObjectIR (object) or EnumIR (enum)
    item: TypeIR | None = None  # element type for array / map


@dataclass(frozen=True)
class FieldIR:
    name: str  # JSON (camelCase) name
    type: TypeIR
    description: str
    facts: tuple[Fact, ...]
    source: str  # "pubsub.v1#/schemas/Topic/properties/kmsKeyName"
    deprecated: bool = False
    required: bool = False  # required in the KRM model (identity fields)
    api_name: str | None = None  # the API field behind a KRM field (kmsKeyRef -> kmsKeyName); None: KRM-only
    other_form: str = ""  # Config Connector's other form it accepts too: json | true (kccgen.contract.Form)

    @property
    def behaviours(self) -> frozenset[Behaviour]:
        return frozenset(f.behaviour for f in self.facts)

    @property
    def output_only(self) -> bool:
        return Behaviour.OUTPUT_ONLY in self.behaviours


@dataclass(frozen=True)
class ObjectIR:
    name: str
    description: str
    fields: tuple[FieldIR, ...]
    source: str
    open: bool = False  # accept unknown keys (API payloads stay forward-compatible)
    exactly_one: tuple[str, ...] = ()  # keys of which exactly one is set (a oneOf reference)
    # groups of keys of which at least one is set: a required API field and
    # Config Connector's alias for it (Project's displayName, or name)
    one_required: tuple[tuple[str, ...], ...] = ()
    at_most_one: tuple[tuple[str, ...], ...] = ()  # groups of keys of which at most one is set (a flattened oneOf)
    # a reference whose ``kind`` key picks one of these Kinds (kind config ``kinds``):
    # its CRD schema is a reference object's, with ``kind`` beside
    kinds: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModelSet:
    """Classes one module defines: objects and enums, in emission order."""

    objects: tuple[ObjectIR, ...]
    enums: tuple[EnumIR, ...]

    def object(self, name: str) -> ObjectIR:
        for o in self.objects:
            if o.name == name:
                return o
        raise KeyError(name)


@dataclass(frozen=True)
class ApiModule:
    """API payload models of one Discovery document, shared by its Kinds."""

    api: str
    api_version: str
    doc_key: str
    revision: str
    module: str  # e.g. pubsub_v1_api
    package: str  # e.g. pubsub/v1beta1
    models: ModelSet


@dataclass(frozen=True)
class IdentityParam:
    name: str  # placeholder in the template: project, location, keyRing, topic
    role: Literal["parent", "location", "id"]
    krm_field: str  # projectRef, location, keyRingRef, resourceID
    ref_kind: str | None = None  # Project, KMSKeyRing for *Ref parents
    in_template: bool = True  # False: a create-time parent only (bucket project)
    covered_by: str | None = None  # a parent ref that already names this param (keyRingRef covers project)
    default: str | None = None  # the value when the spec field is unset (a location that can only be global)
    # Config Connector's own field for a covered param (an SLO's projectRef beside the
    # serviceRef that covers its project): optional, checked against the covering ref,
    # and what completes that ref when it is a bare ID (``serviceRef: {external: svc}``)
    beside: str | None = None


@dataclass(frozen=True)
class ParentForm:
    """The same resource under another top-level parent than the project
    (Logging's ``folders/{folder}/locations/{location}/buckets/{bucket}``): the
    Kind takes one reference field per parent, and at most one may be set."""

    collection: str  # folders, organizations, billingAccounts
    param: str  # the placeholder replacing {project}: folder
    krm_field: str  # folderRef
    ref_kind: str  # Folder


@dataclass(frozen=True)
class Identity:
    asset_type: str
    asset_format: str | None  # //pubsub.googleapis.com/projects/{project}/topics/{topic}
    template: str  # externalRef template: projects/{project}/topics/{topic}
    template_source: Literal["asset-inventory", "rest"]
    rest_template: str  # from the get method path: projects/{project}/topics/{topic}
    get_path: str  # Discovery path of get: v1/{+topic}
    params: tuple[IdentityParam, ...]
    id_generation: Literal["user", "service"]
    project_number: bool
    disagreements: tuple[str, ...] = ()
    domain: str = ""  # asset-inventory service domain: pubsub.googleapis.com
    rest_host: str = ""  # API host: pubsub.googleapis.com
    rest_prefix: str = ""  # REST path before the resource path: v1/, compute/v1/
    extra_forms: tuple[str, ...] = ()  # other accepted spellings of an external
    parent_forms: tuple[ParentForm, ...] = ()  # the template under folders/organizations/...

    @property
    def parent_fields(self) -> tuple[str, ...]:
        """projectRef and the other parents' spec fields, when the Kind has several
        parents and names its project itself (not through a parent ref that covers it:
        a folder bucket's view names its bucket, and the bucket its folder)."""
        own = next((p.krm_field for p in self.params if p.name == "project" and p.role == "parent" and p.covered_by is None), None)
        return (own, *(f.krm_field for f in self.parent_forms)) if self.parent_forms and own else ()

    @property
    def id_param(self) -> IdentityParam | None:
        """The placeholder holding the resource's own ID; None for a settings object
        (``projects/{project}/policy``), which has none."""
        return next((p for p in self.params if p.role == "id"), None)


@dataclass(frozen=True)
class ReferenceIR:
    """An API field that names another resource, and the KRM field replacing it."""

    api_path: str  # "deadLetterPolicy.deadLetterTopic", "topics[].name"
    krm_path: str  # "deadLetterPolicy.deadLetterTopicRef", "topics[].topicRef"
    target: str  # Kind
    many: bool
    external_only: bool
    source: str  # why: "description pattern 'projects/{project}/topics/{topic}'", "field name", "config: ..."
    parent: bool = False
    order_matters: bool = False
    api_format: str | None = None
    # One key of a field naming one of several Kinds: krm_path ends in the key
    # (defaultService.backendServiceRef), api_path is the field (defaultService).
    union: bool = False
    literals: tuple[str, ...] = ()  # the field's keys whose string is the API value
    value_of: str | None = None  # the API value is this field of the referenced object; external is the value
    kinds: tuple[str, ...] = ()  # other Kinds its ``kind`` key may name (kind config ``kinds``)


@dataclass(frozen=True)
class TargetKind:
    """A Kind that can be referenced: ours, or listed in specs/external-kinds.yaml."""

    kind: str
    template: str
    domain: str
    ours: bool
    by_name: bool
    ref_module: str  # kccgen.generated.kms.v1beta1.kmscryptokey_reference
    rest_host: str = ""
    rest_prefix: str = ""
    rest_template: str = ""
    extra_forms: tuple[str, ...] = ()
    reason: str = ""
    # (template param, spec field that supplies it, Kind that field references or "")
    spec_fields: tuple[tuple[str, str, str], ...] = ()
    id_generation: str = "user"
    # (scope, Kind): the generated Kinds serving this Kind's other scopes (kind file ``locations:``)
    variants: tuple[tuple[str, str], ...] = ()
    # (spec field, value used when it is unset): a location that can only be global
    spec_defaults: tuple[tuple[str, str], ...] = ()
    # (param, Config Connector's spec field beside the covering ref, Kind it references or "")
    beside: tuple[tuple[str, str, str], ...] = ()


@dataclass(frozen=True)
class MethodIR:
    """One Discovery method of the Kind's resource, as the generator read it."""

    verb: str  # get / create / update / delete (our role)
    name: str  # Discovery method name: insert, patch...
    id: str  # pubsub.projects.topics.get
    location: str  # pubsub.v1#/resources/projects/resources/topics/methods/get
    http_method: str
    path: str
    flat_path: str
    request: str | None
    response: str | None
    path_params: tuple[str, ...]
    query_params: tuple[str, ...]
    lro: Lro
    # Parameter name -> template over identity params, from the Discovery
    # path patterns: {"parent": "projects/{project}/locations/{location}"}.
    param_templates: tuple[tuple[str, str], ...] = ()
    owner: tuple[str, ...] = ()  # another resource's method (its accessor chain): secrets.addVersion

    def call(self) -> Call:
        return Call(self.name, self.param_templates, self.lro, self.owner)


@dataclass(frozen=True)
class Methods:
    """The Kind's methods and their shapes (kccgen.contract), as the adapter declares them."""

    get: MethodIR
    create: MethodIR | None
    update: MethodIR | None
    delete: MethodIR | None
    create_shape: CreateShape
    update_shape: UpdateShape
    delete_shape: DeleteShape
    # Fields the update method's own description limits it to ("Only
    # routingConfig can be modified." on compute networks.patch), with the phrase.
    update_allowlist: tuple[str, ...] | None = None
    update_allowlist_source: str | None = None
    custom_methods: tuple[str, ...] = ()  # other methods of the resource (setPrivateIpGoogleAccess...)
    # How to poll this API's operations, by accessor path (or compute scope).
    operations: tuple[tuple[str, OperationGetter], ...] = ()
    read_list: ReadByList | None = None  # no get: ``get`` is the list, this picks the item
    absent: tuple[tuple[int, str], ...] = ()  # (status, message text) the read answers for no resource, beside 404
    view: str = ""  # the part of the get answer that is the resource's schema
    iam: IamMethods | None = None  # getIamPolicy/setIamPolicy: IAM Kinds may name the resource
    iam_paths: tuple[str, ...] = ()  # their Discovery paths, to name their parameters after the identity
    route_methods: tuple[MethodIR, ...] = ()  # a routed update's methods (update_shape: UpdateRouted)


@dataclass(frozen=True)
class MutabilityIR:
    """What the runtime may do with one field path, and why."""

    path: str  # spec.messageStoragePolicy.allowedPersistenceRegions, status.observedState.state
    api_path: str | None  # messageStoragePolicy.allowedPersistenceRegions; None for KRM-only fields
    type: str  # a label for reports: string, string(int64), enum, array<object>, map<string>, any
    field_type: FieldType  # the same, structured, as the runtime reads it
    behaviours: tuple[str, ...]
    facts: tuple[Fact, ...]  # provenance of each behaviour
    identity: bool
    updatable: bool
    updatable_source: str
    readable: bool
    readable_source: str


@dataclass(frozen=True)
class AliasIR:
    """A Config Connector field name, the spec field it stands for, and how values move.

    ``field`` is a spec property of its own (``krm_models`` holds its type);
    ``target`` is the KRM spec path of ``api_field`` (a reference's ``*Ref``
    name where the API field is a reference).
    """

    field: str
    target: str
    api_field: str
    reason: str
    source: str  # specs/kinds/compute.yaml#/kinds/0/aliases/0
    values: tuple[tuple[str | int | float | bool | None, str | int | float | bool | tuple[tuple[str, Any], ...] | None], ...] = ()  # objects as pairs
    items: tuple[AliasIR, ...] = ()
    keyed_by: str = ""  # a list alias of a map field: the element field keying its entry
    element: bool = False  # one element of the target list (kccgen.contract.Alias)
    into: str = ""
    fixed: tuple[tuple[str, str | int | float | bool | None], ...] = ()
    append: bool = False
    deprecated: bool = False  # kept for a path the API renamed (kccgen bump)
    derived: bool = False  # Config Connector's spelling from its CRD paths (generator/ir/spellings.py), no kind-config entry


@dataclass(frozen=True, repr=False)
class KindIR:
    kind: str
    group: str
    version: str
    plural: str
    short_names: tuple[str, ...]
    package: str  # pubsub/v1beta1
    api: ApiModule
    resource: str  # projects.topics
    resource_schema: str  # Topic (API class name)
    description: str
    identity: Identity
    methods: Methods
    api_fields: tuple[FieldIR, ...]  # top-level fields of the API resource, classified
    spec: ObjectIR  # <Kind>Spec
    observed_state: ObjectIR  # <Kind>ObservedState
    krm_models: ModelSet  # all KRM classes of the Kind module (spec & observed trees)
    config_file: str
    references: tuple[ReferenceIR, ...] = ()
    mutability: tuple[MutabilityIR, ...] = ()
    ref_imports: tuple[tuple[str, str], ...] = ()  # (module, class) of Ref types used by the spec
    unresolved: tuple[str, ...] = ()  # derived Kinds: reference-like fields left plain, with their candidates
    aliases: tuple[AliasIR, ...] = ()  # Config Connector's older field names (spec properties too)
    forms: tuple[Form, ...] = ()  # Config Connector's other forms of spec fields (generator/ir/forms.py)
    canonical: tuple[Canonical, ...] = ()  # values the service spells its own way (generator/ir/canonical.py)
    kcc_versions: tuple[str, ...] = ()  # Config Connector's version names served beside ``version``
    companions: tuple[Companion, ...] = ()  # spec fields kept in a paired resource of another API
    present: Present | None = None  # an on/off resource: present only in these states
    example_id: str = ""  # an ID the service has in any project (kind config exampleID)
    fixed: tuple[tuple[str, str], ...] = ()  # API fields the identity fills (kind config fixed)
    locations: Locations | None = None  # Config Connector's spec.location over several scopes
    secrets: tuple[str, ...] = ()  # KRM spec paths of sensitive fields (generator/ir/secrets.py)
    byte_secrets: tuple[str, ...] = ()  # those whose API field is bytes: the text is sent base64-encoded
    secret_objects: tuple[SecretObject, ...] = ()  # object fields read from a Secret's keys

    @property
    def served_versions(self) -> tuple[str, ...]:
        """Every version the CRD serves: the storage version first."""
        return (self.version, *self.kcc_versions)

    @property
    def lower(self) -> str:
        return self.kind.lower()

    def __repr__(self) -> str:
        # The full tree runs to megabytes: a failing assertion would spend minutes printing it.
        return f"KindIR({self.kind} {self.group}/{self.version})"


@dataclass(frozen=True)
class Candidate:
    """One resource of one document: what became of it."""

    doc_key: str
    resource: str
    kind: str  # the Kind it is, or would be named ("" for a path segment)
    config_file: str  # the kind file that decided it ("" when no file covers the API)
    tier: str  # "curated" | "generated" | "excluded" (later stages refine "generated")
    reason: str = ""  # why excluded
    also: tuple[str, ...] = ()  # the other pinned documents of the API that have the resource

    def excluded(self, reason: str) -> Candidate:
        return Candidate(self.doc_key, self.resource, self.kind, self.config_file, "excluded", reason, self.also)


@dataclass(frozen=True)
class SkippedKind:
    """A configured Kind that is not generated, and why (a method no contract variant fits)."""

    kind: str
    config: str  # specs/kinds/pubsub.yaml#/kinds/3
    location: str  # pubsub.v1#/resources/projects/resources/snapshots/methods/create
    reason: str
    auto: bool = False  # derived by an auto kind file: an exclusion with a reason, not an error

    def __str__(self) -> str:
        return f"{self.config}: {self.kind} is not generated: {self.location}: {self.reason}"


@dataclass(frozen=True)
class MemoHit:
    """A unit built from the same inputs before: the derived Kinds that failed, the
    diagnostics it gave, and, when its rendered files are kept under this key, its
    Kinds as (group, Kind, config file)."""

    failures: tuple[SkippedKind, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    kinds: tuple[tuple[str, str, str], ...] | None = None


@dataclass(frozen=True)
class CachedUnit:
    """An API unit whose build inputs (``key``) are those of the last run: not built,
    its files come from the render cache under ``name``."""

    doc_key: str
    package: str
    name: str
    key: str
    kinds: tuple[tuple[str, str, str], ...]  # (group, Kind, config file)


def unit_names(pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """Each (document, KRM package) unit's name: the document key, or ``doc@package``
    where one document feeds two packages (curated v1beta1 and derived v1alpha1)."""
    pairs = sorted(set(pairs))
    per_doc = Counter(d for d, _ in pairs)
    return {(d, p): d if per_doc[d] == 1 else f"{d}@{p.replace('/', '.')}" for d, p in pairs}


@dataclass(frozen=True, repr=False)
class IR:
    api_modules: tuple[ApiModule, ...]
    kinds: tuple[KindIR, ...]
    diagnostics: tuple[str, ...] = field(default=())
    targets: tuple[TargetKind, ...] = ()
    skipped: tuple[SkippedKind, ...] = ()
    candidates: tuple[Candidate, ...] = ()  # every resource of the auto files' documents
    cached: tuple[CachedUnit, ...] = ()  # units not built this run (build_ir's memo)
    iam_targets: tuple[IamTarget, ...] = ()  # resources IAM Kinds may name that no Kind serves

    @property
    def kind_names(self) -> frozenset[str]:
        """Every Kind of the tree, built or cached."""
        return frozenset(k.kind for k in self.kinds) | {k for u in self.cached for _, k, _ in u.kinds}

    def __repr__(self) -> str:
        # As for KindIR: a test failure must not print every Kind of a 1,000-Kind tree.
        return f"IR({len(self.kinds)} Kinds, {len(self.api_modules)} API modules)"

    @property
    def errors(self) -> tuple[SkippedKind, ...]:
        """Configured (curated) Kinds that could not be generated: these fail the run."""
        return tuple(s for s in self.skipped if not s.auto)

    def target(self, name: str) -> TargetKind:
        for t in self.targets:
            if t.kind == name:
                return t
        raise KeyError(name)

    def kind(self, name: str) -> KindIR:
        for k in self.kinds:
            if k.kind == name:
                return k
        raise KeyError(name)
