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

from kccgen.discovery.document import DiscoveryDoc, Resource
from kccgen.discovery.errors import SpecError, json_path
from kccgen.generator.spec.claims import (
    CLAIMS_PATH,
    EVIDENCE_PATH,
    REASONS,
    Claim,
    Claims,
    Evidence,
    KindEvidence,
    Unserved,
    load_claims,
    load_evidence,
)

# Spec fields every Kind has that say where, not what: not part of the schema comparison.
# deletionPolicy: what deleting the object does (Config Connector's ABANDON), no field of the resource
_BOOKKEEPING = frozenset({"resourceID", "projectRef", "folderRef", "organizationRef", "billingAccountRef", "location", "region", "zone", "parent", "deletionPolicy"})
# Placeholders and collection words that name a location: Config Connector and the
# APIs write regions/ and locations/ for the same thing (Dataproc's policies).
_LOCATION_WORDS = frozenset({"locations", "regions"})


# --- name templates --------------------------------------------------------------------------


def _shape(template: str) -> tuple[str, ...] | None:
    """A name template as segments: placeholders ``{}``, location collections one
    word; None for what is no resource name (Terraform import IDs with ``#``)."""
    t = template.strip().lstrip("/")
    if not t or any(c in t for c in "#? ") or "{" not in t or "/" not in t:
        return None  # a bare {id} names nothing in particular
    t = t.split(":", 1)[0] if not t.startswith("{") else re.sub(r"(?<=\}):[A-Za-z]\w*$", "", t)
    # scope words are no collection: compute's firewall policies route under
    # locations/global/ (which their names leave out), Deployment Manager's under
    # global/, API Gateway's configs fix locations/global where the name varies
    t = t.removeprefix("locations/global/")
    t = re.sub(r"^v\d+(?:[a-z]+\d*)*/", "", t)  # an API version left on a REST path
    out: list[str] = []
    for seg in t.split("/"):
        if "{" in seg or "[" in seg or (seg == "global" and out[-1:] == ["locations"]):
            out.append("{}")
        elif seg == "global":
            continue
        elif seg in _LOCATION_WORDS:
            out.append("locations")
        else:
            out.append(seg.lower())  # Config Connector lowercases some (backupvaults, nodegroups)
    if all(x == "{}" for x in out):
        return None  # a Terraform import ID ({bucket}/{entity}): no collection named
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
        # any parent ({parent}/..., an any-parent REST path {v1}/{v1Id1}/...): the rest names it
        rest = a
        while rest and rest[0] == "{}":
            rest = rest[1:]
        if rest != a and len(rest) >= 2 and len(b) > len(rest) and b[len(b) - len(rest) :] == rest:
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
    "devicestreaming": ("testing", "Device Streaming sessions are testing v1 projects.deviceSessions"),
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


def check_claim(claim: Claim, ev: KindEvidence | None, s: Subject, schema: bool = True) -> str | None:
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
    if schema and share < MIN_OVERLAP:
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


def resource_subject(kind: str, doc: DiscoveryDoc, dotted: str, resource: Resource) -> Subject | None:
    """What a claim on a resource we do not generate is checked against: its
    name and its fields. The name is what its get method answers at, else its
    other methods' paths (a list or create names the collection: plus the ID);
    None when it has no methods at all."""
    from kccgen.discovery.paths import rest_template
    from kccgen.generator.ir.identity import rest_of

    get = resource.methods.get("get")
    templates: list[str] = []
    schema = ""
    if get is not None and get.response is not None and get.response.ref is not None:
        templates.append(rest_of(get)[0])
        schema = get.response.ref
    for name, m in sorted(resource.methods.items()):
        path = rest_template(m.flat_path or m.path).split(":", 1)[0]
        if name in ("list", "create", "insert"):
            path += "/{" + dotted.rsplit(".", 1)[-1] + "}"
        if path and path not in templates:
            templates.append(path)
    if not templates:
        return None
    fields = (*(api_fields(doc, resource, schema) if schema else ()), *(p for t in templates for p in re.findall(r"\{(\w+)\}", t)))
    return Subject(kind or "(not generated)", doc.key, dotted, tuple(templates), fields, doc.host)


def check_claims(claims: Claims, evidence: Evidence, subjects: Mapping[str, Subject], unbuilt: Mapping[str, Subject | str]) -> list[SpecError]:
    """Every claim checked: those on a generated Kind (``subjects``) fully; those
    on a resource we do not generate (``unbuilt``: its Subject, or why it cannot
    be found) by service and name only (its schema may be why it is not built)."""
    out = []
    for kind, s in sorted(subjects.items()):
        why = check_claim(claims.served[kind], evidence.kinds.get(kind), s)
        if why is not None:
            out.append(SpecError(claims.file, json_path("claims", kind), why))
    for kind, u in sorted(unbuilt.items()):
        if isinstance(u, str):
            out.append(SpecError(claims.file, json_path("claims", kind), u))
            continue
        why = check_claim(claims.served[kind], evidence.kinds.get(kind), u, schema=False)
        if why is not None:
            out.append(SpecError(claims.file, json_path("claims", kind), why))
    by_resource: dict[str, list[str]] = {}
    for kind, c in claims.served.items():
        if c.via is None:  # a Kind that reads the resource through a custom method shares it
            by_resource.setdefault(f"{c.api} {c.resource}", []).append(kind)
    for res, kinds in sorted(by_resource.items()):
        versions = [claims.served[k].version for k in kinds]
        if None not in versions and len(set(versions)) == len(versions):
            continue  # one resource path in documents of other schemas (cloudfunctions v1 and v2)
        if len(kinds) > 1:
            out.append(SpecError(claims.file, json_path("claims", sorted(kinds)[1]), f"{' and '.join(sorted(kinds))} all claim {res}: one resource, one Kind (give the others none: alias or split)"))
    for kind in sorted(set(claims.served) | set(claims.unserved)):
        if kind not in evidence.kinds:
            out.append(SpecError(claims.file, json_path("claims", kind), f"{kind} is not a Config Connector Kind (not in {EVIDENCE_PATH})"))
    return out


def service_of(group: str) -> str:
    """``bigtable.cnrm.cloud.google.com`` -> ``bigtable``."""
    return group.split(".", 1)[0]


__all__ = [
    "CLAIMS_PATH",
    "EVIDENCE_PATH",
    "MIN_OVERLAP",
    "REASONS",
    "Claim",
    "Claims",
    "Evidence",
    "KindEvidence",
    "Subject",
    "Unserved",
    "api_fields",
    "check_claim",
    "check_claims",
    "load_claims",
    "load_evidence",
    "name_shapes",
    "parent_form_templates",
    "schema_overlap",
    "service_of",
    "services_of",
    "template_matches",
]
