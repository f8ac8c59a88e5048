"""The distributed adapter of the runtime port (`engram.runtime_port.MemoryRuntime`).

Writes are produced to Kafka and processed by `engram worker`; a write that
must report what it did (ingest, commands) waits until the workers and
projectors have applied it, then reads the memory changes it caused back from
the memory-changes topic (from the offsets it noted before producing). Reads
go to Weaviate, lineage to ClickHouse. The adapter keeps no memory state of its
own, so several server processes can serve one deployment behind a balancer.

Known limits: `exclusive` (card read-modify-write) is a lock inside this
process only, and `event` finds only the events this process produced (recall
observations, feedback): feedback on a recall served by another process is
refused as unknown.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from confluent_kafka import Consumer, TopicPartition

from engram.access.errors import BadRequest
from engram.core.config import EngramConfig
from engram.core.crypto import FieldCipher
from engram.core.embedding import Embedder
from engram.core.ports import Progress
from engram.projections.ports import MemoryStore
from engram.recall.service import RecallRequest, RecallResult, RecallService
from engram.runtime_port import GovernReport, IngestReport, with_deadline
from engram.schemas import topics as t
from engram.schemas.base import Event
from engram.schemas.codec import EventDecodeError, decode
from engram.schemas.events import ForgetRequested, MemoryChanged
from engram.schemas.inputs import TurnInput

from .erasure import DistributedEraser, cipher_for, forgets
from .facade import DistributedRuntime, Endpoints
from .readback import high_watermarks

log = logging.getLogger("engram.distributed")
T = TypeVar("T")
Marks = dict[tuple[str, int], int]


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
        self._served: OrderedDict[str, Event] = OrderedDict()
        self._recalls = ThreadPoolExecutor(32, thread_name_prefix="engram-recall")

    @classmethod
    def from_env(cls, data: Path | str, env: Mapping[str, str] | None = None) -> DistributedBackend:
        return cls(DistributedRuntime(Endpoints.from_env(data, env)))

    @property
    def _changes_topic(self) -> str:
        return self.runtime.endpoints.namespace.topic(t.MEMORY_CHANGES)

    def _count(self, name: str, value: int = 1) -> None:
        with self._counts_lock:
            self._counts[name] += value

    # -- writes --------------------------------------------------------------------
    def ingest(self, turns: Sequence[TurnInput]) -> IngestReport:
        users = {(turn.tenant, turn.user) for turn in turns}
        before = self._marks()
        report = self.runtime.ingest(turns, wait=True)
        report.changes = [c for c in self._changes_since(before) if (c.tenant_id, c.user_id) in users]
        report.events.update(c.type for c in report.changes)
        return report

    def submit(self, events: Sequence[Event]) -> list[MemoryChanged]:
        ids = {e.event_id for e in events}
        before = self._marks()
        self.runtime.append(events, wait=True)
        changes = [c for c in self._changes_since(before) if ids.intersection(c.causation_ids)]
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
        self.runtime.append(records, wait=True)
        self._count("erasures", len(records))

    def record(self, events: Sequence[Event]) -> None:
        self.runtime.append(events, wait=False)
        for event in events:
            self._remember(event)

    def _remember(self, event: Event) -> None:
        with self._counts_lock:
            self._served[event.event_id] = event
            while len(self._served) > 10_000:
                self._served.popitem(last=False)

    def _marks(self) -> Marks:
        return high_watermarks(self.runtime.endpoints.bootstrap, [self._changes_topic])

    def _changes_since(self, before: Marks) -> list[MemoryChanged]:
        after = self._marks()
        ranges = {tp: (before.get(tp, 0), end) for tp, end in after.items() if end > before.get(tp, 0)}
        e = self.runtime.endpoints
        cipher = cipher_for(e.bootstrap, e.namespace.prefix)
        return [e for e in read_ranges(e.bootstrap, ranges, cipher=cipher) if isinstance(e, MemoryChanged)]

    # -- recall ----------------------------------------------------------------------
    def recall(self, request: RecallRequest, deadline_ms: float) -> RecallResult | None:
        """Recall on Weaviate; past the deadline the answer is None (degraded) while the reads finish."""
        service = RecallService(self.runtime.store, self.embedder, with_deadline(self.config, deadline_ms))
        future = self._recalls.submit(service.safe_recall, request)
        try:
            result = future.result(timeout=deadline_ms / 1000)
        except FutureTimeout:
            self._count("recall.timeout")
            return None
        self._count("recall.failed", service.failures)
        observation = result.observation
        if not self.runtime.producer.record(observation):
            self._count("recall.observation_failed")
            log.warning("recall observation %s not queued", observation.recall_id)
        self._remember(observation)
        return None if service.failures else result

    # -- reads -----------------------------------------------------------------------
    def read(self, query: Callable[[MemoryStore], T]) -> T:
        return query(self.runtime.store)  # type: ignore[arg-type]

    def event(self, event_id: str) -> Event | None:
        with self._counts_lock:
            return self._served.get(event_id)

    def lineage(self, tenant: str, user: str, memory_id: str) -> list[dict[str, Any]]:
        return self.runtime.lineage(tenant, user, memory_id)

    def replay(self, progress: Progress | None = None) -> str:
        from .rebuild import rebuild_weaviate

        e = self.runtime.endpoints
        return rebuild_weaviate(e.bootstrap, e.namespace, self.runtime.store, self.embedder).after

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
        self._recalls.shutdown(wait=False)
        self.runtime.close()

    def __enter__(self) -> DistributedBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_ranges(bootstrap: str, ranges: Mapping[tuple[str, int], tuple[int, int]],
                timeout: float = 30.0, cipher: FieldCipher | None = None) -> list[Event]:
    """The events at offsets [start, end) of each (topic, partition), decoded (undecodable records skipped)."""
    if not ranges:
        return []
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"engram-range-{uuid.uuid4().hex[:8]}",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    left = {tp: end for tp, (_, end) in ranges.items()}
    out: list[Event] = []
    try:
        consumer.assign([TopicPartition(topic, p, start) for (topic, p), (start, _) in ranges.items()])
        deadline = time.monotonic() + timeout
        while left and time.monotonic() < deadline:
            for msg in consumer.consume(500, timeout=0.2):
                tp, offset = (msg.topic(), msg.partition()), msg.offset()
                if msg.error() or offset is None or tp not in left:
                    continue
                if offset + 1 >= left[tp]:  # type: ignore[index]
                    left.pop(tp)  # type: ignore[arg-type]
                try:
                    out.append(decode(msg.value() or b"", cipher))
                except EventDecodeError:
                    continue
        if left:
            raise TimeoutError(f"could not read the memory changes back within {timeout}s")
    finally:
        consumer.close()
    return out
