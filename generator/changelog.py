"""``docs/changes/<from>-<to>.md``: what a client bump changed, for users to read.

Config Connector's release notes list new fields per Kind; Magic Modules makes a
removal carry an override. This is both for one bump: new and removed Kinds,
Kinds whose names were kept through a rebrand, breaking changes with the entry
that accepted each (or the deprecated alias that keeps it), newly mutable and
newly immutable spec fields, new references and new fields, each with its
Discovery source: the document, its revision, the JSON path and the sentence that
caused it. Spec paths only (the surface record, generator/surface.py): a change
to status alone is not a user's concern and is not listed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kccgen.generator.emit.surface import parent_path
from kccgen.generator.spec.accepted import AcceptedChangesFile
from kccgen.generator.spec.kinds import RetiredKindsFile
from kccgen.generator.surface import Change, KindSurface, PathInfo

Doc = dict[str, Any]


@dataclass
class Side:
    """One end of a bump: the client version, each document's revision, and a reader."""

    version: str
    revisions: Mapping[str, str]
    read: Callable[[str], Doc | None]
    _docs: dict[str, Doc | None] = field(default_factory=dict)

    def doc(self, key: str) -> Doc | None:
        if key not in self._docs:
            self._docs[key] = self.read(key) if key in self.revisions else None
        return self._docs[key]

    def at(self, key: str) -> str:
        return f"{key}@{self.revisions.get(key, '?')}"


@dataclass(frozen=True)
class Rebrand:
    """An API whose Discovery title changed; its recorded prefix kept the Kinds' names."""

    api: str
    file: str
    prefix: str
    old_title: str
    new_title: str
    kinds: tuple[str, ...]


def locate(doc: Doc | None, schema_ref: str, api_path: str) -> tuple[str, Doc] | None:
    """The JSON path and property object of ``api_path`` (``a.b[].c``, map values
    ``*``) under the schema ``schema_ref`` names (``pubsub.v1#/schemas/Topic``)."""
    if doc is None or "#/schemas/" not in schema_ref:
        return None
    schemas = doc.get("schemas") or {}
    name = schema_ref.split("#/schemas/", 1)[1]
    node: Any = schemas.get(name)
    where, prop = f"#/schemas/{name}", None
    for seg in api_path.split("."):
        seen: set[str] = set()
        while isinstance(node, dict) and "$ref" in node and node["$ref"] not in seen:
            seen.add(node["$ref"])
            where, node = f"#/schemas/{node['$ref']}", schemas.get(node["$ref"])
        if not isinstance(node, dict):
            return None
        if seg == "*":
            node, where = node.get("additionalProperties"), f"{where}/additionalProperties"
            continue
        base = seg.removesuffix("[]").removesuffix("[]")
        props = node.get("properties") or {}
        if base not in props:
            return None
        node, where = props[base], f"{where}/properties/{base}"
        prop = node
        for _ in range(seg.count("[]")):
            node, where = (node or {}).get("items"), f"{where}/items"
    return (where, prop) if prop is not None else None


_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text or "") if s.strip()]


