"""The validating admission webhook (runtime/webhook.py), over real HTTPS.

Every review goes through the aiohttp server with a client that trusts only
the generated CA. The AdmissionReviews are shaped as an API server sends them
(tests/support/admission_reviews.py); those in ``test_recorded_*`` carry the
objects a real API server stored (envtest: uid, resourceVersion, generation,
managedFields), the others objects the Reconciler wrote against mockgcp.
"""

from __future__ import annotations

import asyncio
import copy
import datetime
import http.client
import ipaddress
import json
import socket
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec

from kccgen.runtime.gcp import Gcp
from kccgen.runtime.refs import InMemoryStore
from kccgen.runtime.webhook import (
    CA_BUNDLE_PATCH_TYPE,
    BadReview,
    Certificates,
    Webhook,
    ca_bundle_patch,
    make_certificates,
    start,
)
from tests.support.admission_reviews import Recorder, admission_review
from tests.support.envtest import Kube
from tests.support.scenarios import (
    FORCE_ACQUIRE,
    NAMESPACE,
    Harness,
    annotate,
    harness,
    manifest,
    namespace_object,
    with_spec,
)

BUCKET = "kccgen-scenario-bucket"  # the StorageBucket fixture's name: its ID in mockgcp
SUB = "projects/p/subscriptions/sub1"


# --- the server -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certs() -> Certificates:
    return make_certificates(["localhost", "127.0.0.1"])


def trusting(certs: Certificates) -> ssl.SSLContext:
    """A client that trusts the generated CA and nothing else."""
    return ssl.create_default_context(cadata=certs.ca_pem.decode())  # cadata given: no system CAs


@contextmanager
def serving(webhook: Webhook, certs: Certificates) -> Iterator[int]:
    """The webhook's HTTPS server on a free 127.0.0.1 port, in its own event loop."""
    loop = asyncio.new_event_loop()
    t = threading.Thread(target=loop.run_forever, name="webhook-loop", daemon=True)
    t.start()
    runner, port = asyncio.run_coroutine_threadsafe(start(webhook, certs, "127.0.0.1", 0), loop).result(30)
    try:
        yield port
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        t.join(10)
        loop.close()


