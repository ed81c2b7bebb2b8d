"""Emit the four IAM Kinds: IAMPolicy, IAMPartialPolicy, IAMPolicyMember, IAMAuditConfig.

They are not resources of one document: each names, in ``spec.resourceRef``, any
resource whose adapter has ``iam`` (a ``getIamPolicy``/``setIamPolicy`` pair the
generator found in its document) or one of specs/external-kinds.yaml's ``iam:``
entries (Organization), and owns a part of that resource's policy
(kccgen.contract.Owns). Their schemas are Config Connector's, so its manifests
apply unchanged; the CRD and the pydantic types are written from one schema
value here, the adapter is a kccgen.contract.PolicyAdapter.
"""

from __future__ import annotations

import copy
import keyword
import re
from typing import Any

import yaml

from kccgen.contract import IamTarget, MemberRef, Owns
from kccgen.generator.emit.crds import LABELS, PRINTER_COLUMNS, _CrdDumper
from kccgen.generator.render import py_source

GROUP = "iam.cnrm.cloud.google.com"
VERSION = "v1beta1"
PACKAGE = "iam/v1beta1"

#: memberFrom's references: which object gives the principal, and where in it.
MEMBER_REFS: tuple[MemberRef, ...] = (
    MemberRef("bigQueryConnectionConnectionRef", "BigQueryConnectionConnection", (), by_type=(
        ("cloudResource", ("status.observedState.cloudResource.serviceAccountId",)),
        ("cloudSQL", ("status.observedState.cloudSql.serviceAccountId",)),
        ("spark", ("status.observedState.spark.serviceAccountId",)),
    )),
    MemberRef("logSinkRef", "LoggingLogSink", ("status.observedState.writerIdentity",), prefix=""),
    MemberRef("serviceAccountRef", "IAMServiceAccount", ("status.observedState.email",), from_name="{serviceAccount}@{project}.iam.gserviceaccount.com"),
    MemberRef("serviceIdentityRef", "ServiceIdentity", ("status.observedState.email", "status.email")),
    MemberRef("sqlInstanceRef", "SQLInstance", ("status.observedState.serviceAccountEmailAddress", "spec.serviceAccountEmailAddress")),
)

ROLE_PATTERN = r"^((projects|organizations)/[^/]+/)?roles/[\w_\.]+$"
LOG_TYPE_PATTERN = r"^(DATA_READ|DATA_WRITE|ADMIN_READ)$"


def _s(description: str, **kw: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **kw}


