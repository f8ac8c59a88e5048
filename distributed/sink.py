"""The workers' output: derived records and state writes through confluent-kafka, with awaitable acks.

faust's own producer (aiokafka, pure Python) costs about 110 µs per record on
these machines, which alone would cap a worker below the throughput target;
librdkafka produces in a few µs. The runtime needs only "send these, in this
order per partition, and tell me when the broker has them all", which is what
`Sink.send_all` does: an idempotent producer (acks=all, no reordering on
retry), the Java-compatible murmur2 partitioner for keyed records (the one
aiokafka and the SDK use), and one asyncio future per call resolved from the
delivery callbacks. librdkafka retries failed sends itself (within
`message.timeout.ms`, without duplicates); an error at `produce` time that is
transient (`kafka_retry`) is retried here.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from confluent_kafka import KafkaError, KafkaException, Message, Producer

from .kafka_retry import Backoff, KafkaUnavailable
from .topics import MAX_STATE_BYTES

log = logging.getLogger("engram.distributed.sink")


@dataclass(frozen=True)
class Send:
    """One record to produce; `partition` None means "by key"."""

    topic: str
    key: bytes
    value: bytes
    partition: int | None = None
    headers: Sequence[tuple[str, bytes]] = ()


class SinkError(RuntimeError):
    """The broker did not take every record of a `send_all` (the caller must not ack its inputs)."""


class _Pending:
    """Counts down the deliveries of one `send_all` call and resolves its future from the poll thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop, count: int) -> None:
        self.loop, self.left, self.errors = loop, count, []  # type: ignore[var-annotated]
        self.future: asyncio.Future[None] = loop.create_future()

    def delivered(self, err: KafkaError | None, _msg: Message) -> None:
        if err is not None:
            self.errors.append(err)
        self.left -= 1
        if self.left == 0:
            self.loop.call_soon_threadsafe(self._finish)

    def _finish(self) -> None:
        if self.future.done():
            return
        if self.errors:
            self.future.set_exception(SinkError(f"{len(self.errors)} record(s) not delivered: {self.errors[0]}"))
        else:
            self.future.set_result(None)


def serve_callbacks(producer: Producer, stop: threading.Event, interval: float, name: str) -> None:
    """A producer's poll thread: serve delivery callbacks until `stop` is set."""
    while not stop.is_set():
        try:
            producer.poll(interval)
        except Exception:  # noqa: BLE001 - a callback error must not kill the poller
            log.exception("%s poll failed", name)


class Sink:
    """An idempotent confluent-kafka producer with awaitable, ordered batches."""

    def __init__(self, bootstrap: str, linger_ms: float = 2.0) -> None:
        self._producer = Producer({
            "bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all",
            "linger.ms": linger_ms, "partitioner": "murmur2_random",
            "message.max.bytes": MAX_STATE_BYTES + 65536, "queue.buffering.max.kbytes": 512 * 1024,
        })
        self._stop = threading.Event()
        self._poller = threading.Thread(target=serve_callbacks, args=(self._producer, self._stop, 0.05, "sink"),
                                        name="engram-sink-poll", daemon=True)
        self._poller.start()

    async def send_all(self, sends: Sequence[Send]) -> None:
        """Produce in order and return once the broker acknowledged every record (raises `SinkError`)."""
        if not sends:
            return
        pending = _Pending(asyncio.get_running_loop(), len(sends))
        for send in sends:
            await self._produce(send, pending)
        await pending.future

    async def _produce(self, send: Send, pending: _Pending) -> None:
        backoff: Backoff | None = None
        while True:
            try:
                if send.partition is None:
                    self._producer.produce(send.topic, value=send.value, key=send.key, headers=list(send.headers),
                                           on_delivery=pending.delivered)
                else:
                    self._producer.produce(send.topic, value=send.value, key=send.key, partition=send.partition,
                                           headers=list(send.headers), on_delivery=pending.delivered)
                return
            except BufferError:  # local queue full: let the poll thread drain it
                await asyncio.sleep(0.005)
            except KafkaException as exc:  # e.g. a partition unknown while metadata is refreshed: retried
                backoff = backoff or Backoff(f"producing to {send.topic}")
                try:
                    delay = backoff.failed(exc)
                except (KafkaException, KafkaUnavailable) as final:
                    raise SinkError(str(final)) from exc
                await asyncio.sleep(delay)

    def close(self, timeout: float = 30.0) -> None:
        self._producer.flush(timeout)
        self._stop.set()
        self._poller.join(timeout=1.0)
