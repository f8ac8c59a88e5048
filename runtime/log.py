"""The embedded event log: append-only, one SQLite file, same envelopes and topics as Kafka."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from functools import lru_cache
from collections.abc import Iterable, Iterator
from pathlib import Path

from engram.core.crypto import SEALED_FIELDS, FieldCipher
from engram.schemas.base import Event
from engram.schemas.codec import decode, encode
from engram.schemas.topics import topic_for

_iso = lru_cache(maxsize=8192)(datetime.isoformat)

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
    db.execute("PRAGMA secure_delete=ON")  # deleted rows (forgotten memories, turns) are zeroed, not left in free pages
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("PRAGMA temp_store=MEMORY")
    db.execute("PRAGMA cache_size=-65536")
    db.execute("PRAGMA wal_autocheckpoint=4000")
    db.executescript(SCHEMA)
    return db


class EventLog:
    """Append-only log. Appending an event id that is already there is a no-op.

    Appends are staged in memory with their sequence numbers assigned and
    written in one `executemany` by `flush`; reads flush first. With a
    `cipher`, the user text of every event is sealed under its owner's data
    key on the way in and opened on the way out (`engram.core.crypto`); the
    log file never holds it in plain text.
    """

    def __init__(self, db: sqlite3.Connection, cipher: FieldCipher | None = None) -> None:
        self._db = db
        self.cipher = cipher
        self._staged: list[tuple[int, str, str, str, str, str, bytes]] = []
        self._staged_ids: set[str] = set()
        self._next_seq: int | None = None

    def stage(self, events: Iterable[Event], dedupe: bool = True) -> list[tuple[int, Event]]:
        """Assign sequence numbers and stage for writing; return (seq, event) for the new ones."""
        batch = list(events)
        known = self._known_ids([e.event_id for e in batch]) if dedupe else set()
        if self._next_seq is None:
            self._next_seq = self.last_seq() + 1
        # new owners' keys made in one key-store commit (derived events are their source's owner's: made already)
        if self.cipher is not None and dedupe and len(batch) > 1:
            self.cipher.prepare({(e.tenant_id, e.user_id) for e in batch if e.type in SEALED_FIELDS})
        out = []
        for event in batch:
            if event.event_id in known or event.event_id in self._staged_ids:
                continue
            seq = self._next_seq
            self._next_seq += 1
            self._staged.append((seq, event.event_id, topic_for(event.type), event.partition_key, event.type,
                                 _iso(event.occurred_at), encode(event, self.cipher)))
            self._staged_ids.add(event.event_id)
            out.append((seq, event))
        return out

    def flush(self) -> None:
        if self._staged:
            self._db.executemany(
                "INSERT OR IGNORE INTO log_events (seq, event_id, topic, key, type, occurred_at, payload) "
                "VALUES (?,?,?,?,?,?,?)",
                self._staged,
            )
        self.discard()

    def discard(self) -> None:
        """Forget staged rows (after a rollback)."""
        self._staged.clear()
        self._staged_ids.clear()
        self._next_seq = None

    def _known_ids(self, ids: list[str]) -> set[str]:
        known: set[str] = set()
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(f"SELECT event_id FROM log_events WHERE event_id IN ({marks})", chunk)
            known.update(r[0] for r in rows)
        return known

    def append(self, event: Event) -> int | None:
        """Append one event now; return its sequence number, or None if it was already logged."""
        appended = self.append_all([event])
        return appended[0][0] if appended else None

    def append_all(self, events: Iterable[Event]) -> list[tuple[int, Event]]:
        """Append several now; return (seq, event) for the ones that were new."""
        out = self.stage(events)
        self.flush()
        return out

    def read(self, after: int = 0, limit: int = 1000, types: tuple[str, ...] = ()) -> list[tuple[int, Event]]:
        """Events with seq > after, in order, decoded (and upcast)."""
        self.flush()
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
        return [(seq, decode(payload, self.cipher)) for seq, payload in rows]

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
        self.flush()
        rows = self._db.execute("SELECT type, payload FROM log_events WHERE key = ? ORDER BY seq", (key,))
        for event_type, payload in rows:
            if not types or event_type in types:
                yield decode(payload, self.cipher)

    def get_many(self, event_ids: list[str]) -> dict[str, Event]:
        """The logged events among `event_ids`, by id (ids not logged are left out)."""
        self.flush()
        found: dict[str, Event] = {}
        for start in range(0, len(event_ids), 500):
            chunk = event_ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(f"SELECT event_id, payload FROM log_events WHERE event_id IN ({marks})", chunk)
            found.update((event_id, decode(payload, self.cipher)) for event_id, payload in rows)
        return found

    def get(self, event_id: str) -> Event | None:
        self.flush()
        row = self._db.execute("SELECT payload FROM log_events WHERE event_id = ?", (event_id,)).fetchone()
        return decode(row[0], self.cipher) if row else None

    def last_seq(self) -> int:
        if self._next_seq is not None:
            return self._next_seq - 1
        row = self._db.execute("SELECT MAX(seq) FROM log_events").fetchone()
        return int(row[0] or 0)

    def count(self, types: tuple[str, ...] = ()) -> int:
        self.flush()
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

    def checkpoint(self) -> None:
        """Copy the WAL into the file and truncate it to zero bytes (after an erasure: no old pages left)."""
        self.flush()
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
