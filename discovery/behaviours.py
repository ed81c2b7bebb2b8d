"""Classify Discovery field behaviours from prose, with provenance.

Discovery carries google.api.field_behavior only as text: descriptions start
with ``Output only.``, ``[Output Only]`` (compute), ``Immutable.``,
``Required.``, ``Optional.``, ``Input only.``, ``Identifier.``, sometimes in
combination ("Optional. Input only. Immutable."), and older APIs say
``(output only)`` mid-sentence (dns). ``readOnly: true`` is a fact of its own.
"""

from __future__ import annotations

import re

from kccgen.contract import Behaviour, Fact

__all__ = ["Behaviour", "Fact", "behaviours", "classify", "service_assigned_id", "without_markers"]


# Leading markers: "Output only.", "[Output Only]", "Output-only.", "Required:"...
_LEADING = [
    (Behaviour.OUTPUT_ONLY, r"output[ -]only"),
    (Behaviour.INPUT_ONLY, r"input[ -]only"),
    (Behaviour.IMMUTABLE, r"immutable"),
    (Behaviour.REQUIRED, r"required"),
    (Behaviour.OPTIONAL, r"optional"),
    (Behaviour.IDENTIFIER, r"identifier"),
]
_TOKEN_RE = re.compile(
    r"^\s*(?:\[(?P<b>[A-Za-z -]+)\]|(?P<w>[A-Za-z -]+?)(?:\.|:|,)(?=\s|$))",
)
# Markers that are not leading: a standalone marker sentence later in the
# text ("... full URL. Required."), a marker opening a later paragraph,
# compute's "@InputOnly" tags and older phrasings.
# compute hard-wraps descriptions, so a lone newline is not a sentence start;
# a blank line (new paragraph) is.
_SENTENCE_START = r"(?:^|[.;!?]\s+|\n\s*\n\s*)"
_INLINE = [
    (Behaviour.OUTPUT_ONLY, re.compile(r"\((?:output[ -]only|read[ -]only)\)", re.IGNORECASE)),
    (Behaviour.OUTPUT_ONLY, re.compile(_SENTENCE_START + r"\[?output[ -]only[.\]]", re.IGNORECASE)),
    (Behaviour.OUTPUT_ONLY, re.compile(r"@OutputOnly\b")),
    (Behaviour.OUTPUT_ONLY, re.compile(r"set\s+only\s+in\s+responses\s+from\s+the\s+server", re.IGNORECASE)),
    (Behaviour.INPUT_ONLY, re.compile(_SENTENCE_START + r"\[?input[ -]only[.\]]", re.IGNORECASE)),
    (Behaviour.INPUT_ONLY, re.compile(r"@InputOnly\b")),
    (Behaviour.IMMUTABLE, re.compile(_SENTENCE_START + r"immutable(?: after creation(?: time)?)?\.(?=\s|$)", re.IGNORECASE)),
    (Behaviour.IMMUTABLE, re.compile(_SENTENCE_START + r"this field is immutable\b", re.IGNORECASE)),
    (Behaviour.REQUIRED, re.compile(_SENTENCE_START + r"required\.(?=\s|$)", re.IGNORECASE)),
    (Behaviour.OPTIONAL, re.compile(r"\n\s*\n\s*optional\.(?=\s|$)", re.IGNORECASE)),
]
# Prose that older APIs (compute, dns, cloudkms) use for create-only fields.
# Whitespace is flexible because compute hard-wraps its descriptions; "can be
# both set at resource creation time and updated" must not match.
_W = r"\s+"
_CREATE_ONLY = [
    re.compile(r"can" + _W + r"be" + _W + r"set" + _W + r"only" + _W + r"at" + _W + r"(?:resource" + _W + r")?creation" + _W + r"time", re.IGNORECASE),
    re.compile(r"(?:can|may)" + _W + r"only" + _W + r"be" + _W + r"(?:set|specified)" + _W + r"(?:at|during|on)" + _W + r"creation\b(?!" + _W + r"or)", re.IGNORECASE),
    re.compile(r"only" + _W + r"specified" + _W + r"at" + _W + r"creation" + _W + r"time", re.IGNORECASE),
    re.compile(r"must" + _W + r"be" + _W + r"set" + _W + r"on" + _W + r"creation" + _W + r"and" + _W + r"cannot" + _W + r"be" + _W + r"changed", re.IGNORECASE),
    re.compile(r"once" + _W + r"(?:the" + _W + r"value" + _W + r"is" + _W + r")?set," + _W + r"it" + _W + r"cannot" + _W + r"be" + _W + r"(?:changed|updated)", re.IGNORECASE),
    re.compile(r"set" + _W + r"at" + _W + r"creation" + _W + r"and" + _W + r"cannot" + _W + r"be" + _W + r"updated", re.IGNORECASE),
    re.compile(r"specified" + _W + r"at" + _W + r"creation" + _W + r"time," + _W + r"and" + _W + r"then" + _W + r"immutable", re.IGNORECASE),
    re.compile(r"^the" + _W + r"immutable\b", re.IGNORECASE),
]

