"""Resource identity: one URL template per Kind, and the rules to read it.

``status.externalRef`` and ``<kind>Ref.external`` use the asset-inventory
name without the service domain (``projects/p/topics/t``). ``normalize``
also accepts the ``//pubsub.googleapis.com/...`` form, REST URLs and compute
self-links, and always returns the canonical form, so normalizing twice is a
no-op. Generated ``<kind>_reference`` modules only declare data; every rule
lives here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

_PH = re.compile(r"\{([A-Za-z][A-Za-z0-9]*)\}")
# One path segment of a resource name: no slash, whitespace, query or fragment.
_SEGMENT = r"[^/\s?#{}]+"
# API version segments in REST paths: v1, v1beta2, beta, alpha...
_VERSION = re.compile(r"^(?:v\d+(?:(?:alpha|beta|p\d+beta)\d*)?|alpha|beta)$")
_VERSION_RX = r"(?:v\d+(?:(?:alpha|beta|p\d+beta)\d*)?|alpha|beta)"
# Every Google API answers on www.googleapis.com too (compute and storage self-links use it).
LEGACY_HOST = "www.googleapis.com"


class IdentityError(ValueError):
    """A value that is not a valid identity for a Kind; names Kind, value and format."""

    def __init__(self, kind: str, value: object, expected: str, why: str = "") -> None:
        self.kind = kind
        self.value = value
        self.expected = expected
        self.why = why
        detail = f" ({why})" if why else ""
        super().__init__(f"{kind}: {value!r} is not a valid {kind} identity{detail}; expected {expected}")


def _compile(template: str) -> tuple[re.Pattern[str], tuple[str, ...]]:
    names: list[str] = []
    out: list[str] = []
    pos = 0
    for m in _PH.finditer(template):
        out.append(re.escape(template[pos : m.start()]))
        out.append(f"(?P<{m.group(1)}>{_SEGMENT})")
        names.append(m.group(1))
        pos = m.end()
    out.append(re.escape(template[pos:]))
    return re.compile("^" + "".join(out) + "$"), tuple(names)


def template_pattern(template: str) -> re.Pattern[str]:
    """A whole-string regex of a name template, one named group per placeholder."""
    return _compile(template)[0]


def _prefix_rx(prefix: str) -> str:
    """A REST path prefix with its version segment generalised (compute/v1/ ~ compute/beta/)."""
    parts = [p for p in prefix.split("/") if p]
    return "".join((_VERSION_RX if _VERSION.match(p) else re.escape(p)) + "/" for p in parts)


def rehome(template: str, collection: str, param: str) -> str:
    """``template`` under another top-level parent: ``projects/{project}/logs`` ->
    ``folders/{folder}/logs``; a template not under the project is unchanged."""
    head = "projects/{project}"
    if template == head or template.startswith(head + "/"):
        return f"{collection}/{{{param}}}{template[len(head):]}"
    return template


@dataclass(frozen=True)
class IdentityTemplate:
    """How one Kind's resources are named; built from generated data only."""

    kind: str
    template: str  # canonical: projects/{project}/topics/{topic}
    domain: str  # asset-inventory domain: pubsub.googleapis.com
    rest_host: str = ""  # API host: pubsub.googleapis.com
    rest_prefix: str = ""  # path before the resource path in REST URLs: v1/, compute/v1/
    rest_template: str = ""  # resource path in REST URLs, when it differs (storage: b/{bucket})
    extra_forms: tuple[str, ...] = ()  # other accepted spellings (gs://{bucket}, a bare project ID)
    # (template param, spec field supplying it, Kind that field references or ""):
    # lets the runtime compute an object's identity from its spec.
    spec_fields: tuple[tuple[str, str, str], ...] = ()
    # (param, Config Connector's spec field beside the ref covering it, Kind or ""): an
    # SLO's projectRef beside serviceRef; it must agree with the ref, and completes a
    # ref given as a bare ID (serviceRef: {external: my-service})
    beside: tuple[tuple[str, str, str], ...] = ()
    id_generation: str = "user"  # "service": the ID exists only after create
    # Kinds serving this Kind's other location scopes (kccgen.contract.Locations):
    # an object of this Kind may be named by theirs (a global ComputeAddress).
    variants: tuple[str, ...] = ()
    # The same resource under other top-level parents than the project, as
    # (collection, placeholder, spec field or "" when a parent ref covers the
    # project, Kind): a LoggingLogBucket may be folders/{folder}/locations/...
    parents: tuple[tuple[str, str, str, str], ...] = ()
    # (spec field, value when it is unset): a location that can only be global
    defaults: tuple[tuple[str, str], ...] = ()
    _compiled: dict[str, tuple[re.Pattern[str], tuple[str, ...]]] = field(default_factory=dict, compare=False, repr=False)

    def _rx(self, template: str) -> tuple[re.Pattern[str], tuple[str, ...]]:
        if template not in self._compiled:
            self._compiled[template] = _compile(template)
        return self._compiled[template]

    @property
    def params(self) -> tuple[str, ...]:
        return self._rx(self.template)[1]

    def at_parent(self, collection: str) -> IdentityTemplate:
        """This identity under another top-level parent: ``projects/{project}/`` becomes
        ``folders/{folder}/`` in every template, and the project's spec field the
        parent's (a covering parent ref, like a view's bucketRef, stays)."""
        key = f"{self.kind}@{collection}"
        found = _AT_PARENT.get(key)
        if found is not None:
            return found
        _c, param, fld, kind = next(p for p in self.parents if p[0] == collection)
        fields = tuple(
            (param, fld or f, kind if fld else t) if p == "project" else (p, f, t)
            for p, f, t in self.spec_fields
        )
        found = replace(
            self,
            template=rehome(self.template, collection, param),
            rest_template=rehome(self.rest_template, collection, param),
            extra_forms=(),
            spec_fields=fields,
            variants=(),
            parents=(),
            _compiled={},
        )
        _AT_PARENT[key] = found
        return found

    def spec_value(self, spec: Mapping[str, Any], field: str) -> Any:
        """A plain identity field of ``spec``, or its default when unset. A parent
        given by its name (Config Connector's metricsScope:
        ``locations/global/metricsScopes/S``) gives its ID: the value's last
        segment, after the collection the template names it in."""
        value = spec.get(field)
        if value is None:
            return dict(self.defaults).get(field)
        param = next((p for p, f, target in self.spec_fields if f == field and not target), None)
        if isinstance(value, str) and "/" in value.strip("/") and param is not None:
            segs = self.template.split("/")
            at = segs.index("{" + param + "}") if "{" + param + "}" in segs else -1
            parts = value.strip("/").split("/")
            if at > 0 and not segs[at - 1].startswith("{") and parts[-2] == segs[at - 1]:
                return parts[-1]
        return value

    def parent_forms(self) -> tuple[IdentityTemplate, ...]:
        return tuple(self.at_parent(p[0]) for p in self.parents)

    def parent_of(self, values: Mapping[str, object]) -> tuple[str, str] | None:
        """(collection, placeholder) of the other parent ``values`` name, if any."""
        return next(((p[0], p[1]) for p in self.parents if values.get(p[1])), None)

    def form_for(self, values: Mapping[str, object]) -> IdentityTemplate:
        """The form whose parent ``values`` name: a folder's when they hold ``folder``."""
        other = self.parent_of(values)
        return self.at_parent(other[0]) if other else self

    def form_for_spec(self, spec: Mapping[str, Any]) -> IdentityTemplate:
        """The form the spec's parent field picks; ValueError naming the fields when
        more than one is set (the CRD refuses that too)."""
        own = [p for p in self.parents if p[2]]
        if not own:
            return self
        project = next((f for p, f, _t in self.spec_fields if p == "project"), "projectRef")
        chosen = [f for f in (project, *(p[2] for p in own)) if spec.get(f) is not None]
        if len(chosen) > 1:
            raise ValueError(f"spec.{' and spec.'.join(chosen)} are set: a {self.kind} has one parent; set at most one of {', '.join([project, *(p[2] for p in own)])}")
        for p in own:
            if chosen == [p[2]]:
                return self.at_parent(p[0])
        return self

    def expected(self) -> str:
        forms = [self.template, f"//{self.domain}/{self.template}"]
        if self.rest_host:
            forms.append(f"https://{self.rest_host}/{self.rest_prefix}{self.rest_template or self.template}")
        forms.extend(self.extra_forms)
        return " or ".join(repr(f) for f in forms)

    def format(self, **values: str) -> str:
        """Build the canonical name; every placeholder needs one valid segment."""
        missing = [p for p in self.params if not values.get(p)]
        if missing:
            raise IdentityError(self.kind, values, self.expected(), f"missing {', '.join(missing)}")
        unknown = sorted(set(values) - set(self.params))
        if unknown:
            raise IdentityError(self.kind, values, self.expected(), f"unknown {', '.join(unknown)}")
        seg = re.compile(f"^{_SEGMENT}$")
        bad = [p for p in self.params if not seg.match(str(values[p]))]
        if bad:
            raise IdentityError(self.kind, values, self.expected(), f"{bad[0]}={values[bad[0]]!r} is not a single path segment")
        return _PH.sub(lambda m: str(values[m.group(1)]), self.template)

    def parse(self, value: str) -> dict[str, str]:
        """Parameters of a canonical name (only the canonical form is accepted)."""
        if not isinstance(value, str):
            raise IdentityError(self.kind, value, self.expected(), "not a string")
        rx, names = self._rx(self.template)
        m = rx.match(value)
        if not m:
            for v in self.variants:
                try:
                    return identity_for(v).parse(value)
                except IdentityError:
                    continue
            for form in self.parent_forms():
                try:
                    return form.parse(value)
                except IdentityError:
                    continue
            raise IdentityError(self.kind, value, self._all_expected())
        return {n: m.group(n) for n in names}

    def _match_any(self, path: str, templates: tuple[str, ...]) -> dict[str, str] | None:
        for t in templates:
            m = self._rx(t)[0].match(path)
            if m:
                return m.groupdict()
        return None

    def normalize(self, value: str) -> str:
        """Canonical externalRef for any accepted spelling; idempotent. A name of a
        variant Kind (another location scope of this one) is its canonical form."""
        try:
            return self._normalize(value)
        except IdentityError as own:
            others = [*(identity_for(v) for v in self.variants), *self.parent_forms()]
            for other in others:
                try:
                    return other.normalize(value)
                except IdentityError:
                    continue
            if others:
                raise IdentityError(self.kind, value, self._all_expected(), own.why) from None
            raise

    def _all_expected(self) -> str:
        return " or ".join([self.expected(), *(identity_for(v).expected() for v in self.variants), *(f.expected() for f in self.parent_forms())])

    def _normalize(self, value: str) -> str:
        if not isinstance(value, str):
            raise IdentityError(self.kind, value, self.expected(), f"not a string but {type(value).__name__}")
        if not value.strip():
            raise IdentityError(self.kind, value, self.expected(), "empty")
        v = value.strip()
        if self.domain and v.startswith(f"{self.domain}/"):
            v = "//" + v  # the full name without its leading // (Config Connector's fixtures write it)
        got: dict[str, str] | None
        if v.startswith("//"):
            host, _, path = v[2:].partition("/")
            if host != self.domain:
                raise IdentityError(self.kind, value, self.expected(), f"service {host!r} is not {self.domain!r}")
            got = self._match_any(path, (self.template, *self.extra_forms))
        elif v.startswith(("https://", "http://")):
            got = self._from_url(value, v)
        else:
            got = self._match_any(v, (self.template, *self.extra_forms))
        if got is None:
            raise IdentityError(self.kind, value, self.expected())
        # Extra forms may carry context the canonical name lacks (the project
        # of projects/{project}/buckets/{bucket}); only the template's params count.
        try:
            return self.format(**{k: v for k, v in got.items() if k in self.params})
        except IdentityError as e:
            raise IdentityError(self.kind, value, self.expected(), e.args[0].split("(", 1)[-1].split(")", 1)[0]) from None

    def _from_url(self, value: str, v: str) -> dict[str, str] | None:
        u = urlsplit(v)
        hosts = {h for h in (self.rest_host, self.domain, LEGACY_HOST) if h}
        if u.netloc not in hosts:
            raise IdentityError(self.kind, value, self.expected(), f"host {u.netloc!r} does not serve {self.kind}")
        path = u.path.lstrip("/")
        prefix = re.match(_prefix_rx(self.rest_prefix), path) if self.rest_prefix else None
        if self.rest_prefix and prefix is None:
            return None
        rest = path[prefix.end() :] if prefix else path
        # A declared REST path is the only URL shape (storage: b/{bucket});
        # the bare template must not match after the prefix (storage/v1/my-bucket).
        got = self._match_any(rest, (self.rest_template or self.template,))
        if got is not None and self.rest_template and set(got) != set(self.params) and len(got) == len(self.params):
            # The REST path spells the same placeholders its own way (Dataflow's
            # {projectId}/{jobId} for {project}/{job}): the order is the meaning.
            got = dict(zip(self.params, got.values(), strict=True))
        if got is not None and set(self.params) - set(got) and (full := self._match_any(rest, (self.template,))) is not None:
            # The REST path fixes a segment the name keeps variable (connectors'
            # locations/global): the canonical template reads it.
            got = full
        return got


# --- registry -------------------------------------------------------------

_IDENTITIES: dict[str, IdentityTemplate] = {}
_AT_PARENT: dict[str, IdentityTemplate] = {}  # Kind@collection -> that form


def register_identity(identity: IdentityTemplate) -> None:
    _IDENTITIES[identity.kind] = identity
    _AT_PARENT.clear()


def identity_for(kind: str) -> IdentityTemplate:
    """The identity of a Kind, loading its reference module on first use (every
    reference module only for a Kind that is not generated: the external ones)."""
    if kind not in _IDENTITIES:
        from kccgen.runtime.registry import load_reference_module, load_reference_modules

        if not load_reference_module(kind):
            load_reference_modules()
    try:
        return _IDENTITIES[kind]
    except KeyError:
        from kccgen.runtime.registry import unknown_kind

        raise KeyError(unknown_kind(kind, sorted(_IDENTITIES))) from None


def loaded_identity(kind: str) -> IdentityTemplate | None:
    """The identity if its module is loaded already (no import, no error)."""
    return _IDENTITIES.get(kind)


def known_kinds() -> tuple[str, ...]:
    from kccgen.runtime.registry import load_reference_modules

    load_reference_modules()
    return tuple(sorted(_IDENTITIES))
