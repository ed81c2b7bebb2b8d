"""IR stage: infer which API fields name other resources.

Signals, strongest first: a kind-config decision (with its reason); Config
Connector's reference field at the field's KRM path (the evidence's
``ref_paths``, for a Kind that carries Config Connector's name: its target and
its KRM name); a resource path in the field's description (``projects/{project}/topics/{topic}``,
``projects/*/locations/*/keyRings/*/cryptoKeys/*``, compute URLs) matched
against the identity templates of our Kinds and of specs/external-kinds.yaml;
the field's name matching a Kind's ID placeholder (``network``, ``bucket``).
A field that looks like a reference but matches nothing, or matches an
asset type nobody declared, stops the generation for curated Kinds: it must
be classified in the kind config either way.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace

from kccgen.discovery.behaviours import Behaviour as B
from kccgen.discovery.behaviours import Fact
from kccgen.discovery.errors import did_you_mean
from kccgen.discovery.paths import collection_param
from kccgen.generator.ir.model import FieldIR, ModelSet, ReferenceIR, TargetKind, TypeIR
from kccgen.generator.spec.asset_names import AssetNameTable
from kccgen.generator.spec.claims import KindEvidence
from kccgen.generator.spec.kinds import KindConfig, ReferenceConfig

_PATH_RX = re.compile(
    r"(?:https?://[A-Za-z0-9.-]+/(?:[a-z]+/)?(?:v\d[a-z0-9]*|beta|alpha)/)?"
    r"((?:projects|organizations|folders)/[^\s`\"'<>(),;]+)"
)
# The first eight mark a field as named like a reference; all are dropped for
# its KRM name (noteReference -> noteRef, as Config Connector's attestor has it).
_SUFFIXES = ("Names", "Name", "Urls", "Url", "Uris", "Uri", "Links", "Link", "Ids", "Id", "References", "Reference")
_REF_WORDS = re.compile(r"\b(resource name|URL of|url of|self[- ]?link|name of the|fully qualified)\b", re.IGNORECASE)


def description_paths(description: str) -> list[str]:
    """Resource-path-looking strings in a description, URL prefixes stripped."""
    return [m.group(1).rstrip(".:`") for m in _PATH_RX.finditer(description or "")]


@functools.cache
def template_regex(template: str) -> re.Pattern[str]:
    """Cached: at a thousand Kinds the asset table's ~2,000 templates are matched
    hundreds of thousands of times, and re's own cache holds only 512."""
    parts = re.split(r"(\{[^}]+\})", template)
    rx = "".join("[^/]+" if p.startswith("{") else re.escape(p) for p in parts)
    return re.compile(f"^{rx}$")


def base_name(field: str) -> str:
    for s in _SUFFIXES:
        if field.endswith(s) and len(field) > len(s):
            return field[: -len(s)]
    return field


def kcc_ref_index(kcc: KindEvidence | None) -> dict[str, dict[str, str]]:
    """Config Connector's reference fields by the KRM path of the object holding them
    (``spec.`` and map steps ``.*`` left out, as infer_references' walk spells it):
    ``{"autoHealingPolicies[]": {"healthCheckRef": "ComputeHealthCheck"}}``."""
    out: dict[str, dict[str, str]] = {}
    for path, kind in (kcc.ref_paths if kcc is not None else ()):
        segs = [s for s in path.split(".")[1:] if s != "*"]
        if segs:
            out.setdefault(".".join(segs[:-1]), {})[segs[-1]] = kind
    return out


def _stems(api_field: str, many: bool) -> set[str]:
    base = base_name(api_field)
    return {api_field, base, *([collection_param(base)] if many else [])}


def _ref_stem(krm_name: str) -> str:
    return krm_name.removesuffix("Refs").removesuffix("Ref")


# too generic to find inside a longer name (``name`` in ``kmsKeyNameRef``)
_GENERIC_STEMS = frozenset({"name", "names", "id", "ids", "uri", "url", "link", "resource", "resources", "value", "type", "key", "parent", "target", "source"})


