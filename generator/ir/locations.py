"""Stage 9: Config Connector's ``spec.location`` for a Kind over several scopes.

Config Connector serves one ComputeAddress, regional or global by
``spec.location``; the API has two collections, which kccgen generates as two
Kinds (ComputeAddress, ComputeGlobalAddress). A kind file's ``locations:``
entry joins them: this stage adds the ``location`` property to the Kind that
keeps Config Connector's name, makes its own region/zone field optional (one of
the two names it), and records which generated Kind serves each other scope.
The variants were checked against their templates when the targets were built
(``build._variants``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kccgen.contract import Locations, template_scope
from kccgen.discovery.behaviours import Behaviour, Fact
from kccgen.discovery.errors import SpecError, json_path
from kccgen.generator.ir.model import FieldIR, Identity, ModelSet, MutabilityIR, ObjectIR, TypeIR
from kccgen.generator.ir.mutability import field_type, type_label
from kccgen.generator.spec.kinds import LocationsConfig


@dataclass(frozen=True)
class Located:
    spec: ObjectIR
    models: ModelSet
    locations: Locations | None
    mutability: tuple[MutabilityIR, ...]


def _describe(kind: str, scope: str, param: str, variants: tuple[tuple[str, str], ...], reason: str) -> str:
    names = {"global": "`global`", "region": "a region (us-central1)", "zone": "a zone (us-central1-a)"}
    served = [f"{names[scope]}: this Kind" + (f" (the same as spec.{param})" if param else "")]
    served += [f"{names[s]}: reconciled as a {k}" for s, k in variants]
    one = f" Set it or spec.{param}, not both." if param else ""
    return f"Config Connector's location of the {kind}: " + "; ".join(served) + f". Immutable.{one} {reason}"


def build_locations(
    kind: str,
    file: str,
    cfg: LocationsConfig | None,
    identity: Identity,
    variants: tuple[tuple[str, str], ...],
    spec: ObjectIR,
    models: ModelSet,
    mutability: tuple[MutabilityIR, ...],
) -> Located:
    """The spec with ``location`` added, its mutability row (identity, like the
    region or zone it names), and the runtime's Locations; unchanged without an entry."""
    if cfg is None or kind not in cfg.kinds:
        return Located(spec, models, None, mutability)
    where = json_path("locations", "kinds", kind)
    scope, param = template_scope(identity.template)
    field = ""
    if param:
        p = next((p for p in identity.params if p.name == param), None)
        if p is None or p.covered_by is not None or p.ref_kind:
            raise SpecError(file, where, f"{kind}: {{{param}}} of {identity.template} is not a plain spec field that spec.{cfg.field} could fill")
        field = p.krm_field
    if any(f.name == cfg.field for f in spec.fields):
        raise SpecError(file, where, f"{kind}: spec.{cfg.field} is already a field of the Kind")
    source = f"{file}#{where}"
    loc = FieldIR(cfg.field, TypeIR("string"), _describe(kind, scope, field, variants, cfg.reason), (), source)
    fields = tuple(replace(f, required=False) if f.name == field else f for f in spec.fields)
    new_spec = replace(spec, fields=(*fields, loc))
    objects = tuple(new_spec if o.name == spec.name else o for o in models.objects)
    # The region or zone field is no longer required on its own: location may name it.
    rows = [_optional(r) if r.path == f"spec.{field}" else r for r in mutability]
    fact = Fact(Behaviour.IMMUTABLE, "identity")  # as the region or zone it names
    last_spec = max((i for i, r in enumerate(rows) if r.path.startswith("spec.")), default=-1)
    rows.insert(
        last_spec + 1,
        MutabilityIR(
            path=f"spec.{cfg.field}",
            api_path=None,
            type=type_label(loc.type),
            field_type=field_type(loc.type),
            behaviours=(Behaviour.IMMUTABLE.value,),
            facts=(fact,),
            identity=True,
            updatable=False,
            updatable_source=f"identity ({identity.template}{''.join(f' or {k}' for _, k in variants)})",
            readable=False,
            readable_source="KRM-only field: not part of the API resource",
        ),
    )
    located = Locations(cfg.field, scope, field, variants)
    return Located(new_spec, ModelSet(objects, models.enums), located, tuple(rows))


def _optional(row: MutabilityIR) -> MutabilityIR:
    facts = tuple(f for f in row.facts if f.behaviour is not Behaviour.REQUIRED)
    return replace(row, facts=facts, behaviours=tuple(sorted({f.behaviour.value for f in facts})))
