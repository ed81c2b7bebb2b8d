"""Fault injection by API, method and path, with a seeded probability."""

from __future__ import annotations

import fnmatch
import json
import random
import re
import threading
from dataclasses import dataclass, field
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


class FaultSet:
    def __init__(self, seed: int = 0) -> None:
        self.rules: list[Fault] = []
        self.rng = random.Random(seed)
        self.lock = threading.Lock()

    def add(self, **kw: Any) -> Fault:
        f = Fault(**kw)
        with self.lock:
            self.rules.append(f)
        return f

    def clear(self) -> None:
        with self.lock:
            self.rules.clear()

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
        raw = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
        if not isinstance(raw, list):
            raise ValueError(f"{path}: expected a list of fault rules")
        fs = cls(seed)
        for i, item in enumerate(raw):
            if not isinstance(item, dict):
                raise ValueError(f"{path}#/{i}: a fault rule must be a mapping")
            unknown = set(item) - (set(Fault.__dataclass_fields__) - {"fired"})
            if unknown:
                raise ValueError(f"{path}#/{i}: unknown key(s) {sorted(unknown)}")
            fs.add(**item)
        return fs
