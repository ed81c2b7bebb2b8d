"""How a derived Kind is named: who picks its ID, which field carries it, and how
each method's parameters are spelled from the identity template.

The rules read the pinned Discovery documents only; the rows below are real
resources whose documents state the fact, so a refreshed document that
rewords one shows up here. The generator (kccgen.generator.ir) and mockgcp
(kccgen.mockgcp.catalog) each apply them on their own; both are checked.
"""

from __future__ import annotations

from functools import cache

import pytest

from kccgen import data_dir
from kccgen.contract import CreateServiceAssigned, CreateWithNameInBody
from kccgen.discovery.document import DiscoveryDoc, iter_resources, parse_discovery
from kccgen.documents import read_document
from kccgen.generator.ir.methods import resolve_methods
from kccgen.generator.ir.params import aligned_templates
from kccgen.generator.spec.kinds import KindConfig
from kccgen.mockgcp.catalog import Catalog


@cache
def _doc(key: str) -> DiscoveryDoc:
    return parse_discovery(read_document(data_dir("specs"), key), key)


@cache
def _catalog() -> Catalog:
    return Catalog(data_dir("specs"))


def _shape(key: str, resource: str) -> object:
    doc = _doc(key)
    res = dict(iter_resources(doc))[resource]
    cfg = KindConfig.model_validate({"kind": "TestKind", "resource": resource})
    methods, _ = resolve_methods("test.yaml", 0, cfg, doc, res)
    return methods.create_shape


@pytest.mark.parametrize(
    ("key", "resource", "field", "service"),
    [
        ("aiplatform.v1", "projects.locations.customJobs", "name", True),  # "Output only. Resource name of a CustomJob."
        ("cloudscheduler.v1", "projects.locations.jobs", "name", False),  # caller-specified full name
        ("compute.v1", "addresses", "name", False),  # {address} is the collection's singular; Address.address is the IP
        ("admin.directory_v1", "orgunits", "orgUnitPath", False),  # customer/{customerId}/orgunits/{+orgUnitPath}
        ("dns.v1", "responsePolicies", "responsePolicyName", False),
        ("bigquery.v2", "datasets", "datasetReference.datasetId", False),
        ("gmail.v1", "users.labels", "id", True),  # users/{userId}/labels/{id}: the service's id
        ("monitoring.v3", "projects.alertPolicies", "name", True),  # "is assigned by Cloud Monitoring"
        ("pubsub.v1", "projects.topics", "name", False),
    ],
)
def test_body_id_field(key: str, resource: str, field: str, service: bool) -> None:
    """mockgcp and the generator find the same field, and agree on who fills it."""
    coll = _catalog().api(key).collections[resource]
    assert coll.id_field == field
    assert bool(coll.service_assigned) is service
    shape = _shape(key, resource)
    if key == "pubsub.v1":
        return  # a PUT: the ID travels in the URL
    if service:
        assert isinstance(shape, CreateServiceAssigned)
        assert shape.id_field == field
    else:
        assert isinstance(shape, CreateWithNameInBody)
        assert shape.name_field == field


@pytest.mark.parametrize(
    ("path", "templates", "target", "want"),
    [
        # bigquery: reserved expansions without a pattern, one segment each
        (
            "projects/{+projectId}/datasets/{+datasetId}",
            (("datasetId", "{datasetId}"), ("projectId", "{projectId}")),
            "projects/{project}/datasets/{dataset}",
            (("datasetId", "{dataset}"), ("projectId", "{project}")),
        ),
        # admin: the path's prefix is dropped, the names taken from the template
        (
            "admin/directory/v1/customer/{customerId}/orgunits/{+orgUnitPath}",
            (("customerId", "{customerId}"), ("orgUnitPath", "{orgUnitPath}")),
            "customer/{customer}/orgunits/{orgunit}",
            (("customerId", "{customer}"), ("orgUnitPath", "{orgunit}")),
        ),
        # cloudasset: a {+name} with no pattern is the whole name; {+parent} what precedes the collection
        ("v1/{+name}", (("name", "{name}"),), "projects/{project}/feeds/{feed}", (("name", "projects/{project}/feeds/{feed}"),)),
        ("v1/{+parent}/feeds", (("parent", "{parent}"),), "projects/{project}/feeds", (("parent", "projects/{project}"),)),
        # a pattern's placeholder names (saas -> saa) follow the template's
        (
            "v1/{+name}",
            (("name", "projects/{project}/locations/{location}/saas/{saa}"),),
            "projects/{project}/locations/{location}/saas/{saas}",
            (("name", "projects/{project}/locations/{location}/saas/{saas}"),),
        ),
        # literals that disagree: left alone
        ("b/{bucket}", (("bucket", "{bucket}"),), "projects/{project}/buckets/{bucket}", None),
    ],
)
def test_aligned_templates(path: str, templates: tuple[tuple[str, str], ...], target: str, want: object) -> None:
    assert aligned_templates(path, templates, target.split("/")) == want
