"""Map the repository's top-level folders onto the ``kccgen`` package.

The folders stay where the design puts them (``generator/``, ``generated/``,
``specs/``...); the import names all live under ``kccgen`` so the wheel never
claims a generic top-level name. The table is ``[tool.kccgen.package-dirs]``
in pyproject.toml; everything else about the distribution is declared there.
"""

import tomllib
from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).resolve().parent
DIRS: dict[str, str] = tomllib.loads((HERE / "pyproject.toml").read_text())["tool"]["kccgen"]["package-dirs"]

packages = []
for name, folder in DIRS.items():
    packages.append(name)
    packages += [f"{name}.{sub}" for sub in find_packages(str(HERE / folder))]

setup(
    package_dir=DIRS,
    packages=sorted(packages),
    package_data={
        "kccgen.specs": ["*.yaml", "*.json", "discovery/*.json", "kinds/*.yaml", "kcc/*.yaml"],
        "kccgen.templates": ["*.j2"],
        "kccgen.mockgcp": ["*.json", "*.yaml"],
        "kccgen.generator.parity": ["*.yaml"],
        "kccgen.generated": ["crds/*.yaml", "kinds.json", ".kccgen-stamp"],
    },
)
