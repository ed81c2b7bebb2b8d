"""The vocabulary every layer agrees on: method shapes (how a Kind's resource is created,
read, updated and deleted) and field facts (what may be compared, changed and enforced).

The generator's IR builds these values from a Discovery document, a generated
``<kind>_adapter.py`` is their source text, and the runtime dispatches on them
with exhaustive ``match`` statements (``assert_never``), so a variant added
here without a handler fails type checking. A Discovery method that fits no
variant is reported by the generator and its Kind is not generated.

Standard library only: the generated adapters import this module, and so will
any runtime that executes them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypedDict


class Lro(StrEnum):
    """How a method reports completion."""

    NONE = "none"  # the answer is the resource (or empty)
    GOOGLE_LONGRUNNING = "google.longrunning"  # Operation {name, done, error, response}
    COMPUTE = "compute"  # compute Operation {status: DONE, error.errors, targetLink}
    DNS = "dns"  # Cloud DNS Operation {id, status: done, zoneContext}
    # GKE's Operation {name (short), status: DONE, error: Status, operationType}:
    # polled at <the resource's location>/operations/<name> (projects.locations.operations.get)
    LOCATED = "located"


class Where(StrEnum):
    """Where a create-only input travels in the create request."""

    QUERY = "query"  # ?skipInitialVersionCreation=true
    BODY = "body"  # beside the resource: CreateSnapshotRequest.subscription


@dataclass(frozen=True)
class Call:
    """One Discovery method of the Kind's resource and how to fill its parameters.

    ``params`` spells each path (and required query) parameter from identity
    placeholders: ``(("name", "projects/{project}/topics/{topic}"),)``.
    """

    method: str  # the method's name on the resource: get, insert, patch...
    params: tuple[tuple[str, str], ...] = ()
    lro: Lro = Lro.NONE
    # another resource of the same document whose method this is (its accessor
    # chain): a secret version is made by its secret's ``projects.secrets.addVersion``;
    # () the adapter's own
    resource: tuple[str, ...] = ()


@dataclass(frozen=True)
class CreateInput:
    """A create-request value that is not part of the resource: the spec field holding it
    maps to ``field`` (its API name), it cannot change later and GET never returns it."""

    field: str
    where: Where


# --- create ------------------------------------------------------------------------------


@dataclass(frozen=True)
class CreateAtPath:
    """PUT to the resource's own path; the ID is in the URL (pubsub ``topics.create``).

    ``name_field``: the body field that holds the full name (``name``), or None when
    the request has none. ``request_fields``: when the body is a create request
    rather than the resource (``CreateSnapshotRequest``), the resource fields it
    carries; None: the body is the resource.
    """

    call: Call
    name_field: str | None = "name"
    request_fields: tuple[str, ...] | None = None
    inputs: tuple[CreateInput, ...] = ()


@dataclass(frozen=True)
class CreateWithIdParam:
    """POST to the collection with the ID as a query parameter (``?secretId=``)."""

    call: Call
    id_param: str
    inputs: tuple[CreateInput, ...] = ()


@dataclass(frozen=True)
class CreateWithNameInBody:
    """POST (``insert``) to the collection; a body field holds the short ID: ``name``
    (compute, storage, dns), another field (dns ``responsePolicyName``) or a dotted
    path into a reference object (bigquery ``datasetReference.datasetId``)."""

    call: Call
    name_field: str = "name"
    inputs: tuple[CreateInput, ...] = ()
    full_name: bool = False  # the field takes the full resource name (AIP-style {+parent} APIs), not the short ID
    # the resource fields the create request takes, where it is a request of its own
    # (licensing's LicenseAssignmentInsert{userId}); None: the body is the resource
    request_fields: tuple[str, ...] | None = None


@dataclass(frozen=True)
class CreateWrapped:
    """POST a request that wraps the resource: ``{instanceId: id, instance: {...}}`` (spanner).
    ``id_field`` may be a dotted path into the wrapped resource, which then holds
    the short ID: GKE's ``{cluster: {name: id}}`` is ``cluster.name``."""

    call: Call
    id_field: str
    resource_field: str
    inputs: tuple[CreateInput, ...] = ()
    # the dotted id_field takes the full resource name, not the short ID (Cloud
    # Tasks' {task: {name: projects/.../tasks/t}}, "Optionally caller-specified")
    full_name: bool = False


@dataclass(frozen=True)
class CreateServiceAssigned:
    """POST to the collection; the service picks the ID and answers with it in
    ``id_field``: the full name in ``name`` (monitoring), or the short ID (gmail ``id``)."""

    call: Call
    inputs: tuple[CreateInput, ...] = ()
    id_field: str = "name"
    # the resource fields the create request takes, where it is not the resource
    # (AddSecretVersionRequest takes none, only its payload input); None: the resource
    request_fields: tuple[str, ...] | None = None
    # the request field that wraps the resource (healthcare's CreateMessageRequest.message,
    # dlp's CreateConnectionRequest.connection); "": the body is the resource
    resource_field: str = ""
    # where the create's answer holds the resource, when it is not the answer
    # itself: sqladmin's SslCertsInsertResponse.clientCert.certInfo (the
    # private key beside it is dropped); "": the answer is the resource (or an operation)
    answer_field: str = ""
    # After a lost answer or a crash, the resource may exist under an ID nobody
    # was told: ``find`` lists the collection (same parent as the create) and
    # ``items_field`` holds the list answer's resources. ``label_field``: a
    # labels map the create marks with a one-time label, so the listed resource
    # is recognised by it; without one, by its content. No list: never settled.
    find: Call | None = None
    items_field: str = ""
    label_field: str = ""