def post(port: int, certs: Certificates, body: bytes | dict[str, Any], path: str = "/validate") -> tuple[int, Any]:
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=trusting(certs), timeout=30)
    try:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        conn.request("POST", path, body=data, headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        raw = r.read()
        kind = r.getheader("Content-Type") or ""
        return r.status, json.loads(raw) if kind.startswith("application/json") else raw.decode()
    finally:
        conn.close()


def ask(webhook: Webhook, certs: Certificates, review: dict[str, Any]) -> dict[str, Any]:
    """The AdmissionReview response, over HTTPS; checks the envelope."""
    with serving(webhook, certs) as port:
        status, answer = post(port, certs, review)
    assert status == 200, answer
    assert answer["apiVersion"] == "admission.k8s.io/v1" and answer["kind"] == "AdmissionReview", answer
    response: dict[str, Any] = answer["response"]
    assert response["uid"] == review["request"]["uid"]
    return response


def refused(response: dict[str, Any]) -> str:
    """The refusal's message (asserting it is a 403 refusal)."""
    assert response["allowed"] is False, response
    assert response["status"]["code"] == 403 and response["status"]["reason"] == "Forbidden", response
    return str(response["status"]["message"])


def admitted(response: dict[str, Any]) -> list[str]:
    """The warnings of an admitted review."""
    assert response["allowed"] is True, response
    assert "status" not in response, response
    return list(response.get("warnings") or [])


def store() -> InMemoryStore:
    return InMemoryStore([namespace_object()], default_namespace=NAMESPACE)


def acquired(obj: dict[str, Any], external_ref: str) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["metadata"].update(uid="3f1c9a52-7d0e-4a43-9b8e-2f6d0c1e5a77", resourceVersion="412")
    out["status"] = {"externalRef": external_ref, "observedGeneration": out["metadata"]["generation"]}
    return out


def bucket(**spec: Any) -> dict[str, Any]:
    return acquired(manifest("StorageBucket", **spec), BUCKET)


def topic(**spec: Any) -> dict[str, Any]:
    return acquired(manifest("PubSubTopic", **spec), "projects/p/topics/topic1")


# --- certificates and TLS -----------------------------------------------------------------


def test_certificates_are_a_p256_ca_and_a_serving_certificate(certs: Certificates) -> None:
    ca = x509.load_pem_x509_certificate(certs.ca_pem)
    leaf = x509.load_pem_x509_certificate(certs.cert_pem)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True
    assert leaf.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is False
    leaf.verify_directly_issued_by(ca)
    for c in (ca, leaf):
        key = c.public_key()
        assert isinstance(key, ec.EllipticCurvePublicKey) and key.curve.name == "secp256r1"
        days = (c.not_valid_after_utc - c.not_valid_before_utc) / datetime.timedelta(days=1)
        assert 365 <= days <= 366, days
        assert c.not_valid_before_utc <= datetime.datetime.now(datetime.UTC) < c.not_valid_after_utc
    sans = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == ["localhost"]
    assert sans.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    eku = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert x509.oid.ExtendedKeyUsageOID.SERVER_AUTH in eku
    key_pem = certs.key_pem.decode()
    assert key_pem.startswith("-----BEGIN PRIVATE KEY-----"), "PKCS#8, unencrypted"


def test_certificates_are_new_each_time() -> None:
    a, b = make_certificates(["w.example"]), make_certificates(["w.example"])
    assert a.ca_pem != b.ca_pem and a.key_pem != b.key_pem
    with pytest.raises(ValueError):
        make_certificates([])


def _handshake(port: int, ctx: ssl.SSLContext, server_hostname: str) -> dict[str, Any]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw, ctx.wrap_socket(raw, server_hostname=server_hostname) as tls:
        cert = tls.getpeercert()
        assert cert is not None
        return dict(cert)


def test_https_serves_healthz_to_a_client_trusting_the_ca(certs: Certificates) -> None:
    with serving(Webhook(store()), certs) as port:
        for host in ("localhost", "127.0.0.1"):  # hostname verification: DNS and IP SANs
            cert = _handshake(port, trusting(certs), host)
            assert ("DNS", "localhost") in cert["subjectAltName"] and ("IP Address", "127.0.0.1") in cert["subjectAltName"]
        conn = http.client.HTTPSConnection("localhost", port, context=trusting(certs), timeout=10)
        conn.request("GET", "/healthz")
        r = conn.getresponse()
        assert (r.status, r.read()) == (200, b"ok")
        conn.close()


def test_an_untrusted_client_sees_a_verification_failure(certs: Certificates) -> None:
    other_ca = make_certificates(["localhost"])  # another CA: same names, not ours
    with serving(Webhook(store()), certs) as port:
        with pytest.raises(ssl.SSLCertVerificationError, match=r"unable to get local issuer|self.signed|certificate verify failed"):
            _handshake(port, ssl.create_default_context(), "localhost")  # the system's CAs only
        with pytest.raises(ssl.SSLCertVerificationError):
            _handshake(port, trusting(other_ca), "localhost")
        with pytest.raises(ssl.SSLCertVerificationError, match=r"[Hh]ostname|IP address mismatch|doesn't match"):
            _handshake(port, trusting(certs), "webhook.kccgen-system.svc")  # not one of its names


def test_ca_bundle_patch_sets_every_webhook_by_name(certs: Certificates) -> None:
    import base64

    body = ca_bundle_patch(certs.ca_pem, ["a.kccgen.dev", "b.kccgen.dev"])
    assert [w["name"] for w in body["webhooks"]] == ["a.kccgen.dev", "b.kccgen.dev"]
    for w in body["webhooks"]:
        assert set(w) == {"name", "clientConfig"} and set(w["clientConfig"]) == {"caBundle"}
        assert base64.b64decode(w["clientConfig"]["caBundle"]) == certs.ca_pem
    assert CA_BUNDLE_PATCH_TYPE == "application/strategic-merge-patch+json"  # the list merges by name
    with pytest.raises(ValueError):
        ca_bundle_patch(certs.ca_pem, [])


# --- malformed requests -----------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"\xff\xfe",
        b"[]",
        b"{}",
        json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"operation": "CREATE"}}).encode(),
        json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": 7}}).encode(),
        json.dumps({"request": "x"}).encode(),
    ],
    ids=["not-json", "not-utf8", "list", "empty", "no-uid", "uid-not-string", "request-not-object"],
)
def test_a_malformed_review_is_400_never_a_traceback(certs: Certificates, body: bytes) -> None:
    with serving(Webhook(store()), certs) as port:
        status, answer = post(port, certs, body)
    assert status == 400, answer
    assert "Traceback" not in json.dumps(answer)
    assert isinstance(answer, dict) and answer.get("error"), answer


