"""A live GCP resource as a KRM manifest that applies back without a change.

The inverse of ``spec_to_api``: the identity becomes ``resourceID`` and the
parent references; every field the Kind's spec holds (the mutability table's
``spec.*`` rows) is copied from the live resource; references become
``{external: ...}`` in canonical form; int64 strings become integers again.
Output-only fields stay out (they are ``status.observedState``).
"""

from __future__ import annotations

import contextlib
import copy
import re
from collections.abc import Mapping
from typing import Any

from kccgen.runtime.adapter import adapter_for, map_leaf, rename_at
from kccgen.runtime.identity import IdentityError, identity_for, template_pattern
from kccgen.runtime.mutability import by_api_path
from kccgen.runtime.refs import RefField, choices_of, references_of
from kccgen.runtime.secrets import without_secrets

_DNS_1123 = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")


def _external(ref: RefField, value: Any, values: Mapping[str, str] | None = None) -> Any:
    def one(v: Any) -> dict[str, Any]:
        try:
            return {"external": identity_for(ref.target).normalize(str(v))}
        except (IdentityError, KeyError):
            return {"external": from_api_format(ref, str(v), values or {}) or v}

    return [one(v) for v in value] if isinstance(value, list) else one(value)


def from_api_format(ref: RefField, value: str, values: Mapping[str, str]) -> str | None:
    """The externalRef behind a value the API spells short (``apiFormat: "{address}"``:
    servicenetworking's reserved ranges), its other parts from the exporting object's
    identity (the project): the first of the target's forms they fill (a global
    address, where no region is known). None when none does."""
    if not ref.api_format or "{}" in ref.api_format:
        return None
    m = template_pattern(ref.api_format).match(value)
    if m is None:
        return None
    given = {**values, **m.groupdict()}
    target = identity_for(ref.target)
    for form in (target, *(identity_for(v) for v in target.variants), *target.parent_forms()):
        if set(form.params) <= set(given):
            with contextlib.suppress(IdentityError):
                return form.format(**{k: given[k] for k in form.params})
    return None



def _choice(refs: tuple[RefField, ...], value: Any) -> Any:
    """A oneOf field's value as its object: the key of the Kind whose name it is,
    else the first literal key (a bare IP address, an API bundle)."""

    def one(v: Any) -> dict[str, Any]:
        for ref in refs:
            try:
                return {ref.choice[1]: {"external": identity_for(ref.target).normalize(str(v))}}
            except (IdentityError, KeyError):
                continue
        literals = refs[0].literals
        return {literals[0]: v} if literals else {refs[0].choice[1]: {"external": v}}

    return [one(v) for v in value] if isinstance(value, list) else one(value)


def _to_int(v: Any) -> Any:
    """An int64 string (proto3 JSON) as the integer the KRM types hold."""
    return int(v) if isinstance(v, str) and re.fullmatch(r"-?\d+", v) else v


def export_manifest(kind: str, external: str, resource: dict[str, Any], name: str | None = None, namespace: str = "default") -> dict[str, Any]:
    """The manifest of ``resource`` (the GET answer for ``external``)."""
    a = adapter_for(kind)
    own = identity_for(kind)
    values = own.parse(external)
    ident = own.form_for(values)  # a folder's bucket: folderRef, not projectRef
    rid = values.get(a.id_param, "")
    obj_name = name or rid.lower()
    if not _DNS_1123.fullmatch(obj_name):
        raise ValueError(f"{rid!r} is not a valid object name; give one with --name")
    spec: dict[str, Any] = {}
    rows = by_api_path(kind)
    refs = [r for r in references_of(kind) if not r.parent and not r.union]
    top_refs = {r.api_path.removesuffix("[]"): r for r in refs if "." not in r.api_path}
    # top-level oneOf fields, by API field (nested ones are exported as the API's value)
    unions = {g[0].api_path.removesuffix("[]"): g for g in choices_of(kind).values() if "." not in g[0].api_path}
    for key, value in sorted(resource.items()):
        row = rows.get(key)
        if row is None or not row.path.startswith("spec."):
            continue
        krm = row.path.removeprefix("spec.").split(".", 1)[0].removesuffix("[]")
        ref = top_refs.get(key)
        if key in unions:
            chosen = _choice(unions[key], value)
            if unions[key][0].choice[0]:
                spec[krm] = chosen
            elif isinstance(chosen, dict):
                spec.update(chosen)  # flattened: its key is a spec field (Project's folderRef)
            continue
        spec[krm] = _external(ref, value, values) if ref is not None else copy.deepcopy(value)
    for ref in refs:
        if "." in ref.api_path:
            rename_at(spec, ref.api_path, ref.path, lambda v, r=ref: _external(r, v, values))
    for p in a.int64_paths:
        map_leaf(spec, p.split("."), _to_int)
    for param, fld, target in ident.spec_fields:
        if fld == "resourceID":
            if ident.id_generation == "service" or rid != obj_name:
                spec["resourceID"] = rid
        elif target:
            parent = identity_for(target)
            given = {k: v for k, v in values.items() if k in parent.params}
            if param not in parent.params and len(parent.params) == 1:
                # the parent's one value under another name ({serviceProject} is a Project's {project})
                given = {parent.params[0]: values[param]}
            spec[fld] = {"external": parent.format(**given)}
        else:
            spec[fld] = values[param]
    return {
        "apiVersion": a.api_version,
        "kind": kind,
        "metadata": {"name": obj_name, "namespace": namespace},
        "spec": without_secrets(a, spec),  # a secret GCP returns is never exported
    }
