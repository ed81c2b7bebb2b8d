"""IR stage: method parameters spelled with the identity template's placeholders.

The runtime fills a method's parameters from the identity's values
(``projects/{project}/datasets/{dataset}`` gives project and dataset), but a
Discovery path names its parameters its own way: bigquery's
``projects/{+projectId}/datasets/{+datasetId}``, admin's
``customer/{customerId}/orgunits/{+orgUnitPath}``, cloudasset's ``v1/{+name}``
with no pattern. Each method path is laid over the identity template segment
by segment (a create's over the template without its ID); where both have a
placeholder the method's takes the template's name, and a leading reserved
parameter with no pattern stands for the template's segments it covers. A path
whose literals disagree with the template is left as it is.
"""

from __future__ import annotations

import re
from dataclasses import replace

from kccgen.contract import (
    Call,
    CreateAtPath,
    CreateByVerb,
    CreateEntry,
    DeleteEntry,
    NoCreate,
    NoDelete,
    NoUpdate,
    UpdateEntry,
    UpdateRouted,
)
from kccgen.generator.ir.model import MethodIR, Methods

_PH = re.compile(r"^\{(\+?)([A-Za-z][A-Za-z0-9_]*)\}$")
_VERSION = re.compile(r"^v\d+(?:(?:alpha|beta|p\d+beta)\d*)?$")
_ANY_PH = re.compile(r"\{([A-Za-z][A-Za-z0-9_]*)\}")


def _segments(path: str) -> list[str]:
    """The method path without its version/route prefix (``v1/``, ``bigquery/v2/``) or custom verb."""
    segs = path.split(":", 1)[0].split("/")
    while len(segs) > 1 and not _PH.match(segs[0]) and (not _PH.match(segs[1]) or _VERSION.match(segs[0])):
        segs = segs[1:]
    return segs


def aligned_templates(path: str, templates: tuple[tuple[str, str], ...], target: list[str]) -> tuple[tuple[str, str], ...] | None:
    """``templates`` (parameter -> how it is spelled) renamed to the placeholders of
    ``target`` (the identity template's segments the path should name); None when
    the path does not line up with ``target``."""
    by_param = dict(templates)
    expanded: list[tuple[str, str | None]] = []  # (segment, the reserved parameter it is when unpatterned)
    for seg in _segments(path):
        m = _PH.match(seg)
        if m is None:
            expanded.append((seg, None))
            continue
        reserved, name = m.group(1), m.group(2)
        spelled = by_param.get(name, "{" + name + "}")
        if reserved and spelled == "{" + name + "}":
            expanded.append((seg, name))
        else:
            expanded.extend((s, None) for s in spelled.split("/"))
    whole: dict[str, str] = {}
    if expanded and expanded[0][1] is not None and len(expanded) <= len(target):
        # A leading {+name} / {+parent} without a pattern: the template's segments it covers.
        covered = len(target) - len(expanded) + 1
        whole[str(expanded[0][1])] = "/".join(target[:covered])
        segs = [s for s, _ in expanded[1:]]
        tail = target[covered:]
    else:
        segs = ["{" + r + "}" if r is not None else s for s, r in expanded]  # {+datasetId}: one segment
        tail = target
    if len(segs) != len(tail):
        return None
    rename: dict[str, str] = {}
    for mine, theirs in zip(segs, tail, strict=True):
        a, b = _ANY_PH.fullmatch(mine), _ANY_PH.fullmatch(theirs)
        if a and b:
            if rename.setdefault(a.group(1), b.group(1)) != b.group(1):
                return None
        elif a or b or mine != theirs:
            return None
    out = []
    for pname, spelled in templates:
        if pname in whole:
            out.append((pname, whole[pname]))
        else:
            out.append((pname, _ANY_PH.sub(lambda m: "{" + rename.get(m.group(1), m.group(1)) + "}", spelled)))
    return tuple(out)


def _renamed(m: MethodIR | None, target: list[str], parent: list[str] | None = None) -> MethodIR | None:
    if m is None:
        return None
    t = aligned_templates(m.path, m.param_templates, target)
    if t is None and parent:
        # a read or verb of the parent the resource is an entry of: networks.get and
        # networks/{network}/addPeering for .../networks/{localNetwork}/networkPeerings/{networkPeering}
        segs = m.path.split(":", 1)[0].split("/")
        verbless = "/".join(segs[:-1]) if len(segs) > 1 and not _PH.match(segs[-1]) else m.path
        t = aligned_templates(m.path, m.param_templates, parent) or aligned_templates(verbless, m.param_templates, parent)
    return m if t is None or t == m.param_templates else replace(m, param_templates=t)


