"""Global memory cards (SPEC §5): create, update, enable/disable, bind/unbind, delete, list.

Every change is a `GlobalCardSaved` event carrying the card's full new state
(version + 1), or a `GlobalCardDeleted`; the projection applies them and the
card is read back from it. Read-modify-write runs while holding the back end,
so two concurrent updates of one card cannot lose each other.
"""

from __future__ import annotations

from typing import Any

from engram.schemas.events import GlobalCardDeleted, GlobalCardSaved
from engram.schemas.memory import GlobalCard

from .auth import Principal
from .errors import AccessError, NotFound
from .models import CardCreate, CardUpdate
from .service import AccessService, new_id

SCOPE_FIELDS = {"tenant", "user"}


class CardExists(AccessError):
    status = 409
    code = "card_exists"


class CardService:
    """Global card use cases on top of an AccessService (same back end, same checks)."""

    def __init__(self, access: AccessService) -> None:
        self.access = access
        self.backend = access.backend

    def list_cards(self, who: Principal, tenant: str, user: str, folder: str | None = None, tag: str | None = None,
             agent: str | None = None, include_deleted: bool = False) -> list[GlobalCard]:
        """The user's cards, optionally narrowed to one folder, tag or bound agent."""
        self.access.require_user(who, tenant, user)
        cards = self.backend.read(lambda store: store.list_cards(tenant, user))
        return [c for c in cards if (include_deleted or not c.deleted) and _matches(c, folder, tag, agent)]

    def get(self, who: Principal, tenant: str, user: str, card_id: str) -> GlobalCard:
        self.access.require_user(who, tenant, user)
        return self._live(tenant, user, card_id)

    def create(self, who: Principal, body: CardCreate) -> GlobalCard:
        who.check_tenant(body.tenant)
        card_id = body.card_id or new_id()
        with self.backend.exclusive():
            old = self._find(body.tenant, body.user, card_id)
            if old is not None and not old.deleted:
                raise CardExists(f"card {card_id!r} already exists: update it instead")
            now = self.access.clock()
            fields = body.model_dump(exclude=SCOPE_FIELDS | {"card_id"})
            card = GlobalCard.model_validate({
                **fields, "card_id": card_id, "tenant_id": body.tenant, "user_id": body.user,
                "created_at": now, "updated_at": now, "version": old.version + 1 if old else 1,
            })
            return self._save(card, "created")

    def update(self, who: Principal, card_id: str, body: CardUpdate) -> GlobalCard:
        changes = body.model_dump(exclude=SCOPE_FIELDS, exclude_none=True)
        return self._change(who, body.tenant, body.user, card_id, changes, "updated")

    def set_enabled(self, who: Principal, tenant: str, user: str, card_id: str, enabled: bool) -> GlobalCard:
        return self._change(who, tenant, user, card_id, {"enabled": enabled}, "enabled" if enabled else "disabled")

    def bind(self, who: Principal, tenant: str, user: str, card_id: str, agent_ids: list[str]) -> GlobalCard:
        def add(card: GlobalCard) -> dict[str, Any]:
            return {"agent_ids": card.agent_ids + tuple(a for a in dict.fromkeys(agent_ids) if a not in card.agent_ids)}
        return self._change(who, tenant, user, card_id, add, "bound")

    def unbind(self, who: Principal, tenant: str, user: str, card_id: str, agent_ids: list[str]) -> GlobalCard:
        def drop(card: GlobalCard) -> dict[str, Any]:
            return {"agent_ids": tuple(a for a in card.agent_ids if a not in set(agent_ids))}
        return self._change(who, tenant, user, card_id, drop, "unbound")

    def delete(self, who: Principal, tenant: str, user: str, card_id: str) -> GlobalCard:
        """Logical delete: the card stays in the log and the projection, marked deleted."""
        self.access.require_user(who, tenant, user)
        with self.backend.exclusive():
            self._live(tenant, user, card_id)
            event_id = new_id()
            self.backend.submit([GlobalCardDeleted(event_id=event_id, occurred_at=self.access.clock(),
                                                   tenant_id=tenant, user_id=user, card_id=card_id,
                                                   correlation_id=event_id)])
            self.access.metrics.add("cards.deleted")
            deleted = self._find(tenant, user, card_id)
        assert deleted is not None
        return deleted

    # -- helpers -----------------------------------------------------------------------
    def _change(self, who: Principal, tenant: str, user: str, card_id: str,
                changes: dict[str, Any] | Any, action: str) -> GlobalCard:
        self.access.require_user(who, tenant, user)
        with self.backend.exclusive():
            card = self._live(tenant, user, card_id)
            update = changes(card) if callable(changes) else changes
            new = GlobalCard.model_validate({**card.model_dump(), **update, "updated_at": self.access.clock(),
                                             "version": card.version + 1})
            return self._save(new, action)

    def _save(self, card: GlobalCard, action: str) -> GlobalCard:
        event_id = new_id()
        self.backend.submit([GlobalCardSaved(event_id=event_id, occurred_at=card.updated_at,
                                             tenant_id=card.tenant_id, user_id=card.user_id, card=card,
                                             correlation_id=event_id)])
        self.access.metrics.add(f"cards.{action}")
        return self._live(card.tenant_id, card.user_id, card.card_id)

    def _find(self, tenant: str, user: str, card_id: str) -> GlobalCard | None:
        cards = self.backend.read(lambda store: store.list_cards(tenant, user))
        return next((c for c in cards if c.card_id == card_id), None)

    def _live(self, tenant: str, user: str, card_id: str) -> GlobalCard:
        card = self._find(tenant, user, card_id)
        if card is None or card.deleted:
            raise NotFound(f"no card {card_id!r} for this user" + (" (it was deleted)" if card else ""),
                           "unknown_card")
        return card


def _matches(card: GlobalCard, folder: str | None, tag: str | None, agent: str | None) -> bool:
    if folder is not None and card.folder != folder:
        return False
    if tag is not None and tag.casefold() not in {t.casefold() for t in card.tags}:
        return False
    return agent is None or agent in card.agent_ids
