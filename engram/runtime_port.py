"""The runtime port: what every door (HTTP, MCP, the CLI, the in-process `engram.Memory`) needs from a runtime.

Both runtimes implement `MemoryRuntime`:

- `engram.runtime.backend.EmbeddedBackend`: one process, one SQLite file, serialised by one lock;
- `engram.distributed.backend.DistributedBackend`: writes produced to Kafka (processed by `engram worker`),
  reads from Weaviate (and ClickHouse for lineage); it keeps no state of its own.

`open_runtime` is the one place that picks between them, from `ENGRAM_RUNTIME`
(`engram.runtime.choice.runtime_kind`). The use cases on top of the port —
ingest, recall, search, memories, lineage, summaries, the user controls (correct,
pin, forget) and global cards (decided by the cards processor through `decide`) — live in `engram.access.service` / `engram.access.cards`,
so every door runs the same code on either runtime.

The reports of ingest and governance are shared by both runtimes and live here too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from engram.access.errors import AccessError

if TYPE_CHECKING:
    from engram.core.config import EngramConfig
    from engram.core.embedding import Embedder
    from engram.core.ports import Progress
    from engram.projections.ports import MemoryStore
    from engram.recall.service import RecallRequest, RecallResult
    from engram.schemas.base import Event
    from engram.schemas.events import MemoryChanged
    from engram.schemas.inputs import IngestIssue, TurnInput

T = TypeVar("T")


@dataclass
class IngestReport:
    """What one ingest did. `changes` are the memory changes the turns caused, when the runtime knows them."""

    received: int = 0
    appended: int = 0
    duplicates: int = 0
    events: Counter[str] = field(default_factory=Counter)
    runtime: str = "embedded"
    waited: float | None = None
    """Distributed runtime: seconds until workers and projectors had applied the turns (None: not waited)."""
    issues: list[IngestIssue] = field(default_factory=list)
    """Turns not taken as sent (message-id conflicts, records too large, clamped times), by input position."""
    changes: list[MemoryChanged] = field(default_factory=list)
    """The memory changes the turns caused, when the runtime knows them (the adapters fill it in)."""

    @property
    def conflicts(self) -> int:
        return sum(issue.kind == "conflict" for issue in self.issues)

    @property
    def rejected(self) -> int:
        """Turns not recorded at all (conflicts, too large)."""
        return sum(issue.is_error for issue in self.issues)


@dataclass
class GovernReport:
    """What one governance pass did: ticks appended (one per user) and memories evicted."""

    as_of: datetime
    users: int = 0
    ticks: int = 0
    archived: int = 0
    deleted: int = 0
    dry_run: bool = False
    planned: list[dict[str, str]] = field(default_factory=list)  # dry run: what would be evicted


class CommandFailed(AccessError):
    """A command reached a processor that failed on it (it was dead-lettered)."""

    status = 500
    code = "command_failed"


class DataDirBusy(AccessError):
    """Another process already serves this data folder."""

    status = 503
    code = "data_dir_busy"


class RuntimeUnavailable(AccessError):
    """The runtime cannot be opened as configured (a missing extra, an unknown ENGRAM_RUNTIME)."""

    status = 503
    code = "runtime_unavailable"


class MemoryRuntime(Protocol):
    """The port: append edge events and see what they derived, read the projections, recall under a deadline."""

    name: str
    config: EngramConfig
    embedder: Embedder

    def ingest(self, turns: Iterable[TurnInput], *, wait: bool = True) -> IngestReport:
        """Append turns and have them processed; `changes` lists the memory changes they caused.

        `wait=False` (distributed only) returns once Kafka has the turns, without waiting for the workers.
        """
        ...

    def submit(self, events: Sequence[Event]) -> list[MemoryChanged]:
        """Append commands (correct, pin, forget, cards), have them applied, return the memory changes."""
        ...

    def decide(self, command: Event) -> Event:
        """Append one command a keyed processor decides (a `GlobalCardRequested`); return its decision.

        The decision (`GlobalCardSaved`, `GlobalCardDeleted` or `GlobalCardRejected`) is applied to the
        projection when this returns. Raises CommandFailed if the processor failed on the command.
        """
        ...

    def record(self, events: Sequence[Event]) -> None:
        """Append events nothing needs to wait for (feedback)."""
        ...

    def recall(self, request: RecallRequest, deadline_ms: float) -> RecallResult | None:
        """Recall within the deadline (waits included); None when it failed or could not start in time.

        A new user or session is not a failure: the result says so (`user_known`, `session_known`).
        """
        ...

    def read(self, query: Callable[[MemoryStore], T]) -> T:
        """Run a read against the current-memory projection."""
        ...

    def event(self, tenant: str, user: str, event_id: str) -> Event | None:
        """One event of this tenant's user by id (a recall observation, a feedback), or None.

        An event of another tenant or user is None, as if it did not exist.
        """
        ...

    def lineage(self, tenant: str, user: str, memory_id: str) -> list[dict[str, Any]]:
        """The memory's changes back to the L0 turns (`LineageStep.as_dict()` shape); [] if never recorded."""
        ...

    def replay(self, progress: Progress | None = None) -> str:
        """Drop the current-memory projection and rebuild it from the log; return the state hash.

        `progress` is called with the number of events (records) read as the rebuild goes.
        """
        ...

    def govern(self, as_of: datetime | None = None, *, dry_run: bool = False, tenant: str | None = None,
               user: str | None = None) -> GovernReport:
        """One governance pass (decay) over every user, or only `tenant` / `user`; `dry_run` changes nothing."""
        ...

    def exclusive(self) -> AbstractContextManager[None]:
        """Hold this process's runtime (tests, `engram sql`); card changes do not need it (`decide`)."""
        ...

    def counters(self) -> dict[str, int]: ...

    def ping(self) -> None: ...

    def close(self) -> None: ...


