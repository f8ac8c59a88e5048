"""The embedded event log: append-only, one SQLite file, same envelopes and topics as Kafka."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path

from engram.schemas.base import Event
from engram.schemas.codec import decode, encode
from engram.schemas.topics import topic_for

SCHEMA = """
CREATE TABLE IF NOT EXISTS log_events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id TEXT NOT NULL UNIQUE,
  topic TEXT NOT NULL,
  key TEXT NOT NULL,
  type TEXT NOT NULL,
  occurred_at TEXT NOT NULL,
  payload BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS log_events_key ON log_events (key, seq);
CREATE INDEX IF NOT EXISTS log_events_type ON log_events (type, seq);
CREATE TABLE IF NOT EXISTS log_cursors (consumer TEXT PRIMARY KEY, seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS log_state (
  processor TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL, PRIMARY KEY (processor, key));
"""


def open_database(path: Path) -> sqlite3.Connection:
    """Open (creating if needed) the runtime's SQLite file in WAL mode, autocommit off."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("PRAGMA temp_store=MEMORY")
    db.executescript(SCHEMA)
    return db


class EventLog:
    """Append-only log. Appending an event id that is already there is a no-op."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def append(self, event: Event) -> int | None:
        """Append one event; return its sequence number, or None if it was already logged."""
        cursor = self._db.execute(
            "INSERT OR IGNORE INTO log_events (event_id, topic, key, type, occurred_at, payload) "
            "VALUES (?,?,?,?,?,?)",
            (event.event_id, topic_for(event.type), event.partition_key, event.type,
             event.occurred_at.isoformat(), encode(event)),
        )
        return cursor.lastrowid if cursor.rowcount > 0 else None

    def append_all(self, events: Iterable[Event]) -> list[tuple[int, Event]]:
        """Append several; return (seq, event) for the ones that were new."""
        out = []
        for event in events:
            seq = self.append(event)
            if seq is not None:
                out.append((seq, event))
        return out

    def read(self, after: int = 0, limit: int = 1000, types: tuple[str, ...] = ()) -> list[tuple[int, Event]]:
        """Events with seq > after, in order, decoded (and upcast)."""
        if types:
            marks = ",".join("?" * len(types))
            rows = self._db.execute(
                f"SELECT seq, payload FROM log_events WHERE seq > ? AND type IN ({marks}) ORDER BY seq LIMIT ?",
                (after, *types, limit),
            ).fetchall()
        else:
            rows = self._db.execute(
                "SELECT seq, payload FROM log_events WHERE seq > ? ORDER BY seq LIMIT ?", (after, limit)
            ).fetchall()
        return [(seq, decode(payload)) for seq, payload in rows]

    def scan(self, after: int = 0, types: tuple[str, ...] = (), batch: int = 2000) -> Iterator[tuple[int, Event]]:
        """Every event after `after`, in order, read in batches."""
        while True:
            chunk = self.read(after, batch, types)
            if not chunk:
                return
            yield from chunk
            after = chunk[-1][0]

    def for_key(self, key: str, types: tuple[str, ...] = ()) -> Iterator[Event]:
        """Every event of one tenant/user, in order."""
        rows = self._db.execute("SELECT type, payload FROM log_events WHERE key = ? ORDER BY seq", (key,))
        for event_type, payload in rows:
            if not types or event_type in types:
                yield decode(payload)

    def get(self, event_id: str) -> Event | None:
        row = self._db.execute("SELECT payload FROM log_events WHERE event_id = ?", (event_id,)).fetchone()
        return decode(row[0]) if row else None

    def last_seq(self) -> int:
        row = self._db.execute("SELECT MAX(seq) FROM log_events").fetchone()
        return int(row[0] or 0)

    def count(self, types: tuple[str, ...] = ()) -> int:
        if not types:
            return int(self._db.execute("SELECT COUNT(*) FROM log_events").fetchone()[0])
        marks = ",".join("?" * len(types))
        return int(self._db.execute(f"SELECT COUNT(*) FROM log_events WHERE type IN ({marks})", types).fetchone()[0])

    def cursor(self, consumer: str) -> int:
        row = self._db.execute("SELECT seq FROM log_cursors WHERE consumer = ?", (consumer,)).fetchone()
        return int(row[0]) if row else 0

    def set_cursor(self, consumer: str, seq: int) -> None:
        self._db.execute(
            "INSERT INTO log_cursors VALUES (?, ?) ON CONFLICT (consumer) DO UPDATE SET seq = excluded.seq",
            (consumer, seq),
        )
