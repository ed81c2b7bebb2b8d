"""What mockgcp holds: resources, IAM policies, operations, and the seeded
generator behind every ID it makes; dumped and loaded as plain JSON."""

from __future__ import annotations

import base64
import copy
import random
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Operation:
    """A long-running operation and what it resolves to."""

    api: str
    style: str  # google.longrunning | compute | dns
    key: str  # the operation's own name/path, the store key without "api|"
    body: dict[str, Any]
    polls_left: int
    result: dict[str, Any] | None = None  # the resource (or {}) once done
    error: str | None = None
    done_body: dict[str, Any] = field(default_factory=dict)  # {"schema": ...}: how to finish it


class State:
    """Stores keyed ``"<doc key>|<name>"`` (``pubsub.v1|projects/p/topics/t``)."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)
        self.resources: dict[str, dict[str, Any]] = {}
        self.meta: dict[str, dict[str, Any]] = {}  # internal facts: the project of a bucket...
        self.policies: dict[str, dict[str, Any]] = {}
        self.operations: dict[str, Operation] = {}

    @staticmethod
    def store_key(api: str, key: str) -> str:
        return f"{api}|{key}"

    def digits(self, n: int) -> str:
        """A random n-digit number (service-assigned IDs, compute IDs)."""
        return str(self.rng.randint(10 ** (n - 1), 10**n - 1))

    def token(self, n: int = 12) -> str:
        """A random URL-safe token of n bytes (etags, fingerprints, operation names)."""
        return base64.urlsafe_b64encode(self.rng.randbytes(n)).decode().rstrip("=")

    def find(self, api: str, key: str) -> dict[str, Any] | None:
        return self.resources.get(self.store_key(api, key))

    def dump(self) -> dict[str, Any]:
        return {
            "resources": copy.deepcopy(self.resources),
            "meta": copy.deepcopy(self.meta),
            "policies": copy.deepcopy(self.policies),
            "operations": {k: copy.deepcopy(asdict(o)) for k, o in self.operations.items()},
            # The ID generator's position: a restarted mockgcp (``--state``) goes
            # on from it and never hands out an ID it handed out before.
            "rng": [self.rng.getstate()[0], list(self.rng.getstate()[1]), self.rng.getstate()[2]],
        }

    def load(self, state: dict[str, Any]) -> None:
        self.resources = copy.deepcopy(state.get("resources", {}))
        self.meta = copy.deepcopy(state.get("meta", {}))
        self.policies = copy.deepcopy(state.get("policies", {}))
        self.operations = {
            k: Operation(
                v["api"], v["style"], v.get("key") or k.split("|", 1)[1], copy.deepcopy(v["body"]), v["polls_left"],
                copy.deepcopy(v.get("result")), v.get("error"), copy.deepcopy(v.get("done_body", {})),
            )
            for k, v in state.get("operations", {}).items()
        }
        if "rng" in state:
            version, internal, gauss = state["rng"]
            self.rng.setstate((version, tuple(internal), gauss))
