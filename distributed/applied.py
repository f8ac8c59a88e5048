"""Waiting until produced records, and everything derived from them, are applied everywhere.

`engram ingest` on the distributed runtime produces turns and then waits
here. The wait follows the topology in rounds, with no help from the workers:

1. the frontier is the produced records (per partition, the offset after the
   last one); wait until every processor stage that reads those topics has
   recorded them as done (its progress changelog) and the projectors have
   committed them (they commit only after writing Weaviate and ClickHouse);
2. a stage produces what it derives before it records progress, so the
   derived topics' end offsets, read now, cover everything derived so far:
   they become the next frontier;
3. repeat until a round derives nothing new (or the topology depth is used up).

Other producers' traffic only makes a frontier larger, never the wait endless:
each round waits for a fixed set of offsets.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import orjson
from confluent_kafka import Consumer, TopicPartition

from engram.schemas import topics as t
from engram.schemas.base import Event
from engram.schemas.codec import EventDecodeError, decode

from engram.streams.topology import build_topology

from .erasure import cipher_for
from .kafka_retry import retrying
from .projector import PROJECTOR_ROLE
from .readback import LIST_EVERY, ProgressWatcher, Probe
from .topics import SOURCE_TOPICS, Namespace

log = logging.getLogger("engram.distributed.applied")
Marks = dict[tuple[str, int], int]
MAX_ROUNDS = 5
"""Deeper than the longest chain of the topology (turns -> extract -> consolidate -> projectors)."""


class NotApplied(TimeoutError):
    """The workers did not apply the records in time; says how far behind each side was."""


@dataclass
class Lag:
    processors: int = 0
    projectors: int = 0

    @property
    def done(self) -> bool:
        return self.processors == 0 and self.projectors == 0


class AppliedWaiter:
    """Reads processor progress and projector commits; one per wait (close it)."""

    def __init__(self, bootstrap: str, ns: Namespace, projectors: bool = True) -> None:
        self.ns = ns
        self.projectors = projectors
        self.watcher = ProgressWatcher(bootstrap, ns, "any")
        self.probe = Probe(bootstrap)
        self.derived = [ns.topic(x) for x in t.CATALOGUE if x not in SOURCE_TOPICS]

    def lag(self, frontier: Mapping[tuple[str, int], int]) -> Lag:
        """Records below the frontier not yet done by the stages that read them / committed by projectors."""
        wanted = {tp: end for tp, end in frontier.items() if end > 0}
        self.watcher.poll(quiet=0.05)
        lag = Lag(processors=self.watcher.behind(wanted))
        if self.projectors and wanted:
            committed = self.probe.committed(self.ns.app_id(PROJECTOR_ROLE), wanted)
            lag.projectors = sum(max(0, end - committed.get(tp, 0)) for tp, end in wanted.items())
        return lag

    def wait(self, marks: Mapping[tuple[str, int], int], timeout: float = 300.0, interval: float = 0.1) -> float:
        """Block until `marks` and what derives from them are applied; return the seconds waited."""
        start = time.monotonic()
        frontier: Marks = dict(marks)
        previous: Marks | None = None
        for _ in range(MAX_ROUNDS):
            self._until_covered(frontier, start + timeout, interval)
            current = self.probe.high_watermarks(self.derived)
            if current == previous:
                break
            frontier, previous = current, current
        return time.monotonic() - start

    def _until_covered(self, frontier: Marks, deadline: float, interval: float) -> None:
        lag = Lag(-1, -1)
        while time.monotonic() < deadline:
            lag = self.lag(frontier)  # transient broker errors are retried inside (kafka_retry)
            if lag.done:
                return
            time.sleep(interval)
        raise NotApplied(
            f"not applied in time: {lag.processors} record(s) still to process, {lag.projectors} still to project "
            f"(is `engram worker --role all` running against the same Kafka, prefix {self.ns.prefix!r}?)")

    def close(self) -> None:
        self.watcher.close()
        self.probe.close()

    def __enter__(self) -> AppliedWaiter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- one waiter per process -------------------------------------------------------------------------------
FOLLOW_LIMIT = 200_000
"""Causes a SharedWaiter keeps indexed (oldest dropped first)."""
FOLLOW_BYTES = 64 * 1024 * 1024
"""And the raw bytes it keeps for them at most: a record is counted once per cause naming it."""


@dataclass
class _Wait:
    """One caller's wait: the records it produced, what they caused so far, and where it stands."""

    ids: set[str]
    frontier: Marks
    projected: Marks
    deadline: float
    caused: list[Event] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    rounds: int = 0
    covered_at: Marks | None = None
    """The derived topics' end offsets when the processors had covered the frontier (then read them to there)."""
    done: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None


