"""The generated lifecycle suite: what "verified" means for a Kind.

For every generated Kind, from its example (kccgen.runtime.example) and its
tables alone: apply -> Ready with ``status.externalRef``; re-apply -> exactly one
GET; change one mutable field -> one GET and one write whose update mask (or
merge/replace body) carries only that field; delete -> the resource is gone
(GET answers 404). Operation polls are allowed beside the write, as docs/design.md §5
counts them apart. ``kccctl verify`` and tests/test_lifecycle.py run the same
code, so ``docs/verified.json`` is what this module measured.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kccgen.contract import (
    Adapter,
    Behaviour,
    Call,
    FieldRule,
    Lro,
    NoDelete,
    NoUpdate,
    Owns,
    PolicyAdapter,
    TypeKind,
    UpdateEntry,
    UpdateMaskInBody,
    UpdateMaskInQuery,
    UpdateMerge,
    UpdateReplace,
    UpdateRouted,
    route_of,
)
from kccgen.runtime import entries
from kccgen.runtime.adapter import adapter_for, policy_for
from kccgen.runtime.example import Examples
from kccgen.runtime.export import export_manifest
from kccgen.runtime.gcp import Gcp, GcpError, NotFound
from kccgen.runtime.local import dependency_order
from kccgen.runtime.mutability import mutability_of
from kccgen.runtime.reconciler import Reconciler, read_live
from kccgen.runtime.refs import PROJECT_ID_ANNOTATION, InMemoryStore, references_of
from kccgen.runtime.requests import at_path

STEPS = ("example", "create", "reapply", "update", "export", "delete")
_ENUM = object()  # mutable_field(): "another value of the field's enum", read from the Kind's model


@dataclass
class Sent:
    """One call as the runtime made it: the method, its query extras and body."""

    method: str
    extra: dict[str, Any]
    body: Any


class RecordingGcp(Gcp):
    """A Gcp that remembers the parameters and body of each adapter call, so the
    suite can check what an update carried, not only how many requests it made."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.sent: list[Sent] = []

    def call(
        self, a: Adapter, c: Call, values: dict[str, str], body: Any = None, extra: dict[str, Any] | None = None, *, idempotent: bool = True
    ) -> Any:
        self.sent.append(Sent(c.method, dict(extra or {}), copy.deepcopy(body)))
        return super().call(a, c, values, body, extra, idempotent=idempotent)


@dataclass
class Outcome:
    kind: str
    passed: bool
    step: str = ""  # the first step that failed
    message: str = ""
    seconds: float = 0.0
    update_field: str = ""  # the field the update step changed ("" when the Kind has no update)
    notes: list[str] = field(default_factory=list)

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"pass": self.passed}
        if not self.passed:
            out["step"], out["message"] = self.step, self.message
        if self.update_field:
            out["updateField"] = self.update_field
        return out


class StepFailed(Exception):
    def __init__(self, step: str, message: str) -> None:
        super().__init__(f"{step}: {message}")
        self.step = step
        self.message = message


def read_call(a: Adapter) -> str:
    """How the call log names the Kind's read: its get method, on its own resource or
    (Call.resource) the one it reads through (a metrics scope's get for a monitored project)."""
    return f"{a.doc} {'.'.join(a.get.resource or a.resource)}.{a.get.method}"


def one_read(a: Adapter, calls: list[str]) -> bool:
    """``calls`` are one read of the resource and nothing else: its get method,
    whatever its HTTP verb (ServiceIdentity reads by POST :generateServiceIdentity),
    with the polls of the operation it may answer with."""
    read = read_call(a)
    reads = [c for c in calls if c.split(" ", 1)[-1] == read]
    polls = [c for c in calls if c.startswith("GET ") and "operations." in c.lower() and c.split(" ", 1)[-1] != read]
    return len(reads) == 1 and len(reads) + len(polls) == len(calls) and (not polls or a.get.lro is not Lro.NONE)


