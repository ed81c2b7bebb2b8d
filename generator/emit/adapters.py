"""Emit ``<kind>_adapter.py``: the Kind's kccgen.contract.Adapter, written as source."""

from __future__ import annotations

from typing import Any

from kccgen.contract import (
    Adapter,
    Alias,
    CreateEntry,
    CreateWithNameInBody,
    CreateWrapped,
    OperationGetter,
    id_field,
)
from kccgen.discovery.behaviours import Behaviour
from kccgen.generator.ir.model import AliasIR, IdentityParam, KindIR
from kccgen.generator.render import py_source, render


def _int64_paths(k: KindIR) -> tuple[str, ...]:
    return tuple(
        sorted(
            r.api_path
            for r in k.mutability
            if r.path.startswith("spec.") and r.api_path and r.type.rsplit("<", 1)[-1].rstrip(">") in ("string(int64)", "string(uint64)")
        )
    )


def alias_of(a: AliasIR) -> Alias:
    return Alias(
        field=a.field,
        target=a.target,
        values=a.values,
        items=tuple(alias_of(i) for i in a.items),
        keyed_by=a.keyed_by,
        element=a.element,
        into=a.into,
        fixed=a.fixed,
        append=a.append,
    )


def adapter_of(k: KindIR) -> Adapter:
    """The contract value the generated module declares."""
    m = k.methods
    ident = k.identity
    return Adapter(
        kind=k.kind,
        api_version=f"{k.group}/{k.version}",
        doc=k.api.doc_key,
        resource=tuple(k.resource.split(".")),
        template=ident.template,
        id_param=ident.id_param.name if ident.id_param is not None else "",
        get=m.get.call(),
        create=m.create_shape,
        update=m.update_shape,
        delete=m.delete_shape,
        # compute, storage and dns keep the short ID in `name`, as a parent's list entries do
        name_is_full=(
            not isinstance(m.create_shape, CreateWithNameInBody | CreateEntry | CreateWrapped)
            or (isinstance(m.create_shape, CreateWithNameInBody) and m.create_shape.full_name)
            or (isinstance(m.create_shape, CreateWrapped) and ("." not in m.create_shape.id_field or m.create_shape.full_name))
        ),
        id_field=id_field(m.create_shape),
        krm_only=tuple(
            sorted({p.krm_field for p in ident.params if not _in_body(k, p)} | {p.beside for p in ident.params if p.beside} | set(ident.parent_fields) | {c.field for c in k.companions})
        ),
        int64_paths=_int64_paths(k),
        operations=m.operations,
        aliases=tuple(alias_of(a) for a in k.aliases),
        forms=k.forms,
        canonical=k.canonical,
        locations=k.locations,
        companions=k.companions,
        present=k.present,
        example_id=k.example_id,
        read_list=m.read_list,
        absent=m.absent,
        view=m.view,
        fixed=k.fixed,
        secrets=k.secrets,
        byte_secrets=k.byte_secrets,
        secret_objects=k.secret_objects,
        iam=m.iam,
    )


def _in_body(k: KindIR, p: IdentityParam) -> bool:
    """An identity value that is also a field of the resource travels in its body
    (a DNS record set's ``name`` and ``type``: rrsets/{name}/{type}), where the
    identity has no ID of its own for the create to set."""
    if k.identity.id_param is not None or p.role != "location" or p.ref_kind is not None or p.krm_field != p.name:
        return False
    # an output-only field of that name (servicenetworking's ``service``) is the service's answer, not the identity
    return p.name not in ("location", "region", "zone") and any(
        f.name == p.name and Behaviour.OUTPUT_ONLY not in {x.behaviour for x in f.facts} for f in k.api_fields
    )


def operations_home(kinds: tuple[KindIR, ...]) -> tuple[str, str]:
    """(file path, module name) of an API's shared operations module: in the
    package of its first Kind, since one API's Kinds may span versions."""
    k = min(kinds, key=lambda k: (k.package, k.kind))
    return f"generated/{k.package}/{operations_module(k)}.py", f"kccgen.generated.{k.package.replace('/', '.')}.{operations_module(k)}"


def operations_module(k: KindIR) -> str:
    """``compute_v1_operations``: the API's operation getters, shared by its adapters."""
    return k.api.module.removesuffix("_api") + "_operations"


def shared_operations(kinds: tuple[KindIR, ...]) -> dict[str, OperationGetter] | None:
    """Every operation getter the API's Kinds use, by key: one copy per API
    instead of one per Kind (aiplatform's were 60 KB per adapter). None when
    two Kinds give one key different getters (each then keeps its own)."""
    out: dict[str, OperationGetter] = {}
    for k in kinds:
        for key, getter in k.methods.operations:
            if out.setdefault(key, getter) != getter:
                return None
    return dict(sorted(out.items())) or None


def operations_source(kinds: tuple[KindIR, ...]) -> str:
    ops = shared_operations(kinds)
    assert ops is not None
    names: set[str] = set()
    items = "".join(f"    {key!r}: {py_source(g, names)},\n" for key, g in ops.items())
    return render(
        "<api>_<apiversion>_operations.py.j2",
        doc_key=kinds[0].api.doc_key,
        contract_names=sorted(names),
        operations="{\n" + items + "}",
    )


def adapter_source(arg: tuple[KindIR, str]) -> str:
    """``arg``: the Kind, and the module holding its API's operation getters ("": none)."""
    k, ops_module = arg
    names: set[str] = set()
    adapter = adapter_of(k)
    shared: dict[tuple[type, Any], str] | None = None
    if ops_module and adapter.operations:
        shared = {(OperationGetter, g): f"OPERATIONS[{key!r}]" for key, g in adapter.operations}
    text = py_source(adapter, names, shared)
    module = ops_module if shared else ""
    return render(
        "<kind>_adapter.py.j2",
        kind=k.kind,
        doc_key=k.api.doc_key,
        resource=k.resource,
        config_file=k.config_file,
        contract_names=sorted(names),
        operations_module=module,
        adapter=text,
    )
