"""A stable public surface: a spec path users set does not silently break.

kindset.py keeps Kinds from vanishing; this keeps their fields. The committed
``surface/*.json`` is the previous surface (generator/emit/surface.py
writes it): per Kind, the served versions and every spec path with its type,
reference target and mutability. A run that removes or renames a path, changes
its type, turns a reference into a plain value (or back, or to another Kind),
makes a mutable path immutable or stops serving a version is a breaking change:
generate writes nothing and check fails, unless ``specs/accepted-changes.yaml``
accepts the change with a reason. New paths, Kinds and versions, and
immutable -> mutable, only update the record. Entries stay with their reasons;
one the surface undoes (the path back, mutable again) is reported.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from kccgen.generator.cache import UnitMemo
from kccgen.generator.emit.files import units
from kccgen.generator.emit.surface import (
    SURFACE_DIR,
    kind_sources,
    kind_surface,
    parent_path,
    parse_path_value,
    surface_path,
)
from kccgen.generator.ir.model import IR
from kccgen.generator.spec.accepted import AcceptedChangesFile, ChangeName


@dataclass(frozen=True)
class PathInfo:
    type: str
    ref: str  # the Kind a ...Ref field names; "" for a plain value
    mutable: bool
    api: str = field(default="", compare=False)  # the API field sent, where not the path (a reference's)
    deprecated: bool = field(default=False, compare=False)  # an alias kept for a path the API renamed


@dataclass(frozen=True)
class KindSurface:
    served: frozenset[str]
    paths: Mapping[str, PathInfo]
    file: str  # the record file that holds it (surface/pubsub.v1.json)
    resource: str = ""  # pubsub.v1#/resources/projects/resources/topics
    schema: str = ""  # pubsub.v1#/schemas/Topic


@dataclass(frozen=True)
class Change:
    """One breaking change; ``nested`` counts the paths under it that break with it."""

    kind: str
    path: str
    change: ChangeName
    detail: str
    file: str
    nested: int = field(default=0, compare=False)
    renamed_to: str = field(default="", compare=False)  # the likely new path of a removed one
    keep: str = field(default="", compare=False)  # the kind-config entry that keeps the old surface


class Explainer(Protocol):
    """Causes for the gates' lines (kccgen bump): the Discovery change behind a
    breaking change, and behind a Kind that would vanish."""

    def change(self, c: Change, now: Mapping[str, KindSurface]) -> str: ...

    def vanished(self, kind: str, now: Mapping[str, KindSurface], ir: IR) -> str: ...


def _kinds_of(text: str, file: str) -> dict[str, KindSurface]:
    """The Kinds one record file holds; a malformed file is a ValueError naming its JSON path."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{file}: not readable JSON ({e}); restore it from git") from None
    kinds = data.get("kinds") if isinstance(data, dict) else None
    if not isinstance(kinds, dict):
        raise ValueError(f"{file}#/kinds: not a JSON object of Kinds; restore it from git")
    out: dict[str, KindSurface] = {}
    for kind, entry in kinds.items():
        try:
            paths = {str(p): PathInfo(*parse_path_value(v)) for p, v in entry["paths"].items()}
            out[str(kind)] = KindSurface(
                frozenset(str(v) for v in entry["servedVersions"]), paths, file, str(entry.get("resource", "")), str(entry.get("schema", ""))
            )
        except (KeyError, TypeError, AttributeError, ValueError) as e:
            raise ValueError(f"{file}#/kinds/{kind}: not a surface record ({e}); restore it from git") from None
    return out


def read_surface(files: Iterable[tuple[str, str]]) -> dict[str, KindSurface]:
    """Every Kind of the record files given as (path, text)."""
    out: dict[str, KindSurface] = {}
    for path, text in sorted(files):
        for kind, s in _kinds_of(text, path).items():
            if kind in out:
                raise ValueError(f"{path}#/kinds/{kind}: {kind} is also in {out[kind].file}; restore them from git")
            out[kind] = s
    return out


def previous_surface(root: Path) -> dict[str, KindSurface]:
    """The surface ``root``'s surface/ records (none before the first run)."""
    return surface_in(root / SURFACE_DIR)


