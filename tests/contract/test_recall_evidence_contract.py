"""What a recall shows of the recorded turns, on every store back end: each piece of evidence once, no
sensitive turn the question does not reach, no turn behind a superseded fact, no profile entry lost
between the pushed profile and the ranking."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from engram.core.config import DEFAULT_CONFIG
from engram.projections.ports import MemoryStore, RecentTurn
from engram.recall.service import RecallRequest, RecallResult, RecallService
from engram.schemas.memory import MemoryRecord, MemoryType
from tests.contract.test_store_contract import EMBED, T0, _put, _record, opened_store

CONFIG = DEFAULT_CONFIG.model_copy(update={"recall": DEFAULT_CONFIG.recall.model_copy(update={"deadline_ms": 60_000.0})})
"""What is shown is under test here, not how fast: a loaded machine must not miss a part at the deadline."""


@pytest.fixture(params=["embedded", "embedded-reader", pytest.param("weaviate", marks=pytest.mark.weaviate)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryStore]:
    with opened_store(request.param, request, tmp_path, f"evid{uuid.uuid4().hex[:8]}") as opened:
        yield opened


def _recall(store: MemoryStore, question: str, session: str = "new-session",
            budget: int | None = None, limit: int | None = None) -> RecallResult:
    service = RecallService(store, EMBED, CONFIG)
    request = RecallRequest("t", "u", "a", session, question, T0 + timedelta(days=30), message_id="q",
                            token_budget=budget, limit=limit)
    return service.recall(request)


def _said(store: MemoryStore, session: str, message_id: str, text: str, day: int,
          role: str = "user") -> None:
    store.add_turn("t", "u", RecentTurn(session, message_id, role, text, T0 + timedelta(days=day), day))  # type: ignore[arg-type]


def _sourced(memory_id: str, content: str, source: str, session: str, day: int, **kw: object) -> MemoryRecord:
    record = _record(memory_id, content, **kw)  # type: ignore[arg-type]
    when = T0 + timedelta(days=day)
    return record.model_copy(update={"source_message_ids": (source,), "session_id": session,
                                     "created_at": when, "updated_at": when, "last_seen_at": when})


def _turn_ids(result: RecallResult) -> set[str]:
    return {i.item_id for i in result.items if i.kind == "turn"}


def test_a_sensitive_turn_is_shown_only_to_a_question_of_its_domain(store: MemoryStore) -> None:
    _said(store, "s1", "m1", "My therapist Dr. Okafor says the depression is slowly lifting.", 1)
    store.flush()
    asked_aside = _recall(store, "What did Dr. Okafor recommend?")
    assert "depression" not in asked_aside.memory_section and "m1" not in _turn_ids(asked_aside)
    asked_about_it = _recall(store, "How is my depression doing since I started seeing Dr. Okafor?")
    assert "depression is slowly lifting" in asked_about_it.memory_section


def test_the_turn_behind_a_superseded_fact_is_not_quoted(store: MemoryStore) -> None:
    _said(store, "s1", "m1", "We live in Denver, right by Wash Park.", 1)
    _said(store, "s2", "m2", "Our dog Rex loves the beach.", 2)
    _said(store, "s3", "m3", "We moved to Seattle last month!", 3)
    _said(store, "s4", "m4", "Actually the dog is called Max now, the kids renamed him.", 4)
    _put(store, _sourced("home", "User lives in Denver", "m1", "s1", 1, layer="L3", memory_type=MemoryType.USER_FACT))
    _put(store, _sourced("dog", "User's dog is called Rex", "m2", "s2", 2, status="replaced",
                         memory_type=MemoryType.USER_FACT))
    _put(store, _sourced("moved", "User moved to Seattle", "m3", "s3", 3, layer="L3",
                         memory_type=MemoryType.USER_FACT))
    _put(store, _sourced("dog2", "User's dog is called Max", "m4", "s4", 4, memory_type=MemoryType.USER_FACT))
    store.flush()
    parks = _recall(store, "Any dog parks near Wash Park?")
    assert "Denver" not in parks.memory_section and "m1" not in _turn_ids(parks)
    beach = _recall(store, "Which beach does my dog love?")
    assert "Rex" not in beach.memory_section and "m2" not in _turn_ids(beach)


def test_a_pushed_profile_entry_and_its_own_source_turn_count_once(store: MemoryStore) -> None:
    _said(store, "s1", "m1", "I'm allergic to peanuts, so careful with satay sauces.", 1)
    _put(store, _sourced("nuts", "User is allergic to peanuts", "m1", "s1", 1, layer="L3",
                         memory_type=MemoryType.USER_CONSTRAINT))
    store.flush()
    result = _recall(store, "Which satay sauces go with noodles?")
    assert [i.kind for i in result.items if i.item_id == "nuts"] == ["profile"]
    assert "m1" not in _turn_ids(result), "the entry's own source turn is the same evidence"


def test_the_recent_window_takes_no_ranked_slot(store: MemoryStore) -> None:
    _said(store, "s0", "old", "The Lisbon tram 15 goes out to Belem.", 0)
    for n in range(3):
        _said(store, "s1", f"w{n}", f"Lisbon tram 28 notes, part {n}: the Lisbon tram 28 is best at dawn.", 10 + n)
    store.flush()
    result = _recall(store, "Which Lisbon tram?", session="s1", limit=1)
    assert [t["content"] for t in result.recent][-1].endswith("best at dawn.")
    assert _turn_ids(result) == {"old"}, "the window's turns are shown there, not ranked again"


def test_a_profile_entry_the_question_finds_is_never_lost_between_ranking_and_profile(
        store: MemoryStore) -> None:
    entry = "User lives in Porto near the river"
    _put(store, _record("home", entry, layer="L3", memory_type=MemoryType.USER_FACT))
    _put(store, _record("cruise", "User booked the Porto river cruise for the Porto wine festival on Saturday "
                                  "with three friends from the office", memory_type=MemoryType.USER_FACT))
    store.flush()
    question = "Tips for the Porto river cruise and the wine festival?"
    for budget in range(60, 140):
        result = _recall(store, question, budget=budget)
        shown = [i.kind for i in result.items if i.item_id == "home"]
        assert shown in (["memory"], ["profile"]), f"budget {budget}: {shown}"
        assert "home" not in {i.item_id for i in result.left_out}, "shown one way, it is not left out"
    cut = _recall(store, question, limit=1)
    assert [i.kind for i in cut.items if i.item_id == "home"] == ["profile"], "cut from the ranking: pushed"


def test_a_reply_is_shown_as_a_round_with_the_turn_it_answers(store: MemoryStore) -> None:
    _said(store, "s1", "u1", "My sourdough keeps collapsing overnight. I use rye flour.", 1)
    _said(store, "s1", "a1", "Feed the starter at a 1:5:5 ratio twice a day and keep it warm.", 2, role="assistant")
    _said(store, "s2", "u2", "We booked the ferry to Hydra for June.", 3)
    store.flush()
    result = _recall(store, "What starter feeding ratio did you give me?")
    rounds = [i for i in result.items if i.kind == "turn" and i.item_id == "a1"]
    assert rounds and rounds[0].source_message_ids == ("u1", "a1"), "the reply comes with the turn it answers"
    assert "1:5:5 ratio" in result.memory_section and "rye flour" in result.memory_section
    assert "u1" not in _turn_ids(result), "the round is one item, not two"
