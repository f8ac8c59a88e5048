"""faust-streaming wiring of the topology: one agent per stage, thin adapters around `StageRunner`.

Commit order, per batch of records (at-least-once; exactly-once mode is not used):

1. `StageRunner.run_batch`: decode, skip what the key's state already applied,
   run the pure processor (no I/O).
2. Produce every derived event and dead letter, and wait until the broker has
   acknowledged all of them (acks=all).
3. Write each changed key's new value (state + applied marks, one value) to the
   table and its compacted changelog, and wait for those acknowledgements.
4. Return: `take_events` acks the batch's records; faust's commit loop commits
   acked offsets every `commit_interval` (after flushing its producer).

A crash after 2 replays the batch: the state does not know it, the pure
processor derives the same events with the same ids (harmless duplicates). A
crash after 3 replays it too, but each key's applied marks say "done", so
nothing is applied twice and nothing is lost. A batch is never split by
cancellation (it runs shielded), and any I/O failure stops the worker hard
(`on_fatal`) before the records are acked, so the supervisor's restart replays
them.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import faust

from engram.schemas import topics as t
from engram.streams.processor import ProcessorContext
from engram.streams.topology import Stage, build_topology

from .runner import BatchResult, Inbound, StageRunner
from .topics import MAX_STATE_BYTES, ROLES, Namespace

log = logging.getLogger("engram.distributed.worker")

EXIT_FATAL = 70


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
            if reads and (event_type is None or event_type not in t.TOPIC_OF_TYPE
                          or event_type in candidate.processor.consumes):
                return candidate is stage
        return False
    return owns


def build_app(settings: WorkerSettings, ctx: ProcessorContext | None = None) -> faust.App:
    """A faust app with one agent (and, if stateful, one table) per stage of the role."""
    from engram.runtime.context import default_context

    ns = settings.namespace
    app = faust.App(ns.app_id(settings.role), **_app_config(settings))
    stages = stages_for(settings.role)
    context = ctx or default_context()
    for stage in stages:
        runner = StageRunner(stage.processor, context, ns, dead_letter_owner(stages, stage), settings.recent_ids)
        FaustStage(app, settings, stage, runner).install()
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
    )
    if settings.instance_id:
        config["consumer_group_instance_id"] = settings.instance_id
    return config


class FaustStage:
    """The thin adapter of one stage: records in batches to the runner, results out in commit order."""

    def __init__(self, app: faust.App, settings: WorkerSettings, stage: Stage, runner: StageRunner) -> None:
        self.app = app
        self.settings = settings
        self.stage = stage
        self.runner = runner
        self.name = stage.processor.name
        self.table: Any = None
        self._last_stats = time.monotonic()

    def install(self) -> None:
        ns = self.settings.namespace
        channel = self.app.topic(*(ns.topic(s) for s in self.stage.inputs), schema=_raw_schema())
        if self.runner.stateful:
            changelog = self.app.topic(ns.changelog(self.settings.role, self.name), schema=_raw_schema(),
                                       partitions=t.TURNS.partitions, compacting=True, internal=False)
            self.table = self.app.Table(f"{self.name}-state", partitions=t.TURNS.partitions,
                                        changelog_topic=changelog, schema=_raw_schema())
        self.app.agent(channel, name=f"engram-{self.name}")(self._agent)

    async def _agent(self, stream: Any) -> None:
        async for events in stream.take_events(self.settings.batch_size, self.settings.batch_within):
            task = asyncio.ensure_future(self._batch(events))
            try:
                await asyncio.shield(task)
            except asyncio.CancelledError:
                await task  # finish the batch (outputs, then state) before take_events acks it
                raise

    async def _batch(self, events: Sequence[Any]) -> None:
        try:
            records = [_inbound(event.message) for event in events]
            store = self.table.data if self.table is not None else {}
            result = self.runner.run_batch(records, store)
            await self._deliver(result)
            await self._write_state(result)
            self._stats(result)
        except Exception as exc:  # noqa: BLE001 - fail-stop: never ack a batch that was not fully handled
            log.exception("stage %s: batch failed", self.name)
            self.settings.on_fatal(f"stage {self.name}: {exc!r}")
            raise

    async def _deliver(self, result: BatchResult) -> None:
        """Step 2: derived events and dead letters, acknowledged by the broker."""
        producer = self.app.producer
        pending = [await producer.send(o.topic, o.key, o.value, None, None, o.headers) for o in result.outputs]
        if pending:
            await asyncio.gather(*pending)

    async def _write_state(self, result: BatchResult) -> None:
        """Step 3: the new state values (state + applied marks) into the table and its changelog."""
        if not result.writes:
            return
        producer, changelog = self.app.producer, self.table.changelog_topic.get_topic_name()
        pending = []
        for write in result.writes:
            self.table.data[write.key] = write.value
            pending.append(await producer.send(changelog, write.key, write.value, write.partition, None, None))
        await asyncio.gather(*pending)

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

