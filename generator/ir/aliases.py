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
class _Edit:
    """One change to an element class: under ``path`` (API names), the field
    ``leaf`` replaced by ``new``, or (leaf None) ``new`` added beside the others."""

    path: list[str]
    leaf: str | None
    new: FieldIR
    api_field: str


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

    def clone(self, obj: ObjectIR, name: str, edits: list[_Edit], i: int) -> ObjectIR:
        """``obj`` as class ``name`` with each edit made: a renamed API field
        replaced, or a flattened field added (over one of the same name)."""
        fields: list[FieldIR] = []
        here = [e for e in edits if not e.path]
        done: set[int] = set()
        for f in obj.fields:
            key = f.api_name or f.name
            mine = [j for j, e in enumerate(here) if e.leaf == key or (e.leaf is None and e.new.name == f.name)]
            deeper = [replace(e, path=e.path[1:]) for e in edits if e.path and e.path[0] == key]
            if mine:
                fields.append(here[mine[0]].new)
                done.update(mine)
            elif deeper:
                child = self.objects.get(f.type.ref or "") if f.type.kind == "object" else None
                if child is None:
                    raise self.error(i, "items", f"{deeper[0].api_field!r}: {f.name} is not an object")
                c = self.clone(child, name + pascal(f.name), deeper, i)
                fields.append(replace(f, type=TypeIR("object", ref=c.name)))
            else:
                fields.append(f)
        missing = [e.api_field for j, e in enumerate(here) if j not in done and e.leaf is not None]
        if missing:
            raise self.error(i, "items", f"{', '.join(repr(m) for m in missing)}: {obj.name} has no such API field")
        fields += [e.new for j, e in enumerate(here) if j not in done]
        out = ObjectIR(name, obj.description, tuple(fields), obj.source)
        self.add(i, out)
        return out

    def item(self, i: int, j: int, it: AliasItem, elem: ObjectIR, name: str, source: str) -> tuple[_Edit, AliasIR]:
        """One renamed (same parent) or flattened (another parent) sub-field of an element."""
        parent, _, _ = it.field.rpartition(".")
        api_parent, _, api_leaf = it.api_field.rpartition(".")
        parent_obj = elem if not api_parent else self.objects.get(self.walk(elem, api_parent, i, "items")[1].type.ref or "")
        leaf_api = _field(parent_obj, api_leaf) if parent_obj is not None else None
        if leaf_api is None:
            raise self.error(i, "items", f"item {j}: {elem.name} has no API field {it.api_field!r}")
        if parent and (self.walk(elem, parent, i, "items")[1].type.kind != "object"):
            raise self.error(i, "items", f"item {j}: {parent!r} is not an object of {elem.name}")
        item_source = f"{source}/items/{j}"
        owner = name + "".join(pascal(p) for p in (self.walk(elem, parent, i, "items")[0].split(".") if parent else []))
        nf = self.item_field(i, it, leaf_api, owner, item_source)
        edit = _Edit(parent.split(".") if parent else [], api_leaf if parent == api_parent else None, nf, it.api_field)
        target = self.walk(elem, it.api_field, i, "items")[0]
        return edit, AliasIR(it.field, target, it.api_field, "", item_source, tuple((k, v) for k, v in (it.values or {}).items()))

    def element_of(self, i: int, cfg: AliasConfig, t: TypeIR) -> ObjectIR | None:
        """The object each element of the API list is (None: not a list of objects)."""
        if t.kind != "array" or t.item is None or t.item.kind != "object":
            return None
        return self.objects.get(t.item.ref or "")

    def alias(self, i: int, cfg: AliasConfig, spec: ObjectIR) -> tuple[AliasIR, FieldIR]:
        source = f"{self.file}#{json_path(*self.base, 'aliases', i)}"
        if any(f.name == cfg.field for f in spec.fields):
            raise self.error(i, "field", f"alias {cfg.field!r} is already a spec field")
        if cfg.api_field is None:
            desc = f"Config Connector's {cfg.field}: accepted and sent nowhere. {cfg.reason}"
            return AliasIR(cfg.field, "", "", cfg.reason, source), FieldIR(cfg.field, TypeIR("string"), desc, (), source)
        target, api = self.walk(spec, cfg.api_field, i, "apiField")
        if cfg.values and cfg.items:
            raise self.error(i, "values", "values map a scalar alias and items the elements of a list alias: not both")
        t = self.valued_type(i, "values", api.type, cfg.values, self.kind, cfg.field, source)
        elem = self.element_of(i, cfg, t)
        if (cfg.element or cfg.fixed) and elem is None:
            raise self.error(i, "element" if cfg.element else "fixed", f"{cfg.api_field} is not a list of objects")
        for key in cfg.fixed or {}:
            if elem is not None and _field(elem, key) is None:
                raise self.error(i, "fixed", f"{elem.name} has no API field {key!r}")
        items: list[AliasIR] = []
        if cfg.items:
            if elem is None:
                raise self.error(i, "items", f"items need a list of objects; {cfg.api_field} is not one")
            name = f"{self.kind}{pascal(cfg.field)}"
            edits: list[_Edit] = []
            for j, it in enumerate(cfg.items):
                edit, a = self.item(i, j, it, elem, name, source)
                edits.append(edit)
                items.append(replace(a, reason=cfg.reason))
            elem = self.clone(elem, name, edits, i)
            t = TypeIR("array", item=TypeIR("object", ref=elem.name))
        if cfg.element:
            assert elem is not None
            t = TypeIR("object", ref=elem.name)
            if cfg.into:
                inner = _field(elem, cfg.into)
                if inner is None:
                    raise self.error(i, "into", f"{elem.name} has no API field {cfg.into!r}")
                t = inner.type
        mapped = "; ".join(f"{k} -> {'nothing' if v is None else json.dumps(v)}" for k, v in (cfg.values or {}).items())
        shape = " (one element" + (f", its {cfg.into}" if cfg.into else "") + ")" if cfg.element else ""
        desc = f"Config Connector's name for {cfg.api_field}{shape} (spec.{target}" + (f"; {mapped}" if mapped else "") + f"); set one of the two. {cfg.reason}"
        values = tuple((k, v) for k, v in (cfg.values or {}).items())
        fixed = tuple((k, v) for k, v in (cfg.fixed or {}).items())
        a = AliasIR(cfg.field, target, cfg.api_field, cfg.reason, source, values, tuple(items), cfg.element, cfg.into or "", fixed, cfg.append)
        return a, FieldIR(cfg.field, t, desc, (), source)


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
