"""Table test of the field-behaviour classifier on real Discovery descriptions.

Every description below is copied verbatim from the pinned documents in
specs/discovery/ (long ones are cut to a verbatim leading part of at least
60 characters, never before the text that decides the result);
``test_rows_are_verbatim`` checks that against the JSON, so a refreshed
Discovery document that rewords a field shows up here first.

A row the classifier gets wrong is kept with the correct expectation and
marked ``xfail(strict=True)``, so fixing it is noticed.
"""

from __future__ import annotations

import ast
import json
import re
from functools import cache
from typing import Any

import pytest

from kccgen.discovery.behaviours import Behaviour, Fact, behaviours, classify
from tests.conftest import REPO

REQ = Behaviour.REQUIRED
OPT = Behaviour.OPTIONAL
OUT = Behaviour.OUTPUT_ONLY
INP = Behaviour.INPUT_ONLY
IMM = Behaviour.IMMUTABLE
IDN = Behaviour.IDENTIFIER

# A matched phrase must contain the words of its behaviour.
_KEYWORD = {
    REQ: r"required",
    OPT: r"optional",
    OUT: r"output[ -]only|read[ -]only",
    INP: r"input[ -]?only",
    IMM: r"immutable",
    IDN: r"identifier",
}


def _id(doc: str, path: str) -> str:
    """``compute.v1:Address.id`` for ``/schemas/Address/properties/id``."""
    parts = path.split("/")[2:]  # drop "", "schemas"
    names = [p for i, p in enumerate(parts) if i == 0 or parts[i - 1] == "properties"]
    return f"{doc}:{'.'.join(names)}"


def row(
    doc: str,
    path: str,
    description: str | None,
    read_only: bool,
    expected: set[Behaviour],
    xfail: str | None = None,
) -> Any:
    marks = [pytest.mark.xfail(strict=True, reason=xfail)] if xfail else []
    return pytest.param(
        doc, path, description, read_only, frozenset(expected), id=_id(doc, path), marks=marks
    )


