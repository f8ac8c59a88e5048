"""One write at a time on a thread of its own, for the Weaviate objects recall does not wait for.

`WeaviateStore.flush_recalled` writes the objects a recall's memory section
reads (memories, summaries, cards) at once and hands the rest (the turn index
and the user and session markers, most of a projector's objects) to this
writer, so a long turn-index write no longer holds the next memories back.
At most one write is on its way: while it is, the rest stays buffered and
goes with the next hand-off. A failed write is sticky: every later `wait` (so
every full `flush` of the store) raises it, so nothing written after it can
be taken for durable and the caller's offsets stay uncommitted. A write is
an idempotent upsert by uuid, so a failed attempt is tried again (with
backoff) before it counts as failed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
log = logging.getLogger("engram.weaviate")
ATTEMPTS = 5


class BackgroundWriter:
    """A single-thread executor that runs one write at a time and remembers a failure."""

    def __init__(self, name: str = "engram-weaviate-write") -> None:
        self._name = name
        self._pool: ThreadPoolExecutor | None = None
        self._current: Future[None] | None = None
        self._failed: BaseException | None = None

    @property
    def busy(self) -> bool:
        """A write is still on its way."""
        return self._current is not None and not self._current.done()

    def submit(self, write: Callable[[T], None], rows: T) -> Future[None]:
        """Start `write(rows)` once the write before it is done (the caller checks `busy` first)."""
        self.wait()
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix=self._name)
        self._current = self._pool.submit(_with_retries, write, rows)
        return self._current

    def wait(self) -> None:
        """Until the write on its way is done; raises its failure (and every earlier one) here."""
        current = self._current
        if current is not None:
            try:
                current.result()
            except BaseException as exc:  # noqa: BLE001 - kept: later waits must fail too
                self._failed = self._failed or exc
            self._current = None
        if self._failed is not None:
            raise RuntimeError(f"a background Weaviate write failed: {self._failed!r}") from self._failed

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)


def _with_retries(write: Callable[[T], None], rows: T) -> None:
    for attempt in range(1, ATTEMPTS + 1):
        try:
            write(rows)
            return
        except Exception as exc:  # noqa: BLE001 - the last failure is raised
            if attempt == ATTEMPTS:
                raise
            log.warning("background Weaviate write failed (attempt %d/%d): %r", attempt, ATTEMPTS, exc)
            time.sleep(min(8.0, 0.5 * 2 ** (attempt - 1)))
