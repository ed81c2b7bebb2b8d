"""mockgcp: a local GCP REST emulator derived from the pinned Discovery documents.

Standard semantics (create/get/list/patch/update/delete, update masks, LROs,
errors, strict request bodies) are worked out per request from the Discovery
method it is routed to; what a service does that its document cannot express
lives in its profile (mockgcp/apis/<api>.py) and in mockgcp/overrides.yaml,
each fact with its reason. mockgcp never imports the generator or reads its
kind configs, so it can disagree with the generator: it is the test oracle.

Modules: catalog (documents -> routes and collections), overrides (the table),
shapes (what a request means), bodies (strict request bodies), lifecycle
(create/get/list/delete), update, operations (LROs), populate (fields the
service fills, defaults.json), state (the stores and IDs), engine (MockGCP:
routing a request to the above), server/cli (HTTP), faults, httplog, normalize.
"""

from kccgen.mockgcp.engine import MockGCP
from kccgen.mockgcp.server import MockServer

__all__ = ["MockGCP", "MockServer"]
