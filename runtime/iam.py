"""The IAM Kinds' reconcile: a read-modify-write of the named resource's IAM policy.

IAMPolicy owns the whole policy; IAMPartialPolicy the members it lists in the
roles it lists (and, through ``status.lastAppliedBindings``, the ones it wrote
before); IAMPolicyMember one member in one role under one condition;
IAMAuditConfig one service's audit config (kccgen.contract.Owns). None removes
what it does not own, so any number of them (and other writers) share a policy.

Each write carries the etag of the read it was computed from. A concurrent
writer makes the service refuse it (409 ABORTED, 412 on the legacy APIs); the
whole read-modify-write then runs again after a jittered backoff, a bounded
number of times. An object whose part is already in the policy costs one read.
Everything that can be wrong with the object (a Kind without policy methods, a
member that is no principal, a condition without a title, a reference not
ready) is refused before any call.
"""

from __future__ import annotations

import copy
import random
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kccgen.contract import Adapter, IamMethods, IamTarget, MemberRef, Owns, PolicyAdapter
from kccgen.runtime.gcp import Gcp, GcpError, NotFound, lost_race
from kccgen.runtime.identity import IdentityError, identity_for
from kccgen.runtime.refs import ObjectStore, Reason, RefError, namespace_of

#: The principals IAM takes (https://cloud.google.com/iam/docs/principal-identifiers),
#: and storage's legacy convenience values.
_PRINCIPAL = re.compile(
    r"^(allUsers|allAuthenticatedUsers"
    r"|(user|serviceAccount|group|domain|deleted:user|deleted:serviceAccount|deleted:group):[^\s:]+"
    r"|(principal|principalSet)://\S+"
    r"|(projectOwner|projectEditor|projectViewer):[^\s:]+)$"
)
ATTEMPTS = 10  # read-modify-write rounds before a conflict is reported
BACKOFF_S = 0.2

Binding = tuple[str, str]  # (role, condition as canonical JSON-ish text; "" for none)


class PolicyRefused(ValueError):
    """The object is wrong in a way no call can fix: said before any call."""

    def __init__(self, path: str, message: str, reason: str = "UpdateFailed") -> None:
        super().__init__(f"{path}: {message}")
        self.reason = reason


@dataclass(frozen=True)
class Target:
    """The resource whose policy is managed: where its methods are and its name."""

    kind: str
    doc: str
    resource: tuple[str, ...]
    iam: IamMethods
    external: str
    values: dict[str, str]
    adapter: Adapter | None  # a Kind of ours: calls go through it (folder forms, hosts)


# --- validation and resolution ---------------------------------------------------------------


def principal_problem(member: object) -> str | None:
    if not isinstance(member, str) or not _PRINCIPAL.match(member):
        return f"{member!r} is not a principal (user:, serviceAccount:, group:, domain:, principal://, principalSet://, allUsers, allAuthenticatedUsers)"
    return None


def _condition_problem(cond: object, path: str) -> None:
    if cond is None:
        return
    if not isinstance(cond, Mapping) or not str(cond.get("title") or "").strip():
        raise PolicyRefused(f"{path}.title", "an IAM condition needs a title")
    if not str(cond.get("expression") or "").strip():
        raise PolicyRefused(f"{path}.expression", "an IAM condition needs an expression")