def _short(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def description_change(old: Doc | None, new: Doc | None) -> str:
    """What changed in a field's property: the description sentences it lost and
    gained, and any other key (``readOnly``, ``type``, ``$ref``, ``enum``...)."""
    o, n = _sentences((old or {}).get("description", "")), _sentences((new or {}).get("description", ""))
    lost, gained = [s for s in o if s not in n], [s for s in n if s not in o]
    parts = []
    if o and not n:
        parts.append("its description was deleted (was: “" + _short(" ".join(o)) + "”)")
    else:
        if lost:
            parts.append("description lost “" + _short(lost[0]) + "”")
        if gained:
            parts.append("gained “" + _short(gained[0]) + "”")
    for key in sorted((set(old or {}) | set(new or {})) - {"description", "properties", "items", "additionalProperties"}):
        a, b = (old or {}).get(key), (new or {}).get(key)
        if a != b:
            parts.append(f"{key}: {_short(str(a), 60) if a is not None else 'absent'} → {_short(str(b), 60) if b is not None else 'absent'}")
    return ", ".join(parts) if parts else "the property is unchanged (the change is in how kccgen reads it)"


def _node(doc: Doc | None, pointer: str) -> Any:
    node: Any = doc
    for part in pointer.strip("/").split("/"):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def _methods_change(resource: str, was_resource: str, old: Side, new: Side) -> str:
    """The methods a Kind's resource gained or lost (an update method makes its
    fields mutable), as a cause; "" when they are the same."""
    if "#" not in resource:
        return ""
    key, pointer = resource.split("#", 1)
    o_key, o_pointer = was_resource.split("#", 1) if "#" in was_resource else (key, pointer)
    o = set((_node(old.doc(o_key), o_pointer) or {}).get("methods") or {})
    n = set((_node(new.doc(key), pointer) or {}).get("methods") or {})
    parts = [f"gained {', '.join(sorted(n - o))}" if n - o else "", f"lost {', '.join(sorted(o - n))}" if o - n else ""]
    return f"the resource `{new.at(key)} #{pointer}` " + " and ".join(p for p in parts if p) + " (the property is unchanged)" if any(parts) else ""


def _api(info: PathInfo | None, path: str) -> str:
    return (info.api if info is not None and info.api else "") or path.removeprefix("spec.")


def cause(
    kind: str, path: str, was: KindSurface | None, now: KindSurface | None, old: Side, new: Side, kinds: frozenset[str] | None = None
) -> str:
    """Why a spec path changed, from the two documents: where the field is (or
    was), and what happened to it there. ``kinds``: the Kinds generated now (a
    reference to one that is gone goes with it)."""
    o_info = was.paths.get(path) if was else None
    n_info = now.paths.get(path) if now else None
    if o_info is not None and o_info.ref and n_info is None and kinds is not None and o_info.ref not in kinds:
        return f"its target Kind {o_info.ref} is no longer generated"
    o_schema, n_schema = (was.schema if was else ""), (now.schema if now else "")
    o_key, n_key = o_schema.split("#")[0], n_schema.split("#")[0]
    o_at = locate(old.doc(o_key), o_schema, _api(o_info, path)) if o_key else None
    n_at = locate(new.doc(n_key), n_schema, _api(n_info or o_info, path)) if n_key else None
    if n_info is not None and n_info.deprecated:
        return f"kept as a deprecated alias of {n_info.api or 'the renamed field'}"
    if o_at and not n_at:
        gone = locate(new.doc(o_key), o_schema, _api(o_info, path))
        if gone is None:
            return f"`{old.at(o_key)} {o_at[0]}` is not in {new.at(o_key)}"
        if n_key and n_key != o_key:
            return f"the Kind is now read from {new.at(n_key)}, whose `{n_schema.split('#', 1)[1]}` has no such field (`{new.at(o_key)} {gone[0]}` still has it)"
    if n_at and not o_at and o_key and locate(old.doc(n_key), n_schema, _api(n_info, path)) is None:
        return f"`{new.at(n_key)} {n_at[0]}` is new"
    if n_at:
        before = locate(old.doc(n_key), n_schema, _api(n_info or o_info, path)) or o_at
        what = description_change(before[1] if before else None, n_at[1])
        if what.startswith("the property is unchanged") and now is not None and (moved := _methods_change(now.resource, was.resource if was else "", old, new)):
            what = moved
        return f"`{new.at(n_key)} {n_at[0]}`: " + what
    if o_at:
        return f"`{old.at(o_key)} {o_at[0]}`"
    param = _parameter(now or was, _api(n_info or o_info, path), old, new)
    if param:
        return param
    where = n_schema or o_schema
    return f"not a property under `{where}` nor a parameter of its methods (an identity field)" if where else "no document"


def _parameter(kind: KindSurface | None, api_path: str, old: Side, new: Side) -> str:
    """A field sent as a method parameter (Spanner's ``encryptionConfig.kmsKeyName``
    on ``backups.create``): where it is, and what changed in it."""
    if kind is None or "#" not in kind.resource:
        return ""
    key, pointer = kind.resource.split("#", 1)
    for doc_side in (new, old):
        methods = (_node(doc_side.doc(key), pointer) or {}).get("methods") or {}
        for name, m in sorted(methods.items()):
            if api_path in (m.get("parameters") or {}):
                at = f"#{pointer}/methods/{name}/parameters/{api_path}"
                before = ((_node(old.doc(key), pointer) or {}).get("methods") or {}).get(name, {}).get("parameters", {}).get(api_path)
                after = m["parameters"][api_path] if doc_side is new else None
                what = description_change(before, after) if after is not None else f"not in {new.at(key)}"
                return f"`{doc_side.at(key)} {at}`: {what}"
    return ""


def kind_cause(kind: str, was: KindSurface | None, skipped: Mapping[str, str], old: Side, new: Side, now: Mapping[str, KindSurface] | None = None) -> str:
    """Why a Kind is no longer generated: its resource is another Kind now (a
    rename: the retirement's ``renamedTo``), left the document, or the generator
    now skips it (the reason)."""
    if kind in skipped:
        return f"now not generated: {skipped[kind]}"
    if was is None or "#" not in was.resource:
        return "no record of its resource"
    key, pointer = was.resource.split("#", 1)
    api = key.split(".")[0]
    heirs = sorted(k for k, s in (now or {}).items() if "#" in s.resource and s.resource.split("#", 1)[1] == pointer and s.resource.split(".")[0] == api)
    if len(heirs) == 1:
        return f"its resource `#{pointer}` is the Kind {heirs[0]} now (renamedTo: {heirs[0]})"
    if _node(new.doc(key), pointer) is None:
        return f"`{old.at(key)} #{pointer}` is not in {new.at(key)}"
    return f"`{new.at(key)} #{pointer}` is still there; its Kind is now named or served otherwise"


def _fold_new(paths: list[str]) -> list[tuple[str, int]]:
    """New paths, each under a new parent counted there: (path, nested count)."""
    new = set(paths)
    out: dict[str, int] = {}
    for p in sorted(paths):
        top, a = p, parent_path(p)
        while a and a != "spec":
            if a in new:
                top = a
            a = parent_path(a)
        if top == p:
            out.setdefault(p, 0)
        else:
            out[top] = out.get(top, 0) + 1
    return sorted(out.items())


def render(
    old: Side,
    new: Side,
    was: Mapping[str, KindSurface],
    now: Mapping[str, KindSurface],
    breaking: list[Change],
    accepted: AcceptedChangesFile,
    retired: RetiredKindsFile,
    rebrands: list[Rebrand],
) -> str:
    """The changelog's markdown. Deterministic for the same inputs: sorted, no dates."""
    live = frozenset(now)
    added_kinds = sorted(set(now) - set(was))
    gone_kinds = sorted(set(was) - set(now))
    both = sorted(set(was) & set(now))
    why = {(e.kind, e.path, e.change): e.reason for e in accepted.changes}
    retired_by = {r.kind: r for r in retired.kinds}
    mutable, immutable, refs, aliases = [], [], [], []
    new_fields: dict[str, list[tuple[str, int]]] = {}
    for kind in both:
        w, n = was[kind], now[kind]
        fresh = [p for p in n.paths if p not in w.paths]
        for p, info in sorted(n.paths.items()):
            prev = w.paths.get(p)
            if info.deprecated and not (prev and prev.deprecated):
                aliases.append((kind, p))
            if prev is not None and info.mutable and not prev.mutable:
                mutable.append((kind, p))
            if info.ref and (prev is None or prev.ref != info.ref) and not info.deprecated:
                refs.append((kind, p, info.ref))
        folded = _fold_new([p for p in fresh if not n.paths[p].deprecated])
        if folded:
            new_fields[kind] = folded
        immutable += [(c.kind, c.path) for c in breaking if c.kind == kind and c.change == "immutable"]
    changed_docs = sorted(k for k in new.revisions if k in old.revisions and new.revisions[k] != old.revisions[k])
    added_docs = sorted(set(new.revisions) - set(old.revisions))
    removed_docs = sorted(set(old.revisions) - set(new.revisions))
    out = [
        f"# google-api-python-client {old.version} → {new.version}",
        "",
        "Written by `kccgen bump` from the surface record (`surface/`) and the two clients' Discovery documents.",
        "Spec paths only: a change to status alone is not listed. Each entry names its cause: the document",
        "(`key@revision`), the JSON path, and the description sentence that changed.",
        "",
        "| | count |",
        "|---|---:|",
        f"| documents changed / added / removed | {len(changed_docs)} / {len(added_docs)} / {len(removed_docs)} |",
        f"| Kinds added | {len(added_kinds)} |",
        f"| Kinds removed (retired) | {len(gone_kinds)} |",
        f"| Kinds whose names a rebrand did not change | {sum(len(r.kinds) for r in rebrands)} |",
        f"| breaking changes (accepted with a reason) | {len(breaking)} |",
        f"| fields kept as deprecated aliases | {len(aliases)} |",
        f"| spec fields newly mutable / newly immutable | {len(mutable)} / {len(immutable)} |",
        f"| new references | {len(refs)} |",
        f"| new spec fields (in Kinds served before) | {sum(c + 1 for v in new_fields.values() for _, c in v)} |",
        "",
    ]

    def section(title: str, lines: list[str], empty: str = "None.") -> None:
        out.extend([f"## {title}", ""] + (lines or [empty]) + [""])

    section("New Kinds", [f"- `{k}`: `{new.at(now[k].resource.split('#')[0])} #{now[k].resource.split('#', 1)[-1]}`" for k in added_kinds])
    section(
        "Removed Kinds",
        [
            f"- `{k}`: " + (f"renamed to `{r.renamed_to}`; " if (r := retired_by.get(k)) and r.renamed_to else "")
            + (f"{r.reason}" if r else "no retirement entry")
            + (f" (`{old.at(was[k].resource.split('#')[0])} #{was[k].resource.split('#', 1)[-1]}`)" if was[k].resource else "")
            for k in gone_kinds
        ],
    )
    section(
        "Kinds whose names were kept through a rebrand",
        [
            f"- {r.api} (`{r.file}` records `kindPrefix: {r.prefix}`): the Discovery title changed from “{r.old_title}” to “{r.new_title}”; "
            f"{len(r.kinds)} Kinds keep their names: " + ", ".join(f"`{k}`" for k in r.kinds)
            for r in rebrands
        ],
    )
    section(
        "Breaking changes, each accepted with a reason",
        [
            f"- `{c.kind}` `{c.path}`: {c.detail}" + (f" (and {c.nested} nested)" if c.nested else "")
            + f". Accepted: {why.get((c.kind, c.path, c.change), '(no entry)')}. Cause: "
            + cause(c.kind, c.path, was.get(c.kind), now.get(c.kind), old, new, live)
            for c in breaking
        ],
    )
    section(
        "Fields kept as deprecated aliases (the API renamed them; both names apply)",
        [f"- `{k}` `{p}` → `{now[k].paths[p].api or '?'}`: " + cause(k, p, was.get(k), now.get(k), old, new, live) for k, p in aliases],
    )
    section("Spec fields newly mutable", [f"- `{k}` `{p}`: " + cause(k, p, was[k], now[k], old, new, live) for k, p in mutable])
    section("Spec fields newly immutable", [f"- `{k}` `{p}`: " + cause(k, p, was[k], now[k], old, new, live) for k, p in immutable])
    section("New references", [f"- `{k}` `{p}` → `{t}`: " + cause(k, p, was[k], now[k], old, new, live) for k, p, t in refs])
    section(
        "New spec fields",
        [
            f"- `{k}`: " + ", ".join(f"`{p}`" + (f" (+{c} nested)" if c else "") for p, c in v) + f" (`{now[k].schema}`)"
            for k, v in sorted(new_fields.items())
        ],
    )
    section(
        "Documents",
        [f"- changed: `{k}` {old.revisions[k]} → {new.revisions[k]}" for k in changed_docs]
        + [f"- added: `{k}` {new.revisions[k]}" for k in added_docs]
        + [f"- removed: `{k}` (was {old.revisions[k]})" for k in removed_docs],
    )
    return "\n".join(out).rstrip() + "\n"