@dataclass(frozen=True)
class Canonical:
    """How the service spells a top-level value the user may write otherwise:
    the desired value is rewritten so, before it is sent or compared (a bucket's
    ``eu`` is ``EU``; Spanner's ``regional-us-central1`` is a full name)."""

    field: str
    expand: str = ""  # a short name (no "/") becomes this: projects/{project}/instanceConfigs/{}
    case: str = ""  # upper | lower


@dataclass(frozen=True)
class Form:
    """Another form Config Connector's manifests give a spec field, beside the API's.

    Its Terraform-era Kinds take some objects as a JSON string (BigQueryTable's
    ``schema``, the table's fields as JSON) or as ``true`` (a secret's
    ``replication.automatic``, the API's empty message). The field accepts both
    forms; the runtime rewrites the other form to the API's before anything reads
    the spec, so both send the same request.
    """

    path: str  # the spec path (dotted, [] steps into each element of a list)
    # json: a string holding the value as JSON | true: a boolean, true for {} and false
    # for unset | list: the object's one list field (list_field), given as the list
    form: str
    list_field: str = ""  # json, list: a list is this field of the object (Terraform's table schema: fields)


@dataclass(frozen=True)
class NoCreate:
    """The resource cannot be created through the API: it can only be acquired."""


@dataclass(frozen=True)
class CreateByVerb:
    """A custom method makes the resource be, on its own name: serviceusage's
    ``services.enable``, compute's ``projects.enableXpnHost``. ``body``: fixed
    request fields, (dotted API path, template over the identity's values:
    ``("xpnResource.id", "{serviceProject}")``, or a literal); ``takes_body``:
    False for a method with no request message (compute's ``enableXpnHost``),
    which sends none."""

    call: Call
    body: tuple[tuple[str, str], ...] = ()
    inputs: tuple[CreateInput, ...] = ()
    takes_body: bool = True




# --- update ------------------------------------------------------------------------------


@dataclass(frozen=True)
class NoGuard:
    """The write carries no optimistic-concurrency token."""


@dataclass(frozen=True)
class FingerprintGuard:
    """The body repeats the live ``fingerprint``; a stale one is refused (compute)."""

    field: str = "fingerprint"


@dataclass(frozen=True)
class MetagenerationGuard:
    """A precondition parameter carries the live ``metageneration`` (storage ``ifMetagenerationMatch``)."""

    param: str = "ifMetagenerationMatch"
    field: str = "metageneration"


Guard = NoGuard | FingerprintGuard | MetagenerationGuard


@dataclass(frozen=True)
class ParentEntry:
    """A resource that is one entry of a list field of its parent, keyed by a
    field of the entry: a router's ``nats``, ``interfaces`` and ``bgpPeers``,
    each entry named by its ``name``. ``Adapter.get`` reads the parent and
    ``Adapter.read_list`` picks the entry; a write reads the parent, replaces,
    inserts or removes this entry only, and sends the parent's whole list
    through ``call`` with the parent's ``guard`` token; a conflict (412, the
    token changed) reads again and retries, bounded. Every variant of the
    three roles below carries it, so one object never touches another
    object's entry."""

    call: Call  # the parent's write: routers.patch
    field: str  # the parent's list: nats
    key: str = "name"  # the entry's field holding its ID
    guard: Guard = FingerprintGuard()  # frozen: one shared default is safe


@dataclass(frozen=True)
class CreateEntry:
    """Insert this entry (its key set to the ID) into the parent's list (``ParentEntry``)."""

    entry: ParentEntry
    inputs: tuple[CreateInput, ...] = ()

    @property
    def call(self) -> Call:
        return self.entry.call


@dataclass(frozen=True)
class CreateByStatement:
    """POST a request whose statement names the new resource: Spanner's
    ``CreateDatabaseRequest.createStatement`` is ``CREATE DATABASE `db```
    (``CREATE DATABASE "db"`` in the PostgreSQL dialect). ``statements``:
    (value of ``dialect_field`` or "" for any other, template over ``{id}``);
    the spec's fields the request takes travel beside it (``request_fields``)."""

    call: Call
    statement_field: str
    statements: tuple[tuple[str, str], ...]
    dialect_field: str = ""
    request_fields: tuple[str, ...] = ()
    inputs: tuple[CreateInput, ...] = ()


CreateShape = CreateAtPath | CreateWithIdParam | CreateWithNameInBody | CreateWrapped | CreateServiceAssigned | CreateByVerb | CreateByStatement | CreateEntry | NoCreate


