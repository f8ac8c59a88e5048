"""A recalled text's relative time is spelled out against when it was said, and only where it has one
reading; the rendered context stays within its token budget."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from engram.core.text import estimate_tokens
from engram.recall.budget import pack
from engram.recall.context import RecalledItem
from engram.recall.dates import spell_out

SAID = datetime(2024, 3, 6, 18, 30)  # a Wednesday


@pytest.mark.parametrize("text, shown", [
    ("We flew back yesterday.", "We flew back yesterday (2024-03-05)."),
    ("Last night the band played.", "Last night (2024-03-05) the band played."),
    ("the day before yesterday", "the day before yesterday (2024-03-04)"),
    ("Last Fri we moved in.", "Last Fri (Friday 2024-03-01) we moved in."),
    ("last wednesday", "last wednesday (Wednesday 2024-02-28)"),
    ("See you next Monday", "See you next Monday (Monday 2024-03-11)"),
    ("I sold the boat three days ago", "I sold the boat three days ago (2024-03-03)"),
    ("It happened 2 months ago", "It happened 2 months ago (2024-01)"),
    ("We married ten years ago.", "We married ten years ago (2014)."),
    ("I started last month", "I started last month (2024-02)"),
    ("The race is next year", "The race is next year (2025)"),
    ("I read it last year", "I read it last year (2023)"),
    ("User visited the museum (yesterday)", "User visited the museum (yesterday, 2024-03-05)"),
])
def test_an_expression_with_one_reading_is_followed_by_its_date(text: str, shown: str) -> None:
    assert spell_out(text, SAID) == shown


def test_a_month_count_crosses_the_year() -> None:
    assert spell_out("we met last month", date(2024, 1, 15)) == "we met last month (2023-12)"
    assert spell_out("we meet next month", date(2023, 12, 15)) == "we meet next month (2024-01)"


@pytest.mark.parametrize("text", [
    "I went there recently.", "a few weeks ago we hiked", "last weekend was fun", "This year is busy.",
    "my lastname is Day", "Ayer fuimos al cine.",
])
def test_a_vague_or_foreign_expression_is_left_alone(text: str) -> None:
    assert spell_out(text, SAID) == text


def test_without_a_date_nothing_changes() -> None:
    assert spell_out("We flew back yesterday.", None) == "We flew back yesterday."


def test_the_context_shows_the_meant_date_and_stays_within_its_budget() -> None:
    items = [RecalledItem("memory", f"m{n}", f"User went to the pottery class yesterday number {n}", 1.0 - n / 100,
                          12, (f"t{n}",), SAID, details={"type": "episode"}, event_time=SAID,
                          context_turns=((f"t{n}", "Last Fri I finally took my kids to a pottery workshop."),))
             for n in range(40)]
    packing = pack(items, "When did I go to the pottery class?", 200)
    assert "yesterday (2024-03-05)" in packing.section
    assert "Last Fri (Friday 2024-03-01)" in packing.section
    assert estimate_tokens(packing.section) <= 200 and packing.tokens <= 200
