"""The fidelity replay's data: one replayed exchange, one log's result, a mismatch's reason."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

# What every replay fills the recorder's fixed placeholders with.
FIXED = {
    "projectId": "example-project",
    "uniqueId": "abc123",
    "projectNumber": "123456789012",
}
UNEXPLAINED = "UNEXPLAINED"  # a mismatch no rule explains (the tests fail on one)
MOCK = "mock gap"
RECORDING = "recording artefact"


@dataclass(frozen=True)
class Reason:
    category: str
    detail: str = ""
    cause: str = MOCK  # MOCK: mockgcp behaves differently; RECORDING: the recording is not reproducible

    def text(self) -> str:
        return f"{self.category} ({self.detail})" if self.detail else self.category


@dataclass(frozen=True)
class Exchange:
    kind: str
    test: str
    index: int  # 1-based entry number in the log
    method: str
    path: str  # recorded URL path, placeholders kept, no host or query
    api: str  # doc key mockgcp routes the host to
    route: str  # Discovery method id mockgcp chose ("" when none)
    recorded_status: int
    mock_status: int
    recorded_fields: frozenset[str]
    mock_fields: frozenset[str]
    reasons: tuple[Reason, ...] = ()  # empty when the exchange matches

    @property
    def explanation(self) -> str:
        return "; ".join(r.text() for r in self.reasons)

    @property
    def unexplained(self) -> bool:
        return not self.reasons or any(r.category.startswith(UNEXPLAINED) for r in self.reasons)

    @property
    def status_ok(self) -> bool:
        return self.recorded_status == self.mock_status

    @property
    def fields_ok(self) -> bool:
        return self.recorded_fields == self.mock_fields


@dataclass
class LogResult:
    kind: str
    test: str
    exchanges: list[Exchange] = field(default_factory=list)
    grpc_methods: Counter[str] = field(default_factory=Counter)
    not_served: Counter[str] = field(default_factory=Counter)

    @property
    def grpc(self) -> int:
        return sum(self.grpc_methods.values())
