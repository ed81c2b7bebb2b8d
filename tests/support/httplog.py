"""Moved to kccgen.mockgcp.httplog (the emulator writes the format); kept for test imports."""

from kccgen.mockgcp.httplog import *  # noqa: F403
from kccgen.mockgcp.httplog import __all__  # noqa: F401
