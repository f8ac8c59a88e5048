"""The distributed adapter of the runtime port (`engram.runtime_port.MemoryRuntime`).

Writes are produced to Kafka and processed by `engram worker`; a write that
must report what it did (ingest, commands) waits until the workers and
projectors have applied it, then reads the memory changes it caused back from
the memory-changes topic (from the offsets it noted before producing). Reads
go to Weaviate, lineage to ClickHouse. The adapter keeps no memory state of its
own, so several server processes can serve one deployment behind a balancer.

Every write waits on the process's one `SharedWaiter` (one thread, a few
consumers, waits keyed by the ids produced), which also lists what the write
caused: the memory changes of an ingest or a command, the decision of a card
command (`decide`: the cards processor decides, with a version check). `event`
finds recall observations of any process in ClickHouse. `exclusive` is a lock
of this process only, and nothing needs it.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from engram.access.errors import BadRequest
from engram.core.config import EngramConfig
from engram.core.config_file import load_config
from engram.core.embedding import Embedder
from engram.streams.context import default_context
from engram.core.ports import Progress
from engram.projections.ports import MemoryStore
from engram.recall.deadline import shared_pool
from engram.recall.service import RecallRequest, RecallResult, RecallService
from engram.runtime_port import CommandFailed, GovernReport, IngestReport, decision_of, with_deadline
from engram.schemas import topics as t
from engram.schemas.base import Event
from engram.schemas.events import DeadLettered, ForgetRequested, MemoryChanged
from engram.schemas.inputs import TurnInput

from .applied import NotApplied, SharedWaiter
from .erasure import DistributedEraser, forgets
from .facade import DistributedRuntime, Endpoints
from .freshness import FreshnessCheck
from .readback import high_watermarks

log = logging.getLogger("engram.distributed")
T = TypeVar("T")
EVENT_WAIT = 10.0
EVENT_WAITERS = 4  # misses of `event()` that may wait for the recalls projection at once
"""Seconds an unknown event id waits for the projectors to catch up with the recalls topic."""


class DistributedBackend:
    """MemoryRuntime over Kafka (writes), Weaviate (reads) and ClickHouse (lineage)."""

    name = "distributed"

    def __init__(self, runtime: DistributedRuntime) -> None:
        self.runtime = runtime
        self.config: EngramConfig = runtime.ctx.config
        self.embedder: Embedder = runtime.ctx.embedder
        self._card_lock = threading.RLock()
        self._counts: Counter[str] = Counter()
        self._counts_lock = threading.Lock()
        self._applied_lock = threading.Lock()  # opening the waiter talks to Kafka: not under the counts lock
        self._served: OrderedDict[str, Event] = OrderedDict()
        self._event_waiters = threading.BoundedSemaphore(EVENT_WAITERS)
        self._freshness: FreshnessCheck | None = None

    @classmethod
    def from_env(cls, data: Path | str, env: Mapping[str, str] | None = None) -> DistributedBackend:
        return cls(DistributedRuntime(Endpoints.from_env(data, env), default_context(load_config(data, env), env)))

    def _count(self, name: str, value: int = 1) -> None:
        with self._counts_lock:
            self._counts[name] += value

    @property
    def applied(self) -> SharedWaiter:
        """The process's one applied-waiter (opened on first write)."""
        with self._applied_lock:
            if self.runtime.applied is None:
                e = self.runtime.endpoints
                self.runtime.applied = SharedWaiter(e.bootstrap, e.namespace)
            return self.runtime.applied

    @property
    def freshness(self) -> FreshnessCheck:
        """The process's one freshness check (opened on first recall)."""
        with self._applied_lock:
            if self._freshness is None:
                e = self.runtime.endpoints
                self._freshness = FreshnessCheck(e.bootstrap, e.namespace)
            return self._freshness

    # -- writes --------------------------------------------------------------------
    def ingest(self, turns: Iterable[TurnInput], *, wait: bool = True) -> IngestReport:
        if wait:
            self.applied  # noqa: B018 - opened first: the shared waiter lists the changes the turns caused
        report = self.runtime.ingest(turns, wait=wait)
        report.events.update(c.type for c in report.changes)
        return report

    def submit(self, events: Sequence[Event]) -> list[MemoryChanged]:
        caused = self._apply(events)
        failed = [e for e in caused if isinstance(e, DeadLettered)]
        if failed:
            raise CommandFailed(f"the command could not be applied: {failed[0].reason}")
        ids = {e.event_id for e in events}
        changes = [c for c in caused if isinstance(c, MemoryChanged) and ids.intersection(c.causation_ids)]
        self._erase(forgets(events), changes)
        return changes

    def _erase(self, requests: Sequence[ForgetRequested], changes: Sequence[MemoryChanged]) -> None:
        """The forgets are applied everywhere: destroy the keys they cover, then record the erasures.

        Waits until the projectors applied the records too (ClickHouse text blanked).
        """
        if not requests:
            return
        eraser = DistributedEraser(self.runtime.producer.cipher)
        records = [eraser.complete(request, changes) for request in requests]
        self._apply(records)
        self._count("erasures", len(records))

    def decide(self, command: Event) -> Event:
        return decision_of(command, [e for e in self._apply([command]) if command.event_id in e.causation_ids])

    def _apply(self, events: Sequence[Event]) -> list[Event]:
        """Produce, then wait (on the shared waiter) until applied; the events they caused."""
        waiter = self.applied
        marks, _ = self.runtime.produce(events)
        return waiter.wait(marks, [e.event_id for e in events], self.runtime.wait_timeout)[1]

    def record(self, events: Sequence[Event]) -> None:
        self.runtime.append(events, wait=False)
        for event in events:
            self._remember(event)

    def _remember(self, event: Event) -> None:
        with self._counts_lock:
            self._served[event.event_id] = event
            while len(self._served) > 10_000:
                self._served.popitem(last=False)

    # -- recall ----------------------------------------------------------------------
    def recall(self, request: RecallRequest, deadline_ms: float) -> RecallResult | None:
        """Recall on Weaviate; the parts run on the process's recall pool and the call returns by the
        deadline with the parts ready (the missed ones listed), while late reads finish unseen."""
        # before the reads (what they must hold), within a third of the deadline: past it, "cannot tell"
        fresh = self.freshness.check(request.tenant, request.user, budget=deadline_ms / 3000)
        service = RecallService(self.runtime.store, self.embedder,
                                with_deadline(self.config, max(1.0, deadline_ms - fresh.checked_ms)),
                                shared_pool(self.config.recall.pool_size))
        result = service.safe_recall(request)
        result.freshness = fresh
        self._count("recall.failed", service.failures)
        if result.missed:
            self._count("recall.timeout")
        observation = result.observation
        if not self.runtime.producer.record(observation):
            self._count("recall.observation_failed")
            log.warning("recall observation %s not queued", observation.recall_id)
        self._remember(observation)
        return None if service.failures else result

    # -- reads -----------------------------------------------------------------------
    def read(self, query: Callable[[MemoryStore], T]) -> T:
        return query(self.runtime.store)  # type: ignore[arg-type]

    def event(self, tenant: str, user: str, event_id: str) -> Event | None:
        """This user's event that this process produced, else their recall observation from ClickHouse.

        A miss waits (bounded) until the projectors have committed the recalls topic as far as it
        goes now, then asks again: a recall served a moment ago by another process is found. At most
        `EVENT_WAITERS` misses wait at once and the others queue for a turn (bounded by EVENT_WAIT too):
        made-up ids cannot load the broker, and feedback on a recall served a moment ago is still found.
        """
        with self._counts_lock:
            found = self._served.get(event_id)
        if found is not None:
            return found if (found.tenant_id, found.user_id) == (tenant, user) else None
        served = self.runtime.recall_observation(tenant, user, event_id)
        if served is None and self._event_waiters.acquire(timeout=EVENT_WAIT):
            try:
                self._wait_for_recalls()
            finally:
                self._event_waiters.release()
            served = self.runtime.recall_observation(tenant, user, event_id)
        elif served is None:
            self._count("event.wait_refused")
        return served

    def _wait_for_recalls(self) -> None:
        recalls = self.runtime.endpoints.namespace.topic(t.RECALLS)
        try:
            self.applied.wait(high_watermarks(self.runtime.endpoints.bootstrap, [recalls]), (), EVENT_WAIT)
        except NotApplied:
            self._count("event.projection_behind")

    def lineage(self, tenant: str, user: str, memory_id: str) -> list[dict[str, Any]]:
        return self.runtime.lineage(tenant, user, memory_id)

    def replay(self, progress: Progress | None = None) -> str:
        from .rebuild import rebuild_weaviate

        e = self.runtime.endpoints
        return rebuild_weaviate(e.bootstrap, e.namespace, self.runtime.store, self.embedder, progress).after

    def govern(self, as_of: datetime | None = None, *, dry_run: bool = False, tenant: str | None = None,
               user: str | None = None) -> GovernReport:
        raise BadRequest("on the distributed runtime the workers' timer governs "
                         "(engram worker --governance-interval SECONDS)", "governed_by_workers")

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._card_lock:
            yield

    def counters(self) -> dict[str, int]:
        with self._counts_lock:
            return dict(self._counts)

    def ping(self) -> None:
        self.runtime.store.has_user("engram-ping", "engram-ping")

    def close(self) -> None:
        if self._freshness is not None:
            self._freshness.close()
            self._freshness = None
        if self.runtime.applied is not None:
            self.runtime.applied.close()
            self.runtime.applied = None
        self.runtime.close()

    def __enter__(self) -> DistributedBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
