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
        "AI", "API", "CA", "CDN", "DICOM", "DLP", "DNS", "DR", "FHIR", "GCP", "GKE", "GRPC", "HL7", "HMAC", "HTTP",
        "HTTPS", "IAM", "IAP", "ID", "IOT", "IP", "KMS", "LB", "ML", "MTLS", "NAT", "OS", "QA", "SAC", "SQL", "SSH",
        "SSL", "TCP", "TLS", "TPU", "UDP", "URI", "URL", "VM", "VPC", "VPCSC", "VPN",
    }
)
_BY_LOWER = {a.lower(): a for a in ACRONYMS}
# Collections whose singular is the word itself (inflect would say "datum").
_UNCOUNTED = frozenset({"data", "metadata", "settings", "series", "species", "news", "config", "info", "status"})

# Words whose plural is the word itself (Config Connector: dialogflowsecuritysettings).
_SAME_PLURAL = frozenset({"data", "metadata", "settings", "series", "species", "news"})

_WORD_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z0-9]|$|[^A-Za-z0-9])|[A-Z]?[a-z0-9]+|[A-Z]+|[0-9]+")


#: Names a generated class must not take: Python's builtins (ImportError, Exception...).
BUILTIN_NAMES: frozenset[str] = frozenset(n for n in dir(builtins) if n[:1].isupper())


#: Starts the description of an API field whose own name ends in Ref/Refs but
#: holds a plain value (run's secretRef, analytics' filterRef): in our CRDs a
#: ``*Ref`` is a reference object, so the exception is written down where the
#: field is, and the CRD lint and tests accept exactly those.
#: Top-level parents beside projects: collection -> (identity placeholder, spec
#: field, referenced Kind), as Config Connector names them (folderRef -> Folder).
PARENT_FORMS: dict[str, tuple[str, str, str]] = {
    "folders": ("folder", "folderRef", "Folder"),
    "organizations": ("organization", "organizationRef", "Organization"),
    "billingAccounts": ("billingAccount", "billingAccountRef", "BillingAccount"),
}
PARENT_FIELDS = {c: f for c, (_p, f, _k) in PARENT_FORMS.items()}

API_NAMED_REF = "Not a Config Connector reference: the API's own field name."


def is_ref_name(name: str) -> bool:
    """A field name that reads as a Config Connector reference (``networkRef``, ``topicRefs``)."""
    return name.endswith(("Ref", "Refs"))


#: CEL's keywords and reserved words. The API server exposes a property spelled like one
#: under ``__word__`` (CRD validation rules, "Escaping"); ``self.package`` names no field
#: there, and its cost estimate refused ArtifactRegistryTag's CRD.
CEL_RESERVED = frozenset(
    ["true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function", "if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while"]
)


def cel_field(name: str) -> str:
    """A property name as a CEL rule must spell it: reserved words and ``__ . - /`` escaped."""
    if name in CEL_RESERVED:
        return f"__{name}__"
    return name.replace("__", "__underscores__").replace(".", "__dot__").replace("-", "__dash__").replace("/", "__slash__")


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
    """CRD plural: lower-cased Kind with an English plural suffix; none after
    an uncounted word (``dialogflowsecuritysettings``, as Config Connector)."""
    k = kind.lower()
    if words(kind)[-1].lower() in _SAME_PLURAL:
        return k
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
    """One inflect engine. inflect decorates its methods with typeguard's
    ``@typechecked``, which recompiles each one at import: 4.5 s of every
    generation run at 1,045 Kinds, for argument checks our typed callers do not
    need. The import therefore sees a pass-through decorator (what typeguard
    itself does under ``python -O``); typeguard is left as it was."""
    import typeguard

    real = typeguard.typechecked
    typeguard.typechecked = _passthrough
    try:
        import inflect
    finally:
        typeguard.typechecked = real
    return inflect.engine()


def _passthrough(target: Any = None, **_: Any) -> Any:
    """``@typechecked`` and ``@typechecked(...)`` that leave the function as it is."""
    return target if target is not None else (lambda f: f)


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


def kind_name(prefix: str, collection: str, schema: str | None = None) -> str:
    """Config Connector's convention: service prefix + singular resource name
    (``Compute`` + ``targetHttpsProxies`` -> ``ComputeTargetHTTPSProxy``).

    ``schema`` (the get method's response schema) may refine the noun where
    it only adds leading words or casing (``buckets`` read as ``LogBucket``:
    ``LoggingLogBucket``; ``apiproducts`` as ``ApiProduct``: ``ApigeeAPIProduct``)."""
    return prefix + acronymize(resource_noun(collection, schema, prefix))


