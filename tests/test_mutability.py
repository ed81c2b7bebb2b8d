"""Per-field mutability tables (``generated/<svc>/v1beta1/<kind>_mutability.py``).

Four parts:

* Table tests for PubSubTopic, SecretManagerSecret, ComputeSubnetwork and
  ComputeNetwork: behaviours, updatable, readable, identity and the exact
  provenance strings of chosen field paths (spec and status, nested and list
  paths, identity, immutable, output-only, input-only, plain mutable).
  Every expectation is cross-checked against the pinned Discovery text: a
  quoted ``description:'...'`` phrase must occur in the description found by
  walking the resource schema along the row's api_path (``$ref``, ``items``,
  ``additionalProperties``), ``readOnly`` must be true there, an override
  reason must be in specs/kinds, an inherited source must be the parent's.
  The same grounding check then runs over every row of every generated table.
* The acceptance test: an edited copy of specs/ where one field loses its
  ``Immutable.`` marker and another gains one; ``generate`` on both trees
  flips exactly those rows, and ``kccgen lag`` reports the flips.
* Coverage: each table has exactly the spec (and observedState) paths of
  the Kind's CRD, so table and CRD cannot drift apart.

A row the generator gets wrong is kept with the correct expectation and
marked ``xfail(strict=True)``, so fixing it is noticed.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import yaml

import kccgen.runtime.mutability
from kccgen.contract import Behaviour, FieldRule, FieldType, TypeKind, UpdateRouted, route_of
from kccgen.documents import document_paths
from kccgen.generator.emit.crds import without_descriptions
from kccgen.generator.ir.krm import CONCURRENCY_SOURCE, CONCURRENCY_TOKENS
from kccgen.generator.ir.model import IR
from kccgen.runtime.adapter import adapter_for
from kccgen.runtime.mutability import mutability_of
from kccgen.runtime.registry import module_for
from tests.conftest import REPO
from tests.support.crds import load_crd
from tests.support.kinds import GENERATED_KINDS, batched_params
from tests.support.specs import curated_specs

KRM_ONLY = "KRM-only field: not part of the API resource"
STATUS = "status: written by the controller from GET"
PARENT_FACTS = {"immutable": ["identity"], "optional": ["identity"]}
RESOURCE_ID_FACTS = {"identifier": ["identity"], "immutable": ["identity"], "optional": ["identity"]}

# Which Discovery document and resource schema each Kind's api_paths start from.
RESOURCE: dict[str, tuple[str, str]] = {
    "PubSubTopic": ("pubsub.v1", "Topic"),
    "SecretManagerSecret": ("secretmanager.v1", "Secret"),
    "ComputeSubnetwork": ("compute.v1", "Subnetwork"),
    "ComputeNetwork": ("compute.v1", "Network"),
}


# --------------------------------------------------------------------------
# Discovery look-ups
# --------------------------------------------------------------------------


@cache
def discovery(doc: str) -> dict[str, Any]:
    # vendored under specs/discovery, else the lock's copy in the client's cache
    data: dict[str, Any] = json.loads(document_paths(REPO / "specs")[doc].read_text())
    return data


def _norm(text: str) -> str:
    return " ".join(text.split())


def _deref(doc: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    seen = set()
    while "$ref" in node:
        ref = node["$ref"]
        assert ref not in seen, f"$ref cycle at {ref}"
        seen.add(ref)
        node = doc["schemas"][ref]
    return node


def api_node(doc_key: str, schema: str, api_path: str) -> dict[str, Any]:
    """The Discovery property node for ``api_path`` (``a.b[].c``, ``m.*.x``) under ``schema``.

    The node returned is the property itself (its own description and
    readOnly), not the schema its ``$ref`` points to.
    """
    doc = discovery(doc_key)
    holder: dict[str, Any] = doc["schemas"][schema]
    prop: dict[str, Any] | None = None
    for seg in api_path.split("."):
        if seg == "*":
            holder = _deref(doc, holder)["additionalProperties"]
            continue
        name = seg.replace("[]", "")
        props = _deref(doc, holder).get("properties", {})
        assert name in props, f"{doc_key}: {schema}.{api_path}: no property {name!r}"
        prop = holder = props[name]
        for _ in range(seg.count("[]")):
            holder = _deref(doc, holder)["items"]
    assert prop is not None, api_path
    return prop


def discovery_method(doc_key: str, method_id: str) -> dict[str, Any]:
    def walk(resources: dict[str, Any]) -> Iterator[dict[str, Any]]:
        for res in resources.values():
            yield from res.get("methods", {}).values()
            yield from walk(res.get("resources", {}))

    for m in walk(discovery(doc_key).get("resources", {})):
        if m.get("id") == method_id:
            return m
    raise AssertionError(f"{doc_key}: no method {method_id}")


def input_node(doc_key: str, schema: str, api_path: str, row: dict[str, Any]) -> dict[str, Any] | None:
    """The Discovery node behind a create-only input: the create's query parameter or request field."""
    for source in row["provenance"]["behaviours"].get("input-only", []):
        if m := re.fullmatch(r"create-only: (\S+) query parameter (\S+)", source):
            return dict(discovery_method(doc_key, m.group(1))["parameters"][m.group(2)])
        if m := re.fullmatch(r"create-only: (\w+)\.(\w+) \((\S+)\)", source):
            return dict(discovery(doc_key)["schemas"][m.group(1)]["properties"][m.group(2)])
    return None


def method_description(doc_key: str, method_id: str) -> str:
    def walk(resources: dict[str, Any]) -> Iterator[dict[str, Any]]:
        for res in resources.values():
            yield from res.get("methods", {}).values()
            yield from walk(res.get("resources", {}))

    for m in walk(discovery(doc_key).get("resources", {})):
        if m.get("id") == method_id:
            return str(m.get("description", ""))
    raise AssertionError(f"{doc_key}: no method {method_id}")


def _kind_config(config_file: str, kind: str) -> dict[str, Any]:
    """The kind file's entry for ``kind``: under ``kinds:``, or the ``overrides:``
    entry of the resource the Kind is derived from (the registry's adapter names it)."""
    data = yaml.safe_load((REPO / config_file).read_text())
    found = next((k for k in data.get("kinds") or [] if k["kind"] == kind), None)
    if found is not None:
        return dict(found)
    resource = ".".join(adapter_for(kind).resource)
    return dict((data.get("overrides") or {})[resource])


def _phrase(source: str) -> str:
    """``description:'Output only.'`` -> ``Output only.`` (the classifier writes repr())."""
    value = ast.literal_eval(source.removeprefix("description:"))
    assert isinstance(value, str), source
    return value