def test_review_raises_badreview_directly() -> None:
    with pytest.raises(BadReview):
        Webhook(store()).review({"request": {}})


def test_a_review_without_the_object_is_refused_as_a_bad_request(certs: Certificates) -> None:
    review = admission_review("UPDATE", bucket(), bucket())
    review["request"]["oldObject"] = None
    response = ask(Webhook(store()), certs, review)
    assert response["allowed"] is False and response["status"]["code"] == 400, response
    assert "oldObject" in response["status"]["message"]


# --- rules that need no GCP -----------------------------------------------------------------


def test_an_immutable_change_is_refused_naming_each_field(certs: Certificates) -> None:
    old = bucket()
    new = with_spec(old, location="EU", enableObjectRetention=True)
    message = refused(ask(Webhook(store()), certs, admission_review("UPDATE", new, old)))
    assert "spec.location: cannot be changed (" in message and '"US"' in message and '"EU"' in message, message
    assert "spec.enableObjectRetention: cannot be changed (" in message, message
    assert message.startswith(f"StorageBucket {NAMESPACE}/{BUCKET}: "), message


def test_the_same_change_is_allowed_under_force_acquire(certs: Certificates) -> None:
    old = bucket()
    new = annotate(with_spec(old, location="EU", enableObjectRetention=True), FORCE_ACQUIRE, "true")
    assert admitted(ask(Webhook(store()), certs, admission_review("UPDATE", new, old))) == []
    # "false" is not force-acquire
    new = annotate(new, FORCE_ACQUIRE, "false")
    assert "spec.location" in refused(ask(Webhook(store()), certs, admission_review("UPDATE", new, old)))


def test_a_mutable_change_is_allowed(certs: Certificates) -> None:
    old = topic()
    new = with_spec(old, labels={"team": "payments"}, messageRetentionDuration="604800s")
    assert admitted(ask(Webhook(store()), certs, admission_review("UPDATE", new, old))) == []


def test_a_resource_id_change_after_acquisition_is_refused(certs: Certificates) -> None:
    hook = Webhook(store())
    old = acquired(manifest("PubSubTopic", resourceID="t1"), "projects/p/topics/t1")
    for new in (
        with_spec(old, resourceID="t2"),  # changed
        annotate(with_spec(old, resourceID="t2"), FORCE_ACQUIRE, "true"),  # force-acquire never moves it either
        {**with_spec(old), "spec": {k: v for k, v in old["spec"].items() if k != "resourceID"}},  # removed: metadata.name topic1
    ):
        message = refused(ask(hook, certs, admission_review("UPDATE", new, old)))
        assert "spec.resourceID: cannot be changed after acquisition" in message and "projects/p/topics/t1" in message, message
        assert message.count("spec.resourceID:") == 1, message  # one line, not also the immutable-field one


def test_a_resource_id_that_still_names_the_acquired_resource_is_allowed(certs: Certificates) -> None:
    hook = Webhook(store())
    # removed, and metadata.name is the acquired ID
    old = acquired(manifest("PubSubTopic", resourceID="topic1"), "projects/p/topics/topic1")
    new = with_spec(old)
    del new["spec"]["resourceID"]
    admitted(ask(hook, certs, admission_review("UPDATE", new, old)))
    # removed before acquisition (no externalRef): nothing is bound yet
    old = manifest("PubSubTopic", resourceID="t1")
    new = with_spec(old)
    del new["spec"]["resourceID"]
    admitted(ask(hook, certs, admission_review("UPDATE", new, old)))


def test_status_and_metadata_only_updates_are_allowed_unchecked(h: Harness, certs: Certificates) -> None:
    """No rule runs and GCP is not asked, even where a spec update would warn."""
    h.create("StorageBucket")
    old = _stored(h, "StorageBucket", BUCKET)
    h.stored("storage.v1", f"b/{BUCKET}")["location"] = "EU"  # drift: a spec update gets a warning
    hook = Webhook(h.store, h.gcp)
    assert admitted(ask(hook, certs, admission_review("UPDATE", with_spec(old, labels={"a": "b"}), old)))
    new = annotate(copy.deepcopy(old), "example.com/owner", "team-a")
    new["status"] = {"externalRef": "somewhere/else", "conditions": [{"type": "Ready", "status": "True"}]}
    mark = h.mark()
    assert admitted(ask(hook, certs, admission_review("UPDATE", new, old))) == []
    assert h.calls(mark) == []


