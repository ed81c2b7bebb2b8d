"""The neutral ground floor: Discovery documents, their schemas and their paths.

The generator, mockgcp and the tools stand on this package and never on each
other. It reads what a document says (types, field-behaviour prose, method
paths and parameter patterns); what a method *means* for a Kind (create by
PUT, update mask in the body...) is the generator's inference, and mockgcp
works it out again on its own, so the two can disagree and a test can see it.
"""

from kccgen.discovery.behaviours import Behaviour, Fact, classify
from kccgen.discovery.document import (
    DiscoveryDoc,
    JsonSchema,
    Method,
    Parameter,
    Resource,
    iter_resources,
    load_discovery,
)
from kccgen.discovery.errors import SpecError, did_you_mean, json_path

__all__ = [
    "Behaviour",
    "DiscoveryDoc",
    "Fact",
    "JsonSchema",
    "Method",
    "Parameter",
    "Resource",
    "SpecError",
    "classify",
    "did_you_mean",
    "iter_resources",
    "json_path",
    "load_discovery",
]
