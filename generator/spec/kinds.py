"""Kind configuration: which Discovery resources become which Kinds.

The schema is strict: an unknown key anywhere is an error naming the file,
the JSON path and the closest valid key, because a silently ignored typo in
an override would change what the generator emits.
"""

from __future__ import annotations

import types
import typing
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)

from kccgen.discovery.errors import SpecError, did_you_mean, from_validation_error, json_path
from kccgen.generator.spec._errors import read_yaml

BehaviourName = Literal["required", "optional", "output-only", "input-only", "immutable", "identifier"]


_M = TypeVar("_M", bound=BaseModel)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class FieldOverride(_Strict):
    """Replace the behaviours Discovery gives a field, with the reason why."""

    behaviours: tuple[BehaviourName, ...]
    reason: str = Field(min_length=1)


class ReferenceConfig(_Strict):
    """Add, retarget or veto a reference the inference would miss or get wrong.

    ``oneOf`` makes a field that names one of several Kinds (a backend
    service's health checks: HealthCheck, HttpHealthCheck or HttpsHealthCheck)
    an object with one ``<key>Ref`` per Kind, exactly one set, as Config
    Connector spells it (``healthChecks: [{healthCheckRef: {name: hc}}]``);
    ``literals`` are keys whose string is sent as is (``ip``), and ``field``
    renames the KRM field (``IPAddress`` -> ``ipAddress``).
    """

    target: str | None = None  # a Kind name, or "none" to veto (the field stays a plain value)
    one_of: dict[str, str] = Field(default_factory=dict, alias="oneOf")  # KRM key -> Kind
    api_formats: dict[str, str] = Field(default_factory=dict, alias="apiFormats")  # oneOf key -> how the API spells its name
    literals: tuple[str, ...] = ()
    field: str | None = None  # the KRM field's name, where Config Connector's differs from the convention
    reason: str = Field(min_length=1)
    api_format: str | None = Field(default=None, alias="apiFormat")  # e.g. "{project}.{dataset}.{table}"
    order_matters: bool = Field(default=False, alias="orderMatters")
    # other Kinds the reference may name by its ``kind`` key (Config Connector's
    # attachmentTargetRef: ``{kind: Folder, name}`` or ``{external: organizations/O}``)
    kinds: tuple[str, ...] = ()
    # oneOf keys as fields of the object that holds the API field, not of an
    # object of their own: Config Connector's Project has spec.folderRef and
    # spec.organizationRef for the API's parent
    flatten: bool = False
    # The API value is a field of the referenced object (dotted, from the object's
    # root), not its name; ``external`` is the value itself. Config Connector's
    # AlloyDBInstance instanceTypeRef: {name: cluster} takes the cluster's type,
    # {external: READ_POOL} says it
    value_of: str | None = Field(default=None, alias="valueOf")

    @model_validator(mode="after")
    def _one_shape(self) -> ReferenceConfig:
        if (self.target is None) == (not self.one_of):
            raise ValueError("set exactly one of target and oneOf")
        if self.value_of is not None and (self.target is None or self.api_format is not None):
            raise ValueError("valueOf goes with target, and without apiFormat")
        if not self.one_of and (self.literals or self.api_formats or self.flatten):
            raise ValueError("literals, apiFormats and flatten go with oneOf")
        if self.flatten and self.field is not None:
            raise ValueError("a flattened oneOf has no field of its own to rename")
        stray = set(self.api_formats) - set(self.one_of)
        if stray:
            raise ValueError(f"apiFormats key(s) {', '.join(sorted(stray))} are not oneOf keys")
        clash = set(self.literals) & set(self.one_of)
        if clash:
            raise ValueError(f"{', '.join(sorted(clash))} is both a oneOf key and a literal")
        return self


class ParentConfig(_Strict):
    """How an identity parameter appears in the KRM spec."""

    field: str  # e.g. projectRef, keyRingRef, location, region
    kind: str | None = None  # referenced Kind for *Ref fields
    # a plain field's value when the spec leaves it unset (DLP's location: global,
    # as Config Connector defaults it); the field is then optional
    default: str | None = None


