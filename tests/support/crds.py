"""The generated CRDs, parsed once per test session with libyaml.

At a thousand Kinds generated/crds/ holds ~40 MB of YAML; PyYAML's pure-Python
loader took minutes per test module to read it. Callers get a shared object:
copy before changing it.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml


@cache
def load_crd(path: Path) -> dict[str, Any]:
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    assert isinstance(data, dict), path
    return data
