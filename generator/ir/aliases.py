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
from typing import Any

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
from kccgen.generator.spec.kinds import AliasConfig, AliasItem, AliasScalar, AliasValue

EVIDENCE = "specs/kcc/evidence.yaml"


class DerivedAliasError(SpecError):
    """A derived alias (not a kind-config entry) that cannot be built: the caller leaves it out."""

    def __init__(self, file: str, path: str, msg: str, index: int) -> None:
        super().__init__(file, path, msg)
        self.index = index


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
        self.spec_name = ""
        self.clones: set[str] = set()  # classes copied by place()
        self.configured = 1 << 30  # aliases from this index on are derived (generator/ir/spellings.py)
        self.beside: set[str] = set()  # item fields added beside their API field, not in its place

    def error(self, i: int, key: str, msg: str) -> SpecError:
        if i >= self.configured:
            return DerivedAliasError(EVIDENCE, json_path("kinds", self.kind, "fields"), f"{self.kind}: {msg}", index=i)
        return SpecError(self.file, json_path(*self.base, "aliases", i, key), f"{self.kind}: {msg}")

    def source(self, i: int) -> str:
        """Where alias ``i`` comes from: its kind-config entry, or Config Connector's CRD paths."""
        if i >= self.configured:
            return f"{EVIDENCE}#{json_path('kinds', self.kind, 'fields')}"
        return f"{self.file}#{json_path(*self.base, 'aliases', i)}"

    def walk(self, obj: ObjectIR, api_path: str, i: int, key: str) -> tuple[str, FieldIR]:
        """(KRM path, field) of a dotted API path through nested objects; a ``[]``
        step goes into a list's elements and stays in the KRM path."""
        krm: list[str] = []
        node: ObjectIR | None = obj
        found: FieldIR | None = None
        for part in api_path.split("."):
            name, step = part.removesuffix("[]"), part.endswith("[]")
            if node is None:
                raise self.error(i, key, f"{api_path!r}: {'.'.join(krm)} is not an object")
            found = _field(node, name)
            if found is None:
                raise self.error(i, key, f"{api_path!r}: {node.name} has no API field {name!r}")
            t = found.type
            if step:
                if t.kind != "array" or t.item is None:
                    raise self.error(i, key, f"{api_path!r}: {found.name} is not a list")
                t = t.item
            krm.append(found.name + ("[]" if step else ""))
            node = self.objects.get(t.ref or "") if t.kind == "object" else None
        assert found is not None
        return ".".join(krm), found

    def place(self, obj: ObjectIR, parts: list[str], nf: FieldIR, i: int, group: str | None) -> ObjectIR:
        """``obj`` with ``nf`` added at the KRM path ``parts`` (``[]``: a list's
        elements): the objects on the way are copies of their own (suffix ``Kcc``),
        so other fields of the same class do not get the alias. ``nf`` takes the
        place of a field of its name only where it is the alias of that field
        (``group`` names the field whose requirement the alias shares)."""
        if not parts:
            fields = list(obj.fields)
            old = next((k for k, f in enumerate(fields) if f.name == nf.name), None)
            one_required, at_most_one = obj.one_required, obj.at_most_one
            pair = (group or "", nf.name)
            if group is not None and any(f.name == group and f.required for f in fields) and group != nf.name:
                fields = [replace(f, required=False) if f.name == group else f for f in fields]
                one_required = (*one_required, pair)
            if group is not None and group != nf.name and pair not in at_most_one:
                # beside its field: one rule in this object (the CRD's CEL), cheap in every
                # element of every list on the way, where a rule on spec would walk them all
                at_most_one = (*at_most_one, (group, nf.name))
            if old is not None:
                fields[old] = nf
            else:
                fields.append(nf)
            name = obj.name if obj.name in self.clones or obj.name == self.spec_name else f"{obj.name}Kcc"
            out = replace(obj, name=name, fields=tuple(fields), one_required=one_required, at_most_one=at_most_one)
            self.put(i, out)
            return out
        head, step = parts[0].removesuffix("[]"), parts[0].endswith("[]")
        f = next((f for f in obj.fields if f.name == head), None)
        t = f.type if f is not None else None
        if step and t is not None:
            t = t.item if t.kind == "array" else None
        child = self.objects.get(t.ref or "") if t is not None and t.kind == "object" else None
        if child is not None and f"{child.name}Kcc" in self.clones:
            child = self.objects[f"{child.name}Kcc"]  # another path to this class made its alias copy: add to it
        if f is None or child is None:
            raise self.error(i, "field", f"{head!r} is not {'a list of objects' if step else 'an object'} field of {obj.name}")
        c = self.place(child, parts[1:], nf, i, group)
        ct = TypeIR("object", ref=c.name)
        nt = TypeIR("array", item=ct) if step else ct
        name = obj.name if obj.name in self.clones or obj.name == self.spec_name else f"{obj.name}Kcc"
        out = replace(obj, name=name, fields=tuple(replace(g, type=nt) if g.name == head else g for g in obj.fields))
        self.put(i, out)
        return out

    def put(self, i: int, o: ObjectIR) -> None:
        """Store a copy made by :meth:`place` (again, when a second alias changes it)."""
        if o.name not in self.clones and o.name != self.spec_name:
            if o.name in self.objects or o.name in self.enums:
                raise self.error(i, "field", f"alias class {o.name} clashes with a generated class")
            self.clones.add(o.name)
        self.objects[o.name] = o

    def add(self, i: int, o: ObjectIR) -> None:
        if o.name in self.objects or o.name in self.enums:
            raise self.error(i, "items", f"alias class {o.name} clashes with a generated class")
        self.objects[o.name] = o

    def valued_type(self, i: int, key: str, t: TypeIR, values: dict[str, AliasValue] | None, name: str, leaf: str, source: str) -> TypeIR:
        """The alias's type: the API field's, or an enum of the mapped values."""
        if not values:
            return t
        if set(values) <= {"true", "false"}:  # Config Connector's boolean for an API object or value
            return TypeIR("boolean")
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
            if direct and direct[0].name in self.beside:  # an extra field: the API's keeps its place
                fields.append(f)
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

    def element_items(self, i: int, cfg: AliasConfig | AliasItem, elem: ObjectIR, name: str, source: str) -> tuple[ObjectIR, tuple[AliasIR, ...]]:
        """The alias's element class (``elem`` with its items renamed or added) and the item moves."""
        renames: list[tuple[list[str], str, FieldIR]] = []
        extra: list[FieldIR] = []
        items: list[AliasIR] = []
        for j, it in enumerate(cfg.items):
            parent, _, leaf = it.field.rpartition(".")
            api_parent, _, api_leaf = it.api_field.rpartition(".")
            item_source = f"{source}/items/{j}"
            item_target, leaf_api = self.walk(elem, it.api_field, i, "items")
            if parent == api_parent and it.beside and parent:
                owner = name + "".join(pascal(p) for p in self.walk(elem, parent, i, "items")[0].split("."))
                nf = self.item_field(i, it, leaf_api, owner, item_source)
                self.beside.add(nf.name)
                renames.append(([*parent.split("."), api_leaf], it.api_field, nf))
            elif parent == api_parent and not (it.beside and not parent):
                owner = name + "".join(pascal(p) for p in (self.walk(elem, parent, i, "items")[0].split(".") if parent else []))
                nf = self.item_field(i, it, leaf_api, owner, item_source)
                renames.append(([*(parent.split(".") if parent else []), api_leaf], it.api_field, nf))
            elif not parent:  # a field of the element of its own, for one deeper in it
                nf = self.item_field(i, it, leaf_api, name, item_source)
                extra.append(nf)
            else:
                raise self.error(i, "items", f"item {j}: {it.field!r} is neither beside {it.api_field!r} nor a field of the element itself")
            sub: tuple[AliasIR, ...] = ()
            if it.items:
                lt = leaf_api.type
                listed = lt.kind == "array" and lt.item is not None and lt.item.kind == "object"  # guestAccelerator[] for accelerators[]
                sub_obj = self.objects.get((lt.item.ref if listed and lt.item is not None else lt.ref) or "") if lt.kind == "object" or listed else None
                if sub_obj is None:
                    raise self.error(i, "items", f"item {j}: items need an object or a list of objects; {it.api_field} is neither")
                cls, sub = self.element_items(i, it, sub_obj, f"{name}{pascal(leaf)}", item_source)
                cls = replace(cls, fields=tuple(f for f in cls.fields if f.name in {s.field for s in sub}))  # only Config Connector's fields
                self.objects[cls.name] = cls
                nf = replace(nf, type=TypeIR("array", item=TypeIR("object", ref=cls.name)) if listed else TypeIR("object", ref=cls.name))
                renames = [(p, a, nf if a == it.api_field else g) for p, a, g in renames]
                extra = [nf if g.name == nf.name else g for g in extra]
            items.append(AliasIR(it.field, item_target, it.api_field, getattr(cfg, "reason", ""), item_source, _values(it.values), sub))
        cloned = self.clone(elem, name, renames, i)
        if extra:
            # One named as a field of the element stands in its place: KCC's
            # disk[].diskSizeGb is initializeParams.diskSizeGb, not AttachedDisk's.
            by_name = {f.name: f for f in extra}
            kept = tuple(by_name.pop(f.name, f) for f in cloned.fields)
            cloned = replace(cloned, fields=(*kept, *by_name.values()))
            self.objects[cloned.name] = cloned
        return cloned, tuple(items)

    def element_type(self, i: int, cfg: AliasConfig, t: TypeIR) -> TypeIR:
        """The alias's type where it is one element of the API's list (``element``;
        with ``into``, that element's one sub-field), checking ``fixed``."""
        if cfg.into and not cfg.element:  # the value is one sub-field of the object the API field is
            obj = self.objects.get(t.ref or "") if t.kind == "object" else None
            held = _field(obj, cfg.into) if obj is not None else None
            if held is None:
                raise self.error(i, "into", f"into names a sub-field of the object {cfg.api_field} is (or, with element, of its list's element); {cfg.api_field} has no {cfg.into!r}")
            return held.type
        if not (cfg.element or cfg.fixed):
            return t
        key = "element" if cfg.element else "fixed"
        elem = self.objects.get(t.item.ref or "") if t.kind == "array" and t.item is not None and t.item.kind == "object" else None
        if elem is None:
            raise self.error(i, key, f"{cfg.api_field} is not a list of objects")
        for name in cfg.fixed or {}:
            if _field(elem, name) is None:
                raise self.error(i, "fixed", f"{elem.name} has no API field {name!r}")
        if not cfg.element:
            return t
        if not cfg.into:
            return TypeIR("object", ref=elem.name)
        inner = _field(elem, cfg.into)
        if inner is None:
            raise self.error(i, "into", f"{elem.name} has no API field {cfg.into!r}")
        return inner.type

    def alias(self, i: int, cfg: AliasConfig, spec: ObjectIR) -> tuple[AliasIR, ObjectIR, FieldIR | None]:
        """The alias, the spec with a nested alias's property at its path, and a
        top-level alias's property (for the caller to add)."""
        source = self.source(i)
        holder, _, leaf = cfg.field.rpartition(".")
        if cfg.api_field is None:  # accepted and sent nowhere
            if holder:
                raise self.error(i, "field", f"{cfg.field!r}: an alias with no apiField is a top-level spec field")
            desc = f"Config Connector's {cfg.field}: accepted and sent nowhere. {cfg.reason}"
            return AliasIR(cfg.field, "", "", cfg.reason, source), spec, FieldIR(leaf, TypeIR("string"), desc, (), source)
        target, api = self.walk(spec, cfg.api_field, i, "apiField")
        if cfg.values and (cfg.items or cfg.keyed_by):
            raise self.error(i, "values", "values map a scalar alias and items the elements of a list alias: not both")
        if cfg.field.rpartition("[]")[0] != target.rpartition("[]")[0]:
            raise self.error(i, "field", f"{cfg.field!r} and its API field ({target}) must share their path up to the last list")
        if cfg.field == target and not cfg.values:
            raise self.error(i, "field", f"alias {cfg.field!r} is already a spec field")
        t = self.valued_type(i, "values", api.type, cfg.values, self.kind + pascal(holder), leaf, source)
        items: tuple[AliasIR, ...] = ()
        if cfg.items or cfg.keyed_by:
            want = "map" if cfg.keyed_by else "array"
            elem = self.objects.get(t.item.ref or "") if t.kind == want and t.item is not None and t.item.kind == "object" else None
            # an object alias (Terraform's node_config for the API's config) moves its items inside it
            whole = self.objects.get(t.ref or "") if elem is None and not cfg.keyed_by and t.kind == "object" and not cfg.element else None
            if elem is None and whole is None:
                raise self.error(i, "items", f"{'keyedBy needs a map' if cfg.keyed_by else 'items need a list'} of objects; {cfg.api_field} is not one")
            holder_obj = elem or whole
            assert holder_obj is not None
            cloned, items = self.element_items(i, cfg, holder_obj, f"{self.kind}{pascal(cfg.field)}", source)
            if cfg.keyed_by:
                if any(f.name == cfg.keyed_by for f in cloned.fields):
                    raise self.error(i, "keyedBy", f"{cfg.keyed_by!r} is already a field of {holder_obj.name}")
                key = FieldIR(cfg.keyed_by, TypeIR("string"), f"The key of this entry in {cfg.api_field}.", (), source, required=True)
                cloned = replace(cloned, fields=(key, *cloned.fields))
                self.objects[cloned.name] = cloned
            t = TypeIR("object", ref=cloned.name) if whole is not None else TypeIR("array", item=TypeIR("object", ref=cloned.name))
        t = self.element_type(i, cfg, t)
        mapped = "; ".join(f"{k} -> {'nothing' if v is None else json.dumps(v)}" for k, v in (cfg.values or {}).items())
        keyed = f"; each element is the entry keyed by its {cfg.keyed_by}" if cfg.keyed_by else ""
        shape = (" (one element" + (f", its {cfg.into}" if cfg.into else "") + ")") if cfg.element else ""
        desc = f"Config Connector's name for {cfg.api_field}{shape} (spec.{target}" + (f"; {mapped}" if mapped else "") + f"{keyed}); set one of the two. {cfg.reason}"
        if cfg.field == target:
            desc = f"Config Connector's spelling of {cfg.api_field} ({mapped}). {cfg.reason}"
        if cfg.deprecated:
            # a renamed API field, or a value that became a field of an object (an ID, a reference's external)
            was = f"this is spec.{target}.{cfg.into}" if cfg.into else "the API renamed this field"
            desc = f"Deprecated: {was}; use spec.{target} (set one of the two). {cfg.reason}"
        nf = FieldIR(leaf, t, desc, (), source)
        fixed = tuple(sorted((cfg.fixed or {}).items()))
        a = AliasIR(cfg.field, target, cfg.api_field, cfg.reason, source, _values(cfg.values), items, cfg.keyed_by or "", cfg.element, cfg.into or "", fixed, cfg.append, cfg.deprecated, i >= self.configured)
        if not holder:
            return a, spec, nf
        t_holder, _, t_leaf = target.rpartition(".")
        group = t_leaf if t_holder == holder else None
        return a, self.place(spec, holder.split("."), nf, i, group), None