def _is_ref_path(kind: str, api_path: str) -> bool:
    return any(r.api_path.replace("[]", "") == api_path for r in references_of(kind))


def mutable_field(kind: str) -> tuple[FieldRule, Any] | None:
    """One top-level spec field the update method can carry, and a new value for it.

    Preference: ``labels`` (every mask style carries it), then a plain string,
    a boolean, an integer; never an identity, reference, immutable, input-only
    or output-only field, since the suite must read the change back to compare.
    """
    a = adapter_for(kind)
    if isinstance(a.update, NoUpdate):
        return None
    candidates: list[tuple[int, str, FieldRule, Any]] = []
    rules = mutability_of(kind)
    for path, row in rules.items():
        if not path.startswith("spec.") or "[]" in path or not row.api_path or "[]" in row.api_path:
            continue
        if not row.updatable or not row.readable or row.immutable or row.identity or _is_ref_path(kind, row.api_path):
            continue
        if path.removeprefix("spec.") in a.secrets:
            continue  # a {value | valueFrom} object, never read back to compare
        if row.behaviours & {Behaviour.OUTPUT_ONLY, Behaviour.INPUT_ONLY, Behaviour.IDENTIFIER}:
            continue
        parents = [".".join(path.split(".")[:i]) for i in range(2, path.count(".") + 1)]
        if any(p not in rules or rules[p].type.kind is not TypeKind.OBJECT for p in parents):
            continue  # only leaves under plain objects: a map or list parent has no single mask path
        depth = 10 * (path.count(".") - 1)  # top-level fields first
        t = row.type
        if t.kind is TypeKind.MAP and t.leaf().kind is TypeKind.STRING:
            candidates.append((depth + (0 if row.api_path == "labels" else 1), path, row, {"lifecycle": "updated"}))
        elif t.kind is TypeKind.STRING and t.format is None:
            rank = 2 if row.api_path in ("description", "displayName") else 3
            candidates.append((depth + rank, path, row, "updated by kccctl verify"))
        elif t.kind is TypeKind.BOOLEAN:
            candidates.append((depth + 4, path, row, None))  # the opposite of the example's value
        elif t.kind is TypeKind.INTEGER and t.format is None:
            candidates.append((depth + 5, path, row, 7))
        elif t.kind is TypeKind.ENUM:
            candidates.append((depth + 6, path, row, _ENUM))
    if not candidates:
        return None
    _, _, row, value = min(candidates, key=lambda c: (c[0], c[1]))
    return row, value


