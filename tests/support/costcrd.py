"""A small CRD whose one expensive rule sits in a list of lists: its CEL cost
is set by three bounds, so tests can put it just under or over the API
server's budget (tests/unit/test_celcost.py, tests/test_envtest_crds.py)."""

from __future__ import annotations

from typing import Any

UNIQUE = "self.filter(r, has(r.external)).all(r, self.filter(s, has(s.external) && s.external == r.external).size() == 1)"


def costly_crd(outer: int | None, inner: int | None, length: int | None, name: str = "widgets") -> dict[str, Any]:
    """``spec.groups[].refs[]`` with the O(n^2) uniqueness rule on ``refs``;
    ``None`` leaves a bound out (unbounded)."""
    ref: dict[str, Any] = {"type": "string"}
    if length is not None:
        ref["maxLength"] = length
    refs: dict[str, Any] = {
        "type": "array",
        "items": {"type": "object", "properties": {"external": ref, "name": ref}},
        "x-kubernetes-validations": [{"rule": UNIQUE, "message": "external values must be unique"}],
    }
    if inner is not None:
        refs["maxItems"] = inner
    groups: dict[str, Any] = {"type": "array", "items": {"type": "object", "properties": {"refs": refs}}}
    if outer is not None:
        groups["maxItems"] = outer
    schema = {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {"groups": groups}}},
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{name}.cost.kccgen.dev"},
        "spec": {
            "group": "cost.kccgen.dev",
            "names": {"kind": name.capitalize().rstrip("s"), "plural": name, "listKind": f"{name.capitalize().rstrip('s')}List", "singular": name.rstrip("s")},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}],
        },
    }


def root(crd: dict[str, Any]) -> dict[str, Any]:
    return dict(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"])


#: Rules and the cost of one run at :func:`probe_node`, as a Kubernetes 1.36.4
#: API server estimated them (read back through :func:`probe_crd`).
MEASURED = {
    "self.a == oldSelf.a": 8,
    "has(self.a) && self.n > 0": 4,
    "self.l.all(x, x.startsWith('p'))": 53,
    "size(self.l) <= 3 ? true : self.l.exists(x, x == 'a')": 67,
    "self.l.exists_one(x, x == 'a')": 44,
    "'a' in self.l": 12,
    "self.a.contains('bc')": 6,
    "self.a.matches('^[a-z]+$')": 10,
    "self.a + 'x' == 'yx'": 7,
    "[1, 2].all(i, i > 0)": 21,
    "{'a': 1}.size() == 1": 32,
    "self.m.all(k, self.m[k] > 0)": 43,
    "self.l[0] == 'a'": 4,
    "self.n % 2 == 0 || -self.n < 3": 8,
    "!has(self.a) || self.a.endsWith('z')": 5,
    "self.a.size() < 4": 4,
}

#: How many times a probe rule can run: the server's refusal then states the
#: per-run cost itself ("exceeds budget by factor of 53.000000x").
PROBE_CARDINALITY = 10_000 * 1_000


def probe_node(rule: str) -> dict[str, Any]:
    """A node with one bounded field of each kind the probe rules read."""
    return {
        "type": "object",
        "properties": {
            "a": {"type": "string", "maxLength": 8},
            "n": {"type": "integer"},
            "l": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 2}},
            "m": {"type": "object", "maxProperties": 5, "additionalProperties": {"type": "integer"}},
        },
        "x-kubernetes-validations": [{"rule": rule}],
    }


def probe_crd(index: int, rule: str) -> dict[str, Any]:
    """``rule`` on :func:`probe_node`, under lists that let it run PROBE_CARDINALITY times."""
    inner = {"type": "array", "maxItems": 1_000, "items": probe_node(rule)}
    outer = {"type": "array", "maxItems": 10_000, "items": {"type": "object", "properties": {"inner": inner}}}
    crd = costly_crd(1, 1, 1, name=f"probe{index}s")
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {"outer": outer}}},
    }
    return crd
