"""The embedded adapter of the runtime port (`engram.runtime_port.MemoryRuntime`).

The embedded runtime has one writer: ingest, commands, governance and replay are serialised by
one lock and run on the runtime's own SQLite connection. Reads never take that lock: recall,
search and the listings run on the runtime's reader (`engram.projections.embedded_reader`),
each thread on its own WAL connection, with search indexes and cached reads under snapshots the
writer swaps at each commit (`engram.projections.snapshots`). A recall's parts run on the
process's bounded recall pool and the recall returns by its deadline with the parts ready
(recall/deadline.py).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import IO, Any, TypeVar

from engram.core.metrics import Metrics
from engram.core.ports import Progress
from engram.projections.ports import MemoryStore
from engram.recall.deadline import shared_pool
from engram.recall.service import RecallRequest, RecallResult, RecallService
from engram.runtime_port import DECISIONS, CommandFailed, DataDirBusy, GovernReport, IngestReport, decision_of, \
    with_deadline
from engram.schemas.base import Event
from engram.schemas.events import DeadLettered, MemoryChanged, RecallServed
from engram.schemas.inputs import TurnInput

from .engine import EmbeddedRuntime
from .folder_lock import lock_folder

log = logging.getLogger("engram.runtime")
OBSERVATION_BATCH_S = 0.02
"""How long the observation thread lets recall observations gather before one append logs them."""
T = TypeVar("T")


class EmbeddedBackend:
    """MemoryRuntime over one EmbeddedRuntime, serialised by a re-entrant lock."""

    name = "embedded"

    def __init__(self, runtime: EmbeddedRuntime, guard: IO[str] | None = None) -> None:
        self.runtime = runtime
        self._guard = guard
        self.config = runtime.ctx.config
        self.embedder = runtime.ctx.embedder
        self._lock = threading.RLock()
        self._late_observations: list[RecallServed] = []
        self._late_lock = threading.Lock()
        self._observations_due = threading.Event()
        self._flusher: threading.Thread | None = None
        self._closed = False
        self._counts = Metrics()

    @classmethod
    def open(cls, data_dir: Path | str) -> EmbeddedBackend:
        """Open the data folder under its lock (runtime/folder_lock.py), refusing one another process holds.

        The embedded runtime caches state in memory, so two processes writing
        one folder would each work from a stale picture of the other's writes.
        """
        guard = lock_folder(Path(data_dir))
        try:
            return cls(EmbeddedRuntime(data_dir), guard)
        except BaseException:
            guard.close()
            raise

    @classmethod
    def unlocked(cls, data_dir: Path | str) -> EmbeddedBackend:
        """Open the data folder without its lock: only for a folder no other process can open (tests)."""
        return cls(EmbeddedRuntime(data_dir))

    # -- writes --------------------------------------------------------------------
    def ingest(self, turns: Iterable[TurnInput], *, wait: bool = True) -> IngestReport:
        """Append and process the turns (always before returning: `wait` is for the distributed runtime)."""
        with self._lock:
            self._flush_observations()
            before = self.runtime.log.last_seq()
            report = self.runtime.ingest(turns)
            report.changes = [e for _, e in self.runtime.log.scan(after=before, types=("MemoryChanged",))
                              if isinstance(e, MemoryChanged)]
            return report

    def submit(self, events: Sequence[Event]) -> list[MemoryChanged]:
        ids = {e.event_id for e in events}
        with self._lock:
            self._flush_observations()  # a recall served before this command is logged before it
            before = self.runtime.log.last_seq()
            self.runtime.append(events)
            caused = [e for _, e in self.runtime.log.scan(after=before, types=("MemoryChanged", "DeadLettered"))
                      if ids.intersection(e.causation_ids)]
        failed = [e for e in caused if isinstance(e, DeadLettered)]
        if failed:
            raise CommandFailed(f"the command could not be applied: {failed[0].reason}")
        return [e for e in caused if isinstance(e, MemoryChanged)]

    def decide(self, command: Event) -> Event:
        """Append the command; its decision is derived (and projected) in the same append."""
        with self._lock:
            self._flush_observations()
            before = self.runtime.log.last_seq()
            self.runtime.append([command])
            decisions = [e for _, e in self.runtime.log.scan(after=before, types=DECISIONS)
                         if command.event_id in e.causation_ids]
        return decision_of(command, decisions)

    def record(self, events: Sequence[Event]) -> None:
        with self._lock:
            self._flush_observations()
            self.runtime.append(events, process=False)

    # -- recall ----------------------------------------------------------------------
    def recall(self, request: RecallRequest, deadline_ms: float) -> RecallResult | None:
        """The parts run on the process's recall pool against the reader (its own connections and
        snapshots: never the writer's lock), and the call returns by the deadline with the parts ready
        (recall/deadline.py). The observation is logged if the lock is free, else with the next write."""
        service = RecallService(self.runtime.reader, self.runtime.ctx.embedder,
                                with_deadline(self.config, deadline_ms), shared_pool(self.config.recall.pool_size))
        result = service.safe_recall(request)
        self._counts.add("recall.failed", service.failures)
        self._observe(result.observation)
        return None if service.failures else result

    def _observe(self, observation: RecallServed) -> None:
        """Queue the observation: it is logged by the observation thread (or with the next write, or before
        a read of the log), never on the recall's path: a recall neither writes nor waits for the writer."""
        with self._late_lock:
            self._late_observations.append(observation)
            if self._flusher is None and not self._closed:
                self._flusher = threading.Thread(target=self._log_observations, name="engram-observations",
                                                 daemon=True)
                self._flusher.start()
        self._observations_due.set()

    def _log_observations(self) -> None:
        """The observation thread: log what recalls queued, a batch at a time, until the backend closes."""
        while True:
            self._observations_due.wait()
            time.sleep(OBSERVATION_BATCH_S)  # let a burst of recalls share one append
            self._observations_due.clear()
            with self._lock:
                if self._closed:
                    return
                self._flush_observations()

    def _flush_observations(self) -> None:
        """Append the pending recall observations (the caller holds the lock)."""
        with self._late_lock:
            batch, self._late_observations = self._late_observations, []
        if not batch:
            return
        try:
            self.runtime.append(batch, process=False)
        except Exception:
            log.exception("could not log %d recall observation(s) together; logging them one by one", len(batch))
            self._counts.add("recall.observation_failed")
            kept = [o for o in batch if not self._log_alone(o)]
            with self._late_lock:
                self._late_observations[:0] = kept[-1000:]

    def _log_alone(self, observation: RecallServed) -> bool:
        """Log one observation: True when done or dropped for good, False when worth another try.

        A database error may pass (kept for the next flush); any other error is the observation's
        own (it cannot be encoded): it is dropped with its reason, so it never blocks the others.
        """
        try:
            self.runtime.append([observation], process=False)
        except sqlite3.Error:
            return False
        except Exception as exc:
            log.error("dropped recall observation %s of tenant %s: it cannot be logged (%s: %s)",
                      ascii(observation.recall_id), ascii(observation.tenant_id), type(exc).__name__,
                      ascii(str(exc)))
            self._counts.add("recall.observation_dropped")
        return True

    # -- reads ---------------------------------------------------------------------------
    def read(self, query: Callable[[MemoryStore], T]) -> T:
        """A read on the reader: its own connection and snapshots, never waiting for a writer."""
        return query(self.runtime.reader)

    def event(self, tenant: str, user: str, event_id: str) -> Event | None:
        with self._lock:
            self._flush_observations()
            found = self.runtime.log.get(event_id)
        return found if found is not None and (found.tenant_id, found.user_id) == (tenant, user) else None

    def lineage(self, tenant: str, user: str, memory_id: str) -> list[dict[str, Any]]:
        with self._lock:
            return self.runtime.lineage(tenant, user, memory_id)

    def replay(self, progress: Progress | None = None) -> str:
        with self._lock:
            self._flush_observations()
            return self.runtime.replay(progress)

    def govern(self, as_of: datetime | None = None, *, dry_run: bool = False, tenant: str | None = None,
               user: str | None = None) -> GovernReport:
        with self._lock:
            self._flush_observations()
            return self.runtime.govern(as_of, dry_run=dry_run, tenant=tenant, user=user)

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
            self._closed = True
            self._observations_due.set()
            self._flush_observations()
            self.runtime.close()
            if self._guard is not None:
                self._guard.close()
                self._guard = None

    def __enter__(self) -> EmbeddedBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
