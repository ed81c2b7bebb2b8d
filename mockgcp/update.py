"""Update (patch/update) semantics, read from the request (mockgcp.shapes.update_shape).

* a mask in the ``updateMask`` query parameter, or a wrapper request holding
  the resource and a google-fieldmask field: only masked paths change (a
  masked path missing from the body is cleared); without a mask, the mask's
  own description decides (``Required`` -> 400, "replaces" -> replacement);
* otherwise PATCH is an RFC 7386 JSON merge patch and PUT a replacement;
* compute's ``fingerprint`` must match when the stored resource has one;
  storage's ``ifMetagenerationMatch`` is checked when sent;
* output-only fields sent are ignored; a changed immutable field is a 400.
"""

from __future__ import annotations

import copy
import re
from typing import TYPE_CHECKING, Any

from kccgen.mockgcp.apis import camel
from kccgen.mockgcp.catalog import Api
from kccgen.mockgcp.errors import invalid, not_found, precondition
from kccgen.mockgcp.lifecycle import Call, check_metageneration, project_of
from kccgen.mockgcp.operations import Response, respond
from kccgen.mockgcp.shapes import lro_style, update_shape
from kccgen.mockgcp.singletons import default, is_settings

if TYPE_CHECKING:
    from kccgen.mockgcp.engine import MockGCP


def get_path(obj: dict[str, Any], path: str) -> Any:
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def set_path(obj: dict[str, Any], path: str, value: Any) -> None:
    """Set (or, for None, clear) a dotted path, creating objects on the way."""
    parts = path.split(".")
    cur = obj
    for part in parts[:-1]:
        nxt = cur.get(part)
        if not isinstance(nxt, dict):
            if value is None:
                return
            nxt = cur[part] = {}
        cur = nxt
    if value is None:
        cur.pop(parts[-1], None)
    else:
        cur[parts[-1]] = copy.deepcopy(value)


def merge_patch(target: dict[str, Any], patch: dict[str, Any]) -> None:
    """RFC 7386 JSON merge patch: objects merge recursively, null deletes, anything else replaces."""
    for k, v in patch.items():
        if v is None:
            target.pop(k, None)
        elif isinstance(v, dict) and isinstance(target.get(k), dict):
            merge_patch(target[k], v)
        else:
            target[k] = copy.deepcopy(v)


def valid_path(api: Api, schema: str, path: str) -> bool:
    """Whether a mask path names a field of the schema (map keys are free)."""
    node = api.doc.schemas[schema]
    parts = path.split(".")
    for i, part in enumerate(parts):
        prop = node.properties.get(part)
        if prop is None:
            return bool(node.additional_properties) and i > 0
        if i == len(parts) - 1:
            return True
        while prop.items is not None:
            prop = prop.items
        if prop.ref is None:
            return prop.additional_properties is not None or prop.type == "object"
        node = api.doc.schemas[prop.ref]
    return True


def _mask(c: Call, body: dict[str, Any], mask_in: str, mask_name: str | None) -> list[str] | None:
    raw = get_path(body, mask_name or "") if mask_in == "body" else (c.param(mask_name or "") if mask_in == "query" else None)
    if not isinstance(raw, str) or not raw:
        return None
    return [camel(p.strip()) for p in raw.split(",") if p.strip()]


def update(eng: MockGCP, c: Call) -> Response:
    current = eng.state.resources.get(c.store_key)
    if current is None and is_settings(c.coll):
        current = default(c.api, c.coll.schema, c.key)  # the first write of a settings object
    if current is None:
        raise not_found(c.key)
    if not isinstance(c.body, dict):
        raise invalid("Request body must be a JSON object.")
    shape = update_shape(c.api.doc, c.coll, c.method)
    patch = (c.body.get(shape.resource_field) or {}) if shape.resource_field else c.body
    if not isinstance(patch, dict):
        raise invalid("Request body must be a JSON object.")
    mask = _mask(c, c.body, shape.mask_in, shape.mask)
    check_metageneration(c, current)
    if mask is None and "fingerprint" in current and shape.mask_in == "none":
        supplied = patch.get("fingerprint")
        if supplied != current.get("fingerprint"):
            raise precondition(
                "Invalid value for field 'resource.fingerprint': "
                f"'{supplied}'. Supplied fingerprint does not match current fingerprint."
            )
    keep = {k: v for k, v in current.items() if k in c.coll.output_only or k == "name"}
    writable = {k: v for k, v in patch.items() if k not in c.coll.output_only and k != "name"}
    new = copy.deepcopy(current)
    if mask is not None:
        for p in mask:
            if not valid_path(c.api, c.coll.schema, p):
                raise invalid(f"Invalid update_mask provided: field {p!r} does not exist in {c.coll.schema}.")
        for p in mask:
            set_path(new, p, get_path(patch, p))
    elif shape.mask_in != "none":
        if re.search(r"\bRequired\b", shape.mask_doc):
            raise invalid(f"{shape.mask} is required.")
        if re.search(r"replace|all fields", shape.mask_doc, re.IGNORECASE):
            new = {**copy.deepcopy(keep), **copy.deepcopy(writable)}
        else:
            new.update(copy.deepcopy(writable))
    elif shape.replace:
        new = {**copy.deepcopy(keep), **copy.deepcopy(writable)}
    else:
        # compute, storage and dns PATCH merge nested objects ({"routingConfig":
        # {"routingMode": ...}} keeps the other routingConfig fields).
        merge_patch(new, writable)
    eng._populate(c.api, c.coll, c.key, new, project_of(c.key, c.query), False, current)
    # Checked after populating, which normalizes what compute normalizes (a
    # partial "regions/r" becomes the full URL it stored): unchanged is unchanged.
    for f in sorted(c.coll.immutable):
        if new.get(f) != current.get(f):
            raise invalid(f"Field '{f}' is immutable and cannot be changed (resource={c.key}).")
    if "ifMetagenerationMatch" in c.method.parameters and "metageneration" in new:
        new["metageneration"] = str(int(current.get("metageneration", "1")) + 1)
    for f in c.coll.input_only:
        new.pop(f, None)  # taken on write, never returned by GET
    if c.lro_error is None:
        eng.state.resources[c.store_key] = new
    action = "update" if shape.replace else "patch"
    return respond(eng, c.api, c.coll, action, c.key, new, c.lro_error, lro_style(c.api.doc, c.method), old=current)
