"""The chat platform's producer SDK: record a turn without waiting for the broker, never raise.

`TurnProducer.record_turn(...)` validates the turn, stamps it into an L0
`TurnRecorded` (the edge is the only place that reads the clock), and hands
it to confluent-kafka's in-memory queue; it returns at once. When a session
has gathered enough new messages or characters for the summary trigger to
possibly fire, a `SummaryRequested` follows the turn (the summarizer decides). The queue is
bounded (`buffer_messages`): when it is full the turn is dropped and counted,
never blocking the chat. An idempotent producer (acks=all) keeps broker
retries from duplicating or reordering records; delivery callbacks, served by
a background poll thread, count what was sent and what failed. `close()`
flushes. Records are keyed `tenant/user` with the Java-compatible murmur2
partitioner, the same one the workers' aiokafka producer uses, so a user's
turns, commands and derived events share one partition number. Transient
broker errors (a leader election, a broker restart) are retried by librdkafka
itself, without duplicates, for up to `message.timeout.ms` (120 s); only what
still fails after that is counted `failed` (and `engram ingest` reports it).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any, Literal

from confluent_kafka import KafkaError, Message, Producer

from engram.core.config import DEFAULT_CONFIG, SummaryConfig
from engram.schemas.base import Event
from engram.schemas.events import TurnRecorded
from engram.schemas.codec import encode
from engram.schemas.inputs import TurnInput, summary_request_for, to_turn_event
from engram.schemas.topics import topic_for

from .erasure import KeyGate, cipher_for
from .sink import serve_callbacks
from .topics import Namespace
from .trace import tracer
from .tracking import TYPE_HEADER

log = logging.getLogger("engram.distributed.producer")


SummaryChecks = Literal["trigger", "every_turn", "off"]
"""When the SDK asks the summarizer to check a session: when its trigger may fire, after every turn, never."""


class _SessionCounters:
    """Messages and characters per session since the last summary check (bounded, least recent dropped)."""

    def __init__(self, summary: SummaryConfig, limit: int = 100_000) -> None:
        self.messages = min(summary.first_snapshot_messages, summary.new_messages)
        self.characters = summary.new_characters
        self.limit = limit
        self._counts: OrderedDict[tuple[str, str, str], tuple[int, int]] = OrderedDict()

    def due(self, turn: TurnRecorded, lock: threading.Lock) -> bool:
        key = (turn.tenant_id, turn.user_id, turn.session_id)
        with lock:
            count, chars = self._counts.pop(key, (0, 0))
            count, chars = count + 1, chars + len(turn.content)
            if count >= self.messages or chars >= self.characters:
                return True
            self._counts[key] = (count, chars)
            if len(self._counts) > self.limit:
                self._counts.popitem(last=False)
            return False


class TurnProducer:
    """Produces L0 turns (and other edge events) to Kafka for the chat path. Thread-safe."""

    def __init__(self, bootstrap: str, namespace: Namespace | None = None, *, buffer_messages: int = 100_000,
                 linger_ms: float = 5.0, summary_checks: SummaryChecks = "trigger",
                 summary: SummaryConfig = DEFAULT_CONFIG.summary,
                 config: Mapping[str, Any] | None = None, poll_thread: bool = True) -> None:
        self.namespace = namespace or Namespace()
        self.cipher = cipher_for(bootstrap, self.namespace.prefix)
        """Seals the user text of every record under its owner's key (`engram.distributed.erasure`)."""
        self._buffer = buffer_messages
        self._gate = KeyGate(self.cipher, self._produce, self._failed) if self.cipher is not None else None
        """Holds the records of owners whose key is not here yet (fetched off the chat path)."""
        self.summary_checks = summary_checks
        self._sessions = _SessionCounters(summary)
        self.counters: Counter[str] = Counter()
        self.delivered: dict[tuple[str, int], int] = {}
        """(topic, partition) -> the offset after the last acknowledged record (what to wait for)."""
        self._lock = threading.Lock()
        self._producer = Producer({
            "bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all",
            "linger.ms": linger_ms, "queue.buffering.max.messages": buffer_messages,
            "queue.buffering.max.kbytes": 256 * 1024, "partitioner": "murmur2_random",
            "message.timeout.ms": 120_000,
            **dict(config or {}),
        })
        self._stop = threading.Event()
        self._poller = threading.Thread(target=serve_callbacks, args=(self._producer, self._stop, 0.1, "producer"),
                                        name="engram-producer-poll", daemon=True)
        if poll_thread:
            self._poller.start()

    # -- the chat path ---------------------------------------------------------------------
    def record_turn(self, *, tenant: str, user: str, agent: str, session: str, message_id: str, role: str,
                    content: str, ts: datetime | None = None, parent_id: str | None = None,
                    trace_id: str | None = None, metadata: Mapping[str, str] | None = None) -> bool:
        """Queue one chat turn (plus a summary check for its session); False if it was not queued."""
        try:
            turn = TurnInput(tenant=tenant, user=user, agent=agent, session=session, message_id=message_id,
                             role=role, content=content, ts=ts, parent_id=parent_id, trace_id=trace_id,
                             metadata=dict(metadata or {}))  # type: ignore[arg-type]
            event = to_turn_event(turn, datetime.now(timezone.utc))
        except Exception as exc:  # noqa: BLE001 - never raise into the chat path
            self._count("invalid")
            log.warning("turn not recorded (invalid): %s", str(exc)[:300])
            return False
        if not self.record(event):
            return False
        if self.summary_checks == "every_turn" or (
                self.summary_checks == "trigger" and self._sessions.due(event, self._lock)):
            self.record(summary_request_for(event))
        return True

    def record(self, event: Event) -> bool:
        """Queue any edge event (a turn, a summary request, a user command); False if not queued."""
        if (trace := tracer()) is not None:
            trace.hop(event.partition_key, "sdk.record")
        try:
            if self._gate is None:
                self._produce(event)
            else:
                self._gate.offer(event, self._buffer - len(self._producer))
        except BufferError:
            self._count("dropped")
            return False
        except Exception as exc:  # noqa: BLE001 - never raise into the chat path
            self._count("failed")
            log.warning("event %s not queued: %s", event.event_id, str(exc)[:300])
            return False
        self._count("queued")
        return True

    def _produce(self, event: Event) -> None:
        if (trace := tracer()) is not None:
            trace.hop(event.partition_key, "sdk.key")
        self._producer.produce(
            self.namespace.topic(topic_for(event.type)), key=event.partition_key.encode(),
            value=encode(event, self.cipher), headers=[(TYPE_HEADER, event.type.encode())], on_delivery=self._delivered)

    def _failed(self, count: int, reason: str) -> None:
        with self._lock:
            self.counters["failed"] += count
        log.warning("%d record(s) not sent: %s", count, reason)

    # -- delivery --------------------------------------------------------------------------
    def _delivered(self, err: KafkaError | None, msg: Message) -> None:
        if err is None:
            if (trace := tracer()) is not None:
                trace.hop(msg.key(), "sdk.acked")
            tp, offset = (msg.topic(), msg.partition()), msg.offset()
            with self._lock:
                self.counters["sent"] += 1
                if offset is not None and offset + 1 > self.delivered.get(tp, 0):  # type: ignore[arg-type]
                    self.delivered[tp] = offset + 1  # type: ignore[index]
        else:
            self._count("failed")
            log.warning("delivery to %s failed: %s", msg.topic(), err)

    def _count(self, name: str) -> None:
        with self._lock:
            self.counters[name] += 1

    @property
    def pending(self) -> int:
        """Records queued but not yet acknowledged or failed (with those waiting for their owner's key)."""
        return len(self._producer) + (self._gate.held if self._gate is not None else 0)

    def flush(self, timeout: float = 30.0) -> int:
        """Wait for queued records; returns how many are still pending."""
        began = time.monotonic()
        if self._gate is not None and not self._gate.drain(timeout):
            return self.pending
        try:
            return int(self._producer.flush(max(0.0, timeout - (time.monotonic() - began))))
        except Exception:  # noqa: BLE001
            log.exception("producer flush failed")
            return self.pending

    def close(self, timeout: float = 30.0) -> int:
        """Flush, stop the poll thread; returns how many records were left undelivered.

        Records still waiting for their owner's key when the timeout ends count as failed.
        """
        left = self.flush(timeout)
        if self._gate is not None and self._gate.abandon("closing: no data key in time"):
            left = self.pending
        self._stop.set()
        if self._poller.is_alive():
            self._poller.join(timeout=1.0)
        if left:
            self._count("unflushed")
            log.warning("closing with %d undelivered record(s)", left)
        return left

    def __enter__(self) -> TurnProducer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