def target_of(obj: Mapping[str, Any], p: PolicyAdapter, store: ObjectStore) -> Target:
    """``spec.resourceRef`` resolved: RefError for a reference not found or not ready,
    PolicyRefused for a Kind without policy methods or an external that is no name of it."""
    from kccgen.runtime.adapter import adapter_for

    ref = (obj.get("spec") or {}).get("resourceRef") or {}
    kind = str(ref.get("kind") or "")
    path = "spec.resourceRef"
    a: Adapter | None = None
    external: IamTarget | None = next((t for t in p.external_targets if t.kind == kind), None)
    if external is None:
        try:
            a = adapter_for(kind)
        except KeyError:
            raise PolicyRefused(f"{path}.kind", f"{kind!r} is no Kind IAM Kinds can name (no such Kind; Organization and BillingAccount by external)") from None
        if a.iam is None:
            raise PolicyRefused(f"{path}.kind", f"{kind} has no IAM policy methods (getIamPolicy/setIamPolicy in {a.doc} {'.'.join(a.resource)}): IAM Kinds cannot name it")
    if (ref.get("external") is None) == (ref.get("name") is None):
        raise PolicyRefused(path, "set exactly one of external and name")
    try:
        ident = identity_for(kind)
    except KeyError:
        raise PolicyRefused(f"{path}.kind", f"{kind}: no identity known") from None
    if ref.get("external") is not None:
        if ref.get("namespace"):
            raise PolicyRefused(f"{path}.namespace", "namespace is only allowed with name")
        try:
            ext = ident.normalize(str(ref["external"]))
        except IdentityError as e:
            raise PolicyRefused(f"{path}.external", str(e)) from None
    else:
        if external is not None:
            raise PolicyRefused(f"{path}.name", f"{kind} is named by external only: no Kind of ours manages it")
        ns = str(ref.get("namespace") or namespace_of(obj, store))
        found = store.get(kind, ns, str(ref["name"]))
        if found is None:
            raise RefError(Reason.NOT_FOUND, path, f"referenced {kind} {ns}/{ref['name']} not found")
        known = (found.get("status") or {}).get("externalRef")
        if not known:
            raise RefError(Reason.NOT_READY, path, f"referenced {kind} {ns}/{ref['name']} is not ready: it has no status.externalRef yet")
        ext = ident.normalize(str(known))
    values = ident.parse(ext)
    if a is not None:
        assert a.iam is not None
        return Target(kind, a.doc, a.resource, a.iam, ext, values, a)
    assert external is not None
    return Target(kind, external.doc, external.resource, external.iam, ext, values, None)


