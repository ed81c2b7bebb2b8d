"""Why a replayed exchange differs from the recording: rules over the request,
both responses, the earlier exchanges and the Discovery documents."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from kccgen.discovery.behaviours import Behaviour, classify
from kccgen.mockgcp.catalog import Api, Route
from kccgen.mockgcp.engine import Response
from kccgen.mockgcp.httplog import HttpLogEntry
from tools.mockgcp_defaults import created_key
from tools.mockgcp_fidelity_model import MOCK, RECORDING, UNEXPLAINED, Exchange, Reason

if TYPE_CHECKING:
    from tools.mockgcp_fidelity_replay import Replay


# --- explanations ---------------------------------------------------------------------------
#
# A mismatch is explained by one or more reasons. A reason is a category (what
# the summary counts: no per-log names in it) and an optional detail (which
# earlier exchange, which method...). Rules are tried in order; a status
# mismatch gets one reason, a field-set mismatch one per differing field.

# Facts about specific fields the Discovery documents cannot tell, each seen in
# the recordings: (doc key, response schema, field) -> why the recording has it
# and the mock does not.
RECORDED_ONLY: dict[tuple[str, str, str], str] = {
    ("cloudkms.v1", "CryptoKey", "primary"): (
        "recording has output-only `primary` (CryptoKey): the real API creates version 1 with an "
        "ENCRYPT_DECRYPT key, the mock creates no CryptoKeyVersion"
    ),
    ("cloudkms.v1", "ListCryptoKeyVersionsResponse", "cryptoKeyVersions"): (
        "recording lists `cryptoKeyVersions`: version 1 the real API created with the key, "
        "the mock creates no CryptoKeyVersion"
    ),
    ("cloudkms.v1", "ListCryptoKeyVersionsResponse", "totalSize"): (
        "recording has `totalSize` (ListCryptoKeyVersionsResponse) the mock's list doesn't fill"
    ),
    ("storage.v1", "Bucket", "acl"): (
        "recording has `acl` (Bucket): PATCH defaults to projection=full, the mock ignores projection"
    ),
    ("storage.v1", "Bucket", "defaultObjectAcl"): (
        "recording has `defaultObjectAcl` (Bucket): PATCH defaults to projection=full, the mock ignores projection"
    ),
    ("storage.v1", "Objects", "prefixes"): (
        "recording lists `prefixes` (folders in the real bucket that no recorded request created); "
        "the mock's bucket is empty"
    ),
    ("compute.v1", "Network", "subnetworks"): (
        "recording has output-only `subnetworks` (Network): an auto-mode network "
        "(autoCreateSubnetworks: true) gets one subnetwork per region, the mock creates none"
    ),
    ("compute.v1", "Network", "internalIpv6Range"): (
        "recording has `internalIpv6Range` (Network): allocated from fd20::/20 when "
        "enableUlaInternalIpv6 is turned on, the mock allocates none"
    ),
    ("dns.v1", "ManagedZone", "nameServers"): (
        "recording has output-only `nameServers` (ManagedZone) for a private zone; the mock "
        "fills name servers for public zones only"
    ),
    ("secretmanager.v1", "Secret", "expireTime"): (
        "recording has `expireTime` (Secret) computed from the input-only `ttl` the request sent; "
        "the mock does not compute it"
    ),
}
# Of those, the ones that are facts of the recorded environment, not of the API.
RECORDING_ONLY_FACTS = frozenset({("storage.v1", "Objects", "prefixes")})
# (doc key, response schema, field) -> why the mock has it and the recording does not.
MOCK_ONLY: dict[tuple[str, str, str], str] = {
    ("storage.v1", "Bucket", "owner"): (
        "mock answers with `owner` (Bucket): the real API returns it only with projection=full "
        "(the PATCH default), not on insert/get (noAcl)"
    ),
}


def _error_message(body: Any) -> str:
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return str(body["error"].get("message", ""))
    return ""


def _behaviours(api: Api, schema: str | None, name: str) -> set[Behaviour] | None:
    if schema is None or schema not in api.doc.schemas:
        return None
    prop = api.doc.schemas[schema].properties.get(name)
    if prop is None:
        return None
    return {f.behaviour for f in classify(prop.description, prop.read_only)}


def _emptyish(v: Any) -> bool:
    if isinstance(v, dict):
        return all(_emptyish(x) for x in v.values())
    if isinstance(v, list):
        return all(_emptyish(x) for x in v)
    return v in (False, 0, "", None)


def _plain_path(url: str) -> str:
    return urlsplit(url).path.lstrip("/")


def explain_reasons(rp: Replay, e: HttpLogEntry, x: Exchange, resp: Response) -> list[Reason]:
    found = rp.engine.route(e.method, _plain_path(rp.b.fill(e.url)))
    route = found[0] if found else None
    if route is not None and route.api != x.api:
        return [Reason(f"mock routed a {x.api} request to {route.api} (it routes by path and ignores the host)", route.method.id)]
    if not x.status_ok:
        return [_status_reason(rp, e, x, resp, route)]
    return _field_reasons(rp, e, x, resp, route)


def _resource_path(rp: Replay, e: HttpLogEntry) -> str:
    """The filled URL path without the ``:verb`` of a custom method."""
    return _plain_path(rp.b.fill(e.url)).split(":", 1)[0]


def _created_path(rp: Replay, e: HttpLogEntry) -> str | None:
    """The path of the resource a create exchange makes (filled), if it is one."""
    found = rp.engine.route(e.method, _plain_path(rp.b.fill(e.url)))
    if found is None or found[0].role != "create":
        return None
    route = found[0]
    api = rp.engine.apis[route.api]
    coll = api.collections.get(route.resource)
    if coll is None:
        return None
    u = urlsplit(rp.b.fill(e.url))
    body = rp.b.fill_json(e.request_json) if e.request_json is not None else None
    key = created_key(api, coll, route.method, u.path.lstrip("/"), parse_qs(u.query), body, None)
    return coll.prefix + key if key else None


def _status_reason(rp: Replay, e: HttpLogEntry, x: Exchange, resp: Response, route: Route | None) -> Reason:
    msg = _error_message(resp.body)
    if x.mock_status == 599:
        return Reason(f"engine exception: {msg.split(':', 1)[0]}", msg)
    if route is None:
        return Reason(f"no route in the pinned {x.api} Discovery document for this {x.method}")
    if x.mock_status == 501:
        if route.verb in ("getIamPolicy", "setIamPolicy", "testIamPermissions"):
            return Reason(f"mock 501 for IAM ({route.method.id})")
        return Reason(f"custom method not implemented ({route.method.id})")
    if x.mock_status == 400 and 200 <= x.recorded_status < 300 and msg.startswith("Invalid JSON payload received. Unknown name"):
        return Reason(
            f"mock refuses a request field the pinned {x.api} Discovery document does not define; "
            "the recorded API (a newer revision) accepted it",
            msg,
        )
    here = _plain_path(rp.b.fill(e.url)).split(":", 1)[0]
    earlier = [(pe, px) for pe, px, _ in rp.history]
    if x.mock_status == 400 and e.request_body is None and "JSON object" in msg:
        return Reason(
            "mock rejects a create with no request body (the real API creates the resource with all fields unset)",
            route.method.id,
        )
    if e.method == "GET" and x.recorded_status == 404 and 200 <= x.mock_status < 300:
        same = [(pe, px) for pe, px in earlier if _resource_path(rp, pe) == here]
        if same and same[-1][0].ok and same[-1][0].method in ("PUT", "POST"):
            return Reason(
                "eventual consistency in the recording: a GET right after a successful create answered 404 "
                "(the mock is read-after-write consistent)",
                f"create was #{same[-1][1].index}",
                RECORDING,
            )
    if 200 <= x.recorded_status < 300 and x.mock_status == 404:
        for pe, px in reversed(earlier):
            made = _created_path(rp, pe)
            if made and not px.status_ok and 200 <= px.recorded_status < 300 and (here == made or here.startswith(made + "/")):
                return Reason("follows a create that failed in the mock", f"create was #{px.index}")
        if not any(here in (_resource_path(rp, pe), _created_path(rp, pe)) for pe, _ in earlier):
            return Reason(
                "resource created outside the recorded log: the recording's first request already finds it",
                cause=RECORDING,
            )
    return Reason(f"{UNEXPLAINED}: recorded {x.recorded_status}, mock {x.mock_status}", msg)


def _field_reasons(rp: Replay, e: HttpLogEntry, x: Exchange, resp: Response, route: Route | None) -> list[Reason]:
    api = rp.engine.apis[x.api]
    schema = route.method.response.ref if route is not None and route.method.response is not None else None
    here = _resource_path(rp, e)
    replaced = any(
        pe.method == "PUT" and px.route.endswith(".update") and _resource_path(rp, pe) == here for pe, px, _ in rp.history
    ) or (e.method == "PUT" and x.route.endswith(".update"))
    out: list[Reason] = []
    for f in sorted(x.recorded_fields - x.mock_fields):
        beh = _behaviours(api, schema, f)
        known = RECORDED_ONLY.get((x.api, schema or "", f))
        if known:
            out.append(Reason(known, cause=RECORDING if (x.api, schema or "", f) in RECORDING_ONLY_FACTS else MOCK))
        elif beh is None:
            out.append(Reason(f"recording has `{f}`, unknown to the pinned {x.api} {schema} schema"))
        elif Behaviour.OUTPUT_ONLY in beh:
            out.append(Reason(f"recording has output-only `{f}` ({schema}) the mock doesn't fill"))
        elif f in rp.engine.defaults.get(x.api, {}).get(schema or "", {}) and replaced:
            out.append(
                Reason(
                    f"recording has server default `{f}` ({schema}) after a whole-resource update (PUT): "
                    "the mock applies mockgcp/defaults.json on create only, the update dropped it"
                )
            )
        else:
            out.append(Reason(f"recording has `{f}` ({schema}) the mock doesn't fill"))
    mock_body = resp.body if isinstance(resp.body, dict) else {}
    for f in sorted(x.mock_fields - x.recorded_fields):
        beh = _behaviours(api, schema, f)
        known = MOCK_ONLY.get((x.api, schema or "", f))
        v = mock_body.get(f)
        if known:
            out.append(Reason(known))
        elif f == "done" and v is False:
            out.append(Reason("mock answers `done: false` on a pending operation; the real API omits false values"))
        elif beh is not None and Behaviour.INPUT_ONLY in beh:
            out.append(Reason(f"mock echoes input-only `{f}` ({schema}); the real API never returns it"))
        elif _emptyish(v):
            out.append(
                Reason(f"mock keeps `{f}` ({schema}) whose value is empty/false; the real API leaves this field out then")
            )
        elif beh is not None and Behaviour.OUTPUT_ONLY in beh:
            out.append(Reason(f"mock fills output-only `{f}` ({schema}) the real API leaves unset"))
        else:
            out.append(Reason(f"{UNEXPLAINED}: mock answers with `{f}` ({schema}) the recording lacks"))
    return out
