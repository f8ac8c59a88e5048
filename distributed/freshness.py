"""Before a recall reads Weaviate: has every record of the user's partition reached it?

A user's records keep one partition number on every topic (keyed `tenant/user`, the same partition
count). What recall reads derives from the topics of the current-memory projection (`levels`), and
those from the processor stages upstream of them. A check, in the user's partition:

1. read the end offsets of all those topics at once;
2. count the records below them that a stage reading the topic has not recorded as done (its
   progress changelog, followed by a `ProgressWatcher` on a thread of its own);
3. read the derived topics' end offsets again: whatever landed since step 1 counts as behind (a
   stage lands its outputs before its progress, so what the progress of step 2 covers had landed by
   then, and with no change since step 1 it is below the ends of step 1);
4. count the records below every end the projector has not flushed to Weaviate (its written marks,
   `WRITTEN_ROLE`, or its committed offsets, which are never ahead of them).

Zero is "current": a write acknowledged before the check began is below the ends of step 1, and it
and everything derived from it are in Weaviate. Progress lands after outputs, marks after a flush,
so every count can only be too high (the recall says it is behind when it is not), never too low.
Other users' records in the same partition count too. A check costs four Kafka requests (the end
offsets twice, the two groups' commits) and no read of Weaviate.
"""

from __future__ import annotations

import logging
import threading
import time

from confluent_kafka import OFFSET_END, Consumer, KafkaException, TopicPartition

from engram.recall.freshness import Freshness
from engram.schemas import topics as t
from engram.streams.topology import PROJECTIONS, build_topology

from .governor import partition_of
from .kafka_retry import RetryPolicy, retrying
from .offsets import group_reader
from .projector import PROJECTOR_ROLE, WRITTEN_ROLE
from .readback import Probe, ProgressWatcher
from .topics import SOURCE_TOPICS, Namespace

log = logging.getLogger("engram.distributed.freshness")
FOLLOW_POLL = 0.02
"""Seconds the watcher thread waits for new progress records per poll."""
BUDGET = 1.0
"""Seconds a check may take at most (a recall gives it a share of its deadline); past it, or on a Kafka
error, the recall says it cannot tell (`behind` None) and reads anyway."""


def levels() -> list[list[str]]:
    """The catalogue names of the topics recall's projection derives from, by distance from the sources
    (sources first; a topic comes after every topic its writers read)."""
    stages = [({x.name for x in s.inputs}, {x.name for x in s.outputs}) for s in build_topology()]
    wanted = {x.name for x in next(p for p in PROJECTIONS if p.name == "current-memory").inputs}
    for inputs, outputs in reversed(stages):  # upstream of what the projection reads (dependency order)
        if wanted & outputs:
            wanted |= inputs
    out: list[list[str]] = []
    done: set[str] = set()
    current = [x.name for x in SOURCE_TOPICS if x.name in wanted]
    while current:
        out.append(current)
        done.update(current)
        current = [x.name for x in t.CATALOGUE if x.name in wanted and x.name not in done
                   and all(inputs & wanted <= done for inputs, outputs in stages if x.name in outputs)]
    return out


