"""The one place that owns naming rules (resource-path placeholders: kccgen.discovery.paths).

Kind names, file names, Python identifiers and class names derived from
schema paths are all computed here, so acronyms (KMS, DNS, IAM...) and
pluralisation are decided once.
"""

from __future__ import annotations

import keyword
import re

# Acronyms kept upper-case in Kind and class names, as Config Connector does.
ACRONYMS: frozenset[str] = frozenset(
    {"KMS", "DNS", "IAM", "API", "SQL", "VPC", "TLS", "SSL", "URL", "URI", "IP", "ID", "CA", "GKE"}
)

_WORD_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z0-9]|$|[^A-Za-z0-9])|[A-Z]?[a-z0-9]+|[A-Z]+|[0-9]+")


def words(name: str) -> list[str]:
    """Split camelCase, PascalCase, snake_case and kebab-case into words."""
    return _WORD_RE.findall(name)


def pascal(name: str) -> str:
    """``messageStoragePolicy`` -> ``MessageStoragePolicy`` (keeps inner capitals)."""
    parts = re.split(r"[^A-Za-z0-9]+", name)
    return "".join(p[:1].upper() + p[1:] for p in parts if p)


def snake(name: str) -> str:
    """``kmsKeyName`` -> ``kms_key_name``; a valid, non-keyword identifier."""
    s = "_".join(w.lower() for w in words(name)) or "field"
    if s[0].isdigit():
        s = "f_" + s
    if keyword.iskeyword(s):
        s += "_"
    return s


def lower_kind(kind: str) -> str:
    """Files are named after the lower-cased Kind (``pubsubtopic``), as in KCC."""
    return kind.lower()


def plural_kind(kind: str) -> str:
    """CRD plural: lower-cased Kind with an English plural suffix."""
    k = kind.lower()
    if k.endswith("y") and not k.endswith(("ay", "ey", "oy", "uy")):
        return k[:-1] + "ies"
    if k.endswith(("s", "x", "z", "ch", "sh")):
        return k + "es"
    return k + "s"


def service_short(group: str) -> str:
    """``pubsub.cnrm.cloud.google.com`` -> ``pubsub``."""
    return group.split(".", 1)[0]


def class_from_path(*parts: str) -> str:
    """Stable class name after a schema path: ``("Topic", "state")`` -> ``TopicState``.

    Array items contribute nothing (``rules[]`` -> ``Rules``): the element type
    is named after the field that holds it.
    """
    return "".join(pascal(p.removesuffix("[]")) for p in parts if p and p != "[]")


def api_module(api: str, api_version: str) -> str:
    """Module holding a service's shared API payload models: ``pubsub_v1_api``."""
    return f"{snake(api)}_{snake(api_version)}_api"


def kind_types_module(kind: str) -> str:
    return f"{lower_kind(kind)}_types"