def check_source(
    kind: str, doc_key: str, schema: str, table: dict[str, dict[str, Any]], path: str, behaviour: str, source: str
) -> None:
    """Assert that one behaviour source of ``table[path]`` is really in the specs."""
    row = table[path]
    api_path = row["api_path"]
    where = f"{kind} {path} [{behaviour}] {source}"
    if source == "identity":
        assert row["identity"] or api_path is None, where
        return
    if source.startswith("inherited from "):
        m = re.fullmatch(r"inherited from (\S+) \((.*)\)", source, re.DOTALL)
        assert m, where
        parent, inner = m.groups()
        assert path.startswith((parent + ".", parent + "[")), where
        assert inner in table[parent]["provenance"]["behaviours"].get(behaviour, []), where
        check_source(kind, doc_key, schema, table, parent, behaviour, inner)
        return
    if source.startswith("override:"):
        m = re.fullmatch(r"override:(specs/kinds/[^:]+\.yaml): (.*)", source, re.DOTALL)
        assert m, where
        config_file, reason = m.groups()
        overrides = _kind_config(config_file, kind).get("fields", {})
        assert api_path is not None, where
        ov = overrides.get(api_path) or overrides.get(api_path.replace("[]", ""))
        assert ov is not None, f"{where}: no override for {api_path} in {config_file}"
        assert ov["reason"] == reason, where
        assert behaviour in ov["behaviours"], where
        return
    if source.startswith("specFields:"):
        # a Kind managing one aspect of a larger resource (kind config specFields:)
        m = re.fullmatch(r"specFields:(specs/kinds/[^:]+\.yaml): not one of .*", source)
        assert m and behaviour == "output-only", where
        fields = _kind_config(m.group(1), kind).get("specFields")
        assert fields is not None and (api_path or "").split(".")[0] not in fields, where
        return
    if source.startswith("companion:"):
        # a spec field kept in a paired resource of another API (kind config companions:)
        m = re.fullmatch(r"companion:(specs/kinds/[^:]+\.yaml): (\S+)", source)
        assert m and api_path is None, where
        config_file, field = m.groups()
        assert any(c["field"] == field for c in _kind_config(config_file, kind).get("companions", [])), where
        return
    if source == CONCURRENCY_SOURCE:
        # kccgen's own rule (generator/ir/krm.py): top-level etag/fingerprint strings.
        assert behaviour == "output-only" and api_path in CONCURRENCY_TOKENS, where
        return
    assert api_path is not None, f"{where}: a Discovery source on a KRM-only field"
    schema = request_root(table, table[path], schema)
    if m := re.fullmatch(r"create-only: (\S+) query parameter (\S+)", source):
        method = discovery_method(doc_key, m.group(1))
        assert m.group(2) == api_path and method["parameters"][api_path]["location"] == "query", where
        create = adapter_for(kind).create
        own = getattr(getattr(create, "call", None), "method", "")  # a verb that creates (addAssociation)
        assert m.group(1).rsplit(".", 1)[-1] in ("create", "insert", own), where
        return
    if m := re.fullmatch(r"create-only: (\w+)\.(\w+) \((\S+)\)", source):
        request, name, method_id = m.groups()
        assert name == api_path and discovery_method(doc_key, method_id)["request"]["$ref"] == request, where
        assert name in discovery(doc_key)["schemas"][request]["properties"], where
        assert name not in discovery(doc_key)["schemas"][schema]["properties"], where
        return
    if m := re.fullmatch(r"write-only: (\w+)\.(\w+) \((\S+)\); GET never returns it.*", source, re.DOTALL):
        # a field of a routed update verb's request only (GKE's SetNodePoolSizeRequest.nodeCount)
        request, name, method_id = m.groups()
        assert behaviour == "input-only" and discovery_method(doc_key, method_id)["request"]["$ref"] == request, where
        assert name in discovery(doc_key)["schemas"][request]["properties"], where
        assert api_path not in discovery(doc_key)["schemas"][schema]["properties"], where
        return
    if m := re.fullmatch(r"not in (\w+) \((\S+)\): set by the service", source):
        request, method_id = m.groups()
        assert behaviour == "output-only" and discovery_method(doc_key, method_id)["request"]["$ref"] == request, where
        assert api_path.split(".")[0] not in discovery(doc_key)["schemas"][request]["properties"], where
        return
    node = input_node(doc_key, schema, api_path, table[path]) or api_node(doc_key, schema, api_path)
    if source == "readOnly":
        assert node.get("readOnly") is True, where
    elif source.startswith("description:"):
        phrase = _norm(_phrase(source))
        assert phrase, where
        assert phrase in _norm(node.get("description", "")), f"{where}: phrase not in {node.get('description')!r}"
    elif source.startswith("annotations.required:"):
        method = source.removeprefix("annotations.required:")
        assert method in node.get("annotations", {}).get("required", []), where
    else:
        raise AssertionError(f"{where}: unknown provenance source")


def request_root(table: dict[str, dict[str, Any]], row: dict[str, Any], schema: str) -> str:
    """The schema a row's api_path starts from: the create request's for a field only the
    create request has (BigtableInstance ``clusters`` is CreateInstanceRequest's), else the resource's."""
    if not row["api_path"] or "." not in row["api_path"].replace(".*", ""):
        return schema  # the request field itself is checked against both schemas (check_source)
    top = row["api_path"].split(".")[0].replace("[]", "")
    for other in table.values():
        if other["api_path"] == top:
            for source in other["provenance"]["behaviours"].get("immutable", []):
                if m := re.match(rf"create-only: (\w+)\.{re.escape(top)} \(", source):
                    return m.group(1)
    return schema


