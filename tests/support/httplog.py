"""Moved to mockgcp.httplog (the emulator writes the format); kept for test imports."""

from mockgcp.httplog import *  # noqa: F403
from mockgcp.httplog import __all__  # noqa: F401
