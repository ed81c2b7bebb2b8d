"""Stage 8b: Config Connector's other forms of spec fields (kind config ``forms:``).

Its Terraform-era Kinds take some objects in another form than the API's: a
JSON string (BigQueryTable's ``schema``: the table's fields as JSON), a
boolean (a secret's ``replication.automatic: true`` for the API's empty
message) or the object's one list (BigQueryTable's ``clustering: [a, b]`` for
``clustering.fields``). The field keeps the API's type and accepts that form too
(``FieldIR.other_form``: the model's type is a union, the CRD's node takes any
value); the runtime rewrites the other form before anything reads the spec
(kccgen.contract.Form), so both forms send the same request. The classes on the
way are copied (suffix ``Form``), so the same class elsewhere does not take it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kccgen.contract import Form
from kccgen.discovery.errors import SpecError, json_path
from kccgen.generator.ir.model import ModelSet, ObjectIR
from kccgen.generator.spec.kinds import FormConfig


@dataclass(frozen=True)
class Formed:
    spec: ObjectIR
    models: ModelSet
    forms: tuple[Form, ...]


def build_forms(kind: str, file: str, base: tuple[str | int, ...], configs: tuple[FormConfig, ...], spec: ObjectIR, models: ModelSet) -> Formed:
    """The spec with each configured field marked with its other form; errors name the entry."""
    if not configs:
        return Formed(spec, models, ())
    objects = {o.name: o for o in models.objects}
    copies: set[str] = set()

    def error(i: int, key: str, msg: str) -> SpecError:
        return SpecError(file, json_path(*base, "forms", i, key), f"{kind}: {msg}")

    def mark(obj: ObjectIR, parts: list[str], i: int, cfg: FormConfig) -> ObjectIR:
        head, step = parts[0].removesuffix("[]"), parts[0].endswith("[]")
        f = next((g for g in obj.fields if g.name == head), None)
        if f is None:
            raise error(i, "field", f"{cfg.field!r}: {obj.name} has no field {head!r}")
        if len(parts) == 1:
            if step:
                raise error(i, "field", f"{cfg.field!r}: the field itself, not its elements, takes the other form")
            if cfg.form == "true" and f.type.kind != "object":
                raise error(i, "form", f"{cfg.field!r}: true stands for the message with no field set; {f.name} is a {f.type.kind}")
            if cfg.form == "json" and f.type.kind not in ("object", "array", "map"):
                raise error(i, "form", f"{cfg.field!r}: a JSON string stands for an object or a list; {f.name} is a {f.type.kind}")
            if cfg.form == "list" and not cfg.list_field:
                raise error(i, "listField", f"{cfg.field!r}: a list stands for one list field of the object: name it")
            held = objects[f.type.ref or ""].fields if f.type.kind == "object" else ()
            lf = next((g for g in held if g.name == cfg.list_field), None)
            if cfg.list_field and (cfg.form == "true" or lf is None or lf.type.kind != "array"):
                raise error(i, "listField", f"{cfg.list_field!r} is no list field of the object {cfg.field!r} holds")
            nf = replace(f, other_form=cfg.form)
        else:
            t = f.type.item if step and f.type.kind == "array" else f.type if not step else None
            child = objects.get(t.ref or "") if t is not None and t.kind == "object" else None
            if child is not None and f"{child.name}Form" in copies:
                child = objects[f"{child.name}Form"]  # an earlier entry copied it: mark the copy
            if child is None:
                raise error(i, "field", f"{cfg.field!r}: {head} is not {'a list of objects' if step else 'an object'}")
            c = mark(child, parts[1:], i, cfg)
            ct = replace(t, ref=c.name) if t is not None else None
            assert ct is not None
            nf = replace(f, type=replace(f.type, item=ct) if step else ct)
        out = replace(obj, fields=tuple(nf if g.name == head else g for g in obj.fields))
        if obj.name != spec.name and obj.name not in copies:
            out = replace(out, name=f"{obj.name}Form")
            if out.name in objects and out.name not in copies:
                raise error(i, "field", f"class {out.name} clashes with a generated class")
            copies.add(out.name)
        objects[out.name] = out
        return out

    forms: list[Form] = []
    for i, cfg in enumerate(configs):
        spec = mark(spec, cfg.field.split("."), i, cfg)
        forms.append(Form(cfg.field, cfg.form, cfg.list_field or ""))
    objects[spec.name] = spec
    return Formed(spec, ModelSet(tuple(objects.values()), models.enums), tuple(forms))
