"""Cloud Monitoring: read-only mutation records and condition names it assigns."""

from __future__ import annotations

import copy
from typing import Any

from kccgen.mockgcp.apis import Fill, Profile


def mutation_records(f: Fill) -> None:
    """Cloud Monitoring keeps read-only mutation records and ignores any sent
    on create or update: AlertPolicy has creationRecord and mutationRecord,
    NotificationChannel creationRecord and mutationRecords (recorded traffic:
    {"mutateTime": ...})."""
    if f.schema not in ("AlertPolicy", "NotificationChannel"):
        return
    old = f.old
    f.resource["creationRecord"] = {"mutateTime": f.now_text} if old is None else copy.deepcopy(old.get("creationRecord") or {"mutateTime": f.now_text})
    if f.schema == "AlertPolicy":
        f.resource["mutationRecord"] = {"mutateTime": f.now_text}
    else:
        records: list[Any] = [] if old is None else copy.deepcopy(old.get("mutationRecords") or [])
        f.resource["mutationRecords"] = [*records, {"mutateTime": f.now_text}]


def condition_names(f: Fill) -> None:
    """An alert policy's conditions get service-assigned names
    ``<policy>/conditions/<id>``; a condition sent with its name keeps it."""
    for cond in f.resource.get("conditions") or []:
        if isinstance(cond, dict) and not str(cond.get("name") or "").startswith(f.key + "/conditions/"):
            cond["name"] = f"{f.key}/conditions/{f.digits(19)}"


class Monitoring(Profile):
    def etag(self, f: Fill) -> str | None:
        """Monitoring sends an etag it does not mark output-only (recorded traffic)."""
        return f.token(9) if "etag" in f.props else None

    def fill(self, f: Fill) -> None:
        mutation_records(f)
        if f.schema == "AlertPolicy":
            condition_names(f)


PROFILE = Monitoring()