@dataclass(frozen=True)
class UpdateMaskInQuery:
    """PATCH the resource with only the changed fields and ``?updateMask=a,b``."""

    call: Call
    mask_param: str = "updateMask"


@dataclass(frozen=True)
class UpdateMaskInBody:
    """PATCH a request that wraps the resource and the mask: ``{topic: {...}, updateMask: "a,b"}``."""

    call: Call
    resource_field: str
    mask_field: str


@dataclass(frozen=True)
class UpdateMerge:
    """PATCH the resource as a JSON merge patch (RFC 7386): changed top-level fields, nulls delete."""

    call: Call
    guard: Guard = field(default_factory=NoGuard)


@dataclass(frozen=True)
class UpdateReplace:
    """PUT the whole resource: the live resource with the changed fields applied.
    ``resource_field``: the request field that wraps it (contentwarehouse's
    ``UpdateRuleSetRequest.ruleSet``, no mask); "": the body is the resource."""

    call: Call
    guard: Guard = field(default_factory=NoGuard)
    resource_field: str = ""


@dataclass(frozen=True)
class NoUpdate:
    """The API has no update method: every change needs a new resource."""


@dataclass(frozen=True)
class UpdateEntry:
    """Replace this entry in the parent's list: the live entry with the changed fields applied (``ParentEntry``)."""

    entry: ParentEntry

    @property
    def call(self) -> Call:
        return self.entry.call


@dataclass(frozen=True)
class Route:
    """One field of the resource and the call that changes it (``UpdateRouted``).
    GKE's ``resourceLabels`` goes through ``setResourceLabels`` with the body
    ``{resourceLabels: <desired>, labelFingerprint: <live>}``; its ``addonsConfig``
    through ``update`` with ``{update: {desiredAddonsConfig: <desired>}}``."""

    field: str  # dotted API path of the resource: resourceLabels, config.machineType
    call: Call
    into: str  # dotted request path that takes the field's desired value
    # (request path, live resource path): tokens the call must repeat (labelFingerprint)
    tokens: tuple[tuple[str, str], ...] = ()
    # ``field`` is no field of the resource, only of the call's request (GKE's node
    # count: SetNodePoolSizeRequest.nodeCount; the pool's size is its instance
    # groups'): GET never returns it, so the value last applied is kept in the
    # object (``APPLIED_ANNOTATION``) and a spec that differs from it is a change.
    # The create sends it as ``create_as`` (initialNodeCount) where that is unset.
    write_only: bool = False
    create_as: str = ""
    # the call depends on the desired value (a secret version's state: ENABLED is
    # versions.enable, DISABLED versions.disable; ``into`` "": the verb says it all)
    verbs: tuple[tuple[str, Call], ...] = ()


# The write-only route fields' values last applied, as JSON: {"nodeCount": 3}
APPLIED_ANNOTATION = "kccgen.dev/applied-write-only"


@dataclass(frozen=True)
class UpdateRouted:
    """An API whose update is split over verbs, each changing one field (GKE: "exactly
    one update can be applied to a cluster with each request"): a changed field is
    sent through its route, one call per route in the order given here, each
    waiting for its operation before the next; a field no route covers is
    immutable (its mutability row says so, and a change is refused by name)."""

    routes: tuple[Route, ...]

    @property
    def calls(self) -> tuple[Call, ...]:
        return tuple(dict.fromkeys(c for r in self.routes for c in (r.call, *(v for _, v in r.verbs))))


UpdateShape = UpdateMaskInQuery | UpdateMaskInBody | UpdateMerge | UpdateReplace | UpdateEntry | UpdateRouted | NoUpdate


def write_only_routes(shape: UpdateShape) -> tuple[Route, ...]:
    """The routes of fields GET never returns (``Route.write_only``)."""
    return tuple(r for r in shape.routes if r.write_only) if isinstance(shape, UpdateRouted) else ()


def route_of(shape: UpdateRouted, api_path: str) -> Route | None:
    """The route changing ``api_path`` (``[]`` and ``.*`` steps allowed): its own or
    the nearest enclosing field's."""
    p = api_path.replace("[]", "").replace(".*", "")
    hits = [r for r in shape.routes if p == r.field or p.startswith(r.field + ".")]
    return max(hits, key=lambda r: len(r.field)) if hits else None


# --- delete ------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeleteAtPath:
    """DELETE the resource's path; an answer of 404 means it is already gone."""

    call: Call


@dataclass(frozen=True)
class NoDelete:
    """The API has no delete method: deleting the object abandons the resource."""


@dataclass(frozen=True)
class DeleteByVerb:
    """A custom method undoes it: ``services.disable``, ``projects.disableXpnHost``.
    ``switch``: an annotation that, set to "false", makes deleting the object
    leave the resource as it is (Config Connector's
    ``cnrm.cloud.google.com/disable-on-destroy``, on by default); ``flags``:
    (dotted API path, annotation) of booleans the annotation sets in the
    request (``disableDependentServices`` from ``.../disable-dependent-services``)."""

    call: Call
    body: tuple[tuple[str, str], ...] = ()
    switch: str = ""
    flags: tuple[tuple[str, str], ...] = ()
    takes_body: bool = True  # see CreateByVerb


