"""The method-shape contract (kccgen.contract) is handled everywhere, variant by variant.

Each union's variants are listed from the contract itself, so a variant added
there without a sample here, without source text from the generator or without
a request from the runtime fails this file; a variant the runtime's ``match``
statements do not handle also fails type checking, shown on a copy of the code.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import pytest

import kccgen.contract as contract
from kccgen.contract import (
    Adapter,
    Call,
    CreateAtPath,
    CreateByStatement,
    CreateByVerb,
    CreateEntry,
    CreateInput,
    CreateServiceAssigned,
    CreateShape,
    CreateWithIdParam,
    CreateWithNameInBody,
    CreateWrapped,
    DeleteAtPath,
    DeleteByVerb,
    DeleteEntry,
    DeleteShape,
    FieldRule,
    FieldType,
    FingerprintGuard,
    Guard,
    Lro,
    MetagenerationGuard,
    NoCreate,
    NoDelete,
    NoGuard,
    NoUpdate,
    ParentEntry,
    Route,
    TypeKind,
    UpdateEntry,
    UpdateMaskInBody,
    UpdateMaskInQuery,
    UpdateMerge,
    UpdateReplace,
    UpdateRouted,
    UpdateShape,
    Where,
)
from kccgen.generator.render import py_source
from kccgen.runtime.requests import (
    Request,
    create_request,
    delete_call,
    delete_request,
    update_request,
)
from tests.support.cli import REPO

C = Call("m", (("name", "projects/{project}/things/{thing}"),), Lro.GOOGLE_LONGRUNNING)
Q = CreateInput("skipSetup", Where.QUERY)
B = CreateInput("source", Where.BODY)
PAYLOAD = {"labels": {"a": "1"}, "skipSetup": True, "source": "projects/p/sources/s"}

# One sample per variant, and the create request it must give for PAYLOAD with
# ID "t" and full name "projects/p/things/t": (body, query parameters).
CREATES: dict[type, tuple[CreateShape, dict[str, Any] | None, dict[str, Any]]] = {
    CreateAtPath: (
        CreateAtPath(C, "name", None, (Q, B)),
        {"labels": {"a": "1"}, "source": "projects/p/sources/s", "name": "projects/p/things/t"},
        {"skipSetup": True},
    ),
    CreateWithIdParam: (
        CreateWithIdParam(C, "thingId", (Q, B)),
        {"labels": {"a": "1"}, "source": "projects/p/sources/s"},
        {"thingId": "t", "skipSetup": True},
    ),
    CreateWithNameInBody: (
        CreateWithNameInBody(C, "name", (Q,)),
        {"labels": {"a": "1"}, "source": "projects/p/sources/s", "name": "t"},
        {"skipSetup": True},
    ),
    CreateWrapped: (
        CreateWrapped(C, "thingId", "thing", (B,)),
        {"thingId": "t", "thing": {"labels": {"a": "1"}, "skipSetup": True}, "source": "projects/p/sources/s"},
        {},
    ),
    CreateServiceAssigned: (
        CreateServiceAssigned(C, (Q, B)),
        {"labels": {"a": "1"}, "source": "projects/p/sources/s"},
        {"skipSetup": True},
    ),
    # a verb makes the resource be: its body is its fixed fields, never the spec
    CreateByVerb: (
        CreateByVerb(C, (("xpnResource.id", "{thing}"), ("xpnResource.type", "PROJECT")), (Q,)),
        {"xpnResource": {"id": "t", "type": "PROJECT"}},
        {"skipSetup": True},
    ),
    # a statement names the new resource; the request's resource fields beside it
    CreateByStatement: (
        CreateByStatement(C, "createStatement", (("", "CREATE DATABASE `{id}`"), ("POSTGRESQL", 'CREATE DATABASE "{id}"')), "dialect", ("labels",), (Q,)),
        {"createStatement": "CREATE DATABASE `t`", "labels": {"a": "1"}},
        {"skipSetup": True},
    ),
    # an entry of the parent's list: the entry itself, its key the ID (runtime.entries puts it in the list)
    CreateEntry: (
        CreateEntry(ParentEntry(C, "things"), (Q,)),
        {"labels": {"a": "1"}, "source": "projects/p/sources/s", "name": "t"},
        {"skipSetup": True},
    ),
    NoCreate: (NoCreate(), None, {}),
}
VALUES = {"project": "p", "thing": "t"}

DESIRED = {"labels": {"a": "2"}, "size": "10"}
ACTUAL = {"labels": {"a": "1", "b": "x"}, "size": "5", "fingerprint": "fp", "metageneration": "7", "etag": "e"}
# One sample per update variant, and the request for a change of labels: (body, params).
UPDATES: dict[type, tuple[UpdateShape, dict[str, Any] | None, dict[str, Any]]] = {
    UpdateMaskInQuery: (UpdateMaskInQuery(C, "updateMask"), {"labels": {"a": "2"}}, {"updateMask": "labels"}),
    UpdateMaskInBody: (UpdateMaskInBody(C, "thing", "fieldMask"), {"thing": {"labels": {"a": "2"}}, "fieldMask": "labels"}, {}),
    # a merge patch names a removed map key with null, or it would stay
    UpdateMerge: (UpdateMerge(C, FingerprintGuard()), {"labels": {"a": "2", "b": None}, "fingerprint": "fp"}, {}),
    UpdateReplace: (
        UpdateReplace(C, MetagenerationGuard()),
        {"labels": {"a": "2"}, "size": "5", "fingerprint": "fp", "metageneration": "7", "etag": "e"},
        {"ifMetagenerationMatch": "7"},
    ),
    # the live entry with the change applied: runtime.entries replaces it in the parent's list
    UpdateEntry: (UpdateEntry(ParentEntry(C, "things")), {"labels": {"a": "2"}, "size": "5", "fingerprint": "fp", "metageneration": "7", "etag": "e"}, {}),
    # the changed field's route: its whole desired value at ``into``, its token from the live resource
    UpdateRouted: (
        UpdateRouted((Route("size", Call("update", C.params), "update.desiredSize"), Route("labels", C, "resourceLabels", (("labelFingerprint", "fingerprint"),)))),
        {"resourceLabels": {"a": "2"}, "labelFingerprint": "fp"},
        {},
    ),
    NoUpdate: (NoUpdate(), None, {}),
}
GUARDS: dict[type, Guard] = {NoGuard: NoGuard(), FingerprintGuard: FingerprintGuard(), MetagenerationGuard: MetagenerationGuard()}
DELETES: dict[type, DeleteShape] = {
    DeleteAtPath: DeleteAtPath(C),
    DeleteByVerb: DeleteByVerb(C, (("xpnResource.id", "{thing}"),), "cnrm.cloud.google.com/disable-on-destroy", (("force", "x.io/force"),)),
    DeleteEntry: DeleteEntry(ParentEntry(C, "things")),
    NoDelete: NoDelete(),
}


NO_CREATE, NO_UPDATE, NO_DELETE = NoCreate(), NoUpdate(), NoDelete()


def adapter(create: CreateShape = NO_CREATE, update: UpdateShape = NO_UPDATE, delete: DeleteShape = NO_DELETE) -> Adapter:
    return Adapter("Thing", "x.cnrm.cloud.google.com/v1beta1", "x.v1", ("projects", "things"), "projects/{project}/things/{thing}", "thing", C, create, update, delete)


@pytest.mark.parametrize(
    ("union", "samples"),
    [(CreateShape, CREATES), (UpdateShape, UPDATES), (DeleteShape, DELETES), (Guard, GUARDS)],
    ids=["create", "update", "delete", "guard"],
)
def test_every_variant_has_a_sample(union: Any, samples: dict[type, Any]) -> None:
    variants = set(typing.get_args(union))
    assert variants == set(samples), f"variants without a sample (add one and handle it in runtime/requests.py): {variants - set(samples)}"


def test_every_lro_style_is_a_member() -> None:
    assert {m.value for m in Lro} == {"none", "google.longrunning", "compute", "dns", "located"}


@pytest.mark.parametrize("variant", list(CREATES), ids=lambda t: t.__name__)
def test_create_request(variant: type) -> None:
    shape, body, params = CREATES[variant]
    req = create_request(adapter(create=shape), dict(PAYLOAD), "t", "projects/p/things/t", VALUES)
    if body is None:
        assert req is None
        return
    assert req is not None and req.call == C
    assert (req.body, req.params) == (body, params)


@pytest.mark.parametrize("variant", list(UPDATES), ids=lambda t: t.__name__)
def test_update_request(variant: type, monkeypatch: pytest.MonkeyPatch) -> None:
    labels = FieldRule("spec.labels", "labels", FieldType(TypeKind.MAP, item=FieldType(TypeKind.STRING)), (), True, "", True, "")
    monkeypatch.setattr("kccgen.runtime.requests.by_api_path", lambda kind: {"labels": labels})
    shape, body, params = UPDATES[variant]
    req = update_request(adapter(update=shape), DESIRED, ACTUAL, ["labels"])
    if body is None:
        assert req is None
        return
    assert req is not None and req.call == C
    assert (req.body, req.params) == (body, params)


def test_delete_call() -> None:
    assert delete_call(adapter(delete=DeleteAtPath(C))) == C
    assert delete_call(adapter(delete=DELETES[DeleteByVerb])) == C
    assert delete_call(adapter(delete=DELETES[DeleteEntry])) == C
    assert delete_call(adapter(delete=NoDelete())) is None


def test_delete_request_by_verb_honours_its_switch_and_flags() -> None:
    a = adapter(delete=DELETES[DeleteByVerb])
    req = delete_request(a, {}, VALUES)
    assert isinstance(req, Request) and req.body == {"xpnResource": {"id": "t"}}
    req = delete_request(a, {"x.io/force": "true"}, VALUES)
    assert isinstance(req, Request) and req.body == {"xpnResource": {"id": "t"}, "force": True}
    left = delete_request(a, {"cnrm.cloud.google.com/disable-on-destroy": "false"}, VALUES)
    assert isinstance(left, str) and "left as it is" in left
    assert delete_request(adapter(delete=DeleteAtPath(C)), {}, VALUES) == Request(C, None)
    assert isinstance(delete_request(adapter(delete=NoDelete()), {}, VALUES), str)


def test_a_verb_without_a_request_message_sends_no_body() -> None:
    """compute's enableXpnHost takes no body: the client rejects one."""
    req = create_request(adapter(create=CreateByVerb(C, takes_body=False)), {}, "", None, VALUES)
    assert req is not None and req.body is None
    gone = delete_request(adapter(delete=DeleteByVerb(C, takes_body=False)), {}, VALUES)
    assert isinstance(gone, Request) and gone.body is None


