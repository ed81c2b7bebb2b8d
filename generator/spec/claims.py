"""Config Connector's Kinds as specs: the evidence extract and the claims.

``specs/kcc/evidence.yaml`` (written by ``python -m tools.kcc_evidence``) holds
what Config Connector's repository says of each of its Kinds; ``specs/kcc/
claims.yaml`` (reviewed by a person, drafted by ``python -m tools.kcc_claims``)
says what serves each Kind. ``kccgen.generator.kcc`` checks the claims.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

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
    # every reference field under spec, nested too ("spec.a[].bRef", "*" a map value) -> the
    # Config Connector Kind it names, "" when its descriptions name none or several; (path, Kind)
    # pairs in the model, so that the evidence stays hashable
    ref_paths: tuple[tuple[str, str], ...] = ()
    required: tuple[str, ...] = ()
    sensitive: tuple[str, ...] = ()  # spec paths of {value | valueFrom.secretKeyRef} fields
    # every spec path a Config Connector user can write (relative to spec; [] list items,
    # * map values; a reference is a leaf): the spellings kccgen serves and parity counts
    fields: tuple[str, ...] = ()


    @field_validator("ref_paths", mode="before")
    @classmethod
    def _pairs(cls, v: Any) -> Any:
        return tuple(sorted(v.items())) if isinstance(v, dict) else v


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
    # a Kind that reads the resource through this custom method and does not
    # own it (ServiceIdentity: serviceusage services.generateServiceIdentity,
    # beside Service, which owns services)
    via: str | None = None

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
        return {c.resource: c for c in self.served.values() if c.api == api and c.via is None and (c.version is None or version is None or c.version == version)}


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
        elif isinstance(value, dict) and set(value) <= {"claim", "via", "note"} and {"claim", "via"} <= set(value):
            parts = str(value["claim"]).split()
            if len(parts) != 2:
                raise SpecError(disp, json_path("claims", kind, "claim"), f"{value['claim']!r}: write '<api> <resource path>'")
            api, _, version = parts[0].partition(".")
            served[kind] = Claim(kind, api, parts[1], version or None, str(value["via"]))
        elif isinstance(value, dict) and set(value) <= {"none", "note"} and "none" in value:
            reason = str(value["none"])
            if reason not in REASONS:
                raise SpecError(disp, json_path("claims", kind, "none"), f"unknown reason {reason!r}; one of {', '.join(REASONS)}")
            unserved[kind] = Unserved(kind, reason, str(value.get("note") or ""))
        else:
            raise SpecError(disp, where, "a claim is '<api> <resource>', {claim: '<api> <resource>', via: <custom method>, note: <text>} or {none: <reason>, note: <text>}")
    return Claims(served, unserved, dict(entries), disp)