ROWS = [
    # --- Output only -------------------------------------------------------
    row("pubsub.v1", "/schemas/Schema/properties/revisionCreateTime",
        "Output only. The timestamp that the revision was created.", True, {OUT}),
    # "Output only." in the prose without readOnly: true
    row("artifactregistry.v1", "/schemas/Version/properties/relatedTags",
        "Output only. A list of related tags. Will contain up to 100 tags that reference this version.", False, {OUT}),
    row("monitoring.v3", "/schemas/Alert/properties/state",
        "Output only. The current state of the alert.", True, {OUT}),
    row("spanner.v1", "/schemas/Database/properties/state",
        "Output only. The current database state.", True, {OUT}),
    row("cloudkms.v1", "/schemas/AutokeyConfig/properties/state",
        "Output only. The state for the AutokeyConfig.", True, {OUT}),
    row("secretmanager.v1", "/schemas/OperationMetadata/properties/createTime",
        "Output only. Time the operation was created.", True, {OUT}),
    # compute's bracketed marker, alone and after "Output only."
    row("compute.v1", "/schemas/AcceleratorType/properties/name",
        "[Output Only] Name of the resource.", False, {OUT}),
    row("compute.v1", "/schemas/License/properties/chargesUseFee",
        "[Output Only] Deprecated. This field no longer reflects whether a license\ncharges a usage fee.", False, {OUT}),
    row("compute.v1", "/schemas/Address/properties/id",
        "Output only. [Output Only] The unique identifier for the resource. This identifier is\ndefined by the server.", True, {OUT}),
    row("compute.v1", "/schemas/InstantSnapshotGroup/properties/status",
        "Output only. [Output Only]", True, {OUT}),
    row("compute.v1", "/schemas/BgpRoute/properties/med",
        "Output only. [Output only] BGP multi-exit discriminator", True, {OUT}),
    row("dns.v1", "/schemas/OutboundEndpoint/properties/createTime",
        "Output only. [Output only] Create time stamp", True, {OUT}),
    # dns: "(output only)" mid-sentence, and a trailing "Output only."
    row("dns.v1", "/schemas/Change/properties/id",
        "Unique identifier for the resource; defined by the server (output only).", False, {OUT}),
    row("dns.v1", "/schemas/Project/properties/quota",
        "Quotas assigned to this project (output only).", False, {OUT}),
    row("dns.v1", "/schemas/ManagedZone/properties/id",
        "Unique identifier for the resource; defined by the server (output only)", False, {OUT}),
    row("dns.v1", "/schemas/DnsKey/properties/publicKey",
        "Base64 encoded public half of this key. Output only.", False, {OUT}),
    row("dns.v1", "/schemas/ManagedZone/properties/creationTime",
        "The time that this resource was created on the server. This is in RFC3339 text format. Output only.", False, {OUT}),
    # readOnly: true with no description at all
    row("dns.v1", "/schemas/ManagedZone/properties/kind", None, True, {OUT}),
    # --- Input only --------------------------------------------------------
    row("artifactregistry.v1", "/schemas/RemoteRepositoryConfig/properties/disableUpstreamValidation",
        "Input only. A create/update remote repo option to avoid making a HEAD/GET request to validate a remote repo and any supplied upstream credentials.", False, {INP}),
    row("secretmanager.v1", "/schemas/Secret/properties/ttl",
        "Input only. The TTL for the Secret.", False, {INP}),
    row("cloudkms.v1", "/schemas/SingleTenantHsmInstanceProposal/properties/ttl",
        "Input only. The TTL for the SingleTenantHsmInstanceProposal. Proposals will expire after this duration.", False, {INP}),
    row("monitoring.v3", "/schemas/TimeSeries/properties/description",
        "Input only. A detailed description of the time series that will be associated with the google.api.MetricDescriptor for the metric.", False, {INP}),
    row("compute.v1", "/schemas/MachineImage/properties/guestFlush",
        "[Input Only] Whether to attempt an application consistent machine image by\ninforming the OS to prepare for the snapshot process.", False, {INP}),
    row("compute.v1", "/schemas/Network/properties/params",
        "Input only. [Input Only] Additional params passed with the request, but not persisted\nas part of resource payload.", False, {INP}),
    row("compute.v1", "/schemas/RouterMd5AuthenticationKey/properties/key",
        "[Input only] Value of the key.\n\nFor patch and update calls, it can be skipped to\ncopy the value from the previous configuration.", False, {INP}),
    # --- Immutable ---------------------------------------------------------
    row("cloudkms.v1", "/schemas/CryptoKey/properties/purpose",
        "Immutable. The immutable purpose of this CryptoKey.", False, {IMM}),
    row("cloudkms.v1", "/schemas/CryptoKey/properties/importOnly",
        "Immutable. Whether this key may contain imported versions only.", False, {IMM}),
    # --- Required ----------------------------------------------------------
    row("pubsub.v1", "/schemas/ConfluentCloud/properties/clusterId",
        "Required. The id of the cluster.", False, {REQ}),
    row("spanner.v1", "/schemas/ExecuteSqlRequest/properties/sql",
        "Required. The SQL string.", False, {REQ}),
    row("secretmanager.v1", "/schemas/CloudSqlSingleUserCredentials/properties/username",
        "Required. Username of the Cloud SQL instance.", False, {REQ}),
    row("monitoring.v3", "/schemas/TimeInterval/properties/endTime",
        "Required. The end of the time interval.", False, {REQ}),
    row("artifactregistry.v1", "/schemas/CommonRemoteRepository/properties/uri",
        "Required. A common public repository base for remote repository.", False, {REQ}),
    row("compute.v1", "/schemas/NodeGroupsPerformMaintenanceRequest/properties/nodes",
        "[Required] List of nodes affected by the call.", False, {REQ}),
    row("dns.v1", "/schemas/GoogleIamV1SetIamPolicyRequest/properties/policy",
        "REQUIRED: The complete policy to be applied to the `resource`. The size of the policy is limited to a few 10s of KB.", False, {REQ}),
    # --- Optional ----------------------------------------------------------
    row("artifactregistry.v1", "/schemas/Repository/properties/mode",
        "Optional. The mode of the repository.", False, {OPT}),
    row("dns.v1", "/schemas/OutboundEndpoint/properties/description",
        "Optional. User provided description.", False, {OPT}),
    row("spanner.v1", "/schemas/Instance/properties/edition",
        "Optional. The `Edition` of the current instance.", False, {OPT}),
    row("pubsub.v1", "/schemas/ReceivedMessage/properties/message",
        "Optional. The message.", False, {OPT}),
    row("compute.v1", "/schemas/ForwardingRuleServiceDirectoryRegistration/properties/serviceDirectoryRegion",
        '[Optional] Service Directory region to register this global forwarding\nrule under. Default to "us-central1".', False, {OPT}),
    row("monitoring.v3", "/schemas/BasicSli/properties/method",
        "OPTIONAL: The set of RPCs to which this SLI is relevant. Telemetry from other methods will not be used to calculate performance for this SLI.", False, {OPT}),
    row("cloudkms.v1", "/schemas/SetIamPolicyRequest/properties/updateMask",
        "OPTIONAL: A FieldMask specifying which fields of the policy to modify. Only the fields in the mask will be modified.", False, {OPT}),
    row("compute.v1", "/schemas/SecurityPolicyRule/properties/headerAction",
        "Optional, additional actions that are performed on headers.\nThis field is only supported in Global Security Policies of type\nCLOUD_ARMOR.", False, {OPT}),
    # --- Identifier --------------------------------------------------------
    row("artifactregistry.v1", "/schemas/ProjectConfig/properties/name",
        "Identifier. The name of the project's configuration. Always of the form: projects/{project}/locations/{location}/projectConfig", False, {IDN}),
    row("cloudkms.v1", "/schemas/KeyHandle/properties/name",
        "Identifier. Name of the KeyHandle resource, e.g. `projects/{PROJECT_ID}/locations/{LOCATION}/keyHandles/{KEY_HANDLE_ID}`.", False, {IDN}),
    row("monitoring.v3", "/schemas/Service/properties/name",
        "Identifier. Resource name for this Service. The format is: projects/[PROJECT_ID_OR_NUMBER]/services/[SERVICE_ID]", False, {IDN}),
    row("dns.v1", "/schemas/OutboundEndpoint/properties/name",
        "Identifier. The resource name of the OutboundEndpoint. Format: `projects/{project}/locations/{location}/outboundEndpoints/{outboundEndpoint}`", False, {IDN}),
    row("spanner.v1", "/schemas/AdapterSession/properties/name",
        "Identifier. The name of the session. This is always system-assigned.", False, {IDN}),
    row("compute.v1", "/schemas/InstantSnapshotGroup/properties/name",
        "Identifier. Name of the resource; provided by the client when the resource is created.", False, {IDN}),
    # --- Combinations ------------------------------------------------------
    row("pubsub.v1", "/schemas/Subscription/properties/tags",
        'Optional. Input only. Immutable. Tag keys/values directly bound to this resource. For example: "123/environment": "production"', False, {OPT, INP, IMM}),
    row("secretmanager.v1", "/schemas/Secret/properties/tags",
        "Optional. Input only. Immutable. Mapping of Tag keys/values directly bound to this resource.", False, {OPT, INP, IMM}),
    row("cloudkms.v1", "/schemas/ImportJob/properties/importMethod",
        "Required. Immutable. The wrapping method to be used for incoming key material.", False, {REQ, IMM}),
    row("dns.v1", "/schemas/OutboundEndpoint/properties/network",
        "Required. Immutable. The VPC network containing the outbound endpoint, specified as full path.", False, {REQ, IMM}),
    row("pubsub.v1", "/schemas/Topic/properties/name",
        'Required. Identifier. The name of the topic. It must have the format `"projects/{project}/topics/{topic}"`.', False, {REQ, IDN}),
    row("monitoring.v3", "/schemas/Snooze/properties/name",
        "Required. Identifier. The name of the Snooze. The format is: projects/[PROJECT_ID_OR_NUMBER]/snoozes/[SNOOZE_ID]", False, {REQ, IDN}),
    row("cloudkms.v1", "/schemas/RetiredResource/properties/name",
        "Output only. Identifier. The resource name for this RetiredResource in the format `projects/*/locations/*/retiredResources/*`.", True, {OUT, IDN}),
    row("pubsub.v1", "/schemas/Schema/properties/revisionId",
        "Output only. Immutable. The revision ID of the schema.", True, {OUT, IMM}),
    row("secretmanager.v1", "/schemas/Secret/properties/replication",
        "Optional. Immutable. The replication policy of the secret data attached to the Secret.", False, {OPT, IMM}),
    row("dns.v1", "/schemas/OutboundEndpoint/properties/endpointIp",
        "Optional. Immutable. User provided IP address to use for outbound DNS forwarding.", False, {OPT, IMM}),
    row("secretmanager.v1", "/schemas/SecretVersion/properties/scheduledDestroyTime",
        "Optional. Output only. Scheduled destroy time for secret version.", True, {OPT, OUT}),
    row("compute.v1", "/schemas/VmExtensionPolicy/properties/state",
        "Optional. Output only. [Output Only] Current state of the policy: ACTIVE or DELETING.", True, {OPT, OUT}),
    row("compute.v1", "/schemas/Commitment/properties/customEndTimestamp",
        "[Input Only] Optional, specifies the requested commitment end time inRFC3339 text format.", False, {INP, OPT}),
    # --- No behaviour ------------------------------------------------------
    row("storage.v1", "/schemas/Bucket/properties/etag",
        "HTTP 1.1 Entity tag for the bucket.", False, set()),
    row("storage.v1", "/schemas/Bucket/properties/timeCreated",
        "The creation time of the bucket in RFC 3339 format.", False, set()),
    row("storage.v1", "/schemas/Bucket/properties/name",
        "The name of the bucket.", False, set()),
    row("pubsub.v1", "/schemas/ListSchemasResponse/properties/schemas",
        "The resulting schemas.", False, set()),
    row("compute.v1", "/schemas/DateTime/properties/timeZone",
        "Time zone.", False, set()),
    row("monitoring.v3", "/schemas/GoogleMonitoringV3Range/properties/max",
        "Range maximum.", False, set()),
    row("spanner.v1", "/schemas/DiagnosticMessage/properties/metric",
        "The metric.", False, set()),
    row("cloudkms.v1", "/schemas/EncryptResponse/properties/ciphertext",
        "The encrypted data.", False, set()),
    # --- Markers outside the leading position (once missed; now recognised) ---
    row("compute.v1", "/schemas/CustomerEncryptionKey/properties/sha256",
        "[DEPRECATED] CSEK is no longer supported. Use CMEK instead.\n[Output only] TheRFC\n4648 base64 encoded SHA-256 hash of the customer-supplied\nencryption key that protects this resource.",
        False, {OUT}),
    row("compute.v1", "/schemas/AWSV4Signature/properties/accessKey",
        "The access key used for s3 bucket authentication. Required for updating or\ncreating a backend that uses AWS v4 signature authentication, but will not\nbe returned as part of the configuration when queried with a REST API GET\nrequest.\n\n@InputOnly",
        False, {INP}),
    row("monitoring.v3", "/schemas/TcpCheck/properties/port",
        "The TCP port on the server against which to run the check. Will be combined with host (specified within the monitored_resource) to construct the full URL. Required.",
        False, {REQ}),
    row("monitoring.v3", "/schemas/UptimeCheckConfig/properties/timeout",
        "The maximum amount of time to wait for the request to complete (must be between 1 and 60 seconds). Required.",
        False, {REQ}),
    row("cloudkms.v1", "/schemas/CryptoKeyVersionTemplate/properties/protectionLevel",
        "ProtectionLevel to use when creating a CryptoKeyVersion based on this template. Immutable. Defaults to SOFTWARE.",
        False, {IMM}),
    row("dns.v1", "/schemas/DnsKey/properties/algorithm",
        "String mnemonic specifying the DNSSEC algorithm of this key. Immutable after creation time.",
        False, {IMM}),
    row("compute.v1", "/schemas/NetworkEndpointGroup/properties/defaultPort",
        "The default port used if the port number is not specified in the network\nendpoint.\n\nOptional. If the network endpoint type is either GCE_VM_IP,SERVERLESS or PRIVATE_SERVICE_CONNECT, this\nfield must not be specified.",
        False, {OPT}),
]  # fmt: skip


