"""Reading back records faust skipped (see `progress`), with a plain confluent-kafka consumer."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections.abc import Sequence

from confluent_kafka import Consumer, TopicPartition

from .kafka_retry import retrying
from .offsets import committed_offsets, group_reader
from .progress import Gap

from .records import Inbound

log = logging.getLogger("engram.distributed.gaps")


class GapReader:
    """Reads `[start, end)` of a partition; never joins a group, never commits."""

    def __init__(self, bootstrap: str, timeout: float = 30.0) -> None:
        self.bootstrap = bootstrap
        self.timeout = timeout
        self._consumer: Consumer | None = None
        self._readers: dict[str, Consumer] = {}
        self._lock = threading.Lock()  # one consumer, used from executor threads one call at a time

    async def read(self, gaps: Sequence[Gap]) -> dict[tuple[str, int], list[Inbound]]:
        """The missing records per (topic, partition), read in a thread (gaps are rare and short)."""
        return await asyncio.get_running_loop().run_in_executor(None, self._read_all, list(gaps))

    async def ends(self, tps: Sequence[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """High watermarks (the offset after the last record)."""
        return await asyncio.get_running_loop().run_in_executor(None, self._ends, list(tps))

    def _ends(self, tps: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        consumer = self._client()

        def ask() -> dict[tuple[str, int], int]:
            for topic in sorted({t for t, _ in tps}):  # the consumer learns the leaders of topics it never read
                consumer.list_topics(topic, timeout=self.timeout)
            return {(t, p): consumer.get_watermark_offsets(TopicPartition(t, p), timeout=self.timeout)[1]
                    for t, p in tps}

        with self._lock:
            return retrying(ask, "reading end offsets")

    async def committed(self, group: str, tps: Sequence[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """The consumer group's committed offsets (-1 where none)."""
        return await asyncio.get_running_loop().run_in_executor(None, self._committed, group, list(tps))

    def _committed(self, group: str, tps: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """Through a consumer of the group's id that never joins it (see `readback.Probe` on why not admin)."""
        if group not in self._readers:
            self._readers[group] = group_reader(self.bootstrap, group)
        return committed_offsets(self._readers[group], group, tps, self.timeout)

    def _read_all(self, gaps: list[Gap]) -> dict[tuple[str, int], list[Inbound]]:
        out: dict[tuple[str, int], list[Inbound]] = {}
        for gap in gaps:
            with self._lock:
                records = self._read(gap)
            out.setdefault((gap.topic, gap.partition), []).extend(records)
            log.warning("read back %d record(s) faust did not deliver: %s[%d] %d..%d",
                        len(records), gap.topic, gap.partition, gap.start, gap.end - 1)
        return out

    def _read(self, gap: Gap) -> list[Inbound]:
        consumer = self._client()
        low, _ = retrying(lambda: consumer.get_watermark_offsets(TopicPartition(gap.topic, gap.partition),
                                                                 timeout=self.timeout), "reading watermarks")
        start = max(gap.start, low)  # records removed by retention cannot be read back
        if start >= gap.end:
            return []
        consumer.assign([TopicPartition(gap.topic, gap.partition, start)])
        records: list[Inbound] = []
        deadline = time.monotonic() + self.timeout
        while (not records or records[-1].offset < gap.end - 1) and time.monotonic() < deadline:
            wanted = min(10_000, gap.end - (records[-1].offset + 1 if records else start))
            for msg in consumer.consume(max(1, wanted), timeout=0.5):
                offset = msg.offset()
                if msg.error() is None and offset is not None and start <= offset < gap.end:
                    records.append(_inbound(msg))
        if not records or records[-1].offset < gap.end - 1:
            raise TimeoutError(f"could not read back {gap}")
        return records

    def _client(self) -> Consumer:
        if self._consumer is None:
            self._consumer = Consumer({
                "bootstrap.servers": self.bootstrap, "group.id": f"engram-gaps-{uuid.uuid4().hex[:8]}",
                "enable.auto.commit": False, "enable.partition.eof": False, "fetch.wait.max.ms": 10})
        return self._consumer

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None
        for reader in self._readers.values():
            reader.close()
        self._readers.clear()


def _inbound(msg: object) -> Inbound:
    headers = tuple(msg.headers() or ())  # type: ignore[attr-defined]
    return Inbound(msg.topic(), msg.partition(), msg.offset(), msg.key(), msg.value(),  # type: ignore[attr-defined]
                   msg.timestamp()[1] / 1000.0, headers)  # type: ignore[attr-defined]