class GetMethod(_Strict):
    """Which Discovery method reads the resource, where the resource has no ``get``."""

    method: str
    # the resource's schema, where the method answers with an operation that
    # resolves to it (serviceusage's generateServiceIdentity: ServiceIdentity)
    resource_schema: str | None = Field(default=None, alias="schema")
    # a list read (the resource has no get): the answer's field holding the items,
    # and the item fields that must hold the identity's values (dotted path -> template)
    items: str | None = None
    match: dict[str, str] = Field(default_factory=dict)
    # the part of the answer that is the resource's schema (dlp: currentVersion.config)
    view: str | None = None
    params: dict[str, str] = Field(default_factory=dict)  # parameter -> template ({param}), beside or over the path's
    # the method is another resource's of the document (dotted path): a monitored
    # project is read from its metrics scope's get (a list read of monitoredProjects)
    resource: str | None = None
    # what the read answers for a resource that does not exist, beside 404: HTTP
    # status -> a text of its message (compute's getRule: 400 "does not contain a rule")
    absent: dict[int, str] = Field(default_factory=dict)
    reason: str = Field(min_length=1)


class CreateMethod(_Strict):
    """How the resource is created, where inference is ambiguous (kccgen.contract create shapes)."""

    method: str | None = None  # Discovery method name; None only with shape "none"
    shape: Literal["at-path", "id-param", "name-in-body", "wrapped", "service-assigned", "verb", "statement", "none"]
    # statement: the request field naming the new resource, and its template per dialect
    # ("" for any other value of dialectField): {"": "CREATE DATABASE `{id}`"}
    statement_field: str | None = Field(default=None, alias="statementField")
    statements: dict[str, str] = Field(default_factory=dict)
    dialect_field: str | None = Field(default=None, alias="dialectField")
    id_param: str | None = Field(default=None, alias="idParam")  # id-param: the query parameter
    id_field: str | None = Field(default=None, alias="idField")  # wrapped: the request's ID field; name-in-body: the body's (default name)
    resource_field: str | None = Field(default=None, alias="resourceField")  # wrapped: the field holding the resource
    # wrapped, service-assigned: the request's other fields the spec may set (create-only
    # inputs); None: every one (wrapped), none (service-assigned)
    inputs: tuple[str, ...] | None = None
    # the method is another resource's of the document (dotted path): a secret version
    # is made by its secret's addVersion
    resource: str | None = None
    # service-assigned: where the create's answer holds the resource, when it is not
    # the answer (sqladmin's SslCertsInsertResponse: clientCert.certInfo)
    answer: str | None = None
    body: dict[str, str] = Field(default_factory=dict)  # verb: fixed request fields, dotted path -> template ({param})
    params: dict[str, str] = Field(default_factory=dict)  # parameter -> template ({param}), beside or over the path's
    reason: str = Field(min_length=1)


class RouteConfig(_Strict):
    """One field changed through one call (kccgen.contract.Route)."""

    field: str  # dotted API path of the resource: resourceLabels, config.machineType
    method: str | None = None  # the resource's method: setResourceLabels
    into: str = ""  # dotted path of its request taking the desired value ("": byValue's verb says it)
    by_value: dict[str, str] = Field(default_factory=dict, alias="byValue")  # desired value -> its method (ENABLED: enable)
    tokens: dict[str, str] = Field(default_factory=dict)  # request path -> live resource path (labelFingerprint)
    # the field is the request's, not the resource's: GET never returns it (GKE's nodeCount)
    write_only: bool = Field(default=False, alias="writeOnly")
    create_as: str | None = Field(default=None, alias="createAs")  # writeOnly: the resource field the create sends it as
    reason: str | None = None  # writeOnly: why the field is not the resource's