# Mid-sentence mentions that are not markers: (row, behaviour(s) that must not appear).
NOT_MARKERS = [
    (row("artifactregistry.v1", "/schemas/ImageManifest/properties/osFeatures",
         "Optional. The required OS features for the image, for example on Windows `win32k`.", False, {OPT}), REQ),
    (row("cloudkms.v1", "/schemas/EkmConnection/properties/cryptoSpacePath",
         "Optional. Identifies the EKM Crypto Space that this EkmConnection maps to. Note: This field is required if KeyManagementMode is CLOUD_KMS.", False, {OPT}), REQ),
    (row("cloudkms.v1", "/schemas/QuorumAuth/properties/requiredApproverCount",
         "Output only. The required numbers of approvers. The M value used for M of N quorum auth.", True, {OUT}), REQ),
    (row("compute.v1", "/schemas/AttachedDiskInitializeParams/properties/replicaZones",
         "Required for each regional disk associated with the instance. Specify\nthe URLs of the zones where the disk should be replicated to.", False, set()), REQ),
    (row("secretmanager.v1", "/schemas/EnableManagedRotationRequest/properties/cloudSqlSingleUserCredentials",
         "Credentials required for Cloud SQL DB for Single user Managed Rotation.", False, set()), REQ),
    (row("spanner.v1", "/schemas/BackupSchedule/properties/name",
         "Identifier. Output only for the CreateBackupSchedule operation. Required for the UpdateBackupSchedule operation.", False, {IDN}), (OUT, REQ)),
    (row("storage.v1", "/schemas/Expr/properties/description",
         "An optional description of the expression. This is a longer text which describes the expression, e.g. when hovered over it in a UI.", False, set()), OPT),
    (row("storage.v1", "/schemas/Bucket/properties/logging",
         "The bucket's logging configuration, which defines the destination bucket and optional name prefix for the current bucket's logs.", False, set()), OPT),
    (row("compute.v1", "/schemas/Address/properties/description",
         "An optional description of this resource. Provide this field when you\ncreate the resource.", False, set()), OPT),
    (row("compute.v1", "/schemas/AcceleratorType/properties/description",
         "[Output Only] An optional textual description of the resource.", False, {OUT}), OPT),
    (row("storage.v1", "/schemas/Bucket/properties/iamConfiguration/properties/uniformBucketLevelAccess/properties/lockedTime",
         "The deadline for changing iamConfiguration.uniformBucketLevelAccess.enabled from true to false in RFC 3339  format. iamConfiguration.uniformBucketLevelAccess.enabled may be changed from true to false until the locked time, after which the field is immutable.", False, set()), IMM),
    (row("artifactregistry.v1", "/schemas/Version/properties/fingerprints",
         "Output only. Immutable reference for the version, calculated based on the version's content.", True, {OUT}), IMM),
    (row("compute.v1", "/schemas/PublicDelegatedPrefix/properties/purpose",
         "Immutable. The purpose of the public delegated prefix.\n\nThis field can only be set for the top-level global public delegated\nprefix. It is an output-only field for the sub-delegates that inherit the\nvalue from the top-level global public delegated prefix.", False, {IMM}), OUT),
    (row("compute.v1", "/schemas/FirewallPolicy/properties/name",
         "Name of the resource. For Organization Firewall Policies it's a\n[Output Only] numeric ID allocated by Google Cloud which uniquely\nidentifies the Organization Firewall Policy.", False, set()), OUT),
    (row("compute.v1", "/schemas/InterconnectAttachment/properties/pairingKey",
         "[Output only for type PARTNER. Input only for PARTNER_PROVIDER. Not\npresent for DEDICATED].\nThe opaque identifier of a PARTNER attachment used to initiate\nprovisioning with a selected partner.", False, set()), OUT),
    (row("compute.v1", "/schemas/InterconnectAttachment/properties/partnerAsn",
         "Optional BGP ASN for the router supplied by a Layer 3 Partner if they\nconfigured BGP on behalf of the customer.\nOutput only for PARTNER type, input only for PARTNER_PROVIDER, not\navailable for DEDICATED.", False, set()), INP),
    (row("compute.v1", "/schemas/Instance/properties/resourceStatus",
         "Output only. [Output Only] Specifies values set for instance attributes as\ncompared to the values requested by user in the corresponding input only\nfield.", True, {OUT}), INP),
    (row("compute.v1", "/schemas/AWSV4Signature/properties/accessKeyId",
         "The identifier of an access key used for s3 bucket authentication.", False, set()), IDN),
]  # fmt: skip


