"""The records a stage consumes and produces, as plain data (no Kafka client types)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

Headers = Sequence[tuple[str, bytes]]


@dataclass(frozen=True)
class Inbound:
    """One consumed Kafka record."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: float = 0.0
    headers: Headers = ()

    def header(self, name: str) -> bytes | None:
        return next((v for k, v in self.headers if k == name), None)


@dataclass(frozen=True)
class Outbound:
    """One record to produce (a derived event or a dead letter); `partition` None means "by key"."""

    topic: str
    key: bytes
    value: bytes
    headers: list[tuple[str, bytes]]
    partition: int | None = None


@dataclass(frozen=True)
class StateWrite:
    """A new table value, for the changelog partition of the records that changed it."""

    key: bytes
    partition: int
    value: bytes


@dataclass
class BatchResult:
    outputs: list[Outbound] = field(default_factory=list)
    writes: list[StateWrite] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
