"""Applies events to a MemoryStore. Idempotent: replays and duplicates change nothing.

A memory is also found by the turn it answers: the projector remembers, for
each recent turn, the turn before it in its session when another speaker
(role or `speaker` metadata) said it, and indexes a memory
under that text too (`context`, keyword channel) and with a vector that leans
towards it (`own + CONTEXT_WEIGHT·previous`, normalised). "What did you do
last weekend?" / "Went hiking with my dog" is then found by "weekend". The
memory returned is the memory itself. A memory is also found by the words it
was written from: the (redacted) text of its source turns joins its keyword
keys, so a note phrased in other words than the user's ("User values family")
still matches the user's own words ("my kids mean everything to me"). Only the
log decides the context, so a replay rebuilds the same index.
"""

from __future__ import annotations

from collections import OrderedDict
from datetime import datetime

import numpy as np

from engram.core.embedding import Embedder, embed_text
from engram.core.pii import redact
from engram.schemas.base import Event
from engram.schemas.events import (
    ForgetRequested, GlobalCardDeleted, GlobalCardSaved, MemoryChanged, ProfileChanged, SummarySnapshotted,
    TurnRecorded,
)
from engram.schemas.profile import ProfileDocument

from engram.schemas.memory import GlobalCard

from .ports import MemoryStore, RecentTurn

PROJECTED_TYPES = frozenset(
    {"MemoryChanged", "SummarySnapshotted", "GlobalCardSaved", "GlobalCardDeleted", "TurnRecorded",
     "ForgetRequested", "ProfileChanged"}
)


CONTEXT_WEIGHT = 0.5
"""How far a memory's vector leans towards the turn it answers."""
REMEMBERED_TURNS = 100_000
FORGETTABLE_STATUSES = ("active", "replaced", "retired", "archived", "deleted")


