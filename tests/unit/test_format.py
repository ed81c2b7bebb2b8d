"""Generated Python is formatted by ruff (one run over the tree); its output
must equal black's, the formatter it replaced, on real generated files."""

from __future__ import annotations

import black
import pytest

from kccgen import data_dir
from kccgen.generator.emit.files import jobs
from kccgen.generator.ir.build import build_ir
from kccgen.generator.render import format_many, format_python
from kccgen.generator.spec.loader import load_specs

BLACK = black.Mode(target_versions={black.mode.TargetVersion.PY311}, line_length=100)


@pytest.fixture(scope="module")
def raw_sample() -> dict[str, str]:
    """Unformatted emitter output for every generated Python file of two APIs."""
    ir = build_ir(load_specs(data_dir("specs")))
    apis = {k.api.doc_key for k in ir.kinds}
    pick = set(sorted(apis)[:2])
    out = {}
    for path, fn, arg in jobs(ir):
        if path.endswith(".py") and any(f"/{a.split('.')[0]}" in path for a in pick):
            out[path] = fn(arg)
    assert out
    return out


def test_ruff_format_equals_black(raw_sample: dict[str, str]) -> None:
    formatted = format_many(raw_sample)
    differ = [p for p, text in raw_sample.items() if formatted[p] != black.format_str(text, mode=BLACK)]
    assert not differ, f"ruff and black disagree on {differ}"


def test_single_file_matches_bulk(raw_sample: dict[str, str]) -> None:
    path, text = sorted(raw_sample.items())[0]
    assert format_python(text, path) == format_many({path: text})[path]


def test_unparseable_generated_code_is_named() -> None:
    with pytest.raises(RuntimeError, match=r"generated/x/broken\.py"):
        format_many({"generated/x/ok.py": "x = 1\n", "generated/x/broken.py": "def (:\n"})


def test_a_description_ending_in_a_quote_stays_a_valid_docstring() -> None:
    """monitoring's ServiceLevelObjective description ends in '...successfully."'."""
    import ast

    from kccgen.generator.emit.types import docstring_safe

    for text in ('goal "99.5% of requests."', "ends with a backslash \\", 'has """ inside'):
        ast.parse(f'"""{docstring_safe(text)}"""')
