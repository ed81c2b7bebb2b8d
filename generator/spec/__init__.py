"""Stage 1: typed loading of the generator's own inputs: asset names and kind configs.

Discovery documents are read by the neutral package kccgen.discovery.
"""

from kccgen.generator.spec.asset_names import AssetName, AssetNameTable, load_asset_names
from kccgen.generator.spec.kinds import KindConfig, KindsFile, load_kinds_file
from kccgen.generator.spec.loader import Specs, load_specs

__all__ = [
    "AssetName",
    "AssetNameTable",
    "KindConfig",
    "KindsFile",
    "Specs",
    "load_asset_names",
    "load_kinds_file",
    "load_specs",
]
