"""The Cloud Asset Inventory resource-name table (specs/asset-names.yaml)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from kccgen.discovery.errors import SpecError, json_path
from kccgen.generator.spec._errors import read_yaml

_FORMAT_RE = re.compile(r"^//(?P<domain>[a-z0-9.-]+)/(?P<path>.*)$")
_PLACEHOLDER_RE = re.compile(r"^\{([A-Za-z][A-Za-z0-9]*)\}$")


@dataclass(frozen=True)
class AssetName:
    """One row: an asset type and one of its full resource-name formats."""

    asset_type: str
    format: str
    project_number: bool
    index: int  # position in the table; later rows are newer (externalref guide)

    @property
    def domain(self) -> str:
        m = _FORMAT_RE.match(self.format)
        assert m is not None
        return m.group("domain")

    @property
    def template(self) -> str:
        """The format without ``//<domain>/``: the externalRef template."""
        m = _FORMAT_RE.match(self.format)
        assert m is not None
        return m.group("path")

    @property
    def segments(self) -> tuple[str, ...]:
        return tuple(self.template.split("/"))

    @property
    def params(self) -> tuple[str, ...]:
        out = []
        for seg in self.segments:
            m = _PLACEHOLDER_RE.match(seg)
            if m:
                out.append(m.group(1))
        return tuple(out)


@dataclass(frozen=True)
class AssetNameTable:
    rows: tuple[AssetName, ...]

    def for_type(self, asset_type: str) -> tuple[AssetName, ...]:
        return self._index()[0].get(asset_type, ())

    def for_domain(self, domain: str) -> tuple[AssetName, ...]:
        return self._index()[1].get(domain, ())

    def _index(self) -> tuple[dict[str, tuple[AssetName, ...]], dict[str, tuple[AssetName, ...]]]:
        """Rows by asset type and by domain, built once: a thousand Kinds look
        rows up tens of thousands of times."""
        cached = self.__dict__.get("_by")
        if cached is None:
            by_type: dict[str, list[AssetName]] = {}
            by_domain: dict[str, list[AssetName]] = {}
            for r in self.rows:
                by_type.setdefault(r.asset_type, []).append(r)
                by_domain.setdefault(r.domain, []).append(r)
            cached = ({k: tuple(v) for k, v in by_type.items()}, {k: tuple(v) for k, v in by_domain.items()})
            object.__setattr__(self, "_by", cached)
        return cached


def load_asset_names(path: Path, display: str | None = None) -> AssetNameTable:
    file = display or str(path)
    raw = read_yaml(path, file)
    if not isinstance(raw, list):
        raise SpecError(file, "", "expected a list of {asset_type, format} rows")
    rows = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise SpecError(file, json_path(i), "expected a mapping")
        unknown = set(item) - {"asset_type", "format", "project_number"}
        if unknown:
            raise SpecError(file, json_path(i, sorted(unknown)[0]), "unknown key")
        at, fmt = item.get("asset_type"), item.get("format")
        if not isinstance(at, str) or not isinstance(fmt, str):
            raise SpecError(file, json_path(i), "asset_type and format must be strings")
        if not _FORMAT_RE.match(fmt):
            raise SpecError(file, json_path(i, "format"), f"not a //domain/path format: {fmt!r}")
        rows.append(AssetName(at, fmt, bool(item.get("project_number", False)), i))
    return AssetNameTable(tuple(rows))
