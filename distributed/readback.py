"""Reading the distributed runtime back: topics to their end, consumer lag, idleness, folds.

Used by `engram replay`, `engram ingest --wait`, the tests and the benchmarks; nothing
here is on the processing path. Every broker request retries transient errors
(`kafka_retry`): right after a topic is created, or while a broker restarts.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import orjson
from confluent_kafka import Consumer, TopicPartition

from engram.core.crypto import FieldCipher
from engram.schemas import topics as t
from engram.schemas.base import Event
from engram.schemas.codec import EventDecodeError, decode
from engram.schemas.events import MemoryChanged
from engram.schemas.memory import MemoryRecord

from .app import stages_for
from .erasure import cipher_for_topic
from .kafka_retry import retrying
from .offsets import committed_offsets, group_reader
from .progress import PREFIX
from .topics import SOURCE_TOPICS, Namespace


LIST_EVERY = 1.0
"""Seconds between two topic listings of a ProgressWatcher looking for new changelogs."""


@dataclass(frozen=True)
class Record:
    """A consumed record and its decoded event (None if it does not decode)."""

    topic: str
    partition: int
    offset: int
    timestamp_ms: int
    value: bytes
    event: Event | None


def _consumer(bootstrap: str) -> Consumer:
    return Consumer({"bootstrap.servers": bootstrap, "group.id": f"engram-readback-{uuid.uuid4().hex[:8]}",
                     "enable.auto.commit": False, "auto.offset.reset": "earliest"})


class Probe:
    """Consumers for repeated offset questions (close it when done).

    Committed offsets are read with a consumer of the group's id that never joins it
    (`offsets`), not with the AdminClient, which can abort the process in a broker restart.
    """

    def __init__(self, bootstrap: str, timeout: float = 10.0) -> None:
        self.bootstrap = bootstrap
        self.timeout = timeout
        self.consumer = _consumer(bootstrap)
        self._groups: dict[str, Consumer] = {}

    def high_watermarks(self, topics: Iterable[str]) -> dict[tuple[str, int], int]:
        """(topic, partition) -> the offset after the last record, for existing topics."""
        names = list(topics)
        return retrying(lambda: self._high_watermarks(names), "reading high watermarks")

    def _high_watermarks(self, topics: list[str]) -> dict[tuple[str, int], int]:
        present = self.consumer.list_topics(timeout=self.timeout).topics
        marks = {}
        for topic in topics:
            for partition in present[topic].partitions if topic in present else ():
                marks[(topic, partition)] = self.consumer.get_watermark_offsets(
                    TopicPartition(topic, partition), timeout=self.timeout)[1]
        return marks

    def committed(self, group: str, tps: Iterable[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """The group's committed offsets (0 where none)."""
        if group not in self._groups:
            self._groups[group] = group_reader(self.bootstrap, group)
        return {tp: max(offset, 0) for tp, offset in committed_offsets(self._groups[group], group, tps,
                                                                       self.timeout).items()}

    def lag(self, group: str, topics: Iterable[str]) -> int:
        """Records of `topics` not yet committed by consumer group `group`."""
        ends = self.high_watermarks(topics)
        committed = self.committed(group, ends) if ends else {}
        return sum(max(0, end - committed.get(tp, 0)) for tp, end in ends.items())

    def close(self) -> None:
        self.consumer.close()
        for consumer in self._groups.values():
            consumer.close()
        self._groups.clear()

    def __enter__(self) -> Probe:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def high_watermarks(bootstrap: str, topics: Iterable[str]) -> dict[tuple[str, int], int]:
    with Probe(bootstrap) as probe:
        return probe.high_watermarks(topics)


def read_topic(bootstrap: str, topic: str, timeout: float = 60.0) -> list[Record]:
    """Every record of a topic, from the beginning to the end it had when called."""
    return list(iter_topic(bootstrap, topic, timeout))


def iter_topic(bootstrap: str, topic: str, timeout: float = 60.0) -> Iterator[Record]:
    ends = {p: end for (_, p), end in high_watermarks(bootstrap, [topic]).items() if end > 0}
    if not ends:
        return
    cipher = cipher_for_topic(bootstrap, topic)
    consumer = _consumer(bootstrap)
    consumer.assign([TopicPartition(topic, p, 0) for p in ends])
    deadline = time.monotonic() + timeout
    try:
        while ends and time.monotonic() < deadline:
            for msg in consumer.consume(1000, timeout=0.5):
                partition, offset = msg.partition(), msg.offset()
                if msg.error() or partition is None or offset is None:
                    continue
                if offset + 1 >= ends.get(partition, 0):
                    ends.pop(partition, None)
                yield _record(msg, cipher)
        if ends:
            raise TimeoutError(f"could not read {topic} to its end within {timeout}s")
    finally:
        consumer.close()


def _record(msg: object, cipher: FieldCipher | None) -> Record:
    value = msg.value() or b""  # type: ignore[attr-defined]
    try:
        event: Event | None = decode(value, cipher)
    except EventDecodeError:
        event = None
    return Record(msg.topic(), msg.partition(), msg.offset(), msg.timestamp()[1], value, event)  # type: ignore[attr-defined]