@dataclass(frozen=True)
class DeleteEntry:
    """Remove this entry from the parent's list, leaving every other one (``ParentEntry``)."""

    entry: ParentEntry

    @property
    def call(self) -> Call:
        return self.entry.call


DeleteShape = DeleteAtPath | DeleteByVerb | DeleteEntry | NoDelete


@dataclass(frozen=True)
class Present:
    """The resource's read answers whether or not it is on (a service DISABLED, a
    project no Shared VPC host): it exists for the reconciler only while ``field``
    holds one of ``values`` (``{param}`` in a value is the identity's)."""

    field: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class ReadByList:
    """The API has no get: the resource is the one item of the list answer
    (``Adapter.get`` is the list call) whose fields hold the identity's values.
    servicenetworking's connections are listed by consumer network and named
    by nothing else; compute's ``getXpnResources`` lists a host's service
    projects. ``match``: (dotted item field, template over the identity's
    values: ``projects/{projectNumber}/global/networks/{network}``)."""

    items_field: str
    match: tuple[tuple[str, str], ...]


#: The identity value a template may name beyond the identity's own: the
#: project's number, which some APIs take in place of its ID (servicenetworking's
#: consumer networks). The runtime looks it up once per project.
PROJECT_NUMBER = "projectNumber"

#: The value a create's required idempotency key is spelled with (drive's
#: ``drives.create?requestId=``): the runtime fills it with the create's one-time
#: token, the same on a retry of the same create, so the service can tell them apart.
REQUEST_TOKEN = "requestToken"


# --- operations --------------------------------------------------------------------------


@dataclass(frozen=True)
class OperationGetter:
    """How to poll an operation: the ``*.operations.get`` method and the names it serves.

    ``pattern`` is the regex an operation's name must match (google.longrunning);
    empty where the scope decides (compute global/region/zone operations).
    """

    resource: tuple[str, ...]  # client accessor chain: ("projects", "locations", "operations")
    params: tuple[tuple[str, str], ...]
    pattern: str = ""


# --- field facts: what the runtime may compare, change and enforce -----------------------


class Behaviour(StrEnum):
    """A field behaviour, as Discovery's prose states google.api.field_behavior."""

    REQUIRED = "required"
    OPTIONAL = "optional"
    OUTPUT_ONLY = "output-only"
    INPUT_ONLY = "input-only"
    IMMUTABLE = "immutable"
    IDENTIFIER = "identifier"


@dataclass(frozen=True, order=True)
class Fact:
    """One behaviour and where it came from (``description:'Output only.'``, ``readOnly``, an override)."""

    behaviour: Behaviour
    source: str


class TypeKind(StrEnum):
    STRING = "string"
    INTEGER = "integer"
    NUMBER = "number"
    BOOLEAN = "boolean"
    ENUM = "enum"
    OBJECT = "object"
    ARRAY = "array"
    MAP = "map"
    ANY = "any"


@dataclass(frozen=True)
class FieldType:
    """A field's wire type: kind, Discovery format (int64, google-duration...) and element type."""

    kind: TypeKind
    format: str | None = None
    item: FieldType | None = None

    def leaf(self) -> FieldType:
        """The element type under arrays and maps."""
        t = self
        while t.item is not None:
            t = t.item
        return t


@dataclass(frozen=True)
class FieldRule:
    """What the runtime may do with one spec or status path, and the source of every fact.

    ``facts``: each behaviour with where it came from; ``updatable``: whether the
    update method can change the field (why, in ``updatable_source``);
    ``readable``: whether GET returns it (input-only fields are never compared).
    """

    path: str  # spec.messageStoragePolicy.allowedPersistenceRegions, status.observedState.state
    api_path: str | None  # the API field behind it; None for KRM-only fields (identity, parents)
    type: FieldType
    facts: tuple[Fact, ...]
    updatable: bool
    updatable_source: str
    readable: bool
    readable_source: str
    identity: bool = False

    @property
    def behaviours(self) -> frozenset[Behaviour]:
        return frozenset(f.behaviour for f in self.facts)

    @property
    def immutable(self) -> bool:
        return Behaviour.IMMUTABLE in self.behaviours or self.identity


# --- field rules as rows -------------------------------------------------------------------
#
# A generated ``<kind>_mutability.py`` writes its FieldRules as short rows and
# ``field_rules`` expands them: a row states the path, type, facts and the two
# verdicts; the API path and both sources are derived (from the path, the facts
# and a few per-Kind texts) unless the row overrides them. The generator checks
# that the expansion equals its rules, so a row overrides exactly the values the
# derivation would get wrong. It lives here because both sides need the same
# derivation: the generator to decide what to override, the runtime to expand.