class FreshnessCheck:
    """One per process that serves recalls (thread-safe; close it)."""

    def __init__(self, bootstrap: str, ns: Namespace) -> None:
        self.ns = ns
        self.levels = [[ns.topic(x) for x in level] for level in levels()]
        self.partitions = t.TURNS.partitions
        self.probe = Probe(bootstrap, timeout=2.0)
        self._written = group_reader(bootstrap, ns.app_id(WRITTEN_ROLE))
        self._committed = group_reader(bootstrap, ns.app_id(PROJECTOR_ROLE))
        self._watcher = ProgressWatcher(bootstrap, ns, "any")
        self.sources = {ns.topic(x) for x in SOURCE_TOPICS}
        self._done_lock = threading.Lock()
        self._caught_up = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._follow, name="engram-freshness", daemon=True)
        self._thread.start()

    def _follow(self) -> None:
        """The watcher thread: keep the stages' progress current (the first pass reads the changelogs)."""
        while not self._stop.is_set():
            try:
                with self._done_lock:
                    self._watcher.poll(quiet=0.0)
                self._caught_up.set()
            except Exception:  # noqa: BLE001 - a broker hiccup: the checks say "cannot tell" meanwhile
                log.warning("freshness: following the stages' progress failed", exc_info=True)
            self._stop.wait(FOLLOW_POLL)

    def ready(self, timeout: float) -> bool:
        """Wait until the stages' progress has been read once (until then a check cannot tell)."""
        return self._caught_up.wait(timeout)

    def check(self, tenant: str, user: str, budget: float = BUDGET) -> Freshness:
        """How far the user's partition has got, read now (before the recall reads), within `budget` s."""
        start = time.perf_counter()
        partition = partition_of(f"{tenant}/{user}".encode(), self.partitions)
        try:
            behind = self._behind(partition, time.monotonic() + min(budget, BUDGET)) \
                if self._caught_up.is_set() else None
        except Exception:  # noqa: BLE001 - the recall goes on; it only cannot say how fresh it is
            log.warning("freshness: could not check partition %d", partition, exc_info=True)
            behind = None
        return Freshness("distributed", behind == 0, behind, partition,
                         round(1000 * (time.perf_counter() - start), 3))

    def _behind(self, partition: int, until: float) -> int:
        tps = [(topic, partition) for level in self.levels for topic in level]
        first = self._ends(tps, until)
        with self._done_lock:
            stages = self._watcher.behind(first)
        derived = [tp for tp in tps if tp[0] not in self.sources]
        again = self._ends(derived, until)  # after the progress was read: did anything land since `first`?
        moved = sum(max(0, again[tp] - first[tp]) for tp in derived)
        ends = {**first, **again}
        projected = self._projected(list(ends), until)
        return stages + moved + sum(max(0, end - projected.get(tp, 0)) for tp, end in ends.items())

    def _ends(self, tps: list[tuple[str, int]], until: float) -> dict[tuple[str, int], int]:
        """End offsets of `tps`, in one request per broker (a ListOffsets for the latest offset of each:
        what `get_watermark_offsets` answers, without a round trip per partition)."""
        consumer = self.probe.consumer
        wanted = [TopicPartition(topic, partition, OFFSET_END) for topic, partition in tps]

        def ask() -> dict[tuple[str, int], int]:
            out = {}
            for tp in consumer.offsets_for_times(wanted, timeout=_left(until)):
                if tp.error is not None or tp.offset < 0:
                    consumer.list_topics(tp.topic, timeout=_left(until))  # no metadata of the topic yet?
                    raise KafkaException(tp.error) if tp.error is not None else KafkaException(
                        f"no end offset for {tp.topic}[{tp.partition}]")
                out[(tp.topic, tp.partition)] = tp.offset
            return out

        return retrying(ask, "reading end offsets", RetryPolicy(deadline=_left(until)))

    def _projected(self, tps: list[tuple[str, int]], until: float) -> dict[tuple[str, int], int]:
        """Per partition, the offset below which Weaviate holds every record (the larger of the two marks)."""
        wanted = [TopicPartition(*tp) for tp in tps]

        def ask(reader: Consumer) -> dict[tuple[str, int], int]:
            def once() -> dict[tuple[str, int], int]:
                out = {}
                for tp in reader.committed(wanted, timeout=_left(until)):
                    if tp.error is not None:
                        raise KafkaException(tp.error)
                    out[(tp.topic, tp.partition)] = tp.offset
                return out
            return retrying(once, "reading the projectors' marks", RetryPolicy(deadline=_left(until)))

        written, committed = ask(self._written), ask(self._committed)
        return {tp: max(written.get(tp, -1), committed.get(tp, -1), 0) for tp in tps}

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5.0)
        with self._done_lock:
            self._watcher.close()
        self._written.close()
        self._committed.close()
        self.probe.close()


def _left(until: float) -> float:
    """Seconds left of a check's budget; none left ends the check (the recall cannot tell)."""
    left = until - time.monotonic()
    if left <= 0:
        raise TimeoutError("the freshness check ran out of its budget")
    return left