def _names(absent: Behaviour | tuple[Behaviour, ...]) -> str:
    return "+".join(b.value for b in (absent if isinstance(absent, tuple) else (absent,)))


def _plain(params: list[Any]) -> list[Any]:
    """The same rows without their xfail marks (for checks that hold regardless)."""
    return [pytest.param(*p.values, id=p.id) for p in params]


# --- the table --------------------------------------------------------------


@pytest.mark.parametrize(("doc", "path", "description", "read_only", "expected"), ROWS)
def test_classify_real_descriptions(
    doc: str, path: str, description: str | None, read_only: bool, expected: frozenset[Behaviour]
) -> None:
    assert behaviours(classify(description, read_only)) == expected


@pytest.mark.parametrize(
    ("doc", "path", "description", "read_only", "expected", "absent"),
    [
        pytest.param(*p.values, absent, id=f"{p.id}-not-{_names(absent)}", marks=p.marks)
        for p, absent in NOT_MARKERS
    ],
)
def test_mid_sentence_mentions_are_not_markers(
    doc: str,
    path: str,
    description: str,
    read_only: bool,
    expected: frozenset[Behaviour],
    absent: Behaviour | tuple[Behaviour, ...],
) -> None:
    got = behaviours(classify(description, read_only))
    assert not got & set(absent if isinstance(absent, tuple) else (absent,))
    assert got == expected


