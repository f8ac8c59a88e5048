"""The runtime behind the access layer, as a small port, and its embedded adapter.

The access layer needs few things from a runtime: append edge events and see
what they derived, read the projections, recall under a deadline, and read
single events back (recalls, lineage). `MemoryBackend` names exactly that, so
the distributed runtime can stand in for `EmbeddedBackend` later.

The embedded runtime holds one SQLite connection and is single-threaded: the
adapter serialises every call with one lock. A recall that cannot get the lock
within its deadline returns nothing rather than wait (the chat goes on).
"""

from __future__ import annotations

import fcntl
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import IO, Protocol, TypeVar

from engram.core.config import EngramConfig
from engram.core.embedding import Embedder
from engram.projections.ports import MemoryStore
from engram.recall.service import RecallRequest, RecallResult, RecallService
from engram.runtime.engine import EmbeddedRuntime, IngestReport
from engram.runtime.lineage import LineageStep, memory_lineage
from engram.schemas.base import Event
from engram.schemas.events import DeadLettered, MemoryChanged, RecallServed
from engram.schemas.inputs import TurnInput

from .errors import AccessError
from .metrics import Metrics

log = logging.getLogger("engram.access")
T = TypeVar("T")


class CommandFailed(AccessError):
    """A command reached a processor that failed on it (it was dead-lettered)."""

    status = 500
    code = "command_failed"


class DataDirBusy(AccessError):
    """Another process already serves this data folder."""

    status = 503
    code = "data_dir_busy"


class MemoryBackend(Protocol):
    """What the access layer needs from a runtime."""

    name: str
    config: EngramConfig
    embedder: Embedder

    def ingest(self, turns: Sequence[TurnInput]) -> IngestReport:
        """Append turns and process them (or hand them to the workers)."""
        ...

    def submit(self, events: Sequence[Event]) -> list[MemoryChanged]:
        """Append commands, process them, and return the memory changes they caused."""
        ...

    def record(self, events: Sequence[Event]) -> None:
        """Append events nothing needs to wait for (feedback)."""
        ...

    def recall(self, request: RecallRequest, deadline_ms: float) -> RecallResult | None:
        """Recall within the deadline (waits included); None when it failed or could not even start in time.

        A new user or session is not a failure: the result says so (`user_known`, `session_known`).
        """
        ...

    def read(self, query: Callable[[MemoryStore], T]) -> T:
        """Run a read against the current-memory projection."""
        ...

    def event(self, event_id: str) -> Event | None: ...

    def lineage(self, tenant: str, user: str, memory_id: str) -> list[LineageStep]: ...

    def exclusive(self) -> AbstractContextManager[None]:
        """Hold the back end for a read-modify-write (card updates)."""
        ...

    def counters(self) -> dict[str, int]: ...

    def ping(self) -> None: ...

    def close(self) -> None: ...


class EmbeddedBackend:
    """MemoryBackend over one EmbeddedRuntime, serialised by a re-entrant lock."""

    name = "embedded"

    def __init__(self, runtime: EmbeddedRuntime, guard: IO[str] | None = None) -> None:
        self.runtime = runtime
        self._guard = guard
        self.config = runtime.ctx.config
        self.embedder = runtime.ctx.embedder
        self._lock = threading.RLock()
        self._late_observations: list[RecallServed] = []
        self._counts = Metrics()

    @classmethod
    def open(cls, data_dir: Path | str) -> EmbeddedBackend:
        """Open the data folder, refusing one that another serving process holds.

        The embedded runtime caches state in memory, so two processes writing
        one folder would each work from a stale picture of the other's writes.
        """
        guard = _lock_folder(Path(data_dir))
        return cls(EmbeddedRuntime(data_dir), guard)

    # -- writes --------------------------------------------------------------------
    def ingest(self, turns: Sequence[TurnInput]) -> IngestReport:
        with self._lock:
            return self.runtime.ingest(turns)

    def submit(self, events: Sequence[Event]) -> list[MemoryChanged]:
        ids = {e.event_id for e in events}
        with self._lock:
            before = self.runtime.log.last_seq()
            self.runtime.append(events)
            caused = [e for _, e in self.runtime.log.scan(after=before, types=("MemoryChanged", "DeadLettered"))
                      if ids.intersection(e.causation_ids)]
        failed = [e for e in caused if isinstance(e, DeadLettered)]
        if failed:
            raise CommandFailed(f"the command could not be applied: {failed[0].reason}")
        return [e for e in caused if isinstance(e, MemoryChanged)]

    def record(self, events: Sequence[Event]) -> None:
        with self._lock:
            self.runtime.append(events, process=False)

    # -- recall ----------------------------------------------------------------------
    def recall(self, request: RecallRequest, deadline_ms: float) -> RecallResult | None:
        start = time.perf_counter()
        if not self._lock.acquire(timeout=deadline_ms / 1000):
            self._counts.add("recall.lock_timeout")
            return None
        try:
            remaining = deadline_ms - (time.perf_counter() - start) * 1000
            if remaining <= 0:  # the wait for the lock used the whole deadline: degrade, do not overrun
                self._counts.add("recall.lock_timeout")
                return None
            service = RecallService(self.runtime.store, self.runtime.ctx.embedder, _with_deadline(self.config, remaining))
            result = service.safe_recall(request)
            self._counts.add("recall.failed", service.failures)
            self._observe(result.observation)
            return None if service.failures else result
        finally:
            self._lock.release()

    def _observe(self, observation: RecallServed) -> None:
        """Log the observation (and any left over); never fail the recall because of it."""
        batch = [*self._late_observations, observation]
        try:
            self.runtime.append(batch, process=False)
            self._late_observations.clear()
        except Exception:
            log.exception("could not log recall %s; kept for the next recall", observation.recall_id)
            self._counts.add("recall.observation_failed")
            self._late_observations[:] = batch[-1000:]

    # -- reads ---------------------------------------------------------------------------
    def read(self, query: Callable[[MemoryStore], T]) -> T:
        with self._lock:
            return query(self.runtime.store)

    def event(self, event_id: str) -> Event | None:
        with self._lock:
            return self.runtime.log.get(event_id)

    def lineage(self, tenant: str, user: str, memory_id: str) -> list[LineageStep]:
        with self._lock:
            return memory_lineage(self.runtime.log, tenant, user, memory_id)

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._lock:
            yield

    def counters(self) -> dict[str, int]:
        with self._lock:
            merged = Counter({f"events.{k}": v for k, v in self.runtime.counters.items()})
            merged.update(self._counts.snapshot())
            return dict(merged)

    def ping(self) -> None:
        with self._lock:
            self.runtime.db.execute("SELECT 1").fetchone()

    def close(self) -> None:
        with self._lock:
            self.runtime.close()
            if self._guard is not None:
                self._guard.close()
                self._guard = None


def _lock_folder(folder: Path) -> IO[str]:
    folder.mkdir(parents=True, exist_ok=True)
    handle = open(folder / "serve.lock", "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise DataDirBusy(f"the data folder {folder} is already served by another Engram process: "
                          "run one server per folder (`engram serve --mcp` serves HTTP and MCP together)") from None
    return handle


def _with_deadline(config: EngramConfig, deadline_ms: float) -> EngramConfig:
    recall = config.recall.model_copy(update={"deadline_ms": deadline_ms})
    return config.model_copy(update={"recall": recall})
