"""A create's required query parameters that name nothing of the identity.

compute's ``nodeGroups.insert?initialNodeCount=``, storage's
``hmacKeys.create?serviceAccountEmail=`` and site verification's
``?verificationMethod=`` are values of the new resource: create inputs the spec
gives (Config Connector's ComputeNodeGroup calls the first ``size`` or
``initialSize``). drive's required ``?requestId=`` is an idempotency key the
runtime fills with the create's one-time token. A parameter the object gives no
value for fails that object with its name, never the whole apply.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from typing import Any

import pytest

from kccgen.contract import REQUEST_TOKEN, Call, CreateInput, CreateServiceAssigned, Where
from kccgen.discovery.document import parse_discovery
from kccgen.documents import read_document
from kccgen.runtime.adapter import adapter_for, policy_for
from kccgen.runtime.admission import admission_errors
from kccgen.runtime.gcp import GcpError
from kccgen.runtime.identity import identity_for
from kccgen.runtime.reconciler import ANN_CREATE_PENDING
from kccgen.runtime.registry import kind_index
from tests.conftest import REPO
from tests.support.scenarios import Harness, harness, kcc_object, path_of, query_of

_PH = re.compile(r"\{(\w+)\}")


@pytest.fixture
def h() -> Iterator[Harness]:
    with harness(host_paths=True) as hh:
        yield hh


def _node_template(h: Harness) -> None:
    h.ready(
        kcc_object(
            "ComputeNodeTemplate", "tpl", {"region": "us-central1", "nodeType": "n1-node-96-624"}
        )
    )


def test_every_required_query_parameter_of_a_create_has_a_value_the_runtime_knows() -> None:
    """Over every generated Kind: a create's required query parameter is templated only
    from what the runtime holds (the identity, the project, the request token), else it
    is a create input. Before: nodeGroups.insert spelled ``{initialNodeCount}`` and the
    apply crashed with a KeyError."""
    docs: dict[str, Any] = {}
    unfillable = []
    for kind in sorted(kind_index()):
        if policy_for(kind) is not None:
            continue  # an IAM Kind: a policy, no create
        a = adapter_for(kind)
        call = getattr(a.create, "call", None)
        if call is None:
            continue
        doc = (
            docs[a.doc]
            if a.doc in docs
            else docs.setdefault(
                a.doc, parse_discovery(read_document(REPO / "specs", a.doc), a.doc)
            )
        )
        res = doc.resource(".".join(call.resource or a.resource), "", "")
        raw = res.methods[call.method]
        ident = identity_for(kind)
        known = (
            set(_PH.findall(ident.template))
            | {p for p, _f, _t in ident.spec_fields}
            | {"project", "projectNumber", REQUEST_TOKEN}
        )
        for pname, tpl in call.params:
            p = raw.parameters.get(pname)
            if (
                p is not None
                and p.location == "query"
                and p.required
                and not set(_PH.findall(tpl)) <= known
            ):
                unfillable.append(f"{kind}: ?{pname}={tpl}")
    assert unfillable == []


def test_compute_node_group_takes_config_connectors_size_as_the_create_s_initial_node_count(
    h: Harness,
) -> None:
    a = adapter_for("ComputeNodeGroup")
    assert CreateInput("initialNodeCount", Where.QUERY) in a.create.inputs
    assert "initialNodeCount" not in dict(a.create.call.params)
    _node_template(h)
    # Config Connector's sample (config/samples/resources/computenodegroup): size, not initialNodeCount
    obj = kcc_object(
        "ComputeNodeGroup",
        "ng",
        {"zone": "us-central1-b", "size": 1, "nodeTemplateRef": {"name": "tpl"}},
    )
    since = h.mark()
    obj = h.ready(obj)
    (create,) = h.writes(since)
    # as Config Connector's recording sends it: POST .../nodeGroups?initialNodeCount=1
    assert create.method == "POST" and path_of(create).endswith("/zones/us-central1-b/nodeGroups")
    assert query_of(create)["initialNodeCount"] == ["1"]
    assert "initialNodeCount" not in create.request_json and "size" not in create.request_json
    since = h.mark()
    assert (
        h.reconcile(obj).ready and h.writes(since) == []
    )  # the count is not read back: no phantom change
    # GCP never reports the count back: a changed size is refused at admission (its CRD's
    # rule, as kccctl and the API server read it), never taken and lost without a word
    changed = copy.deepcopy(obj)
    changed["spec"]["size"] = 3
    errors = admission_errors(changed, obj)
    assert any("size is immutable" in e for e in errors), errors
    assert admission_errors(copy.deepcopy(obj), obj) == []
    assert h.delete(obj).deleted


def test_a_node_group_without_a_count_is_refused_by_its_crd_and_without_a_crash_by_the_runtime(
    h: Harness,
) -> None:
    _node_template(h)
    obj = kcc_object(
        "ComputeNodeGroup", "ng", {"zone": "us-central1-b", "nodeTemplateRef": {"name": "tpl"}}
    )
    since = h.mark()
    assert any(
        "initialNodeCount or size or initialSize is required" in e for e in admission_errors(obj)
    ), admission_errors(obj)
    r = h.reconcile(
        obj
    )  # past admission (a test's store has none): the object fails, the run goes on
    assert not r.ready and r.reason == "UpdateFailed"
    assert "initialNodeCount" in r.message, r.message
    assert h.writes(since) == []


def test_a_parameter_the_object_gives_no_value_for_is_a_gcp_error_naming_it() -> None:
    from kccgen.runtime.gcp import Gcp

    a = adapter_for("ComputeNodeGroup")
    bad = Call("insert", (*a.create.call.params, ("initialNodeCount", "{initialNodeCount}")))
    with pytest.raises(GcpError) as e:
        Gcp("http://127.0.0.1:9", host_paths=True, retries=0).call(
            a, bad, {"project": "p", "zone": "z"}, {}
        )
    assert "initialNodeCount" in str(e.value) and "no value" in str(e.value)


def test_storage_hmac_key_is_made_by_a_create_without_a_body_and_its_secret_is_kept_nowhere(
    h: Harness,
) -> None:
    a = adapter_for("StorageHMACKey")
    assert isinstance(a.create, CreateServiceAssigned) and a.create.answer_field == "metadata"
    obj = kcc_object(
        "StorageHMACKey",
        "key",
        {"projectId": "p", "serviceAccountEmail": "sa@p.iam.gserviceaccount.com"},
    )
    since = h.mark()
    obj = h.ready(obj)
    (create,) = h.writes(since)
    assert (
        create.method == "POST"
        and path_of(create).endswith("/hmacKeys")
        and not create.request_json
    )
    assert query_of(create)["serviceAccountEmail"] == ["sa@p.iam.gserviceaccount.com"]
    assert obj["status"]["externalRef"].rsplit("/", 1)[-1] and "secret" not in str(obj["status"])
    since = h.mark()
    assert h.reconcile(obj).ready and h.writes(since) == []
    assert h.delete(obj).deleted


def test_drive_s_request_id_is_the_create_s_one_time_token(h: Harness) -> None:
    """Sent again after a lost answer, the same request is the same ID to the service."""
    a = adapter_for("DriveDrive")
    assert dict(a.create.call.params)["requestId"] == "{" + REQUEST_TOKEN + "}"
    h.server.engine.faults.add(method="drive.drives.create", drop_answer=True, times=1)
    obj = kcc_object("DriveDrive", "d", {"name": "team"})
    since = h.mark()
    r = h.reconcile(obj)
    assert not r.ready
    (create,) = h.writes(since)
    token = r.obj["metadata"]["annotations"][ANN_CREATE_PENDING].split(" ")[1]
    assert query_of(create)["requestId"] == [token]
