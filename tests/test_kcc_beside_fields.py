"""Config Connector's projectRef and location beside a parent ref that covers them.

A ServiceLevelObjective lives in a service (``projects/P/services/S/...``), so
its serviceRef names the project too; Config Connector's Kind also has
spec.projectRef, and its samples give the service as a bare ID
(``serviceRef: {external: my-service}``). The field beside the ref is optional,
completes a bare ID, and must agree with a ref that names its own parent.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kccgen.runtime.identity import identity_for
from tests.support.scenarios import PROJECT, Harness, harness, kcc_object, path_of


@pytest.fixture
def h() -> Iterator[Harness]:
    with harness(host_paths=True) as hh:
        yield hh


def _slo(service_ref: dict[str, Any], project_ref: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "serviceRef": service_ref,
        "goal": 0.9,
        "rollingPeriod": "86400s",
        "serviceLevelIndicator": {"requestBased": {"distributionCut": {"distributionFilter": 'metric.type="x"', "range": {"min": 1, "max": 2}}}},
    }
    if project_ref is not None:
        spec["projectRef"] = project_ref
    return kcc_object("MonitoringServiceLevelObjective", "slo", spec)


def _service(h: Harness) -> None:
    r = h.reconcile(kcc_object("MonitoringService", "svc", {"projectRef": {"external": f"projects/{PROJECT}"}, "displayName": "svc"}))
    assert r.ready, r.message


def test_the_generated_identity_knows_the_fields_beside_its_covering_ref() -> None:
    ident = identity_for("MonitoringServiceLevelObjective")
    assert ("project", "projectRef", "Project") in ident.beside
    assert ("location", "location", "") in identity_for("PrivateCACertificateAuthority").beside


def test_a_bare_service_id_is_completed_by_projectref(h: Harness) -> None:
    _service(h)
    since = h.mark()
    r = h.reconcile(_slo({"external": "svc"}, {"external": f"projects/{PROJECT}"}))
    assert r.ready, r.message
    assert r.obj["status"]["externalRef"] == f"projects/{PROJECT}/services/svc/serviceLevelObjectives/slo"
    (create,) = [e for e in h.writes(since) if e.method == "POST"]
    assert path_of(create).endswith(f"projects/{PROJECT}/services/svc/serviceLevelObjectives")
    assert "projectRef" not in (create.request_json or {}), "a KRM-only field leaked into the request"


def test_a_bare_service_id_takes_the_namespace_project_without_projectref(h: Harness) -> None:
    _service(h)
    r = h.reconcile(_slo({"external": "svc"}))
    assert r.ready, r.message
    assert r.obj["status"]["externalRef"].startswith(f"projects/{PROJECT}/services/svc/")


def test_projectref_that_disagrees_with_the_service_is_refused_before_any_call(h: Harness) -> None:
    _service(h)
    since = h.mark()
    r = h.reconcile(_slo({"name": "svc"}, {"external": "projects/another"}))
    assert not r.ready
    assert "spec.projectRef" in r.message and "spec.serviceRef" in r.message and "must agree" in r.message
    assert h.writes(since) == []
