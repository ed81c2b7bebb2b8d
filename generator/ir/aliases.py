"""Stage 8: Config Connector's older field names, as extra spec properties.

An alias (kind config ``aliases:``) names an API field by its API path; this
stage finds the KRM field behind it (``notificationChannels`` is our
``notificationChannelRefs``), gives the alias that field's type, and where
sub-fields of a list's elements are spelled differently (KCC's
``lifecycleRule[].condition.withState`` for the API's ``condition.isLive``)
builds element classes of the alias's own with the renamed field. Runs after
the mutability table, which keeps describing the API fields only: the runtime
moves alias values to their targets before it reads the spec.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from kccgen.discovery.errors import SpecError, json_path
from kccgen.generator.ir.model import (
    AliasIR,
    EnumIR,
    EnumValue,
    FieldIR,
    ModelSet,
    ObjectIR,
    TypeIR,
)
from kccgen.generator.naming import pascal
from kccgen.generator.spec.kinds import AliasConfig, AliasItem, AliasScalar


@dataclass(frozen=True)
class Aliased:
    """The spec with its alias properties, the classes they need, and the aliases."""

    spec: ObjectIR
    models: ModelSet
    aliases: tuple[AliasIR, ...]


def _field(obj: ObjectIR, api_name: str) -> FieldIR | None:
    return next((f for f in obj.fields if (f.api_name or f.name) == api_name), None)


class _Builder:
    def __init__(self, kind: str, file: str, base: tuple[str | int, ...], models: ModelSet) -> None:
        self.kind = kind
        self.file = file
        self.base = base  # ("kinds", 3) or, for a derived Kind, ("overrides", "instances")
        self.objects = {o.name: o for o in models.objects}
        self.enums = {e.name: e for e in models.enums}

    def error(self, i: int, key: str, msg: str) -> SpecError:
        return SpecError(self.file, json_path(*self.base, "aliases", i, key), f"{self.kind}: {msg}")

    def walk(self, obj: ObjectIR, api_path: str, i: int, key: str) -> tuple[str, FieldIR]:
        """(KRM path, field) of a dotted API path through nested objects."""
        krm: list[str] = []
        node: ObjectIR | None = obj
        found: FieldIR | None = None
        for part in api_path.split("."):
            if node is None:
                raise self.error(i, key, f"{api_path!r}: {'.'.join(krm)} is not an object")
            found = _field(node, part)
            if found is None:
                raise self.error(i, key, f"{api_path!r}: {node.name} has no API field {part!r}")
            krm.append(found.name)
            node = self.objects.get(found.type.ref or "") if found.type.kind == "object" else None
        assert found is not None
        return ".".join(krm), found

    def add(self, i: int, o: ObjectIR) -> None:
        if o.name in self.objects or o.name in self.enums:
            raise self.error(i, "items", f"alias class {o.name} clashes with a generated class")
        self.objects[o.name] = o

    def valued_type(self, i: int, key: str, t: TypeIR, values: dict[str, AliasScalar] | None, name: str, leaf: str, source: str) -> TypeIR:
        """The alias's type: the API field's, or an enum of the mapped values."""
        if not values:
            return t
        enum = EnumIR(f"{name}{pascal(leaf)}", f"Config Connector's {leaf}.", tuple(EnumValue(str(v)) for v in values), source)
        if enum.name in self.enums or enum.name in self.objects:
            raise self.error(i, key, f"alias class {enum.name} clashes with a generated class")
        self.enums[enum.name] = enum
        return TypeIR("enum", ref=enum.name)

    def item_field(self, i: int, it: AliasItem, api: FieldIR, name: str, source: str) -> FieldIR:
        """The alias sub-field of one element, described with its mapping."""
        leaf = it.field.rsplit(".", 1)[-1]
        t = self.valued_type(i, "items", api.type, it.values, name, leaf, source)
        mapped = "; ".join(f"{k} -> {'nothing' if v is None else json.dumps(v)}" for k, v in (it.values or {}).items())
        desc = f"Config Connector's name for {it.api_field}" + (f" ({mapped})" if mapped else "") + f". {api.description}".rstrip()
        return FieldIR(leaf, t, desc, (), source)

    def clone(self, obj: ObjectIR, name: str, renames: list[tuple[list[str], str, FieldIR]], i: int) -> ObjectIR:
        """``obj`` as class ``name``, with each (API parent path + leaf, new field) renamed."""
        fields: list[FieldIR] = []
        used = 0
        for f in obj.fields:
            key = f.api_name or f.name
            direct = [nf for p, _, nf in renames if p == [key]]
            deeper = [(p[1:], a, nf) for p, a, nf in renames if len(p) > 1 and p[0] == key]
            if direct:
                fields.append(direct[0])
                used += 1
            elif deeper:
                child = self.objects.get(f.type.ref or "") if f.type.kind == "object" else None
                if child is None:
                    raise self.error(i, "items", f"{deeper[0][1]!r}: {f.name} is not an object")
                c = self.clone(child, name + pascal(f.name), deeper, i)
                fields.append(replace(f, type=TypeIR("object", ref=c.name)))
                used += len(deeper)
            else:
                fields.append(f)
        if used != len(renames):
            missing = [a for p, a, _ in renames if not any((g.api_name or g.name) == p[0] for g in obj.fields)]
            raise self.error(i, "items", f"{', '.join(repr(m) for m in missing)}: {obj.name} has no such API field")
        out = ObjectIR(name, obj.description, tuple(fields), obj.source)
        self.add(i, out)
        return out

    def alias(self, i: int, cfg: AliasConfig, spec: ObjectIR) -> tuple[AliasIR, FieldIR]:
        source = f"{self.file}#{json_path(*self.base, 'aliases', i)}"
        if any(f.name == cfg.field for f in spec.fields):
            raise self.error(i, "field", f"alias {cfg.field!r} is already a spec field")
        target, api = self.walk(spec, cfg.api_field, i, "apiField")
        if cfg.values and cfg.items:
            raise self.error(i, "values", "values map a scalar alias and items the elements of a list alias: not both")
        t = self.valued_type(i, "values", api.type, cfg.values, self.kind, cfg.field, source)
        items: list[AliasIR] = []
        if cfg.items:
            elem = self.objects.get(t.item.ref or "") if t.kind == "array" and t.item is not None and t.item.kind == "object" else None
            if elem is None:
                raise self.error(i, "items", f"items need a list of objects; {cfg.api_field} is not one")
            name = f"{self.kind}{pascal(cfg.field)}"
            renames: list[tuple[list[str], str, FieldIR]] = []
            for j, it in enumerate(cfg.items):
                parent, _, _ = it.field.rpartition(".")
                api_parent, _, api_leaf = it.api_field.rpartition(".")
                if parent != api_parent:
                    raise self.error(i, "items", f"item {j}: {it.field!r} and {it.api_field!r} must share their parent path")
                parent_obj = elem if not parent else self.objects.get(self.walk(elem, parent, i, "items")[1].type.ref or "")
                leaf_api = _field(parent_obj, api_leaf) if parent_obj is not None else None
                if leaf_api is None:
                    raise self.error(i, "items", f"item {j}: {elem.name} has no API field {it.api_field!r}")
                item_source = f"{source}/items/{j}"
                owner = name + "".join(pascal(p) for p in (self.walk(elem, parent, i, "items")[0].split(".") if parent else []))
                nf = self.item_field(i, it, leaf_api, owner, item_source)
                renames.append(([*(parent.split(".") if parent else []), api_leaf], it.api_field, nf))
                item_target = self.walk(elem, it.api_field, i, "items")[0]
                items.append(AliasIR(it.field, item_target, it.api_field, cfg.reason, item_source, tuple((k, v) for k, v in (it.values or {}).items())))
            cloned = self.clone(elem, name, renames, i)
            t = TypeIR("array", item=TypeIR("object", ref=cloned.name))
        mapped = "; ".join(f"{k} -> {'nothing' if v is None else json.dumps(v)}" for k, v in (cfg.values or {}).items())
        desc = f"Config Connector's name for {cfg.api_field} (spec.{target}" + (f"; {mapped}" if mapped else "") + f"); set one of the two. {cfg.reason}"
        values = tuple((k, v) for k, v in (cfg.values or {}).items())
        return AliasIR(cfg.field, target, cfg.api_field, cfg.reason, source, values, tuple(items)), FieldIR(cfg.field, t, desc, (), source)


def build_aliases(kind: str, file: str, base: tuple[str | int, ...], configs: tuple[AliasConfig, ...], spec: ObjectIR, models: ModelSet) -> Aliased:
    """The spec with one extra property per alias; errors name the kind config entry."""
    if not configs:
        return Aliased(spec, models, ())
    b = _Builder(kind, file, base, models)
    aliases: list[AliasIR] = []
    extra: list[FieldIR] = []
    for i, cfg in enumerate(configs):
        a, f = b.alias(i, cfg, spec)
        if any(x.field == a.field for x in aliases):
            raise b.error(i, "field", f"alias {a.field!r} is listed twice")
        aliases.append(a)
        extra.append(f)
    # A required API field is satisfied by its alias too: at least one of them.
    required = {f.name for f in spec.fields if f.required}
    groups: dict[str, list[str]] = {}
    for a in aliases:
        top = a.target.split(".", 1)[0]
        if top in required:
            groups.setdefault(top, [top]).append(a.field)
    fields = tuple(replace(f, required=False) if f.name in groups else f for f in spec.fields)
    new_spec = replace(spec, fields=(*fields, *extra), one_required=(*spec.one_required, *(tuple(g) for g in groups.values())))
    b.objects[spec.name] = new_spec
    # The model's own order first, the alias classes after it: only the aliased
    # Kinds' modules change.
    objects = tuple(b.objects.values())
    enums = tuple(b.enums.values())
    return Aliased(new_spec, ModelSet(objects, enums), tuple(aliases))