STATUS_SOURCE = "status: written by the controller from GET"
KRM_ONLY_SOURCE = "KRM-only field: not part of the API resource"
API_PATH = "{api_path}"  # in field_rules' update text: the field's API path


class RowOverrides(TypedDict, total=False):
    """The values of a row that differ from what field_rules derives."""

    api_path: str | None  # derived: the row's path
    identity: bool  # derived: False
    updatable_source: str
    readable_source: str


# (path under spec. or status.observedState., type, facts, updatable, readable[, overrides])
FieldRow = tuple[str, FieldType, tuple[Fact, ...], bool, bool] | tuple[str, FieldType, tuple[Fact, ...], bool, bool, RowOverrides]

_OVERRIDABLE = frozenset(RowOverrides.__annotations__)


def field_rule(
    row: FieldRow, *, status: bool, get: str, update: str | None, identity: str = "", fixed: str = ""
) -> FieldRule:
    """One row as a FieldRule; a source nothing derives is empty (``field_rules`` refuses it).

    Derived unless overridden: ``api_path`` is the row's path; ``identity`` is
    False; ``updatable_source`` is, in order, STATUS_SOURCE for status rows,
    ``identity (<identity>)`` for identity fields, ``update`` with API_PATH
    replaced by the API path for updatable fields, ``fixed`` for every other
    field when the Kind has no update method (``update`` is None), then
    ``output-only``, ``immutable (<first immutable fact's source>)`` and last
    ``fixed`` (a reason shared by the Kind's fields, such as an update
    allow-list); ``readable_source`` is ``<get> returns <api_path>`` for
    readable fields, else ``input-only (<first input-only fact's source>): GET
    never returns it`` or, without an API path, KRM_ONLY_SOURCE.
    """
    key, type_, facts, updatable, readable = row[:5]
    given: RowOverrides = row[5] if len(row) == 6 else {}
    if unknown := set(given) - _OVERRIDABLE:
        raise ValueError(f"{key}: cannot override {sorted(unknown)}")
    api_path = given.get("api_path", key)
    is_identity = given.get("identity", False)

    def first(behaviour: Behaviour) -> str | None:
        return next((f.source for f in facts if f.behaviour is behaviour), None)

    if status:
        usrc = STATUS_SOURCE
    elif is_identity:
        usrc = f"identity ({identity})"
    elif updatable:
        usrc = update.replace(API_PATH, api_path) if update is not None and api_path is not None else ""
    elif update is None:
        usrc = fixed
    elif first(Behaviour.OUTPUT_ONLY) is not None:
        usrc = "output-only"
    elif (why := first(Behaviour.IMMUTABLE)) is not None:
        usrc = f"immutable ({why})"
    else:
        usrc = fixed
    if readable:
        rsrc = f"{get} returns {api_path}" if api_path is not None else ""
    elif (why := first(Behaviour.INPUT_ONLY)) is not None:
        rsrc = f"input-only ({why}): GET never returns it"
    else:
        rsrc = KRM_ONLY_SOURCE if api_path is None else ""
    return FieldRule(
        path=("status.observedState." if status else "spec.") + key,
        api_path=api_path,
        type=type_,
        facts=facts,
        updatable=updatable,
        updatable_source=given.get("updatable_source", usrc),
        readable=readable,
        readable_source=given.get("readable_source", rsrc),
        identity=is_identity,
    )


def field_rules(
    *,
    get: str,
    update: str | None,
    identity: str = "",
    fixed: str = "",
    spec: Iterable[FieldRow] = (),
    observed: Iterable[FieldRow] = (),
) -> tuple[FieldRule, ...]:
    """The FieldRules of a Kind's spec rows, then of its status.observedState rows (see field_rule).

    ``get``: the get method's ID; ``update``: the source of a field the update
    method changes (API_PATH stands for its API path), None when the Kind has
    no update method; ``identity``: the identity template; ``fixed``: the
    source of a spec field the update method cannot change for a reason no
    fact of the field states.
    """
    rules = tuple(field_rule(r, status=False, get=get, update=update, identity=identity, fixed=fixed) for r in spec)
    rules += tuple(field_rule(r, status=True, get=get, update=update, identity=identity, fixed=fixed) for r in observed)
    for r in rules:
        if not r.updatable_source or not r.readable_source:
            raise ValueError(f"{r.path}: no source can be derived for this row; it must give one")
    return rules


# --- aliases -------------------------------------------------------------------------------

Scalar = str | int | float | bool | None