class DesiredRoutes(_Strict):
    """Routes read off a request object whose fields are named after the
    resource's: GKE's ``ClusterUpdate.desiredAddonsConfig`` is the route of
    ``addonsConfig`` (one per call). A request field whose resource field is
    missing or of another type is no route."""

    method: str  # update
    into: str  # the request's object holding them: update
    prefix: str  # desired
    skip: tuple[str, ...] = ()  # resource fields left without a route, though named: the reason says why


class UpdateMethod(_Strict):
    """How the resource is updated (kccgen.contract update shapes)."""

    method: str | None = None
    shape: Literal["mask-in-query", "mask-in-body", "merge", "replace", "routed", "none"]
    routes: tuple[RouteConfig, ...] = ()  # routed: the explicit routes, in the order they are sent
    desired: DesiredRoutes | None = None  # routed: more routes, read off a request object
    mask: str | None = None  # mask-in-query: the parameter; mask-in-body: the request field
    resource_field: str | None = Field(default=None, alias="resourceField")  # mask-in-body
    guard: Literal["fingerprint", "metageneration"] | None = None  # merge / replace
    params: dict[str, str] = Field(default_factory=dict)  # parameter -> template ({param}), beside or over the path's
    reason: str = Field(min_length=1)


class DeleteMethod(_Strict):
    method: str | None = None
    shape: Literal["at-path", "verb", "none"]
    body: dict[str, str] = Field(default_factory=dict)  # verb: fixed request fields, dotted path -> template ({param})
    switch: str | None = None  # verb: an annotation whose "false" leaves the resource (disable-on-destroy)
    flags: dict[str, str] = Field(default_factory=dict)  # verb: dotted path -> annotation setting it true
    params: dict[str, str] = Field(default_factory=dict)  # parameter -> template ({param}), beside or over the path's
    reason: str = Field(min_length=1)


class EntryConfig(_Strict):
    """The resource is one entry of a list field of its parent (kccgen.contract.ParentEntry):
    read through the parent's get, written through the parent's ``method``."""

    field: str  # the parent schema's list: nats
    key: str = "name"  # the entry's field holding its ID
    method: str = "patch"  # the parent's write
    reason: str = Field(min_length=1)


class PresentConfig(_Strict):
    """An on/off resource: present only while ``field`` holds one of ``values``."""

    field: str
    values: tuple[str, ...]
    reason: str = Field(min_length=1)


class MethodsConfig(_Strict):
    """Methods named explicitly; a role left out is inferred from the Discovery resource."""

    get: GetMethod | None = None
    create: CreateMethod | None = None
    update: UpdateMethod | None = None
    delete: DeleteMethod | None = None


AliasScalar = str | int | float | bool | None
# what an alias value stands for: a scalar, or an object (``true`` -> ``{}``)
AliasValue = str | int | float | bool | None | dict[str, Any]


class AliasItem(_Strict):
    """A sub-field of each element of a list alias that Config Connector spells differently.

    Paths are relative to one element. Where they share their parent path
    (``condition.withState`` -> ``condition.isLive``) the alias replaces the API
    field in the element; where they do not (``autoscalingConfig`` ->
    ``clusterConfig.clusterAutoscalingConfig``) it is an extra field beside it (KCC's
    ``disk[].sourceImageRef`` for ``initializeParams.sourceImage``).
    ``items`` are the same moves inside an object item, relative to its API field.
    """

    field: str
    api_field: str = Field(alias="apiField")
    # alias value -> API value (null: send nothing), where the two differ in type
    values: dict[str, AliasValue] | None = None
    items: tuple[AliasItem, ...] = ()
    # an extra field beside the API field it stands for, not in its place (the element
    # class kept the API's name before: ContainerCluster's autoprovisioningNodePoolDefaults)
    beside: bool = False


