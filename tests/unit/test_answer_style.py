"""How the user wants to be answered, asked for in general, as a wish or as a question
(`streams.rules.answer_style`)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from engram.core.config import DEFAULT_CONFIG
from engram.recall.service import RecallRequest
from engram.runtime.context import default_context
from engram.runtime.engine import EmbeddedRuntime
from engram.streams.rules import extract_drafts
from tests.drivers import T0, turn


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


@pytest.mark.parametrize(("said", "note"), [
    ("算了，还是用英文回复我吧", "用户希望用英文回答"),
    ("Could you answer in French from now on?", "User wants answers in French"),
])
def test_the_reply_language_asked_for_fills_the_one_value_language_slot(said: str, note: str) -> None:
    notes = [(d.attribute, d.content) for d in extract_drafts("user", said)]
    assert ("language", note) in notes


def test_a_newer_reply_language_replaces_the_older_and_its_quoted_statement(tmp_path: Path) -> None:
    runtime = EmbeddedRuntime(tmp_path, ctx=default_context(DEFAULT_CONFIG, {"ENGRAM_EMBEDDER": "hashing"}))
    runtime.ingest([turn("from now on please reply in German, I want the practice", session="s0", at=T0),
                    turn("ok forget it, 还是用中文回复我吧，德语太慢了", session="s1", at=T0 + timedelta(days=1))])
    result = runtime.recall(RecallRequest("t1", "u1", "a1", "fresh", "怎么给笔记本电脑清灰？", T0 + timedelta(days=3)))
    assert "用中文回答" in result.memory_section
    assert "German" not in result.memory_section
    runtime.close()