class Lifecycle:
    """Runs the suite for Kinds against one endpoint, reusing one client per API."""

    def __init__(self, gcp: RecordingGcp, project: str = "lifecycle-project") -> None:
        self.gcp = gcp
        self.project = project
        self._run = 0

    def run(self, kind: str) -> Outcome:
        """The suite over the Kind's example and the examples it refers to."""
        return self.run_objects(kind, None, -1)

    def _reconcile(self, store: InMemoryStore, obj: dict[str, Any], step: str) -> dict[str, Any]:
        result = Reconciler(self.gcp, store).reconcile(obj)
        store.add(result.obj)
        if not result.ready:
            raise StepFailed(step, f"{obj['kind']}/{obj['metadata']['name']}: {result.reason}: {result.message}")
        return result.obj

    def run_objects(self, kind: str, objects: Callable[[str], list[dict[str, Any]]] | None, main: int) -> Outcome:
        """The suite over given objects (Config Connector's sample folder) rather
        than the Kind's example: ``objects(project)`` builds them for the run's
        project; ``objects[main]``, of ``kind``, is the one re-applied and changed.
        ``objects`` None: the Kind's example, last of its examples."""
        start = time.perf_counter()
        self._run += 1
        out = Outcome(kind, True)
        try:
            out.update_field = self._lifecycle(kind, out, objects, main)
        except StepFailed as e:
            out.passed, out.step, out.message = False, e.step, e.message
        except Exception as e:  # a crash is a failed step with its message, not an aborted run
            out.passed, out.step, out.message = False, out.step or "example", f"{type(e).__name__}: {e}"
        out.seconds = time.perf_counter() - start
        return out

    def _lifecycle(self, kind: str, out: Outcome, objects: Callable[[str], list[dict[str, Any]]] | None = None, main: int = -1) -> str:
        out.step = "example"
        # A project per run: names never collide with an earlier run on the same mockgcp.
        project = f"{self.project}-{self._run}"
        docs = Examples(project).manifests(kind) if objects is None else objects(project)
        for d in docs:
            d.setdefault("metadata", {}).setdefault("namespace", "default")
        wanted = docs[main]
        store = InMemoryStore(default_namespace="default")
        store.add({"kind": "Namespace", "metadata": {"name": "default", "annotations": {PROJECT_ID_ANNOTATION: project}}})
        for d in docs:  # a sample folder's Secret: read by sensitive fields, never reconciled
            if d.get("kind") == "Secret":
                store.add(d)
        docs = [d for d in docs if d.get("kind") != "Secret"]
        live: list[dict[str, Any]] = []
        out.step = "create"
        at = -1
        for doc in dependency_order(docs):
            if doc is wanted:
                at = len(live)
            doc = copy.deepcopy(doc)
            doc["metadata"]["generation"] = 1
            live.append(self._reconcile(store, doc, "create"))
        obj = live[at]
        ext = (obj.get("status") or {}).get("externalRef")
        if not ext:
            raise StepFailed("create", f"{kind} is Ready without status.externalRef")
        if (policy := policy_for(kind)) is not None:
            return self._policy_steps(out, policy, store, live, at)
        a = adapter_for(kind)

        out.step = "reapply"
        mark = len(self.gcp.calls)
        obj = self._reconcile(store, obj, "reapply")
        calls = self.gcp.calls[mark:]
        if not one_read(a, calls):
            raise StepFailed("reapply", f"expected exactly one GET of {ext}, sent {calls}")

        out.step = "update"
        picked = mutable_field(kind)
        changed = ""
        if picked is not None:
            row, value = picked
            assert row.api_path is not None
            changed = row.api_path
            new = copy.deepcopy(obj)
            parts = row.path.split(".")[1:]
            node = new["spec"]
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            if value is None:
                value = not bool(node.get(parts[-1]))
            elif value is _ENUM:
                current = node.get(parts[-1])
                if current is None:  # unset in the spec: another value than the live one (a version's ENABLED)
                    answer = read_live(self.gcp, a, Reconciler(self.gcp, store)._values(obj, a, ext))
                    current = at_path(answer, row.api_path)
                value = _other_enum(kind, row, current)
            node[parts[-1]] = value
            new["metadata"]["generation"] = int(new["metadata"].get("generation") or 1) + 1
            mark, sent_mark = len(self.gcp.calls), len(self.gcp.sent)
            obj = self._reconcile(store, new, "update")
            self._check_update(a, changed, self.gcp.calls[mark:], self.gcp.sent[sent_mark:])
            again = len(self.gcp.calls)
            obj = self._reconcile(store, obj, "update")
            if len(self.gcp.calls) - again != 1:
                raise StepFailed("update", f"after updating {changed}, a re-apply sent {self.gcp.calls[again:]}: the change did not stick")

        out.step = "export"
        self._check_export(kind, a, obj, ext, project)

        out.step = "delete"
        live[at] = obj
        for doc in reversed(live):  # dependents first
            current = store.get(doc["kind"], "default", doc["metadata"]["name"]) or doc
            result = Reconciler(self.gcp, store).delete(dict(current))
            if not result.deleted:
                raise StepFailed("delete", f"{doc['kind']}/{doc['metadata']['name']}: {result.reason}: {result.message}")
        values = Reconciler(self.gcp, store)._values(obj, a, ext)
        try:
            read_live(self.gcp, a, values)  # an on/off resource that is off reads as absent
        except NotFound:
            return changed
        except GcpError as e:
            raise StepFailed("delete", f"GET {ext} after delete answered {e}, not 404") from None
        if isinstance(a.delete, NoDelete):
            return changed
        raise StepFailed("delete", f"GET {ext} after delete still finds the resource")

    def _policy_steps(self, out: Outcome, p: PolicyAdapter, store: InMemoryStore, live: list[dict[str, Any]], at: int) -> str:
        """An IAM Kind's suite: a re-apply reads the policy once and writes nothing; a
        change is one read and one write; the delete leaves the policy without its part."""
        from kccgen.runtime.iam import as_sets, read_policy, target_of

        def iam_calls(since: int) -> list[str]:
            return [c for c in self.gcp.calls[since:] if "IamPolicy" in c]

        obj = live[at]
        out.step = "reapply"
        mark = len(self.gcp.calls)
        obj = self._reconcile(store, obj, "reapply")
        calls = iam_calls(mark)
        if len(calls) != 1 or not calls[0].endswith(".getIamPolicy"):
            raise StepFailed("reapply", f"expected one getIamPolicy and no write, sent {calls}")
        out.step = "update"
        changed = ""
        new = copy.deepcopy(obj)
        spec = new["spec"]
        extra = "user:second@example.com"
        if p.owns is Owns.POLICY:
            spec["bindings"][0]["members"].append(extra)
            changed = "bindings"
        elif p.owns is Owns.BINDINGS:
            spec["bindings"][0]["members"].append({"member": extra})
            changed = "bindings"
        elif p.owns is Owns.AUDIT_CONFIG:
            spec["auditLogConfigs"].append({"logType": "DATA_WRITE"})
            changed = "auditLogConfigs"
        if changed:
            new["metadata"]["generation"] = int(new["metadata"].get("generation") or 1) + 1
            mark = len(self.gcp.calls)
            obj = self._reconcile(store, new, "update")
            calls = iam_calls(mark)
            if [c.rsplit(".", 1)[-1] for c in calls] != ["getIamPolicy", "setIamPolicy"]:
                raise StepFailed("update", f"changing {changed}: expected one read and one write of the policy, sent {calls}")
        out.step = "delete"
        live[at] = obj
        target = target_of(obj, p, store)
        for doc in live[at:]:  # the IAM object first; the resource it names stays to be read
            current = store.get(doc["kind"], "default", doc["metadata"]["name"]) or doc
            result = Reconciler(self.gcp, store).delete(dict(current))
            if not result.deleted:
                raise StepFailed("delete", f"{doc['kind']}/{doc['metadata']['name']}: {result.reason}: {result.message}")
        left = read_policy(self.gcp, target)
        held = {m for ms in as_sets(left.get("bindings")).values() for m in ms}
        if p.owns is not Owns.AUDIT_CONFIG and held & {"user:jane@example.com", extra}:
            raise StepFailed("delete", f"the policy of {target.external} still holds {sorted(held)} after the delete")
        if p.owns is Owns.AUDIT_CONFIG and left.get("auditConfigs"):
            raise StepFailed("delete", f"the policy of {target.external} still holds {left['auditConfigs']} after the delete")
        for doc in reversed(live[:at]):
            current = store.get(doc["kind"], "default", doc["metadata"]["name"]) or doc
            Reconciler(self.gcp, store).delete(dict(current))
        return changed

    def _check_export(self, kind: str, a: Adapter, obj: dict[str, Any], ext: str, project: str) -> None:
        """``kccctl export``'s manifest, applied where nothing is known of the
        resource, acquires it with one GET and writes nothing."""
        store = InMemoryStore(default_namespace="default")
        store.add({"kind": "Namespace", "metadata": {"name": "default", "annotations": {PROJECT_ID_ANNOTATION: project}}})
        live = read_live(self.gcp, a, Reconciler(self.gcp, store)._values(obj, a, ext))
        doc = export_manifest(kind, ext, live, obj["metadata"]["name"])
        mark = len(self.gcp.calls)
        result = Reconciler(self.gcp, store).reconcile(doc)
        calls = self.gcp.calls[mark:]
        if not result.ready or (result.obj.get("status") or {}).get("externalRef") != ext:
            raise StepFailed("export", f"the exported manifest of {ext} did not acquire it: {result.reason}: {result.message}")
        if not one_read(a, calls):
            raise StepFailed("export", f"applying the exported manifest of {ext} sent {calls}, not one GET: it does not apply back unchanged")

    def _check_update(self, a: Adapter, changed: str, calls: list[str], sent: list[Sent]) -> None:
        # a read is a GET or the get method by whatever verb (contentwarehouse's POST documents:get)
        read = read_call(a)
        gets = [c for c in calls if (c.startswith("GET ") and "operations." not in c.lower()) or c.split(" ", 1)[-1] == read]
        writes = [c for c in calls if not c.startswith("GET ") and c.split(" ", 1)[-1] != read]
        # an entry of a parent without a concurrency token is read again in its
        # writer's turn and read back after (runtime.entries)
        reads = 3 if entries.unguarded(a) else 1
        if len(gets) != reads or len(writes) != 1:
            raise StepFailed("update", f"changing {changed}: expected {reads} GET(s) and one write, sent {calls}")
        body_sent = [s for s in sent if s.method != a.get.method]
        if len(body_sent) != 1:
            raise StepFailed("update", f"changing {changed}: expected one update call, made {[s.method for s in sent]}")
        s = body_sent[0]
        match a.update:
            case UpdateMaskInQuery(mask_param=param):
                mask = str(s.extra.get(param, ""))
            case UpdateMaskInBody(mask_field=mf):
                mask = str(at_path(s.body or {}, mf) or "")  # or in an options object: updateOptions.updateMask
            case UpdateMerge(guard=guard):
                token = getattr(guard, "field", "")
                mask = ",".join(sorted(k for k in (s.body or {}) if k != token))
                changed = changed.split(".", 1)[0]  # a merge patch carries the changed top-level field
            case UpdateReplace() | UpdateEntry():
                mask = changed  # the whole resource (entry) travels; the diff decided the change
            case UpdateRouted() as routed:
                # the changed field's route: its verb, carrying the value at its ``into``
                r = route_of(routed, changed)
                if r is not None and r.verbs:  # the value picks the verb, which carries nothing else
                    ok = s.method in {c.method for _, c in r.verbs}
                else:
                    ok = r is not None and r.call.method == s.method and s.body is not None and at_path(s.body, r.into) is not None
                mask = changed if ok else f"{s.method} {sorted(s.body or {})}"
            case _:
                mask = ""
        # A field under an object the resource does not have yet travels as that
        # object (the diff names the nearest path the live resource lacks).
        if (mask != changed and not changed.startswith(mask + ".")) or not mask or "," in mask:
            raise StepFailed("update", f"changing {changed}: the update carried {mask!r}")


def _other_enum(kind: str, row: FieldRule, current: Any) -> str:
    """A real value of the field's enum other than ``current``, from the Kind's model schema."""
    from kccgen.runtime.example import enum_values, schema_node
    from kccgen.runtime.registry import types_modules

    schema = getattr(types_modules()[kind], kind).model_json_schema(by_alias=True)
    defs = schema.get("$defs") or {}
    # an enum's *_UNSPECIFIED is proto3's unset value, never a change to read back
    values = [v for v in enum_values(schema_node(defs.get(f"{kind}Spec") or {}, defs, row.path.removeprefix("spec."))) if v != current and not v.endswith("_UNSPECIFIED")]
    if not values:
        raise StepFailed("update", f"{row.path}: its enum has no second value to change to")
    return values[0]


def verified_json(outcomes: list[Outcome]) -> str:
    """Deterministic: sorted keys, no timings."""
    return json.dumps({"kinds": {o.kind: o.record() for o in sorted(outcomes, key=lambda o: o.kind)}}, indent=1, sort_keys=True) + "\n"
