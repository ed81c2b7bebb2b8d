"""One object per GCP resource: the first to acquire it owns it.

Two objects whose identities name the same resource (two PubSubTopics with one
``resourceID``, or a Kind and its deprecated alias) would both be Ready on it,
overwrite each other's fields, and the deletion of either would delete the
resource under the other. The owner is the object whose ``status.externalRef``
names the resource (the older, if two do: a state written before this rule);
before any has acquired it, the first to claim it in this process (the
store's :class:`Claims`: kccctl's workers, the operator's reconciles). Every
other object naming it is refused by name, never writes it, and deleting one
leaves the resource alone. A verify-only object (force-acquire) never writes:
it owns nothing and may look at any resource.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

Who = tuple[str, str, str]  # (kind, namespace, name)


def who_of(obj: Mapping[str, Any], default_namespace: str = "default") -> Who:
    meta = obj.get("metadata") or {}
    return str(obj.get("kind")), str(meta.get("namespace") or default_namespace), str(meta.get("name"))


def describe(who: Who) -> str:
    return f"{who[0]} {who[1]}/{who[2]}"


class Claims:
    """Resources claimed by objects not yet holding them in their status."""

    def __init__(self) -> None:
        self._by_key: dict[str, Who] = {}
        self._lock = threading.Lock()

    def claim(self, key: str, who: Who, alive: Callable[[Who], bool]) -> Who | None:
        """The other claimant still alive, or None (``who`` holds it now)."""
        with self._lock:
            held = self._by_key.get(key)
            if held is not None and held != who and alive(held):
                return held
            self._by_key[key] = who
            return None

    def release(self, who: Who) -> None:
        with self._lock:
            for k in [k for k, w in self._by_key.items() if w == who]:
                del self._by_key[k]


def owner(
    objects: Iterable[Mapping[str, Any]],
    claims: Claims | None,
    obj: Mapping[str, Any],
    ext: str,
    key: str,
    same_resource: Callable[[str], bool],
    default_namespace: str = "default",
) -> Who | None:
    """The other object that owns ``ext``, or None when ``obj`` may act on it.
    ``objects``: those that may own (the caller leaves verify-only ones out).
    ``same_resource(kind)``: whether that Kind's adapter names the same
    collection (its externalRefs are comparable with ``ext``); ``key``: the
    resource across collections, for the claims."""
    me = who_of(obj, default_namespace)
    mine = (obj.get("status") or {}).get("externalRef") == ext
    created = str((obj.get("metadata") or {}).get("creationTimestamp") or "")
    present: set[Who] = set()
    holders: list[tuple[str, Who]] = []
    for o in objects:
        who = who_of(o, default_namespace)
        present.add(who)
        if who == me or (o.get("status") or {}).get("externalRef") != ext or not same_resource(who[0]):
            continue
        holders.append((str((o.get("metadata") or {}).get("creationTimestamp") or ""), who))
    if holders:
        first = min(holders)
        if not mine or first < (created, me):
            return first[1]
    if claims is None or mine:
        return None
    return claims.claim(key, me, lambda w: w in present)
