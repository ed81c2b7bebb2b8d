"""Discovery method paths: placeholders, REST templates, name patterns and URL matching.

``v1/projects/{projectsId}/topics/{topicsId}`` (a flat path) and
``^projects/[^/]+/topics/[^/]+$`` (a parameter pattern) both name the
resource ``projects/{project}/topics/{topic}``; the placeholder after a
collection segment is that collection in the singular, lowerCamel, as the
asset-inventory table writes it.
"""

from __future__ import annotations

import re

from kccgen.discovery.document import Method

_PH = re.compile(r"^\{\+?([A-Za-z][A-Za-z0-9_]*)\}$")
_PARAM = re.compile(r"\{(\+?)([A-Za-z][A-Za-z0-9_]*)\}")


def collection_param(collection: str) -> str:
    """Placeholder name for a collection segment: ``keyRings`` -> ``keyRing``."""
    c = collection
    for plural, single in (("ies", "y"), ("sses", "ss"), ("buses", "bus"), ("statuses", "status"), ("aliases", "alias"), ("ches", "ch"), ("shes", "sh"), ("xes", "x")):
        if c.lower().endswith(plural):  # messageBuses: the ending may start a camelCase word
            head = c[-len(plural)]
            return c[: -len(plural)] + (single[0].upper() if head.isupper() else single[0]) + single[1:]
    if c.endswith("s") and not c.endswith("ss"):
        return c[:-1]
    return c


def _is_ph(seg: str) -> bool:
    return bool(_PH.match(seg))


def rest_prefix(flat_path: str) -> str:
    """The leading literals that only version/route a path: ``v1/``, ``dns/v1/``."""
    segs = flat_path.split("/")
    dropped = []
    while len(segs) > 1 and not _is_ph(segs[0]) and not _is_ph(segs[1]):
        dropped.append(segs[0])
        segs = segs[1:]
    return "".join(d + "/" for d in dropped)


def rest_template(flat_path: str) -> str:
    """``v1/projects/{projectsId}/topics/{topicsId}`` -> ``projects/{project}/topics/{topic}``."""
    segs = flat_path.split("/")
    # Drop leading literals that only version/route the path (v1, dns/v1).
    while len(segs) > 1 and not _is_ph(segs[0]) and not _is_ph(segs[1]):
        segs = segs[1:]
    out = []
    for i, seg in enumerate(segs):
        m = _PH.match(seg)
        if not m:
            out.append(seg)
            continue
        name = m.group(1)
        prev = segs[i - 1] if i else ""
        if prev and name == f"{prev}Id":
            name = collection_param(prev)
        out.append("{" + name + "}")
    return "/".join(out)


def pattern_template(pattern: str) -> str | None:
    """``^projects/[^/]+/topics/[^/]+$`` -> ``projects/{project}/topics/{topic}``."""
    p = pattern.removeprefix("^").removesuffix("$").replace("[^/]+", "\0")
    segs = p.split("/")
    out = []
    for i, seg in enumerate(segs):
        if seg == "\0":
            # A wildcard names its collection by the literal before it; one that
            # starts the pattern or follows another wildcard (bigquery's
            # ^[^/]+$, monitoring's any-parent ^[^/]+/[^/]+$) has no name to take.
            prev = segs[i - 1] if i else "\0"
            if prev == "\0":
                return None
            out.append("{" + collection_param(prev) + "}")
        elif re.fullmatch(r"[A-Za-z0-9_-]+", seg):
            out.append(seg)
        else:
            return None
    return "/".join(out)


def shape(template: str) -> tuple[str, ...]:
    """Literal segments with placeholders blanked: compares structure, not names."""
    return tuple("{}" if seg.startswith("{") else seg for seg in template.split("/"))


def param_templates(m: Method) -> tuple[tuple[str, str], ...]:
    """How each path (and required query) parameter is spelled from resource-name placeholders.

    A reserved expansion with a pattern (``{+name}``, ``^projects/[^/]+/topics/[^/]+$``)
    is the whole name (``projects/{project}/topics/{topic}``); a simple one is itself.
    """
    out = []
    for pname, p in sorted(m.parameters.items()):
        if p.location == "path":
            t = pattern_template(p.pattern) if ("{+" + pname + "}") in m.path and p.pattern else None
            out.append((pname, t or "{" + pname + "}"))
        elif p.location == "query" and p.required:
            out.append((pname, "{" + pname + "}"))
    return tuple(out)


def url_regex(service_path: str, m: Method) -> tuple[re.Pattern[str], int]:
    """A regex over ``servicePath + path`` that captures each path parameter, and
    its specificity (literal characters), so the most specific route wins."""
    full = service_path + m.path
    out: list[str] = []
    literal = 0
    pos = 0
    for pm in _PARAM.finditer(full):
        lit = full[pos : pm.start()]
        out.append(re.escape(lit))
        literal += len(lit)
        reserved, name = pm.group(1), pm.group(2)
        param = m.parameters.get(name)
        if reserved and param is not None and param.pattern:
            pat = param.pattern.removeprefix("^").removesuffix("$")
            out.append(f"(?P<{name}>{pat})")
            literal += len(re.sub(r"\[\^/\]\+|[^A-Za-z/]", "", pat))
        elif reserved:
            out.append(f"(?P<{name}>.+)")
        else:
            out.append(f"(?P<{name}>[^/]+)")
        pos = pm.end()
    lit = full[pos:]
    out.append(re.escape(lit))
    literal += len(lit)
    return re.compile("^" + "".join(out) + "$"), literal
