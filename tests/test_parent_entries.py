"""Entries of a parent's list (kccgen.contract.ParentEntry): ComputeRouterNAT,
ComputeRouterInterface and ComputeRouterPeer live in a router's ``nats``,
``interfaces`` and ``bgpPeers``; each object reads and writes its own entry
through routers.get / routers.patch and never another's.

Config Connector's recorded traffic for ComputeRouterNAT
(compute/v1beta1/computerouternat, hand-written extract): ``GET
compute/v1/projects/{p}/regions/{r}/routers/{router}``, then ``PATCH`` of the
same path whose body is ``{nats: [...]}`` (the router's whole list), polled
through ``regionOperations``; delete is the same PATCH without the entry.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from kccgen.contract import (
    Adapter,
    Call,
    CreateEntry,
    DeleteEntry,
    FingerprintGuard,
    NoGuard,
    ParentEntry,
    ReadByList,
    UpdateEntry,
)
from kccgen.runtime import entries
from kccgen.runtime.adapter import adapter_for
from kccgen.runtime.gcp import AlreadyExists, FailedPrecondition, NotFound
from kccgen.runtime.reconciler import Reconciler
from tests.support.scenarios import PROJECT, Harness, harness, kcc_object, path_of

REGION = "us-west1"
ROUTER = f"projects/{PROJECT}/regions/{REGION}/routers/router"


@pytest.fixture
def h() -> Iterator[Harness]:
    with harness() as hh:
        yield hh


def _router(h: Harness) -> None:
    h.ready(kcc_object("ComputeNetwork", "net", {"autoCreateSubnetworks": False}))
    h.ready(kcc_object("ComputeRouter", "router", {"region": REGION, "networkRef": {"name": "net"}}))


def _nat(name: str, **spec: Any) -> dict[str, Any]:
    base = {"region": REGION, "routerRef": {"name": "router"}, "natIpAllocateOption": "AUTO_ONLY", "sourceSubnetworkIpRangesToNat": "ALL_SUBNETWORKS_ALL_IP_RANGES"}
    return kcc_object("ComputeRouterNAT", name, {**base, **spec})


def _nats(h: Harness) -> dict[str, dict[str, Any]]:
    live = h.stored("compute.v1", ROUTER)
    return {n["name"]: n for n in live.get("nats") or []}


@pytest.mark.parametrize("kind,field", [("ComputeRouterNAT", "nats"), ("ComputeRouterInterface", "interfaces"), ("ComputeRouterPeer", "bgpPeers")])
def test_the_adapters_are_entries_of_the_routers_lists(kind: str, field: str) -> None:
    a = adapter_for(kind)
    assert isinstance(a.create, CreateEntry) and isinstance(a.update, UpdateEntry) and isinstance(a.delete, DeleteEntry)
    assert a.create.entry == a.update.entry == a.delete.entry
    assert (a.create.entry.field, a.create.entry.key, a.create.call.method, a.get.method) == (field, "name", "patch", "get")
    assert isinstance(a.create.entry.guard, NoGuard)  # compute's Router has no fingerprint
    assert a.read_list == ReadByList(field, (("name", "{" + a.id_param + "}"),))


def test_create_update_delete_send_the_routers_list_with_only_this_entry_changed(h: Harness) -> None:
    _router(h)
    h.ready(_nat("other", minPortsPerVm=64))
    since = h.mark()
    obj = h.ready(_nat("mine"))
    assert obj["status"]["externalRef"] == f"{ROUTER}/nats/mine"
    (patch,) = h.writes(since)
    assert patch.method == "PATCH" and path_of(patch).endswith(f"regions/{REGION}/routers/router")
    body = patch.request_json
    assert set(body) == {"nats"}  # nothing but the list: no region, routerRef or alias reaches the API
    assert [n["name"] for n in body["nats"]] == ["other", "mine"]
    assert _nats(h)["other"]["minPortsPerVm"] == 64

    since = h.mark()
    again = h.reconcile(_nat("mine"))
    assert again.ready and h.writes(since) == []  # up to date: reads only

    since = h.mark()
    h.ready(_nat("mine", minPortsPerVm=128))
    (patch,) = h.writes(since)
    sent = {n["name"]: n for n in patch.request_json["nats"]}
    assert sent["mine"]["minPortsPerVm"] == 128 and sent["other"]["minPortsPerVm"] == 64
    gets = [e for e in h.entries(since) if e.method == "GET" and "operations" not in path_of(e)]
    assert len(gets) == 3  # the reconcile's read, the read in this writer's turn, the read back

    since = h.mark()
    assert h.delete(_nat("mine")).deleted
    (patch,) = h.writes(since)
    assert [n["name"] for n in patch.request_json["nats"]] == ["other"]
    assert set(_nats(h)) == {"other"}


def test_an_entry_of_the_same_name_made_since_the_read_is_acquired(h: Harness) -> None:
    _router(h)
    h.ready(_nat("mine", minPortsPerVm=64))
    # a second object naming the same entry: acquired (and updated), never duplicated
    r = Reconciler(h.gcp, h.store).reconcile(_nat("mine", minPortsPerVm=64))
    assert r.ready
    assert [n["name"] for n in h.stored("compute.v1", ROUTER)["nats"]].count("mine") == 1


def test_two_nats_changed_at_once_never_overwrite_each_other(h: Harness) -> None:
    _router(h)
    names = [f"nat-{i}" for i in range(6)]
    for n in names:
        h.ready(_nat(n, minPortsPerVm=64))
    start = threading.Barrier(len(names))
    results: dict[str, Any] = {}

    def change(n: str) -> None:
        start.wait()
        results[n] = Reconciler(h.gcp, h.store).reconcile(_nat(n, minPortsPerVm=256))

    threads = [threading.Thread(target=change, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r.ready for r in results.values()), {n: (r.reason, r.message) for n, r in results.items()}
    live = _nats(h)
    assert sorted(live) == names and all(live[n]["minPortsPerVm"] == 256 for n in names)


def test_a_write_another_process_replaced_is_done_again(h: Harness) -> None:
    """Another process's PATCH of the whole list, sent between this write and its
    read back, drops this entry: the read back sees it and writes again."""
    _router(h)
    h.ready(_nat("theirs"))
    real = h.gcp.call
    raced = []

    def call(a: Adapter, c: Call, values: dict[str, str], body: Any = None, extra: Any = None, **kw: Any) -> Any:
        out = real(a, c, values, body, extra, **kw)
        if c.method == "patch" and not raced:
            raced.append(1)  # their write, from a read before ours: our entry is gone
            h.raw("compute").routers().patch(project=PROJECT, region=REGION, router="router", body={"nats": [_nats(h)["theirs"]]}).execute()
        return out

    h.gcp.call = call  # type: ignore[method-assign]
    obj = h.ready(_nat("mine"))
    h.gcp.call = real  # type: ignore[method-assign]
    assert raced and obj["status"]["externalRef"].endswith("/nats/mine")
    assert set(_nats(h)) == {"theirs", "mine"}


class _FakeGcp:
    """A parent with a fingerprint; the first write loses a race (412)."""

    def __init__(self) -> None:
        self.parent: dict[str, Any] = {"fingerprint": "f1", "items": [{"name": "a", "v": 1}]}
        self.writes: list[dict[str, Any]] = []
        self.fail = 1

    def call(self, a: Adapter, c: Call, values: dict[str, str], body: Any = None, extra: Any = None, **kw: Any) -> Any:
        if c.method == "get":
            return copy.deepcopy(self.parent)
        self.writes.append(copy.deepcopy(body))
        if self.fail:
            self.fail -= 1
            self.parent = {"fingerprint": "f2", "items": [*self.parent["items"], {"name": "b", "v": 2}]}  # another writer's entry
            raise FailedPrecondition(412, "Supplied fingerprint does not match current fingerprint.")
        assert body["fingerprint"] == self.parent["fingerprint"]
        self.parent = {"fingerprint": "f3", "items": body["items"]}
        return {}

    def wait(self, a: Adapter, c: Call, op: Any, values: dict[str, str]) -> Any:
        return op


def _guarded() -> Adapter:
    e = ParentEntry(Call("patch", (("p", "{p}"),)), "items", "name", FingerprintGuard())
    return Adapter(
        kind="Thing", api_version="x/v1", doc="x.v1", resource=("things",), template="p/{p}/items/{item}", id_param="item",
        get=Call("get", (("p", "{p}"),)), create=CreateEntry(e), update=UpdateEntry(e), delete=DeleteEntry(e), read_list=ReadByList("items", (("name", "{item}"),)),
    )


def test_a_guarded_write_that_lost_a_race_reads_again_and_keeps_the_other_entry() -> None:
    gcp, a = _FakeGcp(), _guarded()
    values = {"p": "p1", "item": "c"}
    entries.write(gcp, a, values, {"v": 3}, create=True, sleep=lambda s: None)  # type: ignore[arg-type]
    assert [w["fingerprint"] for w in gcp.writes] == ["f1", "f2"]
    assert gcp.parent["items"] == [{"name": "a", "v": 1}, {"name": "b", "v": 2}, {"name": "c", "v": 3}]
    entries.write(gcp, a, values, None, sleep=lambda s: None)  # type: ignore[arg-type]
    assert gcp.parent["items"] == [{"name": "a", "v": 1}, {"name": "b", "v": 2}]
    with pytest.raises(NotFound):
        entries.write(gcp, a, values, None, sleep=lambda s: None)  # type: ignore[arg-type]
    with pytest.raises(AlreadyExists):
        entries.write(gcp, a, {"p": "p1", "item": "a"}, {"v": 9}, create=True, sleep=lambda s: None)  # type: ignore[arg-type]
