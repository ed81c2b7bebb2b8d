"""mockgcp: a local GCP REST emulator derived from the pinned Discovery documents.

Standard semantics (create/get/list/patch/update/delete, update masks, LROs,
errors) come from Discovery; what Discovery cannot express lives in small,
named quirk handlers (mockgcp/quirks.py). Tests and demos need no cloud.
"""

from kccgen.mockgcp.engine import MockGCP
from kccgen.mockgcp.server import MockServer

__all__ = ["MockGCP", "MockServer"]