def test_table_covers_every_behaviour_and_enough_documents() -> None:
    plain = [p for p in ROWS if not p.marks]
    assert len(plain) >= 40
    assert {b for p in plain for b in p.values[4]} == set(Behaviour)
    assert len({p.values[0] for p in plain}) >= 6
    assert sum(1 for p in plain if len(p.values[4]) >= 2) >= 3
    assert any(p.values[2] and p.values[2].startswith("[Output Only]") for p in plain)
    assert any(not p.values[4] for p in plain)


# --- provenance -------------------------------------------------------------


def _check_sources(facts: tuple[Fact, ...], description: str | None, read_only: bool) -> None:
    text = description or ""
    for fact in facts:
        if fact.source == "readOnly":
            assert fact.behaviour is OUT
            assert read_only
            continue
        assert fact.source.startswith("description:"), fact
        phrase = ast.literal_eval(fact.source.removeprefix("description:"))
        assert isinstance(phrase, str) and phrase, fact
        assert phrase in text, f"{fact.source} does not quote the description"
        assert re.search(_KEYWORD[fact.behaviour], phrase, re.IGNORECASE), fact
    assert any(f.source == "readOnly" for f in facts) == read_only


@pytest.mark.parametrize(
    ("doc", "path", "description", "read_only", "expected"),
    _plain(ROWS) + _plain([p for p, _ in NOT_MARKERS]),
)
def test_every_source_quotes_the_matched_phrase(
    doc: str, path: str, description: str | None, read_only: bool, expected: frozenset[Behaviour]
) -> None:
    _check_sources(classify(description, read_only), description, read_only)


