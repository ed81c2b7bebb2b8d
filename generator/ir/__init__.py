"""The frozen IR and the named stages that build it (see build.py)."""