class CurrentMemoryProjector:
    """Keeps a MemoryStore equal to the fold of the events it is given."""

    def __init__(self, store: MemoryStore, embedder: Embedder, context_weight: float = CONTEXT_WEIGHT) -> None:
        self.store = store
        self.embedder = embedder
        self.context_weight = context_weight
        self._last_turn: OrderedDict[tuple[str, str, str], tuple[str, str]] = OrderedDict()
        self._answers: OrderedDict[tuple[str, str, str], str] = OrderedDict()
        self._said: OrderedDict[tuple[str, str, str], str] = OrderedDict()
        self._corrected: OrderedDict[tuple[str, str, str], None] = OrderedDict()

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
        elif isinstance(event, ProfileChanged):
            document = folded_profile(self.store.profile_document(event.tenant_id, event.user_id), event)
            if document is not None:
                self.store.put_profile(event.tenant_id, event.user_id, document)
        elif isinstance(event, ForgetRequested) and event.everything:
            self._forget_turns(event.tenant_id, event.user_id)
            self._forget_everything(event)
        elif isinstance(event, ForgetRequested) and event.memory_ids:
            self._forget_sources(event)
        elif isinstance(event, ForgetRequested) and event.topic_text.strip():
            # a summary or a recent turn may name the topic: dropped, re-derived as the chat goes on
            self._forget_turns(event.tenant_id, event.user_id)
            self.store.forget_context(event.tenant_id, event.user_id)

    def _memory(self, event: MemoryChanged) -> None:
        if event.change == "deleted":
            self.store.delete_memory(event.tenant_id, event.user_id, event.memory_id)
        elif event.after is not None:
            record = event.after
            owner = (event.tenant_id, event.user_id, record.memory_id)
            if event.change == "corrected":
                self._corrected[owner] = None
                self._corrected.move_to_end(owner)
                if len(self._corrected) > REMEMBERED_TURNS:
                    self._corrected.popitem(last=False)
            if owner in self._corrected:  # the user's words now: what the source turns said does not apply
                self.store.upsert_memory(event.tenant_id, event.user_id, record,
                                         embed_text(self.embedder, record.content), "")
                return
            first = record.source_message_ids[0] if record.source_message_ids else ""
            answered = self._answers.get((event.tenant_id, event.user_id, first), "")
            vector = embed_text(self.embedder, record.content)
            if answered and self.context_weight:
                mixed = vector + self.context_weight * embed_text(self.embedder, answered)
                norm = float(np.linalg.norm(mixed))
                vector = (mixed / norm if norm else mixed).astype(np.float32)
            said = [self._said.get((event.tenant_id, event.user_id, m), "") for m in record.source_message_ids[:3]]
            context = " ".join(text for text in (answered, *said) if text)
            self.store.upsert_memory(event.tenant_id, event.user_id, record, vector, context)

    def _forget_turns(self, tenant: str, user: str) -> None:
        """The turn texts kept for context go with the user's recent turns."""
        for cache in (self._answers, self._last_turn, self._said):
            for key in [k for k in cache if k[0] == tenant and k[1] == user]:
                del cache[key]

    def _forget_sources(self, event: ForgetRequested) -> None:
        """A forgotten memory's source turns are evidence no more: quoted or searched they would bring back
        what the user asked to forget (the session's short-term window keeps them: one forget is no reset)."""
        keys: list[tuple[str, str]] = []
        for memory_id in event.memory_ids:
            record = self.store.get_memory(event.tenant_id, event.user_id, memory_id)
            if record is not None:
                keys.extend((record.session_id, m) for m in record.source_message_ids if m)
        if keys:
            self.store.withdraw_turns(event.tenant_id, event.user_id, keys)
            for cache in (self._answers, self._said):
                for _, message_id in keys:
                    cache.pop((event.tenant_id, event.user_id, message_id), None)

    def _forget_everything(self, event: ForgetRequested) -> None:
        """Summaries, recent turns, every version of every memory (replaced and retired ones too), and the
        text of every global card (each becomes an empty, deleted tombstone at its next version)."""
        self.store.forget_context(event.tenant_id, event.user_id)
        for record in self.store.list_memories(event.tenant_id, event.user_id, FORGETTABLE_STATUSES):
            self.store.delete_memory(event.tenant_id, event.user_id, record.memory_id)
        for card in self.store.list_cards(event.tenant_id, event.user_id):
            self.store.upsert_card(event.tenant_id, event.user_id, erased_card(card, event.occurred_at))

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
        speaker = f"{event.role}:{event.metadata.get('speaker', '')}"
        self._remember_turn(event.tenant_id, event.user_id, event.session_id, event.message_id, speaker,
                            turn.content)

    def _remember_turn(self, tenant: str, user: str, session: str, message_id: str, speaker: str,
                       content: str) -> None:
        """The turn before `message_id` in its session is what a memory of that turn answers, when someone
        else said it (two messages of the same speaker in a row are not a question and its answer)."""
        key = (tenant, user, session)
        previous_speaker, previous = self._last_turn.pop(key, ("", ""))
        if previous and previous_speaker != speaker:
            self._answers[(tenant, user, message_id)] = previous
            if len(self._answers) > REMEMBERED_TURNS:
                self._answers.popitem(last=False)
        self._last_turn[key] = (speaker, content)
        if len(self._last_turn) > REMEMBERED_TURNS:
            self._last_turn.popitem(last=False)
        self._said[(tenant, user, message_id)] = content
        if len(self._said) > REMEMBERED_TURNS:
            self._said.popitem(last=False)


def folded_profile(document: ProfileDocument | None, change: ProfileChanged) -> ProfileDocument | None:
    """The profile document after `change`, or None when the document already has it (a replay or a
    redelivery): entries removed, then those added and updated put in, at the change's version.

    A version 1 other than the one the document started with starts it anew: the processor's state was
    erased with its owner's key (a forget-everything on the distributed runtime, whose states are sealed)
    and the profile restarted, after the old one had lost every entry."""
    restarted = change.profile_version == 1 and (document is None or document.first_event_id != change.event_id)
    if document is not None and not restarted and document.version >= change.profile_version:
        return None
    base = None if restarted else document
    entries = {e.memory_id: e for e in base.entries} if base is not None else {}
    for removal in change.removed:
        entries.pop(removal.memory_id, None)
    for item in (*change.added, *change.updated):
        entries[item.memory_id] = item
    return ProfileDocument(tenant_id=change.tenant_id, user_id=change.user_id, version=change.profile_version,
                           revision=(document.revision if document is not None else 0) + 1,
                           entries=tuple(entries[m] for m in sorted(entries)), updated_at=change.occurred_at,
                           first_event_id=base.first_event_id if base is not None else change.event_id,
                           last_event_id=change.event_id)


def erased_card(card: GlobalCard, at: datetime) -> GlobalCard:
    """The card after its owner forgot everything: no text left, deleted, disabled, at the next version."""
    return GlobalCard(card_id=card.card_id, tenant_id=card.tenant_id, user_id=card.user_id, enabled=False,
                      deleted=True, created_at=card.created_at, updated_at=at, version=card.version + 1)
