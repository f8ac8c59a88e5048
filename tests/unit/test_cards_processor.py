"""The cards processor decides card commands from events alone: version check, existence, legacy cards."""

from __future__ import annotations

from datetime import datetime, timezone

from engram.schemas.events import GlobalCardDeleted, GlobalCardRejected, GlobalCardRequested, GlobalCardSaved
from engram.schemas.memory import GlobalCard
from engram.streams.cards import CardsProcessor, UserCards
from engram.streams.processor import ProcessorContext

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
CTX = ProcessorContext()


def _card(version: int = 1, name: str = "Ana", deleted: bool = False) -> GlobalCard:
    return GlobalCard(card_id="c1", tenant_id="t", user_id="u", name=name, created_at=NOW, updated_at=NOW,
                      version=version, deleted=deleted)


def _request(event_id: str, action: str, expected: int, card: GlobalCard | None = None,
             base: GlobalCard | None = None) -> GlobalCardRequested:
    return GlobalCardRequested(event_id=event_id, occurred_at=NOW, tenant_id="t", user_id="u", card_id="c1",
                               action=action, expected_version=expected, card=card, base=base)  # type: ignore[arg-type]


def _run(state: UserCards | None, *requests: GlobalCardRequested) -> tuple[UserCards | None, list[object]]:
    processor, out = CardsProcessor(), []
    for request in requests:
        state, events = processor.process(state, request, CTX)
        out.extend(events)
    return state, out


def test_two_changes_computed_on_one_version_exactly_one_wins() -> None:
    state, created = _run(None, _request("r0", "create", 0, _card(1)))
    assert isinstance(created[0], GlobalCardSaved) and created[0].card.version == 1
    _, out = _run(state, _request("r1", "save", 1, _card(2, "Ana L.")), _request("r2", "save", 1, _card(2, "Ann")))
    saved, rejected = out
    assert isinstance(saved, GlobalCardSaved) and saved.card.name == "Ana L." and saved.card.version == 2
    assert isinstance(rejected, GlobalCardRejected)
    assert (rejected.reason, rejected.expected_version, rejected.current_version) == ("version_conflict", 1, 2)
    assert rejected.request_id == "r2" and rejected.causation_ids == ("r2",)


def test_create_update_and_delete_check_existence() -> None:
    _, out = _run(None, _request("r1", "save", 1, _card(2)), _request("r2", "delete", 1))
    assert [(e.type, e.reason) for e in out] == [("GlobalCardRejected", "unknown_card")] * 2  # type: ignore[attr-defined]
    state, out = _run(None, _request("r3", "create", 0, _card(1)), _request("r4", "create", 0, _card(1)))
    assert [e.type for e in out] == ["GlobalCardSaved", "GlobalCardRejected"]
    assert out[1].reason == "card_exists"  # type: ignore[attr-defined]
    state, out = _run(state, _request("r5", "delete", 1), _request("r6", "save", 2, _card(3)))
    assert isinstance(out[0], GlobalCardDeleted) and out[1].reason == "unknown_card"  # type: ignore[attr-defined]
    _, out = _run(state, _request("r7", "create", 2, _card(3)))  # a deleted card may be created again
    assert isinstance(out[0], GlobalCardSaved) and out[0].card.version == 3


def test_a_card_saved_before_the_processor_is_taken_from_the_request() -> None:
    legacy = _card(4)
    _, out = _run(None, _request("r1", "save", 4, _card(5, "Ana L."), base=legacy),
                  _request("r2", "save", 4, _card(5, "Ann"), base=legacy))
    assert out[0].type == "GlobalCardSaved" and out[0].card.version == 5  # type: ignore[attr-defined]
    assert out[1].type == "GlobalCardRejected" and out[1].current_version == 5  # type: ignore[attr-defined]


def test_decisions_are_deterministic() -> None:
    request = _request("r1", "create", 0, _card(1))
    assert _run(None, request)[1] == _run(None, request)[1]
