"""Stage 1: typed loading of the generator's inputs (no interpretation yet)."""

from kccgen.generator.spec.asset_names import AssetName, AssetNameTable, load_asset_names
from kccgen.generator.spec.discovery import (
    DiscoveryDoc,
    JsonSchema,
    Method,
    Parameter,
    Resource,
    load_discovery,
)
from kccgen.generator.spec.kinds import KindConfig, KindsFile, load_kinds_file
from kccgen.generator.spec.loader import Specs, load_specs

__all__ = [
    "AssetName",
    "AssetNameTable",
    "DiscoveryDoc",
    "JsonSchema",
    "KindConfig",
    "KindsFile",
    "Method",
    "Parameter",
    "Resource",
    "Specs",
    "load_asset_names",
    "load_discovery",
    "load_kinds_file",
    "load_specs",
]