def test_deletes_and_objects_being_deleted_are_allowed(certs: Certificates) -> None:
    hook = Webhook(store())
    old = bucket()
    assert admitted(ask(hook, certs, admission_review("DELETE", None, old))) == []
    new = with_spec(old, location="EU")  # refused while alive ...
    refused(ask(hook, certs, admission_review("UPDATE", new, old)))
    new["metadata"]["deletionTimestamp"] = "2026-01-02T03:04:05Z"  # ... not while its finalizer runs
    assert admitted(ask(hook, certs, admission_review("UPDATE", new, old))) == []


def test_an_unknown_kind_is_allowed_with_a_warning(certs: Certificates) -> None:
    old = bucket()
    review = admission_review("UPDATE", with_spec(old, location="EU"), old)
    review["request"]["object"]["kind"] = review["request"]["oldObject"]["kind"] = "NoSuchKind"
    warnings = admitted(ask(Webhook(store()), certs, review))
    assert warnings and "NoSuchKind" in warnings[0]


# --- against the live resource (mockgcp) ---------------------------------------------------


@pytest.fixture
def h() -> Iterator[Harness]:
    with harness() as hh:
        yield hh


def _stored(h: Harness, kind: str, name: str) -> dict[str, Any]:
    got = h.store.get(kind, NAMESPACE, name)
    assert got is not None and (got.get("status") or {}).get("externalRef"), got
    return copy.deepcopy(dict(got))


def test_a_create_that_acquires_is_checked_against_the_live_resource(h: Harness, certs: Certificates) -> None:
    h.create("StorageBucket", location="EU")
    hook = Webhook(h.store, h.gcp)
    new = manifest("StorageBucket", name="imported-bucket", resourceID=BUCKET, location="US")
    mark = h.mark()
    message = refused(ask(hook, certs, admission_review("CREATE", new)))
    assert 'spec.location: cannot be changed (immutable (override:specs/kinds/storage.yaml' in message, message
    assert 'live "EU", desired "US"' in message, message
    assert h.calls(mark) == [f"GET /storage/v1/b/{BUCKET} -> 200"], "one GET, nothing written"
    # the same manifest with the live location acquires
    assert admitted(ask(hook, certs, admission_review("CREATE", with_spec(new, location="EU")))) == []
    # nothing to acquire (404): a create
    mark = h.mark()
    assert admitted(ask(hook, certs, admission_review("CREATE", with_spec(new, resourceID="absent-bucket")))) == []
    assert h.calls(mark) == ["GET /storage/v1/b/absent-bucket -> 404"]
    # no resourceID: a plain create, no GET
    mark = h.mark()
    admitted(ask(hook, certs, admission_review("CREATE", manifest("StorageBucket", name="fresh-bucket"))))
    assert h.calls(mark) == []


def test_an_update_is_refused_against_the_live_value_the_old_object_never_set(h: Harness, certs: Certificates) -> None:
    h.create("PubSubSubscription")
    old = _stored(h, "PubSubSubscription", "sub1")
    assert "filter" not in old["spec"]
    # set outside kccgen (the subscription was recreated with a filter, say)
    h.stored("pubsub.v1", SUB)["filter"] = 'attributes.team = "a"'
    new = with_spec(old, filter='attributes.team = "b"')
    message = refused(ask(Webhook(h.store, h.gcp), certs, admission_review("UPDATE", new, old)))
    assert "spec.filter: cannot be changed (" in message, message
    assert 'live "attributes.team = \\"a\\"", desired "attributes.team = \\"b\\""' in message, message
    assert "the stored object had unset" in message and message.count("spec.filter") == 1, message
    # without GCP the webhook only knows the stored object: refused, but the live value is not named
    offline = refused(ask(Webhook(h.store), certs, admission_review("UPDATE", new, old)))
    assert "spec.filter" in offline and "live" not in offline


