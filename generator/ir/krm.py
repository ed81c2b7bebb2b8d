"""IR stage: project a Kind's API resource onto KRM spec and observedState.

Output-only fields leave the spec and go to ``status.observedState``; the
identity (``name``/identifier) leaves the spec for ``resourceID`` and the
parent fields. Nested objects are projected recursively; a schema used in
several places is projected once per mode, so recursive schemas terminate.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Literal

from kccgen.discovery.behaviours import Behaviour as B
from kccgen.discovery.behaviours import Fact, without_markers
from kccgen.generator.ir.model import (
    EnumIR,
    FieldIR,
    Identity,
    IdentityParam,
    ModelSet,
    ObjectIR,
    ReferenceIR,
    TypeIR,
)
from kccgen.generator.ir.references import Decision
from kccgen.generator.naming import API_NAMED_REF, is_ref_name, pascal
from kccgen.generator.spec.kinds import KindConfig

Mode = Literal["spec", "observed", "all"]
# "The presence of this field indicates that this is a managed reverse lookup zone"
_PRESENCE = re.compile(r"\bpresence of this field\b", re.IGNORECASE)
_SUFFIX = {"spec": "", "observed": "ObservedState", "all": "Observed"}


# Optimistic-locking tokens (compute fingerprint, etag) are read from GET and
# sent back by the adapter on update; they are never desired state.
CONCURRENCY_TOKENS = frozenset({"etag", "fingerprint"})
CONCURRENCY_SOURCE = "kccgen: concurrency token, read from GET and sent back on update"


def override_facts(cfg: KindConfig, config_file: str) -> dict[str, tuple[Fact, ...]]:
    out = {}
    for path, ov in cfg.fields.items():
        out[path] = tuple(sorted(Fact(B(b), f"override:{config_file}: {ov.reason}") for b in ov.behaviours))
    return out


def overridden_description(description: str, facts: tuple[Fact, ...]) -> str:
    """The description of a field whose behaviours a kind config replaced: its own
    markers give way to the config's (an output-only ``[Output Only]`` field that
    insert takes becomes ``Immutable.``), so the CRD never states the old ones."""
    words = {B.IMMUTABLE: "Immutable.", B.REQUIRED: "Required.", B.OPTIONAL: "Optional.", B.OUTPUT_ONLY: "Output only.", B.INPUT_ONLY: "Input only."}
    head = " ".join(words[b] for b in sorted({x.behaviour for x in facts}, key=lambda b: b.value) if b in words)
    return f"{head} {without_markers(description)}".strip()


class KrmProjector:
    def __init__(
        self,
        kind: str,
        api: ModelSet,
        resource_class: str,
        overrides: dict[str, tuple[Fact, ...]],
        refs: dict[tuple[str, str], Decision | None] | None = None,
        filled: frozenset[str] = frozenset(),
    ) -> None:
        self.kind = kind
        # top-level fields the runtime fills (the create's ID field: BigQuery's
        # tableReference): never required of the user, whatever the API says
        self.filled = filled
        self.refs = refs or {}
        self.ref_classes: set[str] = set()
        self.choice_classes: frozenset[str] = frozenset()  # oneOf objects (_choice_field)
        self.api = api
        self.resource_class = resource_class
        self.overrides = overrides
        self.objects: dict[str, ObjectIR] = {}
        self.enums: dict[str, EnumIR] = {}
        self._memo: dict[tuple[str, Mode], str | None] = {}
        self._api_enums = {e.name: e for e in api.enums}
        self.used_overrides: set[str] = set()

    def facts(self, f: FieldIR, path: str) -> tuple[Fact, ...]:
        if path in self.overrides:
            self.used_overrides.add(path)
            return self.overrides[path]
        if path in CONCURRENCY_TOKENS and f.type.kind == "string":
            return tuple(sorted({*f.facts, Fact(B.OUTPUT_ONLY, CONCURRENCY_SOURCE)}))
        return f.facts

    def _name(self, cls: str, mode: Mode) -> str:
        if cls == self.resource_class and mode != "all":
            return f"{self.kind}{'Spec' if mode == 'spec' else 'ObservedState'}"
        return f"{cls}{_SUFFIX[mode]}"

    def _has_output_only(self, cls: str, path: str, seen: frozenset[str] = frozenset()) -> bool:
        """Whether any field reachable from ``cls`` is output-only.

        Decided before projecting, so a recursive schema with nothing to
        observe (a tree of Nodes) gets no ObservedState class at all.
        """
        if cls in seen:
            return False
        if any(p.startswith(f"{path}.") for p in self.overrides) if path else bool(self.overrides):
            return True
        for f in self.api.object(cls).fields:
            if f.output_only:
                return True
            t = f.type
            while t.kind in ("array", "map") and t.item is not None:
                t = t.item
            if t.kind == "object" and t.ref is not None and self._has_output_only(t.ref, f"{path}.{f.name}" if path else f.name, seen | {cls}):
                return True
        return False

    def project(
        self, cls: str, mode: Mode, path: str, drop: frozenset[str] = frozenset(), presence: bool = False
    ) -> str | None:
        """KRM class name for ``cls`` in ``mode``, or None when nothing is left.

        ``presence``: the field's description says its presence alone means
        something (dns reverseLookupConfig), so an empty spec object is kept.
        """
        key = (cls, mode)
        if mode == "observed" and not self._has_output_only(cls, path):
            return None
        has_nested_override = any(p.startswith(path + ".") or (not path and p) for p in self.overrides)
        if key in self._memo and not has_nested_override:
            return self._memo[key]
        name = self._name(cls, mode)
        self._memo[key] = name  # provisional: recursive references resolve to it
        src = self.api.object(cls)
        fields: list[FieldIR] = []
        one_required: list[tuple[str, ...]] = []
        at_most_one: list[tuple[str, ...]] = []
        removed = 0
        for f in src.fields:
            fpath = f"{path}.{f.name}" if path else f.name
            facts = self.facts(f, fpath)
            if fpath in self.overrides:
                f = replace(f, description=overridden_description(f.description, facts))
            beh = {x.behaviour for x in facts}
            if not path and f.name in drop:
                removed += 1
                continue
            out_only = B.OUTPUT_ONLY in beh
            if mode == "spec" and out_only:
                removed += 1
                continue
            # Required means required: a field the API must have at create (its
            # prose, the create method's annotations or a kind config says so)
            # is required in spec, at its own level of the tree.
            # (a dotted create query parameter, Spanner's encryptionConfig.encryptionType,
            # is required only with the object it belongs to: not required here)
            required = mode == "spec" and B.REQUIRED in beh and B.OPTIONAL not in beh and not (not path and (f.name in self.filled or "." in f.name))
            decision = self.refs.get((cls, f.name)) if mode == "spec" else None
            if decision is not None and decision.flatten:
                keys = self._choice_keys(f, decision)
                fields += keys
                names = tuple(k.name for k in keys)
                at_most_one.append(names)
                # a folder or organization parent may instead come from Config Connector's
                # folder-id / organization-id annotation, which the runtime reads
                if required and not {t.kind for _, t in decision.choices} <= HIERARCHY_PARENTS:
                    one_required.append(names)
                continue
            if decision is not None:
                if decision.choices:
                    made = self._choice_field(f, facts, decision, cls)
                elif decision.kinds:
                    made = self._kinded_field(f, facts, decision, cls)
                else:
                    made = self._ref_field(f, facts, decision)
                fields.append(replace(made, required=required))
                continue
            sub_mode: Mode = "all" if (mode == "all" or out_only) else mode
            t = self._type(f.type, sub_mode, fpath, _PRESENCE.search(f.description or "") is not None)
            if t is None or (mode == "observed" and not out_only and not self._contains_object(f.type)):
                removed += 1
                continue
            desc = f"{API_NAMED_REF} {f.description}".strip() if is_ref_name(f.name) else f.description
            fields.append(replace(f, type=t, facts=facts, description=desc, required=required))
        # Empty after projection: drop. Empty by design (a presence message such
        # as dns reverseLookupConfig) stays in spec, never in observedState.
        if not fields and (removed or mode != "spec") and not (mode == "spec" and (cls == self.resource_class or presence)):
            self._memo[key] = None
            self.objects.pop(name, None)
            return None
        self.objects[name] = ObjectIR(name, src.description, tuple(fields), src.source, open=False, one_required=tuple(one_required), at_most_one=tuple(at_most_one))
        return name

    def _choice_keys(self, f: FieldIR, d: Decision) -> list[FieldIR]:
        """A flattened oneOf field: one reference field per key, beside the others
        (Project's ``folderRef`` and ``organizationRef`` for the API's ``parent``)."""
        out: list[FieldIR] = []
        for key, tgt in d.choices:
            self.ref_classes.add(f"{tgt.kind}Ref")
            desc = f"A reference to a {tgt.kind} (API field `{f.name}`; at most one of {', '.join(k for k, _ in d.choices)})."
            out.append(FieldIR(key, TypeIR("object", ref=f"{tgt.kind}Ref"), f"{desc} {f.description}".strip(), f.facts, f.source, f.deprecated, api_name=f.name))
        for key in d.literals:
            out.append(FieldIR(key, TypeIR("string"), f"The value of the API field `{f.name}` itself, sent as is.", f.facts, f.source, api_name=f.name))
        return sorted(out, key=lambda x: x.name)

    def _choice_field(self, f: FieldIR, facts: tuple[Fact, ...], d: Decision, owner: str) -> FieldIR:
        """A field naming one of several Kinds: an object with one ``<key>`` reference per
        Kind (and the literal keys), exactly one set; a list of them for a list field."""
        name = f"{owner}{pascal(d.krm_name)}Choice"
        keys: list[FieldIR] = []
        src = f"{f.source} (kind config oneOf)"
        for key, tgt in d.choices:
            self.ref_classes.add(f"{tgt.kind}Ref")
            keys.append(FieldIR(key, TypeIR("object", ref=f"{tgt.kind}Ref"), f"A reference to a {tgt.kind}.", (), src))
        for key in d.literals:
            keys.append(FieldIR(key, TypeIR("string"), f"The value of the API field `{f.name}` itself, sent as is.", (), src))
        keys.sort(key=lambda x: x.name)
        self.objects[name] = ObjectIR(name, f"One of: {', '.join(k.name for k in keys)}.", tuple(keys), src, exactly_one=tuple(k.name for k in keys))
        self.choice_classes |= {name}
        t = TypeIR("object", ref=name)
        many = f.type.kind == "array"
        if many:
            t = TypeIR("array", item=t)
        kinds = ", ".join(tgt.kind for _, tgt in d.choices)
        desc = f"{'Each names' if many else 'Names'} one of {kinds} (API field `{f.name}`): set exactly one key."
        if f.description:
            desc += f" {f.description}"
        return FieldIR(d.krm_name, t, desc, facts, f.source, f.deprecated, api_name=f.name)

    def _kinded_field(self, f: FieldIR, facts: tuple[Fact, ...], d: Decision, owner: str) -> FieldIR:
        """A reference whose ``kind`` key picks which Kind it names (Config Connector's
        attachmentTargetRef: ``{kind: Folder, name}``; ``{external}`` in any of their forms)."""
        kinds = (d.target.kind, *(k.kind for k in d.kinds))
        name = f"{owner}{pascal(d.krm_name)}"
        src = f"{f.source} (kind config kinds)"
        s = TypeIR("string")
        keys = (
            FieldIR("external", s, f"The referenced resource's name, in the form of any of {', '.join(kinds)}.", (), src),
            FieldIR("kind", s, f"The Kind of the object `name` names: one of {', '.join(kinds)} (default {kinds[0]}).", (), src),
            FieldIR("name", s, "The `metadata.name` of the referenced object.", (), src),
            FieldIR("namespace", s, "The `metadata.namespace` of the referenced object; defaults to this object's namespace.", (), src),
        )
        self.objects[name] = ObjectIR(name, f"A reference to a {' or '.join(kinds)}: `external`, or `kind` and `name`.", keys, src, exactly_one=("external", "name"), kinds=kinds)
        self.choice_classes |= {name}
        desc = f"A reference to a {' or '.join(kinds)} (API field `{f.name}`)."
        if f.description:
            desc += f" {f.description}"
        return FieldIR(d.krm_name, TypeIR("object", ref=name), desc, facts, f.source, f.deprecated, api_name=f.name)

    def _ref_field(self, f: FieldIR, facts: tuple[Fact, ...], d: Decision) -> FieldIR:
        """The ``<kind>Ref(s)`` field that replaces an API string field in spec."""
        cls = f"{d.target.kind}Ref"
        self.ref_classes.add(cls)
        t = TypeIR("object", ref=cls)
        if d.many:
            t = TypeIR("array", item=t)
        what = "references to" if d.many else "a reference to"
        desc = f"{what[0].upper()}{what[1:]} {'' if d.many else 'a '}{d.target.kind}{'s' if d.many else ''} (API field `{f.name}`)."
        if f.description:
            desc += f" {f.description}"
        return FieldIR(d.krm_name, t, desc, facts, f.source, f.deprecated, api_name=f.name)

    @staticmethod
    def _contains_object(t: TypeIR) -> bool:
        while t.kind in ("array", "map") and t.item is not None:
            t = t.item
        return t.kind == "object" and t.ref is not None

    def _type(self, t: TypeIR, mode: Mode, path: str, presence: bool = False) -> TypeIR | None:
        if t.kind == "object" and t.ref is not None:
            ref = self.project(t.ref, mode, path, presence=presence)
            return None if ref is None else replace(t, ref=ref)
        if t.kind in ("array", "map") and t.item is not None:
            item = self._type(t.item, mode, f"{path}[]" if t.kind == "array" else path, presence)
            return None if item is None else replace(t, item=item)
        if mode == "observed":
            return None  # scalars survive in observed mode only when output-only (handled by caller)
        if t.kind == "enum" and t.ref is not None:
            self.enums[t.ref] = self._api_enums[t.ref]
        return t

    def model_set(self) -> ModelSet:
        return ModelSet(tuple(self.objects[k] for k in sorted(self.objects)), tuple(self.enums[k] for k in sorted(self.enums)))


#: Kinds a flattened parent choice may name through Config Connector's annotations.
HIERARCHY_PARENTS = frozenset({"Folder", "Organization"})


def ref_placeholder(target_kind: str) -> ObjectIR:
    """Stands in for ``<Kind>Ref`` during codegen; the real class is imported
    from the target's generated ``<kind>_reference`` module."""
    s = TypeIR("string")
    return ObjectIR(
        name=f"{target_kind}Ref",
        description=f"A reference to a {target_kind}.",
        fields=(FieldIR("external", s, "", (), "krm"), FieldIR("name", s, "", (), "krm"), FieldIR("namespace", s, "", (), "krm")),
        source="krm",
        open=False,
    )