@pytest.mark.parametrize(
    ("description", "read_only", "sources"),
    [
        pytest.param("[Output Only] Name of the resource.", False,
                     {"description:'[Output Only]'"}, id="compute-bracket"),
        pytest.param("Output only. [Output Only]", True,
                     {"description:'Output only.'", "description:'[Output Only]'", "readOnly"}, id="compute-both"),
        pytest.param("Quotas assigned to this project (output only).", False,
                     {"description:'(output only)'"}, id="dns-inline"),
        pytest.param("Base64 encoded public half of this key. Output only.", False,
                     {"description:'Output only'"}, id="dns-trailing"),
        pytest.param(None, True, {"readOnly"}, id="readOnly-no-description"),
        pytest.param("REQUIRED: The complete policy to be applied to the `resource`.", False,
                     {"description:'REQUIRED:'"}, id="iam-REQUIRED-colon"),
        pytest.param("Optional. Input only. Immutable. Mapping of Tag keys/values directly bound to this resource.", False,
                     {"description:'Optional.'", "description:'Input only.'", "description:'Immutable.'"}, id="triple"),
    ],
)  # fmt: skip
def test_exact_sources(description: str | None, read_only: bool, sources: set[str]) -> None:
    assert {f.source for f in classify(description, read_only)} == sources