def test_a_reference_switch_is_checked_against_the_live_resource(h: Harness, certs: Certificates) -> None:
    """``topicRef: {name}`` -> ``{external}`` is no move by itself (the stored
    object cannot say where it points); the live resource can."""
    h.create("PubSubSubscription")
    old = _stored(h, "PubSubSubscription", "sub1")
    moved = with_spec(old, topicRef={"external": "projects/p/topics/elsewhere"})
    assert admitted(ask(Webhook(h.store), certs, admission_review("UPDATE", moved, old))) == []
    message = refused(ask(Webhook(h.store, h.gcp), certs, admission_review("UPDATE", moved, old)))
    assert "spec.topicRef: cannot be changed (" in message, "the manifest's path, not the API's topic: " + message
    assert 'live "projects/p/topics/topic1", desired "projects/p/topics/elsewhere"' in message, message
    same = with_spec(old, topicRef={"external": "projects/p/topics/topic1"}, ackDeadlineSeconds=30)
    assert admitted(ask(Webhook(h.store, h.gcp), certs, admission_review("UPDATE", same, old))) == []


def test_a_difference_the_stored_object_already_had_is_a_warning(h: Harness, certs: Certificates) -> None:
    """Drift of an immutable field blocks no unrelated update (nor could any be admitted again)."""
    h.create("StorageBucket")
    old = _stored(h, "StorageBucket", BUCKET)
    h.stored("storage.v1", f"b/{BUCKET}")["location"] = "EU"
    new = with_spec(old, labels={"label-one": "value-two"})
    warnings = admitted(ask(Webhook(h.store, h.gcp), certs, admission_review("UPDATE", new, old)))
    assert len(warnings) == 1 and warnings[0].startswith("spec.location differs from kccgen-scenario-bucket"), warnings
    assert 'live "EU", desired "US"' in warnings[0]


def test_force_acquire_reports_live_differences_without_refusing(h: Harness, certs: Certificates) -> None:
    h.create("PubSubSubscription")
    old = _stored(h, "PubSubSubscription", "sub1")
    h.stored("pubsub.v1", SUB)["filter"] = 'attributes.team = "a"'
    new = annotate(with_spec(old, filter='attributes.team = "b"', ackDeadlineSeconds=30), FORCE_ACQUIRE, "true")
    warnings = admitted(ask(Webhook(h.store, h.gcp), certs, admission_review("UPDATE", new, old)))
    assert any(w.startswith("force-acquire: spec.filter differs from projects/p/subscriptions/sub1") for w in warnings), warnings
    assert any("spec.ackDeadlineSeconds" in w for w in warnings), "every difference, mutable ones too"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_gcp_unreachable_allows_with_a_warning(h: Harness, certs: Certificates) -> None:
    h.create("PubSubSubscription")
    old = _stored(h, "PubSubSubscription", "sub1")
    moved = with_spec(old, topicRef={"external": "projects/p/topics/elsewhere"})  # refused when GCP answers
    down = Gcp(f"http://127.0.0.1:{_closed_port()}", retries=0, sleep=lambda s: None)
    warnings = admitted(ask(Webhook(h.store, down), certs, admission_review("UPDATE", moved, old)))
    assert len(warnings) == 1 and warnings[0].startswith(f"live check of {SUB} skipped: GET failed: "), warnings
    assert "connection" in warnings[0].lower(), warnings
    # the rules that need no GCP still hold
    frozen = with_spec(old, filter="x", topicRef={"external": "projects/p/topics/elsewhere"})
    assert "spec.filter" in refused(ask(Webhook(h.store, down), certs, admission_review("UPDATE", frozen, old)))


def test_gcp_that_never_answers_allows_with_a_warning_in_time(h: Harness, certs: Certificates) -> None:
    h.create("PubSubSubscription")
    old = _stored(h, "PubSubSubscription", "sub1")
    moved = with_spec(old, topicRef={"external": "projects/p/topics/elsewhere"})
    with socket.socket() as silent:  # accepts connections (backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        slow = Gcp(f"http://127.0.0.1:{silent.getsockname()[1]}", retries=0, sleep=lambda s: None)
        warnings = admitted(ask(Webhook(h.store, slow, live_timeout=0.5), certs, admission_review("UPDATE", moved, old)))
    assert len(warnings) == 1 and "did not answer within 0.5s" in warnings[0], warnings


