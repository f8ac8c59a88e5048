"""Reads of the embedded store that never take the writer's lock.

Each reading thread has its own SQLite connection to the data file (WAL mode: a reader sees the
last committed transaction and neither blocks nor is blocked by the writer). Search indexes,
cards, summaries, recent windows and the known-user/session checks are cached in `Published`
under generation stamps the writer moves around each commit (projections/snapshots.py); a user's
search index is replaced copy-on-write by the writer, so a recall keeps a consistent index even
while the user is being written. The SQL is the writer store's own (`EmbeddedStore`), run on the
reader's connection, so a read gives what the same read on the writer would after its commit.
"""

from __future__ import annotations

import sqlite3
import threading
from datetime import datetime
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from engram.schemas.events import SummarySnapshotted
from engram.schemas.memory import GlobalCard, MemoryRecord
from engram.schemas.profile import ProfileDocument

from .embedded_store import EmbeddedStore
from .hybrid_index import UserIndex
from .ports import RecentTurn
from .snapshots import Published
from .turn_index import TurnIndex


class EmbeddedReader(EmbeddedStore):
    """The read half of `MemoryStore` over the data file, for any number of threads at once."""

    def __init__(self, path: Path, dimensions: int, published: Published) -> None:  # noqa: D107
        # deliberately not EmbeddedStore.__init__: no schema work, no write buffers
        self._path = path
        self._dimensions = dimensions
        self.published = published
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()

    @property  # type: ignore[override]
    def _db(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
            connection.execute("PRAGMA query_only=ON")
            connection.execute("PRAGMA busy_timeout=5000")
            connection.execute("PRAGMA cache_size=-8192")
            self._local.connection = connection
            with self._connections_lock:
                self._connections.append(connection)
        return connection

    @_db.setter
    def _db(self, value: Any) -> NoReturn:
        raise AttributeError("a reader has its own connections")

    def flush(self) -> None:
        """Nothing is buffered on the read side."""

    # -- cached reads ------------------------------------------------------------------------------
    def _index(self, tenant: str, user: str) -> UserIndex:
        return self.published.cached("index", (tenant, user), lambda: self._build_index(tenant, user))

    def _build_index(self, tenant: str, user: str) -> UserIndex:
        index = UserIndex(self._dimensions)
        rows = self._db.execute(
            "SELECT payload, vector, context FROM proj_memories WHERE tenant=? AND user=? AND status='active'",
            (tenant, user)).fetchall()
        for payload, blob, context in rows:
            index.put(MemoryRecord.model_validate_json(payload), np.frombuffer(blob, dtype=np.float32), context)
        return index

    def _turn_index(self, tenant: str, user: str) -> TurnIndex:
        return self.published.cached("turns", (tenant, user), lambda: self._build_turn_index(tenant, user))

    def list_memories(self, tenant: str, user: str, statuses: tuple[str, ...] = ("active",)) -> list[MemoryRecord]:
        return list(self.published.cached("memories", (tenant, user, *statuses),
                                          lambda: EmbeddedStore.list_memories(self, tenant, user, statuses)))

    def get_memory(self, tenant: str, user: str, memory_id: str) -> MemoryRecord | None:
        """From the current active listing when one is cached and holds the memory, else one query."""
        listed = self.published.peek("memories", (tenant, user, "active"))
        for record in listed if isinstance(listed, list) else ():
            if record.memory_id == memory_id:
                return record
        return EmbeddedStore.get_memory(self, tenant, user, memory_id)

    def list_cards(self, tenant: str, user: str) -> list[GlobalCard]:
        return list(self.published.cached("cards", (tenant, user), lambda: self._read_cards(tenant, user)))

    def _read_cards(self, tenant: str, user: str) -> list[GlobalCard]:
        rows = self._db.execute("SELECT payload FROM proj_cards WHERE tenant=? AND user=? ORDER BY card_id",
                                (tenant, user)).fetchall()
        return [GlobalCard.model_validate_json(r[0]) for r in rows]

    def latest_summary(self, tenant: str, user: str, session: str) -> SummarySnapshotted | None:
        return self.published.cached("summary", (tenant, user, session),
                                     lambda: self._read_summary(tenant, user, session))

    def _read_summary(self, tenant: str, user: str, session: str) -> SummarySnapshotted | None:
        row = self._db.execute(
            "SELECT payload FROM proj_summaries WHERE tenant=? AND user=? AND session=? "
            "ORDER BY version DESC LIMIT 1", (tenant, user, session)).fetchone()
        return SummarySnapshotted.model_validate_json(row[0]) if row else None

    def profile_document(self, tenant: str, user: str) -> ProfileDocument | None:
        return self.published.cached("profile", (tenant, user), lambda: self._read_profile(tenant, user))

    def recent_turns(self, tenant: str, user: str, session: str, limit: int) -> list[RecentTurn]:
        return list(self.published.cached("recent", (tenant, user, session, str(limit)),
                                          lambda: self._read_recent(tenant, user, session, limit)))

    def _read_recent(self, tenant: str, user: str, session: str, limit: int) -> list[RecentTurn]:
        rows = self._db.execute(
            "SELECT message_id, position, role, content, occurred_at FROM proj_turns "
            "WHERE tenant=? AND user=? AND session=? ORDER BY position DESC LIMIT ?",
            (tenant, user, session, limit)).fetchall()
        turns = [RecentTurn(session, m, role, c, datetime.fromisoformat(t), p) for m, p, role, c, t in rows]
        turns.reverse()
        return turns

    def has_user(self, tenant: str, user: str) -> bool:
        return self.published.cached("user", (tenant, user), lambda: self._exists(
            "SELECT 1 FROM proj_users WHERE tenant=? AND user=?", (tenant, user)))

    def has_session(self, tenant: str, user: str, session: str) -> bool:
        return self.published.cached("session", (tenant, user, session), lambda: self._exists(
            "SELECT 1 FROM proj_sessions WHERE tenant=? AND user=? AND session=?", (tenant, user, session)))

    def _exists(self, query: str, params: tuple[str, ...]) -> bool:
        return self._db.execute(query, params).fetchone() is not None

    # -- no writes -----------------------------------------------------------------------------------
    def _refuse(self, *args: object, **kwargs: object) -> NoReturn:
        raise PermissionError("the embedded reader is read-only: write through the runtime")

    upsert_memory = delete_memory = upsert_summary = upsert_card = add_turn = _refuse  # type: ignore[assignment]
    put_profile = _refuse  # type: ignore[assignment]
    forget_context = clear = forget_cache = withdraw_turns = _refuse  # type: ignore[assignment]

    def close(self) -> None:
        with self._connections_lock:
            for connection in self._connections:
                connection.close()
            self._connections.clear()
