"""Admission for the local runner: what the API server checks before it stores an object.

A cluster refuses a manifest that its CRD's schema or CEL rules refuse, and
checks transition rules (``oldSelf``: immutable fields, references that must
not move) against the object it has stored. ``kccctl`` has no API server, so
it does the same here, from the same CRD (``generated/crds``): structure with
jsonschema (types, enums, patterns, required fields, unknown fields), then
every CEL rule with cel-python, the transition rules against the object in
the state directory. Without this an immutable field changed in a manifest was
accepted whenever the live value happened to match.

``force-acquire`` objects never write, so immutability does not bind them
(seeds/force-acquire): their transition rules are not evaluated.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from functools import cache
from importlib import resources
from typing import Any, ClassVar

import yaml

from kccgen.runtime.reconciler import ANN_FORCE_ACQUIRE
from kccgen.runtime.registry import kind_index

# libyaml where PyYAML was built with it (a CRD is up to a few hundred KB; state
# files and manifests are many): the pure-Python parser is several times slower.
_SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_SAFE_LOADER):  # type: ignore[misc]
    """YAML as the API server reads it: an unquoted timestamp (``startTime:
    2026-11-10T00:00:00Z``) stays the string it is in JSON, not a datetime that a
    string field refuses (Kubernetes' YAML-to-JSON keeps it a string)."""

    yaml_implicit_resolvers: ClassVar[dict[Any, Any]] = {
        first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }


YAML_LOADER: Any = _Loader
YAML_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def strict_schema(node: Any, root: bool = True) -> Any:
    """An openAPIV3Schema node as a jsonschema that rejects unknown fields (strict
    field validation, as ``kubectl apply`` asks of the server)."""
    if not isinstance(node, dict):
        return node
    if node.get("x-kubernetes-preserve-unknown-fields") is True:
        return {}
    out: dict[str, Any] = {}
    for k, v in node.items():
        if k.startswith("x-kubernetes-"):
            continue
        if k == "properties":
            out[k] = {name: ({"type": "object"} if root and name == "metadata" else strict_schema(s, False)) for name, s in v.items()}
        elif k in ("items", "additionalProperties", "not"):
            out[k] = strict_schema(v, False)
        elif k in ("allOf", "anyOf", "oneOf"):
            out[k] = [strict_schema(s, False) for s in v]
        else:
            out[k] = v
    if node.get("type") == "object" and "additionalProperties" not in node:
        out["additionalProperties"] = False
    return out


@cache
def crd_versions(kind: str) -> dict[str, dict[str, Any]]:
    """apiVersion -> openAPIV3Schema of the Kind's CRD (every version it serves)."""
    entry = kind_index()[kind]
    text = resources.files("kccgen.generated").joinpath(entry["crd"]).read_text(encoding="utf-8")
    crd = yaml.load(text, Loader=YAML_LOADER)
    group = crd["spec"]["group"]
    return {f"{group}/{v['name']}": v["schema"]["openAPIV3Schema"] for v in crd["spec"]["versions"]}


@cache
def _validator(kind: str, api_version: str) -> Any:
    import jsonschema

    return jsonschema.Draft202012Validator(strict_schema(crd_versions(kind)[api_version]))


@cache
def _program(rule: str) -> Any:
    import celpy

    env = celpy.Environment()
    return env.program(env.compile(rule))


def rule_passes(rule: str, value: Any, old: Any = None) -> bool:
    """One CEL rule on ``self`` (and ``oldSelf``); an evaluation error is a failure,
    as it is on the server. Memoised on the values: cel-python interprets the
    parse tree, ~1 ms a rule, and many objects hold the same values."""
    key = (rule, json.dumps(value, sort_keys=True, default=repr), None if old is None else json.dumps(old, sort_keys=True, default=repr))
    known = _PASSES.get(key)
    if known is None:
        if len(_PASSES) >= 16384:
            _PASSES.clear()
        known = _PASSES[key] = _evaluate(rule, value, old)
    return known


_PASSES: dict[tuple[str, str, str | None], bool] = {}


def _evaluate(rule: str, value: Any, old: Any) -> bool:
    from celpy import celtypes
    from celpy.adapter import json_to_cel
    from celpy.evaluation import CELEvalError

    activation = {"self": json_to_cel(value)}
    if old is not None:
        activation["oldSelf"] = json_to_cel(old)
    try:
        result = _program(rule).evaluate(activation)
    except CELEvalError:
        return False
    return isinstance(result, bool | celtypes.BoolType) and bool(result)


def path_text(loc: tuple[str | int, ...]) -> str:
    """``spec.items[2].name``; a key that is not an identifier is quoted
    (``labels["app.kubernetes.io/name"]``); the root is ``$``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part)}]"
    return out or "$"


def cel_errors(schema: Mapping[str, Any], value: Any, loc: tuple[str | int, ...] = (), old: Any = None, transitions: bool = True) -> Iterator[tuple[str, str]]:
    """(path, message) of every failing CEL rule, walking properties, items and
    map values. A transition rule (``oldSelf``) runs where ``old`` has a value at
    the same path, as the server runs it on update (``transitions=False`` skips
    them); list items get no old value (the server pairs only map-type lists)."""
    for r in schema.get("x-kubernetes-validations") or []:
        rule = str(r["rule"])
        if "oldSelf" in rule:
            if old is None or not transitions:
                continue
            ok = rule_passes(rule, value, old)
        else:
            ok = rule_passes(rule, value)
        if not ok:
            yield path_text(loc), str(r.get("message") or rule)
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for k, v in value.items():
            sub = props.get(k) if k in props else (extra if isinstance(extra, dict) else None)
            if sub is not None:
                sub_old = old.get(k) if isinstance(old, dict) else None
                yield from cel_errors(sub, v, (*loc, k), sub_old, transitions)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, v in enumerate(value):
            yield from cel_errors(schema["items"], v, (*loc, i), None, transitions)


def admission_errors(obj: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> list[str]:
    """Why the API server would refuse ``obj`` (an update of ``old`` when given):
    ``<path>: <message>`` lines, empty when it would store it."""
    kind, api_version = str(obj.get("kind")), str(obj.get("apiVersion"))
    versions = crd_versions(kind)
    if api_version not in versions:
        return [f"apiVersion: {api_version!r} is not served; {kind} serves {', '.join(sorted(versions))}"]
    # The status is the controller's, written through the status subresource: an
    # update of the object itself ignores it, and so does this.
    obj = {k: v for k, v in obj.items() if k != "status"}
    out = []
    for e in sorted(_validator(kind, api_version).iter_errors(obj), key=lambda e: list(map(str, e.absolute_path))):
        where = path_text(tuple(e.absolute_path))
        if e.validator == "additionalProperties" and isinstance(e.instance, Mapping):
            allowed = set(e.schema.get("properties") or {})
            out += [f"{path_text((*e.absolute_path, k))}: unknown field" for k in sorted(set(e.instance) - allowed)]
        elif e.validator == "required" and isinstance(e.instance, Mapping):
            out += [f"{path_text((*e.absolute_path, k))}: required field is missing" for k in e.validator_value if k not in e.instance]
        else:
            out.append(f"{where}: {e.message}")
    if out:
        return out  # CEL rules assume a well-formed object, as on the server
    anns = (obj.get("metadata") or {}).get("annotations") or {}
    transitions = str(anns.get(ANN_FORCE_ACQUIRE, "")).lower() != "true"
    schema = versions[api_version]
    old_body = {k: v for k, v in old.items() if k not in ("metadata", "status")} if old else None
    out = [f"{where}: {msg}" for where, msg in cel_errors(schema, {k: v for k, v in obj.items() if k != "metadata"}, (), old_body, transitions)]
    if old is not None and transitions:
        out += [e for e in immutable_changes(obj, old) if e not in out]
    return out


_MISSING = object()


def _at(spec: Any, parts: list[str]) -> Any:
    for p in parts:
        if not isinstance(spec, Mapping) or p not in spec:
            return _MISSING
        spec = spec[p]
    return spec


def _same_reference(a: Any, b: Any) -> bool:
    """A reference spelled the other way (``name`` <-> ``external``) is not a move:
    which resource it names is checked when it is resolved, as the CRD's rule
    on a reference allows the same switch."""
    return isinstance(a, Mapping) and isinstance(b, Mapping) and ("external" in a) != ("external" in b)


def immutable_changes(obj: Mapping[str, Any], old: Mapping[str, Any]) -> list[str]:
    """Fields the Kind's mutability table says cannot change, changed between the
    stored spec and the new one (set, unset or another value). The CRD carries a
    CEL rule for some of them; the table knows them all."""
    from kccgen.runtime.adapter import adapter_for, policy_for
    from kccgen.runtime.aliases import AliasConflict, canonical_spec
    from kccgen.runtime.mutability import mutability_of

    kind = str(obj.get("kind"))
    if policy_for(kind) is not None:  # an IAM Kind: no aliases
        new_spec, old_spec = obj.get("spec"), old.get("spec")
    else:
        a = adapter_for(kind)
        try:
            new_spec = canonical_spec(a, obj.get("spec"))
            old_spec = canonical_spec(a, old.get("spec"))
        except AliasConflict:
            return []  # the reconcile names the conflict
    out = []
    for path, row in sorted(mutability_of(kind).items()):
        if not path.startswith("spec.") or row.updatable or "[]" in path:
            continue
        parts = path.split(".")[1:]
        was, now = _at(old_spec, parts), _at(new_spec, parts)
        if was == now or (was is not _MISSING and now is not _MISSING and _same_reference(was, now)):
            continue
        if row.identity and now is _MISSING and parts == ["resourceID"]:
            continue  # resourceID left out means metadata.name, which cannot change
        def show(v: Any) -> str:
            return "unset" if v is _MISSING else json.dumps(v, sort_keys=True, default=str)
        out.append(f"{path}: cannot be changed ({row.updatable_source}): was {show(was)}, now {show(now)}")
    return out