def _obj(description: str, props: dict[str, Any], required: tuple[str, ...] = (), rules: tuple[tuple[str, str], ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "description": description, "properties": props}
    if required:
        out["required"] = list(required)
    if rules:
        out["x-kubernetes-validations"] = [{"rule": r, "message": m} for r, m in rules]
    return out


def _array(description: str, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "description": description, "items": item}


RESOURCE_REF = _obj(
    "The resource whose IAM policy this object manages: a Kind with IAM policy methods, by `name` (and `namespace`) or by `external`.",
    {
        "apiVersion": _s("The referenced object's apiVersion (optional: the Kind decides)."),
        "external": _s("The resource's name (asset-inventory form without the service domain): `projects/my-project`, an organization's number."),
        "kind": _s("The Kind of the resource: PubSubTopic, StorageBucket, Project, Folder, Organization..."),
        "name": _s("The `metadata.name` of the referenced object."),
        "namespace": _s("The `metadata.namespace` of the referenced object; defaults to this object's namespace."),
    },
    ("kind",),
    (("has(self.external) != has(self.name)", "exactly one of external or name must be set"), ("!has(self.namespace) || has(self.name)", "namespace is only allowed with name")),
)
CONDITION = _obj(
    "An IAM Condition: the binding holds only where the expression is true (policy version 3). A member and a condition together name one binding entry.",
    {
        "description": _s("What the condition is for."),
        "expression": _s("A Common Expression Language expression: request.time < timestamp(\"2030-01-01T00:00:00Z\")."),
        "title": _s("A short title; required by IAM."),
    },
    ("expression", "title"),
)
ROLE = _s("The role: roles/editor, projects/P/roles/R, organizations/O/roles/R.", pattern=ROLE_PATTERN)


def _named(description: str, extra: dict[str, Any] | None = None, required: tuple[str, ...] = ("name",)) -> dict[str, Any]:
    props = {"name": _s("The `metadata.name` of the object."), "namespace": _s("Its namespace; defaults to this object's.")}
    return _obj(description, {**props, **(extra or {})}, required)


MEMBER_FROM = _obj(
    "A principal taken from another object, once it is ready: a service account's email, a sink's writer identity...",
    {
        "bigQueryConnectionConnectionRef": _named(
            "The service account of a BigQueryConnectionConnection of the given type.",
            {"type": _s("Which of the connection's service accounts.", enum=["spark", "cloudSQL", "cloudResource"])},
            ("name", "type"),
        ),
        "logSinkRef": _named("The writer identity of a LoggingLogSink."),
        "serviceAccountRef": _named("An IAMServiceAccount: serviceAccount:<email>."),
        "serviceIdentityRef": _named("A ServiceIdentity: serviceAccount:<email>."),
        "sqlInstanceRef": _named("The service account of an SQLInstance."),
    },
)
# exactly one, as Config Connector's CRD says it: oneOf costs no CEL budget under the bindings' lists
MEMBER_FROM["oneOf"] = [{"required": [r.field]} for r in MEMBER_REFS]
MEMBER = _s("A principal: user:, serviceAccount:, group:, domain:, principal://, principalSet://, allUsers, allAuthenticatedUsers.")
AUDIT_LOG_CONFIGS = _array(
    "Which kinds of access are logged, each with the members exempted from it.",
    _obj(
        "One log type and its exemptions.",
        {
            "exemptedMembers": _array("Members whose access of this type is not logged.", {"type": "string"}),
            "logType": _s("DATA_READ, DATA_WRITE or ADMIN_READ.", pattern=LOG_TYPE_PATTERN),
        },
        ("logType",),
    ),
)
SERVICE = _s("The service the config is for (storage.googleapis.com), or allServices.")
MEMBER_ONE_OF = [{"required": ["member"]}, {"required": ["memberFrom"]}]


def _bindings(members: dict[str, Any]) -> dict[str, Any]:
    return _array(
        "Role bindings: each a role, its members and an optional condition.",
        _obj("One role binding.", {"condition": CONDITION, "members": members, "role": ROLE}, ("role",)),
    )


PLAIN_BINDINGS = _bindings(_array("The members (principals) the role is granted to.", MEMBER))
STATUS_BINDINGS = _bindings(_array("The members.", {"type": "string"}))

#: (Kind, plural, what it owns, its description, spec schema, status properties beyond conditions)
KINDS: tuple[tuple[str, str, Owns, str, dict[str, Any], dict[str, Any]], ...] = (
    (
        "IAMAuditConfig", "iamauditconfigs", Owns.AUDIT_CONFIG,
        "One service's audit logging configuration in a resource's IAM policy; nothing else of the policy is touched.",
        _obj("The audit config.", {"auditLogConfigs": AUDIT_LOG_CONFIGS, "resourceRef": RESOURCE_REF, "service": SERVICE}, ("auditLogConfigs", "resourceRef", "service")),
        {},
    ),
    (
        "IAMPartialPolicy", "iampartialpolicies", Owns.BINDINGS,
        "The bindings it lists in a resource's IAM policy; members and roles it does not list are left as they are.",
        _obj(
            "The bindings this object owns.",
            {
                "bindings": _bindings(_array("The members: each a principal or a reference to an object giving one.", {**_obj("One member.", {"member": MEMBER, "memberFrom": MEMBER_FROM}), "oneOf": MEMBER_ONE_OF})),
                "resourceRef": RESOURCE_REF,
            },
            ("resourceRef",),
        ),
        {
            "allBindings": {**STATUS_BINDINGS, "description": "Every binding of the resource's policy, as last read."},
            "lastAppliedBindings": {**STATUS_BINDINGS, "description": "The bindings this object last wrote: what it owns, and removes on delete."},
        },
    ),
    (
        "IAMPolicy", "iampolicies", Owns.POLICY,
        "A resource's whole IAM policy: bindings and audit configs. It replaces whatever else the policy held.",
        _obj(
            "The policy.",
            {
                "auditConfigs": _array("Audit logging configurations, one per service.", _obj("One service's audit config.", {"auditLogConfigs": AUDIT_LOG_CONFIGS, "service": SERVICE}, ("auditLogConfigs", "service"))),
                "bindings": PLAIN_BINDINGS,
                "resourceRef": RESOURCE_REF,
            },
            ("resourceRef",),
        ),
        {},
    ),
    (
        "IAMPolicyMember", "iampolicymembers", Owns.MEMBER,
        "One member in one role (under one condition) of a resource's IAM policy; other members are left as they are.",
        {
            **_obj(
                "The member, the role and the resource.",
                {"condition": CONDITION, "member": MEMBER, "memberFrom": MEMBER_FROM, "resourceRef": RESOURCE_REF, "role": ROLE},
                ("resourceRef", "role"),
            ),
            "oneOf": MEMBER_ONE_OF,
        },
        {
            "binding": _obj(
                "The binding entry this object owns, as written: its role, member and condition.",
                {"condition": CONDITION, "member": _s("The principal, resolved."), "role": _s("The role.")},
            ),
        },
    ),
)


def _status(kind: str, extra: dict[str, Any]) -> dict[str, Any]:
    cond = {k: {"type": "string"} for k in ("lastTransitionTime", "message", "reason", "status", "type")}
    props = {
        "conditions": _array("Conditions represent the latest available observations of the object's current state.", {"type": "object", "properties": {**cond, "observedGeneration": {"type": "integer"}}}),
        "externalRef": _s("The resource whose policy this object manages (its name)."),
        "observedGeneration": {"type": "integer", "description": "The generation most recently observed by the controller."},
        **extra,
    }
    return {"type": "object", "description": f"{kind}Status defines the observed state of {kind}.", "properties": dict(sorted(props.items()))}


def crd(kind: str, plural: str, description: str, spec: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    root = {
        "type": "object",
        "description": description,
        "properties": {
            "apiVersion": {"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."},
            "kind": {"type": "string", "description": "Kind is a string value representing the REST resource this object represents."},
            "metadata": {"type": "object"},
            "spec": spec,
            "status": _status(kind, status),
        },
        "required": ["spec"],
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}", "labels": dict(LABELS), "annotations": {"kccgen.dev/shape": "iam-policy"}},
        "spec": {
            "group": GROUP,
            "names": {
                "categories": ["gcp"],
                "kind": kind,
                "listKind": f"{kind}List",
                "plural": plural,
                "shortNames": [f"gcp{kind.lower()}", f"gcp{plural}"],
                "singular": kind.lower(),
            },
            "scope": "Namespaced",
            "versions": [
                {
                    "name": VERSION,
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": [dict(c) for c in PRINTER_COLUMNS],
                    "schema": {"openAPIV3Schema": root},
                }
            ],
        },
    }


# --- pydantic types ---------------------------------------------------------------------------


def _snake(name: str) -> str:
    out = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
    return out + "_" if keyword.iskeyword(out) else out


def _classes(name: str, schema: dict[str, Any], out: dict[str, str]) -> str:
    """The Python type of ``schema``; object schemas become classes named after their path."""
    t = schema.get("type")
    if t == "array":
        return f"list[{_classes(name.removesuffix('s') if name.endswith('s') else name + 'Item', schema['items'], out)}]"
    if t == "integer":
        return "int"
    if t != "object":
        return "str"
    lines = [f"class {name}(KRMModel):", f'    """{schema.get("description", name)}"""', ""]
    required = set(schema.get("required") or ())
    for key, sub in sorted((schema.get("properties") or {}).items()):
        py = _classes(name + key[0].upper() + key[1:], sub, out)
        field = _snake(key)
        desc = str(sub.get("description", "")).replace("\\", "\\\\").replace('"', '\\"')
        alias = f'alias="{key}", ' if field != key else ""
        if key in required:
            lines.append(f'    {field}: Annotated[{py}, Field({alias}description="{desc}")]')
        else:
            lines.append(f'    {field}: Annotated[{py} | None, Field({alias}description="{desc}")] = None')
    out[name] = "\n".join(lines if len(lines) > 3 else [*lines[:2]]) + "\n"
    return name


def types_source(kind: str, description: str, spec: dict[str, Any], status: dict[str, Any]) -> str:
    classes: dict[str, str] = {}
    _classes(f"{kind}Spec", spec, classes)
    status_props = {k: v for k, v in _status(kind, status)["properties"].items() if k not in ("conditions", "externalRef", "observedGeneration")}
    status_cls = f"class {kind}Status(KRMStatus):\n    \"\"\"The observed status of a {kind}.\"\"\"\n"
    for key, sub in sorted(status_props.items()):
        py = _classes(f"{kind}Status{key[0].upper()}{key[1:]}", sub, classes)
        status_cls += f'\n    {_snake(key)}: Annotated[{py} | None, Field(alias="{key}")] = None'
    body = "\n\n".join(classes[c] for c in sorted(classes))
    return (
        f'''"""{kind} ({GROUP}/{VERSION}) KRM types.

Generated by kccgen (generator/emit/policies.py: Config Connector's IAM Kinds); do not edit.
{description}
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from kccgen.runtime.krm import KRMModel, KRMObject, KRMStatus


{body}

{status_cls}


class {kind}(KRMObject):
    """{kind}: {description}"""

    API_VERSION: ClassVar[str] = "{GROUP}/{VERSION}"
    KIND: ClassVar[str] = "{kind}"

    api_version: Annotated[Literal["{GROUP}/{VERSION}"], Field(alias="apiVersion")] = "{GROUP}/{VERSION}"
    kind: Literal["{kind}"] = "{kind}"
    spec: {kind}Spec
    status: {kind}Status | None = None
'''
    )


# --- adapter, references, mutability ------------------------------------------------------------


SHARED = "iam_policy_targets"  # the module the four adapters share: targets and memberFrom's references


def shared_source(targets: tuple[IamTarget, ...]) -> str:
    """What every IAM Kind's adapter declares alike, written once."""
    names: set[str] = set()
    external = "(" + "".join(f"{py_source(t, names)}, " for t in targets) + ")"
    refs = "(" + "".join(f"{py_source(r, names)}, " for r in MEMBER_REFS) + ")"
    return f'''"""What the IAM Kinds' adapters share: the resources no Kind serves that they may
name (specs/external-kinds.yaml ``iam:``), and memberFrom's references.

Generated by kccgen (generator/emit/policies.py); do not edit.
"""

from __future__ import annotations

from kccgen.contract import {", ".join(sorted(names))}

EXTERNAL_TARGETS: tuple[IamTarget, ...] = {external}

MEMBER_REFS: tuple[MemberRef, ...] = {refs}
'''


def adapter_source(kind: str, owns: Owns) -> str:
    return f'''"""{kind} adapter: an IAM Kind (kccgen.contract.PolicyAdapter).

Generated by kccgen (generator/emit/policies.py, specs/external-kinds.yaml); do not edit.
Its resourceRef names any Kind whose adapter has ``iam``, or one of ``external_targets``.
"""

from __future__ import annotations

from kccgen.contract import Owns, PolicyAdapter
from kccgen.generated.{PACKAGE.replace("/", ".")}.{SHARED} import EXTERNAL_TARGETS, MEMBER_REFS
from kccgen.runtime.adapter import register_policy_adapter

ADAPTER = PolicyAdapter(
    kind="{kind}",
    api_version="{GROUP}/{VERSION}",
    owns=Owns.{owns.name},
    external_targets=EXTERNAL_TARGETS,
    member_refs=MEMBER_REFS,
)

register_policy_adapter(ADAPTER)
'''


def reference_source(kind: str, spec: dict[str, Any]) -> str:
    """memberFrom's references, registered like any Kind's: named objects are applied first."""
    props = spec["properties"]
    prefix = "bindings[].members[].memberFrom" if "bindings" in props and kind == "IAMPartialPolicy" else "memberFrom"
    rows = "" if "memberFrom" not in props and kind != "IAMPartialPolicy" else "".join(
        f'    RefField(path="{prefix}.{r.field}", target="{r.kind}", api_path="{prefix}.{r.field}"),\n' for r in MEMBER_REFS
    )
    return (
        f'''"""{kind} references: memberFrom's objects (resourceRef names its Kind itself).

Generated by kccgen (generator/emit/policies.py); do not edit.
"""

from __future__ import annotations

from kccgen.runtime.refs import RefField, register_references

KIND = "{kind}"

REFERENCES: tuple[RefField, ...] = (
{rows})

register_references(KIND, REFERENCES)
'''
    )


def _rows(owns: Owns) -> list[tuple[str, bool]]:
    """(spec path, updatable): what names the owned part cannot change, as in Config Connector."""
    fixed = {"resourceRef"}
    if owns is Owns.MEMBER:
        fixed |= {"member", "memberFrom", "role", "condition"}
    if owns is Owns.AUDIT_CONFIG:
        fixed |= {"service"}
    spec = next(s for k, _, o, _, s, _ in KINDS if o is owns)
    return [(f"spec.{k}", k not in fixed) for k in sorted(spec["properties"])]


def mutability_source(kind: str, owns: Owns) -> str:
    rows = "".join(
        f'    FieldRule(path="{p}", api_path=None, type=OBJECT, facts=(), updatable={u}, updatable_source="{"Config Connector: names what the object owns" if not u else "policy"}", readable=False, readable_source="an IAM Kind"),\n'
        for p, u in _rows(owns)
    )
    return (
        f'''"""{kind} field rules: which spec fields name what it owns (immutable) and which it writes.

Generated by kccgen (generator/emit/policies.py); do not edit.
"""

from __future__ import annotations

from kccgen.contract import FieldRule, FieldType, TypeKind
from kccgen.runtime.mutability import register_mutability

KIND = "{kind}"
OBJECT = FieldType(kind=TypeKind.OBJECT)

FIELDS: tuple[FieldRule, ...] = (
{rows})

register_mutability(KIND, FIELDS)
'''
    )


def policy_files(targets: tuple[IamTarget, ...]) -> dict[str, str]:
    """Every file of the four Kinds: modules, CRDs; the index entries come from ``index_entries``."""
    out: dict[str, str] = {
        f"generated/{PACKAGE}/__init__.py": '"""IAM Kinds (iam.cnrm.cloud.google.com/v1beta1): IAM policies on any resource."""\n',
        f"generated/{PACKAGE}/{SHARED}.py": shared_source(targets),
    }
    for kind, plural, owns, desc, spec, status in KINDS:
        base = f"generated/{PACKAGE}/{kind.lower()}"
        out[f"{base}_types.py"] = types_source(kind, desc, spec, status)
        out[f"{base}_adapter.py"] = adapter_source(kind, owns)
        out[f"{base}_reference.py"] = reference_source(kind, spec)
        out[f"{base}_mutability.py"] = mutability_source(kind, owns)
        out[f"generated/crds/{plural}.{GROUP}.yaml"] = yaml.dump(crd(kind, plural, desc, copy.deepcopy(spec), status), Dumper=_CrdDumper, sort_keys=True, allow_unicode=True, width=1 << 20)
    return out


def index_entries() -> dict[str, dict[str, Any]]:
    return {
        kind: {"apiVersion": f"{GROUP}/{VERSION}", "servedVersions": [VERSION], "crd": f"crds/{plural}.{GROUP}.yaml", "module": f"{PACKAGE.replace('/', '.')}.{kind.lower()}"}
        for kind, plural, *_ in KINDS
    }
