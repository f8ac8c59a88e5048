"""The embedded current-memory store: SQLite rows plus an in-process hybrid index.

Rows live in the same SQLite file as the event log, so a projection write
commits in the same transaction as the log cursor that produced it.
"""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from datetime import datetime

import numpy as np

from engram.schemas.events import SummarySnapshotted
from engram.schemas.memory import GlobalCard, MemoryRecord
from engram.schemas.profile import ProfileDocument

from .hybrid_index import UserIndex
from .snapshots import StoreChanges
from .ports import RecentTurn, SearchHit, TurnEmbedder, TurnHit, canonical_hash, check_owner
from .turn_index import TurnIndex, TurnView, turn_vectors

SCHEMA = """
CREATE TABLE IF NOT EXISTS proj_memories (
  tenant TEXT NOT NULL, user TEXT NOT NULL, memory_id TEXT NOT NULL,
  version INTEGER NOT NULL, status TEXT NOT NULL, payload BLOB NOT NULL, vector BLOB NOT NULL,
  context TEXT NOT NULL DEFAULT '', PRIMARY KEY (tenant, user, memory_id));
CREATE INDEX IF NOT EXISTS proj_memories_status ON proj_memories (tenant, user, status);
CREATE TABLE IF NOT EXISTS proj_summaries (
  tenant TEXT NOT NULL, user TEXT NOT NULL, session TEXT NOT NULL, version INTEGER NOT NULL,
  payload BLOB NOT NULL, PRIMARY KEY (tenant, user, session, version));
CREATE TABLE IF NOT EXISTS proj_cards (
  tenant TEXT NOT NULL, user TEXT NOT NULL, card_id TEXT NOT NULL, version INTEGER NOT NULL,
  payload BLOB NOT NULL, PRIMARY KEY (tenant, user, card_id));
CREATE TABLE IF NOT EXISTS proj_turns (
  tenant TEXT NOT NULL, user TEXT NOT NULL, session TEXT NOT NULL, message_id TEXT NOT NULL,
  position INTEGER NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL, occurred_at TEXT NOT NULL,
  PRIMARY KEY (tenant, user, session, message_id));
CREATE INDEX IF NOT EXISTS proj_turns_recent ON proj_turns (tenant, user, session, position);
CREATE TABLE IF NOT EXISTS proj_profiles (tenant TEXT NOT NULL, user TEXT NOT NULL, version INTEGER NOT NULL,
  payload BLOB NOT NULL, PRIMARY KEY (tenant, user));
CREATE TABLE IF NOT EXISTS proj_users (tenant TEXT NOT NULL, user TEXT NOT NULL,
  PRIMARY KEY (tenant, user));
CREATE TABLE IF NOT EXISTS proj_sessions (tenant TEXT NOT NULL, user TEXT NOT NULL, session TEXT NOT NULL,
  PRIMARY KEY (tenant, user, session));
INSERT OR IGNORE INTO proj_sessions SELECT DISTINCT tenant, user, session FROM proj_turns
  WHERE NOT EXISTS (SELECT 1 FROM proj_sessions);
"""
KEPT_TURN_INDEXES = 10_000
"""Users whose turn index the writer keeps in memory (the least recently written goes first; it is read
again from SQLite when needed)."""
TABLES = ("proj_memories", "proj_summaries", "proj_cards", "proj_turns", "proj_users", "proj_sessions",
          "proj_profiles")


