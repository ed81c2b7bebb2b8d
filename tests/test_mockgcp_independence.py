"""mockgcp stands on the Discovery documents alone, so it can disagree with the generator.

* no module of mockgcp imports the generator, the runtime or generated code,
  and none reads the generator's kind configs (specs/kinds);
* the mockgcp tools do not import the generator or the runtime either;
* the method shapes mockgcp infers for itself, per request, from each method
  (where a create carries the ID and the resource, where an update carries
  the mask, how the method answers), for the collections of recorded traffic.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from kccgen import data_dir
from kccgen.mockgcp.catalog import load_apis
from kccgen.mockgcp.shapes import create_shape, lro_style, update_shape
from tests.conftest import REPO

FORBIDDEN = ("kccgen.generator", "kccgen.runtime", "kccgen.generated")
# What mockgcp may import besides the standard library and itself.
# kccgen.contract is the shared vocabulary (Lro); the inference stays mockgcp's own.
# kccgen.documents (standard library only) says where each pinned document's bytes are.
ALLOWED = ("kccgen.contract", "kccgen.discovery", "kccgen.documents", "kccgen.mockgcp", "yaml", "google.auth", "googleapiclient")


def _imports(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out += [node.module] if node.module != "kccgen" else [f"kccgen.{a.name}" for a in node.names]
    return out


def _under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


@pytest.mark.parametrize("path", sorted((REPO / "mockgcp").rglob("*.py")), ids=lambda p: p.relative_to(REPO).as_posix())
def test_mockgcp_imports_only_discovery_and_itself(path: Path) -> None:
    for name in _imports(path):
        top = name.split(".")[0]
        if top in sys.stdlib_module_names or name in ("kccgen.data_dir", "__future__"):
            continue
        assert _under(name, ALLOWED), f"{path.relative_to(REPO)} imports {name}"


def test_mockgcp_never_reads_kind_configs() -> None:
    for path in sorted((REPO / "mockgcp").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert '"kinds"' not in text and "'kinds'" not in text and "kinds/" not in text, path


@pytest.mark.parametrize("path", sorted((REPO / "tools").glob("mockgcp_*.py")), ids=lambda p: p.name)
def test_mockgcp_tools_do_not_import_the_generator(path: Path) -> None:
    bad = [n for n in _imports(path) if _under(n, FORBIDDEN)]
    assert not bad, f"{path.name} imports {bad}"


APIS, _ = load_apis(data_dir("specs"))




@pytest.mark.parametrize(
    ("api", "resource", "id_from", "id_field", "body", "extra"),
    [
        ("pubsub.v1", "projects.topics", "url", None, "resource", ()),
        ("pubsub.v1", "projects.subscriptions", "url", None, "resource", ()),
        ("pubsub.v1", "projects.snapshots", "url", None, "flat", ("subscription", "tags")),
        ("pubsub.v1", "projects.schemas", "query", "schemaId", "resource", ()),
        ("cloudkms.v1", "projects.locations.keyRings", "query", "keyRingId", "resource", ()),
        ("cloudkms.v1", "projects.locations.keyRings.cryptoKeys", "query", "cryptoKeyId", "resource", ()),
        ("secretmanager.v1", "projects.secrets", "query", "secretId", "resource", ()),
        ("artifactregistry.v1", "projects.locations.repositories", "query", "repositoryId", "resource", ()),
        ("spanner.v1", "projects.instances", "request", "instanceId", "wrapper", ("instance",)),
        ("compute.v1", "networks", "body-name", None, "resource", ()),
        ("compute.v1", "subnetworks", "body-name", None, "resource", ()),
        ("compute.v1", "firewallPolicies", "body-name", None, "resource", ()),  # ?parentId= is not the ID
        ("dns.v1", "managedZones", "body-name", None, "resource", ()),  # ?clientOperationId= is not either
        ("dns.v1", "outboundEndpoints", "query", "outboundEndpointId", "resource", ()),
        ("storage.v1", "buckets", "body-name", None, "resource", ()),
        ("monitoring.v3", "projects.alertPolicies", "service", None, "resource", ()),
        ("monitoring.v3", "projects.notificationChannels", "service", None, "resource", ()),
        ("monitoring.v3", "services", "query", "serviceId", "resource", ()),
    ],
)
def test_create_shapes(api: str, resource: str, id_from: str, id_field: str | None, body: str, extra: tuple[str, ...]) -> None:
    coll = APIS[api].collections[resource]
    create = coll.method("create")
    assert create is not None
    shape = create_shape(APIS[api].doc, coll, create)
    assert (shape.id_from, shape.id_field, shape.body) == (id_from, id_field, body)
    assert (shape.inputs if body == "flat" else (shape.resource_field,) if body == "wrapper" else ()) == extra


@pytest.mark.parametrize(
    ("api", "resource", "verb", "wrapper", "mask_in", "mask", "replace"),
    [
        ("pubsub.v1", "projects.topics", "patch", "topic", "body", "updateMask", False),
        ("pubsub.v1", "projects.snapshots", "patch", "snapshot", "body", "updateMask", False),
        ("cloudkms.v1", "projects.locations.keyRings.cryptoKeys", "patch", None, "query", "updateMask", False),
        ("spanner.v1", "projects.instances", "patch", "instance", "body", "fieldMask", False),
        ("monitoring.v3", "projects.alertPolicies", "patch", None, "query", "updateMask", False),
        ("compute.v1", "subnetworks", "patch", None, "none", None, False),
        ("storage.v1", "buckets", "patch", None, "none", None, False),
        ("storage.v1", "buckets", "update", None, "none", None, True),
        ("dns.v1", "managedZones", "update", None, "none", None, True),
    ],
)
def test_update_shapes(api: str, resource: str, verb: str, wrapper: str | None, mask_in: str, mask: str | None, replace: bool) -> None:
    coll = APIS[api].collections[resource]
    shape = update_shape(APIS[api].doc, coll, coll.methods[verb])
    assert (shape.resource_field, shape.mask_in, shape.mask, shape.replace) == (wrapper, mask_in, mask, replace)


@pytest.mark.parametrize(
    ("api", "resource", "verb", "style"),
    [
        ("pubsub.v1", "projects.topics", "create", "none"),
        ("artifactregistry.v1", "projects.locations.repositories", "create", "google.longrunning"),
        ("spanner.v1", "projects.instances", "patch", "google.longrunning"),
        ("compute.v1", "networks", "insert", "compute"),
        ("dns.v1", "managedZones", "patch", "dns"),
        ("dns.v1", "managedZones", "create", "none"),
        ("storage.v1", "buckets", "delete", "none"),
    ],
)
def test_lro_styles(api: str, resource: str, verb: str, style: str) -> None:
    assert lro_style(APIS[api].doc, APIS[api].collections[resource].methods[verb]) == style
