"""Reference rules (``spec.<kind>Ref`` / ``spec.<kind>Refs``), with no GCP calls.

Written once here and driven by the tables that generated ``<kind>_reference``
modules register, following the Config Connector reference guide:

* exactly one of ``external`` / ``name``; ``external`` alone when the target is
  not a Kind we reconcile; ``external`` must parse as the target's identity;
* ``namespace`` defaults to the referring object's namespace;
* ``<kind>Refs``: no mixed forms, unique externals (after normalization),
  unique resolved externalRefs for named refs, order kept for GCP, and an
  order-only change is not a diff unless the Kind says order matters;
* resolution through an object store: missing object -> DependencyNotFound,
  object without ``status.externalRef`` -> DependencyNotReady.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

import yaml
from pydantic import Field

from kccgen.contract import Behaviour
from kccgen.runtime.identity import IdentityError, IdentityTemplate, identity_for, loaded_identity
from kccgen.runtime.krm import KRMModel
from kccgen.runtime.mutability import by_api_path
from kccgen.runtime.owners import Claims


class ResourceRef(KRMModel):
    """A reference to a Kind we reconcile: ``external``, or ``name`` (+ ``namespace``)."""

    external: str | None = Field(default=None, description="The referenced resource's externalRef (asset-inventory name without the service domain).")
    name: str | None = Field(default=None, description="The `metadata.name` of the referenced object.")
    namespace: str | None = Field(default=None, description="The `metadata.namespace` of the referenced object; defaults to the referring object's namespace.")


class ExternalRef(KRMModel):
    """A reference to a resource kccgen does not reconcile: ``external`` only."""

    external: str = Field(description="The referenced resource's name (asset-inventory form without the service domain).")


class Reason(StrEnum):
    EXTERNAL_AND_NAME = "RefExternalAndName"
    EMPTY = "RefEmpty"
    EXTERNAL_REQUIRED = "RefExternalRequired"
    INVALID_EXTERNAL = "RefInvalidExternal"
    NAMESPACE_WITHOUT_NAME = "RefNamespaceWithoutName"
    MALFORMED = "RefMalformed"
    MIXED_FORM = "RefsMixedForm"
    DUPLICATE_EXTERNAL = "RefsDuplicateExternal"
    DUPLICATE_RESOLVED = "RefsDuplicateResolved"
    NOT_FOUND = "DependencyNotFound"
    NOT_READY = "DependencyNotReady"
    DISAGREE = "RefParentMismatch"  # a field beside a covering parent ref names another parent


class RefError(ValueError):
    """A reference that breaks a rule; ``reason`` is stable for tests and conditions."""

    def __init__(self, reason: Reason, path: str, message: str) -> None:
        self.reason = reason
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}")


@dataclass(frozen=True)
class RefField:
    """One reference field of a Kind, as the generator inferred it."""

    path: str  # KRM path under spec: "deadLetterPolicy.deadLetterTopicRef", "topics[].topicRef"
    target: str  # referenced Kind
    api_path: str  # API field it replaces: "deadLetterPolicy.deadLetterTopic"
    many: bool = False  # a <kind>Refs list
    external_only: bool = False  # target is not a Kind we reconcile
    parent: bool = False  # part of the identity (projectRef, keyRingRef)
    order_matters: bool = False
    api_format: str | None = None  # how the API spells it, when not the canonical form
    # One key of a field naming one of several Kinds: ``path`` ends in the key
    # (``healthChecks[].healthCheckRef``), ``api_path`` is the field (``healthChecks[]``),
    # whose value (each item) becomes the resolved name; ``literals`` are the
    # field's keys whose string is sent as is.
    union: bool = False
    literals: tuple[str, ...] = ()
    # The API value is this field of the referenced object (dotted from its root:
    # status.observedState.clusterType), not its name; ``external`` is the value itself
    value_of: str | None = None
    # other Kinds the reference may name by its ``kind`` key, beside ``target``
    # (Config Connector's attachmentTargetRef: {kind: Folder, name} or {external})
    kinds: tuple[str, ...] = ()

    @property
    def choice(self) -> tuple[str, str]:
        """(the oneOf field's KRM path, this key): ``("healthChecks[]", "healthCheckRef")``."""
        container, _, key = self.path.rpartition(".")
        return container, key


# --- registry of Ref types and reference tables ------------------------------

_REF_TYPES: dict[str, type[KRMModel]] = {}
_REFERENCES: dict[str, tuple[RefField, ...]] = {}
_CHOICES: dict[str, dict[str, tuple[RefField, ...]]] = {}  # choices_of, per Kind


def register_ref_type(kind: str, ref_type: type[KRMModel]) -> None:
    _REF_TYPES[kind] = ref_type


def register_references(kind: str, fields: tuple[RefField, ...]) -> None:
    _REFERENCES[kind] = fields
    _CHOICES.pop(kind, None)


def ref_type_for(kind: str) -> type[KRMModel]:
    from kccgen.runtime.registry import load_reference_module, load_reference_modules

    if kind not in _REF_TYPES and not load_reference_module(kind):
        load_reference_modules()
    try:
        return _REF_TYPES[kind]
    except KeyError:
        raise KeyError(f"no Ref type registered for Kind {kind!r}") from None


def choices_of(kind: str) -> dict[str, tuple[RefField, ...]]:
    """The oneOf fields of a Kind: KRM path -> its keys' RefFields, sorted by key.
    Kept per Kind: ``spec_to_api`` asks on every reconcile."""
    found = _CHOICES.get(kind)
    if found is None:
        out: dict[str, list[RefField]] = {}
        for r in sorted((r for r in references_of(kind) if r.union), key=lambda r: r.path):
            out.setdefault(r.choice[0], []).append(r)
        found = _CHOICES[kind] = {k: tuple(v) for k, v in out.items()}
    return found


def references_of(kind: str) -> tuple[RefField, ...]:
    from kccgen.runtime.registry import load_reference_module, load_reference_modules

    if kind not in _REFERENCES and not load_reference_module(kind):
        load_reference_modules()
    return _REFERENCES.get(kind, ())


# --- single refs ---------------------------------------------------------------


def _as_mapping(ref: object, path: str) -> Mapping[str, Any]:
    if isinstance(ref, KRMModel):
        return ref.model_dump(exclude_none=True)
    if not isinstance(ref, Mapping):
        raise RefError(Reason.MALFORMED, path, f"a reference must be an object with external or name, got {type(ref).__name__}")
    return ref


def check_ref(ref: object, target: str, path: str, external_only: bool = False, literal: bool = False) -> None:
    """The single-ref rules; raises RefError with the rule's reason. ``literal``:
    ``external`` is a value, not a name (RefField.value_of)."""
    r = _as_mapping(ref, path)
    external, name, namespace = r.get("external"), r.get("name"), r.get("namespace")
    if external and name:
        raise RefError(Reason.EXTERNAL_AND_NAME, path, f"set exactly one of external or name, not both (external={external!r}, name={name!r})")
    if not external and not name:
        raise RefError(Reason.EMPTY, path, f"set exactly one of external or name for the {target} reference")
    if external_only and not external:
        raise RefError(Reason.EXTERNAL_REQUIRED, path, f"{target} is not a Kind this operator reconciles: set external, not name")
    if namespace and not name:
        raise RefError(Reason.NAMESPACE_WITHOUT_NAME, path, "namespace is only meaningful with name")
    if external and not literal:
        try:
            identity_for(target).normalize(external)
        except IdentityError as e:
            raise RefError(Reason.INVALID_EXTERNAL, path, str(e)) from None


def normalize_ref(ref: object, target: str, path: str = "ref") -> dict[str, str]:
    """Canonical form: ``{"external": canonical}`` or ``{"name", "namespace"?}``. Idempotent."""
    r = _as_mapping(ref, path)
    check_ref(r, target, path)
    if r.get("external"):
        return {"external": identity_for(target).normalize(str(r["external"]))}
    out = {"name": str(r["name"])}
    if r.get("namespace"):
        out["namespace"] = str(r["namespace"])
    return out


def set_external(ref: object, target: str, external: str, path: str = "ref") -> dict[str, str]:
    """Setting external clears name/namespace, so the result stays one form."""
    try:
        return {"external": identity_for(target).normalize(external)}
    except IdentityError as e:
        raise RefError(Reason.INVALID_EXTERNAL, path, str(e)) from None


# --- lists (<kind>Refs) ----------------------------------------------------------


def check_refs(refs: object, target: str, path: str, external_only: bool = False) -> None:
    """The list rules: each ref valid, one form for all, externals unique."""
    if not isinstance(refs, Sequence) or isinstance(refs, str | bytes):
        raise RefError(Reason.MALFORMED, path, f"expected a list of {target} references")
    items = [_as_mapping(r, f"{path}[{i}]") for i, r in enumerate(refs)]
    for i, r in enumerate(items):
        check_ref(r, target, f"{path}[{i}]", external_only)
    forms = {"external" if r.get("external") else "name" for r in items}
    if len(forms) > 1:
        raise RefError(Reason.MIXED_FORM, path, "use external for every entry or name for every entry, not a mix")
    if forms == {"external"}:
        canon = [identity_for(target).normalize(str(r["external"])) for r in items]
        dups = sorted(v for v, n in Counter(canon).items() if n > 1)
        if dups:
            raise RefError(Reason.DUPLICATE_EXTERNAL, path, f"duplicate external {dups[0]!r} (compared after normalization)")


def same_refs(a: Sequence[str], b: Sequence[str], order_matters: bool = False) -> bool:
    """Whether two resolved lists are the same; a reorder alone is no change unless order matters."""
    return list(a) == list(b) if order_matters else Counter(a) == Counter(b)


# --- resolution --------------------------------------------------------------------


class ObjectStore(Protocol):
    """Read access to KRM objects (a cluster, or manifests loaded locally)."""

    def get(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None: ...


CLUSTER_SCOPED = frozenset({"Namespace"})


class InMemoryStore:
    """An ObjectStore over plain dicts, for tests and the local runner."""

    def __init__(self, objects: Iterable[Mapping[str, Any]] = (), default_namespace: str = "default") -> None:
        self.default_namespace = default_namespace
        self._objects: dict[tuple[str, str, str], dict[str, Any]] = {}
        self._lock = threading.Lock()  # the local runner's workers add while others list
        self.claims = Claims()  # one object per GCP resource (kccgen.runtime.owners)
        # the installation ID a namespace's objects hold leases with (kccgen.runtime.leases)
        self.lease_holder: Callable[[str], str] = lambda _ns: ""
        for o in objects:
            self.add(o)

    def add(self, obj: Mapping[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        if not obj.get("kind") or not meta.get("name"):
            raise ValueError(f"object needs kind and metadata.name: {dict(obj)!r:.200}")
        ns = "" if obj["kind"] in CLUSTER_SCOPED else str(meta.get("namespace") or self.default_namespace)
        key = (str(obj["kind"]), ns, str(meta["name"]))
        with self._lock:
            self._objects[key] = dict(obj)

    def get(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        return self._objects.get((kind, namespace, name))

    def objects(self) -> list[dict[str, Any]]:
        with self._lock:
            return [self._objects[k] for k in sorted(self._objects)]

    @classmethod
    def from_yaml(cls, text: str, default_namespace: str = "default") -> InMemoryStore:
        return cls((d for d in yaml.safe_load_all(text) if d), default_namespace)


def resolve_ref(
    ref: object, target: str, namespace: str, store: ObjectStore, path: str, external_only: bool = False
) -> str:
    """The canonical externalRef a reference points at (no GCP call)."""
    r = _as_mapping(ref, path)
    check_ref(r, target, path, external_only)
    ident = identity_for(target)
    if r.get("external"):
        return ident.normalize(str(r["external"]))
    ns = str(r.get("namespace") or namespace)
    name = str(r["name"])
    obj = store.get(target, ns, name)
    if obj is None:
        raise RefError(Reason.NOT_FOUND, path, f"referenced {target} {ns}/{name} not found")
    ext = (obj.get("status") or {}).get("externalRef")
    if not ext:
        raise RefError(Reason.NOT_READY, path, f"referenced {target} {ns}/{name} is not ready: it has no status.externalRef yet")
    try:
        return ident.normalize(str(ext))
    except IdentityError as e:
        raise RefError(Reason.INVALID_EXTERNAL, path, f"referenced {target} {ns}/{name} has an unusable status.externalRef: {e}") from None


def resolve_value(ref: object, f: RefField, namespace: str, store: ObjectStore, path: str) -> str:
    """The API value of a reference that takes a field of its object (RefField.value_of):
    ``external`` as given; for ``name``, that field of the named object, which must
    have it (a cluster's type is known once the cluster is observed)."""
    assert f.value_of is not None
    r = _as_mapping(ref, path)
    check_ref(r, f.target, path, f.external_only, literal=True)
    if r.get("external"):
        return str(r["external"])
    ns = str(r.get("namespace") or namespace)
    obj = store.get(f.target, ns, str(r["name"]))
    if obj is None:
        raise RefError(Reason.NOT_FOUND, path, f"referenced {f.target} {ns}/{r['name']} not found")
    value: Any = obj
    for part in f.value_of.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    if value is None or isinstance(value, Mapping | list):
        raise RefError(Reason.NOT_READY, path, f"referenced {f.target} {ns}/{r['name']} has no {f.value_of} yet")
    return str(value)


def resolve_refs(
    refs: object, target: str, namespace: str, store: ObjectStore, path: str, external_only: bool = False
) -> list[str]:
    """Resolve a ``<kind>Refs`` list in order; resolved externalRefs must be unique."""
    check_refs(refs, target, path, external_only)
    assert isinstance(refs, Sequence)
    out = [resolve_ref(r, target, namespace, store, f"{path}[{i}]", external_only) for i, r in enumerate(refs)]
    dups = sorted(v for v, n in Counter(out).items() if n > 1)
    if dups:
        raise RefError(Reason.DUPLICATE_RESOLVED, path, f"two entries resolve to the same {target} {dups[0]!r}")
    return out


# --- whole objects -------------------------------------------------------------------


def iter_field(spec: Mapping[str, Any], path: str) -> Iterator[tuple[str, Any]]:
    """Values at a KRM path with ``[]`` list steps, with their concrete paths."""

    def walk(node: Any, parts: list[str], where: str) -> Iterator[tuple[str, Any]]:
        if not parts:
            yield where, node
            return
        head, rest = parts[0], parts[1:]
        is_list = head.endswith("[]")
        key = head.removesuffix("[]")
        if not isinstance(node, Mapping) or node.get(key) is None:
            return
        child = node[key]
        here = f"{where}.{key}" if where else key
        if is_list:
            if isinstance(child, list):
                for i, item in enumerate(child):
                    yield from walk(item, rest, f"{here}[{i}]")
        else:
            yield from walk(child, rest, here)

    yield from walk(spec, path.split("."), "")


def bare_external(f: RefField, value: object) -> str | None:
    """The external of a reference the API spells as the target's short name
    alone (``apiFormat: "{disk}"``: a global template's zonal disk), given as
    that name: it is complete, as the API has no scope to add. None otherwise."""
    if not f.api_format or not isinstance(value, Mapping) or value.get("name"):
        return None
    ext = str(value.get("external") or "")
    try:
        short = f.api_format == "{" + identity_for(f.target).params[-1] + "}"
    except KeyError:
        return None
    return ext if short and ext and "/" not in ext else None


def kinded_target(f: RefField, value: object, path: str) -> str:
    """The Kind a reference with a ``kind`` key names (RefField.kinds): the one its
    ``kind`` says, else, for ``external``, the first Kind whose forms it fits, else
    the field's own target."""
    r = _as_mapping(value, path)
    kinds = (f.target, *f.kinds)
    kind = r.get("kind")
    if kind is not None:
        if kind not in kinds:
            raise RefError(Reason.MALFORMED, path, f"kind {kind!r} is not one of {', '.join(kinds)}")
        return str(kind)
    if r.get("external"):
        for k in kinds:
            try:
                identity_for(k).normalize(str(r["external"]))
            except IdentityError:
                continue
            return k
        raise RefError(Reason.INVALID_EXTERNAL, path, f"{r['external']!r} names no {' or '.join(kinds)}")
    return f.target


def check_object(obj: Mapping[str, Any]) -> list[RefError]:
    """Every reference rule that needs no store, for one KRM object."""
    spec = obj.get("spec") or {}
    errors: list[RefError] = []
    for f in references_of(str(obj.get("kind"))):
        for where, value in iter_field(spec, f.path):
            try:
                if f.many:
                    check_refs(value, f.target, f"spec.{where}", f.external_only)
                elif f.kinds:
                    check_ref(value, kinded_target(f, value, f"spec.{where}"), f"spec.{where}")
                elif bare_external(f, value) is None:
                    check_ref(value, f.target, f"spec.{where}", f.external_only, literal=f.value_of is not None)
            except RefError as e:
                errors.append(e)
    return errors


def resolve_object(obj: Mapping[str, Any], store: ObjectStore) -> dict[str, str | list[str]]:
    """Resolve every reference of an object: concrete spec path -> externalRef(s)."""
    spec = obj.get("spec") or {}
    namespace = namespace_of(obj, store)
    out: dict[str, str | list[str]] = {}
    ident = loaded_identity(str(obj.get("kind")))
    covering = {fld for _p, fld, t in ident.spec_fields if t} if ident is not None and ident.beside else set()
    for f in references_of(str(obj.get("kind"))):
        for where, value in iter_field(spec, f.path):
            p = f"spec.{where}"
            if f.value_of is not None and not f.many:
                out[p] = resolve_value(value, f, namespace, store, p)
            elif f.parent and where in covering and ident is not None:
                # a bare ID completed by Config Connector's fields beside it
                out[p] = resolve_covering(obj, store, ident, where, f.target, value)[0]
            elif f.many:
                out[p] = resolve_refs(value, f.target, namespace, store, p, f.external_only)
            elif f.kinds:
                out[p] = resolve_ref(value, kinded_target(f, value, p), namespace, store, p)
            elif (bare := bare_external(f, value)) is not None:
                out[p] = bare
            else:
                out[p] = resolve_ref(value, f.target, namespace, store, p, f.external_only)
    out.update(hierarchy_parent(obj, store, namespace))
    return out


#: Config Connector's annotations naming a resource's folder or organization
#: (the object's, else its namespace's), where spec names neither.
HIERARCHY_ANNOTATIONS = (("Folder", "cnrm.cloud.google.com/folder-id", "folders"), ("Organization", "cnrm.cloud.google.com/organization-id", "organizations"))


def hierarchy_parent(obj: Mapping[str, Any], store: ObjectStore, namespace: str) -> dict[str, str]:
    """A flattened folder/organization parent choice (Folder's, Project's folderRef or
    organizationRef) that spec leaves unset, from the annotations: ``spec.<key>`` -> its
    name. A required one that nothing names is refused here, before any GCP call."""
    kind = str(obj.get("kind"))
    spec = obj.get("spec") or {}
    out: dict[str, str] = {}
    for group in choices_of(kind).values():
        if group[0].choice[0] or not {r.target for r in group} <= {t for t, _, _ in HIERARCHY_ANNOTATIONS}:
            continue
        if any(spec.get(r.choice[1]) for r in group):
            continue
        by_target = {r.target: r.choice[1] for r in group}
        for target, annotation, collection in HIERARCHY_ANNOTATIONS:
            value = annotation_of(obj, store, namespace, annotation) if target in by_target else ""
            if target in by_target and value:
                out[f"spec.{by_target[target]}"] = f"{collection}/{value.removeprefix(collection + '/')}"
                break
        else:
            row = by_api_path(kind).get(group[0].api_path.removesuffix("[]"))
            if row is not None and any(f.behaviour is Behaviour.REQUIRED for f in row.facts):
                keys = " or ".join(f"spec.{r.choice[1]}" for r in group)
                names = " or ".join(a for t, a, _ in HIERARCHY_ANNOTATIONS if t in by_target)
                raise RefError(Reason.EMPTY, f"spec.{group[0].choice[1]}", f"{kind} needs {keys}, or the {names} annotation on it or its namespace")
    return out


def annotation_of(obj: Mapping[str, Any], store: ObjectStore, namespace: str, key: str) -> str:
    """Config Connector's fallback for its annotations: the object's, else its namespace's ("" when neither)."""
    value = ((obj.get("metadata") or {}).get("annotations") or {}).get(key)
    if not value:
        ns_obj = store.get("Namespace", "", namespace) or {}
        value = ((ns_obj.get("metadata") or {}).get("annotations") or {}).get(key)
    return str(value) if value else ""


# --- identity from spec (reconcile step 2 when status.externalRef is unset) ------

PROJECT_ID_ANNOTATION = "cnrm.cloud.google.com/project-id"


def namespace_of(obj: Mapping[str, Any], store: ObjectStore) -> str:
    """The object's namespace, else the store's default (kccctl's)."""
    return str((obj.get("metadata") or {}).get("namespace") or getattr(store, "default_namespace", "default"))


def _project_from_annotations(obj: Mapping[str, Any], store: ObjectStore, namespace: str) -> str | None:
    """Config Connector's fallback: the object's, then its namespace's, project-id annotation."""
    return annotation_of(obj, store, namespace, PROJECT_ID_ANNOTATION) or None


def _beside_values(obj: Mapping[str, Any], store: ObjectStore, ident: IdentityTemplate, field: str) -> dict[str, tuple[str, str]]:
    """param -> (Config Connector's spec field beside ``field``, its value), for the
    params ``field`` covers; a projectRef falls back to the project-id annotation."""
    spec = obj.get("spec") or {}
    namespace = namespace_of(obj, store)
    covered = {p for p, f, _t in ident.spec_fields if f == field}
    out: dict[str, tuple[str, str]] = {}
    for param, beside, target in ident.beside:
        if param not in covered:
            continue
        value: str | None
        if target:
            ref = spec.get(beside)
            if ref is None:
                value = _project_from_annotations(obj, store, namespace) if target == "Project" else None
            else:
                value = identity_for(target).parse(resolve_ref(ref, target, namespace, store, f"spec.{beside}")).get(param)
        else:
            value = ident.spec_value(spec, beside)
        if value:
            out[param] = (beside, str(value))
    return out


def covering_ref(obj: Mapping[str, Any], store: ObjectStore, ident: IdentityTemplate, field: str, target: str, ref: object) -> dict[str, str]:
    """The values a parent ref covering several params names (see resolve_covering)."""
    return resolve_covering(obj, store, ident, field, target, ref)[1]


def resolve_covering(
    obj: Mapping[str, Any], store: ObjectStore, ident: IdentityTemplate, field: str, target: str, ref: object
) -> tuple[str, dict[str, str]]:
    """The externalRef a parent ref covering several params names, and its values.
    Config Connector's fields beside it (an SLO's projectRef beside serviceRef)
    complete a bare ID (``serviceRef: {external: my-service}``) and must agree
    with what it names."""
    namespace = namespace_of(obj, store)
    beside = _beside_values(obj, store, ident, field) if ident.beside else {}
    theirs = identity_for(target)
    if beside and isinstance(ref, Mapping) and isinstance(ref.get("external"), str) and "/" not in ref["external"] and theirs.params:
        known = {p: v for p, (_f, v) in beside.items() if p in theirs.params}
        if set(theirs.params[:-1]) <= set(known):
            ref = {**ref, "external": theirs.format(**known, **{theirs.params[-1]: ref["external"]})}
    ext = resolve_ref(ref, target, namespace, store, f"spec.{field}")
    values = theirs.parse(ext)
    for param, (f, v) in sorted(beside.items()):
        if param in values and values[param] != v:
            raise RefError(
                Reason.DISAGREE,
                f"spec.{f}",
                f"spec.{f} names {param} {v!r} but spec.{field} is in {param} {values[param]!r}: the two must agree",
            )
    return ext, values


def identity_from_spec(obj: Mapping[str, Any], store: ObjectStore) -> str | None:
    """The externalRef an object's spec names; None for a service-generated ID not yet known.

    Parents are resolved through the store (no GCP call); a parent ref covers
    the params inside it (keyRingRef gives project, location and keyRing).
    """
    kind = str(obj.get("kind"))
    spec = obj.get("spec") or {}
    # A Kind under several parents: folderRef picks the folder form (ValueError
    # when two parents are set).
    return _identity_from_spec(obj, store, identity_for(kind).form_for_spec(spec))


def _identity_from_spec(obj: Mapping[str, Any], store: ObjectStore, ident: IdentityTemplate) -> str | None:
    kind = str(obj.get("kind"))
    spec = obj.get("spec") or {}
    meta = obj.get("metadata") or {}
    namespace = str(meta.get("namespace") or getattr(store, "default_namespace", "default"))
    values: dict[str, str] = {}
    parsed: dict[str, dict[str, str]] = {}
    for param, field, target in ident.spec_fields:
        value: str | None
        if field == "resourceID":
            value = spec.get("resourceID") or (None if ident.id_generation == "service" else meta.get("name"))
            if value is None:
                return None
        elif target:
            if field not in parsed:
                ref = spec.get(field)
                if ref is None and target == "Project":
                    project = _project_from_annotations(obj, store, namespace)
                    ref = {"external": project} if project else None
                if ref is None:
                    raise RefError(Reason.EMPTY, f"spec.{field}", f"{kind} needs spec.{field} to be identified")
                parsed[field] = covering_ref(obj, store, ident, field, target, ref)
                form = ident.form_for(parsed[field]) if param == "project" else ident
                if form is not ident:  # the covering parent lives under a folder (a folder bucket's view)
                    return _identity_from_spec(obj, store, form)
            value = parsed[field].get(param)
            if value is None and len(parsed[field]) == 1:
                # the parent's one value under another name: a Shared VPC service project's
                # {serviceProject} from projectRef's {project}
                (value,) = parsed[field].values()
        else:
            value = ident.spec_value(spec, field)
        if not value:
            raise RefError(Reason.EMPTY, f"spec.{field}", f"{kind} needs spec.{field} to be identified")
        values[param] = str(value)
    return ident.format(**values)