class AliasConfig(_Strict):
    """A Config Connector field name accepted beside the API field it stands for.

    Older KCC manifests use names (``routingMode``, ``lifecycleRule``) that the
    API spells elsewhere; the alias is an extra CRD property, refused together
    with its API field, and the runtime moves its value to the API field. The
    mapping is data here, so no Kind needs code of its own.

    ``field`` is a spec property, or a dotted path to one inside an object
    (``circuitBreakers.connectTimeout``; ``[]`` steps into each element of a
    list, ``networks[].reservedIPRange``; its API field then shares the path up
    to the last list). An alias named as its own API field (``replication.automatic``
    with ``values``) takes that field's place: Config Connector's type, not the API's.
    ``keyedBy`` makes a list alias of a map field: each element is the entry
    keyed by that field of it (Bigtable's ``cluster[].clusterId`` -> ``clusters``).
    """

    field: str  # the spec property KCC uses, or a dotted path inside one
    # dotted API path: lifecycle.rule; none: a string KCC accepts that no API
    # field stands for (it is sent nowhere; the reason says why that is right)
    api_field: str | None = Field(default=None, alias="apiField")
    reason: str = Field(min_length=1)
    values: dict[str, AliasValue] | None = None
    items: tuple[AliasItem, ...] = ()
    keyed_by: str | None = Field(default=None, alias="keyedBy")
    # KCC's one object (or, with ``into``, one value) is one element of the API's list
    element: bool = False
    # the sub-field holding the value: of the element (metadata items' ``value``), or,
    # without ``element``, of the object the API field is (an organization ID as
    # organizationRef's ``external``)
    into: str | None = None
    fixed: dict[str, AliasScalar] | None = None  # set in each element it adds: ``{boot: true}``
    # its elements follow those of the aliases before it on the same list
    # (bootDisk, attachedDisk -> disks) instead of being refused beside them
    append: bool = False
    # the path our own CRD served before the API renamed the field (kccgen bump
    # suggests it): kept so users' manifests still apply, described as deprecated
    deprecated: bool = False

    @model_validator(mode="after")
    def _one_shape(self) -> AliasConfig:
        if self.api_field is None and (self.values or self.items or self.keyed_by or self.element or self.into or self.fixed or self.append):
            raise ValueError("an alias with no apiField is sent nowhere: it takes no values, items, keyedBy, element, into, fixed or append")
        if self.element and self.keyed_by:
            raise ValueError("keyedBy makes a map entry of each element and element one list element: not both")
        return self


class FormConfig(_Strict):
    """Another form Config Connector's manifests give a spec field (kccgen.contract.Form):
    ``json``, a string holding the value as JSON (with ``listField``: a JSON list is
    that field of the object); ``true``, a boolean for the message with no field set;
    ``list``, the object's one list field (``listField``) given as the list itself
    (BigQueryTable's ``clustering: [a, b]`` for ``clustering.fields``). The field
    accepts the API's form and this one."""

    field: str  # the spec path (KRM names; [] steps into a list's elements)
    form: Literal["json", "true", "list"]
    list_field: str | None = Field(default=None, alias="listField")
    reason: str = Field(min_length=1)


class CanonicalConfig(_Strict):
    """How the service spells a top-level field, where the document does not say."""

    case: Literal["upper", "lower"] | None = None
    expand: str | None = None  # projects/{project}/instanceConfigs/{}: {} is the short name
    reason: str = Field(min_length=1)


class CompanionConfig(_Strict):
    """A spec field kept in a paired resource of another API (kccgen.contract.Companion):
    Config Connector's Project has billingAccountRef, which is cloudbilling's
    projects.billingInfo, not a field of the project."""

    field: str  # the spec field: billingAccountRef
    api: str  # the other API's Discovery name (its newest GA document): cloudbilling
    resource: str  # the paired resource's dotted path there: projects
    get: str  # its method reading the value: getBillingInfo
    update: str  # its method writing it: updateBillingInfo
    api_field: str = Field(alias="apiField")  # where the value is: billingAccountName
    target: str | None = None  # a Kind: the field is a reference to it
    # a list the service only appends to: the write takes the added entries (kccgen.contract.Companion)
    append_only: bool = Field(default=False, alias="appendOnly")
    reason: str = Field(min_length=1)