# --- reviews carrying objects a real API server stored --------------------------------------


@pytest.fixture(scope="module")
def recorder(envtest: Kube) -> Recorder:
    r = Recorder(envtest)
    r.install("StorageBucket", "PubSubTopic")
    return r


def test_recorded_updates_of_an_acquired_bucket(recorder: Recorder, h: Harness, certs: Certificates) -> None:
    h.create("StorageBucket")  # location US in mockgcp
    hook = Webhook(h.store, h.gcp)
    spec = {**manifest("StorageBucket")["spec"], "resourceID": BUCKET}
    obj = {**manifest("StorageBucket", name="wh-recorded-bucket"), "spec": spec}
    recorder.delete(obj)
    created = recorder.apply(obj)
    stored = recorder.set_status(created, {"externalRef": BUCKET, "observedGeneration": 1})
    meta = stored["metadata"]
    assert meta["uid"] and meta["resourceVersion"] and meta["generation"] == 1 and meta["managedFields"], meta
    assert stored["status"]["externalRef"] == BUCKET

    # a status-only update, as the controller writes it
    status_only = recorder.set_status(stored, {"conditions": [{"type": "Ready", "status": "True", "reason": "UpToDate", "message": "ok", "lastTransitionTime": "2026-01-01T00:00:00Z"}]})
    mark = h.mark()
    assert admitted(ask(hook, certs, admission_review("UPDATE", status_only, stored))) == []
    assert h.calls(mark) == [], "no GET for a status-only update"

    # an immutable field moved: the server's CRD accepts it, the webhook does not
    moved = recorder.apply({**obj, "spec": {**spec, "location": "EU"}})
    assert moved["metadata"]["generation"] == 2 and moved["spec"]["location"] == "EU"
    message = refused(ask(hook, certs, admission_review("UPDATE", moved, status_only)))
    assert 'spec.location: cannot be changed (' in message and 'live "US", desired "EU"' in message, message
    assert refused(ask(Webhook(h.store), certs, admission_review("UPDATE", moved, status_only))).count("spec.location") == 1

    # the same under force-acquire: allowed, the difference reported
    forced = recorder.apply(annotate({**obj, "spec": {**spec, "location": "EU"}}, FORCE_ACQUIRE, "true"))
    warnings = admitted(ask(hook, certs, admission_review("UPDATE", forced, status_only)))
    assert any(w.startswith(f"force-acquire: spec.location differs from {BUCKET}") for w in warnings), warnings

    # a mutable field: allowed, no warning (the live location matches)
    relabelled = recorder.apply({**obj, "spec": {**spec, "labels": {"label-one": "value-two"}}})
    assert admitted(ask(hook, certs, admission_review("UPDATE", relabelled, status_only))) == []
    recorder.delete(obj)


def test_recorded_create_that_acquires(recorder: Recorder, h: Harness, certs: Certificates) -> None:
    h.create("StorageBucket", location="EU")
    obj = manifest("StorageBucket", name="wh-recorded-import", resourceID=BUCKET)  # location US
    recorder.delete(obj)
    created = recorder.apply(obj)
    message = refused(ask(Webhook(h.store, h.gcp), certs, admission_review("CREATE", created)))
    assert 'spec.location: cannot be changed (' in message and 'live "EU", desired "US"' in message, message
    recorder.delete(obj)


def test_recorded_topic_resource_id_removed_after_acquisition(recorder: Recorder, certs: Certificates) -> None:
    obj = manifest("PubSubTopic", name="wh-recorded-topic", resourceID="t1")
    recorder.delete(obj)
    stored = recorder.set_status(recorder.apply(obj), {"externalRef": "projects/p/topics/t1"})
    # the CRD's transition rule refuses this on the server, so the review is built
    # from the stored object: the webhook holds the rule without the CRD too
    new = copy.deepcopy(stored)
    del new["spec"]["resourceID"]
    message = refused(ask(Webhook(store()), certs, admission_review("UPDATE", new, stored)))
    assert "spec.resourceID: cannot be changed after acquisition" in message and '"wh-recorded-topic"' in message, message
    relabelled = recorder.apply({**obj, "spec": {**obj["spec"], "labels": {"team": "payments"}}})
    assert admitted(ask(Webhook(store()), certs, admission_review("UPDATE", relabelled, stored))) == []
    recorder.delete(obj)
