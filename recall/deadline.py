"""The recall deadline: retrieval parts on a bounded, shared pool, assembled from what is ready.

A recall reads several independent parts from the store (`PARTS`: the user/session flags, the global
cards, the memories search with the standing profile, the session summary, the recent window). With a
`RecallPool` each part runs as a future on the process's one bounded pool; the caller waits for them
until its deadline and then assembles the context from the parts that are ready. A part still
running is *missed*: the result says `deadline_exceeded: true` with `missed: [...]`, the access layer
counts `recall.missed.<part>` and logs one line, and the late read finishes in the background
(its result is dropped) without holding the caller.

Bounded: the pool has `recall.pool_size` slots (`EngramConfig.recall.pool_size`, per process). A
recall reserves one slot per part, all or nothing, before it submits; a slot frees when its read
ends, late or not. So there are never more reads in flight (late ones included) than slots, and
when the pool is saturated a new recall degrades at once (every part missed) instead of queueing.

Slack: the caller returns at the deadline plus the assembly of the ready parts (token budget and
rendering, a few ms) plus its own wake-up on a busy interpreter (GIL; measured p99 27-97 ms at load
1.3-7 on 2 cores) -- it never waits on a store read past the deadline.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

PARTS = ("known", "cards", "memories", "summary", "recent")
"""The retrieval parts of one recall, in the order the context is assembled."""


class RecallPool:
    """A bounded thread pool of `size` slots for recall reads; `try_run` never queues."""

    def __init__(self, size: int) -> None:
        self.size = max(1, size)
        self._executor = ThreadPoolExecutor(self.size, thread_name_prefix="engram-recall-part")
        self._free = self.size
        self._lock = threading.Lock()

    @property
    def in_flight(self) -> int:
        with self._lock:
            return self.size - self._free

    def try_run(self, calls: Mapping[str, Callable[[], Any]]) -> dict[str, Future[Any]] | None:
        """Start every call at once, or none (None) when the pool has fewer free slots than calls."""
        with self._lock:
            if self._free < len(calls):
                return None
            self._free -= len(calls)
        return {name: self._executor.submit(self._run, call) for name, call in calls.items()}

    def _run(self, call: Callable[[], Any]) -> Any:
        try:
            return call()
        finally:  # before the future is done: a caller that saw it done sees the slot free
            with self._lock:
                self._free += 1

    def close(self) -> None:
        self._executor.shutdown(wait=False)


_shared: dict[int, RecallPool] = {}
_shared_lock = threading.Lock()


def shared_pool(size: int) -> RecallPool:
    """The process's one recall pool of that size (one per size, created on first use)."""
    with _shared_lock:
        pool = _shared.get(size)
        if pool is None:
            pool = _shared[size] = RecallPool(size)
        return pool


class PartMissed(Exception):
    """A part could not run in time (e.g. the store's lock was not free before the deadline)."""


def gather(futures: Mapping[str, Future[Any]], timeout_s: float) -> tuple[dict[str, Any], list[str]]:
    """Wait until the deadline at most; the results of the parts done, and the names of those missed.

    A part that raised `PartMissed` is missed; any other error is raised (the recall fails as before).
    """
    wait(list(futures.values()), timeout=max(0.0, timeout_s))
    ready: dict[str, Any] = {}
    missed: list[str] = []
    for name, future in futures.items():
        if not future.done():
            missed.append(name)
            continue
        error = future.exception()
        if isinstance(error, PartMissed):
            missed.append(name)
        elif error is not None:
            raise error
        else:
            ready[name] = future.result()
    return ready, missed
