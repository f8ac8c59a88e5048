"""A user turn and the reply to it, both found by a question, are one piece of evidence: they rank as one
round scoring both their matches, and the round quotes the sentences of either that carry the question's
words, with both turns as its provenance."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import numpy as np

from engram.projections.ports import RecentTurn, TurnHit
from engram.recall.evidence import FusionInput, fuse

T0 = datetime(2024, 5, 1, 9)


def _turn(session: str, message_id: str, role: str, text: str, position: int) -> RecentTurn:
    return RecentTurn(session, message_id, role, text, T0 + timedelta(minutes=position), position)  # type: ignore[arg-type]


class _Turns:
    """A store stand-in that finds the given turns, best first, and knows the recorded ones around them."""

    def __init__(self, found: list[RecentTurn], recorded: list[RecentTurn] | None = None) -> None:
        self.found = found
        self.recorded = recorded or []

    def turn_neighbours(self, tenant: str, user: str, session: str, message_id: str) -> list[RecentTurn]:
        own = next((t for t in self.recorded if t.message_id == message_id), None)
        if own is None:
            return []
        return [t for t in self.recorded if t.session_id == session and abs(t.position - own.position) == 1]

    def search_turns(self, tenant: str, user: str, query: str, limit: int,
                     vector: np.ndarray | None = None) -> list[TurnHit]:
        return [TurnHit(t, 1.0 - n / 100) for n, t in enumerate(self.found)]

    def source_turns(self, tenant: str, user: str, keys: list[tuple[str, str]]) -> list[RecentTurn]:
        return []


ASK = FusionInput("t", "u", "Which sourdough starter ratio did you suggest?", frozenset(), 50, 5.0, 60)
QUESTION = _turn("bake", "b1", "user", "My sourdough starter keeps collapsing. What should I change?", 10)
REPLY = _turn("bake", "b2", "assistant", "Feed the starter at a 1:5:5 ratio twice a day. Keep it warm.", 11)
STRAY = _turn("trip", "x1", "user", "The hotel suggested a sourdough bakery near the station.", 40)
LATER = _turn("bake", "b9", "user", "Thanks, the ratio worked.", 30)


def _fused(found: list[RecentTurn], recorded: list[RecentTurn] | None = None) -> list[Any]:
    return fuse(_Turns(found, recorded or [QUESTION, REPLY, STRAY, LATER]), ASK, [])  # type: ignore[arg-type]


def test_a_question_and_its_reply_found_together_are_one_round_with_both_as_provenance() -> None:
    items = _fused([REPLY, STRAY, QUESTION])
    assert [i.item_id for i in items] == ["b2", "x1"]  # the round takes its better rank; one item, not two
    round_item = items[0]
    assert round_item.source_message_ids == ("b1", "b2")  # in the order said
    assert "1:5:5 ratio" in round_item.text and "sourdough starter keeps collapsing" in round_item.text
    assert round_item.details["role"] == "user and assistant"


def test_a_round_scores_both_its_turns_matches() -> None:
    elsewhere = _turn("misc", "m1", "user", "A starter of olives and bread.", 50)
    assert [i.item_id for i in _fused([STRAY, REPLY, elsewhere])] == ["x1", "b2", "m1"]  # the reply alone
    assert [i.item_id for i in _fused([STRAY, REPLY, QUESTION])] == ["b2", "x1"]  # the round outranks it


def test_a_reply_found_alone_is_shown_with_the_turn_it_answers() -> None:
    items = _fused([REPLY, STRAY])
    assert items[0].item_id == "b2" and items[0].source_message_ids == ("b1", "b2")
    assert "sourdough starter keeps collapsing" in items[0].text
    assert items[1].source_message_ids == ("x1",)  # a user turn with no reply recorded stays alone


def test_turns_that_are_not_one_round_stay_apart() -> None:
    items = _fused([REPLY, LATER, STRAY], recorded=[REPLY, LATER, STRAY])
    assert sorted(i.item_id for i in items) == ["b2", "b9", "x1"]
    assert all(len(i.source_message_ids) == 1 for i in items)