def check_row_provenance(kind: str, doc_key: str, schema: str, table: dict[str, dict[str, Any]], path: str) -> None:
    """Every source of a row, and its updatable/readable reasons, agree with the specs and the row."""
    row = table[path]
    prov = row["provenance"]
    assert sorted(prov["behaviours"]) == sorted(row["behaviours"]), path
    for behaviour, sources in prov["behaviours"].items():
        assert sources, (path, behaviour)
        for source in sources:
            check_source(kind, doc_key, schema, table, path, behaviour, source)
    upd, rd = prov["updatable"], prov["readable"]
    if path.startswith("status."):
        assert upd == STATUS and row["updatable"] is False, path
    elif m := re.fullmatch(r"immutable \((.*)\)", upd, re.DOTALL):
        assert row["updatable"] is False and m.group(1) in prov["behaviours"]["immutable"], path
    elif m := re.fullmatch(r"not in the update allow-list \((\S+): (.*)\)", upd, re.DOTALL):
        assert row["updatable"] is False, path
        assert _norm(_phrase("description:" + m.group(2))) in _norm(method_description(doc_key, m.group(1))), path
    elif upd.startswith("identity ("):
        assert row["identity"] and row["updatable"] is False, path
    elif upd == "output-only":
        assert "output-only" in row["behaviours"] and row["updatable"] is False, path
    elif upd.startswith("no update method"):
        assert row["updatable"] is False, path
    elif upd.startswith("no route: "):
        # an update split over verbs (UpdateRouted): no route covers the field
        shape = adapter_for(kind).update
        assert row["updatable"] is False and isinstance(shape, UpdateRouted) and route_of(shape, row["api_path"] or "") is None, path
    elif m := re.fullmatch(r"changed through (\S+), not (\S+) \(description:'(.*)'\)", upd, re.DOTALL):
        # The field's own description names the custom method that changes it.
        assert row["updatable"] is False, path
        assert m.group(1).rsplit(".", 1)[-1] in m.group(3), path
        assert _norm(m.group(3)) in _norm(api_node(doc_key, request_root(table, row, schema), row["api_path"])["description"]), path
    else:
        assert row["updatable"] is True, (path, upd)
        shape = adapter_for(kind).update
        if isinstance(shape, UpdateRouted):  # "<method id> (<http>) with <request>.<into>": its route's
            r = route_of(shape, row["api_path"] or "")
            assert r is not None, (path, upd)
            if r.verbs:  # "by value: <value> <method id>, ..."
                assert upd.startswith("by value: ") and all(f"{v} " in upd and f".{c.method}" in upd for v, c in r.verbs), (path, upd)
            else:
                assert f".{r.call.method} (" in upd and upd.split(" with ", 1)[1].split(",")[0].endswith("." + r.into), (path, upd)
        if "updateMask=" in upd:
            assert upd.endswith(f"updateMask={row['api_path']}"), (path, upd)
    if m := re.fullmatch(r"input-only \((.*)\): GET never returns it", rd, re.DOTALL):
        assert row["readable"] is False and m.group(1) in prov["behaviours"]["input-only"], path
    elif rd == KRM_ONLY:
        assert row["readable"] is False and row["api_path"] is None, path
    else:
        assert row["readable"] is True and rd.endswith(f" returns {row['api_path']}"), (path, rd)


# --------------------------------------------------------------------------
# Generated tables
# --------------------------------------------------------------------------


def load_table(path: Path) -> dict[str, dict[str, Any]]:
    """``FIELDS`` of a generated ``<kind>_mutability.py``, exec'd from its file.

    ``register_mutability`` is swapped out meanwhile, so a table from a
    temporary tree never replaces the committed one in the runtime registry.
    """
    namespace: dict[str, Any] = {"__name__": f"_mutability_{path.stem}"}
    with mock.patch.object(kccgen.runtime.mutability, "register_mutability", lambda kind, table: None):
        exec(compile(path.read_text(), str(path), "exec"), namespace)
    rules: tuple[FieldRule, ...] = namespace["FIELDS"]
    return {r.path: as_row(r) for r in rules}


def label(t: FieldType) -> str:
    """``string(int64)``, ``array<object>``, ``map<string>``: how the expectations below write a type."""
    if t.item is not None:
        return f"{t.kind.value}<{label(t.item)}>"
    return f"{t.kind.value}({t.format})" if t.kind is TypeKind.STRING and t.format else t.kind.value


def provenance(r: FieldRule) -> dict[str, Any]:
    by: dict[str, list[str]] = {}
    for f in r.facts:
        by.setdefault(f.behaviour.value, []).append(f.source)
    return {"behaviours": {b: sorted(v) for b, v in sorted(by.items())}, "updatable": r.updatable_source, "readable": r.readable_source}


def as_row(r: FieldRule) -> dict[str, Any]:
    """A rule as plain data, for the checks against the Discovery text."""
    return {
        "api_path": r.api_path,
        "type": label(r.type),
        "behaviours": sorted(b.value for b in r.behaviours),
        "identity": r.identity,
        "updatable": r.updatable,
        "readable": r.readable,
        "provenance": provenance(r),
    }


def table_file(root: Path, kind: str) -> Path:
    return root.joinpath(*module_for(kind, "_mutability").split(".")[1:]).with_suffix(".py")


@cache
def committed(kind: str) -> dict[str, dict[str, Any]]:
    return load_table(table_file(REPO, kind))


KINDS = list(GENERATED_KINDS)


# --------------------------------------------------------------------------
# 1. Table tests
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Expect:
    kind: str
    path: str
    api_path: str | None
    behaviours: dict[str, list[str]]
    updatable: bool
    updatable_why: str
    readable: bool
    readable_why: str
    identity: bool = False
    type: str | None = None
    xfail: str | None = field(default=None, compare=False)


def _get(kind: str) -> str:
    return {
        "PubSubTopic": "pubsub.projects.topics.get",
        "SecretManagerSecret": "secretmanager.projects.secrets.get",
        "ComputeSubnetwork": "compute.subnetworks.get",
        "ComputeNetwork": "compute.networks.get",
    }[kind]


def _patch(kind: str, api_path: str) -> str:
    return {
        "PubSubTopic": f"pubsub.projects.topics.patch (PATCH) body UpdateTopicRequest.topic with updateMask={api_path}",
        "SecretManagerSecret": f"secretmanager.projects.secrets.patch (PATCH) with updateMask={api_path}",
        "ComputeSubnetwork": "compute.subnetworks.patch (PATCH) sends the whole resource, fingerprint must match",
        "ComputeNetwork": "compute.networks.patch (PATCH) sends the whole resource",
    }[kind]


def mutable(kind: str, path: str, api_path: str, behaviours: dict[str, list[str]] | None = None, type: str | None = None) -> Expect:
    """A spec field the update method changes and GET returns."""
    return Expect(kind, path, api_path, behaviours or {}, True, _patch(kind, api_path), True, f"{_get(kind)} returns {api_path}", type=type)


def status(kind: str, path: str, api_path: str, behaviours: dict[str, list[str]], type: str | None = None) -> Expect:
    return Expect(kind, path, api_path, behaviours, False, STATUS, True, f"{_get(kind)} returns {api_path}", type=type)


def parent_ref(kind: str, template: str) -> Expect:
    return Expect(kind, "spec.projectRef", None, PARENT_FACTS, False, f"identity ({template})", False, KRM_ONLY, identity=True, type="object")


def resource_id(kind: str, template: str) -> Expect:
    return Expect(kind, "spec.resourceID", None, RESOURCE_ID_FACTS, False, f"identity ({template})", False, KRM_ONLY, identity=True, type="string")


OPT = {"optional": ["description:'Optional.'"]}
REQ = {"required": ["description:'Required.'"]}
OUT_RO = {"output-only": ["description:'Output only.'", "readOnly"]}
# compute: "Output only. [Output Only] ..." with readOnly: true
C_OUT = {"output-only": ["description:'Output only.'", "description:'[Output Only]'", "readOnly"]}
C_OUT_BRACKET = {"output-only": ["description:'[Output Only]'"]}
C_CREATE_ONLY = "description:'can be set only at resource creation time'"
IMM = "description:'Immutable.'"
REPL = "inherited from spec.replication (description:'Immutable.')"