@pytest.mark.parametrize(
    "value",
    [*(s for s, _, _ in CREATES.values()), *(s for s, _, _ in UPDATES.values()), *DELETES.values(), *GUARDS.values(), adapter(CreateAtPath(C), UpdateMerge(C), DeleteAtPath(C))],
    ids=lambda v: type(v).__name__,
)
def test_generator_writes_every_variant_as_source(value: object) -> None:
    """The text a generated adapter holds evaluates back to the same value."""
    names: set[str] = set()
    text = py_source(value, names)
    assert names <= set(contract.__all__), names
    assert eval(text, {n: getattr(contract, n) for n in names}) == value


_NEW_VARIANT = '''@dataclass(frozen=True)
class CreateByCarrierPigeon:
    """A variant added without a handler."""

    call: Call


'''


def _with_new_variant(source: str) -> str:
    """The contract with one more create variant in the CreateShape union."""
    head, sep, rest = source.partition("CreateShape = ")
    assert sep, "CreateShape is not defined as a union in kccgen/contract.py"
    line, nl, tail = rest.partition("\n")
    return head + _NEW_VARIANT + sep + line + " | CreateByCarrierPigeon" + nl + tail


@pytest.mark.skipif(shutil.which("mypy", path=str(Path(sys.executable).parent)) is None, reason="mypy is not installed")
def test_an_unhandled_variant_fails_type_checking(tmp_path: Path) -> None:
    """Adding a create variant to a copy of the contract makes mypy reject the runtime."""
    from tools.devtree import build

    tree = build(tmp_path / "tree")
    root = tree / "kccgen"
    contract_py = root / "contract.py"
    contract_py.unlink()  # a link into the checkout: replace it with an edited copy
    contract_py.write_text(_with_new_variant((REPO / "kccgen" / "contract.py").read_text()))
    mypy = str(Path(sys.executable).parent / "mypy")
    env = {**os.environ, "MYPYPATH": str(tree)}
    args = [mypy, "--strict", "--no-incremental", "--follow-imports=silent", "--ignore-missing-imports", "-m", "kccgen.runtime.requests"]
    clean = subprocess.run(args, cwd=tmp_path, env={**env, "MYPYPATH": str(build(tmp_path / "clean"))}, capture_output=True, text=True, check=False, timeout=600)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    r = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=600)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "assert_never" in r.stdout and "CreateByCarrierPigeon" in r.stdout, r.stdout
