"""Sensitive fields: ``{value | valueFrom: {secretKeyRef: {name, key}}}`` to their strings.

Config Connector spells a secret (a password, a private key) as an object whose
value is given literally or read from a key of a Kubernetes Secret in the
object's namespace. The generated adapter lists those spec paths
(``Adapter.secrets``). Why a module of its own: a secret travels from the Secret
to the request body and nowhere else (docs/design.md §0), so every place that could
show a value (status, events, diffs, dry-run changes, exports, merged spec)
goes through the helpers here rather than each growing its own rule.
"""

from __future__ import annotations

import base64
import binascii
import copy
import hashlib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from kccgen.contract import Adapter
from kccgen.runtime.refs import ObjectStore, Reason, RefError, iter_field

REDACTED = "(sensitive: not shown)"


def _namespace(obj: Mapping[str, Any], store: ObjectStore) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or getattr(store, "default_namespace", "default"))


def secret_data(secret: Mapping[str, Any], key: str) -> str | None:
    """A Secret's value of ``key``: ``stringData`` as written (a manifest not yet
    stored), else ``data`` base64-decoded, as the API server keeps it."""
    string_data = secret.get("stringData") or {}
    if isinstance(string_data, Mapping) and isinstance(string_data.get(key), str):
        return str(string_data[key])
    data = secret.get("data") or {}
    raw = data.get(key) if isinstance(data, Mapping) else None
    if not isinstance(raw, str):
        return None
    try:
        return base64.b64decode(raw, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None


def secret_problem(doc: Mapping[str, Any]) -> str | None:
    """What is wrong with a ``v1`` Secret manifest (kccctl reads them), or None."""
    if doc.get("apiVersion") != "v1":
        return f"apiVersion must be v1, not {doc.get('apiVersion')!r}"
    for part in ("data", "stringData"):
        values = doc.get(part) or {}
        if not isinstance(values, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in values.items()):
            return f"{part} must map keys to strings"
    for k, v in (doc.get("data") or {}).items():
        try:
            base64.b64decode(v, validate=True)
        except binascii.Error:
            return f"data.{k} is not base64"
    return None


def resolve_secrets(obj: Mapping[str, Any], a: Adapter, store: ObjectStore) -> dict[str, str]:
    """Concrete spec path (``spec.password``, ``spec.a[0].b``) -> the string it stands for.

    Raises RefError: DependencyNotFound naming the object, the field and the Secret
    when the Secret or its key is missing (no GCP call is made then), RefMalformed
    for a value that is not the object (a plain string the CRD would refuse)."""
    out: dict[str, str] = {}
    resolve_secret_objects(obj, a, store, out)
    if not a.secrets:
        return out
    spec = obj.get("spec") or {}
    meta = obj.get("metadata") or {}
    who = f"{a.kind} {_namespace(obj, store)}/{meta.get('name')}"
    for path in a.secrets:
        for where, v in iter_field(spec, path):
            field = f"spec.{where}"
            if not isinstance(v, Mapping) or ("value" in v) == ("valueFrom" in v):
                raise RefError(Reason.MALFORMED, field, f"{who}: set exactly one of value and valueFrom.secretKeyRef")
            if "value" in v:
                out[field] = str(v["value"])
                continue
            ref = (v.get("valueFrom") or {}).get("secretKeyRef") or {}
            name, key = ref.get("name"), ref.get("key")
            if not name or not key:
                raise RefError(Reason.MALFORMED, field, f"{who}: valueFrom.secretKeyRef needs name and key")
            ns = _namespace(obj, store)
            secret = store.get("Secret", ns, str(name))
            if secret is None:
                raise RefError(Reason.NOT_FOUND, field, f"{who} reads it from Secret {ns}/{name}, which does not exist")
            value = secret_data(secret, str(key))
            if value is None:
                raise RefError(Reason.NOT_FOUND, field, f"{who} reads it from key {key!r} of Secret {ns}/{name}, which has no such key")
            out[field] = value
    return out


def resolve_secret_objects(obj: Mapping[str, Any], a: Adapter, store: ObjectStore, out: dict[str, str]) -> None:
    """``Adapter.secret_objects``: each sub-field of an object with ``secretRef``,
    read from its key of that Secret (``spec.cloudSql.credential.username``)."""
    spec = obj.get("spec") or {}
    who = f"{a.kind} {_namespace(obj, store)}/{(obj.get('metadata') or {}).get('name')}"
    for so in a.secret_objects:
        for where, node in iter_field(spec, so.field):
            if not isinstance(node, Mapping) or so.ref not in node:
                continue
            ref = node.get(so.ref)
            field = f"spec.{where}.{so.ref}"
            if not isinstance(ref, Mapping) or not ref.get("name"):
                raise RefError(Reason.MALFORMED, field, f"{who}: {so.ref} needs name")
            ns = str(ref.get("namespace") or _namespace(obj, store))
            secret = store.get("Secret", ns, str(ref["name"]))
            if secret is None:
                raise RefError(Reason.NOT_FOUND, field, f"{who} reads {where} from Secret {ns}/{ref['name']}, which does not exist")
            for sub, key in so.keys:
                value = secret_data(secret, key)
                if value is None:
                    raise RefError(Reason.NOT_FOUND, field, f"{who} reads {where}.{sub} from key {key!r} of Secret {ns}/{ref['name']}, which has no such key")
                out[f"spec.{where}.{sub}"] = value


def secret_paths(a: Adapter) -> tuple[str, ...]:
    """Every spec path holding a secret's string: the sensitive fields and the
    sub-fields of the objects read from a Secret."""
    return (*a.secrets, *(f"{so.field}.{sub}" for so in a.secret_objects for sub, _ in so.keys))


def api_paths(a: Adapter) -> frozenset[str]:
    """The secret paths as the diff names them (API paths without list steps)."""
    return frozenset(p.replace("[]", "") for p in secret_paths(a))


def redacted(a: Adapter, diffs: Iterable[tuple[str, Any, Any]]) -> list[tuple[str, Any, Any]]:
    """Diffs as they may be shown or stored: a secret's values replaced by a marker."""
    hidden = api_paths(a)
    return [(p, REDACTED, REDACTED) if p in hidden else (p, d, x) for p, d, x in diffs]


def masked(a: Adapter, spec: Mapping[str, Any]) -> dict[str, Any]:
    """``spec`` as it may be shown (a dry run's changes): each secret's object a marker."""
    out = copy.deepcopy(dict(spec))
    for path in a.secrets:
        parent, _, last = path.rpartition(".")
        for _, node in iter_field(out, parent) if parent else [("", out)]:
            key = last.removesuffix("[]")
            if isinstance(node, dict) and key in node:
                node[key] = REDACTED
    return out


def without_secrets(a: Adapter, spec: Mapping[str, Any]) -> dict[str, Any]:
    """``spec`` (KRM or taken from a live resource) without the secret fields: what an
    export or a merge from GCP may write, since neither may hold a secret's value."""
    out = copy.deepcopy(dict(spec))
    for path in a.secrets:
        parent, _, last = path.rpartition(".")
        for _, node in iter_field(out, parent) if parent else [("", out)]:
            if isinstance(node, dict):
                node.pop(last.removesuffix("[]"), None)
    return out


#: The annotation holding a digest of the secret values last written: the service never
#: answers a secret, so this is how a changed Secret is told from an unchanged one.
ANN_SECRET_DIGEST = "kccgen.dev/secret-digest"


def secret_digest(obj: Mapping[str, Any], a: Adapter, resolved: Mapping[str, Any]) -> str:
    """A digest of the secret values ``resolved`` holds for ``obj`` ("" without any),
    salted with the object's Kind, namespace and name: it tells a change, and the
    state keeps it in place of the values."""
    wanted = {"spec." + path.replace("[]", "") for path in secret_paths(a)}
    found = sorted((k, str(v)) for k, v in resolved.items() if re.sub(r"\[\d+\]", "", k) in wanted)
    if not found:
        return ""
    meta = obj.get("metadata") or {}
    h = hashlib.sha256(f"{a.kind}/{meta.get('namespace') or ''}/{meta.get('name') or ''}".encode())
    for k, v in found:
        h.update(b"\0" + k.encode() + b"\0" + v.encode())
    return "sha256:" + h.hexdigest()[:32]


def placeholders(a: Adapter, stored_spec: Mapping[str, Any] | None, name: str) -> tuple[dict[str, Any], list[str]]:
    """What an export writes for the secret fields the applied object set (the
    service never answers them): its own ``secretKeyRef``, or, for a literal
    ``value``, a ``secretKeyRef`` to a Secret the user must create. Returns
    (top-level spec field -> value, one note per placeholder)."""
    out: dict[str, Any] = {}
    notes: list[str] = []
    for path in a.secrets:
        if "[]" in path:
            continue
        given: Any = stored_spec or {}
        for part in path.split("."):
            given = given.get(part) if isinstance(given, Mapping) else None
        if not isinstance(given, Mapping):
            continue
        ref = (given.get("valueFrom") or {}).get("secretKeyRef") if "valueFrom" in given else None
        if not isinstance(ref, Mapping):
            ref = {"name": f"{name}-secrets", "key": path.rsplit(".", 1)[-1]}
            notes.append(f"spec.{path} is sensitive: written as valueFrom.secretKeyRef to Secret {ref['name']!r} key {ref['key']!r}, which you create")
        else:
            notes.append(f"spec.{path} is sensitive: written as the applied object's valueFrom.secretKeyRef (Secret {ref.get('name')!r})")
        node = out
        parts = path.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = {"valueFrom": {"secretKeyRef": dict(ref)}}
    return out, notes
