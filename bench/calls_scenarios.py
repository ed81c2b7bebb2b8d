"""The reconcile scenarios of calls.md: what each sets up, and the one reconcile it measures."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from bench.calls_cases import CASES, Case, manifest, set_path
from bench.calls_harness import harness, mock_server, resource_id
from bench.calls_minimum import Row, measured
from kccgen.contract import CreateServiceAssigned
from kccgen.mockgcp.server import MockServer
from kccgen.runtime.adapter import adapter_for
from kccgen.runtime.reconciler import ANN_FORCE_ACQUIRE

ABSENT_SERVICE_ID = "4242424242424242424"  # a service-generated ID nobody created

Scenario = Callable[[MockServer, Case], Row | None]


def verify_only(
    case: Case, name: str, rid: str, spec: dict[str, Any] | None = None
) -> dict[str, Any]:
    o = manifest(
        case.kind, name, spec if spec is not None else case.spec, {ANN_FORCE_ACQUIRE: "true"}
    )
    o["spec"]["resourceID"] = rid
    return o


def _updated(obj: dict[str, Any], case: Case) -> dict[str, Any]:
    """``obj`` with the case's update applied, as a new generation."""
    assert case.update is not None
    obj = copy.deepcopy(obj)
    set_path(obj["spec"], *case.update)
    obj["metadata"]["generation"] += 1
    return obj


def scenario_create(server: MockServer, case: Case) -> Row:
    with harness(server, case.deps) as h:
        r, calls = h.measure(lambda: h.apply(case.obj()))
    return measured("create", case.kind, r.reason, calls)


def scenario_up_to_date(server: MockServer, case: Case) -> Row:
    with harness(server, case.deps) as h:
        obj = h.ready(case.obj())
        r, calls = h.measure(lambda: h.apply(obj))
    return measured("up-to-date", case.kind, r.reason, calls)


def scenario_update(server: MockServer, case: Case) -> Row | None:
    if case.update is None:
        return None
    with harness(server, case.deps) as h:
        obj = _updated(h.ready(case.obj()), case)
        r, calls = h.measure(lambda: h.apply(obj))
    style = type(adapter_for(case.kind).update).__name__
    return measured(f"update ({style})", case.kind, r.reason, calls)


def scenario_after_update(server: MockServer, case: Case) -> Row | None:
    """The reconcile after an update: the change reached GCP, so nothing is written again."""
    if case.update is None:
        return None
    with harness(server, case.deps) as h:
        updated = h.ready(_updated(h.ready(case.obj()), case))
        r, calls = h.measure(lambda: h.apply(updated))
    return measured("up-to-date after update", case.kind, r.reason, calls)


def scenario_acquire(server: MockServer, case: Case) -> Row:
    """The resource exists (created by another object); a new object names it by resourceID."""
    with harness(server, case.deps) as h:
        seed = h.ready(manifest(case.kind, f"{case.name}-origin", case.spec))
        o = manifest(case.kind, f"{case.name}-adopter", case.spec)
        o["spec"]["resourceID"] = resource_id(seed)
        r, calls = h.measure(lambda: h.apply(o))
    return measured("acquire", case.kind, r.reason, calls)


def scenario_force_acquire_absent(server: MockServer, case: Case) -> Row:
    with harness(server, case.deps) as h:
        rid = (
            ABSENT_SERVICE_ID
            if isinstance(adapter_for(case.kind).create, CreateServiceAssigned)
            else f"{case.name}-absent"
        )
        r, calls = h.measure(lambda: h.apply(verify_only(case, f"{case.name}-verify", rid)))
    return measured("force-acquire (absent)", case.kind, r.reason, calls)


def scenario_force_acquire_equal(server: MockServer, case: Case) -> Row:
    with harness(server, case.deps) as h:
        live = h.ready(case.obj())
        r, calls = h.measure(
            lambda: h.apply(verify_only(case, f"{case.name}-verify", resource_id(live)))
        )
    return measured("force-acquire (equal)", case.kind, r.reason, calls)


def scenario_force_acquire_differs(server: MockServer, case: Case) -> Row | None:
    if case.drift is None:
        return None
    with harness(server, case.deps) as h:
        live = h.ready(case.obj())
        spec = copy.deepcopy(case.spec)
        set_path(spec, *case.drift)
        r, calls = h.measure(
            lambda: h.apply(verify_only(case, f"{case.name}-verify", resource_id(live), spec))
        )
    return measured("force-acquire (differs)", case.kind, r.reason, calls)


def scenario_delete(server: MockServer, case: Case) -> Row:
    with harness(server, case.deps) as h:
        obj = h.ready(case.obj())
        r, calls = h.measure(lambda: h.delete(obj))
    return measured("delete", case.kind, r.reason, calls)


SCENARIOS: tuple[Scenario, ...] = (
    scenario_create,
    scenario_up_to_date,
    scenario_update,
    scenario_after_update,
    scenario_acquire,
    scenario_force_acquire_absent,
    scenario_force_acquire_equal,
    scenario_force_acquire_differs,
    scenario_delete,
)
VERIFY_ONLY: tuple[Scenario, ...] = (
    scenario_force_acquire_absent,
    scenario_force_acquire_equal,
    scenario_force_acquire_differs,
)


def run_all(
    cases: tuple[Case, ...] = CASES, scenarios: tuple[Scenario, ...] = SCENARIOS
) -> list[Row]:
    """Every scenario for every case, scenario by scenario, Kinds in name order."""
    rows: list[Row] = []
    with mock_server() as server:
        for scenario in scenarios:
            for case in sorted(cases, key=lambda c: c.kind):
                row = scenario(server, case)
                if row is not None:
                    rows.append(row)
    return rows