# Leading tags that carry no behaviour but may precede one ("[DEPRECATED] ...").
_SKIP_TOKENS = re.compile(r"deprecated", re.IGNORECASE)


def without_markers(text: str) -> str:
    """``text`` without its leading behaviour markers (``[Output Only]``,
    ``Immutable.``): for a field whose behaviours a kind config overrides, so
    the description does not state what is no longer true."""
    rest = text
    for _beh, token in _leading_tokens(text):
        rest = rest.lstrip()
        if rest.startswith(token):
            rest = rest[len(token) :]
    return rest.lstrip()


def _leading_tokens(text: str) -> list[tuple[Behaviour, str]]:
    out: list[tuple[Behaviour, str]] = []
    rest = text
    while True:
        m = _TOKEN_RE.match(rest)
        if not m:
            return out
        token = (m.group("b") or m.group("w") or "").strip()
        hit = None
        for beh, pat in _LEADING:
            if re.fullmatch(pat, token, re.IGNORECASE):
                hit = beh
                break
        if hit is None:
            if _SKIP_TOKENS.fullmatch(token):
                rest = rest[m.end() :]
                continue
            return out
        out.append((hit, m.group(0).strip()))
        rest = rest[m.end() :]


def classify(description: str | None, read_only: bool = False) -> tuple[Fact, ...]:
    """Behaviours stated by a Discovery description and ``readOnly`` flag."""
    facts: set[Fact] = set()
    text = description or ""
    for beh, phrase in _leading_tokens(text):
        facts.add(Fact(beh, f"description:{phrase!r}"))
    seen = {f.behaviour for f in facts}
    for beh, rx in _INLINE:
        if beh in seen:
            continue
        m = rx.search(text)
        if m:
            facts.add(Fact(beh, f"description:{m.group(0).strip(' .;!?[]' + chr(10))!r}"))
            seen.add(beh)
    if Behaviour.IMMUTABLE not in seen:
        for rx in _CREATE_ONLY:
            m = rx.search(text)
            if m:
                facts.add(Fact(Behaviour.IMMUTABLE, f"description:{' '.join(m.group(0).split())!r}"))
                break
    if read_only:
        facts.add(Fact(Behaviour.OUTPUT_ONLY, "readOnly"))
    return tuple(sorted(facts))


def behaviours(facts: tuple[Fact, ...]) -> frozenset[Behaviour]:
    return frozenset(f.behaviour for f in facts)


# Prose saying the service picks the ID a field holds: monitoring's
# "[ALERT_POLICY_ID] is assigned by Cloud Monitoring", "automatically assigned
# by the server", "system-assigned", "server-generated", "auto generated by the
# service"; but not classroom's "generated by the user".
_SERVICE_ID = re.compile(
    r"\bis assigned by\b|\bautomatically assigned by the server\b|\bsystem[- ]assigned\b|\bserver-assigned\b"
    # contentwarehouse's Document.name: "The name is ignored when creating a document."
    r"|\bis ignored when creating\b"
    # people's ContactGroup.resourceName: "The resource name for the contact group, assigned by the server."
    r"|\bassigned by the server\b"
    r"|\bgenerated\b(?!\s+by\s+(?:the\s+)?(?:user|client|caller)\b)",
    re.IGNORECASE,
)


def service_assigned_id(description: str | None, read_only: bool = False) -> str:
    """Evidence that the service, not the client, picks the ID a resource's
    name field holds: the field is output only (a client cannot send it), or
    its prose says the service assigns or generates it. "" when the client names it.

    "Optionally caller-specified in CreateJob, after which it becomes output
    only" (scheduler) is the client's: only a leading or sentence-opening
    "Output only." counts (see :func:`classify`).
    """
    for f in classify(description, read_only):
        if f.behaviour is Behaviour.OUTPUT_ONLY:
            return f.source
    m = _SERVICE_ID.search(description or "")
    return f"description:{m.group(0)!r}" if m else ""
