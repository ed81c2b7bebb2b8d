"""The generated lifecycle suite, on one in-process mockgcp for the whole module.

Every curated Kind that ``docs/verified.json`` lists as passing, and one passing
Kind of each other API, runs its lifecycle here (create, re-apply with one GET,
a one-field update with one GET and one write, delete then 404), so the file
cannot claim an API the code does not verify; ``kccctl verify`` (or
``KCCGEN_TEST_EXHAUSTIVE=1``) runs every Kind. Kinds come from the registry of
generated Kinds, never from a list.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from kccgen.mockgcp import MockServer
from kccgen.runtime.example import Examples
from kccgen.runtime.lifecycle import Lifecycle, RecordingGcp, mutable_field, verified_json
from kccgen.runtime.local import load_manifests
from kccgen.runtime.refs import iter_field, references_of
from kccgen.runtime.registry import kind_index
from tests.conftest import REPO
from tests.support.kinds import representatives
from tests.support.scenarios import lifecycle_on, running_mock

VERIFIED = REPO / "docs" / "verified.json"
KINDS = list(kind_index())


def _api(kind: str) -> str:
    """The Kind's API and version (its module's package), e.g. ``pubsub.v1beta1``."""
    return kind_index()[kind]["module"].rsplit(".", 1)[0]


def _verified() -> dict[str, Any]:
    return dict(json.loads(VERIFIED.read_text(encoding="utf-8"))["kinds"])


PASSING = representatives([k for k in KINDS if _verified().get(k, {}).get("pass")], str, _api)


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    with running_mock() as s:
        yield s


@pytest.fixture(scope="module")
def lifecycle(server: MockServer) -> Lifecycle:
    return lifecycle_on(server)


@pytest.mark.parametrize("kind", PASSING)
def test_verified_kind_passes_its_lifecycle(kind: str, lifecycle: Lifecycle) -> None:
    out = lifecycle.run(kind)
    assert out.passed, f"{kind}: {out.step}: {out.message}"
    assert out.update_field == _verified()[kind].get("updateField", ""), "verified.json names another update field"


def test_verified_json_names_only_generated_kinds_and_is_canonical() -> None:
    text = VERIFIED.read_text(encoding="utf-8")
    data = json.loads(text)
    assert sorted(data["kinds"]) == sorted(set(data["kinds"]) & set(KINDS)), "verified.json names Kinds that are not generated"
    assert json.dumps(data, indent=1, sort_keys=True) + "\n" == text, "verified.json is not in kccctl verify --write's form"


@pytest.mark.parametrize("kind", representatives(KINDS, str, _api))
def test_example_validates_and_lists_dependencies_first(kind: str, tmp_path: Any) -> None:
    import yaml

    docs = Examples("p-example").manifests(kind)
    assert docs[-1]["kind"] == kind
    f = tmp_path / "example.yaml"
    f.write_text(yaml.safe_dump_all(docs), encoding="utf-8")
    loaded = load_manifests([f])  # each document validated by its Kind's model
    seen: set[tuple[str, str]] = set()
    for obj in loaded:
        for target, name in _named_targets(obj):
            assert (target, name) in seen, f"{obj['kind']} refers to {target} {name} before its example"
        seen.add((obj["kind"], obj["metadata"]["name"]))


def _named_targets(obj: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(Kind, name) of every reference by name at the Kind's reference paths."""
    for f in references_of(obj["kind"]):
        for _where, value in iter_field(obj.get("spec") or {}, f.path):
            for ref in value if isinstance(value, list) else [value]:
                if isinstance(ref, dict) and isinstance(ref.get("name"), str):
                    yield f.target, ref["name"]


def test_a_refused_update_fails_the_update_step(server: MockServer, lifecycle: Lifecycle) -> None:
    kind = next(k for k in PASSING if mutable_field(k) is not None)
    rule = server.engine.faults.add(method="*.patch", status=400, message="mockgcp: refused for the test")
    rule2 = server.engine.faults.add(method="*.update", status=400, message="mockgcp: refused for the test")
    try:
        out = lifecycle.run(kind)
    finally:
        server.engine.faults.rules.remove(rule)
        server.engine.faults.rules.remove(rule2)
    assert not out.passed
    assert out.step == "update"
    assert "refused for the test" in out.message
    assert '"step": "update"' in verified_json([out])


def test_a_resource_named_after_a_python_keyword_is_reached(server: MockServer) -> None:
    """The Discovery client spells networkconnectivity's ``projects.locations.global`` as ``global_``."""
    gcp = RecordingGcp(server.base_url, host_paths=True)
    hubs = gcp._resource("networkconnectivity.v1", ("projects", "locations", "global", "hubs"))
    assert callable(hubs.get)


def test_a_full_name_from_the_service_is_the_external_ref_even_for_a_short_id_adapter() -> None:
    """Derived adapters can expect a short ID where the service answers with the full name."""
    from dataclasses import replace

    from kccgen.runtime.adapter import adapter_for
    from kccgen.runtime.identity import identity_for
    from kccgen.runtime.reconciler import Reconciler
    from kccgen.runtime.refs import InMemoryStore

    kind = next(k for k in KINDS if len(identity_for(k).params) > 1)
    ident = identity_for(kind)
    values = {p: f"v{i}" for i, p in enumerate(ident.params)}
    full = ident.format(**values)
    a = replace(adapter_for(kind), name_is_full=False)
    rec = Reconciler(RecordingGcp(None), InMemoryStore())
    assert rec._external_from(a, {"name": full}, values) == full
    assert rec._external_from(a, {"name": values[a.id_param]}, values) == full
