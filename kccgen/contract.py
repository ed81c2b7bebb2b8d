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

from dataclasses import dataclass, field
from enum import StrEnum


class Lro(StrEnum):
    """How a method reports completion."""

    NONE = "none"  # the answer is the resource (or empty)
    GOOGLE_LONGRUNNING = "google.longrunning"  # Operation {name, done, error, response}
    COMPUTE = "compute"  # compute Operation {status: DONE, error.errors, targetLink}
    DNS = "dns"  # Cloud DNS Operation {id, status: done, zoneContext}


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


@dataclass(frozen=True)
class CreateWrapped:
    """POST a request that wraps the resource: ``{instanceId: id, instance: {...}}`` (spanner)."""

    call: Call
    id_field: str
    resource_field: str
    inputs: tuple[CreateInput, ...] = ()


@dataclass(frozen=True)
class CreateServiceAssigned:
    """POST to the collection; the service picks the ID and answers with it in
    ``id_field``: the full name in ``name`` (monitoring), or the short ID (gmail ``id``)."""

    call: Call
    inputs: tuple[CreateInput, ...] = ()
    id_field: str = "name"


@dataclass(frozen=True)
class NoCreate:
    """The resource cannot be created through the API: it can only be acquired."""


CreateShape = CreateAtPath | CreateWithIdParam | CreateWithNameInBody | CreateWrapped | CreateServiceAssigned | NoCreate


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
    """PUT the whole resource: the live resource with the changed fields applied."""

    call: Call
    guard: Guard = field(default_factory=NoGuard)


@dataclass(frozen=True)
class NoUpdate:
    """The API has no update method: every change needs a new resource."""


UpdateShape = UpdateMaskInQuery | UpdateMaskInBody | UpdateMerge | UpdateReplace | NoUpdate


# --- delete ------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeleteAtPath:
    """DELETE the resource's path; an answer of 404 means it is already gone."""

    call: Call


@dataclass(frozen=True)
class NoDelete:
    """The API has no delete method: deleting the object abandons the resource."""


DeleteShape = DeleteAtPath | NoDelete


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

    field: str  # the alias: a top-level spec field, or a dotted path inside an element
    target: str  # the spec path (dotted) it stands for
    values: tuple[tuple[Scalar, Scalar], ...] = ()
    items: tuple[Alias, ...] = ()


# --- the adapter -------------------------------------------------------------------------


@dataclass(frozen=True)
class Adapter:
    """Everything a generated ``<kind>_adapter.py`` declares about its Kind's API."""

    kind: str
    api_version: str  # group/version of the KRM object
    doc: str  # Discovery document key: pubsub.v1
    resource: tuple[str, ...]  # client accessor chain: ("projects", "topics")
    template: str  # identity template: projects/{project}/topics/{topic}
    id_param: str  # the template's last placeholder
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
    return "name"


def create_inputs(shape: CreateShape) -> tuple[CreateInput, ...]:
    """The create-only inputs of any create variant (NoCreate has none)."""
    return () if isinstance(shape, NoCreate) else shape.inputs


__all__ = [
    "Adapter",
    "Alias",
    "Behaviour",
    "Call",
    "CreateAtPath",
    "CreateInput",
    "CreateServiceAssigned",
    "CreateShape",
    "CreateWithIdParam",
    "CreateWithNameInBody",
    "CreateWrapped",
    "DeleteAtPath",
    "DeleteShape",
    "Fact",
    "FieldRule",
    "FieldType",
    "FingerprintGuard",
    "Guard",
    "Lro",
    "MetagenerationGuard",
    "NoCreate",
    "NoDelete",
    "NoGuard",
    "NoUpdate",
    "OperationGetter",
    "Scalar",
    "TypeKind",
    "UpdateMaskInBody",
    "UpdateMaskInQuery",
    "UpdateMerge",
    "UpdateReplace",
    "UpdateShape",
    "Where",
    "create_inputs",
    "id_field",
]