TOPIC = "projects/{project}/topics/{topic}"
SECRET = "projects/{project}/secrets/{secret}"
SUBNET = "projects/{project}/regions/{region}/subnetworks/{subnetwork}"
NETWORK = "projects/{project}/global/networks/{network}"
NET_ALLOW = "not in the update allow-list (compute.networks.patch: 'Only routingConfig can be modified')"

T, S, C, N = "PubSubTopic", "SecretManagerSecret", "ComputeSubnetwork", "ComputeNetwork"

EXPECTED: list[Expect] = [
    # ---------------- PubSubTopic (pubsub.v1 Topic; wrapper-mask PATCH) ----------------
    parent_ref(T, TOPIC),
    resource_id(T, TOPIC),
    mutable(T, "spec.labels", "labels", OPT, type="map<string>"),
    mutable(T, "spec.messageRetentionDuration", "messageRetentionDuration", OPT, type="string(google-duration)"),
    # a reference field: KRM kmsKeyRef, API kmsKeyName
    mutable(T, "spec.kmsKeyRef", "kmsKeyName", OPT, type="object"),
    mutable(T, "spec.messageStoragePolicy.allowedPersistenceRegions", "messageStoragePolicy.allowedPersistenceRegions", OPT, type="array<string>"),
    mutable(T, "spec.messageTransforms", "messageTransforms", OPT, type="array<object>"),
    mutable(T, "spec.messageTransforms[].javascriptUdf.code", "messageTransforms[].javascriptUdf.code", REQ, type="string"),
    mutable(T, "spec.messageTransforms[].aiInference.endpointRef", "messageTransforms[].aiInference.endpoint", REQ, type="object"),
    mutable(T, "spec.schemaSettings.schemaRef", "schemaSettings.schema", REQ, type="object"),
    mutable(T, "spec.ingestionDataSourceSettings.cloudStorage.textFormat.delimiter", "ingestionDataSourceSettings.cloudStorage.textFormat.delimiter", OPT, type="string"),
    # "Optional. Input only. Immutable." -- neither changeable nor returned
    Expect(
        T, "spec.tags", "tags",
        {"immutable": [IMM], "input-only": ["description:'Input only.'"], "optional": ["description:'Optional.'"]},
        False, f"immutable ({IMM})", False, "input-only (description:'Input only.'): GET never returns it", type="map<string>",
    ),
    status(T, "status.observedState.state", "state", OUT_RO, type="enum"),
    # no readOnly and no "Output only." marker: "This field is set only in responses from the server"
    status(T, "status.observedState.satisfiesPzs", "satisfiesPzs",
           {"optional": ["description:'Optional.'"], "output-only": ["description:'set only in responses from the server'"]}, type="boolean"),
    # ---------------- SecretManagerSecret (secretmanager.v1 Secret; updateMask query) ----------------
    parent_ref(S, SECRET),
    resource_id(S, SECRET),
    # "The labels assigned to this Secret." -- no marker at all
    mutable(S, "spec.labels", "labels", type="map<string>"),
    mutable(S, "spec.rotation.nextRotationTime", "rotation.nextRotationTime", OPT, type="string(google-datetime)"),
    Expect(S, "spec.replication", "replication", {"immutable": [IMM], "optional": ["description:'Optional.'"]},
           False, f"immutable ({IMM})", True, "secretmanager.projects.secrets.get returns replication", type="object"),
    # immutability inherited down a list path, with the parent's quoted source
    Expect(S, "spec.replication.userManaged.replicas[].location", "replication.userManaged.replicas[].location", {"immutable": [REPL]},
           False, f"immutable ({REPL})", True, "secretmanager.projects.secrets.get returns replication.userManaged.replicas[].location", type="string"),
    Expect(S, "spec.replication.userManaged.replicas[].customerManagedEncryption.kmsKeyRef",
           "replication.userManaged.replicas[].customerManagedEncryption.kmsKeyName",
           {"immutable": [REPL], "required": ["description:'Required.'"]}, False, f"immutable ({REPL})", True,
           "secretmanager.projects.secrets.get returns replication.userManaged.replicas[].customerManagedEncryption.kmsKeyName", type="object"),
    Expect(S, "spec.secretType", "secretType", {"immutable": [IMM], "optional": ["description:'Optional.'"]},
           False, f"immutable ({IMM})", True, "secretmanager.projects.secrets.get returns secretType", type="enum"),
    # input-only but updatable: the update method takes it, GET never returns it
    Expect(S, "spec.ttl", "ttl", {"input-only": ["description:'Input only.'"]}, True, _patch(S, "ttl"),
           False, "input-only (description:'Input only.'): GET never returns it", type="string(google-duration)"),
    Expect(S, "spec.rotation.rotationPeriod", "rotation.rotationPeriod", {"input-only": ["description:'Input only.'"]},
           True, _patch(S, "rotation.rotationPeriod"), False, "input-only (description:'Input only.'): GET never returns it",
           type="string(google-duration)"),
    Expect(
        S, "spec.tags", "tags",
        {"immutable": [IMM], "input-only": ["description:'Input only.'"], "optional": ["description:'Optional.'"]},
        False, f"immutable ({IMM})", False, "input-only (description:'Input only.'): GET never returns it", type="map<string>",
    ),
    # list of references; "Identifier." on a nested field is not the Kind's identity
    mutable(S, "spec.topics[].topicRef", "topics[].name", {"identifier": ["description:'Identifier.'"]}, type="object"),
    status(S, "status.observedState.createTime", "createTime", OUT_RO, type="string(google-datetime)"),
    status(S, "status.observedState.rotation.managedRotationStatus.state", "rotation.managedRotationStatus.state", OUT_RO, type="enum"),
    status(S, "status.observedState.policyMember.iamPolicyUidPrincipal", "policyMember.iamPolicyUidPrincipal", OUT_RO, type="string"),
    # ---------------- ComputeSubnetwork (compute.v1 Subnetwork; whole-resource PATCH + fingerprint) ----------------
    parent_ref(C, SUBNET),
    resource_id(C, SUBNET),
    # region: part of the identity, yet an API field GET returns; its prose also says create-only
    Expect(C, "spec.region", "region", {"immutable": [C_CREATE_ONLY]}, False, f"identity ({SUBNET})",
           True, "compute.subnetworks.get returns region", identity=True, type="string"),
    Expect(C, "spec.networkRef", "network", {"immutable": [C_CREATE_ONLY]}, False, f"immutable ({C_CREATE_ONLY})",
           True, "compute.subnetworks.get returns network", type="object"),
    Expect(C, "spec.description", "description", {"immutable": [C_CREATE_ONLY]}, False, f"immutable ({C_CREATE_ONLY})",
           True, "compute.subnetworks.get returns description", type="string"),
    # "This field can be updated with apatch request."
    mutable(C, "spec.secondaryIpRanges", "secondaryIpRanges", type="array<object>"),
    mutable(C, "spec.secondaryIpRanges[].rangeName", "secondaryIpRanges[].rangeName", type="string"),
    mutable(C, "spec.secondaryIpRanges[].reservedInternalRangeRef", "secondaryIpRanges[].reservedInternalRange", type="object"),
    # "This field can be both set at resource creation time and updated usingpatch."
    mutable(C, "spec.stackType", "stackType", type="enum"),
    mutable(C, "spec.logConfig.flowSampling", "logConfig.flowSampling", type="number"),
    Expect(C, "spec.params", "params", {"input-only": ["description:'Input only.'", "description:'[Input Only]'"]},
           True, _patch(C, "params"), False, "input-only (description:'Input only.'): GET never returns it", type="object"),
    Expect(C, "spec.params.resourceManagerTags", "params.resourceManagerTags",
           {"input-only": ["inherited from spec.params (description:'Input only.')", "inherited from spec.params (description:'[Input Only]')"]},
           True, _patch(C, "params.resourceManagerTags"), False,
           "input-only (inherited from spec.params (description:'Input only.')): GET never returns it", type="map<string>"),
    status(C, "status.observedState.creationTimestamp", "creationTimestamp", C_OUT, type="string"),
    # only the bracketed marker, no readOnly
    status(C, "status.observedState.selfLink", "selfLink", C_OUT_BRACKET, type="string"),
    status(C, "status.observedState.state", "state", C_OUT, type="enum"),
    # nested under an output-only object: status rows do not repeat the parent's marker
    status(C, "status.observedState.utilizationDetails.ipv4Utilizations[].totalFreeIp", "utilizationDetails.ipv4Utilizations[].totalFreeIp", {}, type="string(int64)"),
    # ---------------- ComputeNetwork (networks.patch: "Only routingConfig can be modified.") ----------------
    parent_ref(N, NETWORK),
    resource_id(N, NETWORK),
    mutable(N, "spec.routingConfig", "routingConfig", type="object"),
    mutable(N, "spec.routingConfig.routingMode", "routingConfig.routingMode", type="enum"),
    mutable(N, "spec.routingConfig.bgpBestPathSelectionMode", "routingConfig.bgpBestPathSelectionMode", type="enum"),
    Expect(N, "spec.mtu", "mtu", {}, False, NET_ALLOW, True, "compute.networks.get returns mtu", type="integer"),
    Expect(N, "spec.autoCreateSubnetworks", "autoCreateSubnetworks", {}, False, NET_ALLOW, True,
           "compute.networks.get returns autoCreateSubnetworks", type="boolean"),
    # immutable wins over the allow-list as the reason
    Expect(N, "spec.networkProfile", "networkProfile", {"immutable": [C_CREATE_ONLY]}, False, f"immutable ({C_CREATE_ONLY})",
           True, "compute.networks.get returns networkProfile", type="string"),
    Expect(N, "spec.params", "params", {"input-only": ["description:'Input only.'", "description:'[Input Only]'"]},
           False, NET_ALLOW, False, "input-only (description:'Input only.'): GET never returns it", type="object"),
    status(N, "status.observedState.routingConfig.effectiveBgpInterRegionCost", "routingConfig.effectiveBgpInterRegionCost", C_OUT, type="enum"),
    status(N, "status.observedState.gatewayIPv4", "gatewayIPv4", C_OUT_BRACKET, type="string"),
    status(N, "status.observedState.peerings[].state", "peerings[].state", C_OUT, type="enum"),
]