class SensitiveConfig(_Strict):
    """Spec fields that are secrets, where Config Connector's CRD does not say so
    (``specs/kcc/evidence.yaml`` does for its Kinds): each becomes
    ``{value | valueFrom: {secretKeyRef: {name, key}}}`` and its value never
    leaves the request (generator/ir/secrets.py)."""

    fields: tuple[str, ...] = Field(min_length=1)  # dotted KRM spec paths, [] for list items
    reason: str = Field(min_length=1)


class SecretObjectConfig(_Strict):
    """An object spec field whose strings Config Connector reads from one Secret
    (``credential: {secretRef: {name}}``): the Secret key of each sub-field."""

    keys: dict[str, str] = Field(min_length=1)  # the object's API sub-field -> the Secret's key
    field: str = "secretRef"
    reason: str = Field(min_length=1)


class KindConfig(_Strict):
    kind: str
    resource: str  # dotted Discovery resource path, e.g. projects.topics
    # The Discovery document version that serves it (default: the kind file's). A
    # derived Kind names the newest GA document that has its resource, else a beta one.
    version: str | None = None
    krm_version: str = Field(default="v1beta1", alias="krmVersion")
    asset_type: str | None = Field(default=None, alias="assetType")
    id_generation: Literal["user", "service"] = Field(default="user", alias="idGeneration")
    short_names: tuple[str, ...] | None = Field(default=None, alias="shortNames")
    parents: dict[str, ParentConfig] = Field(default_factory=dict)
    fields: dict[str, FieldOverride] = Field(default_factory=dict)
    references: dict[str, ReferenceConfig] = Field(default_factory=dict)  # keyed by API field path
    external_forms: tuple[str, ...] = Field(default=(), alias="externalForms")  # extra accepted spellings
    methods: MethodsConfig = Field(default_factory=MethodsConfig)
    description: str | None = None
    aliases: tuple[AliasConfig, ...] = ()  # Config Connector's older field names
    forms: tuple[FormConfig, ...] = ()  # Config Connector's other forms of fields (a JSON string, true)
    # by top-level API field, or a dotted path below one ({} steps into a map's values, [] into a list's)
    canonical: dict[str, CanonicalConfig] = Field(default_factory=dict)
    # The same resource under these top-level parents beside projects (same
    # methods and parameters): the Kind gets folderRef/organizationRef/...
    parent_forms: tuple[Literal["folders", "organizations", "billingAccounts"], ...] = Field(default=(), alias="parentForms")
    companions: tuple[CompanionConfig, ...] = ()  # spec fields kept in a paired resource of another API
    present: PresentConfig | None = None  # an on/off resource (a service is enabled or not)
    example_id: str | None = Field(default=None, alias="exampleID")  # an ID the service has in any project, for examples
    # The top-level API fields the user sets; every other one is output-only here
    # (a Kind that manages one aspect of a larger resource: a project's Shared VPC host status).
    spec_fields: tuple[str, ...] | None = Field(default=None, alias="specFields")
    # The resource's name where no get path gives one (a list read): a template
    # over the identity's parameters, services/{service}/projects/{project}/...
    identity: str | None = None
    # API fields the identity fills in every create and update (dotted path -> template)
    fixed: dict[str, str] = Field(default_factory=dict)
    sensitive: SensitiveConfig | None = None  # secret spec fields beside Config Connector's evidence
    entry_of: EntryConfig | None = Field(default=None, alias="entryOf")  # an entry of the parent's list; needs identity
    # object spec fields (API spelling, dotted) read from one Secret's keys
    secret_objects: dict[str, SecretObjectConfig] = Field(default_factory=dict, alias="secretObjects")


class LocationsConfig(_Strict):
    """Config Connector Kinds that are one Kind over several scopes, by ``spec.location``.

    KCC's ComputeAddress is regional or global (``location: us-central1`` or
    ``global``) where the API has ``addresses`` and ``globalAddresses``. Each
    entry maps the other scopes of one Kind to the generated Kinds that serve
    them; an empty mapping makes ``location`` another name for the Kind's own
    region or zone. The generator adds ``spec.location`` to the Kind's CRD, and
    the runtime reconciles each object as the Kind that serves its scope.
    """

    field: str = "location"
    reason: str = Field(min_length=1)
    kinds: dict[str, dict[Literal["global", "region", "zone"], str]]