def kcc_ref_name(
    index: dict[str, dict[str, str]], krm_path: str, api_field: str, many: bool, siblings: frozenset[str] = frozenset()
) -> tuple[str, str] | None:
    """(KRM name, Kind or "") of Config Connector's reference field standing for ``api_field``
    in the object at ``krm_path``: its name, minus ``Ref``/``Refs``, is the API field's name
    (``kmsKeyNameRef``, ``targetPools``), its base (``healthCheck`` -> ``healthCheckRef``,
    ``tableId`` -> ``tableRef``) or, for a list, its base's singular (``notificationChannelRefs``).
    Else one whose name ends in the field's (``service`` -> ``backendServiceRef``, KCC naming
    the target), unless a sibling field of the object (``siblings``) is named for it."""
    refs = index.get(krm_path, {})
    stems = _stems(api_field, many)
    exact = [n for n in sorted(refs) if _ref_stem(n) in stems]
    if exact:
        return (exact[0], refs[exact[0]]) if len(exact) == 1 else None
    claimed = {st for sib in siblings - {api_field} for st in _stems(sib, False) | _stems(sib, True)}
    tails = {st[0].upper() + st[1:] for st in stems if len(st) > 3 and st not in _GENERIC_STEMS}
    ends = [n for n in sorted(refs) if _ref_stem(n) not in claimed and any(_ref_stem(n).endswith(t) for t in tails)]
    return (ends[0], refs[ends[0]]) if len(ends) == 1 else None


def ref_field_name(api_field: str, target_id: str, many: bool) -> str:
    """Config Connector practice: kmsKeyName -> kmsKeyRef, notificationChannels -> notificationChannelRefs."""
    base = base_name(api_field)
    if base in ("name", "resource", "id"):
        base = target_id
    if many:
        base = collection_param(base)
    return base + ("Refs" if many else "Ref")


@dataclass(frozen=True)
class Decision:
    target: TargetKind
    krm_name: str
    many: bool
    source: str
    api_format: str | None
    order_matters: bool
    # A field naming one of several Kinds (kind config ``oneOf``): KRM key -> Kind,
    # and the keys whose string is the API value itself.
    choices: tuple[tuple[str, TargetKind], ...] = ()
    literals: tuple[str, ...] = ()
    choice_formats: tuple[tuple[str, str], ...] = ()  # oneOf key -> API spelling
    flatten: bool = False  # the keys are fields of the object holding the API field
    value_of: str | None = None  # the API value is this field of the referenced object
    kinds: tuple[TargetKind, ...] = ()  # other Kinds its ``kind`` key may name (kind config ``kinds``)


#: The service of the resource hierarchy (projects, folders, organizations).
HIERARCHY_DOMAIN = "cloudresourcemanager.googleapis.com"


class TargetIndex:
    def __init__(self, targets: tuple[TargetKind, ...], assets: AssetNameTable) -> None:
        self.targets = targets
        self._rx = [(t, template_regex(t.template)) for t in targets]
        self._known_types: set[str] = set()
        self.assets = assets
        self._ids: dict[str, list[TargetKind]] = {}
        for t in targets:
            segs = t.template.split("/")
            # an ID names one of a collection (networks/{network}); rrsets/{name}/{type} ends in no such ID
            if len(segs) == 1 or not segs[-2].startswith("{"):
                self._ids.setdefault(segs[-1], []).append(t)
        self._asset_rx = sorted({(r.asset_type, r.template) for r in assets.rows})

    def by_path(self, path: str) -> list[TargetKind]:
        return [t for t, rx in self._rx if rx.match(path)]

    def by_id(self, name: str) -> list[TargetKind]:
        return list(self._ids.get("{" + name + "}", ()))

    @functools.lru_cache(maxsize=4096)  # noqa: B019 - one index per build, kept for its lifetime
    def asset_types_for(self, path: str) -> list[str]:
        return sorted({a for a, tpl in self._asset_rx if template_regex(tpl).match(path)})


@dataclass
class Inference:
    decisions: dict[tuple[str, str], Decision | None]  # (class, field) -> ref, or None for a plain field
    references: list[ReferenceIR]
    unclassified: list[str]  # "api.path: why it looks like a reference"
    unused_config: list[str]
    bad_targets: list[str]


def object_step(f: FieldIR) -> tuple[str, str | None]:
    """The path step of a field (``items[]`` through lists) and the object class it
    leads to, through lists and maps; None when it holds no object."""
    t, step = f.type, f.name
    while t.kind in ("array", "map") and t.item is not None:
        if t.kind == "array":
            step += "[]"
        t = t.item
    return step, (t.ref if t.kind == "object" else None)


def _string_leaf(t: TypeIR) -> tuple[bool, bool]:
    """(is a string or list of strings, is a list)."""
    if t.kind == "string":
        return True, False
    if t.kind == "array" and t.item is not None and t.item.kind == "string":
        return True, True
    return False, False


