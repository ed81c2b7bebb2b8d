"""Numeric ranges read from a field's Discovery description.

The documents state many bounds only in prose ("The minimum custom deadline
you can specify is 10 seconds. The maximum ... is 600 seconds", "Cannot be
more than 31 days or less than 10 minutes", "an integer between `0` and
`65535`"). mockgcp refuses a value outside such a bound as the service does,
so this module turns the few sentence shapes that state a bound plainly into
a :class:`Range`; anything it cannot read with confidence gives no range
rather than a guessed one. ``limits.yaml`` lists the ranges a pattern reads
wrongly (``ranges.skip``, each with its reason) and the ones no pattern reads
(``ranges.add``, each with the description it comes from).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

#: Seconds per time unit (durations) and bytes per size unit.
_SECONDS = {"ms": 0.001, "millisecond": 0.001, "s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60, "h": 3600, "hr": 3600, "hour": 3600, "d": 86400, "day": 86400, "week": 604800, "year": 31536000}
_BYTES = {"byte": 1, "kb": 1000, "kib": 1024, "mb": 1000**2, "mib": 1024**2, "gb": 1000**3, "gib": 1024**3}

_N = r"((?>[-+]?\d+(?:\.\d+)?))(?!\^)"  # 2^31 is not 2
# A unit after a number: a word ("10 seconds") or a letter glued to it ("600s", "1h").
_U = r"(?:\s?(milliseconds?|ms|seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|years?|bytes?|KiB|KB|MiB|MB|GiB|GB)\b|(ms|s|m|h|d)\b)?"
# A parenthesis after a bound restates it: "3600s (1h)".
_NU = _N + _U + r"(?:\s*\([^)]{0,30}\))?"

#: (pattern, which groups hold (low, high), whether each end is exclusive). Each
#: pattern states both ends, or one end plainly ("must be greater than 0").
_BOTH = [
    re.compile(rf"\bbetween\s+{_NU}\s+(?:and|to)\s+{_NU}", re.I),
    re.compile(rf"\bmust be from\s+{_NU}\s+(?:to|through)\s+{_NU}", re.I),
    re.compile(rf"\b(?:goes|range|ranges|can range|is)\s+from\s+{_NU}\s+(?:to|through)\s+{_NU}", re.I),
    re.compile(rf"\bat least\s+{_NU}\s+and at most\s+{_NU}", re.I),
    re.compile(rf"\bgreater than or equal to\s+{_NU}\s+and less than or equal to\s+{_NU}", re.I),
    re.compile(rf"\bmin(?:imum)?\s+{_NU},\s+max(?:imum)?\s+{_NU}", re.I),
    re.compile(rf"\b(?:valid range is|in the range)\s+{_N}\s*-\s*{_N}\b", re.I),
]
_BRACKET = re.compile(rf"\b(?:range|in|range is|range of)\s*([\[(])\s*{_N}\s*,\s*{_N}\s*([\])])", re.I)
_REVERSED = re.compile(rf"\bcannot be more than\s+{_NU}\s+or less than\s+{_NU}", re.I)
_MIN_IS = re.compile(rf"\bThe minimum\b[^.]{{0,60}}?\bis\s+{_NU}", re.I)
_MAX_IS = re.compile(rf"\bThe maximum\b[^.]{{0,60}}?\bis\s+{_NU}", re.I)
_GREATER = re.compile(rf"\bmust be greater than\s+(?>{_N})(?!\s*(?:or|and)\b)", re.I)
_POSITIVE = re.compile(r"\bmust be (?:a )?positive\b(?! or\b)", re.I)
_AT_LEAST = re.compile(rf"\bmust be at least\s+(?>{_NU})(?!\s+and\b)", re.I)
#: A description that qualifies its bound: it is not a plain limit.
_HEDGED = re.compile(r"\b(typically|hint|approximately|currently ignored)\b", re.I)


@dataclass(frozen=True)
class Range:
    """Inclusive bounds unless ``*_open``; ``None``: no bound on that side."""

    low: float | None
    high: float | None
    low_open: bool = False
    high_open: bool = False
    source: str = ""  # the sentence it was read from, or limits.yaml's entry

    def admits(self, v: float) -> bool:
        if self.low is not None and (v < self.low or (self.low_open and v == self.low)):
            return False
        return not (self.high is not None and (v > self.high or (self.high_open and v == self.high)))

    def text(self) -> str:
        lo = "" if self.low is None else f"{'>' if self.low_open else '>='} {_fmt(self.low)}"
        hi = "" if self.high is None else f"{'<' if self.high_open else '<='} {_fmt(self.high)}"
        return " and ".join(x for x in (lo, hi) if x)


def _fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else str(v)


def _unit(g1: str | None, g2: str | None) -> str | None:
    u = (g1 or g2 or "").lower()
    if not u:
        return None
    if u in _BYTES or u.rstrip("s") in _BYTES:
        return u if u in _BYTES else u.rstrip("s")
    base = u if u in _SECONDS else u.rstrip("s")
    return base if base in _SECONDS else None


def _value(num: str, unit: str | None, kind: str, field: str) -> float | None:
    """The bound in the field's own unit: seconds for a duration; for a number,
    the number as written unless a unit says otherwise (a size in bytes, a
    time in a unit the field's name does not carry: then no bound)."""
    v = float(num)
    if kind == "duration":
        if unit in _BYTES:
            return None
        return v * _SECONDS[unit or "s"]
    if unit is None:
        return v
    if unit in _BYTES:
        return v * _BYTES[unit] if "bytes" in field.lower() else None
    own = next((u for suffix, u in _NAME_UNITS if field.endswith(suffix)), None)
    if own is None:
        return v
    return v * _SECONDS[unit] / _SECONDS[own]


#: A numeric field's unit, by the end of its name (ackDeadlineSeconds, idleTimeoutSec).
_NAME_UNITS = (("Seconds", "s"), ("Sec", "s"), ("Secs", "s"), ("Minutes", "minute"), ("Hours", "hour"), ("Days", "day"), ("Millis", "ms"), ("Ms", "ms"))


def _normalize(desc: str) -> str:
    text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", desc.replace("`", ""))  # 2,147,483,647
    return re.sub(r"\s+", " ", text)


def derive(description: str | None, kind: str, field: str) -> Range | None:
    """The range a description states for a numeric field (``kind``: "number"
    or "duration"), or None. Several statements must agree on each side."""
    if not description or re.search(r"\bOutput only\b|\[Output Only\]", description, re.I):
        return None
    text = _normalize(description)
    if _HEDGED.search(text):
        return None
    lows: list[tuple[float, bool, str]] = []
    highs: list[tuple[float, bool, str]] = []

    def add(side: list[tuple[float, bool, str]], num: str, u1: str | None, u2: str | None, open_: bool, m: re.Match[str]) -> bool:
        v = _value(num, _unit(u1, u2), kind, field)
        if v is None or math.isnan(v):
            return False
        side.append((v, open_, m.group(0)))
        return True

    for rx in _BOTH:
        for m in rx.finditer(text):
            g = m.groups()
            if len(g) == 2:  # "valid range is 200-599": no units
                add(lows, g[0], None, None, False, m)
                add(highs, g[1], None, None, False, m)
            else:
                add(lows, g[0], g[1], g[2], False, m)
                add(highs, g[3], g[4], g[5], False, m)
    for m in _BRACKET.finditer(text):
        add(lows, m.group(2), None, None, m.group(1) == "(", m)
        add(highs, m.group(3), None, None, m.group(4) == ")", m)
    for m in _REVERSED.finditer(text):
        add(highs, m.group(1), m.group(2), m.group(3), False, m)
        add(lows, m.group(4), m.group(5), m.group(6), False, m)
    for m in _MIN_IS.finditer(text):
        add(lows, m.group(1), m.group(2), m.group(3), False, m)
    for m in _MAX_IS.finditer(text):
        add(highs, m.group(1), m.group(2), m.group(3), False, m)
    for m in _GREATER.finditer(text):
        add(lows, m.group(1), None, None, True, m)
    for m in _POSITIVE.finditer(text):
        lows.append((0.0, True, m.group(0)))
    for m in _AT_LEAST.finditer(text):
        add(lows, m.group(1), m.group(2), m.group(3), False, m)
    if not lows and not highs:
        return None
    if len({(v, o) for v, o, _ in lows}) > 1 or len({(v, o) for v, o, _ in highs}) > 1:
        return None  # statements that disagree: a conditional bound, not a plain one
    lo = lows[0] if lows else None
    hi = highs[0] if highs else None
    if lo is not None and hi is not None and lo[0] > hi[0]:
        return None
    said = "; ".join(dict.fromkeys(x[2] for x in (*lows, *highs)))
    return Range(lo[0] if lo else None, hi[0] if hi else None, bool(lo and lo[1]), bool(hi and hi[1]), f'description: "{said}"')


_DURATION = re.compile(r"^(-?\d+(?:\.\d+)?)s$")


def numeric(value: object, kind: str) -> float | None:
    """A JSON value as the number a range compares: an int or float, an int64
    sent as a string, or a duration such as "600s"; None when it is not one
    (the strict body check, not a range, answers that)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        if kind == "duration":
            m = _DURATION.match(value.strip())
            return float(m.group(1)) if m else None
        try:
            return float(value)
        except ValueError:
            return None
    return None
