"""Fields the service fills in on create and update, and server-side defaults.

Generic rules read the resource schema: ``name`` from the request, output-only
times and etags, ``kind`` from "Always compute#network"-style prose, and a
fresh resource's output-only state enum set to its ready value. What a
service fills that its prose does not say is its profile's ``fill`` hook.
``defaults.json`` (tools/mockgcp_defaults.py, from recorded traffic) holds
the values a service gives fields a create left unset.
"""

from __future__ import annotations

import copy
import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from kccgen.mockgcp.apis import Fill, rfc3339
from kccgen.mockgcp.catalog import Api, Collection
from kccgen.mockgcp.shapes import short_names
from kccgen.mockgcp.state import State

DEFAULTS_FILE = Path(__file__).resolve().parent / "defaults.json"

# Preferred values for an output-only state/status enum on a fresh resource.
_READY_STATES = ("READY", "ACTIVE", "ENABLED", "AVAILABLE", "RUNNING", "CREATED", "SUCCEEDED")
_TIME_FIELDS = ("createTime", "updateTime", "creationTime", "timeCreated", "updated", "revisionCreateTime")
_KIND_RX = re.compile(r"\b[Aa]lways\s+([a-z]+#[A-Za-z]+)")

Defaults = dict[str, dict[str, dict[str, Any]]]  # doc key -> schema -> field -> value


def load_defaults(path: Path = DEFAULTS_FILE) -> Defaults:
    return json.loads(path.read_text()) if path.exists() else {}


def apply_defaults(defaults: Defaults, api: Api, coll: Collection, resource: dict[str, Any]) -> None:
    """Server defaults for fields the create left unset; objects merge key by key."""
    for name, value in defaults.get(api.key, {}).get(coll.schema, {}).items():
        if name not in resource:
            resource[name] = copy.deepcopy(value)
        elif isinstance(value, dict) and isinstance(resource[name], dict):
            for k, v in value.items():
                resource[name].setdefault(k, copy.deepcopy(v))


def _kind(props: dict[str, Any], name: str = "kind") -> str | None:
    prop = props.get(name)
    if prop is None:
        return None
    m = _KIND_RX.search(prop.description or "")
    # dns.v1 has no description for kind, only "default": "dns#managedZone".
    return m.group(1) if m else (prop.default if prop.read_only and "#" in (prop.default or "") else None)


def populate(
    state: State, api: Api, coll: Collection, key: str, res: dict[str, Any], project: str,
    created: bool, old: dict[str, Any] | None, now: datetime,
) -> None:
    """Output-only fields the real service fills in. ``old``: the stored resource on update."""
    props = api.doc.schemas[coll.schema].properties
    if coll.id_field == "name" and "name" in props:
        # The name keeps the form it was created with: the ID alone (compute,
        # dns) or, when the client sent it in full or the service assigned it,
        # the full resource name.
        sent = (old or {}).get("name") if old is not None else res.get("name")
        short = short_names(api.doc, coll) and not (isinstance(sent, str) and "/" in sent)
        res["name"] = key.rsplit("/", 1)[-1] if short else key
    elif created and "." not in coll.id_field and coll.id_field in props and (coll.service_assigned or res.get(coll.id_field) in (None, "")):
        # the ID the service picked (calendar's id; Apps Script's scriptId, which the request cannot carry)
        res[coll.id_field] = key.rsplit("/", 1)[-1]
    f = Fill(api.doc, coll.schema, props, coll.output_only, res, key, project, created, old, now, rfc3339(now), state.digits, state.token)
    for t in _TIME_FIELDS:
        if t in props and t in coll.output_only and (created or t in ("updateTime", "updated")):
            res[t] = f.now_text
    etag = api.profile.etag(f)
    if etag is not None:
        res["etag"] = etag
    kind = _kind(dict(props))
    if kind:
        res["kind"] = kind
    for s in ("state", "status"):
        prop = props.get(s)
        if created and prop is not None and s in coll.output_only and prop.enum and not api.profile.state_omitted(coll.schema, s, res):
            res[s] = next((v for v in _READY_STATES if v in prop.enum), prop.enum[min(1, len(prop.enum) - 1)])
    api.profile.fill(f)
