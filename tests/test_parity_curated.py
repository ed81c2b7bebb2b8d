"""generator/parity/curated.yaml is read strictly: a typo is an error, never a dropped reason.

No KCC CRDs needed: these tests read only the curated file, or a broken copy of it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kccgen.discovery.errors import SpecError
from kccgen.generator.parity.curated import CURATED, CURATED_FILE, load_curated

GOOD = """\
kinds:
  StorageBucket:
    mappings:
      - kcc: requesterPays
        ours: billing.requesterPays
        category: kcc-flatten
        evidence: KCC hoists it
    elsewhere:
      - ours: labels
        kcc: metadata.labels
        fixture: basic/storage
"""


def _load(tmp_path: Path, text: str) -> SpecError:
    f = tmp_path / "curated.yaml"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(SpecError) as e:
        load_curated(f)
    assert e.value.file == str(f)
    return e.value


def test_the_committed_file_loads_and_keeps_its_evidence() -> None:
    assert CURATED.file == str(CURATED_FILE)
    assert CURATED.mappings and CURATED.elsewhere
    assert all(m.evidence.strip() for m in CURATED.mappings)
    assert all(e.fixture for e in CURATED.elsewhere)


def test_a_good_file_loads(tmp_path: Path) -> None:
    f = tmp_path / "curated.yaml"
    f.write_text(GOOD, encoding="utf-8")
    c = load_curated(f)
    assert [(m.kind, m.kcc, m.ours) for m in c.mappings] == [
        ("StorageBucket", "requesterPays", "billing.requesterPays")
    ]
    assert [(e.kind, e.ours) for e in c.elsewhere] == [("StorageBucket", "labels")]


@pytest.mark.parametrize(
    ("typo", "path", "message"),
    [
        ("evidence: KCC", "/kinds/StorageBucket/mappings/0/evidnce", "unknown key 'evidnce'"),
        ("    mappings:", "/kinds/StorageBucket/mapings", "unknown key 'mapings'"),
        ("fixture: basic", "/kinds/StorageBucket/elsewhere/0/fixtures", "unknown key 'fixtures'"),
        ("kinds:", "/kind", "unknown key 'kind'"),
    ],
)
def test_an_unknown_key_names_the_file_and_the_key(
    tmp_path: Path, typo: str, path: str, message: str
) -> None:
    key = path.rsplit("/", 1)[-1]
    old = typo.strip().split(":")[0]
    err = _load(tmp_path, GOOD.replace(typo, typo.replace(old, key), 1))
    assert err.path == path
    assert err.message.startswith(message) and "did you mean" in err.message


def test_an_unknown_category_is_an_error(tmp_path: Path) -> None:
    err = _load(tmp_path, GOOD.replace("kcc-flatten", "kcc-flaten"))
    assert err.path == "/kinds/StorageBucket/mappings/0/category"


@pytest.mark.parametrize("evidence", ["", "''"])
def test_every_mapping_keeps_its_evidence(tmp_path: Path, evidence: str) -> None:
    err = _load(tmp_path, GOOD.replace(" KCC hoists it", f" {evidence}".rstrip()))
    assert err.path == "/kinds/StorageBucket/mappings/0/evidence"


def test_an_entry_for_an_unknown_kind_is_an_error() -> None:
    kinds = {e.kind for e in (*CURATED.mappings, *CURATED.elsewhere)}
    with pytest.raises(SpecError) as e:
        CURATED.check_kinds(kinds - {"StorageBucket"} | {"StorageBuckets"})
    assert e.value.file == str(CURATED_FILE)
    assert e.value.path == "/kinds/StorageBucket"
    assert "unknown Kind 'StorageBucket' (did you mean 'StorageBuckets'?)" in e.value.message
