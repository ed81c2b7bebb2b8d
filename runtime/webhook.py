"""The operator's validating admission webhook: what a CRD's CEL rules cannot say.

The API server has already applied the CRD (structure, CEL, including the
identity transition rules) when it sends an AdmissionReview here. This adds
the rules that need an annotation, ``status`` or GCP:

* UPDATE: immutable fields changed between ``oldObject`` and ``object`` are
  refused, each named (``admission.immutable_changes``), unless the new object
  is ``force-acquire: "true"`` (seeds/force-acquire: verify-only objects never
  write, so immutability does not bind them);
* after acquisition (``oldObject.status.externalRef``), a ``spec.resourceID``
  that is added, changed or removed so that it names another resource than the
  externalRef is refused, force-acquire or not (the reconcile would refuse it
  too: identity fields never move a resource);
* with a GCP client: an immutable field the new object sets to another value
  than the live resource's is refused, naming the live and desired values,
  on UPDATE and on a CREATE that acquires (``spec.resourceID`` or
  ``status.externalRef``). One GET, bounded by ``live_timeout``: a GCP error
  (other than 404) or no answer never blocks admission; the review is allowed
  with a warning saying the live check was skipped and why. Only fields this
  update sets or changes are refused: a difference the stored object already
  had is the controller's to report (a warning here), or no update of the
  object could ever be admitted again. Under force-acquire, differences are
  reported as warnings, never refused.

Allowed without checks: DELETE, objects being deleted
(``metadata.deletionTimestamp``), and updates that leave ``spec`` as it was
(status, metadata). A malformed AdmissionReview (no ``request.uid``) is an HTTP
400 from the server layer.

Field paths are the manifest's (``spec.topicRef``, not the API's ``topic``):
the identity, template values, reference resolution, mapping and diff are the
Reconciler's own.

The HTTPS server (``start``) is aiohttp; ``make_certificates`` makes its CA and
serving certificate, and ``ca_bundle_patch`` the patch that installs the CA in
the ValidatingWebhookConfiguration.
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import ipaddress
import json
import logging
import os
import ssl
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kccgen.contract import Adapter, FieldRule
from kccgen.runtime.adapter import adapter_for, policy_for, spec_to_api
from kccgen.runtime.admission import _MISSING, _at, immutable_changes
from kccgen.runtime.aliases import AliasConflict, canonical_spec
from kccgen.runtime.diff import diff
from kccgen.runtime.gcp import Gcp, GcpError, NotFound
from kccgen.runtime.iam import static_problems
from kccgen.runtime.identity import IdentityError, identity_for
from kccgen.runtime.locations import LocationError, located
from kccgen.runtime.managed import managed_spec
from kccgen.runtime.mutability import by_api_path
from kccgen.runtime.reconciler import ANN_FORCE_ACQUIRE, MANAGER, Reconciler, read_live
from kccgen.runtime.refs import ObjectStore, RefError, resolve_object

if TYPE_CHECKING:
    from aiohttp import web

__all__ = [
    "CA_BUNDLE_PATCH_TYPE",
    "BadReview",
    "Certificates",
    "Webhook",
    "ca_bundle_patch",
    "make_certificates",
    "server_ssl_context",
    "start",
]

log = logging.getLogger("kccgen.webhook")

ADMISSION_API = "admission.k8s.io/v1"
# An AdmissionReview carries the object twice (object, oldObject), each up to
# etcd's 1.5 MB; aiohttp's default limit is 1 MiB.
MAX_BODY = 16 * 1024 * 1024
# The API server truncates longer warnings (256 characters) and drops them past
# 4 KB in all; it also refuses control characters in them.
MAX_WARNING = 256


class BadReview(ValueError):
    """Not an AdmissionReview this webhook can answer (no request, no uid): HTTP 400."""


# --- certificates ---------------------------------------------------------------------


@dataclass(frozen=True)
class Certificates:
    """PEM: a self-signed CA (its key is not kept), and a serving certificate it signed."""

    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes


def make_certificates(dns_names: Sequence[str], days: int = 365) -> Certificates:
    """A CA and a serving certificate (EC P-256, SHA-256) for ``dns_names``: each is
    a DNS SAN, or an IP SAN when it is an address (``127.0.0.1``). The first name
    is the subject's CN. Valid from five minutes ago (clock skew) for ``days``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    if not dns_names:
        raise ValueError("a serving certificate needs at least one name")
    now = datetime.datetime.now(datetime.UTC)
    start, end = now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=days)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kccgen-webhook-ca")])
    ca_ski = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(cert_sign=True), critical=True)
        .add_extension(ca_ski, critical=False)
        .sign(ca_key, hashes.SHA256())
    )

    key = ec.generate_private_key(ec.SECP256R1())
    sans: list[x509.GeneralName] = []
    for name in dns_names:
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            sans.append(x509.DNSName(name))
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, dns_names[0])]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(cert_sign=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return Certificates(
        ca_pem=ca.public_bytes(serialization.Encoding.PEM),
        cert_pem=cert.public_bytes(serialization.Encoding.PEM),
        key_pem=key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()),
    )