def _unprefixed(noun: str, prefix: str) -> str:
    """A noun that repeats the whole service name (``vmwareEngineNetworks`` in
    VMware Engine, ``ApigatewayApiConfig``) names the resource by what follows."""
    if prefix and noun.lower().startswith(prefix.lower()) and noun[len(prefix) : len(prefix) + 1].isupper():
        return noun[len(prefix) :]
    return noun


# ``GoogleCloudDialogflowCxV3`` / ``GoogleCloudMlV1__`` / ``V2`` in front of a
# message name: the package and version, not part of the resource's name.
_SCHEMA_PACKAGE = re.compile(r"^(?:Google[A-Za-z0-9]*?)?V\d+(?:[a-z]+\d*)?_*(?=[A-Z])")
_VERSION_WORD = re.compile(r"^[Vv]\d")


def resource_noun(collection: str, schema: str | None = None, prefix: str = "") -> str:
    """The singular resource name in Pascal case: the collection's singular, or
    the schema's message name when it is that singular with better casing or
    one more word in front (``LogBucket`` for ``buckets``), package and version
    prefix removed; a service name (``prefix``) the noun repeats is dropped."""
    base = _unprefixed(pascal(singular(collection)), prefix)
    if schema:
        message = _unprefixed(_SCHEMA_PACKAGE.sub("", schema), prefix)
        extra = words(message[: len(message) - len(base)])
        if message.lower().endswith(base.lower()) and message[:1].isupper() and len(extra) <= 1 and not any(_VERSION_WORD.match(w) for w in extra):
            return message
    return base


# Words of a product name that a short API name leaves out (Backup *and* DR).
_FILLER = frozenset({"and", "for", "of", "the"})


def _spelled(api: str, name: str | None) -> str | None:
    """The run of ``name``'s words that spells ``api`` (filler words skipped; a
    plural API name may end with a singular word: ``billingbudgets`` in
    ``Cloud Billing Budget``), acronyms upper-cased; None when none does."""
    parts = [w for w in re.split(r"[^A-Za-z0-9]+", name or "") if w]
    want = api.lower()
    for i in range(len(parts)):
        run: list[str] = []
        for w in parts[i:]:
            if w.lower() in _FILLER and run:
                continue
            run.append(w)
            joined = "".join(run).lower()
            if joined == want or joined + "s" == want:
                out = [_BY_LOWER.get(x.lower(), x[:1].upper() + x[1:]) for x in run]
                return "".join(out) + ("s" if joined != want else "")
            if not want.startswith(joined):
                break
    return None


def service_prefix(api: str, canonical_name: str | None, title: str | None = None) -> str:
    """The Kind prefix of an API: the words of its canonical name or title that
    spell the API's name (``Secret Manager`` -> ``SecretManager``; ``Cloud Redis``
    for ``redis`` -> ``Redis``; ``Pub/Sub Lite API`` -> ``PubSubLite``), the
    spelling with more capitals winning, acronyms upper-cased. Where that gives
    no word break, a known acronym and a word of those names (``gkebackup`` in
    ``Backup for GKE`` -> ``GKEBackup``); else the initials of the canonical
    name (``Customer Engagement Suite``: ``CES``); else the API name in Pascal case."""
    found = [s for s in (_spelled(api, canonical_name), _spelled(api, title)) if s]
    best = max(found, key=_capitals) if found else None
    if best is None or _capitals(best) < 2:
        words_ = {w.lower() for w in re.split(r"[^A-Za-z0-9]+", f"{canonical_name} {title}") if w}
        best = _around_acronym(api, words_) or best
    if best is not None:
        return best
    initials = "".join(w[0] for w in re.split(r"[^A-Za-z0-9]+", canonical_name or "") if w)
    if len(initials) > 1 and initials.lower() == api.lower():
        return api.upper()
    return _BY_LOWER.get(api.lower(), pascal(api))


def _capitals(name: str) -> int:
    return sum(c.isupper() for c in name)


def _around_acronym(api: str, known: set[str]) -> str | None:
    """``gkebackup`` -> ``GKEBackup`` (``Backup for GKE``): an API name that is a
    known acronym and a word the canonical name or title has."""
    low = api.lower()
    for acronym in sorted(ACRONYMS, key=lambda a: (-len(a), a)):
        a = acronym.lower()
        if low.startswith(a) and low[len(a) :] in known:
            return acronym + low[len(a) :].capitalize()
        if low.endswith(a) and low[: -len(a)] in known:
            return low[: -len(a)].capitalize() + acronym
    return None
