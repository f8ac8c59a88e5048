"""The projector role: every topic of a namespace into Weaviate (current memory) and ClickHouse (analytics).

A plain confluent-kafka consumer loop (consumer group `<prefix>engram-projectors`),
no faust: projections keep no state of their own, so there is nothing for a
table to hold. Commit order, per batch (at-least-once):

1. decode each record (an undecodable one is counted and skipped: the
   processors dead-letter it, and the dead letter reaches ClickHouse);
2. apply the batch to the current-memory projector and flush Weaviate
   (version-guarded upserts keyed by uuid5: a redelivered or older event
   changes nothing);
3. every `analytics_interval` seconds, or once the stream has been quiet
   (no record) for `analytics_quiet` seconds, insert the buffered events into
   ClickHouse (rows deduplicated by event id; on a background thread while
   the next batches go to Weaviate), and once that insert has finished,
   commit the offsets it covered (at the loop's first turn after it:
   the loop never waits for ClickHouse, so a Weaviate write is never held
   behind an insert). Quiet, not merely an empty poll: a poll of
   `--batch-within` seconds finds nothing many times a second even at a
   steady 30 turns/s, and each chDB insert costs about as much CPU as a
   few hundred events' rows (26 ms a batch, measured: 1.15 CPU-s per 1,000
   turns in batches of 85 events, 0.16 in batches of 2,000). ClickHouse is
   the analytics sink, never on the path to recall.

A crash anywhere replays from the last commit; both projections are
idempotent, so a replay only rewrites what is already there. The position of
a recent turn is its offset in the turns partition, which orders one user's
turns like the embedded log's sequence numbers do.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from confluent_kafka import Consumer, KafkaException, Message, TopicPartition

from engram.core.embedding import Embedder
from engram.projections.clickhouse import ClickHouseProjector
from engram.projections.clickhouse_client import ClickHouseTarget, Connection
from engram.projections.clickhouse_shared import shared_connection, wanted
from engram.projections.projector import PROJECTED_TYPES, CurrentMemoryProjector
from engram.projections.weaviate_store import WeaviateStore
from engram.schemas import topics as t
from engram.schemas.base import Event
from engram.schemas.codec import EventDecodeError, decode

from .erasure import AnalyticsErasures, cipher_for
from .kafka_retry import KafkaUnavailable, RetryPolicy, retrying
from .topics import Namespace
from .trace import tracer

log = logging.getLogger("engram.distributed.projector")

PROJECTOR_ROLE = "projectors"
WRITTEN_ROLE = "projectors-written"
"""The consumer group under which a projector records, after each Weaviate flush, the offsets it flushed:
what recall reads holds every record below them (`engram.distributed.freshness`). Nobody consumes with
it; the projectors' own group commits later, once ClickHouse holds the records too."""
RETRIES = 5
STATS_INTERVAL = 10.0
"""Seconds between two log lines of the projector's counters."""
COMMIT_RETRY = RetryPolicy(deadline=30.0)
"""A commit retries transient errors this long; then its offsets wait for the next commit."""
ANALYTICS_QUIET = 0.25
"""A stream without a record this long is quiet: the buffered events go to ClickHouse (and the offsets are
committed) without waiting out the interval, so a caller waiting for its records sees them soon."""


@dataclass(frozen=True)
class ProjectorSettings:
    """Where a projector reads and writes. Every field has an option of `engram worker`."""

    bootstrap: str
    namespace: Namespace = field(default_factory=Namespace)
    weaviate_url: str = "http://127.0.0.1:8080"
    weaviate_grpc_port: int = 50051
    clickhouse: ClickHouseTarget | None = None
    batch_size: int = 2000
    poll_timeout: float = 0.05
    analytics_interval: float = 1.0
    analytics_max_events: int = 50_000
    session_timeout: float = 10.0
    instance_id: str | None = None

    @property
    def analytics_quiet(self) -> float:
        """Seconds without a record after which the stream counts as quiet: `ANALYTICS_QUIET`, at most half
        the interval."""
        return min(ANALYTICS_QUIET, self.analytics_interval / 2)

    @property
    def group(self) -> str:
        return self.namespace.app_id(PROJECTOR_ROLE)

    @property
    def written_group(self) -> str:
        return self.namespace.app_id(WRITTEN_ROLE)

    @property
    def topics(self) -> list[str]:
        return [self.namespace.topic(topic) for topic in t.CATALOGUE]


