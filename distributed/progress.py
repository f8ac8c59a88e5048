"""Each stage's own record of how far it got, per input partition, kept in its state table.

faust commits consumer offsets for records it hands to no agent: during a
rebalance or a restart it acks ("skips") records fetched while its flow control
is paused, and its committed offsets can run ahead of the work (faust-streaming
issues #216, #221, #527). So the runtime does not trust them. After a batch's
derived events and states are durable, the stage writes, per input partition,
the next offset to process (`progress`) into its table, after the states in
the same changelog partition. On the next batch:

- a record below `progress` was fully handled before: it is skipped;
- a record above `progress` means faust skipped the records in between: the
  adapter reads that gap back from Kafka and they are processed first, in order.

Consumer offsets therefore only say where fetching starts; `progress` says
what is done.

The progress value is a JSON object: `next`, and what must land atomically with
it (`engram.distributed.chain`: the producer's chain links, the consumer's chain
heads and held-back records); `meta` hands that object to them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from .records import Inbound, StateWrite

PREFIX = b"\x00progress\x00"
"""Progress keys cannot collide with state keys: identifiers exclude control characters."""


def progress_key(topic: str, partition: int) -> bytes:
    return PREFIX + f"{topic}\x00{partition}".encode()


@dataclass(frozen=True)
class Gap:
    """Records `[start, end)` of one partition that faust did not deliver."""

    topic: str
    partition: int
    start: int
    end: int


class Progress:
    """Per input partition, the next offset not yet handled, as of this batch."""

    def __init__(self, store: Mapping[bytes, bytes]) -> None:
        self._store = store
        self._next: dict[tuple[str, int], int] = {}
        self._meta: dict[tuple[str, int], dict[str, Any]] = {}
        self._moved: set[tuple[str, int]] = set()

    def next_offset(self, topic: str, partition: int) -> int:
        tp = (topic, partition)
        if tp not in self._next:
            self._load(tp)
        return self._next[tp]

    def meta(self, topic: str, partition: int) -> dict[str, Any]:
        """The partition's whole progress value (mutable; changes are written with the progress)."""
        tp = (topic, partition)
        if tp not in self._meta:
            self._load(tp)
        return self._meta[tp]

    def touch(self, topic: str, partition: int) -> None:
        """Write this partition's progress value even if no record moved it (its `meta` changed)."""
        self.next_offset(topic, partition)
        self._moved.add((topic, partition))

    def _load(self, tp: tuple[str, int]) -> None:
        raw = self._store.get(progress_key(*tp))
        value: dict[str, Any] = orjson.loads(raw) if raw else {}
        self._meta[tp] = value
        self._next[tp] = int(value.get("next", 0))

    def gaps(self, records: Sequence[Inbound]) -> list[Gap]:
        """The ranges to read back before `records` can be handled in order."""
        expected: dict[tuple[str, int], int] = {}
        found = []
        for r in records:
            tp = (r.topic, r.partition)
            at = expected.get(tp, self.next_offset(r.topic, r.partition))
            if r.offset > at:
                found.append(Gap(r.topic, r.partition, at, r.offset))
            expected[tp] = max(at, r.offset + 1)
        return found

    def ordered(self, records: Sequence[Inbound], filled: Mapping[tuple[str, int], Sequence[Inbound]]
                ) -> Iterator[Inbound]:
        """The records to handle, in order: done ones dropped, read-back gaps inserted where they belong."""
        for r in records:
            tp = (r.topic, r.partition)
            for missing in filled.get(tp, ()):
                if self.next_offset(*tp) <= missing.offset < r.offset:
                    yield from self._take(missing)
            yield from self._take(r)
        for tail in filled.values():  # a tail read back without any newer record
            for record in tail:
                yield from self._take(record)

    def tail_gaps(self, ends: Mapping[tuple[str, int], int]) -> list[Gap]:
        """Records up to each partition's end that were never delivered (faust skipped a tail)."""
        return [Gap(topic, partition, self.next_offset(topic, partition), end)
                for (topic, partition), end in sorted(ends.items()) if end > self.next_offset(topic, partition)]

    def _take(self, record: Inbound) -> Iterator[Inbound]:
        tp = (record.topic, record.partition)
        if record.offset < self.next_offset(*tp):
            return
        self._next[tp] = record.offset + 1
        self._moved.add(tp)
        yield record

    def writes(self) -> list[StateWrite]:
        """New progress values; written after the states, so a durable progress implies durable states."""
        out = []
        for topic, partition in sorted(self._moved):
            value = {**self.meta(topic, partition), "next": self._next[(topic, partition)]}
            out.append(StateWrite(progress_key(topic, partition), partition, orjson.dumps(value)))
        return out
