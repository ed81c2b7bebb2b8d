"""Fields that name one of several Kinds (kind config ``references.<field>.oneOf``).

Compute's ``healthChecks``, ``defaultService``, ``target`` and ``IPAddress`` are
URLs of one of several resource types. Config Connector spells them as objects
with one ``<key>Ref`` per Kind (``healthChecks: [{healthCheckRef: {name: hc}}]``)
and literal keys (``ipAddress: {ip: 10.0.0.1}``). These tests hold the path:
the config is strict, the CRD requires exactly one key, ``kccctl apply`` sends
the resolved URL (or the literal) in the API field, a second apply only reads
(the live URL compares equal to the reference), and export gives the object back.
"""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import celpy
import pytest
import yaml
from celpy.adapter import json_to_cel
from pydantic import ValidationError

from kccgen.generator.spec.kinds import ReferenceConfig
from kccgen.mockgcp.engine import MockGCP
from kccgen.mockgcp.server import MockServer
from kccgen.runtime.export import export_manifest
from kccgen.runtime.refs import references_of
from tests.conftest import REPO
from tools.kcc_compat import crd_schemas

SCHEMAS = {kind: s for (_, kind), s in crd_schemas(REPO / "generated" / "crds").items()}
PROJECT = "demo-project"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"reason": "r"}, "exactly one of target and oneOf"),
        ({"target": "ComputeHealthCheck", "oneOf": {"a": "ComputeHealthCheck"}, "reason": "r"}, "exactly one of target and oneOf"),
        ({"target": "ComputeHealthCheck", "literals": ["ip"], "reason": "r"}, "literals, apiFormats and flatten go with oneOf"),
        ({"oneOf": {"ip": "ComputeAddress"}, "literals": ["ip"], "reason": "r"}, "both a oneOf key and a literal"),
    ],
)
def test_the_config_is_strict(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        ReferenceConfig.model_validate(entry)


def _choice_schema(kind: str, field: str) -> dict[str, Any]:
    s = SCHEMAS[kind]["properties"]["spec"]["properties"][field]
    return s.get("items", s)


def _admits(schema: dict[str, Any], value: dict[str, Any]) -> bool:
    env = celpy.Environment()
    return all(bool(env.program(env.compile(r["rule"])).evaluate({"self": json_to_cel(value)})) for r in schema["x-kubernetes-validations"])


@pytest.mark.parametrize(
    ("kind", "field", "keys"),
    [
        ("ComputeBackendService", "healthChecks", {"healthCheckRef", "httpHealthCheckRef", "httpsHealthCheckRef"}),
        ("ComputeRegionBackendService", "healthChecks", {"healthCheckRef", "httpHealthCheckRef", "httpsHealthCheckRef"}),
        ("ComputeURLMap", "defaultService", {"backendBucketRef", "backendServiceRef"}),
        ("ComputeForwardingRule", "ipAddress", {"addressRef", "ip"}),
        ("ComputeGlobalForwardingRule", "target", {"googleAPIsBundle", "targetHTTPProxyRef", "targetPoolRef", "serviceAttachmentRef",
                                                   "targetGRPCProxyRef", "targetHTTPSProxyRef", "targetInstanceRef", "targetSSLProxyRef",
                                                   "targetTCPProxyRef", "targetVPNGatewayRef"}),
    ],
)
def test_the_crd_takes_exactly_one_key(kind: str, field: str, keys: set[str]) -> None:
    s = _choice_schema(kind, field)
    assert set(s["properties"]) == keys
    one = sorted(keys)[0]
    assert _admits(s, {one: {"external": "x"}} if one.endswith("Ref") else {one: "x"})
    assert not _admits(s, {})
    two = sorted(keys)[:2]
    assert not _admits(s, {k: ({"external": "x"} if k.endswith("Ref") else "x") for k in two})


def test_the_reference_table_lists_each_key() -> None:
    refs = {r.path: r for r in references_of("ComputeForwardingRule")}
    ip = refs["ipAddress.addressRef"]
    assert ip.union and ip.api_path == "IPAddress" and ip.target == "ComputeAddress" and ip.literals == ("ip",)
    assert refs["target.targetHTTPProxyRef"].literals == ("googleAPIsBundle",)
    hc = {r.path: r for r in references_of("ComputeBackendService")}["healthChecks[].healthCheckRef"]
    assert hc.union and hc.api_path == "healthChecks[]"


def _kccctl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kccgen.runtime.cli", *args], cwd=REPO, capture_output=True, text=True, check=False, timeout=180)


def _obj(kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "compute.cnrm.cloud.google.com/v1beta1", "kind": kind, "metadata": {"name": name}, "spec": copy.deepcopy(spec)}


G = f"projects/{PROJECT}/global"
OBJECTS = [
    _obj("ComputeHealthCheck", "hc", {"location": "global", "type": "HTTP", "httpHealthCheck": {"port": 80}}),
    _obj("ComputeHTTPHealthCheck", "legacy", {"port": 80}),
    _obj("ComputeInstanceGroup", "ig", {"zone": "us-central1-a"}),
    # `backend` is Config Connector's name for backends[]: a oneOf inside an alias
    _obj("ComputeBackendService", "bs", {"location": "global", "healthChecks": [{"healthCheckRef": {"name": "hc"}}, {"httpHealthCheckRef": {"name": "legacy"}}],
                                         "backend": [{"group": {"instanceGroupRef": {"name": "ig"}}}]}),
    _obj("ComputeURLMap", "um", {"location": "global", "defaultService": {"backendServiceRef": {"name": "bs"}}}),
    _obj("ComputeTargetHTTPProxy", "proxy", {"location": "global", "urlMapRef": {"name": "um"}}),
    _obj("ComputeAddress", "addr", {"location": "global"}),
    _obj("ComputeForwardingRule", "fr", {"location": "global", "loadBalancingScheme": "EXTERNAL_MANAGED", "ipProtocol": "TCP", "portRange": "80",
                                         "ipAddress": {"addressRef": {"name": "addr"}}, "target": {"targetHTTPProxyRef": {"name": "proxy"}}}),
    _obj("ComputeForwardingRule", "fr-ip", {"location": "global", "loadBalancingScheme": "EXTERNAL_MANAGED", "portRange": "8080",
                                            "ipAddress": {"ip": "203.0.113.7"}, "target": {"targetHTTPProxyRef": {"name": "proxy"}}}),
]


def test_kccctl_sends_what_each_key_names(tmp_path: Path) -> None:
    manifest = tmp_path / "m.yaml"
    manifest.write_text(yaml.safe_dump_all(OBJECTS), encoding="utf-8")
    two = tmp_path / "two.yaml"
    two.write_text(yaml.safe_dump(_obj("ComputeURLMap", "um2", {"location": "global", "defaultService": {
        "backendServiceRef": {"name": "bs"}, "backendBucketRef": {"external": f"{G}/backendBuckets/b"}}})), encoding="utf-8")
    state = tmp_path / "state"
    common = ("--state", str(state), "--project", PROJECT)
    with MockServer(MockGCP(lro_polls=1)) as s:
        r = _kccctl("apply", "-f", str(manifest), "--endpoint", s.base_url, *common)
        assert r.returncode == 0, r.stdout + r.stderr
        bodies = {b["name"]: b for e in s.log if e.method == "POST" and "/operations/" not in e.url and isinstance(b := e.request_json, dict) and "name" in b}
        assert [h.rsplit("/compute/v1/", 1)[-1] for h in bodies["bs"]["healthChecks"]] == [f"{G}/healthChecks/hc", f"{G}/httpHealthChecks/legacy"]
        assert bodies["bs"]["backends"][0]["group"].endswith(f"projects/{PROJECT}/zones/us-central1-a/instanceGroups/ig")
        assert bodies["um"]["defaultService"].endswith(f"{G}/backendServices/bs")
        assert bodies["fr"]["target"].endswith(f"{G}/targetHttpProxies/proxy")
        assert bodies["fr"]["IPAddress"].endswith(f"{G}/addresses/addr") and bodies["fr"]["IPProtocol"] == "TCP"
        assert bodies["fr-ip"]["IPAddress"] == "203.0.113.7"
        for o in OBJECTS:
            stored = yaml.safe_load((state / "default" / o["kind"] / f"{o['metadata']['name']}.yaml").read_text(encoding="utf-8"))
            assert stored["spec"] == o["spec"]  # the user's objects are kept

        s.clear_log()
        r = _kccctl("apply", "-f", str(manifest), "--endpoint", s.base_url, *common)
        assert r.returncode == 0, r.stdout + r.stderr
        assert sorted(e.method for e in s.log) == ["GET"] * len(OBJECTS)  # the live URLs equal the references

        s.clear_log()
        r = _kccctl("apply", "-f", str(two), "--endpoint", s.base_url, *common)
        assert r.returncode != 0 and "set exactly one of backendBucketRef, backendServiceRef" in r.stdout
        assert list(s.log) == []


def test_export_gives_the_object_back() -> None:
    live = {"name": "bs", "healthChecks": [f"https://www.googleapis.com/compute/v1/{G}/httpHealthChecks/legacy"]}
    spec = export_manifest("ComputeBackendService", f"{G}/backendServices/bs", live)["spec"]
    assert spec["healthChecks"] == [{"httpHealthCheckRef": {"external": f"{G}/httpHealthChecks/legacy"}}]
    rule = {"name": "fr", "IPAddress": "203.0.113.7", "target": "all-apis"}
    spec = export_manifest("ComputeGlobalForwardingRule", f"{G}/forwardingRules/fr", rule)["spec"]
    assert spec["ipAddress"] == {"ip": "203.0.113.7"} and spec["target"] == {"googleAPIsBundle": "all-apis"}


def test_a_sink_names_its_destination_with_the_service_domain(tmp_path: Path) -> None:
    """apiFormats ``pubsub.googleapis.com/{}``: the topic's externalRef behind the domain."""
    objs = [
        {"apiVersion": "pubsub.cnrm.cloud.google.com/v1beta1", "kind": "PubSubTopic", "metadata": {"name": "t"}, "spec": {}},
        {"apiVersion": "logging.cnrm.cloud.google.com/v1beta1", "kind": "LoggingLogSink", "metadata": {"name": "sink"},
         "spec": {"destination": {"pubSubTopicRef": {"name": "t"}}, "filter": "severity>=ERROR"}},
    ]
    manifest = tmp_path / "m.yaml"
    manifest.write_text(yaml.safe_dump_all(objs), encoding="utf-8")
    common = ("--state", str(tmp_path / "state"), "--project", PROJECT, "--host-paths")
    with MockServer(MockGCP(lro_polls=1)) as s:
        r = _kccctl("apply", "-f", str(manifest), "--endpoint", s.base_url, *common)
        assert r.returncode == 0, r.stdout + r.stderr
        sink = next(e.request_json for e in s.log if e.method == "POST" and "/sinks" in e.url)
        assert sink["destination"] == f"pubsub.googleapis.com/projects/{PROJECT}/topics/t"
        s.clear_log()
        r = _kccctl("apply", "-f", str(manifest), "--endpoint", s.base_url, *common)
        assert r.returncode == 0, r.stdout + r.stderr
        assert sorted(e.method for e in s.log) == ["GET", "GET"]
