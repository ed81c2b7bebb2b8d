"""Generation is split per API unit and cached by the digest of each unit's IR slice."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kccgen import data_dir
from kccgen.generator.cache import RenderCache, digest
from kccgen.generator.cli import render_all
from kccgen.generator.emit.files import units
from kccgen.generator.ir.build import build_ir
from kccgen.generator.ir.model import IR
from kccgen.generator.spec.loader import load_specs


@pytest.fixture(scope="module")
def ir() -> IR:
    return build_ir(load_specs(data_dir("specs")))


def test_each_unit_holds_only_its_api(ir: IR) -> None:
    us = units(ir)
    assert len({u.name for u in us}) == len(us), "a unit name is its cache entry: unique"
    assert sorted(u.name.split("@")[0] for u in us[:-1]) == sorted(m.doc_key for m in ir.api_modules)
    for u in us[:-1]:
        assert len(u.ir.api_modules) == 1
        assert {k.api.doc_key for k in u.ir.kinds} <= {u.name.split("@")[0]}
        assert all(k.api == u.ir.api_modules[0] for k in u.ir.kinds)
        owned = {k.kind for k in u.ir.kinds}
        refd = {cls.removesuffix("Ref") for k in u.ir.kinds for _, cls in k.ref_imports}
        assert {t.kind for t in u.ir.targets} == owned | refd  # no other API's targets
    assert sum(len(u.ir.kinds) for u in us) == len(ir.kinds)


def test_digest_is_stable_across_hash_seeds() -> None:
    code = (
        "from kccgen.generator.cache import digest\n"
        "print(digest({'b': frozenset({'x', 'y', 'z'}), 'a': ('q', 1, None, 2.5)}))"
    )
    outs = {
        subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True, text=True, check=True).stdout
        for seed in ("1", "2", "3")
    }
    assert len(outs) == 1


def test_digest_sees_a_change_deep_in_a_slice(ir: IR) -> None:
    import dataclasses

    u = units(ir)[0]
    k = u.ir.kinds[0]
    changed = dataclasses.replace(k, description=k.description + " (changed)")
    other = dataclasses.replace(u.ir, kinds=(changed, *u.ir.kinds[1:]))
    assert digest(u.ir) != digest(other)


def test_cache_hit_equals_a_fresh_render_and_a_changed_unit_is_rendered_again(curated_ir: IR, tmp_path: Path) -> None:
    import dataclasses

    ir = curated_ir  # rendering every API three times took ten minutes

    cache = RenderCache(tmp_path)
    fresh = render_all(ir, progress=False, workers=1)
    assert render_all(ir, progress=False, workers=1, cache=cache) == fresh  # fills the cache
    assert len(list(cache.dir.glob("*.json"))) == len(units(ir))
    assert render_all(ir, progress=False, workers=1, cache=cache) == fresh  # all hits
    # Poison one entry's files under its current key: a hit must return them
    # (proves the cache is read), and a changed slice must not.
    u = units(ir)[0]
    key = cache.dir / f"{u.name}.json"
    import json

    entry = json.loads(key.read_text())
    first = sorted(entry["files"])[0]
    entry["files"][first] = "poisoned\n"
    key.write_text(json.dumps(entry))
    assert render_all(ir, progress=False, workers=1, cache=cache)[first] == "poisoned\n"
    k = u.ir.kinds[0]
    kinds = tuple(dataclasses.replace(x, description=x.description + " (changed)") if x is k else x for x in ir.kinds)
    again = render_all(dataclasses.replace(ir, kinds=kinds), progress=False, workers=1, cache=cache)
    assert again[first] != "poisoned\n"


def test_a_corrupt_entry_is_a_miss(tmp_path: Path) -> None:
    cache = RenderCache(tmp_path)
    cache.put("x.v1", "k1", {"generated/a.py": "a\n"})
    assert cache.get("x.v1", "k1") == {"generated/a.py": "a\n"}
    assert cache.get("x.v1", "k2") is None
    (cache.dir / "x.v1.json").write_text("{not json")
    assert cache.get("x.v1", "k1") is None
