"""The cards processor: global card commands decided from events, with a version check (SPEC §5).

Optimistic concurrency, keyed by tenant/user. A `GlobalCardRequested` carries
the card version its change was computed on (`expected_version`); the
processor keeps, per user, each card's current version and whether it is
deleted, and either applies the command (a `GlobalCardSaved` with the full new
state at version + 1, or a `GlobalCardDeleted`) or refuses it with a
`GlobalCardRejected` naming the reason. Nothing else is read: two requests
computed on the same version, from one server process or from several, reach
this processor in the order of their user's partition, and exactly one of them
wins. The edges (`engram.access.cards`) hold no lock.

Cards saved before this processor existed are unknown to its state; a request
carries the card as the requester read it (`base`), and the processor takes
that version as the card's current one the first time it meets the card.
A forget of everything marks every card deleted at its next version, as the projection erases
them. Pure: time comes from the request, ids are derived from the request's id.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from engram.schemas.base import Event, derive_id
from engram.schemas.events import CardRejection, ForgetRequested, GlobalCardDeleted, GlobalCardRejected, \
    GlobalCardRequested, GlobalCardSaved

from .processor import ProcessorContext


class CardMark(BaseModel):
    """What the processor knows of one card: its version and whether it is deleted."""

    version: int = 0
    deleted: bool = False


class UserCards(BaseModel):
    """The state of one user: card id -> mark."""

    cards: dict[str, CardMark] = Field(default_factory=dict)


class CardsProcessor:
    """Decides global card commands, one user at a time (state key tenant/user)."""

    name = "cards"
    consumes = frozenset({"GlobalCardRequested", "ForgetRequested"})
    state_type = UserCards

    def state_key(self, event: Event) -> str | None:
        return event.partition_key

    def process(self, state: UserCards | None, event: Event,
                ctx: ProcessorContext) -> tuple[UserCards | None, list[Event]]:
        state = state if state is not None else UserCards()
        if isinstance(event, ForgetRequested) and event.everything:
            # the projection erases every card of the user at its next version (projections/projector.py)
            state.cards = {card_id: CardMark(version=mark.version + 1, deleted=True)
                           for card_id, mark in state.cards.items()}
            return state, []
        if not isinstance(event, GlobalCardRequested):
            return state, []
        mark = state.cards.get(event.card_id)
        if mark is None and event.base is not None:  # a card saved before this processor existed
            mark = CardMark(version=event.base.version, deleted=event.base.deleted)
        reason = refusal(event, mark)
        if reason is not None:
            return state, [_rejected(event, reason, mark.version if mark else 0)]
        version = (mark.version if mark else 0) + 1
        state.cards[event.card_id] = CardMark(version=version, deleted=event.action == "delete")
        return state, [_decision(event, version)]


def refusal(request: GlobalCardRequested, mark: CardMark | None) -> CardRejection | None:
    """Why the request cannot be applied to a card in this state, or None."""
    live = mark is not None and not mark.deleted
    if request.action == "create" and live:
        return "card_exists"
    if request.action != "create" and not live:
        return "unknown_card"
    if request.expected_version != (mark.version if mark else 0):
        return "version_conflict"
    if request.action != "delete" and request.card is None:
        return "unknown_card"
    return None


def _decision(request: GlobalCardRequested, version: int) -> Event:
    envelope = {"event_id": derive_id(request.event_id, "cards"), "occurred_at": request.occurred_at,
                "tenant_id": request.tenant_id, "user_id": request.user_id,
                "causation_ids": (request.event_id,), "correlation_id": request.correlation_id}
    if request.action == "delete":
        return GlobalCardDeleted(**envelope, card_id=request.card_id)
    assert request.card is not None
    card = request.card.model_copy(update={"card_id": request.card_id, "tenant_id": request.tenant_id,
                                           "user_id": request.user_id, "version": version, "deleted": False})
    return GlobalCardSaved(**envelope, card=card)


def _rejected(request: GlobalCardRequested, reason: CardRejection, current: int) -> GlobalCardRejected:
    return GlobalCardRejected(
        event_id=derive_id(request.event_id, "cards"), occurred_at=request.occurred_at,
        tenant_id=request.tenant_id, user_id=request.user_id, causation_ids=(request.event_id,),
        correlation_id=request.correlation_id, request_id=request.event_id, card_id=request.card_id,
        reason=reason, expected_version=request.expected_version, current_version=current)


__all__ = ["CardMark", "CardsProcessor", "UserCards", "refusal"]
