"""Global memory cards (hand-written profile cards recall puts first): create, update, enable/disable, bind/unbind, delete, list.

Every change is a `GlobalCardRequested` command carrying the version it was
computed on; the cards processor (`engram.streams.cards`, keyed by
tenant/user) decides it from events: a `GlobalCardSaved` with the full new
state (version + 1), a `GlobalCardDeleted`, or a `GlobalCardRejected`. This
service holds no lock, so several server processes can edit one user's cards
at once. A caller that names `expected_version` gets a 409 `version_conflict`
when the card moved on; without it the service computes the change on the
version it reads and, on a conflict, reads again and retries (a few times).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engram.schemas.events import GlobalCardRejected, GlobalCardRequested
from engram.schemas.memory import GlobalCard

from .auth import Principal
from .errors import AccessError, Conflict, NotFound
from .models import CardCreate, CardUpdate
from .service import AccessService, new_id

SCOPE_FIELDS = {"tenant", "user", "expected_version"}
RETRIES = 4
"""Attempts of a change whose caller named no expected version, when other changes keep winning."""

Change = Callable[[GlobalCard], dict[str, Any]]


class CardExists(AccessError):
    status = 409
    code = "card_exists"


class VersionConflict(Conflict):
    """The card is not at the version the change was computed on."""

    code = "version_conflict"


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
        old = self._find(body.tenant, body.user, card_id)
        if old is not None and not old.deleted:
            raise CardExists(f"card {card_id!r} already exists: update it instead")
        now = self.access.clock()
        fields = body.model_dump(exclude=SCOPE_FIELDS | {"card_id"})
        card = GlobalCard.model_validate({
            **fields, "card_id": card_id, "tenant_id": body.tenant, "user_id": body.user,
            "created_at": now, "updated_at": now, "version": old.version + 1 if old else 1,
        })
        return self._decide(card.tenant_id, card.user_id, card_id, "create", old, card, "created")

    def update(self, who: Principal, card_id: str, body: CardUpdate) -> GlobalCard:
        changes = body.model_dump(exclude=SCOPE_FIELDS, exclude_none=True)
        return self._change(who, body.tenant, body.user, card_id, lambda _: changes, "updated",
                            body.expected_version)

    def set_enabled(self, who: Principal, tenant: str, user: str, card_id: str, enabled: bool,
                    expected: int | None = None) -> GlobalCard:
        return self._change(who, tenant, user, card_id, lambda _: {"enabled": enabled},
                            "enabled" if enabled else "disabled", expected)

    def bind(self, who: Principal, tenant: str, user: str, card_id: str, agent_ids: list[str],
             expected: int | None = None) -> GlobalCard:
        def add(card: GlobalCard) -> dict[str, Any]:
            return {"agent_ids": card.agent_ids + tuple(a for a in dict.fromkeys(agent_ids) if a not in card.agent_ids)}
        return self._change(who, tenant, user, card_id, add, "bound", expected)

    def unbind(self, who: Principal, tenant: str, user: str, card_id: str, agent_ids: list[str],
               expected: int | None = None) -> GlobalCard:
        def drop(card: GlobalCard) -> dict[str, Any]:
            return {"agent_ids": tuple(a for a in card.agent_ids if a not in set(agent_ids))}
        return self._change(who, tenant, user, card_id, drop, "unbound", expected)

    def delete(self, who: Principal, tenant: str, user: str, card_id: str,
               expected: int | None = None) -> GlobalCard:
        """Logical delete: the card stays in the log and the projection, marked deleted."""
        self.access.require_user(who, tenant, user)
        for attempt in range(RETRIES):
            card = self._live(tenant, user, card_id)
            self._expect(card, expected)
            try:
                return self._decide(tenant, user, card_id, "delete", card, None, "deleted")
            except VersionConflict:
                if expected is not None or attempt == RETRIES - 1:
                    raise
        raise AssertionError("unreachable")

    # -- helpers -----------------------------------------------------------------------
    def _change(self, who: Principal, tenant: str, user: str, card_id: str, change: Change, action: str,
                expected: int | None) -> GlobalCard:
        """Compute the change on the card as read and have the cards processor decide it."""
        self.access.require_user(who, tenant, user)
        for attempt in range(RETRIES):
            card = self._live(tenant, user, card_id)
            self._expect(card, expected)
            new = GlobalCard.model_validate({**card.model_dump(), **change(card), "updated_at": self.access.clock(),
                                             "version": card.version + 1})
            try:
                return self._decide(tenant, user, card_id, "save", card, new, action)
            except VersionConflict:
                if expected is not None or attempt == RETRIES - 1:
                    raise
        raise AssertionError("unreachable")

    @staticmethod
    def _expect(card: GlobalCard, expected: int | None) -> None:
        """A caller's expected version that the card (as read) is not at can only conflict: say so now."""
        if expected is not None and expected != card.version:
            raise VersionConflict(f"card {card.card_id!r} is at version {card.version}, not {expected}: "
                                  "read it again and retry", details={"current_version": card.version})

    def _decide(self, tenant: str, user: str, card_id: str, action: str, base: GlobalCard | None,
                card: GlobalCard | None, label: str) -> GlobalCard:
        event_id = new_id()
        request = GlobalCardRequested(
            event_id=event_id, occurred_at=card.updated_at if card else self.access.clock(), tenant_id=tenant,
            user_id=user, correlation_id=event_id, card_id=card_id, action=action,  # type: ignore[arg-type]
            expected_version=base.version if base else 0, card=card, base=base, label=label)
        decision = self.backend.decide(request)
        if isinstance(decision, GlobalCardRejected):
            self.access.metrics.add(f"cards.rejected.{decision.reason}")
            raise _rejection(decision)
        self.access.metrics.add(f"cards.{label}")
        found = self._find(tenant, user, card_id)
        if found is None:
            raise NotFound(f"no card {card_id!r} for this user", "unknown_card")
        return found

    def _find(self, tenant: str, user: str, card_id: str) -> GlobalCard | None:
        cards = self.backend.read(lambda store: store.list_cards(tenant, user))
        return next((c for c in cards if c.card_id == card_id), None)

    def _live(self, tenant: str, user: str, card_id: str) -> GlobalCard:
        card = self._find(tenant, user, card_id)
        if card is None or card.deleted:
            raise NotFound(f"no card {card_id!r} for this user" + (" (it was deleted)" if card else ""),
                           "unknown_card")
        return card


def _rejection(decision: GlobalCardRejected) -> AccessError:
    card = decision.card_id
    if decision.reason == "card_exists":
        return CardExists(f"card {card!r} already exists: update it instead")
    if decision.reason == "unknown_card":
        return NotFound(f"no card {card!r} for this user", "unknown_card")
    return VersionConflict(
        f"card {card!r} changed meanwhile: it is at version {decision.current_version}, "
        f"the change was made on version {decision.expected_version}; read it again and retry",
        details={"current_version": decision.current_version})


def _matches(card: GlobalCard, folder: str | None, tag: str | None, agent: str | None) -> bool:
    if folder is not None and card.folder != folder:
        return False
    if tag is not None and tag.casefold() not in {t.casefold() for t in card.tags}:
        return False
    return agent is None or agent in card.agent_ids
