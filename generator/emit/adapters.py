"""Emit ``<kind>_adapter.py``: method descriptors computed here, reprs in a thin template."""

from __future__ import annotations

from kccgen.generator.ir.model import KindIR, MethodIR
from kccgen.generator.render import render


def _call(m: MethodIR | None) -> str:
    if m is None:
        return "None"
    params = dict(m.param_templates)
    return f"Call({m.name!r}, {params!r}, {m.lro!r})"


def _int64_paths(k: KindIR) -> tuple[str, ...]:
    return tuple(
        sorted(
            r.api_path
            for r in k.mutability
            if r.path.startswith("spec.") and r.api_path and r.type.rsplit("<", 1)[-1].rstrip(">") in ("string(int64)", "string(uint64)")
        )
    )


def adapter_source(k: KindIR, path: str) -> str:
    m = k.methods
    ident = k.identity
    id_placeholder = ident.id_param.name
    create_id = m.create_id_param
    krm_only = tuple(sorted({p.krm_field for p in ident.params}))
    name_is_full = m.create_style != "name-in-body"
    ops = {".".join(chain): (chain, dict(tpl), pattern) for chain, tpl, pattern in m.operation_getters}
    args = [
        ("kind", repr(k.kind)),
        ("api_version", repr(f"{k.group}/{k.version}")),
        ("doc", repr(k.api.doc_key)),
        ("resource", repr(tuple(k.resource.split(".")))),
        ("template", repr(ident.template)),
        ("get", _call(m.get)),
        ("create", _call(m.create)),
        ("update", _call(m.update)),
        ("delete", _call(m.delete)),
        ("create_style", repr(m.create_style)),
        ("create_id", repr(create_id)),
        ("create_wrapper", repr(m.create_wrapper_field)),
        ("update_style", repr(m.update_style)),
        ("update_mask", repr(m.update_mask)),
        ("update_wrapper", repr(m.update_wrapper_field)),
        ("fingerprint", repr(m.fingerprint_field)),
        ("precondition", repr(m.precondition_param)),
        ("id_generation", repr(ident.id_generation)),
        ("name_is_full", repr(name_is_full)),
        ("krm_only", repr(krm_only)),
        ("int64_paths", repr(_int64_paths(k))),
        ("operations", repr({key: (chain, tpl) for key, (chain, tpl, _) in sorted(ops.items())})),
        ("operation_patterns", repr({key: pattern for key, (_, _, pattern) in sorted(ops.items()) if pattern})),
        ("id_param", repr(id_placeholder)),
    ]
    return render(
        "<kind>_adapter.py.j2",
        path,
        kind=k.kind,
        doc_key=k.api.doc_key,
        resource=k.resource,
        config_file=k.config_file,
        args=args,
    )