def test_facts_are_sorted_and_deduplicated() -> None:
    facts = classify("Output only. [Output Only] The unique identifier for the resource.", True)
    assert list(facts) == sorted(facts)
    assert len(set(facts)) == len(facts)
    assert behaviours(facts) == {OUT}


def test_empty_and_missing_descriptions() -> None:
    assert classify(None) == ()
    assert classify("") == ()
    assert behaviours(classify(None, read_only=True)) == {OUT}


# --- the rows really come from the pinned documents -------------------------


@cache
def _doc(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (REPO / "specs" / "discovery" / f"{name}.json").read_text(encoding="utf-8")
    )
    return data


def _resolve(doc: str, path: str) -> dict[str, Any]:
    node: Any = _doc(doc)
    for part in path.strip("/").split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    assert isinstance(node, dict)
    return node


@pytest.mark.parametrize(
    ("doc", "path", "description", "read_only", "expected"),
    _plain(ROWS) + _plain([p for p, _ in NOT_MARKERS]),
)
def test_rows_are_verbatim(
    doc: str, path: str, description: str | None, read_only: bool, expected: frozenset[Behaviour]
) -> None:
    field = _resolve(doc, path)
    actual = field.get("description")
    assert bool(field.get("readOnly", False)) == read_only
    if description is None:
        assert actual is None
        return
    assert isinstance(actual, str)
    if actual != description:
        assert len(description) >= 60, "a cut description must keep at least 60 characters"
        assert actual.startswith(description)
        # The cut must not change the answer.
        assert behaviours(classify(actual, read_only)) == behaviours(
            classify(description, read_only)
        )
