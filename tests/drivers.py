"""One driver interface over every runtime, so the golden cases run unchanged on each."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Protocol

from engram.recall.service import RecallRequest, RecallResult
from engram.core.config import DEFAULT_CONFIG
from engram.runtime.context import default_context
from engram.runtime.engine import EmbeddedRuntime, IngestReport
from engram.schemas.base import Event
from engram.schemas.events import SummarySnapshotted
from engram.schemas.inputs import TurnInput
from engram.schemas.memory import MemoryRecord, MemoryType

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
_counter = itertools.count(1)


def turn(content: str, *, role: str = "user", tenant: str = "t1", user: str = "u1", agent: str = "a1",
         session: str = "s1", message_id: str | None = None, at: datetime | None = None) -> TurnInput:
    n = next(_counter)
    return TurnInput(tenant=tenant, user=user, agent=agent, session=session,
                     message_id=message_id or f"m{n:06d}", role=role, content=content,  # type: ignore[arg-type]
                     ts=at or T0 + timedelta(minutes=n))


def user_turns(*texts: str, **kw: object) -> list[TurnInput]:
    return [turn(t, **kw) for t in texts]  # type: ignore[arg-type]


class Driver(Protocol):
    name: str

    def ingest(self, turns: Iterable[TurnInput]) -> IngestReport: ...
    def append(self, events: Sequence[Event]) -> None: ...
    def memories(self, tenant: str, user: str, statuses: tuple[str, ...] = ("active",)) -> list[MemoryRecord]: ...
    def summary(self, tenant: str, user: str, session: str) -> SummarySnapshotted | None: ...
    def recall(self, request: RecallRequest) -> RecallResult: ...
    def events(self, types: tuple[str, ...] = ()) -> list[Event]: ...
    def replay(self) -> str: ...
    def state_hash(self) -> str: ...


class StoreReads:
    """The reads every runtime answers the same way: its store and its recall."""

    runtime: Any

    def memories(self, tenant: str, user: str, statuses: tuple[str, ...] = ("active",)) -> list[MemoryRecord]:
        return self.runtime.store.list_memories(tenant, user, statuses)  # type: ignore[no-any-return]

    def summary(self, tenant: str, user: str, session: str) -> SummarySnapshotted | None:
        return self.runtime.store.latest_summary(tenant, user, session)  # type: ignore[no-any-return]

    def recall(self, request: RecallRequest) -> RecallResult:
        return self.runtime.recall(request)  # type: ignore[no-any-return]

    def state_hash(self) -> str:
        return self.runtime.store.state_hash()  # type: ignore[no-any-return]


_UNHURRIED = DEFAULT_CONFIG.model_copy(update={"recall": DEFAULT_CONFIG.recall.model_copy(update={"deadline_ms": 30_000.0})})
"""A model embedder on a shared, loaded CPU can take longer than the product's 300 ms recall deadline;
these tests check what recall returns, not how fast (the benchmarks do)."""


class EmbeddedDriver(StoreReads):
    name = "embedded"

    def __init__(self, folder: Path, embedder: str | None = None) -> None:
        ctx = default_context(_UNHURRIED, env={"ENGRAM_EMBEDDER": embedder}) if embedder else None
        self.runtime = EmbeddedRuntime(folder, ctx=ctx)
        self.name = f"embedded-{embedder}" if embedder else "embedded"

    def ingest(self, turns: Iterable[TurnInput]) -> IngestReport:
        return self.runtime.ingest(turns)

    def append(self, events: Sequence[Event]) -> None:
        self.runtime.append(events)

    def events(self, types: tuple[str, ...] = ()) -> list[Event]:
        return [e for _, e in self.runtime.log.scan(types=types)]

    def replay(self) -> str:
        return self.runtime.replay()

    def close(self) -> None:
        self.runtime.close()


def profile_fact(memory_id: str, content: str, day: int, layer: str = "L3",
                 start: datetime = datetime(2026, 1, 1, tzinfo=timezone.utc)) -> MemoryRecord:
    """A user fact made `day` days after `start`, in `layer` (the standing profile's by default)."""
    when = start + timedelta(days=day)
    return MemoryRecord(memory_id=memory_id, tenant_id="t", user_id="u", type=MemoryType.USER_FACT,
                        slot="user_fact", layer=layer, content=content, confidence=0.8, importance=0.5,  # type: ignore[arg-type]
                        created_at=when, updated_at=when, last_seen_at=when)