@dataclass(frozen=True)
class Alias:
    """A Config Connector field name that stands for one of our spec fields.

    Older KCC manifests spell API fields differently (``spec.routingMode`` for
    ``spec.routingConfig.routingMode``); the runtime moves the value to
    ``target`` before anything reads the spec, so both spellings send the same
    request. ``values`` maps the alias's values to the target's (``None``: send
    nothing); ``items`` are the same moves inside each element of a list alias,
    with paths relative to the element.
    """

    field: str  # the alias: a spec field or a dotted path ([] steps into list elements)
    target: str  # the spec path (dotted, the same [] steps) it stands for; "": accepted, sent nowhere
    # alias value -> target value; an object target as (key, value) pairs, hashable
    # as contract values are (true -> (): the empty message {})
    values: tuple[tuple[Scalar, tuple[tuple[str, Any], ...] | Scalar], ...] = ()
    items: tuple[Alias, ...] = ()
    keyed_by: str = ""  # a list alias of a map: each element is the entry keyed by this field of it
    # KCC's one object (or value, kept at ``into``) is one element of the target list;
    # ``fixed`` fields are set in each element it adds; ``append``: after the
    # elements earlier aliases put there (bootDisk, attachedDisk -> disks)
    element: bool = False
    into: str = ""  # without element: the value is this field of the target object
    fixed: tuple[tuple[str, Scalar], ...] = ()
    append: bool = False


#: The location scopes of a compute-style template: ``global/``, ``regions/{region}``, ``zones/{zone}``.
SCOPES = ("global", "region", "zone")
_ZONE = re.compile(r"^[a-z]+(?:-[a-z]+)*\d+-[a-z]$")  # us-central1-a; regions end in a digit


def template_scope(template: str) -> tuple[str, str]:
    """(scope, param) of an identity template: ``("region", "region")`` for
    ``projects/{project}/regions/{region}/addresses/{address}``, ``("global", "")``
    for ``projects/{project}/global/...``, ``("", "")`` when it has none."""
    parts = template.split("/")
    for i, seg in enumerate(parts[:-1]):
        if seg == "global":
            return "global", ""
        nxt = parts[i + 1]
        if seg in ("regions", "zones") and nxt.startswith("{") and nxt.endswith("}"):
            return seg.removesuffix("s"), nxt[1:-1]
    return "", ""


def location_scope(value: str) -> str:
    """The scope a Config Connector ``location`` value names: ``global``, a zone
    (``us-central1-a``) or else a region (``us-central1``, ``europe-west4``)."""
    if value == "global":
        return "global"
    return "zone" if _ZONE.match(value) else "region"


@dataclass(frozen=True)
class Locations:
    """Config Connector's one Kind for a resource that exists at several scopes.

    KCC's ComputeAddress is regional or global by ``spec.location``; the API has
    two collections (``addresses``, ``globalAddresses``) that kccgen generates as
    two Kinds. The Kind that carries this keeps its own scope (``scope``, filled
    from ``location`` into spec field ``param``) and hands the other scopes to
    the Kinds in ``variants`` (scope, Kind): the runtime reconciles the object as
    that Kind, so each scope keeps its own generated methods and mutability.
    """

    field: str  # the spec property: location
    scope: str  # this Kind's own scope: global, region or zone
    param: str  # the spec field the location fills at this Kind's own scope ("" for global)
    variants: tuple[tuple[str, str], ...] = ()  # (scope, Kind) served by another generated Kind

    def kind_for(self, scope: str) -> str | None:
        """The variant Kind serving ``scope``; None for this Kind's own scope or one nobody serves."""
        return next((k for s, k in self.variants if s == scope), None)

    def scopes(self) -> tuple[str, ...]:
        return (self.scope, *(s for s, _ in self.variants))


@dataclass(frozen=True)
class Companion:
    """A spec field whose value lives in another resource the service pairs with
    this one (a project's billing account is cloudbilling's
    ``projects/{project}/billingInfo``): read with that resource's own GET and
    written with its own call, after a create and whenever it differs. It is
    not part of the main resource's body, and a spec that leaves it out leaves
    it alone."""

    field: str  # the spec field: billingAccountRef
    doc: str  # the other API's document: cloudbilling.v1
    resource: tuple[str, ...]  # its accessor chain: ("projects",)
    get: Call  # getBillingInfo(name=projects/{project})
    update: Call  # updateBillingInfo(name=projects/{project}), the body the resource with ``api_field`` set
    api_field: str  # where the value is in the other resource: billingAccountName
    target: str = ""  # the Kind a reference field names ("" for a plain value)
    # a list the service only appends to (a Spanner database's DDL statements,
    # getDdl / updateDdl): the write sends only the entries the spec adds after the
    # live ones, in its request's ``api_field``; a spec that drops or changes a
    # live entry is refused, since none can be taken back
    append_only: bool = False


# --- IAM policies ------------------------------------------------------------------------


@dataclass(frozen=True)
class IamMethods:
    """A resource's ``getIamPolicy`` and ``setIamPolicy``, the way its API spells them.

    ``version_param``: the query parameter asking for a policy version
    (``options.requestedPolicyVersion``, compute's ``optionsRequestedPolicyVersion``;
    "" when the read takes a ``GetIamPolicyRequest`` body, or none at all).
    ``version_in_body``: the read's body carries ``options.requestedPolicyVersion``.
    ``wrapped``: the write's body is ``{policy: ...}`` (False: the body is the
    policy itself, storage). ``update_mask``: the write takes ``updateMask``, which
    must name ``auditConfigs`` for them to be written. ``audit_configs``: the
    API's Policy has audit configs at all."""

    get: Call
    set: Call
    version_param: str = ""
    version_in_body: bool = False
    wrapped: bool = True
    update_mask: bool = False
    audit_configs: bool = False


