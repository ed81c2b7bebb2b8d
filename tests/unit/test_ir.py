"""IR stages on the pinned specs: identity, method shapes, KRM projection."""

from __future__ import annotations

import pytest

from kccgen.contract import (
    CreateAtPath,
    CreateWithIdParam,
    CreateWithNameInBody,
    CreateWrapped,
    FingerprintGuard,
    MetagenerationGuard,
    NoGuard,
    UpdateMaskInBody,
    UpdateMaskInQuery,
)
from kccgen.discovery.behaviours import Behaviour
from kccgen.discovery.paths import pattern_template, rest_template
from kccgen.generator.ir.model import IR
from tests.support.kinds import CURATED_KINDS, GENERATED_KINDS, configured_kinds, facts, shape


def test_the_ir_has_every_configured_kind(ir: IR) -> None:
    assert tuple(sorted(k.kind for k in ir.kinds)) == GENERATED_KINDS
    assert set(configured_kinds()) <= set(GENERATED_KINDS)


def _id_transport(c: object) -> str | None:
    if isinstance(c, CreateAtPath):
        return "path"
    if isinstance(c, CreateWithIdParam):
        return c.id_param
    if isinstance(c, CreateWrapped):
        return c.id_field
    if isinstance(c, CreateWithNameInBody):
        return c.name_field
    return None


def _mask(u: object) -> str | None:
    if isinstance(u, UpdateMaskInQuery):
        return u.mask_param
    if isinstance(u, UpdateMaskInBody):
        return u.mask_field
    return None


@pytest.mark.parametrize("kind", CURATED_KINDS)
def test_method_shapes(ir: IR, kind: str) -> None:
    """docs/design.md §3, in kccgen.contract terms: tests/kinds/<Kind>/shape.yaml."""
    m = ir.kind(kind).methods
    want = shape(kind)
    lro = lambda mi: None if mi is None else mi.lro.name  # noqa: E731
    got = (type(m.create_shape).__name__, _id_transport(m.create_shape), type(m.update_shape).__name__, _mask(m.update_shape))
    assert got == (want.create, want.idTransport, want.update, want.mask)
    assert (lro(m.create), lro(m.update), lro(m.delete)) == (want.lro.create, want.lro.update, want.lro.delete)


def test_shape_details(ir: IR) -> None:
    guard = lambda kind: getattr(ir.kind(kind).methods.update_shape, "guard", None)  # noqa: E731
    assert guard("ComputeSubnetwork") == FingerprintGuard("fingerprint")
    assert guard("ComputeNetwork") == NoGuard()  # compute Network has no fingerprint field
    assert guard("StorageBucket") == MetagenerationGuard("ifMetagenerationMatch", "metageneration")
    spanner = ir.kind("SpannerInstance").methods
    assert isinstance(spanner.create_shape, CreateWrapped) and spanner.create_shape.resource_field == "instance"
    assert isinstance(spanner.update_shape, UpdateMaskInBody) and spanner.update_shape.resource_field == "instance"
    topic = ir.kind("PubSubTopic").methods.update_shape
    assert isinstance(topic, UpdateMaskInBody) and topic.resource_field == "topic"
    bucket = ir.kind("StorageBucket").methods.create
    assert bucket is not None and bucket.http_method == "POST"


@pytest.mark.parametrize("kind", CURATED_KINDS)
def test_identity_templates(ir: IR, kind: str) -> None:
    ident = ir.kind(kind).identity
    assert ident.template == shape(kind).template
    assert ident.template_source == "asset-inventory"
    assert ident.id_param.krm_field == "resourceID"


def test_identity_roles(ir: IR) -> None:
    ck = ir.kind("KMSCryptoKey").identity
    assert [(p.name, p.role, p.krm_field, p.ref_kind, p.covered_by) for p in ck.params] == [
        ("project", "parent", "projectRef", "Project", "keyRingRef"),
        ("location", "location", "location", None, "keyRingRef"),
        ("keyRing", "parent", "keyRingRef", "KMSKeyRing", None),
        ("cryptoKey", "id", "resourceID", None, None),
    ]
    # keyRingRef names project and location, so the spec has neither (as in KCC).
    spec = {f.name for f in ir.kind("KMSCryptoKey").spec.fields}
    assert {"keyRingRef", "resourceID"} <= spec and not {"projectRef", "location"} & spec
    sub = ir.kind("ComputeSubnetwork").identity
    assert [p.krm_field for p in sub.params] == ["projectRef", "region", "resourceID"]
    bucket = ir.kind("StorageBucket").identity
    assert [(p.krm_field, p.in_template) for p in bucket.params] == [("projectRef", False), ("resourceID", True)]


def test_service_generated_ids(ir: IR) -> None:
    gen = sorted(k.kind for k in ir.kinds if k.identity.id_generation == "service" and k.kind in CURATED_KINDS)
    assert gen == [k for k in CURATED_KINDS if shape(k).idTransport is None]
    assert gen == [k for k in CURATED_KINDS if facts(k).create.nameFromAnswer]


