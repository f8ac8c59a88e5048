"""Supersession takes out only the standing profile's entries a real change replaced (a house move, a change
of diet), and an item the budget strips of its quotes explains only what the context shows."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from engram.recall.budget import pack
from engram.recall.context import RecalledItem, without_context_turns
from engram.recall.profile import is_move, superseded
from engram.schemas.memory import MemoryRecord
from tests.drivers import profile_fact

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _entry(memory_id: str, content: str, day: int, layer: str = "L3") -> MemoryRecord:
    return profile_fact(memory_id, content, day, layer, T0)


@pytest.mark.parametrize("text", [
    "We moved to Seattle last month!", "I'm relocating for my partner's job.", "We just moved.",
    "Moving back home in June, finally.", "Since we moved into the new flat the commute is shorter.",
    "We moved house twice last year.", "我们上个月搬到杭州了", "I moved out of my parents' place.",
])
def test_a_move_of_residence_is_a_move(text: str) -> None:
    assert is_move(text)


@pytest.mark.parametrize("text", [
    "Can we move the meeting to Friday?", "I'm moving the standup to 10am.", "The dentist appointment moved to Thursday.",
    "I was really moved by the film.", "Time to move on from that job.", "We moved our call to tomorrow morning.",
    "The meeting was moved.",
])
def test_moving_a_meeting_or_being_moved_is_no_move(text: str) -> None:
    assert not is_move(text)


def test_a_rescheduled_meeting_leaves_where_the_user_lives() -> None:
    records = [_entry("home", "User lives in Lisbon", 0), _entry("meet", "User is moving the meeting to Friday", 1, "L1")]
    assert superseded(records) == set()


def test_a_move_takes_out_earlier_home_entries_of_the_profile_only() -> None:
    records = [_entry("home", "User lives in Lisbon", 0),
               _entry("note", "User mentioned: the house in Lisbon had a lovely garden", 0, "L1"),
               _entry("moved", "User moved to Porto", 1)]
    assert superseded(records) == {"home"}, "a search hit outside the profile is not a profile entry"


def test_a_quote_the_budget_drops_leaves_the_items_details_too() -> None:
    quote = "We adopted a greyhound called Biscuit from the Lisbon shelter last Saturday, a big gentle dog."
    item = RecalledItem("memory", "m1", "User adopted a dog", 1.0, 40, ("t1",), T0,
                        details={"type": "user_fact", "evidence": {"message_id": "t1", "text": quote}},
                        event_time=T0, context_turns=(("t1", quote),))
    bare = without_context_turns(item)
    assert bare.context_turns == () and "evidence" not in bare.details
    for budget in range(30, 80):
        packing = pack([item], "Tell me about my dog", budget)
        for kept in packing.kept:
            assert bool(kept.context_turns) == ("evidence" in kept.details), f"budget {budget}"


def test_the_recall_caches_keyed_by_text_empty_with_an_erasure() -> None:
    from engram.core.text_caches import clear_text_caches
    from engram.recall.evidence import showable
    from engram.recall.profile import supersession_marks as _changes

    showable("We adopted a greyhound. The vet is near Alfama.", frozenset())
    superseded([_entry("home", "User lives in Lisbon", 0)])
    assert _changes.cache_info().currsize
    clear_text_caches()
    from engram.recall.evidence import _sentences
    assert _sentences.cache_info().currsize == 0 and _changes.cache_info().currsize == 0



def test_several_notes_of_one_turn_quote_it_once() -> None:
    quote = "We adopted a greyhound called Biscuit from the Lisbon shelter last Saturday, a big gentle dog."

    def note(memory_id: str, text: str) -> RecalledItem:
        return RecalledItem("memory", memory_id, text, 1.0, 40, ("t1",), T0,
                            details={"type": "user_fact", "evidence": {"message_id": "t1", "text": quote}},
                            event_time=T0, context_turns=(("t1", quote),))

    packing = pack([note("m1", "User adopted a greyhound"), note("m2", "User's dog is called Biscuit")],
                   "Tell me about my dog", 1000)
    assert [i.item_id for i in packing.kept] == ["m1", "m2"]
    assert [text for item in packing.kept for _, text in item.context_turns] == [quote]
    assert "evidence" not in packing.kept[1].details