def weaviate_prefix(ns: Namespace) -> str:
    """The collection prefix of a namespace's Weaviate projection (generations do not share one).

    `/` cannot be part of a Kafka name, so prefix "a" generation 1 ("a/g1") is never prefix
    "ag1" generation 0; `collection_prefix` then encodes it injectively.
    """
    return ns.prefix + (f"/g{ns.generation}" if ns.generation else "")


class AnalyticsWriter:
    """Inserts events into ClickHouse in one batch per call.

    A chDB engine is shared with other processes under a lock (`clickhouse_shared`), and
    opening it is slow and holds the GIL (it stalled the projector's main thread). So the
    writer keeps it open across inserts and gives it back (`release_if_due`) when another
    process asks for it (`wanted`), after `idle_release` seconds without an insert, or after
    `hold` seconds in all.
    """

    def __init__(self, target: ClickHouseTarget, hold: float = 60.0, idle_release: float = 5.0) -> None:
        self.target = target
        self.hold = hold
        self.idle_release = idle_release
        self._schema_ready = False
        self.erasures = AnalyticsErasures()
        self._held: contextlib.ExitStack | None = None
        self._conn: Connection | None = None
        self._opened_at = self._written_at = 0.0

    def write(self, events: Sequence[Event]) -> int:
        """Insert, retrying with backoff (rows are deduplicated by event id, so a retry is harmless)."""
        return with_backoff(lambda: self._write(events), "clickhouse insert", self.release)

    def _write(self, events: Sequence[Event]) -> int:
        if not events:
            return 0
        projector = ClickHouseProjector(self._connection())
        if not self._schema_ready:
            projector.create_schema()
            self._schema_ready = True
        projector.apply_all(events)
        projector.flush()
        self.erasures.apply(projector, events)  # after the rows it blanks are in
        self._written_at = time.monotonic()
        self.release_if_due()
        return len(events)

    def _connection(self) -> Connection:
        if self._conn is None:
            self._held = contextlib.ExitStack()
            self._conn = self._held.enter_context(shared_connection(self.target))
            self._opened_at = time.monotonic()
        return self._conn

    @property
    def holding(self) -> bool:
        return self._held is not None

    def release_if_due(self) -> None:
        """Give the engine back if a reader waits for it, it sat idle, or it was held long enough."""
        if self._held is None:
            return
        now = time.monotonic()
        if (wanted(self.target) or now - self._written_at >= self.idle_release
                or now - self._opened_at >= self.hold):
            self.release()

    def release(self) -> None:
        """Close the engine (and its lock) if this writer holds it."""
        held, self._held, self._conn = self._held, None, None
        if held is not None:
            held.close()


Offsets = dict[tuple[str, int], int]
T = TypeVar("T")


def with_backoff(step: Callable[[], T], what: str, on_failure: Callable[[], None] | None = None) -> T:
    """Run `step`, retrying a failure with exponential backoff; the last failure is raised.

    Every projector write is idempotent, so running the same step again is always safe.
    """
    for attempt in range(1, RETRIES + 1):
        try:
            return step()
        except Exception as exc:  # noqa: BLE001
            if on_failure is not None:
                on_failure()
            if attempt == RETRIES:
                raise
            log.warning("%s failed (attempt %d/%d): %r", what, attempt, RETRIES, exc)
            time.sleep(min(8.0, 0.5 * 2 ** (attempt - 1)))
    raise AssertionError("unreachable")


def insert_due(settings: ProjectorSettings, since: float, events: int, quiet: float, final: bool) -> bool:
    """Whether the buffered events go to ClickHouse now, `since` seconds after the last insert started and
    `quiet` seconds after the last record arrived: at the end, when `analytics_interval` passed or
    `analytics_max_events` are buffered, or once the stream is quiet (and the last insert as long ago)."""
    return (final or events >= settings.analytics_max_events or since >= settings.analytics_interval
            or min(quiet, since) >= settings.analytics_quiet)


def take(consumer: Consumer, limit: int, wait: float) -> list[Message]:
    """The records already fetched (up to `limit`) at once; with none there, the first to arrive within
    `wait` seconds and what came with it.

    Not `consume(limit, wait)`: that waits out the whole `wait` unless `limit` records arrive, a fixed
    delay on every record of a stream slower than `limit` per `wait`. Batches still grow with the
    load: what arrives while a batch is written to Weaviate is the next batch.
    """
    messages = consumer.consume(limit, timeout=0)
    if messages:
        return messages
    first = consumer.poll(wait)
    if first is None:
        return []
    return [first, *consumer.consume(limit - 1, timeout=0)] if limit > 1 else [first]


def _assignment(consumer: Consumer) -> list[TopicPartition]:
    try:
        return list(consumer.assignment())
    except (KafkaException, RuntimeError):
        return []


