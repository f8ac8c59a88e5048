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

import time
from collections.abc import Mapping
from dataclasses import dataclass

from engram.schemas import topics as t

from .projector import PROJECTOR_ROLE
from .readback import ProgressWatcher, Probe
from .topics import SOURCE_TOPICS, Namespace

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
