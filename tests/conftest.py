"""Shared fixtures: the repo root, the loaded specs and the built IR."""

from __future__ import annotations

from pathlib import Path

import pytest

from kccgen.generator.ir.build import build_ir
from kccgen.generator.ir.model import IR
from kccgen.generator.spec.loader import Specs, load_specs
from tests.support.envtest import envtest as envtest  # the session API server fixture

REPO = Path(__file__).resolve().parent.parent
COMPAT = REPO.parent / "shared" / "compat" / "kcc"


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def specs() -> Specs:
    return load_specs(REPO / "specs")


@pytest.fixture(scope="session")
def ir(specs: Specs) -> IR:
    return build_ir(specs)


@pytest.fixture(scope="session")
def curated_ir(specs: Specs) -> IR:
    """The curated Kinds' IR: for tests that render, where every API would take minutes."""
    from tests.support.specs import curated_only

    return build_ir(curated_only(specs))
