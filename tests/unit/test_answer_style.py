"""How the user wants to be answered, asked for in general, as a wish or as a question
(`streams.rules.answer_style`)."""

from __future__ import annotations

import pytest

from engram.streams.rules import extract_drafts


def _wishes(text: str) -> set[str]:
    return {d.content for d in extract_drafts("user", text) if d.attribute == "answer_style"}


@pytest.mark.parametrize(("said", "wishes"), [
    ("could you keep your answers brief? numbered or bullet lists are easiest for me", {
        "User wants short answers", "User wants answers in bullet points"}),
    ("From now on, no emojis please.", {"User wants answers without emojis"}),
    ("Always explain things step by step, I'm new to this.", {"User wants detailed answers"}),
    ("以后回复都简洁点，分点列出来就行", {"用户希望回答简短", "用户希望回答列要点"}),
    ("你的回答能不能别太长？", {"用户希望回答简短"}),
])
def test_a_wish_about_answers_in_general_is_a_standing_preference(said: str, wishes: set[str]) -> None:
    assert _wishes(said) == wishes


@pytest.mark.parametrize("said", [
    "can you make this email shorter?",  # this answer, not every answer
    "Keep it brief this time, I'm in a hurry.",
    "这次简短点就行",
    "The meeting was brief and useless.",  # "brief" of something else
    "I'm writing a short story for my niece.",
])
def test_a_wish_about_one_answer_or_short_said_of_something_else_is_no_preference(said: str) -> None:
    assert not _wishes(said)


def test_the_same_wish_in_two_sentences_is_one_note() -> None:
    notes = [d.content for d in extract_drafts("user", "Keep replies short. Really, keep your answers short.")]
    assert notes.count("User wants short answers") == 1