def _params(with_marks: bool) -> list[Any]:
    return [
        pytest.param(e, id=f"{e.kind}:{e.path}", marks=[pytest.mark.xfail(strict=True, reason=e.xfail)] if (with_marks and e.xfail) else [])
        for e in EXPECTED
    ]


def test_enough_rows_per_kind() -> None:
    counts = {k: sum(e.kind == k for e in EXPECTED) for k in RESOURCE}
    assert all(counts[k] >= 10 for k in (T, S, C)), counts
    for k in (T, S, C):
        paths = [e.path for e in EXPECTED if e.kind == k]
        assert any(p.startswith("status.") for p in paths), k
        assert any("[]" in p for p in paths), k
        assert any(p.count(".") >= 2 for p in paths), k
    assert len({(e.kind, e.path) for e in EXPECTED}) == len(EXPECTED)


@pytest.mark.parametrize("e", _params(with_marks=True))
def test_table_row(e: Expect) -> None:
    table = mutability_of(e.kind)
    assert e.path in table, f"{e.kind}: no row {e.path}"
    row = table[e.path]
    assert row.api_path == e.api_path
    if e.type is not None:
        assert label(row.type) == e.type
    assert {b.value for b in row.behaviours} == set(e.behaviours)
    assert provenance(row)["behaviours"] == e.behaviours
    assert row.identity is e.identity
    assert row.updatable is e.updatable
    assert row.updatable_source == e.updatable_why
    assert row.readable is e.readable
    assert row.readable_source == e.readable_why
    assert row.immutable is (("immutable" in e.behaviours) or e.identity)


@pytest.mark.parametrize("e", _params(with_marks=False))
def test_expectation_is_grounded_in_discovery(e: Expect) -> None:
    """The expected provenance is not just what the generator says: it is in the specs."""
    doc_key, schema = RESOURCE[e.kind]
    if e.api_path is not None:
        api_node(doc_key, schema, e.api_path)  # the API field exists where the row says
    # Check the expected row (not the generated one) against Discovery.
    table = {k: dict(v) for k, v in committed(e.kind).items()}
    table[e.path] = {
        "api_path": e.api_path,
        "behaviours": sorted(e.behaviours),
        "identity": e.identity,
        "updatable": e.updatable,
        "readable": e.readable,
        "provenance": {"behaviours": e.behaviours, "updatable": e.updatable_why, "readable": e.readable_why},
    }
    check_row_provenance(e.kind, doc_key, schema, table, e.path)
    for behaviour, sources in e.behaviours.items():
        for source in sources:
            if source.startswith("description:"):
                # the quoted phrase also says what the behaviour is
                words = {"output-only": r"output[ -]only|responses from the server", "input-only": r"input[ -]only",
                         "immutable": r"immutable|only at resource creation", "required": "required",
                         "optional": "optional", "identifier": "identifier"}[behaviour]
                assert re.search(words, _phrase(source), re.IGNORECASE), (e.path, source)