def infer_references(
    kind: str,
    api: ModelSet,
    resource_class: str,
    cfg: KindConfig,
    index: TargetIndex,
    top_facts: dict[str, tuple[Fact, ...]],
    drop: frozenset[str],
    domain: str = "",
    kcc: KindEvidence | None = None,
    identity_names: frozenset[str] = frozenset(),
) -> Inference:
    """Classify every string field reachable from spec. ``domain`` is the
    referencing Kind's service: where evidence names several Kinds and exactly
    one is of the same service, that one is meant (AIP-122: a relative resource
    name is relative to its own service; other services' names are full names).
    ``kcc``: Config Connector's evidence of this Kind (it carries KCC's name):
    its reference fields decide below a kind-config entry and name the KRM field
    of any reference found where KCC has one; not for a top-level field that is
    also an identity field (``identity_names``: StorageHMACKey's ``projectId``)."""
    kcc_refs = kcc_ref_index(kcc)
    aliased = {a.api_field for a in cfg.aliases}
    by_name = {t.kind: t for t in index.targets}
    # A Kind over several location scopes (kind file ``locations:``) names the
    # resources of its variant Kinds too: ComputeDisk accepts a regional disk. Only
    # description paths count: a name alone (``diskName``, a legacy-only
    # ``healthChecks``) is too weak to pick even one Kind's scopes.
    scope_owner = {v: t.kind for t in index.targets for _, v in t.variants}
    decisions: dict[tuple[str, str], Decision | None] = {}
    refs: list[ReferenceIR] = []
    unclassified: list[str] = []
    bad_targets: list[str] = []
    used_config: set[str] = set()

    def decide(cls: str, f: FieldIR, api_path: str, krm_path: str, many: bool) -> Decision | None:
        conf = cfg.references.get(api_path)
        if conf is not None:
            return by_config(f, api_path, many, conf)
        # an alias in the kind config already gives Config Connector's name beside ours;
        # an identity field keeps the identity's name
        siblings = frozenset(x.name for x in api.object(cls).fields)
        mine = api_path in aliased or (not krm_path and f.name in identity_names)
        # A class has one KRM shape wherever it is reached (DLP's BigQueryTable at three
        # paths): Config Connector's reference at any of those paths names the field,
        # when all that have one agree.
        found = {} if mine else {kp: kcc_ref_name(kcc_refs, kp, f.name, many, siblings) for kp in reached.get(cls, (krm_path,))}
        hits = {h for h in found.values() if h is not None}
        theirs = hits.pop() if len(hits) == 1 else None
        if theirs is not None:
            krm_path = next(kp for kp, h in found.items() if h == theirs)
        d = by_evidence(f, api_path, krm_path, many, theirs)
        if d is not None and theirs is not None and d.krm_name != theirs[0]:
            # found by another signal where Config Connector has a reference: its KRM name
            d = replace(d, krm_name=theirs[0], source=f"{d.source}; named as Config Connector's {_kcc_path(krm_path, theirs[0])}")
        return d

    def by_config(f: FieldIR, api_path: str, many: bool, conf: ReferenceConfig) -> Decision | None:
        used_config.add(api_path)
        if conf.one_of:
            missing = [k for k in conf.one_of.values() if k not in by_name]
            for k in missing:
                bad_targets.append(f"{api_path}: oneOf target {k!r} is neither a generated Kind nor in specs/external-kinds.yaml{did_you_mean(k, by_name)}")
            if missing:
                return None
            choices = tuple((key, by_name[k]) for key, k in sorted(conf.one_of.items()))
            if conf.flatten and many:
                bad_targets.append(f"{api_path}: flatten needs a single value, not a list")
                return None
            return Decision(
                choices[0][1],
                conf.field or f.name,
                many,
                f"config: {conf.reason}",
                None,
                False,
                choices,
                tuple(sorted(conf.literals)),
                tuple(sorted(conf.api_formats.items())),
                conf.flatten,
            )
        if conf.target == "none":
            return None
        assert conf.target is not None
        tgt = by_name.get(conf.target)
        if tgt is None:
            bad_targets.append(f"{api_path}: target {conf.target!r} is neither a generated Kind nor in specs/external-kinds.yaml{did_you_mean(conf.target, by_name)}")
            return None
        others = [by_name[k] for k in conf.kinds if k in by_name]
        for k in conf.kinds:
            if k not in by_name:
                bad_targets.append(f"{api_path}: kinds entry {k!r} is neither a generated Kind nor in specs/external-kinds.yaml{did_you_mean(k, by_name)}")
        if conf.kinds and many:
            bad_targets.append(f"{api_path}: kinds needs a single value, not a list")
            return None
        return Decision(
            tgt,
            conf.field or ref_field_name(f.name, _id(tgt), many),
            many,
            f"config: {conf.reason}",
            conf.api_format,
            conf.order_matters,
            value_of=conf.value_of,
            kinds=tuple(others),
        )

    def by_evidence(f: FieldIR, api_path: str, krm_path: str, many: bool, theirs: tuple[str, str] | None) -> Decision | None:
        paths = description_paths(f.description)
        hits = sorted({t.kind for p in paths for t in index.by_path(p)})
        # Config Connector's reference at this KRM path, to a Kind we can reference:
        # its target, unless the description's paths name only other Kinds.
        if theirs is not None and theirs[1] in by_name and (not hits or theirs[1] in hits or theirs[1] in {scope_owner.get(h, h) for h in hits}):
            tgt = by_name[theirs[1]]
            # a bare ID (tableId, datasetId): the API takes the last value of the name
            api_format = "{" + _id(tgt) + "}" if f.name.endswith(("Id", "Ids")) else None
            return Decision(tgt, theirs[0], many, f"Config Connector's {_kcc_path(krm_path, theirs[0])}", api_format, False)
        # A project, folder or organization path in a description is evidence of
        # a reference only where the field is named for it (includedProjects,
        # gcpProject): filters, CEL conditions and queries quote such names too.
        unnamed = [h for h in hits if by_name[h].domain == HIERARCHY_DOMAIN and not _names_hierarchy(f.name, by_name[h])]
        if unnamed and len(unnamed) == len(hits):
            unclassified.append(f"{api_path}: its description names a {'/'.join(unnamed)} path, but the field is not named for one")
            return None
        if len(hits) == 1:
            tgt = by_name[hits[0]]
            shown = next(p for p in paths if index.by_path(p))
            return Decision(tgt, ref_field_name(f.name, _id(tgt), many), many, f"description path {shown!r}", None, False)
        same = [h for h in hits if domain and by_name[h].domain == domain]
        if len(hits) > 1 and len(same) == 1:
            tgt = by_name[same[0]]
            shown = next(p for p in paths if tgt in index.by_path(p))
            return Decision(tgt, ref_field_name(f.name, _id(tgt), many), many, f"description path {shown!r}, same service (AIP-122)", None, False)
        # The resource hierarchy (organizations/, folders/, projects/ named by another
        # service) is Resource Manager's: Access Context Manager's `organizations/{o}`
        # is an Organization, never Apigee's organization, which only Apigee names.
        hierarchy = [h for h in hits if by_name[h].domain == HIERARCHY_DOMAIN and _names_hierarchy(f.name, by_name[h])]
        if len(hits) > 1 and not same and len(hierarchy) == 1:
            tgt = by_name[hierarchy[0]]
            shown = next(p for p in paths if tgt in index.by_path(p))
            return Decision(tgt, ref_field_name(f.name, _id(tgt), many), many, f"description path {shown!r}, the resource hierarchy's", None, False)
        owners = {scope_owner.get(h, h) for h in hits}
        if len(hits) > 1 and len(owners) == 1:
            tgt = by_name[owners.pop()]
            return Decision(tgt, ref_field_name(f.name, _id(tgt), many), many, f"description paths match {tgt.kind}'s location scopes ({', '.join(hits)})", None, False)
        if len(hits) > 1:
            unclassified.append(f"{api_path}: description paths match several Kinds ({', '.join(hits)})")
            return None
        # Name signal: the field is named after a Kind's ID (network, bucket).
        # A bare *Id field is not used: IDs of foreign systems look the same.
        singular = collection_param(base_name(f.name)) if many else base_name(f.name)
        # Only our own Kinds: an external Kind's ID name (namespace, endpoint)
        # is too generic to trust without a path in the description.
        named = [] if f.name.endswith(("Id", "Ids")) else [t for t in index.by_id(singular) if t.ours]
        # A name alone is evidence only within the field's own service (AIP-122:
        # a relative name is relative to its own service). Across services it
        # is a guess: compute's `region` is not Merchant API's region, monitoring's
        # `validity.message` is no Chat message. Those take a description path
        # or a kind-config entry.
        if domain:
            named = [t for t in named if t.domain == domain]
        if paths:
            types = sorted({a for p in paths for a in index.asset_types_for(p)})
            why = f"asset type(s) {', '.join(types)} not declared in specs/external-kinds.yaml" if types else "no Kind or asset type has that shape"
            unclassified.append(f"{api_path}: description names {paths[0]!r}: {why}")
            return None
        if len(named) == 1:
            tgt = named[0]
            return Decision(tgt, ref_field_name(f.name, _id(tgt), many), many, f"field name {f.name!r} is {tgt.kind}'s ID", None, False)
        if f.name.endswith(_SUFFIXES[:8]) and _REF_WORDS.search(f.description or ""):
            unclassified.append(f"{api_path}: named like a reference and described as one ({_REF_WORDS.search(f.description or '').group(0)!r})")  # type: ignore[union-attr]
        return None

    reached: dict[str, list[str]] = {}  # class -> the KRM paths of the objects it is reached as

    def reach(cls: str, path: str, krm_path: str, stack: tuple[str, ...]) -> None:
        """As walk goes, noting where each class is reached."""
        if cls in stack:
            return
        reached.setdefault(cls, []).append(krm_path)
        for f in api.object(cls).fields:
            api_path = f"{path}.{f.name}" if path else f.name
            facts = top_facts.get(api_path, f.facts) if not path else f.facts
            if B.OUTPUT_ONLY in {x.behaviour for x in facts} or (not path and f.name in drop):
                continue
            step, ref = object_step(f)
            if ref is not None:
                reach(ref, f"{path}.{step}" if path else step, f"{krm_path}.{step}" if krm_path else step, (*stack, cls))

    def walk(cls: str, path: str, krm_path: str, stack: tuple[str, ...]) -> None:
        if cls in stack:
            return
        for f in api.object(cls).fields:
            api_path = f"{path}.{f.name}" if path else f.name
            facts = top_facts.get(api_path, f.facts) if not path else f.facts
            if B.OUTPUT_ONLY in {x.behaviour for x in facts} or (not path and f.name in drop):
                continue
            is_str, many = _string_leaf(f.type)
            conf = cfg.references.get(api_path)
            if f.type.kind == "enum" and conf is not None and conf.value_of is not None:
                is_str = True  # a reference taking a field of its object may stand for an enum
            if is_str:
                key = (cls, f.name)
                if key not in decisions:
                    decisions[key] = decide(cls, f, api_path, krm_path, many)
                elif api_path in cfg.references:
                    used_config.add(api_path)
                d = decisions[key]
                if d is not None and d.choices:
                    step = "[]" if many else ""
                    kp = f"{krm_path}.{d.krm_name}{step}" if krm_path else f"{d.krm_name}{step}"
                    if d.flatten:
                        kp = krm_path  # the keys sit beside the field they replace
                    for choice, tgt in d.choices:
                        refs.append(
                            ReferenceIR(
                                api_path=api_path + step,
                                krm_path=f"{kp}.{choice}" if kp else choice,
                                target=tgt.kind,
                                many=False,
                                external_only=not (tgt.ours or tgt.by_name),
                                source=d.source,
                                union=True,
                                literals=d.literals,
                                api_format=dict(d.choice_formats).get(choice),
                            )
                        )
                elif d is not None:
                    kp = f"{krm_path}.{d.krm_name}" if krm_path else d.krm_name
                    refs.append(
                        ReferenceIR(
                            api_path=api_path,
                            krm_path=kp,
                            target=d.target.kind,
                            many=d.many if d.many == many else many,
                            external_only=not (d.target.ours or d.target.by_name),
                            source=d.source,
                            order_matters=d.order_matters,
                            api_format=d.api_format,
                            value_of=d.value_of,
                            kinds=tuple(k.kind for k in d.kinds),
                        )
                    )
                continue
            step, ref = object_step(f)
            if ref is not None:
                walk(ref, f"{path}.{step}" if path else step, f"{krm_path}.{step}" if krm_path else step, (*stack, cls))

    if kcc_refs:
        reach(resource_class, "", "", ())
    walk(resource_class, "", "", ())
    unused = sorted(set(cfg.references) - used_config)
    return Inference(decisions, refs, unclassified, unused, bad_targets)


def _names_hierarchy(field: str, t: TargetKind) -> bool:
    """A field named for a project, folder or organization (``includedProjects``,
    ``gcpProject``), or a ``parent``: where a hierarchy path in its description
    is evidence of a reference to it."""
    name = field.lower()
    nouns = {_id(t).lower(), *_SHORT.get(_id(t), ())}
    return any(n in name for n in nouns) or name.removesuffix("s") == "parent"


# Short forms fields use for a hierarchy Kind (Access Context Manager's `orgs`).
_SHORT = {"organization": ("org",)}


def _kcc_path(krm_path: str, name: str) -> str:
    return f"spec.{krm_path}.{name}" if krm_path else f"spec.{name}"


def _id(t: TargetKind) -> str:
    return t.template.rsplit("/", 1)[-1].strip("{}")
