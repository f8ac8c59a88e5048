"""The compact "User mentioned: …" note of a turn the subject rules leave empty (streams/rules/mention.py).

Sentences are written for these tests (none comes from LoCoMo or the extraction bench).
"""

from __future__ import annotations

import pytest

from engram.schemas.memory import MemoryType
from engram.streams.rules import extract_drafts
from engram.streams.rules.mention import MAX_MENTIONS, MENTION_CONFIDENCE


def contents(text: str) -> list[str]:
    return [d.content for d in extract_drafts("user", text, False)]


def test_a_named_answer_is_noted_from_its_named_clause_on() -> None:
    drafts = extract_drafts("user", "Thanks, Priya! It was Orla Brennan, she sings like nobody else.", False)
    assert [d.content for d in drafts] == ["User mentioned: It was Orla Brennan, she sings like nobody else"]
    assert drafts[0].type is MemoryType.USER_FACT and drafts[0].attribute is None
    assert drafts[0].confidence == MENTION_CONFIDENCE and "Orla" in drafts[0].entities


def test_a_statement_with_content_words_is_noted_and_a_number_counts_as_named() -> None:
    assert contents("The old lighthouse keeper repaints the stairs every spring.") == [
        "User mentioned: The old lighthouse keeper repaints the stairs every spring"]
    assert contents("Wow. Platform 9 was closed.") == ["User mentioned: Platform 9 was closed"]


@pytest.mark.parametrize("text", [
    "Wow, Priya! That's amazing!",                          # small talk
    "Where did the ferry go after that?",                   # a question
    "Your garden looks so lush and colourful this year.",   # addressed to the other person
    "She said it would be ready by Monday.",                # a bare pronoun subject, a weekday is no name
    "If the bakery were open, the queue would be long.",    # hypothetical
    "Hope you have a lovely weekend!",                      # a wish
])
def test_nothing_is_noted_for_small_talk_questions_address_or_dangling_pronouns(text: str) -> None:
    assert contents(text) == []


def test_a_turn_with_a_note_about_the_user_gets_no_mention_and_a_long_turn_at_most_two() -> None:
    assert not any(c.startswith("User mentioned") for c in contents("I moved to Lisbon. The tram 28 is iconic."))
    many = " ".join(f"The {n} museum on Rua Augusta opens at {n} am." for n in range(2, 7))
    assert len(contents(many)) == MAX_MENTIONS


def test_chinese_turns_are_left_to_their_own_rules() -> None:
    assert not any(c.startswith("User mentioned") for c in contents("他在 Google 上班，住在上海。"))


@pytest.mark.parametrize("text", [
    "Guest wifi password: Sunflower2024 Lake House",   # the label would be cut off into a dropped clause
    "Her Instagram: sunny.days_92",                   # a third party's handle
    "Door code — 4821 then press Enter twice",        # an entry code
    "Reach Dana at dana.kowalski@example.org tomorrow.",  # personal data anywhere in the turn
])
def test_a_turn_holding_a_credential_handle_or_personal_data_gives_no_mention(text: str) -> None:
    assert contents(text) == []


@pytest.mark.parametrize("text", [
    "Explain the difference between TCP and UDP",
    "Make it shorter and more formal",
    "Fix this error: TypeError: cannot read property 'map' of undefined",
    "Summarize: The Federal Reserve raised rates by 25 basis points on Wednesday. Markets rallied in Asia.",
    "Thanks. Translate this into French: The museum opens at 9 on Sundays.",
])
def test_a_task_given_to_the_assistant_gives_no_mention(text: str) -> None:
    assert contents(text) == []


@pytest.mark.parametrize("text", [
    "Run `pip install numpy` on Ubuntu 22",                                      # backticks
    'Traceback (most recent call last):\n  File "app.py", line 3\nValueError: bad',  # a traceback
    "The parser returns None when config.load(path) fails on Windows",            # a call
    "for stop in Ferry.stops:\n    print(stop.name)",                            # pasted lines of code
    "The Atlantic ferry leaves Dover at 9 on weekdays. " * 9,                     # a long turn
])
def test_pasted_code_logs_or_long_text_give_no_mention(text: str) -> None:
    assert contents(text) == []
