"""Before a recall reads Weaviate: has every record of the user's partition reached it?

A user's records keep one partition number on every topic (keyed `tenant/user`, the same partition
count). What recall reads derives from the topics of the current-memory projection, and those from
the processor stages upstream of them. The check walks that graph in levels, source topics first:

1. read the end offsets of the level's topics in the user's partition (after the level before was
   found done, so they include everything the stages derived from it);
2. count the records below them that a stage reading the topic has not recorded as done (its
   progress changelog, followed by a `ProgressWatcher` on a thread of its own);
3. finally, count the records below every end the projector has not flushed to Weaviate (its
   written marks, `WRITTEN_ROLE`; or its committed offsets, which are never ahead of them).

Zero is "current": a write acknowledged before the check began is below the ends of step 1, and it
and everything derived from it are in Weaviate. A stage's progress lands after its outputs, a
projector's marks after its flush, so every count can only be too high (the recall says it is
behind when it is not), never too low. Other users' records in the same partition count too.
"""

from __future__ import annotations

import logging
import threading
import time

from confluent_kafka import Consumer, KafkaException, TopicPartition

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
FOLLOW_POLL = 0.05
"""Seconds the watcher thread waits for new progress records per poll."""
ASK = RetryPolicy(deadline=1.0)
"""A freshness question is retried this long; then the recall says it cannot tell (`behind` None)."""


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
        self._done_lock = threading.Lock()
        self._ask_lock = threading.Lock()
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

    def check(self, tenant: str, user: str) -> Freshness:
        """How far the user's partition has got, read now (before the recall reads)."""
        start = time.perf_counter()
        partition = partition_of(f"{tenant}/{user}".encode(), self.partitions)
        try:
            behind = self._behind(partition) if self._caught_up.is_set() else None
        except Exception:  # noqa: BLE001 - the recall goes on; it only cannot say how fresh it is
            log.warning("freshness: could not check partition %d", partition, exc_info=True)
            behind = None
        return Freshness("distributed", behind == 0, behind, partition,
                         round(1000 * (time.perf_counter() - start), 3))

    def _behind(self, partition: int) -> int:
        behind, ends = 0, {}
        with self._ask_lock:
            for level in self.levels:
                found = self._ends([(topic, partition) for topic in level])
                ends.update(found)
                with self._done_lock:
                    self._watcher.poll(quiet=0.0)
                    behind += self._watcher.behind(found)
            projected = self._projected(list(ends))
        return behind + sum(max(0, end - projected.get(tp, 0)) for tp, end in ends.items())

    def _ends(self, tps: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        consumer = self.probe.consumer

        def ask() -> dict[tuple[str, int], int]:
            return {tp: consumer.get_watermark_offsets(TopicPartition(*tp), timeout=ASK.deadline)[1] for tp in tps}

        return retrying(ask, "reading end offsets", ASK)

    def _projected(self, tps: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        """Per partition, the offset below which Weaviate holds every record (the larger of the two marks)."""
        wanted = [TopicPartition(*tp) for tp in tps]

        def ask(reader: Consumer) -> dict[tuple[str, int], int]:
            out = {}
            for tp in reader.committed(wanted, timeout=ASK.deadline):
                if tp.error is not None:
                    raise KafkaException(tp.error)
                out[(tp.topic, tp.partition)] = tp.offset
            return out

        written = retrying(lambda: ask(self._written), "reading the written marks", ASK)
        committed = retrying(lambda: ask(self._committed), "reading the projectors' commits", ASK)
        return {tp: max(written.get(tp, -1), committed.get(tp, -1), 0) for tp in tps}

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5.0)
        with self._done_lock:
            self._watcher.close()
        self._written.close()
        self._committed.close()
        self.probe.close()
