"""Config Connector's name for the location field, and its default, in what is generated.

RedisInstance (and the other Kinds whose KCC spec says ``region``) take the
location in ``spec.region``; APIGatewayAPI (KCC has no location: the API lives
at ``global`` only) takes it optionally, ``global`` when unset. The CRDs say so,
the identity resolves so, and the runtime applies such objects on mockgcp.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kccgen.runtime.identity import identity_for
from kccgen.runtime.lifecycle import Lifecycle
from kccgen.runtime.refs import InMemoryStore, identity_from_spec
from tests.support.scenarios import lifecycle_on, running_mock

REPO = Path(__file__).resolve().parent.parent


def _spec_schema(plural_group: str) -> dict[str, Any]:
    path = REPO / "generated" / "crds" / f"{plural_group}.yaml"
    crd = yaml.safe_load(path.read_text())
    (version,) = [v for v in crd["spec"]["versions"] if v.get("storage")]
    spec: dict[str, Any] = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    return spec


def _obj(kind: str, name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "x/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


@pytest.mark.parametrize(
    "kind",
    [
        "RedisInstance",
        "CloudFunctionsFunction",
        "MemcacheInstance",
        "VertexAIDataset",
        "DataCatalogTaxonomy",
    ],
)
def test_the_location_is_config_connectors_region(kind: str) -> None:
    plural = {
        "RedisInstance": "redisinstances.redis",
        "CloudFunctionsFunction": "cloudfunctionsfunctions.cloudfunctions",
        "MemcacheInstance": "memcacheinstances.memcache",
        "VertexAIDataset": "vertexaidatasets.vertexai",
        "DataCatalogTaxonomy": "datacatalogtaxonomies.datacatalog",
    }[kind]
    spec = _spec_schema(plural + ".cnrm.cloud.google.com")
    assert "region" in spec["properties"] and "location" not in spec["properties"]
    assert "region" in spec["required"]
    assert ("location", "region", "") in identity_for(kind).spec_fields


def test_an_object_without_a_location_is_at_global() -> None:
    spec = _spec_schema("apigatewayapis.apigateway.cnrm.cloud.google.com")
    assert "location" in spec["properties"] and "location" not in spec.get("required", [])
    obj = _obj("APIGatewayAPI", "my-api", projectRef={"external": "projects/p"})
    assert identity_from_spec(obj, InMemoryStore()) == "projects/p/locations/global/apis/my-api"
    # a location given is the one used
    obj["spec"]["location"] = "elsewhere"
    assert identity_from_spec(obj, InMemoryStore()) == "projects/p/locations/elsewhere/apis/my-api"
    # a Kind KCC requires the location of has no default
    assert dict(identity_for("RedisInstance").defaults) == {}


@pytest.fixture(scope="module")
def lifecycle() -> Iterator[Lifecycle]:
    with running_mock() as server:
        yield lifecycle_on(server, "kcc-location")


@pytest.mark.parametrize(
    ("kind", "spec", "location"),
    [
        (
            "RedisInstance",
            {"region": "us-central1", "tier": "BASIC", "memorySizeGb": 1},
            "us-central1",
        ),
        ("APIGatewayAPI", {"displayName": "an API"}, "global"),
    ],
)
def test_such_an_object_goes_through_the_lifecycle_on_mockgcp(
    lifecycle: Lifecycle,
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    spec: dict[str, Any],
    location: str,
) -> None:
    def objects(project: str) -> list[dict[str, Any]]:
        return [_obj(kind, "sample", projectRef={"external": f"projects/{project}"}, **spec)]

    seen: list[dict[str, str]] = []
    call = lifecycle.gcp.call

    def recording(a: Any, c: Any, values: dict[str, str], *args: Any, **kw: Any) -> Any:
        seen.append(dict(values))
        return call(a, c, values, *args, **kw)

    monkeypatch.setattr(lifecycle.gcp, "call", recording)
    out = lifecycle.run_objects(kind, objects, 0)
    assert (out.passed, out.step, out.message) == (True, out.step, "")
    # every request named the object at the location its spec gives, or at the default
    assert seen and {v.get("location") for v in seen} == {location}


@pytest.mark.parametrize(
    "kind", ["RedisInstance", "APIGatewayAPI", "APIKeysKey", "CertificateManagerCertificateMap"]
)
def test_the_kinds_own_example_passes_the_lifecycle(lifecycle: Lifecycle, kind: str) -> None:
    out = lifecycle.run(kind)
    assert (out.passed, out.step, out.message) == (True, out.step, "")
