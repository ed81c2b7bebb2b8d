"""Which long-running-operation style a method answers with, read off its response schema.

An operation is recognised by its shape, not by the API's name: google.longrunning
(done/response/metadata), compute's Operation (targetLink/progress), GKE's (compute's
look with a google.rpc.Status error) and Cloud DNS's (zoneContext). The generator and mockgcp both read the document this way; what
they infer from it about a method's request stays each one's own.
"""

from __future__ import annotations

from kccgen.contract import Lro
from kccgen.discovery.document import DiscoveryDoc, Method


def operation_style(doc: DiscoveryDoc, response: str | None) -> Lro:
    """The style of an answer with schema ``response`` (None: no body)."""
    if response is None:
        return Lro.NONE
    props = doc.schemas[response].properties
    if {"done", "response", "metadata"} <= set(props):
        return Lro.GOOGLE_LONGRUNNING
    if "targetLink" in props and "progress" in props:
        # GKE's Operation has compute's look, but its error is a google.rpc.Status
        # and it lives under the resource's location (projects.locations.operations)
        err = props.get("error")
        status = doc.schemas.get(err.ref) if err is not None and err.ref else None
        if status is not None and {"code", "message"} <= set(status.properties):
            return Lro.LOCATED
        return Lro.COMPUTE
    if "zoneContext" in props:
        return Lro.DNS
    return Lro.NONE


def method_operation_style(doc: DiscoveryDoc, method: Method) -> Lro:
    return operation_style(doc, method.response.ref if method.response else None)
