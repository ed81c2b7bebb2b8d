"""kccgen: Config-Connector-style direct controllers generated from Google API Discovery documents.

The repository keeps one top-level folder per part, and the distribution maps
each under this package (``setup.py`` reads the table in ``pyproject.toml``):

* ``kccgen.contract`` (``kccgen/contract.py``): the method shapes every layer shares;
* ``kccgen.discovery`` (``discovery/``): Discovery documents, schemas and paths;
* ``kccgen.generator`` (``generator/``): specs -> IR -> emitters (``kccgen`` command);
* ``kccgen.generated`` (``generated/``): the committed output;
* ``kccgen.runtime`` (``runtime/``): what generated code runs on (``kccctl`` command);
* ``kccgen.mockgcp`` (``mockgcp/``): the local GCP emulator (``mockgcp`` command);
* ``kccgen.specs``, ``kccgen.templates`` (``specs/``, ``templates/``): package data.
"""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path


def data_dir(package: str) -> Path:
    """The directory of a data package (``"specs"``, ``"templates"``) as a path.

    Installed as a wheel or in development mode, package data is a plain
    directory, so the path stays valid after this returns.
    """
    with as_file(files(f"kccgen.{package}")) as path:
        return Path(path)
