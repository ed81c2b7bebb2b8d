"""``kccgen parity``: field parity of our CRDs with Google Config Connector's.

Per Kind it compares the spec field paths of our CRD (from the IR's
mutability table, the source of truth for what the runtime reconciles) with
the spec of KCC's CRD for the same Kind (read from a directory of KCC CRD
YAML files, ``<plural>.<service>.yaml``):

* **shared**: the same path on both sides;
* **KCC-only**: a path only KCC spells, each with a reason computed by the
  rules of :mod:`.classify` (first match wins). A path no rule explains is
  ``unexplained``: reasons are never guessed;
* **ours-only**: API-backed paths of our spec that KCC has under no name,
  the schema lag kccgen closes. Listed separately, not counted as lag: our
  counterparts of KCC's renamed fields, API fields KCC carries outside its
  spec (curated ``elsewhere``: labels taken from ``metadata.labels``, shown by
  KCC's recorded requests) and KRM-only fields KCC lacks (``projectRef`` where
  KCC uses the project-id annotation).

One concern a module: :mod:`.kcc` reads KCC's CRDs, ``curated.yaml`` holds the
curated mappings with their evidence (:mod:`.curated` reads it strictly),
:mod:`.schema` walks Discovery schemas, :mod:`.classify` gives KCC-only paths
their reason, :mod:`.compare` builds the report, :mod:`.totals` counts it and
:mod:`.render` writes the markdown.
"""

from __future__ import annotations

from pathlib import Path

from kccgen.generator.ir.build import build_ir
from kccgen.generator.parity.compare import ParityReport, build
from kccgen.generator.parity.render import render
from kccgen.generator.parity.totals import totals
from kccgen.generator.spec.loader import load_specs

__all__ = ["ParityReport", "build", "render", "report", "run", "totals"]


def report(specs_dir: Path, kcc_crds: Path) -> ParityReport:
    """Load the specs, build the IR, compare every Kind with ``kcc_crds``."""
    specs = load_specs(specs_dir)
    return build(build_ir(specs), specs, kcc_crds)


def run(specs_dir: Path, kcc_crds: Path) -> str:
    """The markdown of ``docs/field-parity.md`` for ``specs_dir`` against ``kcc_crds``."""
    return render(report(specs_dir, kcc_crds))