class EmbeddedStore:
    """MemoryStore over SQLite; search runs on a per-user index loaded on first use."""

    def __init__(self, db: sqlite3.Connection, dimensions: int) -> None:
        self._db = db
        self._dimensions = dimensions
        self._indexes: dict[tuple[str, str], UserIndex] = {}
        self._turn_indexes: OrderedDict[tuple[str, str], TurnIndex] = OrderedDict()
        self._known_users: set[tuple[str, str]] = set()
        self._known_sessions: set[tuple[str, str, str]] = set()
        self._cards: dict[tuple[str, str], list[GlobalCard]] = {}
        self._summaries: dict[tuple[str, str, str], SummarySnapshotted | None] = {}
        self._profiles: dict[tuple[str, str], ProfileDocument | None] = {}
        self._recent: dict[tuple[str, str, str], tuple[int, list[RecentTurn]]] = {}
        # newest buffered version of each memory (record, vector bytes, context); rows are built at flush
        self._pending_memories: dict[tuple[str, str, str], tuple[MemoryRecord, bytes, str]] = {}
        self._pending_turns: list[tuple[str, str, RecentTurn]] = []
        self._embed_turns: TurnEmbedder | None = None
        self._pending_users: list[tuple[str, str]] = []
        self._pending_profiles: dict[tuple[str, str], ProfileDocument] = {}
        self.changes = StoreChanges()
        db.executescript(SCHEMA)
        if "context" not in {row[1] for row in db.execute("PRAGMA table_info(proj_memories)")}:
            db.execute("ALTER TABLE proj_memories ADD COLUMN context TEXT NOT NULL DEFAULT ''")  # older files
        turn_columns = {row[1] for row in db.execute("PRAGMA table_info(proj_turns)")}
        if "evidence" not in turn_columns:
            db.execute("ALTER TABLE proj_turns ADD COLUMN evidence INTEGER NOT NULL DEFAULT 1")
        if "vector" not in turn_columns:  # older files: their turns are found by keywords only
            db.execute("ALTER TABLE proj_turns ADD COLUMN vector BLOB")

    # -- memories -----------------------------------------------------------
    def upsert_memory(self, tenant: str, user: str, record: MemoryRecord, vector: np.ndarray,
                      context: str = "") -> None:
        """Buffered: rows reach SQLite on `flush` (every read flushes first).

        Of several versions of one memory buffered between two flushes only the one the version
        guard would keep is written: the first with the highest version (so a batch that reinforces
        a memory ten times serializes and writes it once).
        """
        check_owner(tenant, user, record.tenant_id, record.user_id)
        vector = np.asarray(vector, dtype=np.float32)
        slot = (tenant, user, record.memory_id)
        held = self._pending_memories.get(slot)
        if held is None or record.version > held[0].version:
            self._pending_memories[slot] = (record, vector.tobytes(), context)
        self._touch_user(tenant, user)
        self.changes.put(tenant, user, record, vector, context)
        index = self._indexes.get((tenant, user))
        if index is not None:
            index.put(record, vector, context)

    def flush(self) -> None:
        """Write buffered rows; the version guard keeps the newest version of each memory."""
        if self._pending_memories:
            self._db.executemany(
                "INSERT INTO proj_memories (tenant, user, memory_id, version, status, payload, vector, context) "
                "VALUES (?,?,?,?,?,?,?,?) ON CONFLICT (tenant, user, memory_id) "
                "DO UPDATE SET version=excluded.version, status=excluded.status, payload=excluded.payload, "
                "vector=excluded.vector, context=excluded.context WHERE excluded.version > proj_memories.version",
                [(tenant, user, memory_id, record.version, record.status, record.model_dump_json().encode(), vector,
                  context) for (tenant, user, memory_id), (record, vector, context) in self._pending_memories.items()],
            )
            self._pending_memories.clear()
        if self._pending_turns:
            self._flush_turns()
        if self._pending_users:
            self._db.executemany("INSERT OR IGNORE INTO proj_users VALUES (?,?)", self._pending_users)
            self._pending_users.clear()
        if self._pending_profiles:
            self._db.executemany(
                "INSERT INTO proj_profiles VALUES (?,?,?,?) ON CONFLICT (tenant, user) DO UPDATE SET "
                "version=excluded.version, payload=excluded.payload WHERE excluded.version > proj_profiles.version",
                [(tenant, user, d.revision, d.model_dump_json().encode())
                 for (tenant, user), d in self._pending_profiles.items()])
            self._pending_profiles.clear()

    def _flush_turns(self) -> None:
        """The buffered turns with their vectors (one embedder call for all of them), into the rows, the
        loaded turn indexes and the changes the readers' indexes take on at commit."""
        pending, self._pending_turns = self._pending_turns, []
        vectors = turn_vectors(self._embed_turns, [turn.content for _, _, turn in pending])
        self._db.executemany(
            "INSERT OR IGNORE INTO proj_turns (tenant, user, session, message_id, position, role, content, "
            "occurred_at, vector) VALUES (?,?,?,?,?,?,?,?,?)",
            [(tenant, user, t.session_id, t.message_id, t.position, t.role, t.content, t.occurred_at.isoformat(),
              vector.tobytes() if vector is not None else None) for (tenant, user, t), vector in zip(pending, vectors)])
        self._db.executemany("INSERT OR IGNORE INTO proj_sessions VALUES (?,?,?)",
                             sorted({(tenant, user, t.session_id) for tenant, user, t in pending}))
        for (tenant, user, turn), vector in zip(pending, vectors):
            index = self._writable_turn_index(tenant, user)
            index.put(turn, vector)
            self.changes.turns_changed(tenant, user, index)

    def _writable_turn_index(self, tenant: str, user: str) -> TurnIndex:
        """The user's turn index, kept up to date by every write (read from the rows when not in memory), so
        that readers get it at commit instead of building it again."""
        key = (tenant, user)
        index = self._turn_indexes.get(key)
        if index is None:
            index = self._turn_indexes[key] = self._build_turn_index(tenant, user)
            if len(self._turn_indexes) > KEPT_TURN_INDEXES:
                self._turn_indexes.popitem(last=False)
        self._turn_indexes.move_to_end(key)
        return index

    def delete_memory(self, tenant: str, user: str, memory_id: str) -> bool:
        self.flush()
        cursor = self._db.execute(
            "DELETE FROM proj_memories WHERE tenant=? AND user=? AND memory_id=?", (tenant, user, memory_id)
        )
        self.changes.forget(tenant, user, memory_id)
        index = self._indexes.get((tenant, user))
        if index is not None:
            index.forget(memory_id)
        return cursor.rowcount > 0

    def get_memory(self, tenant: str, user: str, memory_id: str) -> MemoryRecord | None:
        self.flush()
        row = self._db.execute(
            "SELECT payload FROM proj_memories WHERE tenant=? AND user=? AND memory_id=?",
            (tenant, user, memory_id),
        ).fetchone()
        return MemoryRecord.model_validate_json(row[0]) if row else None

    def list_memories(
        self, tenant: str, user: str, statuses: tuple[str, ...] = ("active",)
    ) -> list[MemoryRecord]:
        self.flush()
        marks = ",".join("?" * len(statuses))
        rows = self._db.execute(
            f"SELECT payload FROM proj_memories WHERE tenant=? AND user=? AND status IN ({marks})",
            (tenant, user, *statuses),
        ).fetchall()
        records = [MemoryRecord.model_validate_json(r[0]) for r in rows]
        return sorted(records, key=lambda r: (r.created_at, r.memory_id))

    def persona_memories(self, tenant: str, user: str) -> list[MemoryRecord]:
        index = self._index(tenant, user)
        persona = list(index.persona.values())
        return sorted(persona, key=lambda r: (r.slot, r.memory_id))

    def profile_entries(self, tenant: str, user: str, limit: int,
                        vector: np.ndarray | None = None) -> list[MemoryRecord]:
        index = self._index(tenant, user)
        document = self.profile_document(tenant, user)
        if document is None:  # a log written before profile documents: the L3 memories
            return index.profile_top(limit)
        members = document.member_ids
        return [r for r in index.profile_top(len(index.persona)) if r.memory_id in members][:limit]

    # -- the profile document -------------------------------------------------
    def put_profile(self, tenant: str, user: str, document: ProfileDocument) -> bool:
        """Buffered like the memories (the newest document of a user is written at `flush`), guarded by
        the document's `revision` (its `version` starts again when the profile restarts)."""
        check_owner(tenant, user, document.tenant_id, document.user_id)
        current = self.profile_document(tenant, user)
        if current is not None and current.revision >= document.revision:
            return False
        self._profiles[(tenant, user)] = self._pending_profiles[(tenant, user)] = document
        self.changes.touch(tenant, user)
        return True

    def profile_document(self, tenant: str, user: str) -> ProfileDocument | None:
        """Read once, then kept (and replaced by the writes)."""
        key = (tenant, user)
        pending = self._pending_profiles.get(key)
        if pending is not None:
            return pending
        if key not in self._profiles:
            self._profiles[key] = self._read_profile(tenant, user)
        return self._profiles[key]

    def _read_profile(self, tenant: str, user: str) -> ProfileDocument | None:
        row = self._db.execute("SELECT payload FROM proj_profiles WHERE tenant=? AND user=?", (tenant, user)).fetchone()
        return ProfileDocument.model_validate_json(row[0]) if row else None

    def search_memories(
        self, tenant: str, user: str, query: str, vector: np.ndarray, limit: int
    ) -> list[SearchHit]:
        index = self._index(tenant, user)
        dense = index.vector_search(vector, limit)
        sparse = index.keyword_search(query, limit)
        hits = [
            SearchHit(index.records[i], dense.get(i, 0.0), sparse.get(i, 0.0), index.vector_of(i), index.terms[i])
            for i in set(dense) | set(sparse)
        ]
        hits.sort(key=lambda h: (-(h.vector_score + h.keyword_score), h.record.memory_id))
        return hits

    def _index(self, tenant: str, user: str) -> UserIndex:
        index = self._indexes.get((tenant, user))
        if index is None:
            self.flush()
            index = UserIndex(self._dimensions)
            rows = self._db.execute(
                "SELECT payload, vector, context FROM proj_memories WHERE tenant=? AND user=? AND status='active'",
                (tenant, user),
            )
            for payload, blob, context in rows:
                index.put(MemoryRecord.model_validate_json(payload), np.frombuffer(blob, dtype=np.float32), context)
            self._indexes[(tenant, user)] = index
        return index

    # -- summaries, cards, turns ---------------------------------------------
    def upsert_summary(self, tenant: str, user: str, snapshot: SummarySnapshotted) -> bool:
        self.flush()
        check_owner(tenant, user, snapshot.tenant_id, snapshot.user_id)
        cursor = self._db.execute(
            "INSERT OR IGNORE INTO proj_summaries VALUES (?,?,?,?,?)",
            (tenant, user, snapshot.session_id, snapshot.version, snapshot.model_dump_json().encode()),
        )
        self._summaries.pop((tenant, user, snapshot.session_id), None)
        self.changes.touch(tenant, user)
        self._touch_user(tenant, user)
        return cursor.rowcount > 0

    def latest_summary(self, tenant: str, user: str, session: str) -> SummarySnapshotted | None:
        """Read once, then kept until the session's next summary (or a forget) replaces it."""
        key = (tenant, user, session)
        if key in self._summaries:
            return self._summaries[key]
        self.flush()
        row = self._db.execute(
            "SELECT payload FROM proj_summaries WHERE tenant=? AND user=? AND session=? "
            "ORDER BY version DESC LIMIT 1",
            (tenant, user, session),
        ).fetchone()
        snapshot = SummarySnapshotted.model_validate_json(row[0]) if row else None
        self._summaries[key] = snapshot
        return snapshot

    def upsert_card(self, tenant: str, user: str, card: GlobalCard) -> bool:
        self.flush()
        check_owner(tenant, user, card.tenant_id, card.user_id)
        cursor = self._db.execute(
            "INSERT INTO proj_cards VALUES (?,?,?,?,?) ON CONFLICT (tenant, user, card_id) DO UPDATE "
            "SET version=excluded.version, payload=excluded.payload WHERE excluded.version > proj_cards.version",
            (tenant, user, card.card_id, card.version, card.model_dump_json().encode()),
        )
        self._cards.pop((tenant, user), None)
        self.changes.touch(tenant, user)
        self._touch_user(tenant, user)
        return cursor.rowcount > 0

    def list_cards(self, tenant: str, user: str) -> list[GlobalCard]:
        """Read once, then kept until the user's next card write (cards are frozen models)."""
        cards = self._cards.get((tenant, user))
        if cards is None:
            self.flush()
            rows = self._db.execute(
                "SELECT payload FROM proj_cards WHERE tenant=? AND user=? ORDER BY card_id", (tenant, user)
            ).fetchall()
            cards = self._cards[(tenant, user)] = [GlobalCard.model_validate_json(r[0]) for r in rows]
        return list(cards)

    def embed_turns_with(self, embed: TurnEmbedder) -> None:
        self._embed_turns = embed

    def add_turn(self, tenant: str, user: str, turn: RecentTurn) -> None:
        """Buffered like memories (every read flushes first); indexed at `flush`, with its vector."""
        self._pending_turns.append((tenant, user, turn))
        self._recent.pop((tenant, user, turn.session_id), None)
        self._known_sessions.add((tenant, user, turn.session_id))
        self.changes.touch(tenant, user)
        self._touch_user(tenant, user)

    def recent_turns(self, tenant: str, user: str, session: str, limit: int) -> list[RecentTurn]:
        """The window is read once per session and limit, then kept until the session's next turn."""
        key = (tenant, user, session)
        cached = self._recent.get(key)
        if cached is not None and cached[0] == limit:
            return list(cached[1])
        self.flush()
        rows = self._db.execute(
            "SELECT message_id, position, role, content, occurred_at FROM proj_turns "
            "WHERE tenant=? AND user=? AND session=? ORDER BY position DESC LIMIT ?",
            (tenant, user, session, limit),
        ).fetchall()
        turns = [RecentTurn(session, m, role, c, datetime.fromisoformat(t), p) for m, p, role, c, t in rows]
        turns.reverse()
        self._recent[key] = (limit, turns)
        return list(turns)

    def turn_neighbours(self, tenant: str, user: str, session: str, message_id: str) -> list[RecentTurn]:
        self.flush()
        key = (tenant, user, session)
        row = self._db.execute("SELECT position FROM proj_turns WHERE tenant=? AND user=? AND session=? "
                               "AND message_id=?", (*key, message_id)).fetchone()
        if row is None:
            return []
        out = []
        for sign, order in (("<", "DESC"), (">", "ASC")):
            near = self._db.execute(
                "SELECT message_id, position, role, content, occurred_at FROM proj_turns WHERE tenant=? AND user=? "
                f"AND session=? AND position {sign} ? ORDER BY position {order} LIMIT 1", (*key, row[0])).fetchone()
            if near is not None:
                m, p, role, c, t = near
                out.append(RecentTurn(session, m, role, c, datetime.fromisoformat(t), p))
        return out

    def search_turns(self, tenant: str, user: str, query: str, limit: int,
                     vector: np.ndarray | None = None) -> list[TurnHit]:
        return self._turn_view(tenant, user).search(query, vector, limit)

    def source_turns(self, tenant: str, user: str, keys: list[tuple[str, str]]) -> list[RecentTurn]:
        """The recorded turns of those (session, message id) keys that exist, in the order asked."""
        view = self._turn_view(tenant, user)
        found = (view.turn(session, message_id) for session, message_id in keys)
        return [turn for turn in found if turn is not None]

    def _turn_view(self, tenant: str, user: str) -> TurnView:
        self.flush()
        index = self._turn_indexes.get((tenant, user))
        if index is None:
            index = self._turn_indexes[(tenant, user)] = self._build_turn_index(tenant, user)
        return index.view()

    def _build_turn_index(self, tenant: str, user: str) -> TurnIndex:
        """Every turn of the user in log order, the withdrawn ones as tombstones (a turn answering one is
        not found by its words, and one applied again stays withdrawn)."""
        index = TurnIndex(self._dimensions)
        rows = self._db.execute(
            "SELECT session, message_id, position, role, content, occurred_at, vector, evidence FROM proj_turns "
            "WHERE tenant=? AND user=? ORDER BY position", (tenant, user)).fetchall()
        size = 4 * self._dimensions
        for session, m, p, role, c, t, blob, evidence in rows:
            vector = np.frombuffer(blob, dtype=np.float32) if blob is not None and len(blob) == size else None
            index.put(RecentTurn(session, m, role, c, datetime.fromisoformat(t), p), vector, withdrawn=not evidence)
        return index

    def withdraw_turns(self, tenant: str, user: str, keys: list[tuple[str, str]]) -> int:
        self.flush()
        found = sum(self._db.execute("UPDATE proj_turns SET evidence=0 WHERE tenant=? AND user=? AND session=? AND "
                                     "message_id=?", (tenant, user, session, message_id)).rowcount
                    for session, message_id in keys)
        index = self._writable_turn_index(tenant, user)
        index.withdraw(keys)
        self.changes.turns_changed(tenant, user, index)
        return found

    def forget_context(self, tenant: str, user: str) -> int:
        """Delete the user's session summaries and recent-turn window; return the rows deleted."""
        self.flush()
        deleted = 0
        for table in ("proj_summaries", "proj_turns"):
            deleted += self._db.execute(f"DELETE FROM {table} WHERE tenant=? AND user=?", (tenant, user)).rowcount
        self._drop_user_caches(tenant, user)
        self.changes.reset_turns(tenant, user)
        return deleted

    # -- housekeeping -----------------------------------------------------------
    def _touch_user(self, tenant: str, user: str) -> None:
        if (tenant, user) not in self._known_users:
            self._pending_users.append((tenant, user))
            self._known_users.add((tenant, user))

    def has_user(self, tenant: str, user: str) -> bool:
        """A user once recorded stays known (only `clear` removes users); a miss asks SQLite."""
        if (tenant, user) in self._known_users:
            return True
        self.flush()
        row = self._db.execute("SELECT 1 FROM proj_users WHERE tenant=? AND user=?", (tenant, user)).fetchone()
        if row is not None:
            self._known_users.add((tenant, user))
        return row is not None

    def has_session(self, tenant: str, user: str, session: str) -> bool:
        if (tenant, user, session) in self._known_sessions:
            return True
        self.flush()
        row = self._db.execute(
            "SELECT 1 FROM proj_sessions WHERE tenant=? AND user=? AND session=?", (tenant, user, session)
        ).fetchone()
        if row is not None:
            self._known_sessions.add((tenant, user, session))
        return row is not None

    def session_users(self, tenant: str, session: str) -> list[str]:
        self.flush()
        rows = self._db.execute(
            "SELECT user FROM proj_sessions WHERE tenant=? AND session=? ORDER BY user", (tenant, session)
        )
        return [r[0] for r in rows]

    def forget_cache(self) -> None:
        """Drop buffers and indexes (after a rolled-back transaction they may be ahead of the rows)."""
        self._pending_memories.clear()
        self._pending_turns.clear()
        self._pending_users.clear()
        self._pending_profiles.clear()
        self._indexes.clear()
        self._known_users.clear()
        self._known_sessions.clear()
        self._drop_read_caches()
        self.changes.discard()

    def _drop_user_caches(self, tenant: str, user: str) -> None:
        self._cards.pop((tenant, user), None)
        self._profiles.pop((tenant, user), None)
        self._turn_indexes.pop((tenant, user), None)
        for cache in (self._summaries, self._recent):
            for key in [k for k in cache if k[:2] == (tenant, user)]:
                del cache[key]

    def _drop_read_caches(self) -> None:
        self._cards.clear()
        self._profiles.clear()
        self._turn_indexes.clear()
        self._summaries.clear()
        self._recent.clear()

    def clear(self) -> None:
        self.flush()
        for table in TABLES:
            self._db.execute(f"DELETE FROM {table}")
        self.changes.everything = True
        self._indexes.clear()
        self._known_users.clear()
        self._known_sessions.clear()
        self._drop_read_caches()

    def state_hash(self) -> str:
        self.flush()
        queries = (
            "SELECT tenant, user, memory_id, version, status, payload FROM proj_memories "
            "ORDER BY tenant, user, memory_id",
            "SELECT tenant, user, session, version, payload FROM proj_summaries ORDER BY tenant, user, session, version",
            "SELECT tenant, user, card_id, version, payload FROM proj_cards ORDER BY tenant, user, card_id",
            "SELECT tenant, user, session, message_id, role, content FROM proj_turns "
            "ORDER BY tenant, user, session, position, message_id",
            "SELECT tenant, user, session FROM proj_sessions ORDER BY tenant, user, session",
            "SELECT tenant, user, version, payload FROM proj_profiles ORDER BY tenant, user",
        )
        return canonical_hash(self._db.execute(query) for query in queries)