DECISIONS = ("GlobalCardSaved", "GlobalCardDeleted", "GlobalCardRejected", "DeadLettered")
"""The events that answer a decided command (`MemoryRuntime.decide`)."""


def decision_of(command: Event, caused: Sequence[Event]) -> Event:
    """The decision among the events a command caused; CommandFailed when it was dead-lettered or is missing."""
    for event in caused:
        if event.type == "DeadLettered":
            raise CommandFailed(f"the command could not be applied: {getattr(event, 'reason', '')}")
    for event in caused:
        if event.type in DECISIONS:
            return event
    raise CommandFailed(f"no decision was recorded for command {command.event_id}")


def with_deadline(config: EngramConfig, deadline_ms: float) -> EngramConfig:
    """The configuration with another recall deadline (what is left of a request's `deadline_ms`)."""
    recall = config.recall.model_copy(update={"deadline_ms": deadline_ms})
    return config.model_copy(update={"recall": recall})


def open_runtime(data: Path | str, env: Mapping[str, str] | None = None, *, serving: bool = False) -> MemoryRuntime:
    """The runtime ENGRAM_RUNTIME names, over the data folder: the one place the choice is made.

    An embedded data folder is opened under its lock (one process at a time: a server, a command, a
    `Memory`); another process holding it is DataDirBusy, naming that process. `serving` is kept for
    callers that say what they are; it changes nothing any more.
    Raises RuntimeUnavailable for an unknown ENGRAM_RUNTIME or a missing extra.
    """
    import os

    from engram.runtime.choice import runtime_kind

    environ = os.environ if env is None else env
    try:
        kind = runtime_kind(environ)
    except ValueError as exc:
        raise RuntimeUnavailable(str(exc), "bad_runtime") from None
    from engram.core.embedding import warm_up

    runtime: MemoryRuntime
    if kind == "embedded":
        from engram.runtime.backend import EmbeddedBackend

        runtime = EmbeddedBackend.open(data)  # under the folder's lock, for a server and a command alike
    else:
        try:
            from engram.distributed.backend import DistributedBackend
        except ImportError as exc:
            raise RuntimeUnavailable(
                "ENGRAM_RUNTIME=distributed needs the kafka, weaviate and clickhouse extras: "
                f"pip install 'engram[kafka,weaviate,clickhouse]' ({exc})", "missing_extra") from None
        runtime = DistributedBackend.from_env(data, environ)
    warm_up(runtime.embedder)  # the first recall must not pay for loading a model past its deadline
    return runtime


__all__ = ["DECISIONS", "decision_of", "CommandFailed", "DataDirBusy", "GovernReport", "IngestReport", "MemoryRuntime", "RuntimeUnavailable",
           "open_runtime", "with_deadline"]
