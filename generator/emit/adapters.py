"""Emit ``<kind>_adapter.py``: the Kind's kccgen.contract.Adapter, written as source."""

from __future__ import annotations

from kccgen.contract import Adapter, Alias, CreateWithNameInBody, id_field
from kccgen.generator.ir.model import AliasIR, KindIR
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
    return Alias(field=a.field, target=a.target, values=a.values, items=tuple(alias_of(i) for i in a.items))


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
        id_param=ident.id_param.name,
        get=m.get.call(),
        create=m.create_shape,
        update=m.update_shape,
        delete=m.delete_shape,
        # compute, storage and dns keep the short ID in `name`
        name_is_full=not isinstance(m.create_shape, CreateWithNameInBody) or m.create_shape.full_name,
        id_field=id_field(m.create_shape),
        krm_only=tuple(sorted({p.krm_field for p in ident.params})),
        int64_paths=_int64_paths(k),
        operations=m.operations,
        aliases=tuple(alias_of(a) for a in k.aliases),
    )


def adapter_source(k: KindIR) -> str:
    names: set[str] = set()
    text = py_source(adapter_of(k), names)
    return render(
        "<kind>_adapter.py.j2",
        kind=k.kind,
        doc_key=k.api.doc_key,
        resource=k.resource,
        config_file=k.config_file,
        contract_names=sorted(names),
        adapter=text,
    )