def _values(values: dict[str, AliasValue] | None) -> tuple[tuple[AliasScalar, Any], ...]:
    """The value map as the runtime compares it: Config Connector's booleans as
    booleans, an object target as (key, value) pairs (kccgen.contract.Alias)."""
    if not values:
        return ()
    boolean = set(values) <= {"true", "false"}
    return tuple(((k == "true") if boolean else k, _frozen(v)) for k, v in values.items())


def _frozen(v: Any) -> Any:
    return tuple((k, _frozen(x)) for k, x in sorted(v.items())) if isinstance(v, dict) else v


def build_aliases(
    kind: str, file: str, base: tuple[str | int, ...], configs: tuple[AliasConfig, ...], spec: ObjectIR, models: ModelSet,
    derived: tuple[AliasConfig, ...] = (),
) -> Aliased:
    """The spec with one extra property per alias; errors name the kind config entry.
    ``derived`` aliases (Config Connector's spellings) follow the configured ones; one
    that cannot be built is left out, never an error of the kind config."""
    while True:
        try:
            return _build(kind, file, base, configs, derived, spec, models)
        except DerivedAliasError as e:
            derived = tuple(d for j, d in enumerate(derived) if j != e.index - len(configs))


def _build(
    kind: str, file: str, base: tuple[str | int, ...], configured: tuple[AliasConfig, ...], derived: tuple[AliasConfig, ...],
    spec: ObjectIR, models: ModelSet,
) -> Aliased:
    configs = (*configured, *derived)
    if not configs:
        return Aliased(spec, models, ())
    b = _Builder(kind, file, base, models)
    b.configured = len(configured)
    b.spec_name = spec.name
    aliases: list[AliasIR] = []
    extra: list[FieldIR] = []
    for i, cfg in enumerate(configs):
        respelled = bool(cfg.values) and cfg.api_field == cfg.field  # the API field's values in Config Connector's type
        if "." not in cfg.field and any(f.name == cfg.field for f in spec.fields) and not respelled:
            raise b.error(i, "field", f"alias {cfg.field!r} is already a spec field")
        a, spec, top = b.alias(i, cfg, spec)
        if any(x.field == a.field for x in aliases):
            raise b.error(i, "field", f"alias {a.field!r} is listed twice")
        aliases.append(a)
        if top is not None and respelled:
            spec = replace(spec, fields=tuple(top if f.name == top.name else f for f in spec.fields))
        elif top is not None:
            extra.append(top)
    # A required API field is satisfied by its alias too: at least one of them.
    required = {f.name for f in spec.fields if f.required}
    groups: dict[str, list[str]] = {}
    for a in aliases:
        first = a.target.split(".", 1)[0]
        if first in required and "." not in a.field:
            groups.setdefault(first, [first]).append(a.field)
    fields = tuple(replace(f, required=False) if f.name in groups else f for f in spec.fields)
    new_spec = replace(spec, fields=(*fields, *extra), one_required=(*spec.one_required, *(tuple(g) for g in groups.values())))
    b.objects[spec.name] = new_spec
    # The model's own order first, the alias classes after it: only the aliased
    # Kinds' modules change.
    objects = tuple(b.objects.values())
    enums = tuple(b.enums.values())
    return Aliased(new_spec, ModelSet(objects, enums), tuple(aliases))