def surface_in(d: Path) -> dict[str, KindSurface]:
    """The surface a directory of record files holds (a copy kept by kccgen bump)."""
    return read_surface((f"{SURFACE_DIR}/{p.name}", p.read_text(encoding="utf-8")) for p in sorted(d.glob("*.json")))


def built_surface(ir: IR, memo: UnitMemo | None = None) -> dict[str, KindSurface]:
    """The surface this run would write, before rendering: the Kinds built now from
    the IR, those of cached units from the record the render cache kept."""
    files: list[tuple[str, str]] = []
    for cu in ir.cached:
        if memo is None:
            raise ValueError(f"{cu.name}: a cached unit needs the memo that skipped its build")
        files += [(p, t) for p, t in memo.kept(cu.name)[0].items() if p.startswith(SURFACE_DIR + "/")]
    out = read_surface(files)
    for u in units(ir):
        for k in u.ir.kinds:
            served, paths = kind_surface(k)
            out[k.kind] = KindSurface(frozenset(served), {p: PathInfo(*v) for p, v in paths.items()}, surface_path(u.name), *kind_sources(k))
    missing = sorted(ir.kind_names - set(out))
    if missing:
        raise ValueError(f"{SURFACE_DIR}: no surface record for {', '.join(missing[:5])} (a cached unit); run with --no-cache")
    return out


def _ref(target: str) -> str:
    return f"reference to {target}" if target else "plain value"


def _kind_changes(kind: str, old: KindSurface, new: KindSurface) -> list[Change]:
    out: list[Change] = []
    for v in sorted(old.served - new.served):
        out.append(Change(kind, v, "version", f"version {v} no longer served (served now: {', '.join(sorted(new.served))})", new.file))
    added = [p for p in new.paths if p not in old.paths]
    for path, was in old.paths.items():
        now = new.paths.get(path)
        if now is None:
            what = was.type + (f", {_ref(was.ref)}" if was.ref else "")
            # a new path beside it of the same type and reference: the likely new name
            alike = [p for p in added if parent_path(p) == parent_path(path) and (new.paths[p].type, new.paths[p].ref) == (was.type, was.ref)]
            # the same API field under another path: a reference became a plain value, or one became a reference
            api = was.api or path.removeprefix("spec.")
            twin = next((p for p in added if (new.paths[p].api or p.removeprefix("spec.")) == api and new.paths[p].ref != was.ref), None)
            if twin is not None:
                now_is = f"a reference to {new.paths[twin].ref}" if new.paths[twin].ref else "a plain value"
                keep = f"references: {{{api}: {{target: {was.ref or 'none'}, reason}}}}"
                out.append(Change(kind, path, "removed", f"removed (was {what}; the API field {api} is {now_is} at {twin} now)", new.file, keep=keep))
                continue
            hint = f"; renamed to {alike[0]}?" if len(alike) == 1 else "; renamed or dropped"
            out.append(Change(kind, path, "removed", f"removed (was {what}{hint})", new.file, renamed_to=alike[0] if len(alike) == 1 else ""))
            continue
        if now.type != was.type:
            out.append(Change(kind, path, "type", f"type {was.type} -> {now.type}", new.file))
        if now.ref != was.ref:
            out.append(Change(kind, path, "reference", f"{_ref(was.ref)} -> {_ref(now.ref)}", new.file))
        if was.mutable and not now.mutable:
            out.append(Change(kind, path, "immutable", "mutable -> immutable", new.file))
    return out


def _ancestors(path: str) -> Iterable[str]:
    p = parent_path(path)
    while p:
        yield p
        p = parent_path(p)


def _fold(changes: list[Change]) -> list[Change]:
    """A change under a path that is removed or retyped, or under one that breaks
    the same way (immutable inherited downwards), is part of that change: one
    line, counting its nested paths, and one entry accepts them all."""
    at: dict[str, set[ChangeName]] = {}
    for c in changes:
        at.setdefault(c.path, set()).add(c.change)
    nested: dict[tuple[str, str], int] = {}
    kept: list[Change] = []
    for c in changes:
        owners = [(a, min(ns)) for a in _ancestors(c.path) if (ns := {n for n in at.get(a, ()) if n in ("removed", "type") or n == c.change})]
        if c.change == "version" or not owners:
            kept.append(c)
            continue
        top = owners[-1]  # the topmost: itself never folded
        nested[top] = nested.get(top, 0) + 1
    return [replace(c, nested=nested.get((c.path, c.change), 0)) for c in kept]