def _dig(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        obj = obj.get(part) if isinstance(obj, Mapping) else None
    return obj


def member_of(entry: Mapping[str, Any], path: str, p: PolicyAdapter, obj: Mapping[str, Any], store: ObjectStore) -> str:
    """``member`` checked, or ``memberFrom`` resolved to its principal."""
    if ("member" in entry) == ("memberFrom" in entry):
        raise PolicyRefused(path, "set exactly one of member and memberFrom")
    if "member" in entry:
        problem = principal_problem(entry["member"])
        if problem:
            raise PolicyRefused(f"{path}.member", problem)
        return str(entry["member"])
    src = entry.get("memberFrom") or {}
    given = [r for r in p.member_refs if r.field in src] if isinstance(src, Mapping) else []
    if len(given) != 1:
        raise PolicyRefused(f"{path}.memberFrom", f"set exactly one of {', '.join(r.field for r in p.member_refs)}")
    r: MemberRef = given[0]
    ref = src[r.field] or {}
    where = f"{path}.memberFrom.{r.field}"
    ns = str(ref.get("namespace") or namespace_of(obj, store))
    other = store.get(r.kind, ns, str(ref.get("name") or ""))
    if other is None:
        raise RefError(Reason.NOT_FOUND, where, f"referenced {r.kind} {ns}/{ref.get('name')} not found")
    paths = dict(r.by_type).get(str(ref.get("type") or ""), ()) if r.by_type else r.values
    if r.by_type and not paths:
        raise PolicyRefused(f"{where}.type", f"one of {', '.join(t for t, _ in r.by_type)}")
    value = next((v for v in (_dig(other, q) for q in paths) if isinstance(v, str) and v), None)
    if value is None and r.from_name and (known := (other.get("status") or {}).get("externalRef")):
        try:
            values = identity_for(r.kind).parse(str(known))
            last = values.get(identity_for(r.kind).params[-1], "")
            value = last if "@" in last else r.from_name.format(**values)
        except (IdentityError, KeyError):
            value = None
    if value is None:
        raise RefError(Reason.NOT_READY, where, f"referenced {r.kind} {ns}/{ref.get('name')} has no {' or '.join(paths)} yet")
    member = value if not r.prefix or value.startswith(r.prefix) else r.prefix + value
    problem = principal_problem(member)
    if problem:
        raise PolicyRefused(where, problem)
    return member


class Nothing:
    """A store that has no objects: the checks that need none run on it."""

    default_namespace = "default"

    def get(self, kind: str, namespace: str, name: str) -> None:
        return None


def static_problems(obj: Mapping[str, Any], p: PolicyAdapter) -> list[str]:
    """What is wrong with the object whatever the cluster holds: a resourceRef to a Kind
    without policy methods, a member that is no principal, a condition without a title.
    A reference that is not there yet is no problem here (the reconcile waits for it)."""
    for check in (target_of, wanted):
        try:
            check(obj, p, Nothing())
        except PolicyRefused as e:
            return [str(e)]
        except RefError:
            continue
    return []


# --- the policy as sets ------------------------------------------------------------------------


def _cond_key(cond: Mapping[str, Any] | None) -> str:
    if not cond:
        return ""
    return "\x1f".join(str(cond.get(k) or "") for k in ("title", "expression", "description"))


def _cond_of(key: str) -> dict[str, str] | None:
    if not key:
        return None
    title, expression, description = key.split("\x1f")
    out = {"title": title, "expression": expression}
    if description:
        out["description"] = description
    return out


def as_sets(bindings: list[Mapping[str, Any]] | None) -> dict[Binding, set[str]]:
    out: dict[Binding, set[str]] = {}
    for b in bindings or []:
        out.setdefault((str(b.get("role")), _cond_key(b.get("condition"))), set()).update(str(m) for m in b.get("members") or [])
    return out


def as_list(sets: Mapping[Binding, set[str]]) -> list[dict[str, Any]]:
    out = []
    for (role, cond), members in sorted(sets.items()):
        if not members:
            continue
        b: dict[str, Any] = {"role": role, "members": sorted(members)}
        if cond:
            b["condition"] = _cond_of(cond)
        out.append(b)
    return out


def _audit_key(configs: list[Mapping[str, Any]] | None) -> dict[str, list[tuple[str, tuple[str, ...]]]]:
    return {
        str(c.get("service")): sorted((str(lc.get("logType")), tuple(sorted(lc.get("exemptedMembers") or []))) for lc in c.get("auditLogConfigs") or [])
        for c in configs or []
    }


def _audit_list(keyed: Mapping[str, list[tuple[str, tuple[str, ...]]]]) -> list[dict[str, Any]]:
    return [
        {"service": s, "auditLogConfigs": [{"logType": t, **({"exemptedMembers": list(ex)} if ex else {})} for t, ex in cfgs]}
        for s, cfgs in sorted(keyed.items())
    ]


@dataclass
class Want:
    """What the object owns, resolved: bindings to hold, bindings to drop, audit configs."""

    add: dict[Binding, set[str]]
    drop: dict[Binding, set[str]]  # owned before and no longer wanted (IAMPartialPolicy)
    whole: bool = False  # IAMPolicy: the bindings are exactly ``add``
    audit: dict[str, list[tuple[str, tuple[str, ...]]]] | None = None  # services it owns -> configs
    audit_whole: bool = False


def wanted(obj: Mapping[str, Any], p: PolicyAdapter, store: ObjectStore) -> Want:
    spec = obj.get("spec") or {}
    if p.owns is Owns.MEMBER:
        _condition_problem(spec.get("condition"), "spec.condition")
        member = member_of(spec, "spec", p, obj, store)
        return Want({(str(spec.get("role")), _cond_key(spec.get("condition"))): {member}}, {})
    if p.owns is Owns.AUDIT_CONFIG:
        for i, lc in enumerate(spec.get("auditLogConfigs") or []):
            for j, m in enumerate(lc.get("exemptedMembers") or []):
                if (problem := principal_problem(m)) is not None:
                    raise PolicyRefused(f"spec.auditLogConfigs[{i}].exemptedMembers[{j}]", problem)
        return Want({}, {}, audit=_audit_key([spec]))
    add: dict[Binding, set[str]] = {}
    for i, b in enumerate(spec.get("bindings") or []):
        _condition_problem(b.get("condition"), f"spec.bindings[{i}].condition")
        key = (str(b.get("role")), _cond_key(b.get("condition")))
        for j, m in enumerate(b.get("members") or []):
            where = f"spec.bindings[{i}].members[{j}]"
            if p.owns is Owns.POLICY:
                if (problem := principal_problem(m)) is not None:
                    raise PolicyRefused(where, problem)
                add.setdefault(key, set()).add(str(m))
            else:
                add.setdefault(key, set()).add(member_of(m if isinstance(m, Mapping) else {}, where, p, obj, store))
        add.setdefault(key, set())
    if p.owns is Owns.POLICY:
        return Want(add, {}, whole=True, audit=_audit_key(spec.get("auditConfigs")), audit_whole=True)
    before = as_sets((obj.get("status") or {}).get("lastAppliedBindings"))
    drop = {k: ms - add.get(k, set()) for k, ms in before.items()}
    return Want(add, {k: v for k, v in drop.items() if v})


def merged(policy: Mapping[str, Any], w: Want, removing: bool = False) -> dict[str, Any]:
    """The policy with the object's part applied (or, ``removing``, taken out)."""
    out = copy.deepcopy(dict(policy))
    have = as_sets(policy.get("bindings"))
    if w.whole:
        have = {} if removing else {k: set(v) for k, v in w.add.items()}
    else:
        for k, ms in w.drop.items():
            have[k] = have.get(k, set()) - ms
        for k, ms in w.add.items():
            have[k] = (have.get(k, set()) - ms) if removing else (have.get(k, set()) | ms)
    out["bindings"] = as_list(have)
    if w.audit is not None:
        audits = {} if w.audit_whole else _audit_key(policy.get("auditConfigs"))
        for s, cfgs in w.audit.items():
            if removing:
                audits.pop(s, None)
            else:
                audits[s] = cfgs
        if removing and w.audit_whole:
            audits = {}
        out["auditConfigs"] = _audit_list(audits)
    if not out["bindings"]:
        out.pop("bindings")
    if not out.get("auditConfigs"):
        out.pop("auditConfigs", None)
    return out


def same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return as_sets(a.get("bindings")) == as_sets(b.get("bindings")) and _audit_key(a.get("auditConfigs")) == _audit_key(b.get("auditConfigs"))


# --- calls -----------------------------------------------------------------------------------------


def _param(name: str) -> str:
    """The Python client's keyword for a Discovery parameter (``options.requestedPolicyVersion``)."""
    from googleapiclient.discovery import key2param

    return str(key2param(name))


def _call(gcp: Gcp, t: Target, which: str, body: Any = None, extra: dict[str, Any] | None = None) -> Any:
    c = t.iam.get if which == "get" else t.iam.set
    if t.adapter is not None:
        return gcp.call(t.adapter, c, t.values, body, extra)
    params = {name: tpl.format(**t.values) for name, tpl in c.params}
    params.update(extra or {})
    method = getattr(gcp._resource(t.doc, t.resource), c.method)
    request = method(**params, body=body) if body is not None else method(**params)
    return gcp.execute(f"{t.doc} {'.'.join(t.resource)}.{c.method}", request, True, t.values.get("project", ""))


def read_policy(gcp: Gcp, t: Target) -> dict[str, Any]:
    if t.iam.version_param:
        return dict(_call(gcp, t, "get", None, {_param(t.iam.version_param): 3}) or {})
    if t.iam.version_in_body:
        return dict(_call(gcp, t, "get", {"options": {"requestedPolicyVersion": 3}}) or {})
    return dict(_call(gcp, t, "get") or {})


def write_policy(gcp: Gcp, t: Target, policy: Mapping[str, Any], audit: bool) -> dict[str, Any]:
    body = dict(policy)
    body["version"] = 3 if any(b.get("condition") for b in body.get("bindings") or []) else 1
    body.setdefault("bindings", [])
    if not t.iam.wrapped:
        return dict(_call(gcp, t, "set", body) or {})
    req: dict[str, Any] = {"policy": body}
    if t.iam.update_mask:
        req["updateMask"] = "bindings,etag" + (",auditConfigs" if audit and t.iam.audit_configs else "")
    return dict(_call(gcp, t, "set", req) or {})


def modify(
    gcp: Gcp, t: Target, change: Callable[[dict[str, Any]], dict[str, Any]], audit: bool, *, dry_run: bool = False,
    sleep: Callable[[float], None] = time.sleep, rng: random.Random | None = None,
) -> tuple[dict[str, Any], bool]:
    """Read, change, write with the read's etag; again on a conflict. (policy now, written?)"""
    rng = rng or random.Random()
    for attempt in range(ATTEMPTS):
        live = read_policy(gcp, t)
        new = change(live)
        if same(new, live):
            return live, False
        if dry_run:
            return new, True
        new["etag"] = live.get("etag")
        if not new["etag"]:
            new.pop("etag")
        try:
            return write_policy(gcp, t, new, audit), True
        except GcpError as e:
            if not lost_race(e) or attempt == ATTEMPTS - 1:
                raise
            sleep(BACKOFF_S * (2**attempt) * (0.5 + rng.random()))
    raise AssertionError("unreachable")


__all__ = [
    "ATTEMPTS",
    "NotFound",
    "Nothing",
    "PolicyRefused",
    "Target",
    "Want",
    "merged",
    "modify",
    "principal_problem",
    "read_policy",
    "static_problems",
    "target_of",
    "wanted",
]
