"""Applies events to a MemoryStore. Idempotent: replays and duplicates change nothing."""

from __future__ import annotations

from engram.core.embedding import Embedder, embed_text
from engram.core.pii import redact
from engram.schemas.base import Event
from engram.schemas.events import (
    ForgetRequested, GlobalCardDeleted, GlobalCardSaved, MemoryChanged, SummarySnapshotted, TurnRecorded,
)

from .ports import MemoryStore, RecentTurn

PROJECTED_TYPES = frozenset(
    {"MemoryChanged", "SummarySnapshotted", "GlobalCardSaved", "GlobalCardDeleted", "TurnRecorded",
     "ForgetRequested"}
)


FORGETTABLE_STATUSES = ("active", "replaced", "retired", "archived", "deleted")


class CurrentMemoryProjector:
    """Keeps a MemoryStore equal to the fold of the events it is given."""

    def __init__(self, store: MemoryStore, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder

    def apply(self, event: Event, position: int) -> None:
        """Project one event; `position` is its place in the log (orders recent turns)."""
        if isinstance(event, MemoryChanged):
            self._memory(event)
        elif isinstance(event, SummarySnapshotted):
            if event.status == "ok":
                self.store.upsert_summary(event.tenant_id, event.user_id, event)
        elif isinstance(event, GlobalCardSaved):
            self.store.upsert_card(event.tenant_id, event.user_id, event.card)
        elif isinstance(event, GlobalCardDeleted):
            self._delete_card(event)
        elif isinstance(event, TurnRecorded):
            self._turn(event, position)
        elif isinstance(event, ForgetRequested) and event.everything:
            self._forget_everything(event)
        elif isinstance(event, ForgetRequested) and event.topic_text.strip():
            # a summary or a recent turn may name the topic: dropped, re-derived as the chat goes on
            self.store.forget_context(event.tenant_id, event.user_id)

    def _memory(self, event: MemoryChanged) -> None:
        if event.change == "deleted":
            self.store.delete_memory(event.tenant_id, event.user_id, event.memory_id)
        elif event.after is not None:
            vector = embed_text(self.embedder, event.after.content)
            self.store.upsert_memory(event.tenant_id, event.user_id, event.after, vector)

    def _forget_everything(self, event: ForgetRequested) -> None:
        """Summaries, recent turns, and every version of every memory (replaced and retired ones too)."""
        self.store.forget_context(event.tenant_id, event.user_id)
        for record in self.store.list_memories(event.tenant_id, event.user_id, FORGETTABLE_STATUSES):
            self.store.delete_memory(event.tenant_id, event.user_id, record.memory_id)

    def _delete_card(self, event: GlobalCardDeleted) -> None:
        for card in self.store.list_cards(event.tenant_id, event.user_id):
            if card.card_id == event.card_id and not card.deleted:
                gone = card.model_copy(
                    update={"deleted": True, "updated_at": event.occurred_at, "version": card.version + 1}
                )
                self.store.upsert_card(event.tenant_id, event.user_id, gone)

    def _turn(self, event: TurnRecorded, position: int) -> None:
        turn = RecentTurn(
            session_id=event.session_id, message_id=event.message_id, role=event.role,
            content=redact(event.content).text, occurred_at=event.occurred_at, position=position,
        )
        self.store.add_turn(event.tenant_id, event.user_id, turn)