def beside_field(kind: str, identity: Identity, p: IdentityParam, fields: list[FieldIR], refs: list[ReferenceIR]) -> None:
    """Config Connector's field for a param that a parent ref covers: optional, as the
    ref names it too; it must agree with the ref, and completes a bare-ID ``external``."""
    assert p.beside is not None and p.covered_by is not None
    facts = (Fact(B.OPTIONAL, "identity"), Fact(B.IMMUTABLE, "identity"))
    why = (
        f"Immutable. Optional. The {p.name} of the {kind}, which `{p.covered_by}` names too: the two must agree. "
        f"Where `{p.covered_by}` is a bare ID (`external: my-id`), this field completes its name."
    )
    if p.beside == "projectRef":
        fields.append(FieldIR(p.beside, TypeIR("object", ref="ProjectRef"), why + " When unset, the `cnrm.cloud.google.com/project-id` annotation is used.", facts, f"identity:{identity.template}"))
        refs.append(ReferenceIR("{" + p.name + "}", p.beside, "Project", False, False, f"identity parameter {{{p.name}}} of {identity.template}, beside {p.covered_by}", parent=True))
    else:
        fields.append(FieldIR(p.beside, TypeIR("string"), why, facts, f"identity:{identity.template}"))


def identity_fields(kind: str, identity: Identity, api_types: Mapping[str, TypeIR] | None = None) -> tuple[list[FieldIR], list[ReferenceIR]]:
    """Spec fields for resourceID and parents, and the parent references. A plain
    identity field that is also an integer field of the resource (a firewall
    policy rule's ``priority``) keeps the API's type, as Config Connector's does."""
    fields: list[FieldIR] = []
    refs: list[ReferenceIR] = []
    imm = Fact(B.IMMUTABLE, "identity")
    for p in identity.params:
        if p.covered_by is not None:
            if p.beside is not None:
                beside_field(kind, identity, p, fields, refs)
            continue
        if p.role == "id":
            if identity.id_generation == "service":
                desc = (
                    f"Optional. The service-generated ID of an existing {kind} to acquire. "
                    "The service assigns the ID on create, so this field only serves acquisition."
                )
            else:
                desc = f"Immutable. Optional. The {kind} ID used for creation and acquisition. When unset, the value of `metadata.name` is used."
            fields.append(FieldIR("resourceID", TypeIR("string"), desc, (Fact(B.OPTIONAL, "identity"), imm, Fact(B.IDENTIFIER, "identity")), f"identity:{identity.template}"))
        elif p.role == "parent":
            assert p.ref_kind is not None
            # The project may instead come from Config Connector's
            # cnrm.cloud.google.com/project-id annotation (object or namespace).
            optional = p.ref_kind == "Project"
            desc = f"Immutable. The {p.ref_kind} that this {kind} belongs to."
            choice = identity.parent_fields if p.krm_field in identity.parent_fields else ()
            if choice:
                desc += f" Set at most one of {', '.join(choice)}."
            if optional:
                desc += " When unset, the `cnrm.cloud.google.com/project-id` annotation of the object or of its namespace is used."
            fields.append(
                FieldIR(p.krm_field, TypeIR("object", ref=f"{p.ref_kind}Ref"), desc, (Fact(B.OPTIONAL if optional else B.REQUIRED, "identity"), imm), f"identity:{identity.template}", required=not optional)
            )
            refs.append(ReferenceIR("{" + p.name + "}", p.krm_field, p.ref_kind, False, False, f"identity parameter {{{p.name}}} of {identity.template}", parent=True))
            for form in identity.parent_forms if choice else ():
                where = identity.template.replace("projects/{project}/", f"{form.collection}/{{{form.param}}}/", 1)
                fields.append(
                    FieldIR(
                        form.krm_field,
                        TypeIR("object", ref=f"{form.ref_kind}Ref"),
                        f"Immutable. The {form.ref_kind} that this {kind} belongs to, for one at {form.ref_kind.lower()} level (`{where}`). Set at most one of {', '.join(choice)}.",
                        (Fact(B.OPTIONAL, "identity"), imm),
                        f"identity:{where}",
                    )
                )
                refs.append(ReferenceIR("{" + form.param + "}", form.krm_field, form.ref_kind, False, False, f"identity parameter {{{form.param}}} of {where}", parent=True))
        elif p.default is not None:
            desc = f"Immutable. The {p.name} of the {kind}. When unset, `{p.default}`, as in Config Connector."
            fields.append(FieldIR(p.krm_field, TypeIR("string"), desc, (Fact(B.OPTIONAL, "identity"), imm), f"identity:{identity.template}"))
        else:
            api = (api_types or {}).get(p.krm_field)
            t = api if api is not None and api.kind == "integer" else TypeIR("string")
            fields.append(FieldIR(p.krm_field, t, f"Immutable. The {p.name} of the {kind}.", (Fact(B.REQUIRED, "identity"), imm), f"identity:{identity.template}", required=True))
    return fields, refs
