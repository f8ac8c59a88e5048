"""The embedded runtime's analytics: the ClickHouse projector driven from the event log.

Modes (constructor argument, else ENGRAM_ANALYTICS):

* ``off`` (default): nothing in the ingest hot path. The analytics are
  brought up to date from the log when they are read (`engram sql`) or
  rebuilt (`engram replay --projection clickhouse`), so the shipped SQL still
  works with no server and ingest keeps its full speed.
* ``chdb`` (aliases ``on``, ``clickhouse``): every handled event is also
  projected inline, buffered and flushed with the batch, before the log cursor
  moves. The target is ENGRAM_CLICKHOUSE_DSN if set, else the chDB directory
  ``<data>/analytics``.

The tables record how far into the log they are complete (a cursor row per
log, written after the rows), so catching up resumes where the last writer
stopped, and a duplicate write is harmless (rows are deduplicated by event id).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from engram.core.ports import Progress
from engram.schemas.base import Event
from engram.schemas.events import ErasureRecorded, ForgetRequested
from engram.streams.forget import topic_of

from .clickhouse import ClickHouseProjector
from .clickhouse_erasure import erase_memories, erase_mentions, erase_user
from .clickhouse_client import ClickHouseTarget, configured_target

MODE_ENV = "ENGRAM_ANALYTICS"
DEFAULT_MODE = "off"
_ON = frozenset({"chdb", "on", "clickhouse", "1", "true"})
_OFF = frozenset({"off", "none", "0", "false", ""})
CATCH_UP_BATCH = 10_000

class EventLogLike(Protocol):
    """What LogAnalytics needs of an event log (runtime.log.EventLog has it)."""

    def scan(self, after: int = 0) -> Iterator[tuple[int, Event]]: ...


def analytics_mode(value: str | None = None) -> str:
    """`chdb` (inline analytics) or `off`, from the argument, else ENGRAM_ANALYTICS, else the default."""
    raw = (value if value is not None else os.environ.get(MODE_ENV, DEFAULT_MODE)).strip().lower()
    if raw in _ON:
        return "chdb"
    if raw in _OFF:
        return "off"
    raise ValueError(f"{MODE_ENV} must be chdb or off, not {raw!r}")


def log_source(data_dir: Path | str) -> str:
    """The cursor key of one embedded event log."""
    return f"engram-log:{Path(data_dir).resolve()}"


class LogAnalytics:
    """The analytics projection of one event log: inline writes, catch-up and rebuild."""

    def __init__(self, projector: ClickHouseProjector, log: EventLogLike, source: str) -> None:
        self.projector = projector
        self.log = log
        self.source = source

    @classmethod
    def open(cls, data_dir: Path | str, log: EventLogLike, target: ClickHouseTarget | None = None
             ) -> "LogAnalytics":
        projector = ClickHouseProjector.open(target or configured_target(data_dir))
        return cls(projector, log, log_source(data_dir))

    # -- inline (runtime hook) --------------------------------------------------------
    def apply(self, event: Event, seq: int) -> None:
        self.projector.apply(event, seq)

    def flush(self, cursor: int) -> None:
        """Write the buffered rows, then record that the log is projected up to `cursor`."""
        self.projector.flush(cursor, self.source)

    def discard(self) -> None:
        self.projector.discard()

    def erase(self, record: ErasureRecorded, topic_text: str = "") -> int:
        """Blank the analytics text an erasure covers (a user, some memories, a topic); return rows touched."""
        if record.scope == "everything":
            return erase_user(self.projector, record.tenant_id, record.user_id)
        touched = erase_memories(self.projector, record.tenant_id, record.user_id, record.memory_ids)
        if record.scope == "topic" and topic_text.strip():
            touched += erase_mentions(self.projector, record.tenant_id, record.user_id, topic_of(topic_text))
        return touched

    # -- from the log ----------------------------------------------------------------
    def cursor(self) -> int:
        return self.projector.cursor(self.source)

    def catch_up(self, upto: int | None = None, progress: Progress | None = None) -> int:
        """Project the log's events after the cursor (up to `upto`, else to the end); return how many."""
        last, done = self.cursor(), 0
        topics: dict[str, str] = {}
        for seq, event in self.log.scan(after=last):
            if upto is not None and seq > upto:
                break
            self.projector.apply(event, seq)
            self._replay_erasure(event, topics)
            last, done = seq, done + 1
            if done % CATCH_UP_BATCH == 0:
                self._checkpoint(last, progress)
        self._checkpoint(last if done else None, progress)
        return done

    def _replay_erasure(self, event: Event, topics: dict[str, str]) -> None:
        """From the log, an erasure is applied again where it happened (a rebuild must not bring text back)."""
        if isinstance(event, ForgetRequested) and event.topic_text:
            topics[event.event_id] = event.topic_text
        elif isinstance(event, ErasureRecorded):
            self.erase(event, topics.get(event.request_id, ""))

    def _checkpoint(self, cursor: int | None, progress: Progress | None) -> None:
        events = self.projector.pending
        self.projector.flush(cursor, self.source)
        if progress is not None and events:
            progress(events)

    def rebuild(self, progress: Progress | None = None) -> str:
        """Drop every analytics table, project the whole log again; return the new state hash."""
        self.projector.drop_schema()
        self.projector.create_schema()
        self.catch_up(progress=progress)
        return self.projector.state_hash()

    def state_hash(self) -> str:
        return self.projector.state_hash()

    def close(self) -> None:
        self.projector.close()


def open_analytics(data_dir: Path | str, log: EventLogLike, mode: str | None = None,
                   handled: int = 0) -> LogAnalytics | None:
    """The runtime's inline analytics, caught up to `handled` (the pipeline cursor), or None when off."""
    if analytics_mode(mode) == "off":
        return None
    analytics = LogAnalytics.open(data_dir, log)
    try:
        analytics.catch_up(upto=handled)
    except Exception:
        analytics.close()
        raise
    return analytics