def _key_usage(cert_sign: bool) -> Any:
    from cryptography import x509

    return x509.KeyUsage(
        digital_signature=not cert_sign,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=cert_sign,
        crl_sign=cert_sign,
        encipher_only=False,
        decipher_only=False,
    )


def server_ssl_context(certs: Certificates) -> ssl.SSLContext:
    """A TLS 1.2+ server context with the serving certificate (the ssl module reads
    keys from files only: they go through a private temporary directory)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    with tempfile.TemporaryDirectory(prefix="kccgen-webhook-") as d:
        cert, key = os.path.join(d, "tls.crt"), os.path.join(d, "tls.key")
        for path, data in ((cert, certs.cert_pem), (key, certs.key_pem)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        ctx.load_cert_chain(cert, key)
    return ctx


# The webhooks list of a ValidatingWebhookConfiguration merges by name under a
# strategic merge patch; a JSON merge patch (RFC 7386) would replace the whole
# list with entries that have nothing but a caBundle, which the server refuses.
CA_BUNDLE_PATCH_TYPE = "application/strategic-merge-patch+json"


def ca_bundle_patch(ca_pem: bytes, webhook_names: Sequence[str]) -> dict[str, Any]:
    """The patch body that sets ``clientConfig.caBundle`` (base64 of the CA's PEM) on
    every named webhook of a ValidatingWebhookConfiguration, leaving the rest of each
    entry as it is. Send it with ``Content-Type: CA_BUNDLE_PATCH_TYPE``."""
    if not webhook_names:
        raise ValueError("the configuration's webhook names are needed: the patch merges by name")
    bundle = base64.b64encode(ca_pem).decode("ascii")
    return {"webhooks": [{"name": n, "clientConfig": {"caBundle": bundle}} for n in webhook_names]}


# --- the rules ---------------------------------------------------------------------------


def _show(v: Any) -> str:
    return "unset" if v is _MISSING or v is None else json.dumps(v, sort_keys=True, default=str)


def _spec_parts(path: str) -> list[str]:
    """``spec.a.b[].c`` -> ``["a", "b"]``: the steps up to the first list, where
    two objects' values can still be compared without pairing list items."""
    out = []
    for p in path.split(".")[1:]:
        out.append(p.removesuffix("[]"))
        if p.endswith("[]"):
            break
    return out


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    m = obj.get("metadata")
    return m if isinstance(m, Mapping) else {}


def _force_acquire(obj: Mapping[str, Any]) -> bool:
    anns = _meta(obj).get("annotations")
    return isinstance(anns, Mapping) and str(anns.get(ANN_FORCE_ACQUIRE, "")).lower() == "true"


def _clean(text: str) -> str:
    text = "".join(c if c.isprintable() else " " for c in text)
    return text if len(text) <= MAX_WARNING else text[: MAX_WARNING - 1] + "…"


@dataclass
class Verdict:
    """Why an object is refused (empty: admitted), with the code and reason to answer."""

    refusals: list[str]
    warnings: list[str]
    code: int = 403
    reason: str = "Forbidden"


class _Invalid(Exception):
    """A request whose object cannot be judged (missing, not an object)."""


class Webhook:
    def __init__(self, store: ObjectStore, gcp: Gcp | None = None, *, live_timeout: float = 5.0, manager: str = MANAGER) -> None:
        """``store`` resolves references and parents (the cluster's objects); ``gcp``
        enables the live check, whose GET is given ``live_timeout`` seconds (the
        API server waits 10 s for the whole review by default); ``manager`` is the
        controller's field manager (fields only it owns are not the user's)."""
        self.store = store
        self.gcp = gcp
        self.live_timeout = live_timeout
        self.manager = manager

    # --- AdmissionReview in and out -------------------------------------------------------

    def review(self, review: Mapping[str, Any]) -> dict[str, Any]:
        """The AdmissionReview answering ``review`` (admission.k8s.io/v1).
        Raises BadReview when it is not one (no request or request.uid)."""
        request = review.get("request") if isinstance(review, Mapping) else None
        uid = request.get("uid") if isinstance(request, Mapping) else None
        if not isinstance(request, Mapping) or not isinstance(uid, str) or not uid:
            raise BadReview("expected an AdmissionReview with request.uid")
        api_version = str(review.get("apiVersion") or ADMISSION_API)
        try:
            verdict = self.check(str(request.get("operation") or ""), request.get("object"), request.get("oldObject"))
        except _Invalid as e:
            verdict = Verdict([str(e)], [], 400, "BadRequest")
        except Exception as e:  # a bug here must answer, never hang the API server
            log.exception("admission review %s failed", uid)
            verdict = Verdict([f"the kccgen webhook failed to check this object: {type(e).__name__}: {e}"], [], 500, "InternalError")
        response: dict[str, Any] = {"uid": uid, "allowed": not verdict.refusals}
        if verdict.refusals:
            what = self._what(request)
            response["status"] = {
                "code": verdict.code,
                "reason": verdict.reason,
                "message": f"{what}: " + "; ".join(verdict.refusals),
            }
        if verdict.warnings:
            response["warnings"] = [_clean(w) for w in verdict.warnings]
        return {"apiVersion": api_version, "kind": "AdmissionReview", "response": response}

    @staticmethod
    def _what(request: Mapping[str, Any]) -> str:
        obj = request.get("object") if isinstance(request.get("object"), Mapping) else request.get("oldObject")
        obj = obj if isinstance(obj, Mapping) else {}
        kind = obj.get("kind") or (request.get("kind") or {}).get("kind") or "object"
        name = _meta(obj).get("name") or request.get("name") or ""
        ns = _meta(obj).get("namespace") or request.get("namespace") or ""
        return f"{kind} {ns}/{name}" if ns else f"{kind} {name}"

    # --- the rules --------------------------------------------------------------------

    def check(self, operation: str, obj: Any, old: Any = None) -> Verdict:
        """The verdict on one CREATE/UPDATE/DELETE of ``obj`` (``old``: the stored object)."""
        if operation not in ("CREATE", "UPDATE"):
            return Verdict([], [])  # DELETE (and CONNECT) are never refused
        if not isinstance(obj, Mapping):
            raise _Invalid(f"{operation} without request.object")
        if operation == "UPDATE" and not isinstance(old, Mapping):
            raise _Invalid("UPDATE without request.oldObject")
        if obj.get("spec") is not None and not isinstance(obj.get("spec"), Mapping):
            raise _Invalid("spec is not an object")
        if _meta(obj).get("deletionTimestamp"):
            return Verdict([], [])  # its finalizer is being handled: nothing to protect
        kind = str(obj.get("kind") or "")
        if (policy := policy_for(kind)) is not None:  # an IAM Kind: what no call can fix is refused here
            out = static_problems(obj, policy)
            if operation == "UPDATE" and isinstance(old, Mapping):
                out += immutable_changes(obj, old)
            return Verdict(out, [])
        try:
            a = adapter_for(kind)
        except KeyError:
            return Verdict([], [f"kccgen does not reconcile Kind {kind!r}: not checked"])
        if operation == "UPDATE":
            assert isinstance(old, Mapping)
            if (obj.get("spec") or {}) == (old.get("spec") or {}):
                return Verdict([], [])  # status or metadata only
        else:
            old = None
        if a.locations is not None:
            # Checked as the Kind serving spec.location (a global ComputeAddress is a
            # ComputeGlobalAddress); the CRD's rule keeps the location itself fixed.
            try:
                obj = located(obj) or obj
                old = (located(old) or old) if old is not None else None
            except LocationError as e:
                return Verdict([str(e)], [])
            a = adapter_for(str(obj.get("kind")))
        force = _force_acquire(obj)
        refusals: list[str] = []
        warnings: list[str] = []
        if old is not None:
            moved = self._resource_id_moved(a, obj, old)
            refusals += moved
            if not force:
                refusals += [e for e in immutable_changes(obj, old) if not (moved and e.startswith("spec.resourceID:"))]
        spec = obj.get("spec") or {}
        status = obj.get("status") or (old or {}).get("status") or {}
        if self.gcp is not None and (old is not None or spec.get("resourceID") or status.get("externalRef")):
            live_refusals, live_warnings = self._live(a, obj, old, force)
            for path, line in live_refusals:
                # the live line says more than the stored object's: it replaces it
                refusals = [r for r in refusals if not r.startswith(f"{path}: ")]
                refusals.append(line)
            warnings += live_warnings
        return Verdict(refusals, warnings)

    @staticmethod
    def _resource_id_moved(a: Adapter, obj: Mapping[str, Any], old: Mapping[str, Any]) -> list[str]:
        """A resourceID added, changed or removed after acquisition, so that the
        object no longer names the resource its status.externalRef binds it to
        (resourceID absent: metadata.name, or the externalRef for an ID the
        service picks)."""
        ext = (old.get("status") or {}).get("externalRef")
        was, now = (old.get("spec") or {}).get("resourceID"), (obj.get("spec") or {}).get("resourceID")
        if not ext or was == now:
            return []
        ident = identity_for(a.kind)
        try:
            canon = ident.normalize(str(ext))
            params = ident.parse(canon)
        except IdentityError:
            return []  # the reconcile reports an unusable externalRef
        param = next((p for p, f, _ in ident.spec_fields if f == "resourceID"), None)
        acquired = params.get(param, "") if param else canon.rsplit("/", 1)[-1]
        if now:
            names, how = str(now), f"spec.resourceID {json.dumps(now)}"
        elif ident.id_generation == "service":
            return []  # the externalRef keeps naming it
        else:
            name = _meta(obj).get("name")
            names, how = str(name), f"spec.resourceID removed, metadata.name {json.dumps(name)}"
        if names == acquired:
            return []
        return [
            f"spec.resourceID: cannot be changed after acquisition: status.externalRef binds this object to {canon} "
            f"(ID {json.dumps(acquired)}), and {how} names another resource; recreate the object to point it elsewhere"
        ]

    def _live(self, a: Adapter, obj: Mapping[str, Any], old: Mapping[str, Any] | None, force: bool) -> tuple[list[tuple[str, str]], list[str]]:
        """(spec path, refusal) per immutable field the new object sets or changes to
        another value than the live resource's, and the warnings (skipped, or
        differences not refused). One GET; a 404 is no resource, so nothing to check."""
        assert self.gcp is not None
        try:
            spec = canonical_spec(a, obj.get("spec"))
            old_spec = canonical_spec(a, old.get("spec")) if old is not None else None
        except AliasConflict:
            return [], []  # the CRD's CEL rules refuse both spellings at once
        # The API server gives an update the stored status; a create has none.
        status = obj.get("status") or (old or {}).get("status") or {}
        view = {**obj, "spec": spec, "status": status}
        r = Reconciler(self.gcp, self.store)
        try:
            ext = r._identity(view, a)
            if ext is None:
                return [], []  # an ID the service picks, not known yet: nothing to GET
            values = r._values(view, a, ext)
            resolved = resolve_object(view, self.store)
        except (RefError, IdentityError, ValueError) as e:
            return [], [f"live check skipped: {e}"]
        try:
            actual = self._get(a, values)
        except NotFound:
            return [], []
        except TimeoutError:
            return [], [f"live check of {ext} skipped: GCP did not answer within {self.live_timeout:g}s; the controller checks it when it reconciles"]
        except GcpError as e:
            return [], [f"live check of {ext} skipped: GET failed: {e}; the controller checks it when it reconciles"]
        except Exception as e:
            log.warning("live GET of %s failed", ext, exc_info=True)
            return [], [f"live check of {ext} skipped: {type(e).__name__}: {e}"]
        if not isinstance(actual, Mapping):
            return [], []
        enforce, _ = managed_spec(view, a, spec, dict(actual), self.manager)
        desired = spec_to_api(enforce, a, resolved, values)
        diffs = diff(desired, actual, a, check_mutability=not force)
        refusals: list[tuple[str, str]] = []
        warnings: list[str] = []
        table = by_api_path(a.kind)
        for api_path, want, live in diffs:
            row = _row(table, api_path)
            where = row.path if row is not None else f"spec.{api_path}"
            if force:
                warnings.append(f"force-acquire: {where} differs from {ext}: live {_show(live)}, desired {_show(want)}; nothing is written, the controller reports it")
                continue
            if row is None or row.updatable:
                continue  # an update writes it
            line = f"{row.path}: cannot be changed ({row.updatable_source}): live {_show(live)}, desired {_show(want)}"
            if old_spec is None:
                refusals.append((row.path, line))
                continue
            parts = _spec_parts(row.path)
            was, now = _at(old_spec, parts), _at(spec, parts)
            if was != now:
                refusals.append((row.path, f"{line}; the stored object had {_show(was)}"))
            else:
                warnings.append(f"{row.path} differs from {ext} (live {_show(live)}, desired {_show(want)}), as it did before this update: not refused here, the controller reports it")
        return refusals, warnings

    def _get(self, a: Adapter, values: dict[str, str]) -> Any:
        """One GET of the live resource, given ``live_timeout`` seconds (TimeoutError).
        It runs in a daemon thread: one that never answers is left behind, never joined."""
        assert self.gcp is not None
        gcp = self.gcp
        box: dict[str, Any] = {}

        def run() -> None:
            try:
                box["value"] = read_live(gcp, a, values)
            except BaseException as e:  # handed to the caller
                box["error"] = e

        t = threading.Thread(target=run, name="kccgen-webhook-get", daemon=True)
        t.start()
        t.join(self.live_timeout)
        if t.is_alive():
            raise TimeoutError(f"no answer within {self.live_timeout}s")
        if "error" in box:
            raise box["error"]
        return box.get("value")


def _row(table: Mapping[str, FieldRule], api_path: str) -> FieldRule | None:
    """The table's row for a diff's API path, or its nearest ancestor's."""
    parts = api_path.split(".")
    for n in range(len(parts), 0, -1):
        row = table.get(".".join(parts[:n]))
        if row is not None:
            return row
    return None


# --- the HTTPS server ------------------------------------------------------------------


async def start(webhook: Webhook, certs: Certificates, host: str = "0.0.0.0", port: int = 9443) -> tuple[web.AppRunner, int]:
    """Serve ``POST /validate`` (AdmissionReview JSON in and out) and ``GET /healthz``
    over HTTPS; ``port=0`` picks a free port. Returns the runner (``await
    runner.cleanup()`` stops it) and the bound port. Reviews run in a worker
    thread: one may wait on a GCP GET."""
    from aiohttp import web

    async def validate(request: web.Request) -> web.Response:
        try:
            body = json.loads(await request.read())
        except (ValueError, UnicodeDecodeError) as e:
            return web.json_response({"error": f"the body is not JSON: {e}"}, status=400)
        try:
            answer = await asyncio.get_running_loop().run_in_executor(None, webhook.review, body)
        except BadReview as e:
            return web.json_response({"error": str(e)}, status=400)
        except Exception:
            log.exception("admission review failed")
            return web.json_response({"error": "internal error (see the operator's log)"}, status=500)
        return web.json_response(answer)

    async def healthz(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    app = web.Application(client_max_size=MAX_BODY)
    app.router.add_post("/validate", validate)
    app.router.add_get("/healthz", healthz)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port, ssl_context=server_ssl_context(certs))
    try:
        await site.start()
    except BaseException:
        await runner.cleanup()
        raise
    bound = int(runner.addresses[0][1]) if runner.addresses else port
    return runner, bound