class ProgressWatcher:
    """Follows the stage tables' changelogs: per stage and input partition, the next offset not yet done.

    This, not the consumer group's committed offsets, says what a worker has
    finished (see `engram.distributed.progress`).
    """

    def __init__(self, bootstrap: str, ns: Namespace, role: str = "processors") -> None:
        """`role="any"` follows each stage whichever role runs it: all processors, or the stage alone."""
        self.ns, self.role = ns, role
        self.stages = {s.processor.name: [ns.topic(x) for x in s.inputs]
                       for s in stages_for("processors" if role == "any" else role)}
        self.done: dict[tuple[str, str, int], int] = {}
        self._changelogs = {ns.changelog(r, stage): stage for stage in self.stages
                            for r in (("processors", stage) if role == "any" else (role,))}
        self._consumer = _consumer(bootstrap)
        self._assigned: set[str] = set()
        self._listed_at = float("-inf")

    def _assign_new(self) -> None:
        """Follow changelogs created after the watcher started (a worker creates them on start).

        With `role="any"` some changelogs never exist (the layout not deployed), so the
        broker's topic list is asked for at most once a second, not on every poll.
        """
        if len(self._assigned) == len(self._changelogs) or time.monotonic() - self._listed_at < LIST_EVERY:
            return
        self._listed_at = time.monotonic()
        present = retrying(lambda: self._consumer.list_topics(timeout=10).topics, "listing topics")
        new = [n for n in self._changelogs if n in present and n not in self._assigned and present[n].partitions]
        if new:
            self._consumer.incremental_assign([TopicPartition(n, p, 0) for n in new for p in present[n].partitions])
            self._assigned.update(new)

    def poll(self, quiet: float = 0.3) -> None:
        """Read everything the changelogs got since the last poll."""
        self._assign_new()
        while messages := self._consumer.consume(5000, timeout=quiet):
            for msg in messages:
                key, value, changelog = msg.key() or b"", msg.value(), msg.topic()
                if msg.error() is None and key.startswith(PREFIX) and value and changelog in self._changelogs:
                    topic, _, partition = key[len(PREFIX):].decode().partition("\x00")
                    slot = (self._changelogs[changelog], topic, int(partition))
                    self.done[slot] = max(self.done.get(slot, 0), int(orjson.loads(value)["next"]))

    def behind(self, ends: dict[tuple[str, int], int]) -> int:
        """Input records not yet done by the stages that read them, given the inputs' end offsets."""
        return sum(max(0, end - self.done.get((stage, topic, partition), 0))
                   for stage, topics in self.stages.items()
                   for (topic, partition), end in ends.items() if topic in topics)

    def close(self) -> None:
        self._consumer.close()


def wait_idle(bootstrap: str, ns: Namespace, role: str = "processors", timeout: float = 120.0,
              settle: float = 1.5) -> float:
    """Wait until every stage has done every input record and no derived topic grew for `settle` s.

    Returns the seconds waited; raises TimeoutError saying how many records are still to do.
    """
    watcher = ProgressWatcher(bootstrap, ns, role)
    inputs = sorted({topic for topics in watcher.stages.values() for topic in topics})
    derived = [ns.topic(x) for x in t.CATALOGUE if ns.topic(x) not in inputs and x not in SOURCE_TOPICS]
    start = time.monotonic()
    stable_since, last, behind = 0.0, None, -1
    try:
        with Probe(bootstrap) as probe:
            while time.monotonic() - start < timeout:
                watcher.poll()
                behind = watcher.behind(probe.high_watermarks(inputs))
                marks = probe.high_watermarks(derived)
                if behind == 0 and marks == last:
                    stable_since = stable_since or time.monotonic()
                    if time.monotonic() - stable_since >= settle:
                        return time.monotonic() - start
                else:
                    stable_since = 0.0
                last = marks
                time.sleep(0.25)
    finally:
        watcher.close()
    raise TimeoutError(f"{ns.app_id(role)} not idle after {timeout}s ({behind} input records to do)")


def unique_events(records: Iterable[Record]) -> dict[str, Event]:
    """Events by id, first occurrence kept (duplicates of a derived event are the same event)."""
    out: dict[str, Event] = {}
    for record in records:
        if record.event is not None and record.event.event_id not in out:
            out[record.event.event_id] = record.event
    return out


def fold_memories(changes: Iterable[Event]) -> dict[str, MemoryRecord | None]:
    """memory id -> its current record (None if deleted or discarded), version-guarded like a projection."""
    memories: dict[str, MemoryRecord | None] = {}
    versions: dict[str, int] = {}
    for event in changes:
        if not isinstance(event, MemoryChanged):
            continue
        version = event.after.version if event.after is not None else 1 << 30
        if version < versions.get(event.memory_id, -1):
            continue
        versions[event.memory_id] = version
        memories[event.memory_id] = None if event.change == "deleted" else event.after
    return memories
