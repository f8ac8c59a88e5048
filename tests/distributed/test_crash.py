"""Crash safety on real Kafka: SIGKILL the worker at random points of a long run, restart, repeat.

The final state must equal an uninterrupted run's (the harness derives what an
uninterrupted run derives; `test_parity` shows the workers agree with it):
the same derived event ids with the same contents, the same memory fold and
the same counts. Duplicated records (same id) are allowed: that is what
at-least-once replays produce, and every reader folds by id.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter

from engram.distributed.readback import fold_memories, read_topic
from engram.schemas import topics as t
from tests.distributed.conftest import Cluster
from tests.distributed.helpers import edge_events, mismatch, reference

KILLS = 7


def _produce_slowly(cluster: Cluster, events: list, rate: float) -> threading.Thread:  # type: ignore[type-arg]
    """Produce in chunks at about `rate` records/s, so the kills land while work is arriving."""
    def run() -> None:
        chunk = max(1, int(rate / 10))
        for start in range(0, len(events), chunk):
            cluster.produce(events[start:start + chunk])
            time.sleep(0.1)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_sigkilled_workers_end_with_the_state_of_an_uninterrupted_run(cluster: Cluster) -> None:
    rng = random.Random(2024)
    events = edge_events(seed=51, turns=2400, users=12, every=6)
    expected = reference(events)
    worker = cluster.worker("--instance-id", "crash-test-worker", "--batch-size", "200",
                            "--commit-interval", "0.5").start()
    producing = _produce_slowly(cluster, events, rate=350)
    for _ in range(KILLS):
        time.sleep(rng.uniform(0.4, 3.0))  # somewhere in start-up, recovery, a batch, or a commit
        worker.kill()
        worker.start()
    producing.join(timeout=120)
    cluster.wait_idle(timeout=180)

    derived = cluster.derived()
    assert mismatch(expected, derived) == "", cluster.logs()
    assert fold_memories(expected.values()) == fold_memories(derived.values())
    assert Counter(e.type for e in expected.values()) == Counter(e.type for e in derived.values())
    changes = read_topic(cluster.bootstrap, cluster.ns.topic(t.MEMORY_CHANGES))
    duplicates = len(changes) - len({r.event.event_id for r in changes if r.event})
    print(f"worker starts: {worker.starts}; duplicated MemoryChanged records (same ids): {duplicates}")
