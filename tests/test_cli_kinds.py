"""`kccgen kinds` lists every Kind with its template and the disagreements."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.conftest import REPO
from tests.support.kinds import configured_kinds, shape


def test_kinds_table_lists_all_kinds_and_disagreements() -> None:
    r = subprocess.run([sys.executable, "-m", "kccgen.generator.cli", "kinds"], cwd=REPO, capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split()[:2] == ["Kind", "group/version"]
    for kind in configured_kinds():  # tests/kinds/<Kind>/shape.yaml holds the expected template
        row = next(line for line in lines if line.startswith(kind + " "))
        assert shape(kind).template in row.split()
    # derived Kinds outside the asset table add their own; the curated one is StorageBucket's
    m = re.search(r"; (\d+) disagreement\(s\)", r.stdout)
    assert m is not None and int(m.group(1)) >= 1, r.stdout[-2000:]
    assert "StorageBucket: asset-inventory '//storage.googleapis.com/{bucket}' does not match the REST get path 'b/{bucket}'" in r.stdout
