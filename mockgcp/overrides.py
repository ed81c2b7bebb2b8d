"""mockgcp's override table (``mockgcp/overrides.yaml``), loaded strictly.

The Discovery documents are mockgcp's only other source of semantics. An
override adds one fact about one collection with its reason; anything the
loader does not understand is an error that names the file and the key,
because a mistyped key silently ignored would make the oracle quietly wrong.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kccgen.discovery.errors import SpecError, did_you_mean, json_path

OVERRIDES_FILE = Path(__file__).resolve().parent / "overrides.yaml"

_KEYS = ("api", "resource", "reason", "immutable", "outputOnly", "settable", "serviceAssignedId", "idField", "requires", "required", "defaults")
_FACTS = ("immutable", "outputOnly", "settable", "serviceAssignedId", "idField", "requires", "required", "defaults")


@dataclass(frozen=True)
class Override:
    api: str  # Discovery doc key: pubsub.v1
    resource: str  # Discovery resource path: projects.subscriptions
    reason: str
    immutable: frozenset[str] = frozenset()
    output_only: frozenset[str] = frozenset()
    settable: frozenset[str] = frozenset()  # Discovery says output-only, yet a create takes and keeps them
    service_assigned_id: bool = False
    # the (dotted) resource field a create names it by, where the document does not
    # say: appengine's FirewallRule.priority, run's DomainMapping.metadata.name
    id_field: str = ""
    # field -> the collection (resource path, same API) whose resource it must
    # name on create: a subscription's topic must exist (404 otherwise).
    requires: tuple[tuple[str, str], ...] = ()
    required: frozenset[str] = frozenset()  # top-level fields a create must carry (400 otherwise)
    # top-level field -> the value the service sets on create when the request has none
    # (an AlloyDB cluster's output-only clusterType is PRIMARY), as JSON text
    defaults: tuple[tuple[str, str], ...] = ()
    where: str = ""  # file#/overrides/<i>, for errors found later


def _fields(file: str, i: int, key: str, value: Any) -> frozenset[str]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise SpecError(file, json_path("overrides", i, key), "expected a non-empty list of top-level field names")
    return frozenset(value)


def _entry(file: str, i: int, raw: Any) -> Override:
    if not isinstance(raw, dict):
        raise SpecError(file, json_path("overrides", i), "an override must be a mapping")
    for key in raw:
        if key not in _KEYS:
            raise SpecError(file, json_path("overrides", i, key), f"unknown key {key!r}{did_you_mean(str(key), _KEYS)}; allowed: {', '.join(_KEYS)}")
    for key in ("api", "resource", "reason"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise SpecError(file, json_path("overrides", i, key), f"{key!r} is required (a non-empty string)")
    if not any(k in raw for k in _FACTS):
        raise SpecError(file, json_path("overrides", i), f"states no fact: give one of {', '.join(_FACTS)}")
    req = raw.get("requires", {})
    if not isinstance(req, dict) or not all(isinstance(k, str) and isinstance(v, str) and k and v for k, v in req.items()):
        raise SpecError(file, json_path("overrides", i, "requires"), "expected a mapping of top-level field name to resource path (topic: projects.topics)")
    dflt = raw.get("defaults", {})
    if not isinstance(dflt, dict) or not all(isinstance(k, str) and k for k in dflt):
        raise SpecError(file, json_path("overrides", i, "defaults"), "expected a mapping of top-level field name to the value the service sets")
    sa = raw.get("serviceAssignedId", False)
    if not isinstance(sa, bool):
        raise SpecError(file, json_path("overrides", i, "serviceAssignedId"), "expected true or false")
    idf = raw.get("idField", "")
    if not isinstance(idf, str):
        raise SpecError(file, json_path("overrides", i, "idField"), "expected a (dotted) field name")
    return Override(
        api=raw["api"],
        resource=raw["resource"],
        reason=" ".join(raw["reason"].split()),
        immutable=_fields(file, i, "immutable", raw["immutable"]) if "immutable" in raw else frozenset(),
        output_only=_fields(file, i, "outputOnly", raw["outputOnly"]) if "outputOnly" in raw else frozenset(),
        settable=_fields(file, i, "settable", raw["settable"]) if "settable" in raw else frozenset(),
        service_assigned_id=sa,
        id_field=idf,
        requires=tuple(sorted(req.items())),
        required=_fields(file, i, "required", raw["required"]) if "required" in raw else frozenset(),
        defaults=tuple(sorted((k, json.dumps(v, sort_keys=True)) for k, v in dflt.items())),
        where=f"{file}#{json_path('overrides', i)}",
    )


def read_table(path: Path) -> Any:
    """A YAML table of mockgcp's own (overrides, limits): one line naming the file if it cannot be read."""
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise SpecError(str(path), "", f"cannot read: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise SpecError(str(path), "", f"invalid YAML: {e}") from None


def load_overrides(path: Path = OVERRIDES_FILE) -> tuple[Override, ...]:
    """Every entry of the table, checked for shape (not yet against the documents)."""
    file = str(path)
    raw = read_table(path)
    if not isinstance(raw, dict):
        raise SpecError(file, "", "expected a mapping with the key 'overrides'")
    for key in raw:
        if key != "overrides":
            raise SpecError(file, json_path(key), f"unknown key {key!r}; the file holds only 'overrides'")
    entries = raw.get("overrides") or []
    if not isinstance(entries, list):
        raise SpecError(file, json_path("overrides"), "expected a list")
    return tuple(_entry(file, i, e) for i, e in enumerate(entries))


def check_override(o: Override, collections: Mapping[str, Mapping[str, Any]], schema_fields: Mapping[tuple[str, str], frozenset[str]]) -> None:
    """``o`` names a collection the documents have, and fields its schema has.

    ``collections``: doc key -> {resource path: collection}; ``schema_fields``:
    (doc key, resource path) -> the resource schema's top-level fields."""
    file, _, ptr = o.where.partition("#")
    if o.api not in collections:
        raise SpecError(file, ptr + "/api", f"no Discovery document {o.api!r}{did_you_mean(o.api, collections)}")
    if o.resource not in collections[o.api]:
        hint = did_you_mean(o.resource, collections[o.api])
        raise SpecError(file, ptr + "/resource", f"{o.api} has no collection {o.resource!r} (a resource whose get returns a schema){hint}")
    have = schema_fields[(o.api, o.resource)]
    for key, names in (("immutable", o.immutable), ("outputOnly", o.output_only), ("settable", o.settable), ("required", o.required), ("defaults", frozenset(k for k, _ in o.defaults))):
        for name in sorted(names - have):
            raise SpecError(file, f"{ptr}/{key}", f"{o.api} {o.resource} has no top-level field {name!r}{did_you_mean(name, have)}")
    if o.id_field and o.id_field.split(".")[0] not in have:
        raise SpecError(file, f"{ptr}/idField", f"{o.api} {o.resource} has no top-level field {o.id_field.split('.')[0]!r}{did_you_mean(o.id_field, have)}")
    for name, target in o.requires:
        if name not in have:
            raise SpecError(file, f"{ptr}/requires/{name}", f"{o.api} {o.resource} has no top-level field {name!r}{did_you_mean(name, have)}")
        if target not in collections[o.api]:
            raise SpecError(file, f"{ptr}/requires/{name}", f"{o.api} has no collection {target!r}{did_you_mean(target, collections[o.api])}")