def test_paths_that_must_not_be_in_spec() -> None:
    """The identity and output-only API fields never appear as spec paths."""
    for kind, paths in {
        T: ["spec.name", "spec.state", "spec.satisfiesPzs"],
        S: ["spec.name", "spec.createTime", "spec.policyMember", "spec.rotation.managedRotationStatus"],
        C: ["spec.name", "spec.id", "spec.selfLink", "spec.creationTimestamp", "spec.gatewayAddress", "spec.state"],
        N: ["spec.name", "spec.peerings", "spec.selfLink", "spec.routingConfig.effectiveBgpInterRegionCost", "spec.subnetworks"],
    }.items():
        table = mutability_of(kind)
        assert [p for p in paths if p in table] == [], kind


def test_network_allow_list_is_quoted_from_networks_patch() -> None:
    desc = method_description("compute.v1", "compute.networks.patch")
    assert "Only routingConfig can be modified." in _norm(desc)
    table = mutability_of(N)
    for path, row in table.items():
        if not path.startswith("spec.") or row.identity or Behaviour.IMMUTABLE in row.behaviours:
            continue
        top = (row.api_path or "").split(".")[0].split("[")[0]
        assert row.updatable is (top == "routingConfig"), path
        if top != "routingConfig":
            assert row.updatable_source == NET_ALLOW, path


# compute subnetworks.patch: "Only certain fields can be updated with a patch
# request as indicated in the field descriptions." Two descriptions name a
# different method, so a whole-resource PATCH carrying them changes nothing.
@pytest.mark.parametrize(
    ("path", "api_path", "says"),
    [
        pytest.param(
            "spec.ipCidrRange", "ipCidrRange",
            "This field is set at resource creation time. The range can be any range listed in theValid ranges list. "
            "The range can be expanded after creation usingexpandIpCidrRange.",
            id="ipCidrRange",
        ),
        pytest.param(
            "spec.privateIpGoogleAccess", "privateIpGoogleAccess",
            "This field can be both set at resource creation time and updated using setPrivateIpGoogleAccess.",
            id="privateIpGoogleAccess",
        ),
    ],
)
def test_subnetwork_fields_patch_cannot_change(path: str, api_path: str, says: str) -> None:
    assert _norm(says) in _norm(api_node("compute.v1", "Subnetwork", api_path)["description"])
    assert "Only certain fields can be updated with a patch request" in _norm(method_description("compute.v1", "compute.subnetworks.patch"))
    row = mutability_of(C)[path]
    assert not (row.updatable and row.updatable_source.startswith("compute.subnetworks.patch")), row.updatable_source


@pytest.mark.parametrize("path", ["spec.secondaryIpRanges", "spec.role", "spec.stackType", "spec.privateIpv6GoogleAccess"])
def test_subnetwork_fields_described_as_patchable_are_updatable(path: str) -> None:
    row = mutability_of(C)[path]
    desc = _norm(api_node("compute.v1", "Subnetwork", row.api_path or "")["description"])
    assert re.search(r"updated (?:with a ?patch request|using ?patch)", desc), desc
    assert row.updatable and row.updatable_source == _patch(C, row.api_path or "")


def test_subnetwork_fingerprint_is_observed_not_desired() -> None:
    desc = _norm(api_node("compute.v1", "Subnetwork", "fingerprint")["description"])
    assert "This field will be ignored when inserting a Subnetwork." in desc
    table = mutability_of(C)
    assert "status.observedState.fingerprint" in table
    assert "spec.fingerprint" not in table or not table["spec.fingerprint"].updatable


@pytest.mark.parametrize("kinds", batched_params(KINDS, str, str))
def test_every_provenance_source_is_grounded(kinds: list[str], ir: IR) -> None:
    """Every row of every generated table: quoted phrases, readOnly, overrides, inheritance hold."""
    by_kind = {x.kind: x for x in ir.kinds}
    for kind in kinds:
        k = by_kind[kind]
        assert k.methods.get.response is not None
        doc_key, schema = k.api.doc_key, k.methods.get.response
        table = committed(kind)
        assert table, kind
        for path in table:
            check_row_provenance(kind, doc_key, schema, table, path)


def test_runtime_loads_the_committed_tables() -> None:
    for kind in KINDS:
        loaded = mutability_of(kind)
        raw = committed(kind)
        assert sorted(loaded) == sorted(raw), kind
        for path, row in raw.items():
            assert sorted(b.value for b in loaded[path].behaviours) == row["behaviours"], (kind, path)
            assert (loaded[path].updatable, loaded[path].readable, loaded[path].identity) == (row["updatable"], row["readable"], row["identity"])


# --------------------------------------------------------------------------
# 2. Acceptance: flip Immutable. in an edited copy of specs/
# --------------------------------------------------------------------------

_LEADING_IMMUTABLE = re.compile(r"^(?:(?:Optional|Required|Input only|Identifier)\.\s+)*Immutable\.\s+")


def _leaves(table: dict[str, dict[str, Any]]) -> list[str]:
    return [p for p in table if not any(q.startswith((p + ".", p + "[")) for q in table)]


def pick_to_make_mutable() -> tuple[str, str, str, str]:
    """(kind, path, doc, schema) of a spec leaf whose only immutability is its own leading ``Immutable.``."""
    for kind in (T, S):
        doc_key, schema = RESOURCE[kind]
        table = committed(kind)
        for path in _leaves(table):
            row = table[path]
            if not path.startswith("spec.") or row["identity"] or row["api_path"] is None or "." in row["api_path"]:
                continue
            beh = row["provenance"]["behaviours"]
            if beh.get("immutable") != [IMM] or "input-only" in beh or "output-only" in beh or not row["readable"]:
                continue
            if _LEADING_IMMUTABLE.match(api_node(doc_key, schema, row["api_path"]).get("description", "")):
                return kind, path, doc_key, schema
    raise AssertionError("no field with a leading 'Immutable.' in PubSubTopic or SecretManagerSecret")


def pick_to_make_immutable(avoid: str) -> tuple[str, str, str, str]:
    """A plain mutable top-level scalar spec leaf of the other Kind."""
    for kind in (T, S):
        if kind == avoid:
            continue
        doc_key, schema = RESOURCE[kind]
        table = committed(kind)
        for path in _leaves(table):
            row = table[path]
            if (
                path.startswith("spec.")
                and not row["identity"]
                and row["api_path"] is not None
                and "." not in row["api_path"]
                and row["updatable"]
                and row["readable"]
                and set(row["behaviours"]) <= {"optional"}
                and not row["type"].startswith(("object", "array", "map"))
            ):
                return kind, path, doc_key, schema
    raise AssertionError("no plain mutable field to make immutable")


@dataclass
class Flip:
    orig_specs: Path
    edited_specs: Path
    orig_root: Path
    edited_root: Path
    to_mutable: tuple[str, str, str, str]
    to_immutable: tuple[str, str, str, str]
    descriptions: dict[str, tuple[str, str]]  # "doc:Schema.field" -> (before, after)
    lag_json: dict[str, Any]
    lag_text: str


