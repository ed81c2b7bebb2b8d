"""Canonical spellings of values the service rewrites (issue 12, rule fixes).

A service answers some values in its own spelling: Cloud Storage upper-cases
a bucket's location (``eu`` -> ``EU``); Spanner wants an instance's config as
a full name (``regional-us-central1`` -> ``projects/P/instanceConfigs/...``).
Sent and compared as the user wrote them, they drift on every re-apply. The
rule for each field is data in the Kind's adapter (kccgen.contract.Canonical):
a short name is expanded by the format the Discovery description gives
(``Values are of the form `projects/<project>/instanceConfigs/<config>```),
and a kind config's ``canonical:`` states what prose cannot (case).
"""

from __future__ import annotations

import re

from kccgen.contract import Canonical
from kccgen.discovery.errors import SpecError, json_path
from kccgen.generator.ir.model import FieldIR
from kccgen.generator.spec.kinds import CanonicalConfig

# ``of the form `projects/{project}/locations/{zone}``` or, with Discovery's
# <placeholders> stripped, ``projects//instanceConfigs/``.
_FORM = re.compile(r"of the (?:form|format)\s*:?\s*`([a-z][A-Za-z]*/[^`\s]*)`")


def expansion(form: str, identity_template: str) -> str | None:
    """``projects/{project}/instanceConfigs/{}`` from a described form: each
    collection's placeholder named as in the Kind's identity, the last one the
    value; None when a collection is not in the identity (nothing to fill it)."""
    segs = form.split("/")
    if len(segs) % 2 or len(segs) < 2:
        return None
    ident = identity_template.split("/")
    params = {ident[i]: ident[i + 1] for i in range(0, len(ident) - 1) if not ident[i].startswith("{") and ident[i + 1].startswith("{")}
    out: list[str] = []
    for i in range(0, len(segs), 2):
        coll = segs[i]
        if not re.fullmatch(r"[a-z][A-Za-z]*", coll):
            return None
        if i == len(segs) - 2:
            out += [coll, "{}"]
        elif coll in params:
            out += [coll, params[coll]]
        else:
            return None
    return "/".join(out)


def build_canonical(
    fields: tuple[FieldIR, ...], identity_template: str, references: frozenset[str], configured: dict[str, CanonicalConfig], file: str, where: tuple[str | int, ...]
) -> tuple[Canonical, ...]:
    """The Kind's canonical rules: derived from the top-level string fields'
    descriptions, then the kind config's (which win, field by field; ``where``
    is the config's JSON path, for errors)."""
    out: dict[str, Canonical] = {}
    for f in fields:
        if f.name in references or f.name == "name" or f.output_only or f.type.kind != "string":
            continue
        m = _FORM.search(f.description or "")
        template = expansion(m.group(1), identity_template) if m else None
        if template:
            out[f.name] = Canonical(field=f.name, expand=template)
    have = {f.name for f in fields}
    params = set(re.findall(r"\{(\w+)\}", identity_template))
    for name, c in sorted(configured.items()):
        if name.split(".", 1)[0].removesuffix("[]").removesuffix("{}") not in have:
            raise SpecError(file, json_path(*where, "canonical", name), f"no top-level API field {name!r}")
        unknown = set(re.findall(r"\{(\w+)\}", c.expand or "")) - params
        if c.expand is not None and ("{}" not in c.expand or unknown):
            raise SpecError(file, json_path(*where, "canonical", name, "expand"), f"needs {{}} for the value and only the identity's placeholders ({', '.join(sorted(params))})")
        out[name] = Canonical(field=name, expand=c.expand or "", case=c.case or "")
    return tuple(out[k] for k in sorted(out))