def _id_in_query(m: MethodIR | None, full: list[str]) -> MethodIR | None:
    """``m`` with the resource's ID as the query parameter of its name, where the path
    stops at the collection (sqladmin's ``users.update?name=``): sent without it, the
    call names no user, or every one."""
    last = _ANY_PH.fullmatch(full[-1]) if full else None
    if m is None or last is None:
        return m
    ph = last.group(1)
    used = {n for _, t in m.param_templates for n in _ANY_PH.findall(t)}
    if ph in used or ph not in m.query_params or ph in dict(m.param_templates):
        return m
    return replace(m, param_templates=tuple(sorted((*m.param_templates, (ph, "{" + ph + "}")))))


def _entry_aligned(methods: Methods, parent: list[str]) -> Methods:
    get, write = _renamed(methods.get, parent), _renamed(methods.update, parent)
    assert get is not None and write is not None and isinstance(methods.create_shape, CreateEntry)
    entry = replace(methods.create_shape.entry, call=replace(methods.create_shape.entry.call, params=write.param_templates))
    return replace(
        methods, get=get, create=write, update=write, delete=write,
        create_shape=CreateEntry(entry), update_shape=UpdateEntry(entry), delete_shape=DeleteEntry(entry),
    )


def align_params(methods: Methods, template: str) -> Methods:
    """``methods`` with each standard method's parameters named after ``template``'s placeholders."""
    full = template.split("/")
    if isinstance(methods.create_shape, CreateEntry):
        # an entry of its parent's list: every call is the parent's (``.../routers/{router}``)
        return _entry_aligned(methods, full[:-2])
    # an entry read from its parent's list, or made by its parent's verb (secrets.addVersion)
    parent = full[:-2] if methods.read_list is not None or (methods.create is not None and methods.create.owner) else None
    get = _renamed(methods.get, full, parent)
    assert get is not None
    update, delete = _id_in_query(_renamed(methods.update, full, parent), full), _id_in_query(_renamed(methods.delete, full, parent), full)
    at_path = isinstance(methods.create_shape, CreateAtPath)
    if isinstance(methods.create_shape, CreateByVerb) and methods.create is not None:
        # a verb acts on the resource itself (services/S:enable), else on its parent
        at_path = aligned_templates(methods.create.path, methods.create.param_templates, full) is not None
    create = _renamed(methods.create, full if at_path else full[:-1], parent)
    cs, us, ds = methods.create_shape, methods.update_shape, methods.delete_shape

    def call(m: MethodIR | None, old: Call) -> Call:
        return old if m is None else replace(old, params=m.param_templates)

    if not isinstance(cs, NoCreate | CreateEntry):
        cs = replace(cs, call=call(create, cs.call))
    routes = methods.route_methods
    if isinstance(us, UpdateRouted):
        renamed = {m.name: _id_in_query(_renamed(m, full, parent), full) for m in routes}
        routes = tuple(m for m in renamed.values() if m is not None)
        us = replace(
            us,
            routes=tuple(
                replace(r, call=call(renamed.get(r.call.method), r.call), verbs=tuple((v, call(renamed.get(c.method), c)) for v, c in r.verbs)) for r in us.routes
            ),
        )
    elif not isinstance(us, NoUpdate | UpdateEntry):
        us = replace(us, call=call(update, us.call))
    if not isinstance(ds, NoDelete | DeleteEntry):
        ds = replace(ds, call=call(delete, ds.call))
    iam = methods.iam
    if iam is not None and len(methods.iam_paths) == 2:
        g = aligned_templates(methods.iam_paths[0], iam.get.params, full)
        st = aligned_templates(methods.iam_paths[1], iam.set.params, full)
        iam = replace(iam, get=replace(iam.get, params=g or iam.get.params), set=replace(iam.set, params=st or iam.set.params))
    return replace(
        methods, get=get, create=create, update=update, delete=delete, create_shape=cs, update_shape=us, delete_shape=ds, iam=iam, route_methods=routes
    )