def breaking_changes(previous: Mapping[str, KindSurface], now: Mapping[str, KindSurface], retired: frozenset[str] = frozenset()) -> list[Change]:
    """Every breaking change between two surfaces, folded, sorted by Kind and path.
    A Kind that is gone (kindset.py's concern) or retired is not compared."""
    out: list[Change] = []
    for kind in sorted(set(previous) & set(now) - retired):
        out += _fold(_kind_changes(kind, previous[kind], now[kind]))
    return sorted(out, key=lambda c: (c.kind, c.path, c.change))


def contradicted(accepted: AcceptedChangesFile, file: str, surface: Mapping[str, KindSurface], retired: frozenset[str] = frozenset()) -> list[str]:
    """Entries the surface contradicts, and duplicates. An entry stays, with its
    reason, as long as the record still has the change it accepted (as retired
    Kinds stay in retired-kinds.yaml); one the surface undoes (the path is back,
    mutable again, the version served again) is reported, so an old entry never
    accepts a later change at the same place unseen."""
    out: list[str] = []
    taken: dict[tuple[str, str, str], int] = {}
    for i, e in enumerate(accepted.changes):
        where = f"{file}#/changes/{i}"
        key = (e.kind, e.path, e.change)
        if key in taken:
            out.append(f"{where}: the same change as #/changes/{taken[key]}; remove one")
            continue
        taken[key] = i
        s = surface.get(e.kind)
        if s is None:
            if e.kind not in retired:
                out.append(f"{where}: {e.kind} is not a generated Kind; remove the entry")
            continue
        info = s.paths.get(e.path)
        undone = {
            "version": e.path in s.served and f"{e.kind} serves {e.path} again",
            "removed": info is not None and f"{e.kind} has {e.path} again",
            "immutable": info is not None and info.mutable and f"{e.kind} {e.path} is mutable again",
            "type": info is None and f"{e.kind} has no {e.path} (accept its removal instead)",
            "reference": info is None and f"{e.kind} has no {e.path} (accept its removal instead)",
        }[e.change]
        if undone:
            out.append(f"{where}: {undone}; remove the entry")
    return out


def api_of(surface: Mapping[str, KindSurface], kind: str, path: str) -> str:
    """The API field a spec path sends (its record's ``api=``, else the path itself)."""
    info = surface[kind].paths.get(path) if kind in surface else None
    return (info.api if info is not None else "") or path.removeprefix("spec.")


def surface_problems(
    changes: list[Change],
    accepted: AcceptedChangesFile,
    file: str,
    now: Mapping[str, KindSurface],
    retired: frozenset[str] = frozenset(),
    explain: Callable[[Change], str] | None = None,
) -> list[str]:
    """One line per breaking change no entry of ``file`` accepts, and per entry
    the surface of this run contradicts; empty when the surface is stable. A
    path that looks renamed also gets the alias entry that keeps it; with
    ``explain`` (kccgen bump) each line ends with the change's cause."""
    out = contradicted(accepted, file, now, retired)
    taken = {(e.kind, e.path, e.change) for e in accepted.changes}
    for c in changes:
        if (c.kind, c.path, c.change) in taken:
            continue
        more = f" (and {c.nested} nested path{'s' if c.nested > 1 else ''})" if c.nested else ""
        alias = (
            f", or keep {c.path} as a deprecated alias of {c.renamed_to} (its kind config's aliases: "
            f"{{field: {c.path.removeprefix('spec.')}, apiField: {api_of(now, c.kind, c.renamed_to)}, deprecated: true, reason}})"
            if c.renamed_to and "[]" not in c.path and ".*" not in c.path
            else f", or keep it with its kind config's {c.keep} (under overrides.<resource> for a derived Kind)"
            if c.keep
            else ""
        )
        out.append(
            f"{c.file}: {c.kind} {c.path}: {c.detail}{more}: a breaking change; "
            f"accept it in {file} (kind: {c.kind}, path: {c.path}, change: {c.change}, reason){alias}, or keep the surface"
            + (f" Cause: {explain(c)}" if explain is not None else "")
        )
    return out
