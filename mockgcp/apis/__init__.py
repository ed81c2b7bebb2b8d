"""Per-API behaviour that the Discovery documents cannot express.

The engine's semantics are generic; where a service does something its
document does not say (compute's self-links, storage's 204 on delete, Pub/Sub
snapshots taking their topic from a subscription), the API's :class:`Profile`
says so. ``mockgcp/apis/<discovery name>.py`` defines ``PROFILE`` for one API;
an API without a module gets the generic :class:`Profile`, so adding an API
never touches the engine. Every hook documents the real behaviour it
reproduces; the evidence is Config Connector's recorded traffic.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Any, ClassVar

from kccgen.discovery.document import DiscoveryDoc, JsonSchema


@dataclass
class Fill:
    """What an output-filling hook may read, and the resource it fills in."""

    doc: DiscoveryDoc
    schema: str
    props: Mapping[str, JsonSchema]  # the resource schema's properties
    output_only: frozenset[str]
    resource: dict[str, Any]
    key: str  # the resource name relative to the API prefix
    project: str
    created: bool
    old: dict[str, Any] | None  # the stored resource, on update
    now: datetime
    now_text: str  # RFC 3339, as the newer APIs write it
    digits: Callable[[int], str]  # a random number of n digits
    token: Callable[[int], str]  # a random URL-safe token from n bytes


@dataclass
class CreateInputs:
    """A flat create request's fields that are not the resource's: what the
    service reads to make it (pubsub ``CreateSnapshotRequest.subscription``)."""

    doc: DiscoveryDoc
    schema: str
    key: str
    resource: dict[str, Any]
    inputs: dict[str, Any]
    now: datetime
    find: Callable[[str], dict[str, Any] | None]  # a stored resource of this API by name


def rfc3339(t: datetime) -> str:
    """``2024-04-01T12:34:56.123456Z``: how the newer APIs write a time."""
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond:06d}Z"


def camel(name: str) -> str:
    """``update_mask`` -> ``updateMask`` (each dotted part): proto names as JSON names."""
    return ".".join(re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), p) for p in name.split("."))


def snake(name: str) -> str:
    """``ManagedZone`` / ``messageStoragePolicy`` -> ``managed_zone`` / ``message_storage_policy``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class Profile:
    """The generic behaviour; an API module subclasses what its service does differently."""

    #: compute, storage and dns answer errors with the v1-style ``errors`` list too.
    legacy_errors = False
    #: The status of a delete that returns neither a resource nor an operation.
    delete_status = 200
    #: Where compute-style operations and resources link to (``selfLink``).
    self_link_base = ""
    #: The proto package of ``@type`` URLs, without the version; None: ``google.<api>``.
    proto_package_name: str | None = None

    def body_field(self, request: str, whole: bool) -> str | None:
        """The request field a body is transcoded into, as an unknown-field error
        names it (``Unknown name "x" at 'secret'``); None when the body is the
        whole request message (``whole``: a ``*Request`` schema, or a resource
        PUT on its own name, as Pub/Sub's CreateTopic(Topic))."""
        return None if whole else snake(request)

    def time_text(self, t: datetime) -> str:
        """How the API writes a timestamp in its operations."""
        return rfc3339(t)

    def proto_package(self, doc: DiscoveryDoc, schema: str) -> str:
        """``google.pubsub.v1``: the package in google.longrunning ``@type`` URLs."""
        return f"{self.proto_package_name or 'google.' + doc.name}.{doc.version}"

    def lro_metadata(self, doc: DiscoveryDoc, schema: str, action: str, resource: dict[str, Any], now: str) -> dict[str, Any]:
        """google.longrunning metadata: most APIs use their OperationMetadata."""
        return {"@type": f"type.googleapis.com/{self.proto_package(doc, schema)}.OperationMetadata", "createTime": now}

    def etag(self, f: Fill) -> str | None:
        """A new etag for the resource, where the service keeps one (Discovery: output-only)."""
        return f.token(9) if "etag" in f.props and "etag" in f.output_only else None

    def state_omitted(self, schema: str, field: str, resource: dict[str, Any]) -> bool:
        """Whether the service leaves an output-only state enum out of this resource."""
        return False

    def fill(self, f: Fill) -> None:
        """Output-only fields Discovery's prose does not mark, after the generic ones."""

    def listed(self, meta: Mapping[str, Any], query: Mapping[str, list[str]]) -> bool:
        """Whether a stored resource (its internal ``meta``) belongs in a list answer."""
        return True

    def on_create(self, c: CreateInputs) -> None:
        """Use a flat create request's own inputs; raise an ApiError to refuse."""

    #: Custom methods that turn a resource the service always has on or off
    #: (``serviceusage.services.enable``): method id -> (field, value it sets).
    switches: ClassVar[Mapping[str, tuple[str, Any]]] = MappingProxyType({})

    def standing(self, schema: str, key: str, doc: str = "") -> dict[str, Any] | None:
        """What a get answers for a resource the service always has, before
        anything was written (a project's service, not enabled); None: NOT_FOUND.
        ``doc``: the document key asked (``cloudresourcemanager.v1``)."""
        return None

    def serve(self, eng: Any, api: Any, route: Any, path: str, query: Mapping[str, list[str]], body: Any, lro_error: str | None) -> Any:
        """The answer to a method of a collection the generic semantics cannot serve
        (no get: servicenetworking's connections), as a ``Response``; None: not one."""
        return None

    def computed(self, method_id: str, key: str) -> dict[str, Any] | None:
        """What a custom method that computes something for the resource at
        ``key`` answers (serviceusage's ``generateServiceIdentity``: the service
        agent); None for any other method."""
        return None

    def create_answer(self, method_id: str, resource: dict[str, Any]) -> dict[str, Any] | None:
        """What a create whose answer holds the new resource among other things
        answers (sqladmin's ``sslCerts.insert``: the cert and its private key);
        None: the generic answer (the resource, or it at the one path that holds it)."""
        return None

    def switched(self, method_id: str, resource: dict[str, Any]) -> dict[str, Any]:
        """What a switch's operation resolves to (the resource, unless wrapped)."""
        return resource


_GENERIC = Profile()
_CACHE: dict[str, Profile] = {}


def profile_for(api_name: str) -> Profile:
    """The profile of a Discovery API name (``pubsub``): its module's, or the generic one."""
    if api_name not in _CACHE:
        try:
            mod = importlib.import_module(f"{__name__}.{api_name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{api_name}":
                raise
            _CACHE[api_name] = _GENERIC
        else:
            prof = getattr(mod, "PROFILE", None)
            if not isinstance(prof, Profile):
                raise TypeError(f"{mod.__name__}.PROFILE must be a mockgcp.apis.Profile")
            _CACHE[api_name] = prof
    return _CACHE[api_name]
