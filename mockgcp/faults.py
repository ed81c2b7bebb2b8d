"""Fault injection by API, method and path, with a seeded probability."""

from __future__ import annotations

import fnmatch
import json
import random
import re
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Fault:
    """One rule. ``status`` answers with an error; ``latency_ms`` delays;
    ``drop`` closes the connection without answering (the request is lost);
    ``drop_answer`` serves the request, then closes the connection without
    answering (the answer is lost: the client cannot tell whether it happened);
    ``lro_error`` lets the call succeed but makes its long-running operation
    end in that error."""

    api: str = "*"  # doc key glob: pubsub.v1, compute.*
    method: str = "*"  # Discovery method id glob: pubsub.projects.topics.get, *.get
    path: str = ".*"  # regex searched in the URL path
    status: int | None = None
    message: str | None = None
    latency_ms: int = 0
    drop: bool = False
    drop_answer: bool = False
    lro_error: str | None = None
    probability: float = 1.0
    times: int | None = None  # fire at most this many times
    fired: int = field(default=0, compare=False)

    def matches(self, api: str, method_id: str, path: str) -> bool:
        return (
            fnmatch.fnmatchcase(api, self.api)
            and fnmatch.fnmatchcase(method_id, self.method)
            and re.search(self.path, path) is not None
        )


#: Each rule key -> (the types it takes, what an error says it must be).
_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "api": ((str,), "a doc key glob such as pubsub.v1 or compute.*"),
    "method": ((str,), "a Discovery method id glob such as *.get"),
    "path": ((str,), "a regular expression searched in the URL path"),
    "status": ((int,), "an HTTP status code, 100 to 599"),
    "message": ((str,), "the error message to answer with"),
    "latency_ms": ((int,), "milliseconds to wait, >= 0"),
    "drop": ((bool,), "true or false"),
    "drop_answer": ((bool,), "true or false"),
    "lro_error": ((str,), "the error an operation ends in"),
    "probability": ((int, float), "a number from 0 to 1"),
    "times": ((int,), "how many times it fires, >= 0"),
}
_EFFECTS = ("status", "latency_ms", "drop", "drop_answer", "lro_error")


def _problem(key: str, value: Any) -> str | None:
    """What is wrong with one value of a rule, or None."""
    types, want = _TYPES[key]
    if value is None and key in ("status", "message", "lro_error", "times"):
        return None
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        return f"expected {want}, got {value!r}"
    v: Any = value  # of the type checked above
    if key == "path":
        try:
            re.compile(v)
        except re.error as e:
            return f"not a regular expression ({e})"
    bad = (
        (key == "status" and not 100 <= v <= 599)
        or (key in ("latency_ms", "times") and v < 0)
        or (key == "probability" and not 0 <= v <= 1)
    )
    return f"expected {want}, got {value!r}" if bad else None


def parse_rules(raw: Any, where: str) -> list[Fault]:
    """Fault rules from a parsed JSON or YAML list (the ``--faults`` file, the
    admin endpoint's body); a ValueError names ``where`` and the rule's key."""
    if not isinstance(raw, list):
        raise ValueError(f"{where}: expected a list of fault rules, such as [{{\"method\": \"*.get\", \"status\": 503}}]")
    out = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise ValueError(f"{where}#/{i}: a fault rule must be a mapping")
        unknown = set(item) - set(_TYPES)
        if unknown:
            raise ValueError(f"{where}#/{i}: unknown key(s) {sorted(unknown)}; allowed: {', '.join(_TYPES)}")
        for key, value in item.items():
            problem = _problem(key, value)
            if problem:
                raise ValueError(f"{where}#/{i}/{key}: {problem}")
        if not any(item.get(k) not in (None, False, 0) for k in _EFFECTS):
            raise ValueError(f"{where}#/{i}: the rule does nothing; give one of {', '.join(_EFFECTS)}")
        out.append(Fault(**item))
    return out


class FaultSet:
    """The rules in force. A running server changes them through its admin
    endpoint (mockgcp.admin), so every read and change holds the lock."""

    def __init__(self, seed: int = 0) -> None:
        self.rules: list[Fault] = []
        self.rng = random.Random(seed)
        self.lock = threading.Lock()

    def add(self, **kw: Any) -> Fault:
        f = Fault(**kw)
        with self.lock:
            self.rules.append(f)
        return f

    def extend(self, rules: list[Fault]) -> None:
        with self.lock:
            self.rules.extend(rules)

    def replace(self, rules: list[Fault]) -> None:
        with self.lock:
            self.rules[:] = rules

    def clear(self) -> None:
        with self.lock:
            self.rules.clear()

    def describe(self) -> list[dict[str, Any]]:
        """Every rule as JSON, with how many times it has fired."""
        with self.lock:
            return [asdict(f) for f in self.rules]

    def pick(self, api: str, method_id: str, path: str) -> Fault | None:
        """The first rule that fires for this call (counting it), if any."""
        with self.lock:
            for f in self.rules:
                if f.times is not None and f.fired >= f.times:
                    continue
                if not f.matches(api, method_id, path):
                    continue
                if self.rng.random() >= f.probability:
                    continue
                f.fired += 1
                return f
        return None

    @classmethod
    def from_file(cls, path: Path, seed: int = 0) -> FaultSet:
        """JSON or YAML: a list of rules (see Fault), e.g. [{"method": "*.get", "status": 503}]."""
        import yaml

        text = path.read_text(encoding="utf-8")
        try:
            raw = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
        except (json.JSONDecodeError, yaml.YAMLError) as e:
            raise ValueError(f"{path}: not valid {'JSON' if path.suffix == '.json' else 'YAML'}: {' '.join(str(e).split())}") from None
        fs = cls(seed)
        fs.extend(parse_rules(raw, str(path)))
        return fs
