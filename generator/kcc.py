"""Config Connector's Kinds: which of our resources each one is, checked.

``specs/kcc/evidence.yaml`` (written by ``python -m tools.kcc_evidence`` from
Config Connector's repository) says, per Config Connector Kind, its group,
plural and versions, the resource-name templates its code and its recorded
traffic use, and its spec fields. ``specs/kcc/claims.yaml`` says what serves
each Kind: one of our resources (``api resource``), or nothing, with one reason
from a short fixed list.

A claim gives the resource Config Connector's Kind, group, plural and
versions, so its users' manifests apply unchanged. A claim is a statement
about a resource, so it is checked (``check_claims``): the resource must have
a name template of the same shape as one Config Connector uses (the same REST
collection, under the same parents), and its schema must have most of Config
Connector's spec fields. A claim that fails is an error naming both sides.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kccgen.discovery.document import DiscoveryDoc, Resource
from kccgen.discovery.errors import SpecError, from_validation_error, json_path
from kccgen.generator.spec._errors import read_yaml

EVIDENCE_PATH = Path("specs") / "kcc" / "evidence.yaml"
CLAIMS_PATH = Path("specs") / "kcc" / "claims.yaml"

#: Why a Config Connector Kind is not served, as ``none:`` in a claim says it.
REASONS: dict[str, str] = {
    "no-document": "no Discovery document in the pinned package has the resource",
    "alpha-only": "only an alpha or preview Discovery document has the resource",
    "iam": "an IAM policy Kind (issue 29)",
    "shape": "its methods fit no contract shape yet (issue 30)",
    "sub-resource": "managed through its parent's methods or fields (issue 30)",
    "action": "an action on other resources, not a resource of its own (issue 30)",
    "settings": "a singleton settings object",
    "read-only": "the API cannot create it",
    "other-schema": "Config Connector's schema is that of another API version or product",
    "split": "one resource that Config Connector splits into several Kinds (by parent or by a field's value) and we serve as one Kind",
    "alias": "Config Connector's second name for a resource it also serves under another Kind, which is the one we serve",
    "not-configured": "the package ships a Discovery document for it, but no kind file reads that API yet",
    "kcc-only": "no GCP resource: a Config Connector construct",
    "deprecated": "the API is shut down or deprecated",
    "unpaired": "not paired yet: no resource of ours has a name Config Connector uses",
}

# Spec fields every Kind has that say where, not what: not part of the schema comparison.
_BOOKKEEPING = frozenset({"resourceID", "projectRef", "folderRef", "organizationRef", "billingAccountRef", "location", "region", "zone", "parent"})
# Placeholders and collection words that name a location: Config Connector and the
# APIs write regions/ and locations/ for the same thing (Dataproc's policies).
_LOCATION_WORDS = frozenset({"locations", "regions"})


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


class EvidenceName(_Loose):
    template: str
    source: str = Field(alias="from")
    method: str | None = None


class KindEvidence(_Loose):
    group: str
    plural: str
    versions: tuple[str, ...]
    controller: str = ""
    host: str | None = None
    names: tuple[EvidenceName, ...] = ()
    spec: tuple[str, ...] = ()
    refs: tuple[str, ...] = ()
    required: tuple[str, ...] = ()


class Evidence(_Loose):
    kcc_commit: str
    kinds: dict[str, KindEvidence]


@dataclass(frozen=True)
class Claim:
    """Config Connector's ``kind`` is our ``api`` (optionally one document
    ``version`` of it) resource ``resource``."""

    kind: str
    api: str
    resource: str
    version: str | None = None

    def __str__(self) -> str:
        return f"{self.api}{'.' + self.version if self.version else ''} {self.resource}"


@dataclass(frozen=True)
class Unserved:
    kind: str
    reason: str
    note: str = ""


@dataclass(frozen=True)
class Claims:
    served: dict[str, Claim]  # by Config Connector Kind
    unserved: dict[str, Unserved]
    raw: dict[str, Any]
    file: str = str(CLAIMS_PATH)

    def for_api(self, api: str, version: str | None = None) -> dict[str, Claim]:
        """The claims on an API's resources, by resource path (those pinned to
        another document version left out)."""
        return {c.resource: c for c in self.served.values() if c.api == api and (c.version is None or version is None or c.version == version)}


def load_evidence(specs: Path) -> Evidence:
    path = specs / "kcc" / "evidence.yaml"
    disp = str(Path(specs.name) / "kcc" / "evidence.yaml")
    if not path.is_file():
        return Evidence(kcc_commit="", kinds={})
    raw = read_yaml(path, disp)
    try:
        return Evidence.model_validate(raw)
    except ValidationError as e:
        raise from_validation_error(disp, e) from None


def load_claims(specs: Path) -> Claims:
    path = specs / "kcc" / "claims.yaml"
    disp = str(Path(specs.name) / "kcc" / "claims.yaml")
    if not path.is_file():
        return Claims({}, {}, {}, disp)
    raw = read_yaml(path, disp) or {}
    if not isinstance(raw, dict) or set(raw) - {"claims"}:
        raise SpecError(disp, "", "a claims file has one key, claims: {<Config Connector Kind>: '<api> <resource>' | {none: <reason>, note: ...}}")
    entries = raw.get("claims") or {}
    served: dict[str, Claim] = {}
    unserved: dict[str, Unserved] = {}
    for kind, value in sorted(entries.items()):
        where = json_path("claims", kind)
        if isinstance(value, str):
            parts = value.split()
            if len(parts) != 2:
                raise SpecError(disp, where, f"{value!r}: write '<api> <resource path>' (api[.version] projects.topics)")
            api, _, version = parts[0].partition(".")
            served[kind] = Claim(kind, api, parts[1], version or None)
        elif isinstance(value, dict) and set(value) <= {"none", "note"} and "none" in value:
            reason = str(value["none"])
            if reason not in REASONS:
                raise SpecError(disp, json_path("claims", kind, "none"), f"unknown reason {reason!r}; one of {', '.join(REASONS)}")
            unserved[kind] = Unserved(kind, reason, str(value.get("note") or ""))
        else:
            raise SpecError(disp, where, "a claim is '<api> <resource>' or {none: <reason>, note: <text>}")
    return Claims(served, unserved, dict(entries), disp)


# --- name templates --------------------------------------------------------------------------


def _shape(template: str) -> tuple[str, ...] | None:
    """A name template as segments: placeholders ``{}``, location collections one
    word; None for what is no resource name (Terraform import IDs with ``#``)."""
    t = template.strip().lstrip("/")
    if not t or any(c in t for c in "#? ") or "{" not in t or "/" not in t:
        return None  # a bare {id} names nothing in particular
    t = t.split(":", 1)[0] if not t.startswith("{") else re.sub(r"(?<=\}):[A-Za-z]\w*$", "", t)
    out: list[str] = []
    for seg in t.split("/"):
        if "{" in seg or "[" in seg:
            out.append("{}")
        elif seg in _LOCATION_WORDS:
            out.append("locations")
        else:
            out.append(seg)
    return tuple(out)


def name_shapes(ev: KindEvidence) -> list[tuple[str, ...]]:
    """The shapes of Config Connector's name templates for a Kind (the usable ones)."""
    out: list[tuple[str, ...]] = []
    for n in ev.names:
        if n.method is not None:  # a create seen without a request on the resource itself
            continue
        s = _shape(n.template)
        if s is not None and s not in out:
            out.append(s)
    return out


def template_matches(kcc: tuple[str, ...], ours: str) -> bool:
    """Config Connector's name shape ``kcc`` names the resource of our template:
    the same segments, or, where either starts with a placeholder (any parent:
    ``{parent}/storedInfoTypes/{name}``), the same trailing collection path."""
    o = _shape(ours)
    if o is None:
        return False
    if kcc == o:
        return True
    if len(o) > len(kcc) and o[: len(kcc)] == kcc and all(x == "{}" for x in o[len(kcc) :]):
        return True  # ours names more of it (DNS record sets: rrsets/{name}/{type})
    for a, b in ((kcc, o), (o, kcc)):
        if a[0] == "{}" and len(a) >= 3 and len(b) >= len(a) - 1 and b[len(b) - len(a) + 1 :] == a[1:]:
            return True
    return False


# --- checking a claim ----------------------------------------------------------------------

#: Config Connector services (group or host word) that are another API's name here, each
#: with why: a claim must name an API of the Kind's own service.
SERVICE_ALIASES: dict[str, tuple[str, str]] = {
    "vertexai": ("aiplatform", "Vertex AI is the aiplatform API"),
    "tags": ("cloudresourcemanager", "tag keys, values and bindings are Resource Manager v3 resources"),
    "resourcemanager": ("cloudresourcemanager", "Config Connector's resourcemanager group is the Resource Manager API"),
    "kms": ("cloudkms", "Cloud KMS is the cloudkms API"),
    "filestore": ("file", "Filestore is the file API"),
    "bigqueryanalyticshub": ("analyticshub", "BigQuery Analytics Hub is the analyticshub API"),
    "cloudfunctions2": ("cloudfunctions", "Cloud Functions 2nd gen is the cloudfunctions v2 API"),
    "identityplatform": ("identitytoolkit", "Identity Platform is the identitytoolkit API"),
    "dialogflowcx": ("dialogflow", "Dialogflow CX is the dialogflow v3 API"),
    "bigtable": ("bigtableadmin", "Bigtable's instances, tables and profiles are the bigtableadmin API"),
    "sql": ("sqladmin", "Cloud SQL is the sqladmin API"),
    "mlengine": ("ml", "AI Platform (ML Engine) is the ml API"),
    "cloudids": ("ids", "Cloud IDS is the ids API"),
    "grafeas": ("containeranalysis", "Grafeas notes are Container Analysis notes"),
    "colab": ("aiplatform", "Colab Enterprise runtime templates are aiplatform resources"),
    "cloudtalentsolution": ("jobs", "Cloud Talent Solution is the jobs API"),
    "clouddms": ("datamigration", "Database Migration Service is the datamigration API"),
}


def services_of(ev: KindEvidence) -> set[str]:
    """The API names a Config Connector Kind's service may go by: its group's
    service, its host's first word (without a region prefix), and their aliases."""
    words = {service_of(ev.group)}
    if ev.host:
        words.add(ev.host.split(".")[0].rsplit("-", 1)[-1])
    return words | {SERVICE_ALIASES[w][0] for w in words if w in SERVICE_ALIASES}


def _norm_field(name: str) -> str:
    """A field name as both sides may spell it: ``kmsKeyRef`` and ``kmsKeyName``, ``networkRef``
    and ``network``, ``bootDiskSizeGB`` and ``bootDiskSizeGb``."""
    n = name.removesuffix("Refs").removesuffix("Ref").replace("_", "").lower()
    for suffix in ("name", "names", "id", "ids", "uri", "url"):
        if n.endswith(suffix) and len(n) > len(suffix):
            n = n[: -len(suffix)]
            break
    if n.endswith("ies"):
        return n[:-3] + "y"
    return n.removesuffix("s")


def schema_overlap(kcc_fields: Iterable[str], ours: Iterable[str]) -> tuple[float, list[str]]:
    """The share of Config Connector's spec fields (where-fields aside) that ours
    has under any spelling, and the ones it lacks."""
    want = [f for f in kcc_fields if f not in _BOOKKEEPING]
    have = {_norm_field(f) for f in ours}
    missing = [f for f in want if _norm_field(f) not in have]
    return (1.0 - len(missing) / len(want) if want else 1.0), missing


#: Below this share of Config Connector's spec fields the schemas are not the same resource's.
MIN_OVERLAP = 0.5


@dataclass(frozen=True)
class Subject:
    """What a claim is checked against: one Kind of ours."""

    kind: str
    doc_key: str
    resource: str
    templates: tuple[str, ...]  # its names in every form (identity, REST, parent forms, other scopes)
    fields: tuple[str, ...]  # top-level API fields and the KRM names it accepts
    host: str


def check_claim(claim: Claim, ev: KindEvidence | None, s: Subject) -> str | None:
    """Why ``claim`` does not hold for ``s``; None when it does."""
    side = f"Config Connector's {claim.kind} is claimed to be {s.doc_key} {s.resource} ({s.kind}: {s.templates[0]})"
    if ev is None:
        return f"{side}, but the evidence file has no {claim.kind}"
    services = services_of(ev)
    if claim.api not in services and s.host.split(".")[0] not in services:
        return f"{side}, an API of another service (Config Connector's: {', '.join(sorted(services))})"
    shapes = name_shapes(ev)
    if shapes and not any(template_matches(k, t) for k in shapes for t in s.templates):
        theirs = ", ".join(sorted({n.template for n in ev.names if _shape(n.template) in shapes}))
        return f"{side}, whose names are not Config Connector's ({theirs}): another REST collection or parent"
    share, missing = schema_overlap(ev.spec, s.fields)
    if share < MIN_OVERLAP:
        return f"{side}, whose schema lacks {len(missing)} of Config Connector's spec fields ({', '.join(missing[:8])}{', ...' if len(missing) > 8 else ''}): another schema"
    return None


def api_fields(doc: DiscoveryDoc, resource: Resource, schema: str) -> tuple[str, ...]:
    """What a resource's create takes, by name, two levels deep: the schema's fields
    and those of its object fields (Config Connector often flattens one level:
    BigQueryJob's ``query`` is the API's ``configuration.query``), the create
    request's other fields (a wrapped create's ``clusters``) and its query parameters."""
    out: set[str] = set()

    def fields_of(name: str | None, depth: int) -> None:
        node = doc.schemas.get(name) if name else None
        if node is None:
            return
        for pname, prop in node.properties.items():
            out.add(pname)
            if depth > 1:
                fields_of(prop.ref or (prop.items.ref if prop.items is not None else None), depth - 1)

    fields_of(schema, 2)
    create = resource.methods.get("create") or resource.methods.get("insert")
    if create is not None:
        if create.request is not None and create.request.ref != schema:
            fields_of(create.request.ref, 1)
        out.update(n for n, p in create.parameters.items() if p.location == "query")
    return tuple(sorted(out))


def parent_form_templates(template: str, forms: Iterable[str]) -> list[str]:
    """A template under each other top-level parent (``folders/{folder}/...`` for ``projects/{project}/...``)."""
    head = re.match(r"^projects/\{[^}]+\}/", template)
    if head is None:
        return []
    word = {"folders": "folder", "organizations": "organization", "billingAccounts": "billingAccount"}
    return [f"{f}/{{{word.get(f, f)}}}/{template[head.end():]}" for f in forms]


def check_claims(claims: Claims, evidence: Evidence, subjects: Mapping[str, Subject]) -> list[SpecError]:
    """Every claim on a generated Kind (``subjects`` by Config Connector Kind), checked."""
    out = []
    for kind, s in sorted(subjects.items()):
        why = check_claim(claims.served[kind], evidence.kinds.get(kind), s)
        if why is not None:
            out.append(SpecError(claims.file, json_path("claims", kind), why))
    for kind in sorted(set(claims.served) | set(claims.unserved)):
        if kind not in evidence.kinds:
            out.append(SpecError(claims.file, json_path("claims", kind), f"{kind} is not a Config Connector Kind (not in {EVIDENCE_PATH})"))
    return out


def service_of(group: str) -> str:
    """``bigtable.cnrm.cloud.google.com`` -> ``bigtable``."""
    return group.split(".", 1)[0]
