"""The store port for current memory. The embedded index and Weaviate implement it.

Every method takes the tenant and the user: there is no way to ask the store
for anything across tenants or users.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

import numpy as np
import orjson

from engram.schemas.events import SummarySnapshotted
from engram.schemas.memory import GlobalCard, MemoryRecord, Role
from engram.schemas.profile import ProfileDocument


@dataclass(frozen=True)
class SearchHit:
    """One memory found by search, with the score of each channel that found it."""

    record: MemoryRecord
    vector_score: float
    keyword_score: float
    vector: np.ndarray | None = None
    terms: tuple[str, ...] | None = None
    """`terms(searchable_text(record))` when the store keeps them (spares the scorer re-tokenising)."""


@dataclass(frozen=True)
class RecentTurn:
    """A projected chat turn for the short-term window (content already redacted)."""

    session_id: str
    message_id: str
    role: Role
    content: str
    occurred_at: datetime
    position: int


@dataclass(frozen=True)
class TurnHit:
    """A recorded turn found by a search, with its keyword score (scaled to the best hit)."""

    turn: RecentTurn
    keyword_score: float


class MemoryStore(Protocol):
    """Current memory: L1/L3 memories, L2 summaries, global cards and recent turns."""

    def upsert_memory(self, tenant: str, user: str, record: MemoryRecord, vector: np.ndarray,
                      context: str = "") -> None:
        """Write a memory unless the same or a newer version is already there (may be buffered).

        `context` is extra text the memory is also found by (the turn it answers): it is
        indexed for keyword search but never returned or shown."""
        ...

    def delete_memory(self, tenant: str, user: str, memory_id: str) -> bool: ...

    def get_memory(self, tenant: str, user: str, memory_id: str) -> MemoryRecord | None: ...

    def list_memories(
        self, tenant: str, user: str, statuses: tuple[str, ...] = ("active",)
    ) -> list[MemoryRecord]: ...

    def persona_memories(self, tenant: str, user: str) -> list[MemoryRecord]:
        """Active L3 persona memories (few; always recalled first)."""
        ...

    def profile_entries(self, tenant: str, user: str, limit: int,
                        vector: np.ndarray | None = None) -> list[MemoryRecord]:
        """At most `limit` entries of the standing profile (the members of its document; every active L3
        memory while the user has no document yet), in `profile_order`: all of them when there are no
        more; else the best by that order (embedded), or those nearest `vector` (a store that cannot order
        by importance on its side, so that a long history's profile costs one bounded read)."""
        ...

    def put_profile(self, tenant: str, user: str, document: ProfileDocument) -> bool:
        """Write the user's profile document unless the same or a later `revision` of it is there."""
        ...

    def profile_document(self, tenant: str, user: str) -> ProfileDocument | None:
        """The user's profile document as last written (None: none yet, or its key is destroyed)."""
        ...

    def search_memories(
        self, tenant: str, user: str, query: str, vector: np.ndarray, limit: int
    ) -> list[SearchHit]:
        """Hybrid search over active memories: vector and keyword channels, fused."""
        ...

    def upsert_summary(self, tenant: str, user: str, snapshot: SummarySnapshotted) -> bool: ...

    def latest_summary(self, tenant: str, user: str, session: str) -> SummarySnapshotted | None: ...

    def upsert_card(self, tenant: str, user: str, card: GlobalCard) -> bool: ...

    def list_cards(self, tenant: str, user: str) -> list[GlobalCard]: ...

    def add_turn(self, tenant: str, user: str, turn: RecentTurn) -> None: ...

    def recent_turns(self, tenant: str, user: str, session: str, limit: int) -> list[RecentTurn]: ...

    def turn_neighbours(self, tenant: str, user: str, session: str, message_id: str) -> list[RecentTurn]:
        """The turns just before and just after `message_id` in `session` (by log position), those that
        exist, in order; none when the turn is unknown (or forgotten)."""
        ...

    def search_turns(self, tenant: str, user: str, query: str, limit: int) -> list[TurnHit]:
        """The user's recorded turns (user and assistant, redacted) best matching `query` by keywords (BM25
        on Engram's terms, scaled to the best hit), best first; forgotten with the user's recent turns."""
        ...

    def source_turns(self, tenant: str, user: str, keys: list[tuple[str, str]]) -> list[RecentTurn]:
        """The recorded turns of those (session, message id) keys that exist (not forgotten), in order asked."""
        ...

    def withdraw_turns(self, tenant: str, user: str, keys: list[tuple[str, str]]) -> int:
        """Those (session, message id) turns (the source turns of a forgotten memory) are evidence no more:
        never searched or quoted again; the short-term window keeps them. Returns how many were found."""
        ...

    def forget_context(self, tenant: str, user: str) -> int:
        """Forget-everything: delete the user's summaries and recent turns (sessions stay known)."""
        ...

    def has_user(self, tenant: str, user: str) -> bool:
        """Whether anything at all was ever recorded for this tenant and user."""
        ...

    def has_session(self, tenant: str, user: str, session: str) -> bool:
        """Whether a turn of this session was ever recorded (still true after forget-everything)."""
        ...

    def session_users(self, tenant: str, session: str) -> list[str]:
        """Users of the tenant who have turns in this session (for lookups by session)."""
        ...

    def flush(self) -> None:
        """Make buffered writes durable and visible."""
        ...

    def clear(self) -> None:
        """Drop everything (for a rebuild from the log)."""
        ...

    def state_hash(self) -> str:
        """A hash of the whole projected state, to compare rebuilds."""
        ...


def canonical_hash(sections: Iterable[Iterable[Sequence[object]]]) -> str:
    """sha256 over rows given in a canonical order, the same for every store back end.

    Sections, in order: memories (tenant, user, memory_id, version, status, record JSON),
    summaries (tenant, user, session, version, JSON), cards (tenant, user, card_id,
    version, JSON), turns (tenant, user, session, message_id, role, content) in
    conversation order, sessions (tenant, user, session), profile documents (tenant, user,
    version, JSON).
    """
    digest = hashlib.sha256()
    for rows in sections:
        for row in rows:
            digest.update(orjson.dumps([v.decode() if isinstance(v, bytes) else v for v in row]))
    return digest.hexdigest()


def check_owner(tenant: str, user: str, record_tenant: str, record_user: str) -> None:
    """Refuse to write a record under any tenant/user but its own."""
    if (tenant, user) != (record_tenant, record_user):
        raise ValueError(f"record belongs to {record_tenant}/{record_user}, not to {tenant}/{user}")


def profile_order(record: MemoryRecord) -> tuple[bool, float, float, str]:
    """The standing profile's order: pinned first, then the most important, then the most recent."""
    return (not record.pinned, -record.importance, -record.last_seen_at.timestamp(), record.memory_id)