class ProjectorLoop:
    """Consume, project, flush, commit; `run` blocks until `stop()` (thread-safe) is called.

    ClickHouse inserts run on a background thread while the loop goes on with
    the next batches into Weaviate; the offsets of a batch are committed only
    when its ClickHouse insert has finished (and Weaviate was flushed before).
    """

    def __init__(self, settings: ProjectorSettings, embedder: Embedder,
                 store: WeaviateStore | None = None) -> None:
        self.settings = settings
        self.cipher = cipher_for(settings.bootstrap, settings.namespace.prefix)
        self.store = store or WeaviateStore.connect(settings.weaviate_url, settings.weaviate_grpc_port,
                                                    embedder.model_id, weaviate_prefix(settings.namespace),
                                                    self.cipher)
        self.current = CurrentMemoryProjector(self.store, embedder)
        self.analytics = AnalyticsWriter(settings.clickhouse) if settings.clickhouse else None
        self.counters: Counter[str] = Counter()
        self._stop = threading.Event()
        self._events: list[Event] = []
        self._uncommitted: Offsets = {}
        self._inflight: tuple[Future[int], Offsets] | None = None
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="engram-analytics")
        self._marks = Consumer({"bootstrap.servers": settings.bootstrap, "group.id": settings.written_group,
                                "enable.auto.commit": False})
        """Never subscribes: only commits the written marks (a group without members takes such commits)."""
        self._last_analytics = self._last_stats = self._last_record = time.monotonic()

    def stop(self) -> None:
        self._stop.set()

    def run(self, on_fatal: Callable[[str], None] | None = None) -> None:
        consumer = Consumer({
            "bootstrap.servers": self.settings.bootstrap, "group.id": self.settings.group,
            "enable.auto.commit": False, "auto.offset.reset": "earliest",
            "topic.metadata.refresh.interval.ms": 5000,
            # a killed projector's partitions move to its restart (or a peer) within seconds, not 45 s
            "session.timeout.ms": int(self.settings.session_timeout * 1000), "heartbeat.interval.ms": 1000,
            **({"group.instance.id": self.settings.instance_id} if self.settings.instance_id else {}),
        })
        consumer.subscribe(self.settings.topics)
        log.info("projector %s: reading %d topics", self.settings.group, len(self.settings.topics))
        try:
            while not self._stop.is_set():
                messages = take(consumer, self.settings.batch_size, self.settings.poll_timeout)
                self._fatal_on_error(lambda: with_backoff(lambda: self.handle(messages), "projector write",
                                                          self._count_write_failure), on_fatal)
                self._fatal_on_error(lambda: self._advance(consumer, idle=not messages), on_fatal)
            self._fatal_on_error(lambda: self._advance(consumer, idle=True, final=True), on_fatal)
        finally:
            consumer.close()
            self._marks.close()
            self.store.close()
            if self.analytics is not None:
                self._writer.submit(self.analytics.release)
            self._writer.shutdown(wait=False)

    def handle(self, messages: Sequence[Message]) -> None:
        """Steps 1 and 2: decode and project one batch (Weaviate flushed, analytics buffered)."""
        events: list[Event] = []
        offsets: Offsets = {}
        traced = self._trace(messages, "consumed")
        start = time.perf_counter()
        for msg in messages:
            topic, partition, offset = msg.topic(), msg.partition(), msg.offset()
            if msg.error() is not None or topic is None or partition is None or offset is None:
                continue
            offsets[(topic, partition)] = offset + 1
            try:
                event = decode(msg.value() or b"", self.cipher)
            except EventDecodeError:
                self.counters["undecodable"] += 1
                continue
            if event.type in PROJECTED_TYPES:
                self.current.apply(event, offset)
            events.append(event)
        applied = time.perf_counter()
        self.store.flush()
        self.counters["apply_ms"] += round(1000 * (applied - start))
        self.counters["write_ms"] += round(1000 * (time.perf_counter() - applied))
        self.counters["batches"] += bool(messages)
        self._log_stats()
        self._trace_again(traced, "written")
        self._mark_written(offsets)
        self._uncommitted.update(offsets)  # only after the flush: a retried batch is applied again in full
        self._events.extend(events)
        self.counters["events"] += len(events)

    def _mark_written(self, offsets: Offsets) -> None:
        """Record (asynchronously) that Weaviate holds the records below `offsets`. Best effort: a mark
        lost or late only makes a recall report itself less fresh than it is, never fresher."""
        if not offsets:
            return
        try:
            self._marks.commit(offsets=[TopicPartition(tp[0], tp[1], end) for tp, end in offsets.items()],
                               asynchronous=True)
            self._marks.poll(0)  # serves the earlier commits' results
        except (KafkaException, RuntimeError) as exc:
            self.counters["mark_failures"] += 1
            log.debug("projector: written marks not recorded: %s", exc)

    def _log_stats(self) -> None:
        now = time.monotonic()
        if now - self._last_stats >= STATS_INTERVAL:
            self._last_stats = now
            log.info("projector: %s; weaviate %s", dict(sorted(self.counters.items())),
                     dict(sorted(self.store.write_stats.items())))

    def _trace(self, messages: Sequence[Message], hop: str) -> dict[str, list[bytes]]:
        """Trace hop lines (`engram.distributed.trace`) of the traced records, by catalogue topic."""
        if (trace := tracer()) is None:
            return {}
        traced: dict[str, list[bytes]] = {}
        for msg in messages:
            key, topic = msg.key(), msg.topic()
            if topic is not None and key is not None and trace.wants(key):
                traced.setdefault(self.settings.namespace.catalogue_name(topic) or topic, []).append(key)
        self._trace_again(traced, hop)
        return traced

    @staticmethod
    def _trace_again(traced: dict[str, list[bytes]], hop: str) -> None:
        if traced and (trace := tracer()) is not None:
            for topic, keys in traced.items():
                trace.hops(keys, f"projector.{hop}:{topic}")

    def _advance(self, consumer: Consumer, idle: bool, final: bool = False) -> None:
        """Step 3: commit what a finished ClickHouse insert covered; start the next insert when due."""
        if self._inflight is not None:
            if not final and not self._inflight[0].done():
                return  # never wait for ClickHouse here: the next Weaviate batches go first
            self._finish_insert(consumer)
        now = time.monotonic()
        if not idle:
            self._last_record = now
        due = insert_due(self.settings, since=now - self._last_analytics, events=len(self._events),
                         quiet=now - self._last_record, final=final)
        if not self._uncommitted or not due:
            if idle and self.analytics is not None and self.analytics.holding:
                self._writer.submit(self.analytics.release_if_due).result()
            return
        events, offsets = self._events, self._uncommitted
        self._events, self._uncommitted = [], {}
        self._last_analytics = time.monotonic()
        if self.analytics is None:
            self._commit(consumer, offsets)
            return
        self._inflight = (self._writer.submit(self.analytics.write, events), offsets)
        if final:
            self._finish_insert(consumer)

    def _finish_insert(self, consumer: Consumer) -> None:
        """Wait for the ClickHouse insert in flight, then commit the offsets it covered.

        Once, not again on a failed commit: the offsets it puts back are committed on the next
        round, after the loop polled the consumer (a rebalance after a broker restart is served
        there). Trying again at once, without polling, recursed until RecursionError when the
        broker answered every commit with UNKNOWN_MEMBER_ID, and stopped the worker.
        """
        assert self._inflight is not None
        future, offsets = self._inflight
        future.result()
        self._inflight = None
        self._commit(consumer, offsets)

    def _commit(self, consumer: Consumer, offsets: Offsets) -> None:
        """Commit, retrying transient errors (a broker restart, a coordinator moving).

        If the commit still fails, the offsets of partitions this consumer still owns go back
        to the uncommitted set, so the next commit covers them even when no new record comes
        (`ingest --wait` waits for these commits); a partition that moved in a rebalance is
        left to its new owner, which applies its records again.
        """
        try:
            retrying(lambda: consumer.commit(
                offsets=[TopicPartition(tp[0], tp[1], end) for tp, end in offsets.items()], asynchronous=False),
                "projector commit", COMMIT_RETRY)
        except (KafkaException, KafkaUnavailable) as exc:
            self.counters["commit_failures"] += 1
            owned = {(tp.topic, tp.partition) for tp in _assignment(consumer)}
            for tp, end in offsets.items():
                if tp in owned and end > self._uncommitted.get(tp, -1):
                    self._uncommitted[tp] = end
            log.warning("projector: commit failed (%s); will commit again (owned partitions) or re-apply", exc)

    def _fatal_on_error(self, step: Callable[[], Any], on_fatal: Callable[[str], None] | None) -> None:
        """Writes retry with backoff inside `step`; a failure that still reaches here stops the projector."""
        try:
            step()
        except Exception as exc:  # noqa: BLE001
            log.exception("projector: a write or commit failed for good")
            if on_fatal is not None:
                on_fatal(f"projector: {exc!r}")
            raise

    def _count_write_failure(self) -> None:
        self.counters["write_failures"] += 1
