"""IR stage: what every method-shape decision reads, and how it refuses.

A Kind's methods are decided in generator/ir/methods.py (reads, updates,
deletes and the whole) and generator/ir/creates.py (creates); both work on a
:class:`ShapeCtx` and raise :class:`UnsupportedShape` for a method no
kccgen.contract variant describes.
"""

from __future__ import annotations

from dataclasses import dataclass

from kccgen.discovery.document import DiscoveryDoc
from kccgen.discovery.errors import SpecError, json_path
from kccgen.generator.ir.model import MethodIR
from kccgen.generator.spec.kinds import KindConfig

# Query parameters of a create that steer the request, not the resource: they
# never become spec fields (each with why).
CONTROL_PARAMS: dict[str, str] = {
    "requestId": "an idempotency token for retrying the request",
    "clientOperationId": "names the operation, not the resource",
    "validateOnly": "a dry run",
    "userProject": "bills the request to a project",
    "projection": "shapes the response",
    "view": "shapes the response",
    "views": "shapes the response",
    "fieldMask": "shapes the response",
}


class UnsupportedShape(Exception):
    """A method whose shape fits no kccgen.contract variant; names it and says why."""

    def __init__(self, location: str, reason: str) -> None:
        self.location = location
        self.reason = reason
        super().__init__(f"{location}: {reason}")


@dataclass(frozen=True)
class ShapeCtx:
    """What every shape decision reads: the document, the resource and the Kind's config."""

    file: str
    index: int
    cfg: KindConfig
    doc: DiscoveryDoc
    dotted: str
    schema: str
    id_placeholder: str = ""  # the get path's last parameter ({datasetId}, {id}); "" when unknown
    id_collection: str = ""  # the literal segment before it (addresses, orgunits); "" when none
    get_path: str = ""  # the get method's path: a create POSTed to it makes a singleton

    def where(self, role: str, *key: str) -> str:
        return json_path("kinds", self.index, "methods", role, *key)

    def error(self, role: str, message: str, *key: str) -> SpecError:
        return SpecError(self.file, self.where(role, *key), f"{self.cfg.kind}: {message}")


def verb_body(ctx: ShapeCtx, role: str, m: MethodIR, body: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """A custom method's fixed request fields, checked against its request schema."""
    schema = ctx.doc.schemas.get(m.request) if m.request else None
    for path in sorted(body):
        node = schema
        for part in path.split("."):
            prop = node.properties.get(part) if node is not None else None
            if prop is None:
                raise ctx.error(role, f"{m.id} takes {m.request or 'no body'}, which has no field {path!r}", "body")
            node = ctx.doc.schemas.get(prop.ref) if prop.ref else None
    return tuple(sorted(body.items()))
