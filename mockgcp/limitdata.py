"""``mockgcp/limits.yaml`` loaded strictly, and the syntax rules it states.

Labels and locations are checked by rule (label syntax from Google's labels
requirements, a location's form from the regions-and-zones naming); the file
names where each rule comes from. A key the loader does not know is an error
naming the file and its path, never silently ignored: a mistyped limit would
quietly make the oracle accept what GCP refuses.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kccgen.discovery.errors import SpecError, did_you_mean
from kccgen.mockgcp.overrides import read_table

LIMITS_FILE = Path(__file__).resolve().parent / "limits.yaml"


@dataclass(frozen=True)
class FieldRef:
    """A field of a schema of one document (``api``: a doc key, or a glob such as "*")."""

    api: str
    schema_: str
    field: str = "labels"
    source: str = ""
    reason: str = ""
    min: float | None = None  # ranges.add only
    max: float | None = None


@dataclass(frozen=True)
class LabelRules:
    also: tuple[FieldRef, ...]
    exempt: tuple[FieldRef, ...]
    key_max_length: int
    max_entries: int
    source: str
    summary: str
    value_max_length: int


@dataclass(frozen=True)
class LocationRules:
    fields: tuple[FieldRef, ...]
    multi_regions: tuple[str, ...]
    multi_region_pattern: str
    reason: str
    region_pattern: str
    source: str
    zone_pattern: str


@dataclass(frozen=True)
class RangeRules:
    add: tuple[FieldRef, ...]
    skip: tuple[FieldRef, ...]


@dataclass(frozen=True)
class Limits:
    labels: LabelRules
    locations: LocationRules
    ranges: RangeRules


class _Reader:
    """Reads one mapping of the file; every error names the file and the path."""

    def __init__(self, file: str, raw: Any, path: str, keys: dict[str, bool]) -> None:
        if not isinstance(raw, dict):
            raise SpecError(file, path or "/", "expected a mapping")
        for k in raw:
            if k not in keys:
                raise SpecError(file, f"{path}/{k}", f"unknown key {k!r}{did_you_mean(str(k), keys)}; allowed: {', '.join(keys)}")
        for k, required in keys.items():
            if required and k not in raw:
                raise SpecError(file, f"{path}/{k}", f"{k!r} is required")
        self.file, self.raw, self.path = file, raw, path

    def text(self, key: str, default: str = "") -> str:
        v = self.raw.get(key, default)
        if not isinstance(v, str) or (key in self.raw and not v.strip()):
            raise SpecError(self.file, f"{self.path}/{key}", "expected a non-empty string")
        return " ".join(v.split())

    def count(self, key: str) -> int:
        v = self.raw.get(key)
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise SpecError(self.file, f"{self.path}/{key}", "expected a whole number >= 0")
        return v

    def number(self, key: str) -> float | None:
        v = self.raw.get(key)
        if v is not None and (not isinstance(v, int | float) or isinstance(v, bool)):
            raise SpecError(self.file, f"{self.path}/{key}", "expected a number")
        return None if v is None else float(v)

    def pattern(self, key: str) -> str:
        v = self.text(key)
        try:
            re.compile(v)
        except re.error as e:
            raise SpecError(self.file, f"{self.path}/{key}", f"not a regular expression: {e}") from None
        return v

    def items(self, key: str) -> list[tuple[str, Any]]:
        v = self.raw.get(key) or []
        if not isinstance(v, list):
            raise SpecError(self.file, f"{self.path}/{key}", "expected a list")
        return [(f"{self.path}/{key}/{i}", item) for i, item in enumerate(v)]


def _refs(r: _Reader, key: str, need: str, ranged: bool = False) -> tuple[FieldRef, ...]:
    """The entries of a list of fields, each with its ``need`` (source or reason);
    a range to add (``ranged`` with a source) has its bounds too."""
    keys = {"api": True, "schema": True, "field": ranged, need: True}
    if ranged and need == "source":
        keys |= {"min": False, "max": False}
    out = []
    for path, item in r.items(key):
        e = _Reader(r.file, item, path, keys)
        ref = FieldRef(e.text("api"), e.text("schema"), e.text("field", "labels"), e.text("source"), e.text("reason"), e.number("min"), e.number("max"))
        if "min" in keys and ref.min is None and ref.max is None:
            raise SpecError(r.file, path, "a range needs min, max or both")
        out.append(ref)
    return tuple(out)


def load_limits(path: Path = LIMITS_FILE) -> Limits:
    """The table, strictly: unknown keys, missing sources or reasons are errors."""
    file = str(path)
    raw = read_table(path)
    _Reader(file, raw, "", {"labels": True, "locations": True, "ranges": True})
    lab = _Reader(file, raw["labels"], "/labels", {"also": False, "exempt": False, "keyMaxLength": True, "maxEntries": True, "source": True, "summary": True, "valueMaxLength": True})
    loc = _Reader(file, raw["locations"], "/locations", {"fields": False, "multiRegions": True, "multiRegionPattern": True, "reason": True, "regionPattern": True, "source": True, "zonePattern": True})
    rng = _Reader(file, raw["ranges"], "/ranges", {"add": False, "skip": False})
    multi = raw["locations"]["multiRegions"]
    if not isinstance(multi, list) or not all(isinstance(m, str) and m for m in multi):
        raise SpecError(file, "/locations/multiRegions", "expected a list of location names")
    return Limits(
        LabelRules(_refs(lab, "also", "source"), _refs(lab, "exempt", "reason"), lab.count("keyMaxLength"), lab.count("maxEntries"), lab.text("source"), lab.text("summary"), lab.count("valueMaxLength")),
        LocationRules(_refs(loc, "fields", "source"), tuple(m.lower() for m in multi), loc.pattern("multiRegionPattern"), loc.text("reason"), loc.pattern("regionPattern"), loc.text("source"), loc.pattern("zonePattern")),
        RangeRules(_refs(rng, "add", "source", ranged=True), _refs(rng, "skip", "reason", ranged=True)),
    )


@functools.cache
def limits() -> Limits:
    return load_limits()


# --- labels ---------------------------------------------------------------------------


def _label_char(c: str, first: bool) -> bool:
    """A lowercase letter or an international (caseless) letter; after the
    first character also a digit, "_" or "-"."""
    cat = unicodedata.category(c)
    if cat in ("Ll", "Lo"):
        return True
    return not first and (cat == "Nd" or c in "_-")


def label_problem(key: str, value: object, rules: LabelRules) -> str | None:
    """What is wrong with one label, in the words of Google's requirements, or None."""
    if not key or len(key) > rules.key_max_length or not _label_char(key[0], True) or not all(_label_char(c, False) for c in key[1:]):
        return (
            f"label key '{key}' violates format constraints. The key must start with a lowercase letter "
            f"or an international character, can only contain lowercase letters, numeric characters, "
            f"underscores and dashes, and can be at most {rules.key_max_length} characters long."
        )
    if not isinstance(value, str):
        return None  # not a string at all: the strict body check's business
    if len(value) > rules.value_max_length or not all(_label_char(c, False) for c in value):
        return (
            f"label value '{value}' of key '{key}' violates format constraints. The value can only contain "
            f"lowercase letters, numeric characters, underscores and dashes, and can be at most "
            f"{rules.value_max_length} characters long."
        )
    return None


# --- locations ------------------------------------------------------------------------


def location_form(value: str, kind: str, rules: LocationRules) -> bool:
    """Whether ``value`` has the form of a ``kind`` location: "region", "zone",
    or "any" (a region, a zone, a multi-region, or global). Case is ignored."""
    v = value.lower()
    if kind == "region":
        return re.fullmatch(rules.region_pattern, v) is not None
    if kind == "zone":
        return re.fullmatch(rules.zone_pattern, v) is not None
    return (
        v in rules.multi_regions
        or re.fullmatch(rules.multi_region_pattern, v) is not None
        or re.fullmatch(rules.region_pattern, v) is not None
        or re.fullmatch(rules.zone_pattern, v) is not None
    )
