"""Spec fields kept in a paired resource of another API (``Adapter.companions``).

A Project's ``billingAccountRef`` is cloudbilling's ``projects/{project}/
billingInfo``: it is read with that resource's GET and written with its own
call. A companion the spec leaves out is left alone (as an externally managed
field), and one that matches costs its GET and no write.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from kccgen.contract import Adapter, Companion
from kccgen.runtime.gcp import Gcp
from kccgen.runtime.identity import IdentityError, identity_for


@dataclass(frozen=True)
class Pending:
    """A companion whose live value differs from the spec's."""

    companion: Companion
    desired: Any
    live: dict[str, Any]  # the paired resource as GET answered it

    @property
    def actual(self) -> Any:
        return self.live.get(self.companion.api_field)


def paired(a: Adapter, c: Companion) -> Adapter:
    """An adapter for the paired resource's API, to send its calls."""
    return replace(a, doc=c.doc, resource=c.resource, companions=())


def _same(c: Companion, desired: Any, actual: Any) -> bool:
    if c.target and isinstance(desired, str) and isinstance(actual, str) and actual:
        try:
            return bool(identity_for(c.target).normalize(actual) == identity_for(c.target).normalize(desired))
        except IdentityError:
            return False
    return bool(desired == actual)


def desired_value(c: Companion, spec: dict[str, Any], resolved: dict[str, Any]) -> Any:
    """What the spec asks of a companion: the resolved reference, or the value itself."""
    return resolved.get(f"spec.{c.field}") if c.target else spec.get(c.field)


def pending(gcp: Gcp, a: Adapter, values: dict[str, str], spec: dict[str, Any], resolved: dict[str, Any]) -> list[Pending]:
    """The companions the spec sets whose live value differs (one GET each)."""
    out = []
    for c in a.companions:
        if spec.get(c.field) is None:
            continue
        desired = desired_value(c, spec, resolved)
        live = gcp.call(paired(a, c), c.get, values) or {}
        if not _same(c, desired, live.get(c.api_field)):
            out.append(Pending(c, desired, live))
    return out


class AppendOnly(Exception):
    """The spec drops or changes entries of a list the service only appends to."""


def write(gcp: Gcp, a: Adapter, p: Pending, values: dict[str, str]) -> None:
    """Set one companion: the paired resource as read, with the field changed;
    for an append-only list, only the entries the spec adds after the live ones."""
    other = paired(a, p.companion)
    body = {**p.live, p.companion.api_field: p.desired}
    if p.companion.append_only:
        live, want = list(p.actual or []), list(p.desired or [])
        if want[: len(live)] != live:
            gone = next((i for i, (x, y) in enumerate(zip(live, want, strict=False)) if x != y), len(want))
            what = f"entry {gone} ({live[gone]!r})" if gone < len(live) else "its entries"
            raise AppendOnly(f"spec.{p.companion.field} drops or changes {what} of the {len(live)} the service has: they can only be appended to")
        body = {p.companion.api_field: want[len(live) :]}
    op = gcp.call(other, p.companion.update, values, body)
    gcp.wait(other, p.companion.update, op, values)