class SharedWaiter:
    """One per server process: one thread and three consumers answer every concurrent wait.

    A wait is keyed by the ids of the events its caller produced. Round by
    round (as `AppliedWaiter`), it waits until the processor stages have done
    the frontier (their progress changelogs, followed by one `ProgressWatcher`),
    then reads the derived topics (one tail consumer, indexed by causation id)
    up to their end offsets at that moment and takes the events caused by its
    ids as the next frontier; when a round finds nothing new, it waits until
    the projectors have committed every record it produced or caused. Only the
    caller's own records are waited for, so concurrent callers do not wait for
    each other's traffic, and no caller opens a consumer.
    """

    def __init__(self, bootstrap: str, ns: Namespace, poll: float = 0.02) -> None:
        self.ns = ns
        self.poll = poll
        self.cipher = cipher_for(bootstrap, ns.prefix)  # derived records are sealed (engram.distributed.erasure)
        self.watcher = ProgressWatcher(bootstrap, ns, "any")
        self.probe = Probe(bootstrap)
        self.derived = [ns.topic(x) for x in t.CATALOGUE if x not in SOURCE_TOPICS]
        always = {ns.topic(t.DEAD_LETTERS), ns.topic(t.LLM_CALLS)}
        self._partitions = {ns.topic(x): x.partitions for x in t.CATALOGUE}
        self._writes: dict[str, set[str]] = {}
        """Input topic -> the derived topics the stages reading it write (dead letters, model calls too)."""
        for stage in build_topology():
            for source in stage.inputs:
                self._writes.setdefault(ns.topic(source), set(always)).update(ns.topic(x) for x in stage.outputs)
        self._tail = Consumer({"bootstrap.servers": bootstrap, "group.id": f"engram-applied-{uuid.uuid4().hex[:8]}",
                               "enable.auto.commit": False, "auto.offset.reset": "earliest"})
        self._read_to: Marks = {}
        self._by_cause: OrderedDict[str, list[tuple[tuple[str, int], int, str, bytes]]] = OrderedDict()
        """cause id -> (topic-partition, offset, event id, raw value) of each derived record naming it."""
        self._indexed_bytes = 0
        self._listed_at = float("-inf")
        self._complete = False
        """Every derived topic is followed (topics are listed again only until then)."""
        self._assign_new()  # before any caller produces: everything they cause is read
        self._lock = threading.Lock()
        self._waits: list[_Wait] = []
        self._wake = threading.Event()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="engram-applied", daemon=True)
        self._thread.start()

    # -- the callers' side -------------------------------------------------------------------------
    def wait(self, marks: Mapping[tuple[str, int], int], ids: Iterable[str],
             timeout: float = 300.0) -> tuple[float, list[Event]]:
        """Block until the records below `marks` (events `ids`) and all they cause are applied.

        Returns the seconds waited and the events they caused (transitively), in the order read.
        """
        start = time.monotonic()
        wait = _Wait(set(ids), dict(marks), dict(marks), start + timeout)
        with self._lock:
            if self._stopped:
                raise RuntimeError("the applied-waiter is closed")
            self._waits.append(wait)
        self._wake.set()
        if not wait.done.wait(timeout + 5.0):
            wait.error = NotApplied(f"not applied within {timeout}s")
        with self._lock:
            if wait in self._waits:
                self._waits.remove(wait)
        if wait.error is not None:
            raise wait.error
        return time.monotonic() - start, wait.caused

    def close(self) -> None:
        with self._lock:
            self._stopped = True
        self._wake.set()
        self._thread.join(timeout=10.0)
        self._tail.close()
        self.watcher.close()
        self.probe.close()

    # -- the thread ----------------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            with self._lock:
                if self._stopped:
                    waits = list(self._waits)
                    break
                waits = list(self._waits)
            if not waits:
                self._wake.wait(0.2)
                self._wake.clear()
                self._read_tail(0.0)
                continue
            try:
                self._step(waits)
            except Exception as exc:  # noqa: BLE001 - a broker failure ends the waits it affects, not the thread
                log.warning("applied-waiter: %s", exc)
                for wait in waits:
                    if not wait.done.is_set():
                        wait.error = exc
                        wait.done.set()
        for wait in waits:
            if not wait.done.is_set():
                wait.error = RuntimeError("the applied-waiter was closed")
                wait.done.set()

    def _step(self, waits: list[_Wait]) -> None:
        self.watcher.poll(quiet=self.poll)
        self._read_tail(self.poll)
        now = time.monotonic()
        projecting = [w for w in waits if w.frontier and w.covered_at is None and self._covered(w)]
        if projecting:  # one round trip per partition the covered stages write, shared by every wait
            needs = {w_id: self._outputs(w.frontier) for w_id, w in enumerate(projecting)}
            ends = self._ends(set().union(*needs.values()))
            for w_id, wait in enumerate(projecting):
                wait.covered_at = {tp: ends.get(tp, 0) for tp in needs[w_id]}
        for wait in waits:
            if wait.covered_at is not None and self._read_past(wait.covered_at):
                self._next_round(wait)
        final = [w for w in waits if w.frontier == {} and not w.done.is_set()]
        committed: Marks = {}
        if final:
            tps = {tp for w in final for tp in w.projected}
            committed = self.probe.committed(self.ns.app_id(PROJECTOR_ROLE), tps)
            for wait in final:
                if all(committed.get(tp, 0) >= end for tp, end in wait.projected.items()):
                    wait.done.set()
        for wait in waits:
            if not wait.done.is_set() and now > wait.deadline:
                wait.error = NotApplied(f"not applied in time ({self._behind(wait, committed)}; is `engram worker "
                                        f"--role all` running against the same Kafka, prefix {self.ns.prefix!r}?)")
                wait.done.set()

    def _behind(self, wait: _Wait, committed: Marks) -> str:
        """Where a timed-out wait stands: the stage still to process, or the partitions the projectors lag on."""
        if wait.frontier:
            return (f"round {wait.rounds + 1}: {len(wait.frontier)} partition(s) still to process"
                    + (", derived records not read back yet" if wait.covered_at is not None else ""))
        lagging = sorted((tp, committed.get(tp, 0), end) for tp, end in wait.projected.items()
                         if committed.get(tp, 0) < end)
        shown = ", ".join(f"{topic}[{partition}] committed {done} of {end}" for (topic, partition), done, end
                          in lagging[:5])
        return f"processed; the projectors have not committed {len(lagging)} partition(s): {shown}"

    def _outputs(self, frontier: Marks) -> set[tuple[str, int]]:
        """The partitions the stages reading the frontier write to (a user's records keep their partition)."""
        out: set[tuple[str, int]] = set()
        for topic, partition in frontier:
            for written in self._writes.get(topic, ()):
                same = self._partitions.get(written) == self._partitions.get(topic)
                out.update([(written, partition)] if same else ((written, p) for p in range(self._partitions[written])))
        return out

    def _ends(self, tps: set[tuple[str, int]]) -> Marks:
        """End offsets of these followed partitions, asked now (after the progress that covered them)."""
        wanted = [tp for tp in tps if tp in self._read_to]

        def ask() -> Marks:
            return {tp: self.probe.consumer.get_watermark_offsets(TopicPartition(*tp), timeout=10.0)[1]
                    for tp in wanted}

        return retrying(ask, "reading end offsets") if wanted else {}

    def _covered(self, wait: _Wait) -> bool:
        wanted = {tp: end for tp, end in wait.frontier.items() if end > 0}
        return self.watcher.behind(wanted) == 0

    def _read_past(self, ends: Marks) -> bool:
        return all(self._read_to.get(tp, 0) >= end for tp, end in ends.items() if end > 0)

    def _next_round(self, wait: _Wait) -> None:
        """The events caused by the wait's ids (read to where the processors had got): the next frontier."""
        wait.covered_at, wait.rounds = None, wait.rounds + 1
        frontier: Marks = {}
        pending = list(wait.ids)
        while pending:
            for tp, offset, event_id, value in self._by_cause.get(pending.pop(), ()):
                if event_id in wait.seen:
                    continue
                wait.seen.add(event_id)
                try:
                    wait.caused.append(decode(value, self.cipher))
                except EventDecodeError:
                    pass
                frontier[tp] = max(frontier.get(tp, 0), offset + 1)
                wait.projected[tp] = max(wait.projected.get(tp, 0), offset + 1)
                if event_id not in wait.ids:
                    wait.ids.add(event_id)
                    pending.append(event_id)
        wait.frontier = frontier if wait.rounds < MAX_ROUNDS * 2 else {}

    def _read_tail(self, timeout: float) -> None:
        self._assign_new()
        while messages := self._tail.consume(5000, timeout=timeout):
            timeout = 0.0
            for msg in messages:
                topic, partition, offset = msg.topic(), msg.partition(), msg.offset()
                if msg.error() is not None or topic is None or partition is None or offset is None:
                    continue
                tp = (topic, partition)
                self._read_to[tp] = max(self._read_to.get(tp, 0), offset + 1)
                value = msg.value() or b""
                try:  # the envelope only: an event is decoded when a wait takes it (most never are)
                    envelope = orjson.loads(value)
                    event_id, causes = str(envelope["event_id"]), envelope.get("causation_ids") or ()
                except (orjson.JSONDecodeError, KeyError, TypeError):
                    continue
                for cause in causes:
                    self._by_cause.setdefault(str(cause), []).append((tp, offset, event_id, value))
                    self._indexed_bytes += len(value)
            self._drop_oldest()

    def _drop_oldest(self) -> None:
        """Keep the index within FOLLOW_LIMIT causes and FOLLOW_BYTES (a busy deployment must not grow it)."""
        while self._by_cause and (len(self._by_cause) > FOLLOW_LIMIT or self._indexed_bytes > FOLLOW_BYTES):
            _, records = self._by_cause.popitem(last=False)
            self._indexed_bytes -= sum(len(value) for *_, value in records)

    def _assign_new(self) -> None:
        """Follow the derived topics' partitions from their current end (from 0 for those created later)."""
        if self._complete or time.monotonic() - self._listed_at < LIST_EVERY:
            return
        first = self._listed_at == float("-inf")
        self._listed_at = time.monotonic()
        ends = self.probe.high_watermarks(self.derived)
        new = [tp for tp in ends if tp not in self._read_to]
        for tp in new:
            self._read_to[tp] = ends[tp] if first else 0
        if new:
            self._tail.incremental_assign([TopicPartition(tp[0], tp[1], self._read_to[tp]) for tp in new])
        self._complete = {topic for topic, _ in self._read_to} == set(self.derived)
