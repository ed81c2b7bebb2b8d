"""Resources that are entries of a parent's list (kccgen.contract.ParentEntry).

A router's NATs, interfaces and BGP peers live in the router's ``nats``,
``interfaces`` and ``bgpPeers`` lists: the API has no methods of their own. A
read takes the parent and picks this entry by its key; a write reads the
parent, replaces, inserts or removes this entry and nothing else, and sends
the whole list with the parent's fingerprint. A conflict (412: another writer
changed the parent since the read) reads again and retries with jittered
backoff, at most ``ATTEMPTS`` rounds, so two objects writing entries of one
parent at once both land and neither overwrites the other. A parent without a
token (compute's Router has no fingerprint) is written one object at a time
within a process, and each write is read back: a write another process's
list replaced is done again.

With a token, the reconcile's own read of the parent is kept (per thread,
taken once) so an update costs one GET and one write, as any other update
does; without one, a write reads the parent in its turn and reads it back
after: three GETs and one write.
"""

from __future__ import annotations

import copy
import random
import threading
import time
from collections.abc import Callable
from typing import Any

from kccgen.contract import (
    Adapter,
    CreateEntry,
    DeleteEntry,
    FingerprintGuard,
    MetagenerationGuard,
    NoGuard,
    ParentEntry,
    UpdateEntry,
    template_value,
)
from kccgen.runtime.gcp import AlreadyExists, Gcp, GcpError, NotFound, lost_race

ATTEMPTS = 10
BACKOFF_S = 0.05

_kept: dict[tuple[int, int, str, str], dict[str, Any]] = {}
_locks: dict[tuple[str, str], threading.Lock] = {}
_lock = threading.Lock()


def entry_of(a: Adapter) -> ParentEntry | None:
    """The adapter's parent list, where its resource is an entry of one."""
    for shape in (a.create, a.update, a.delete):
        if isinstance(shape, CreateEntry | UpdateEntry | DeleteEntry):
            return shape.entry
    return None


def _key(gcp: Gcp, a: Adapter, values: dict[str, str]) -> tuple[int, int, str, str]:
    where = ",".join(f"{n}={template_value(t, values)}" for n, t in a.get.params)
    return (id(gcp), threading.get_ident(), a.doc, where)


def _id(a: Adapter, values: dict[str, str]) -> str:
    return values.get(a.id_param, "")


def read_parent(gcp: Gcp, a: Adapter, values: dict[str, str]) -> dict[str, Any]:
    parent = gcp.call(a, a.get, values)
    return parent if isinstance(parent, dict) else {}


def pick(parent: dict[str, Any], e: ParentEntry, rid: str) -> dict[str, Any] | None:
    hits = [x for x in parent.get(e.field) or [] if isinstance(x, dict) and x.get(e.key) == rid]
    return hits[0] if hits else None


def read(gcp: Gcp, a: Adapter, values: dict[str, str]) -> dict[str, Any]:
    """This entry of the live parent (one GET); NotFound when the parent has none."""
    e = entry_of(a)
    assert e is not None
    parent = read_parent(gcp, a, values)
    if not isinstance(e.guard, NoGuard):  # without a token a write reads again in its turn
        with _lock:
            _kept[_key(gcp, a, values)] = parent
    found = pick(parent, e, _id(a, values))
    if found is None:
        raise NotFound(404, f"{a.kind}: {a.doc} {'.'.join(a.resource)}.{a.get.method} has no {e.field} entry with {e.key}={_id(a, values)!r}")
    return copy.deepcopy(found)


def _token(e: ParentEntry, parent: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(body fields, query parameters) carrying the parent's concurrency token."""
    match e.guard:
        case FingerprintGuard(field=f):
            return ({f: parent[f]} if f in parent else {}), {}
        case MetagenerationGuard(param=param, field=f):
            return {}, ({param: parent[f]} if f in parent else {})
        case NoGuard():
            return {}, {}


def unguarded(a: Adapter) -> bool:
    """An entry of a parent with no concurrency token (compute's Router has no
    fingerprint): each write is read back to see that it held."""
    e = entry_of(a)
    return e is not None and isinstance(e.guard, NoGuard)


def _parent_lock(gcp: Gcp, a: Adapter, values: dict[str, str]) -> threading.Lock:
    with _lock:
        return _locks.setdefault(_key(gcp, a, values)[2:], threading.Lock())


def write(
    gcp: Gcp,
    a: Adapter,
    values: dict[str, str],
    entry: dict[str, Any] | None,
    *,
    create: bool = False,
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
) -> dict[str, Any] | None:
    """Put ``entry`` (None: remove it) into the parent's list in place of this
    object's entry, leaving every other entry as the parent holds it; the
    entry as the parent now holds it (None when removed). NotFound when
    removing an entry the parent no longer has; AlreadyExists when creating
    one it has (another writer made it since the read).

    Writers in this process take turns per parent. Where the parent has a
    token, a write that lost a race is refused (412) and done again; where it
    has none, the write is read back and done again when another process's
    write of the whole list replaced it."""
    e = entry_of(a)
    assert e is not None
    rid = _id(a, values)
    want = None if entry is None else {**entry, e.key: rid}
    rng = rng or random.Random()
    # without a token, a list read before this process's turn may miss another
    # object's entry written since: it is read again inside the turn (never kept)
    with _lock:
        parent = _kept.pop(_key(gcp, a, values), None)
    with _parent_lock(gcp, a, values):
        for attempt in range(ATTEMPTS):
            if parent is None:
                parent = read_parent(gcp, a, values)
            items = [x for x in parent.get(e.field) or [] if isinstance(x, dict)]
            at = next((i for i, x in enumerate(items) if x.get(e.key) == rid), None)
            if want is None:
                if at is None:
                    if attempt:
                        return None  # removed by the write before this read
                    raise NotFound(404, f"{a.kind}: no {e.field} entry with {e.key}={rid!r}")
                del items[at]
            elif at is None:
                items.append(want)
            elif create and not attempt:  # present since the reconcile's read: acquired, as any resource of that name is
                raise AlreadyExists(409, f"{a.kind}: the parent already has a {e.field} entry with {e.key}={rid!r}")
            elif _holds(items[at], want) and attempt:
                return want  # the write before this read held
            else:
                items[at] = want
            body, query = _token(e, parent)
            try:
                op = gcp.call(a, e.call, values, {**body, e.field: items}, query)
                gcp.wait(a, e.call, op, values)
            except GcpError as err:
                if not lost_race(err) or attempt == ATTEMPTS - 1:
                    raise
                parent = None  # another writer changed the parent: read it again
                sleep(BACKOFF_S * (2**attempt) * (0.5 + rng.random()))
                continue
            if not isinstance(e.guard, NoGuard):
                return want
            parent = read_parent(gcp, a, values)
            found = pick(parent, e, rid)
            if (want is None and found is None) or (want is not None and found is not None and _holds(found, want)):
                return want
            sleep(BACKOFF_S * (2**attempt) * (0.5 + rng.random()))  # another process's list replaced ours
    raise GcpError(409, f"{a.kind}: {e.field} entry {rid!r} was replaced by other writers of the parent {ATTEMPTS} times")


def _holds(found: dict[str, Any], want: dict[str, Any]) -> bool:
    """The parent holds the entry as written (the service may add fields of its own)."""
    return all(found.get(k) == v for k, v in want.items())


__all__ = ["ATTEMPTS", "entry_of", "pick", "read", "unguarded", "write"]
