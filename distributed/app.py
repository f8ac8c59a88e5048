"""faust-streaming wiring of the topology: one agent per stage, thin adapters around `StageRunner`.

Commit order, per batch of records (at-least-once; exactly-once mode is not used):

1. Compare the records with the stage's progress (`engram.distributed.progress`):
   drop those already handled, read back any that faust skipped.
2. `StageRunner.run_batch`: decode, skip what each key's state already applied,
   run the pure processor (no I/O). The new values (states, then progress) go
   into the in-memory table at once, so the next batch computes on them.
3. Landing, on one chain per stage so batches land in the order they were
   computed: produce every derived event and dead letter (`Sink`: idempotent
   confluent-kafka producer) and wait until the broker has acknowledged all of
   them (acks=all); then write the batch's new values to the table's compacted
   changelog (states before progress in each changelog partition) and wait for
   those acknowledgements.
4. The agent does not wait for its batch to land before taking the next one
   (at most `MAX_LANDING` batches are landing at a time): broker round trips
   overlap the next batch's computing. `take_events` acks the records when the
   agent takes the next batch, so faust may commit offsets of a batch that has
   not landed yet. Those offsets only say where fetching resumes; what is done
   is the progress step 3 recorded, and records between the two are read back
   (step 1, and the tail check) after a crash.

A crash before a batch's changelog write completes replays the batch: the
durable states do not know it, the pure processor derives the same events with
the same ids (harmless duplicates). A crash after it replays nothing (progress)
or, for the part of a batch whose states landed without their progress, skips
per key (applied marks): nothing is applied twice and nothing is lost. A batch
is never split by cancellation (it runs shielded, and a stopping agent waits
for its landings), a rebalance waits until every landing of the worker is done
before partitions move, and any I/O failure stops the worker hard (`on_fatal`)
so the restart replays it.

Fencing a rebalance. When partitions move, the old owner must not land
anything once the new owner may have started: the new owner restores from the
durable progress and produces from there, and a batch the old owner lands
later would put later turns' candidates before earlier ones (and stale values
into the changelog). So `_before_revoke` takes the stage lock (waiting for a
batch still computing, e.g. reading back a gap), waits until every landing of
the stage is acknowledged, and fences the stage: from then on only records of
partitions assigned in the new generation are computed (records faust had
buffered for revoked partitions are dropped unhandled: their progress is not
recorded, so the new owner reads them back). If the landings cannot finish
well within the rebalance timeout, the worker stops hard (`on_fatal`): a dead
process lands nothing. A member evicted without a revoke (a stall longer than
the session timeout) is not fenced here; the chain gate (`engram.distributed.chain`)
still applies each origin's records in origin order then. A timer (`_tail_check`) reads back the
last records of a quiet partition that faust committed without delivering.
Another (`_govern`, in the stage that consumes `GovernanceTick`) is the
governance edge: it produces ticks to the commands topic (`engram.distributed.governor`).
The table is faust's (memory store, restored from the changelog on start and
on rebalance); only its writes bypass faust's producer, to be awaited in order.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import faust

from engram.schemas import topics as t
from engram.streams.govern import tick_bucket
from engram.streams.processor import ProcessorContext
from engram.streams.topology import Stage, build_topology

from .erasure import cipher_for
from .faust_consumer import DEFAULT_FETCH_MAX_WAIT, app_with_fetch_wait
from .gapreader import GapReader
from .governor import tick_sends, user_keys
from .progress import Gap
from .records import BatchResult, Inbound
from .runner import DecodeCache, StageRunner
from .sink import Send, Sink
from .topics import MAX_STATE_BYTES, ROLES, Namespace
from .trace import tracer

log = logging.getLogger("engram.distributed.worker")

EXIT_FATAL = 70
MAX_LANDING = 2
"""Batches of one stage whose outputs and states may be on their way to the broker at once."""


def _exit_now(reason: str) -> None:
    log.critical("stopping the worker without acknowledging the batch: %s", reason)
    logging.shutdown()
    os._exit(EXIT_FATAL)


@dataclass(frozen=True)
class WorkerSettings:
    """How a worker connects and batches. Every field has a CLI option of `engram worker`."""

    bootstrap: str
    namespace: Namespace = field(default_factory=Namespace)
    role: str = "processors"
    batch_size: int = 1000
    batch_within: float = 0.05
    commit_interval: float = 1.0
    session_timeout: float = 10.0
    instance_id: str | None = None
    datadir: Path | None = None
    recent_ids: int = 256
    standby_replicas: int = 0
    stats_interval: float = 30.0
    tail_check: float = 2.0
    stall_after: float = 30.0
    governance_interval: float = 3600.0
    """Seconds between governance ticks (wall clock rounded down to it); 0 disables the timer."""
    fetch_max_wait: float = DEFAULT_FETCH_MAX_WAIT
    """Longest wait of one Kafka fetch (faust's own is 1.5 s: see `engram.distributed.faust_consumer`)."""
    on_fatal: Callable[[str], None] = _exit_now


def stages_for(role: str) -> tuple[Stage, ...]:
    """The topology stages a role runs, in topology order."""
    names = ROLES[role]
    return tuple(stage for stage in build_topology() if stage.processor.name in names)


def dead_letter_owner(stages: Sequence[Stage], stage: Stage) -> Callable[[str, str | None], bool]:
    """Exactly one stage of an app dead-letters a bad record: the first that reads its topic and type."""
    def owns(topic: str, event_type: str | None) -> bool:
        for candidate in stages:
            reads = any(source.name == topic for source in candidate.inputs)
            if reads and (event_type is None or t.TOPIC_OF_TYPE.get(event_type) != topic
                          or event_type in candidate.processor.consumes):
                return candidate is stage
        return False
    return owns


def build_app(settings: WorkerSettings, ctx: ProcessorContext | None = None) -> faust.App:
    """A faust app with one agent and one table (state and progress) per stage of the role."""
    from engram.streams.context import default_context

    ns = settings.namespace
    app = app_with_fetch_wait(ns.app_id(settings.role), settings.fetch_max_wait, **_app_config(settings))
    stages = stages_for(settings.role)
    context = ctx or default_context()
    cipher = cipher_for(settings.bootstrap, ns.prefix)
    sink, decoded = Sink(settings.bootstrap), DecodeCache(cipher=cipher)
    for stage in stages:
        runner = StageRunner(stage.processor, context, ns, dead_letter_owner(stages, stage), settings.recent_ids,
                             decoded=decoded, cipher=cipher)
        FaustStage(app, settings, stage, runner, sink).install()
    return app


def _app_config(settings: WorkerSettings) -> dict[str, Any]:
    brokers = [f"kafka://{host.strip()}" for host in settings.bootstrap.split(",") if host.strip()]
    datadir = settings.datadir or Path(os.environ.get("TMPDIR", "/tmp")) / "engram-faust"
    datadir.mkdir(parents=True, exist_ok=True)
    config: dict[str, Any] = dict(
        broker=brokers, store="memory://", autodiscover=False, datadir=str(datadir),
        topic_partitions=t.TURNS.partitions, topic_allow_declare=False, topic_disable_leader=True,
        consumer_auto_offset_reset="earliest", processing_guarantee="at_least_once",
        broker_commit_interval=settings.commit_interval, broker_session_timeout=settings.session_timeout,
        broker_heartbeat_interval=min(1.0, settings.session_timeout / 4), broker_request_timeout=30.0,
        producer_acks=-1, producer_max_request_size=MAX_STATE_BYTES + 65536, producer_linger_ms=1,
        web_enabled=False, table_standby_replicas=settings.standby_replicas, stream_recovery_delay=0.0,
        worker_redirect_stdouts=False,
        stream_wait_empty=False,  # a rebalance does not wait for buffered records: progress makes replays exact
    )
    if settings.instance_id:
        config["consumer_group_instance_id"] = settings.instance_id
    return config


class FaustStage:
    """The thin adapter of one stage: batches of records to the runner, results out in the commit order.

    One agent per stage: while one stage waits for the broker's acknowledgements, the others compute.
    """

    def __init__(self, app: faust.App, settings: WorkerSettings, stage: Stage, runner: StageRunner,
                 sink: Sink) -> None:
        self.app, self.settings, self.stage, self.runner, self.sink = app, settings, stage, runner, sink
        self.name = stage.processor.name
        self.inputs = frozenset(settings.namespace.topic(x) for x in stage.inputs)
        self.table: Any = None
        self.gaps = GapReader(settings.bootstrap)
        self._lock = asyncio.Lock()
        self._last_seen: dict[tuple[str, int], float] = {}
        self._last_stats = time.monotonic()
        self._last_tick: datetime | None = None
        self._landing: list[asyncio.Future[None]] = []
        self._owned: frozenset[tuple[str, int]] | None = None
        """Input partitions of the current generation; None until the first assignment (then all are taken)."""

    def install(self) -> None:
        ns, raw = self.settings.namespace, _raw_schema()
        changelog = self.app.topic(ns.changelog(self.settings.role, self.name), schema=raw,
                                   partitions=t.TURNS.partitions, compacting=True, internal=False)
        self.table = self.app.Table(f"{self.name}-state", partitions=t.TURNS.partitions,
                                    changelog_topic=changelog, schema=raw)
        self.app.agent(self.app.topic(*sorted(self.inputs), schema=raw), name=f"engram-{self.name}")(self._agent)
        self.app.timer(self.settings.tail_check, name=f"engram-{self.name}-tail-check")(self._tail_check)
        if self.settings.governance_interval > 0 and "GovernanceTick" in self.stage.processor.consumes:
            self.app.timer(self.settings.governance_interval, name=f"engram-{self.name}-govern")(self._govern)
        self.app.on_partitions_revoked.connect(self._before_revoke)
        self.app.on_partitions_assigned.connect(self._after_assign)

    # -- the agent ------------------------------------------------------------------------------
    async def _agent(self, stream: Any) -> None:
        async for events in stream.take_events(self.settings.batch_size, self.settings.batch_within):
            task = asyncio.ensure_future(self._batch([_inbound(event.message) for event in events]))
            try:
                await asyncio.shield(task)
            except asyncio.CancelledError:
                await task  # finish computing the batch and let it land before the agent stops
                await self.landed()
                raise

    async def _batch(self, records: list[Inbound]) -> None:
        self._trace(records, "took")
        now = time.monotonic()
        for r in records:
            self._last_seen[(r.topic, r.partition)] = now
        async with self._lock:
            owned = self._owned
            if owned is not None:
                kept = [r for r in records if (r.topic, r.partition) in owned]
                if len(kept) < len(records):
                    self.runner.counters["fenced"] += len(records) - len(kept)
                records = kept
            if records:
                await self._guarded(records, self.runner.gaps(records, self.table.data))

    async def _guarded(self, records: list[Inbound], gaps: list[Gap]) -> None:
        try:
            await self._handle(records, gaps)
        except Exception as exc:  # noqa: BLE001 - fail-stop: never ack a batch that was not fully handled
            log.exception("stage %s: batch failed", self.name)
            self.settings.on_fatal(f"stage {self.name}: {exc!r}")
            raise

    async def _handle(self, records: list[Inbound], gaps: list[Gap]) -> None:
        """Steps 1-2 of the commit order here; step 3 on the landing chain."""
        filled = await self.gaps.read(gaps) if gaps else {}
        result = self.runner.run_batch(records, self.table.data, filled)
        for write in result.writes:
            self.table.data[write.key] = write.value
        self._stats(result)
        self._trace(records, "computed")
        if not (result.outputs or result.writes):
            return
        self._landing = [f for f in self._landing if not f.done()]
        previous = self._landing[-1] if self._landing else None
        self._landing.append(asyncio.ensure_future(self._land(previous, result, records)))
        if len(self._landing) > MAX_LANDING:
            await asyncio.shield(self._landing[0])

    async def _land(self, previous: asyncio.Future[None] | None, result: BatchResult,
                    records: Sequence[Inbound] = ()) -> None:
        """Step 3: outputs acknowledged, then states and progress acknowledged; after the batch before."""
        try:
            if previous is not None:
                await previous
            await self.sink.send_all([Send(o.topic, o.key, o.value, o.partition, o.headers) for o in result.outputs])
            self._trace(records, "acked")
            changelog = self.table.changelog_topic.get_topic_name()
            await self.sink.send_all([Send(changelog, w.key, w.value, w.partition) for w in result.writes])
        except Exception as exc:  # noqa: BLE001 - fail-stop: the restart replays what did not land
            log.exception("stage %s: landing a batch failed", self.name)
            self.settings.on_fatal(f"stage {self.name}: {exc!r}")
            raise

    async def landed(self) -> None:
        """Wait until every batch computed so far has landed (outputs and changelog acknowledged)."""
        while self._landing:
            pending, self._landing = self._landing, []
            await asyncio.gather(*pending)

    async def _before_revoke(self, *_: Any, **__: Any) -> None:
        """Partitions may move to another worker: what this one computed must be durable first, then fence."""
        limit = float(self.app.conf.broker_rebalance_timeout) / 2
        try:
            await asyncio.wait_for(self._fence(), timeout=limit)
        except asyncio.TimeoutError:
            self.settings.on_fatal(f"stage {self.name}: batches still landing {limit:.0f} s into a rebalance")
            raise

    async def _fence(self) -> None:
        async with self._lock:
            await self.landed()
            self._owned = frozenset()

    async def _after_assign(self, *_: Any, **__: Any) -> None:
        """A new generation: compute the records of the partitions assigned now (and only those)."""
        self._owned = frozenset((tp.topic, tp.partition) for tp in self.app.consumer.assignment()
                                if tp.topic in self.inputs)

    # -- the tail check ---------------------------------------------------------------------------
    async def _tail_check(self, *_: Any) -> None:
        """Timer: records faust committed but never delivered, with no later record to reveal the gap."""
        if not self._steady():
            return
        try:
            ends = await self._skipped_tails()
        except Exception:  # noqa: BLE001 - a failed check is retried at the next tick
            log.warning("stage %s: tail check failed", self.name, exc_info=True)
            return
        async with self._lock:
            gaps = self.runner.tail_gaps(self.table.data, ends) if ends and self._steady() else []
            if gaps:
                await self._guarded([], gaps)

    async def _skipped_tails(self) -> dict[tuple[str, int], int]:
        """End offsets of quiet partitions faust committed up to the end (or that look stuck)."""
        now = time.monotonic()
        quiet = {(tp.topic, tp.partition): now - self._last_seen.get((tp.topic, tp.partition), 0.0)
                 for tp in self.app.consumer.assignment() if tp.topic in self.inputs}
        quiet = {tp: q for tp, q in quiet.items() if q >= self.settings.tail_check}
        if not quiet:
            return {}
        ends = await self.gaps.ends(list(quiet))
        committed = await self.gaps.committed(self.app.conf.id, list(quiet))
        return {tp: end for tp, end in ends.items()
                if committed.get(tp, -1) >= end or quiet[tp] >= self.settings.stall_after}

    # -- the governance timer -----------------------------------------------------------------
    async def _govern(self, *_: Any) -> None:
        """Timer (an edge, so it may read the clock): one tick per user of the partitions this worker owns."""
        if not self._steady():
            return  # a rebalance is under way: the next interval covers these users
        as_of = tick_bucket(datetime.now(timezone.utc), self.settings.governance_interval)
        if as_of == self._last_tick:
            return
        owned = frozenset(tp.partition for tp in self.app.consumer.assignment() if tp.topic in self.inputs)
        sends = tick_sends(user_keys(list(self.table.data.keys()), owned, t.TURNS.partitions),
                           self.settings.namespace, as_of)
        try:
            await self.sink.send_all(sends)
        except Exception:  # noqa: BLE001 - the next interval's ticks cover these users
            log.warning("stage %s: governance ticks not sent", self.name, exc_info=True)
            return
        self._last_tick = as_of
        log.info("stage %s: %d governance tick(s) as of %s", self.name, len(sends), as_of.isoformat())

    def _steady(self) -> bool:
        """Tables restored and no rebalance under way (otherwise progress cannot be trusted yet)."""
        app = self.app
        recovery = getattr(app.tables, "recovery", None)  # faust's TableManager, not on its abstract type
        return bool(recovery is not None and recovery.completed.is_set() and not app.rebalancing
                    and app.flow_control.is_active() and app.consumer.assignment())

    def _trace(self, records: Sequence[Inbound], hop: str) -> None:
        """Trace hop lines (`engram.distributed.trace`) for the traced records, per input topic."""
        if (trace := tracer()) is None:
            return
        by_topic: dict[str, list[bytes | None]] = {}
        for r in records:
            if trace.wants(r.key):
                by_topic.setdefault(r.topic, []).append(r.key)
        for topic, keys in by_topic.items():
            trace.hops(keys, f"{self.name}.{hop}:{self.settings.namespace.catalogue_name(topic) or topic}")

    def _stats(self, result: BatchResult) -> None:
        now = time.monotonic()
        if now - self._last_stats >= self.settings.stats_interval:
            self._last_stats = now
            log.info("stage %s: %s", self.name, dict(sorted(self.runner.counters.items())))
        if result.counts.get("dead_lettered"):
            log.warning("stage %s: dead-lettered %d record(s)", self.name, result.counts["dead_lettered"])


def _raw_schema() -> faust.Schema:
    """Keys and values stay bytes: the runner decodes (and dead-letters) them itself."""
    return faust.Schema(key_type=bytes, value_type=bytes, key_serializer="raw", value_serializer="raw")


def _inbound(message: Any) -> Inbound:
    headers = message.headers or ()
    if isinstance(headers, dict):
        headers = list(headers.items())
    return Inbound(message.topic, message.partition, message.offset, message.key, message.value,
                   float(message.timestamp or 0.0), tuple(headers))

