"""The one place that owns naming rules (resource-path placeholders: kccgen.discovery.paths).

Kind names, file names, Python identifiers and class names derived from
schema paths are all computed here, so acronyms (KMS, DNS, IAM...) and
pluralisation are decided once.
"""

from __future__ import annotations

import builtins
import functools
import keyword
import re
from typing import Any

# Acronyms kept upper-case in Kind names, as Config Connector writes them
# (ComputeSSLCertificate, ComputeTargetHTTPSProxy, DLPDeidentifyTemplate).
ACRONYMS: frozenset[str] = frozenset(
    {
        "AI", "API", "CA", "CDN", "DICOM", "DLP", "DNS", "DR", "FHIR", "GCP", "GKE", "GRPC", "HTTP", "HTTPS",
        "IAM", "IAP", "ID", "IP", "KMS", "ML", "MTLS", "NAT", "OS", "QA", "SQL", "SSH", "SSL", "TCP", "TLS",
        "TPU", "UDP", "URI", "URL", "VM", "VPC", "VPCSC", "VPN",
    }
)
_BY_LOWER = {a.lower(): a for a in ACRONYMS}
# Collections whose singular is the word itself (inflect would say "datum").
_UNCOUNTED = frozenset({"data", "metadata", "settings", "series", "species", "news", "config", "info", "status"})

_WORD_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z0-9]|$|[^A-Za-z0-9])|[A-Z]?[a-z0-9]+|[A-Z]+|[0-9]+")


#: Names a generated class must not take: Python's builtins (ImportError, Exception...).
BUILTIN_NAMES: frozenset[str] = frozenset(n for n in dir(builtins) if n[:1].isupper())


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


@functools.lru_cache(maxsize=1)
def _inflect() -> Any:
    """One inflect engine (building one costs milliseconds; importing, seconds)."""
    import inflect

    return inflect.engine()


@functools.cache
def singular(word: str) -> str:
    """``keyRings`` -> ``keyRing``, ``policies`` -> ``policy`` (inflect, with the
    words Google uses as uncounted: ``data``, ``metadata``, ``settings``)."""
    head, last = re.match(r"(.*?)([A-Z]?[a-z0-9]*)$", word).groups()  # type: ignore[union-attr]
    if not last or last.lower() in _UNCOUNTED:
        return word
    one = _inflect().singular_noun(last)
    return head + (one if isinstance(one, str) and one else last)


def acronymize(name: str) -> str:
    """Upper-case the known acronyms among a Pascal name's words: ``SslCertificate`` -> ``SSLCertificate``."""
    return "".join(_BY_LOWER.get(w.lower(), w[:1].upper() + w[1:]) for w in words(name))


def kind_name(prefix: str, collection: str) -> str:
    """Config Connector's convention: service prefix + singular resource name
    (``Compute`` + ``targetHttpsProxies`` -> ``ComputeTargetHTTPSProxy``)."""
    return prefix + acronymize(pascal(singular(collection)))


def service_prefix(api: str, canonical_name: str | None) -> str:
    """The Kind prefix of an API: the words of its canonical name that spell the
    API's name (``Secret Manager`` -> ``SecretManager``; ``Cloud Redis`` for
    ``redis`` -> ``Redis``), acronyms upper-cased; else the API name in Pascal case."""
    parts = [w for w in re.split(r"[^A-Za-z0-9]+", canonical_name or "") if w]
    for i in range(len(parts)):
        for j in range(len(parts), i, -1):
            if "".join(parts[i:j]).lower() == api.lower():
                return "".join(_BY_LOWER.get(w.lower(), w[:1].upper() + w[1:]) for w in parts[i:j])
    return _BY_LOWER.get(api.lower(), pascal(api))
