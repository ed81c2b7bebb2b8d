"""``python -m kccgen.mockgcp serve ...``."""

from kccgen.mockgcp.cli import run

run()
