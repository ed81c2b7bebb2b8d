"""What keeps generated/ small at a thousand Kinds without losing anything the
runtime reads: one operations module per API, field descriptions summarised in
the KRM types (the CRD keeps them whole) and left out of the API payload models."""

from __future__ import annotations

import importlib

import pytest

from kccgen.generator.emit.adapters import adapter_of, operations_home, shared_operations
from kccgen.generator.emit.types import summary
from kccgen.generator.ir.model import IR, KindIR
from tests.conftest import REPO


def _by_api(ir: IR) -> dict[tuple[str, str], tuple[KindIR, ...]]:
    """The Kinds of each render unit: one document's Kinds of one package."""
    out: dict[tuple[str, str], list[KindIR]] = {}
    for k in ir.kinds:
        out.setdefault((k.api.doc_key, k.api.package), []).append(k)
    return {key: tuple(v) for key, v in out.items()}


def test_every_adapter_registers_what_the_ir_says(ir: IR) -> None:
    """Shared operations are the same values the Kind's adapter carried inline."""
    shared = 0
    for kinds in _by_api(ir).values():
        ops = shared_operations(kinds)
        for k in kinds:
            mod = importlib.import_module(f"kccgen.generated.{k.package.replace('/', '.')}.{k.lower}_adapter")
            assert adapter_of(k) == mod.ADAPTER, k.kind
            if ops is not None and k.methods.operations:
                shared += 1
                table = importlib.import_module(operations_home(kinds)[1]).OPERATIONS
                assert all(table[key] is getter for key, getter in mod.ADAPTER.operations), k.kind
    assert shared, "no API shares an operations module"


def test_an_api_whose_kinds_disagree_keeps_operations_inline(ir: IR) -> None:
    import dataclasses

    k = next(k for k in ir.kinds if k.methods.operations)
    key, getter = k.methods.operations[0]
    moved = dataclasses.replace(getter, pattern=getter.pattern + "x")
    other = dataclasses.replace(k, methods=dataclasses.replace(k.methods, operations=((key, moved),)))
    assert shared_operations((k, other)) is None
    assert shared_operations((k,)) == dict(sorted(k.methods.operations))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Optional. The service account to use. The creator must have actAs.", "Optional. The service account to use."),
        ("Output only. Immutable. The time.\nMore text.", "Output only. Immutable. The time."),
        ("Size in bytes, e.g. 10. Rounded up.", "Size in bytes, e.g. 10."),
        ("No full stop", "No full stop"),
        ("Required. A name\nover two lines. Second.", "Required. A name over two lines."),
    ],
)
def test_summary_keeps_behaviour_words_and_the_first_sentence(text: str, expected: str) -> None:
    assert summary(text) == expected


def test_the_crd_keeps_the_whole_description() -> None:
    crd = (REPO / "generated" / "crds" / "pubsubtopics.pubsub.cnrm.cloud.google.com.yaml").read_text(encoding="utf-8")
    types = (REPO / "generated" / "pubsub" / "v1beta1" / "pubsubtopic_types.py").read_text(encoding="utf-8")
    # From the second sentence of messageRetentionDuration's description: in the CRD only.
    needle = "are always available to subscribers"
    assert needle.lower() in crd.lower()
    assert needle.lower() not in types.lower()