class Owns(StrEnum):
    """What an IAM Kind owns of its target's policy (Config Connector's four IAM Kinds)."""

    POLICY = "policy"  # IAMPolicy: the whole policy, bindings and audit configs
    BINDINGS = "bindings"  # IAMPartialPolicy: the members it lists in the roles it lists
    MEMBER = "member"  # IAMPolicyMember: one member in one role (under one condition)
    AUDIT_CONFIG = "auditConfig"  # IAMAuditConfig: one service's audit config


@dataclass(frozen=True)
class IamTarget:
    """A resource an IAM Kind may name that no Kind of ours serves (Organization):
    where its policy methods are and how its name is spelled."""

    kind: str
    doc: str
    resource: tuple[str, ...]
    template: str  # organizations/{organization}
    iam: IamMethods


@dataclass(frozen=True)
class MemberRef:
    """``memberFrom.<field>``: a principal read from another object, Config Connector's
    way: the first of ``values`` (dotted paths in that object) it has, after
    ``prefix``. ``by_type``: the object's ``type`` key picks the paths instead
    (a BigQuery connection's service account depends on its kind of connection)."""

    field: str  # serviceAccountRef
    kind: str  # IAMServiceAccount
    values: tuple[str, ...]  # ("status.observedState.email",)
    prefix: str = "serviceAccount:"
    by_type: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # when the object has none of ``values`` yet: the principal from its name's values
    # (an account ID and project make a service account's email); an ID that is an email is it
    from_name: str = ""


@dataclass(frozen=True)
class PolicyAdapter:
    """An IAM Kind: its ``resourceRef`` names any Kind whose adapter has ``iam`` (or
    one of ``external_targets``), and it owns ``owns`` of that resource's policy."""

    kind: str
    api_version: str
    owns: Owns
    external_targets: tuple[IamTarget, ...] = ()
    member_refs: tuple[MemberRef, ...] = ()


@dataclass(frozen=True)
class SecretObject:
    """An object field whose strings are read from keys of one Kubernetes Secret:
    Config Connector's ``credential: {secretRef: {name, namespace}}``, a
    basic-auth Secret's ``username`` and ``password``. ``field``: the object's
    spec path (the API's spelling); ``keys``: (its API sub-field, the Secret's
    key). The sub-fields may still be given in the object itself (``ref`` unset);
    like any secret, the values reach the request body and nowhere else."""

    field: str  # cloudSql.credential
    keys: tuple[tuple[str, str], ...]  # (("password", "password"), ("username", "username"))
    ref: str = "secretRef"


# --- the adapter -------------------------------------------------------------------------


@dataclass(frozen=True)
class Adapter:
    """Everything a generated ``<kind>_adapter.py`` declares about its Kind's API."""

    kind: str
    api_version: str  # group/version of the KRM object
    doc: str  # Discovery document key: pubsub.v1
    resource: tuple[str, ...]  # client accessor chain: ("projects", "topics")
    template: str  # identity template: projects/{project}/topics/{topic}
    id_param: str  # the template's last placeholder ("" for a settings object: projects/{project}/policy)
    get: Call
    create: CreateShape
    update: UpdateShape
    delete: DeleteShape
    name_is_full: bool = True  # the resource's `name` holds its full name (False: the short ID)
    id_field: str = "name"  # dotted path of the response field carrying the ID (not `name`: the short ID)
    krm_only: tuple[str, ...] = ()  # spec fields that are not API fields (identity, parents)
    int64_paths: tuple[str, ...] = ()  # API paths whose KRM form may be an integer
    operations: tuple[tuple[str, OperationGetter], ...] = ()  # by accessor path or compute scope
    aliases: tuple[Alias, ...] = ()  # Config Connector spellings of spec fields
    forms: tuple[Form, ...] = ()  # Config Connector's other forms of spec fields (a JSON string, true)
    canonical: tuple[Canonical, ...] = ()  # values the service spells its own way
    locations: Locations | None = None  # Config Connector's spec.location over several scopes
    companions: tuple[Companion, ...] = ()  # spec fields kept in a paired resource of another API
    present: Present | None = None  # an on/off resource: present only in these states
    # an ID the service has for any project (a service's pubsub.googleapis.com),
    # where an invented one would not exist: examples use it
    example_id: str = ""
    read_list: ReadByList | None = None  # no get: ``get`` lists, this picks the item
    # (HTTP status, text of its message) the read answers for a resource that does
    # not exist, beside 404: compute's getRule answers 400 "...does not contain a
    # rule at priority 9000." (recorded traffic)
    absent: tuple[tuple[int, str], ...] = ()
    # the part of the read resource the spec describes, where the API keeps the
    # user's settings inside it (dlp's storedInfoTypes: currentVersion.config)
    view: str = ""
    # API fields the identity fills, sent in every create and update body:
    # (dotted API path, template over the identity's values), servicenetworking's
    # ``network`` from networkRef
    fixed: tuple[tuple[str, str], ...] = ()
    # spec paths ([] for list items) of sensitive fields, {value | valueFrom.secretKeyRef}
    # in KRM: the runtime resolves each to its string for the request and nowhere else
    secrets: tuple[str, ...] = ()
    # those whose API field is bytes (format byte, a secret version's payload.data):
    # the Secret's text is sent base64-encoded, as JSON carries bytes
    byte_secrets: tuple[str, ...] = ()
    secret_objects: tuple[SecretObject, ...] = ()  # object fields read from a Secret's keys (secretRef)
    iam: IamMethods | None = None  # the resource's IAM policy methods: IAM Kinds may name it

    def operation(self, key: str) -> OperationGetter:
        for k, getter in self.operations:
            if k == key:
                return getter
        raise KeyError(f"{self.kind}: no operations getter {key!r} in {self.doc}")