class DerivedOverride(_Strict):
    """Settings for one derived Kind of an ``auto`` file, with the reason."""

    kind: str | None = None  # the Kind name, where the convention does not give Config Connector's
    reason: str = Field(min_length=1)
    asset_type: str | None = Field(default=None, alias="assetType")
    id_generation: Literal["user", "service"] | None = Field(default=None, alias="idGeneration")
    parents: dict[str, ParentConfig] = Field(default_factory=dict)
    fields: dict[str, FieldOverride] = Field(default_factory=dict)
    references: dict[str, ReferenceConfig] = Field(default_factory=dict)
    methods: MethodsConfig = Field(default_factory=MethodsConfig)
    aliases: tuple[AliasConfig, ...] = ()  # Config Connector's names for the Kind's fields
    forms: tuple[FormConfig, ...] = ()  # see KindConfig
    canonical: dict[str, CanonicalConfig] = Field(default_factory=dict)  # see KindConfig
    companions: tuple[CompanionConfig, ...] = ()  # spec fields kept in a paired resource of another API
    present: PresentConfig | None = None  # an on/off resource (a service is enabled or not)
    example_id: str | None = Field(default=None, alias="exampleID")  # an ID the service has in any project, for examples
    spec_fields: tuple[str, ...] | None = Field(default=None, alias="specFields")  # see KindConfig
    identity: str | None = None  # see KindConfig
    fixed: dict[str, str] = Field(default_factory=dict)  # see KindConfig
    sensitive: SensitiveConfig | None = None  # see KindConfig
    entry_of: EntryConfig | None = Field(default=None, alias="entryOf")  # see KindConfig
    external_forms: tuple[str, ...] = Field(default=(), alias="externalForms")  # see KindConfig
    secret_objects: dict[str, SecretObjectConfig] = Field(default_factory=dict, alias="secretObjects")  # see KindConfig


class KindsFile(_Strict):
    """Which resources of one Discovery document become Kinds.

    ``kinds`` lists curated Kinds (hand-reviewed). With ``auto: true`` every
    other resource with standard methods becomes a derived Kind (``kccgen
    coverage`` lists them, and the excluded ones with the reason);
    ``overrides`` adjusts a derived Kind and ``exclude`` leaves a resource out,
    each with a reason.
    """

    api: str  # Discovery name, e.g. cloudkms
    version: str | None = None  # Discovery version, e.g. v1; default: the newest GA version pinned
    # The documents ``auto`` derives Kinds from (default: every pinned GA and beta
    # version of the API): two products behind one API name (Dialogflow ES in v2,
    # CX in v3) are two kind files, each with its versions, prefix and service.
    versions: tuple[str, ...] = ()
    service: str | None = None  # KRM service, e.g. kms -> kms.cnrm.cloud.google.com; default: api
    kind_prefix: str | None = Field(default=None, alias="kindPrefix")  # default: from the canonical name
    auto: bool = False
    exclude: dict[str, str] = Field(default_factory=dict)  # auto: resource path -> reason
    overrides: dict[str, DerivedOverride] = Field(default_factory=dict)  # auto: resource path -> settings
    # auto: only these resources (a second file on a document, for one more Kind of a
    # resource another file serves: compute's projects as a Shared VPC service project)
    only: tuple[str, ...] = ()
    kinds: tuple[KindConfig, ...] = ()
    # Config Connector's version name -> Kinds of this file it serves under that name: their
    # CRD serves it too, with the same schema, so its manifests apply unchanged (one line per API).
    kcc_versions: dict[Annotated[str, StringConstraints(pattern=r"^v\d+(alpha|beta)?\d*$")], tuple[str, ...]] = Field(
        default_factory=dict, alias="kccVersions"
    )
    locations: LocationsConfig | None = None  # Config Connector's Kinds over several scopes

    @property
    def service_name(self) -> str:
        return self.service or self.api

    @property
    def group(self) -> str:
        # an API group is a DNS subdomain: lower case (gamesConfiguration -> gamesconfiguration)
        return f"{self.service_name.lower()}.cnrm.cloud.google.com"