def _cli(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    return subprocess.Popen(
        [sys.executable, "-m", "kccgen.generator.cli", *args], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _finish(p: subprocess.Popen[str]) -> str:
    out, err = p.communicate(timeout=600)
    assert p.returncode == 0, f"{p.args}: exit {p.returncode}\n{err}"
    return out


@pytest.fixture(scope="module")
def flip(tmp_path_factory: pytest.TempPathFactory) -> Flip:
    tmp = tmp_path_factory.mktemp("flip")
    # the curated kind files only: four whole generations of every pinned API would take many minutes
    orig_specs = curated_specs(tmp / "orig-specs")
    edited_specs = tmp / "specs"
    shutil.copytree(orig_specs, edited_specs)

    to_mutable = pick_to_make_mutable()
    to_immutable = pick_to_make_immutable(avoid=to_mutable[0])
    descriptions: dict[str, tuple[str, str]] = {}
    edits: dict[str, list[tuple[str, str, bool]]] = {}
    for (kind, path, doc_key, schema), remove in ((to_mutable, True), (to_immutable, False)):
        edits.setdefault(doc_key, []).append((schema, committed(kind)[path]["api_path"], remove))
    for doc_key, todo in edits.items():
        f = edited_specs / "discovery" / f"{doc_key}.json"
        data = json.loads(f.read_text())
        for schema, name, remove in todo:
            prop = data["schemas"][schema]["properties"][name]
            before = prop["description"]
            if remove:
                after = re.sub(r"(?<![\w-])Immutable\.\s+", "", before, count=1)
            else:
                after = "Immutable. " + before
            assert after != before
            prop["description"] = after
            descriptions[f"{doc_key}:{schema}.{name}"] = (before, after)
        f.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")

    orig_root, edited_root = tmp / "orig", tmp / "edited"
    procs = [
        _cli("--root", str(orig_root), "--specs", str(orig_specs), "generate", "--force"),
        _cli("--root", str(edited_root), "--specs", str(edited_specs), "generate", "--force"),
        _cli("lag", str(orig_specs), str(edited_specs), "--format", "json"),
        _cli("lag", str(orig_specs), str(edited_specs)),
    ]
    outs = [_finish(p) for p in procs]
    return Flip(orig_specs, edited_specs, orig_root, edited_root, to_mutable, to_immutable, descriptions, json.loads(outs[2]), outs[3])


def _lag_kind(flip: Flip, kind: str) -> dict[str, Any]:
    found: dict[str, Any] = next(k for k in flip.lag_json["kinds"] if k["kind"] == kind)
    return found


def _text_block(text: str, kind: str) -> str:
    m = re.search(rf"^{re.escape(kind)} \(.*?(?=^\S|\Z)", text, re.MULTILINE | re.DOTALL)
    assert m, f"no {kind} block in lag text:\n{text}"
    return m.group(0)


def test_flip_fields_were_found(flip: Flip) -> None:
    kind, path, doc_key, schema = flip.to_mutable
    api = committed(kind)[path]["api_path"]
    before, after = flip.descriptions[f"{doc_key}:{schema}.{api}"]
    assert _LEADING_IMMUTABLE.match(before) and "Immutable." not in after
    kind2, path2, doc2, schema2 = flip.to_immutable
    api2 = committed(kind2)[path2]["api_path"]
    before2, after2 = flip.descriptions[f"{doc2}:{schema2}.{api2}"]
    assert "mmutable" not in before2 and after2.startswith("Immutable. ")
    # the edited JSON really carries the edit
    edited = json.loads((flip.edited_specs / "discovery" / f"{doc_key}.json").read_text())
    assert edited["schemas"][schema]["properties"][api]["description"] == after


def test_original_generation_matches_committed_tables(flip: Flip) -> None:
    for kind in (flip.to_mutable[0], flip.to_immutable[0]):
        assert load_table(table_file(flip.orig_root, kind)) == committed(kind), kind


def test_flip_immutable_to_mutable_in_table(flip: Flip) -> None:
    kind, path, _, _ = flip.to_mutable
    old = load_table(table_file(flip.orig_root, kind))
    new = load_table(table_file(flip.edited_root, kind))
    api = old[path]["api_path"]
    assert "immutable" in old[path]["behaviours"] and old[path]["updatable"] is False
    assert old[path]["provenance"]["updatable"] == f"immutable ({IMM})"
    assert "immutable" not in new[path]["behaviours"] and new[path]["updatable"] is True
    assert "immutable" not in new[path]["provenance"]["behaviours"]
    assert new[path]["provenance"]["updatable"] == _patch(kind, api)
    # nothing else in the Kind's table moved
    assert sorted(old) == sorted(new)
    assert {p: r for p, r in old.items() if p != path} == {p: r for p, r in new.items() if p != path}


def test_flip_mutable_to_immutable_in_table(flip: Flip) -> None:
    kind, path, _, _ = flip.to_immutable
    old = load_table(table_file(flip.orig_root, kind))
    new = load_table(table_file(flip.edited_root, kind))
    assert "immutable" not in old[path]["behaviours"] and old[path]["updatable"] is True
    assert "immutable" in new[path]["behaviours"] and new[path]["updatable"] is False
    assert new[path]["provenance"]["behaviours"]["immutable"] == [IMM]
    assert new[path]["provenance"]["updatable"] == f"immutable ({IMM})"
    assert {p: r for p, r in old.items() if p != path} == {p: r for p, r in new.items() if p != path}


def test_lag_json_reports_the_flips(flip: Flip) -> None:
    kind, path, _, _ = flip.to_mutable
    api = committed(kind)[path]["api_path"]
    lag = _lag_kind(flip, kind)
    assert lag["became_mutable"] == [
        {"path": path, "old": "immutable", "new": "mutable", "why": f"now: {_patch(kind, api)}"}
    ]
    assert lag["became_immutable"] == lag["behaviours_changed"] == lag["types_changed"] == lag["added"] == lag["removed"] == []

    kind2, path2, _, _ = flip.to_immutable
    lag2 = _lag_kind(flip, kind2)
    assert lag2["became_immutable"] == [{"path": path2, "old": "mutable", "new": "immutable", "why": IMM}]
    assert lag2["became_mutable"] == lag2["behaviours_changed"] == lag2["added"] == lag2["removed"] == []

    # every other Kind: no change
    others = [k for k in flip.lag_json["kinds"] if k["kind"] not in (kind, kind2)]
    assert others
    for k in others:
        assert all(k[s] == [] for s in ("became_mutable", "became_immutable", "behaviours_changed", "types_changed", "added", "removed")), k["kind"]

    # the all-schemas section sees both edits, and nothing else
    flips = {(f["doc"], f["field"]) for f in flip.lag_json["schema_flips"]}
    assert flips == {(d, f) for d, f in (key.split(":", 1) for key in flip.descriptions)}


def test_lag_text_reports_the_flips(flip: Flip) -> None:
    kind, path, _, _ = flip.to_mutable
    block = _text_block(flip.lag_text, kind)
    assert "immutable -> mutable (1):" in block
    assert re.search(rf"^\s+{re.escape(path)}  \(now: ", block, re.MULTILINE), block
    kind2, path2, _, _ = flip.to_immutable
    block2 = _text_block(flip.lag_text, kind2)
    assert "mutable -> immutable (1):" in block2
    assert f"{path2}  ({IMM})" in block2
    assert "Kinds total: 1 immutable->mutable, 1 mutable->immutable, 0 other behaviour changes" in flip.lag_text


def test_lag_reports_update_allow_list_changes(tmp_path: Path) -> None:
    # OLD: a directory holding just discovery/compute.v1.json, whose
    # networks.patch also allows mtu.
    old_doc = json.loads(json.dumps(discovery("compute.v1")))
    patch = old_doc["resources"]["networks"]["methods"]["patch"]
    assert "Only routingConfig can be modified." in patch["description"]
    patch["description"] = patch["description"].replace("Only routingConfig can be modified.", "Only routingConfig and mtu can be modified.")
    (tmp_path / "old" / "discovery").mkdir(parents=True)
    (tmp_path / "old" / "discovery" / "compute.v1.json").write_text(json.dumps(old_doc, indent=1))
    # NEW: the curated kind files (every pinned API's IR would take minutes); the other
    # APIs, absent from OLD, are skipped there with a warning.
    new = curated_specs(tmp_path / "new")
    report = json.loads(_finish(_cli("lag", str(tmp_path / "old"), str(new), "--format", "json")))
    assert mutability_of(N)["spec.mtu"].updatable is False
    net = next(k for k in report["kinds"] if k["kind"] == N)
    assert "spec.mtu" in json.dumps(net), net


# --------------------------------------------------------------------------
# 3. Table <-> CRD coverage
# --------------------------------------------------------------------------

# kind: a reference whose kind key picks the Kind it names (ComputeFirewallPolicyAssociation's attachmentTargetRef)
_REF_KEYS = {"external", "name", "namespace", "kind"}


def _is_ref(node: dict[str, Any]) -> bool:
    props = node.get("properties")
    return isinstance(props, dict) and "external" in props and set(props) <= _REF_KEYS


def _is_choice(node: dict[str, Any]) -> bool:
    """A oneOf reference field's object (kind config ``oneOf``): exactly one key set."""
    return any(str(r.get("rule", "")).endswith("? 1 : 0) == 1") for r in node.get("x-kubernetes-validations") or [])


def crd_paths(node: dict[str, Any], prefix: str) -> Iterator[str]:
    """Field paths below an openAPIV3 node, in the table's spelling (``[]`` for items, ``.*`` for map values)."""
    if node.get("type") == "array" and isinstance(node.get("items"), dict):
        yield from crd_paths(node["items"], prefix + "[]")
        return
    if _is_ref(node) or _is_choice(node):
        return  # a reference, or a oneOf object of references: one row for the API field
    for name, prop in node.get("properties", {}).items():
        path = f"{prefix}.{name}"
        yield path
        yield from crd_paths(prop, path)
    ap = node.get("additionalProperties")
    if isinstance(ap, dict) and not node.get("properties"):
        yield from crd_paths(ap, prefix + ".*")


from kccgen.generator.emit.policies import GROUP as IAM_GROUP  # noqa: E402
from kccgen.generator.emit.policies import KINDS as IAM_KINDS  # noqa: E402

CRDS = sorted(p for p in (REPO / "generated" / "crds").glob("*.yaml") if p.name not in {f"{plural}.{IAM_GROUP}.yaml" for _, plural, *_ in IAM_KINDS})


def _crd(path: Path) -> tuple[str, dict[str, Any]]:
    data = load_crd(path)
    versions = data["spec"]["versions"]
    # Config Connector's version names (kccVersions) validate as ours: one schema, descriptions aside
    first = without_descriptions(versions[0]["schema"])
    assert all(without_descriptions(v["schema"]) == first for v in versions[1:]), path.name
    return data["spec"]["names"]["kind"], versions[0]["schema"]["openAPIV3Schema"]


def test_every_kind_has_a_crd_and_a_table() -> None:
    assert sorted(_crd(p)[0] for p in CRDS) == sorted(KINDS)


def _crd_kind(path: Path) -> str:
    return str(_crd(path)[0])


CRD_BATCHES = batched_params(CRDS, _crd_kind, lambda p: p.name.split(".")[0])


@pytest.mark.parametrize("crds", CRD_BATCHES)
def test_table_covers_crd_spec(crds: list[Path]) -> None:
    for crd in crds:
        _table_covers_crd_spec(crd)


def _table_covers_crd_spec(crd: Path) -> None:
    kind, schema = _crd(crd)
    table = committed(kind)
    # A Config Connector alias is described by its target's rows: the runtime
    # moves its value there before it reads the table (one with no target is sent nowhere).
    aliases = {f"spec.{a.field}": f"spec.{a.target}" for a in adapter_for(kind).aliases}
    assert sorted(t for t in aliases.values() if t not in table and t != "spec.") == [], f"{kind}: alias targets without a mutability row"
    # an alias spelled as its own API field (a boolean for the API's enum) is the field's row
    moved = [a for a, t in aliases.items() if a != t]
    from_crd = {
        p for p in crd_paths(schema["properties"]["spec"], "spec") if not any(p == a or (p[len(a) : len(a) + 1] in (".", "[") and p.startswith(a)) for a in moved)
    }
    # a field that takes Config Connector's other form too (a JSON string) is one node of any
    # value in the CRD; its rows still describe the API's sub-fields, which the runtime sends
    formed = [f"spec.{f.path}" for f in adapter_for(kind).forms]
    from_table = {p for p in table if p.startswith("spec.") and not any(p.startswith(f + ".") or p.startswith(f + "[") for f in formed)}
    assert sorted(from_crd - from_table) == [], f"{kind}: CRD spec paths without a mutability row"
    assert sorted(from_table - from_crd) == [], f"{kind}: mutability rows not in the CRD spec"


@pytest.mark.parametrize("crds", CRD_BATCHES)
def test_table_covers_crd_observed_state(crds: list[Path]) -> None:
    for crd in crds:
        _table_covers_crd_observed_state(crd)


def _table_covers_crd_observed_state(crd: Path) -> None:
    kind, schema = _crd(crd)
    table = committed(kind)
    observed = schema["properties"]["status"]["properties"].get("observedState", {})
    from_crd = set(crd_paths(observed, "status.observedState"))
    from_table = {p for p in table if p.startswith("status.observedState.")}
    assert sorted(from_crd - from_table) == [], kind
    assert sorted(from_table - from_crd) == [], kind
    assert set(table) == from_table | {p for p in table if p.startswith("spec.")}, kind