def id_field(shape: CreateShape) -> str:
    """The dotted path of the create's response field carrying the ID: where the
    create put it (``CreateWithNameInBody``) or where the service answers it."""
    if isinstance(shape, CreateWithNameInBody):
        return shape.name_field
    if isinstance(shape, CreateServiceAssigned):
        return shape.id_field
    if isinstance(shape, CreateEntry):
        return shape.entry.key
    if isinstance(shape, CreateWrapped) and shape.id_field.startswith(shape.resource_field + "."):
        return shape.id_field.removeprefix(shape.resource_field + ".")
    return "name"


def located_parent(name: str) -> str:
    """Where a resource's GKE-style operations live: its name up to its location
    (``projects/p/locations/us-central1``), else its first two segments."""
    segs = name.split("/")
    upto = next((i + 2 for i in range(0, len(segs) - 1, 2) if segs[i] == "locations"), 2)
    return "/".join(segs[:upto])


def template_value(template: str, values: dict[str, str]) -> str:
    """A body or state template with the identity's values filled in (``{serviceProject}``)."""
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), template)


def templates_of(a: Adapter) -> Iterator[str]:
    """Every template the adapter fills from identity values: method parameters,
    verb bodies, fixed fields, the list match and presence values."""
    calls = [a.get, *(s.call for s in (a.create, a.delete) if not isinstance(s, (NoCreate, NoDelete)))]
    calls += update_calls(a.update)
    for c in calls:
        yield from (t for _, t in c.params)
    for s in (a.create, a.delete):
        if isinstance(s, (CreateByVerb, DeleteByVerb)):
            yield from (t for _, t in s.body)
    yield from (t for _, t in a.fixed)
    if a.read_list is not None:
        yield from (t for _, t in a.read_list.match)
    if a.present is not None:
        yield from a.present.values


def uses_project_number(a: Adapter) -> bool:
    """Whether the adapter's templates need the project's number."""
    return any("{" + PROJECT_NUMBER + "}" in t for t in templates_of(a))


def update_calls(shape: UpdateShape) -> tuple[Call, ...]:
    """Every call an update may make: one, or a routed update's verbs."""
    if isinstance(shape, NoUpdate):
        return ()
    if isinstance(shape, UpdateRouted):
        return shape.calls
    return (shape.call,)


def create_inputs(shape: CreateShape) -> tuple[CreateInput, ...]:
    """The create-only inputs of any create variant (NoCreate has none)."""
    return () if isinstance(shape, NoCreate) else shape.inputs


__all__ = [
    "API_PATH",
    "APPLIED_ANNOTATION",
    "KRM_ONLY_SOURCE",
    "PROJECT_NUMBER",
    "SCOPES",
    "STATUS_SOURCE",
    "Adapter",
    "Alias",
    "Behaviour",
    "Call",
    "Companion",
    "CreateAtPath",
    "CreateByStatement",
    "CreateByVerb",
    "CreateEntry",
    "CreateInput",
    "CreateServiceAssigned",
    "CreateShape",
    "CreateWithIdParam",
    "CreateWithNameInBody",
    "CreateWrapped",
    "DeleteAtPath",
    "DeleteByVerb",
    "DeleteEntry",
    "DeleteShape",
    "Fact",
    "FieldRow",
    "FieldRule",
    "FieldType",
    "FingerprintGuard",
    "Guard",
    "Locations",
    "Lro",
    "MetagenerationGuard",
    "NoCreate",
    "NoDelete",
    "NoGuard",
    "NoUpdate",
    "OperationGetter",
    "ParentEntry",
    "Present",
    "ReadByList",
    "Route",
    "RowOverrides",
    "Scalar",
    "SecretObject",
    "TypeKind",
    "UpdateEntry",
    "UpdateMaskInBody",
    "UpdateMaskInQuery",
    "UpdateMerge",
    "UpdateReplace",
    "UpdateRouted",
    "UpdateShape",
    "Where",
    "create_inputs",
    "field_rule",
    "field_rules",
    "id_field",
    "located_parent",
    "location_scope",
    "route_of",
    "template_scope",
    "template_value",
    "templates_of",
    "update_calls",
    "uses_project_number",
    "write_only_routes",
]
