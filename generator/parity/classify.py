"""Why KCC has a spec path and our spec does not: the rules, first match wins.

1. a curated mapping (curated.yaml) that checks out: the KCC path must not
   exist in the Discovery schema (else it is no rename), and our counterpart
   must exist (or the method parameter it names must). A failing entry is a
   reported problem, never a silent explanation;
2. the KCC path is the API field our reference replaces;
3. a KCC ``<apiField>Ref`` for an API field our reference names differently;
4. our ``status.observedState`` has the path: the API makes it output-only;
5. it is a query parameter of the resource's create/update/delete method;
6. the Discovery schema has no such field at all: a KCC-only convenience;
7. otherwise ``unexplained``: reasons are never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass

from kccgen.discovery.behaviours import Behaviour
from kccgen.discovery.document import DiscoveryDoc
from kccgen.generator.ir.model import KindIR, MethodIR, MutabilityIR, ReferenceIR
from kccgen.generator.parity.curated import Category, Curated, Elsewhere, Mapping
from kccgen.generator.parity.kcc import KccField
from kccgen.generator.parity.schema import discovery_lookup, property_anywhere

STATUS = "status.observedState."


@dataclass(frozen=True)
class KccOnly:
    """A KCC-only path with its reason; ``detail`` is the evidence shown in the report."""

    path: str
    category: Category
    detail: str
    ours: str | None = None  # our counterpart (relative to spec, or a status.observedState path)


@dataclass(frozen=True)
class OurSide:
    """What the classifier needs of one Kind of ours."""

    spec: frozenset[str]
    status: frozenset[str]  # full paths: status.observedState.x
    rows: dict[str, MutabilityIR]  # by full path, first row wins
    references: tuple[ReferenceIR, ...]
    methods: tuple[MethodIR, ...]
    doc: DiscoveryDoc
    schema: str


def our_side(kind: KindIR, doc: DiscoveryDoc) -> OurSide:
    """Our paths from the IR's mutability table: what the runtime reconciles."""
    rows: dict[str, MutabilityIR] = {}
    for m in kind.mutability:
        rows.setdefault(m.path, m)
    ms = kind.methods
    return OurSide(
        spec=frozenset(p.removeprefix("spec.") for p in rows if p.startswith("spec.")),
        status=frozenset(p for p in rows if p.startswith(STATUS)),
        rows=rows,
        references=kind.references,
        methods=tuple(x for x in (ms.create, ms.update, ms.delete) if x is not None),
        doc=doc,
        schema=kind.resource_schema,
    )


def _fact(row: MutabilityIR, b: Behaviour) -> str:
    return next((f.source for f in row.facts if f.behaviour is b), "")


def _why_not(m: Mapping, target: str | None, side: OurSide, in_api: bool, path: str) -> str:
    """Why a curated mapping does not check out for ``path``; empty when it does."""
    if in_api:
        return f"{side.schema}.{path} exists in {side.doc.key}"
    if m.param is not None:
        verb, param = m.param.split(":")
        method = next((x for x in side.methods if x.verb == verb), None)
        if method is None or param not in method.query_params:
            return f"no query parameter {param} on the {verb} method"
        return ""
    if target is None:
        return "no counterpart and no parameter"
    if target.startswith(STATUS):
        return "" if target in side.status else f"{target} is not in our status"
    return "" if target in side.spec else f"spec.{target} is not in our spec"


def classify(
    kind: str,
    side: OurSide,
    f: KccField,
    curated: Curated,
    problems: list[str],
    used: set[Mapping | Elsewhere],
) -> KccOnly:
    """Why KCC has ``f.path`` and our spec does not (the rules of this module's docstring)."""
    path = f.path
    in_api, missing = discovery_lookup(side.doc, side.schema, path)

    m = curated.mapping_for(kind, path)
    if m is not None:
        target = m.ours if m.subtree or m.ours is None else m.ours + path[len(m.kcc) :]
        why = _why_not(m, target, side, in_api is not None, path)
        if not why:
            used.add(m)
            return KccOnly(path, m.category, m.evidence, target)
        problems.append(f"{kind}: mapping {m.kcc} -> {m.ours} does not apply to {path}: {why}")

    for r in side.references:
        if path == r.api_path and r.krm_path in side.spec:
            if f.ref:
                why = f"KCC's reference keeps the API field name {r.api_path}; ours is {r.krm_path} (-> {r.target})"
            else:
                why = f"KCC keeps the API field {r.api_path} as a plain name; ours replaces it with the reference {r.krm_path} (-> {r.target})"
            return KccOnly(path, "reference-naming", why, r.krm_path)
    if f.ref and path.endswith("Ref"):
        for r in side.references:
            if path.removesuffix("Ref") == r.api_path and r.krm_path in side.spec:
                return KccOnly(
                    path,
                    "reference-naming",
                    f"KCC appends Ref to the API field {r.api_path}; ours is {r.krm_path} (-> {r.target})",
                    r.krm_path,
                )

    status = STATUS + path
    if status in side.status:
        src = _fact(side.rows[status], Behaviour.OUTPUT_ONLY)
        how = f"output-only ({src})" if src else "output-only"
        return KccOnly(
            path, "output-only", f"Discovery {side.doc.key} {side.schema}.{path}: {how}", status
        )

    if "." not in path and "[" not in path:
        for method in side.methods:
            if path in method.query_params:
                return KccOnly(path, "method-parameter", f"query parameter {path} of {method.id}")

    if in_api is None:
        name = missing.rsplit(" ", 1)[-1]
        anywhere = (
            ""
            if property_anywhere(side.doc, name)
            else f"; no schema of {side.doc.key} has a property {name}"
        )
        return KccOnly(path, "kcc-only", f"Discovery {side.doc.key}: {missing}{anywhere}")

    return KccOnly(
        path,
        "unexplained",
        f"{side.doc.key} {side.schema}.{path} exists; ours has neither spec nor status path",
    )