def test_disagreements_reported(ir: IR) -> None:
    """Every asset-table/Discovery disagreement lands in the diagnostics."""
    bucket = ir.kind("StorageBucket").identity
    assert any("b/{bucket}" in d for d in bucket.disagreements)
    assert any("StorageBucket" in d and "b/{bucket}" in d for d in ir.diagnostics)
    # among the curated Kinds only StorageBucket disagrees (derived Kinds without an
    # asset-inventory row use their REST path, which kccgen coverage lists)
    curated = [k for k in ir.kinds if k.kind in CURATED_KINDS]
    assert [k.kind for k in curated if k.identity.disagreements] == ["StorageBucket"]


def test_rest_and_pattern_templates() -> None:
    assert rest_template("v1/projects/{projectsId}/topics/{topicsId}") == "projects/{project}/topics/{topic}"
    assert rest_template("dns/v1/projects/{project}/managedZones/{managedZone}") == "projects/{project}/managedZones/{managedZone}"
    assert rest_template("b/{bucket}") == "b/{bucket}"
    assert rest_template("projects/{project}/global/networks/{network}") == "projects/{project}/global/networks/{network}"
    assert pattern_template("^projects/[^/]+/locations/[^/]+/keyRings/[^/]+$") == "projects/{project}/locations/{location}/keyRings/{keyRing}"
    assert pattern_template("^projects/[^/]+/(foo|bar)$") is None


def test_output_only_fields_go_to_observed_state(ir: IR) -> None:
    topic = ir.kind("PubSubTopic")
    spec = {f.name for f in topic.spec.fields}
    observed = {f.name for f in topic.observed_state.fields}
    assert "state" in observed and "state" not in spec
    assert "name" not in spec and {"resourceID", "projectRef"} <= spec
    for k in ir.kinds:
        for f in k.spec.fields:
            assert Behaviour.OUTPUT_ONLY not in f.behaviours, (k.kind, f.name)
        for f in k.observed_state.fields:
            assert f.output_only or f.type.kind in ("object", "array", "map"), (k.kind, f.name)


def test_nested_output_only_is_split(ir: IR) -> None:
    """A nested message keeps its inputs in spec and its outputs in observedState."""
    topic = ir.kind("PubSubTopic")
    models = topic.krm_models
    names = {o.name for o in models.objects}
    assert "AwsKinesis" in names and "AwsKinesisObservedState" in names
    assert "state" not in {f.name for f in models.object("AwsKinesis").fields}
    assert {f.name for f in models.object("AwsKinesisObservedState").fields} == {"state"}


def test_storage_overrides_carry_reason(ir: IR) -> None:
    b = ir.kind("StorageBucket")
    etag = next(f for f in b.api_fields if f.name == "etag")
    assert etag.output_only
    assert any(fact.source.startswith("override:specs/kinds/storage.yaml") for fact in etag.facts)
    assert "etag" not in {f.name for f in b.spec.fields}


def test_recursive_and_shared_schemas(ir: IR) -> None:
    """Shared API schemas are emitted once per service, not per Kind."""
    pubsub = [m for m in ir.api_modules if m.doc_key == "pubsub.v1"]
    assert len(pubsub) == 1
    users = [k.kind for k in ir.kinds if k.api == pubsub[0]]
    assert tuple(sorted(users)) == configured_kinds("pubsub")


def test_int64_and_enums(ir: IR) -> None:
    sub = ir.kind("ComputeSubnetwork").api.models.object("Subnetwork")
    fid = next(f for f in sub.fields if f.name == "id")
    assert (fid.type.kind, fid.type.format) == ("string", "uint64")
    topic = ir.kind("PubSubTopic").api.models
    state = next(e for e in topic.enums if e.name == "TopicState")
    assert [v.value for v in state.values][:2] == ["STATE_UNSPECIFIED", "ACTIVE"]
    assert all(v.description for v in state.values)


def test_update_allowlist_phrasings() -> None:
    """compute networks.patch said it two ways over the years; both limit the update."""
    from kccgen.generator.ir.methods import _ALLOWLIST

    new = _ALLOWLIST.search("Patches the specified network. Only routingConfig can be modified.")
    old = _ALLOWLIST.search("Only the following fields can be modified: routingConfig.routingMode.")
    both = _ALLOWLIST.search("Only foo, bar and baz can be updated.")
    assert new is not None and (new.group(1) or new.group(2)) == "routingConfig"
    assert old is not None and (old.group(1) or old.group(2)).rstrip(".") == "routingConfig.routingMode"
    assert both is not None and (both.group(1) or both.group(2)) == "foo, bar and baz"
    assert _ALLOWLIST.search("Only certain fields can be updated with a patch request") is None


def test_allowlisted_paths() -> None:
    from kccgen.generator.ir.mutability import _allowed

    allow = ("routingConfig.routingMode",)
    assert _allowed("routingConfig.routingMode", allow)
    assert _allowed("routingConfig", allow)  # holds the allowed field
    assert not _allowed("routingConfig.bgpInterRegionCost", allow)
    assert not _allowed("mtu", allow)
    assert _allowed("routingConfig.bgpInterRegionCost", ("routingConfig",))