class ExternalIamConfig(_Strict):
    """Where the policy methods of a resource no Kind serves are (an organization's):
    IAM Kinds may then name it with ``{kind, external}``."""

    document: str  # cloudresourcemanager.v3
    resource: str  # organizations


class ExternalKindConfig(_Strict):
    """A Kind our Kinds reference that kccgen does not generate (yet)."""

    kind: str
    asset_type: str = Field(alias="assetType")
    # Which of the asset type's formats is canonical, when not the newest row.
    asset_format: str | None = Field(default=None, alias="assetFormat")
    by_name: bool = Field(default=False, alias="byName")  # Config Connector has this Kind: name refs allowed
    external_forms: tuple[str, ...] = Field(default=(), alias="externalForms")
    reason: str = Field(min_length=1)
    iam: ExternalIamConfig | None = None


class ExternalKindsFile(_Strict):
    kinds: tuple[ExternalKindConfig, ...]


class RetiredKind(_Strict):
    """A Kind that was generated and no longer is: users' manifests name it, so it
    leaves only with a reason (and, when renamed, the Kind that replaces it)."""

    kind: str
    reason: str = Field(min_length=1)
    renamed_to: str | None = Field(default=None, alias="renamedTo")


class RetiredKindsFile(_Strict):
    kinds: tuple[RetiredKind, ...] = ()


def _model_of(annotation: Any) -> tuple[str, type[BaseModel] | None]:
    """Classify an annotation: ('model'|'list'|'dict'|'scalar', element model)."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "model", annotation
    if origin in (typing.Union, types.UnionType):
        for a in args:
            kind, m = _model_of(a)
            if m is not None:
                return kind, m
        return "scalar", None
    if origin in (tuple, list) and args:
        _, m = _model_of(args[0])
        return ("list", m) if m is not None else ("scalar", None)
    if origin is dict and len(args) == 2:
        _, m = _model_of(args[1])
        return ("dict", m) if m is not None else ("scalar", None)
    return "scalar", None


def check_keys(model: type[BaseModel], raw: Any, file: str, path: tuple[object, ...]) -> None:
    """Reject unknown keys with a 'did you mean' before pydantic sees them."""
    if not isinstance(raw, dict):
        return
    allowed: dict[str, Any] = {}
    for name, f in model.model_fields.items():
        allowed[f.alias or name] = f.annotation
    for key, value in raw.items():
        if key not in allowed:
            raise SpecError(file, json_path(*path, key), f"unknown key {key!r}{did_you_mean(str(key), allowed)}")
        kind, sub = _model_of(allowed[key])
        if sub is None:
            continue
        if kind == "model":
            check_keys(sub, value, file, (*path, key))
        elif kind == "list" and isinstance(value, list):
            for i, v in enumerate(value):
                check_keys(sub, v, file, (*path, key, i))
        elif kind == "dict" and isinstance(value, dict):
            for k, v in value.items():
                check_keys(sub, v, file, (*path, key, k))


def load_strict(model: type[_M], path: Path, display: str | None) -> _M:
    """A strict YAML spec file: unknown keys get a did-you-mean, errors a JSON path."""
    file = display or str(path)
    raw = read_yaml(path, file)
    check_keys(model, raw, file, ())
    try:
        return model.model_validate(raw)
    except ValidationError as e:
        raise from_validation_error(file, e) from None


def load_kinds_file(path: Path, display: str | None = None) -> KindsFile:
    return load_strict(KindsFile, path, display)


def load_external_kinds(path: Path, display: str | None = None) -> ExternalKindsFile:
    return load_strict(ExternalKindsFile, path, display)


def load_retired_kinds(path: Path, display: str | None = None) -> RetiredKindsFile:
    return load_strict(RetiredKindsFile, path, display)
