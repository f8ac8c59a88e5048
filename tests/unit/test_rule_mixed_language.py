"""Code-switched turns: a colon ends a preamble, an emotive aside is no part of a fact, a diet regime named
in English inside a Chinese clause is a diet."""

from __future__ import annotations

import pytest

from engram.streams.rules import extract_drafts


def _notes(text: str) -> list[tuple[str, str | None, str]]:
    return [(d.type.value, d.attribute, d.content) for d in extract_drafts("user", text)]


def test_a_chinese_preamble_before_a_colon_does_not_swallow_the_english_introduction() -> None:
    notes = _notes("先简单介绍一下：I'm Dara, 29, a sound engineer in Porto, 平时喜欢爬山。")
    assert ("user_profile", "name", "User's name is Dara") in notes
    assert ("user_profile", "age", "User is 29 years old") in notes
    assert any(a == "occupation" and "sound engineer" in c for _, a, c in notes)


def test_a_colon_in_a_clock_time_or_an_address_is_no_clause_end() -> None:
    assert any("7:30" in c for _, _, c in _notes("I start work at 7:30 every weekday"))
    assert any("https://" in c for _, _, c in _notes("My portfolio is on https://example.org and I update it monthly"))


@pytest.mark.parametrize(("said", "kept"), [
    ("I'm allergic to kiwi (so sad).", "User is allergic to kiwi"),
    ("我对芝麻过敏（哭）", "用户对芝麻过敏"),
])
def test_an_aside_that_only_emotes_leaves_the_fact(said: str, kept: str) -> None:
    assert kept in [c for _, _, c in _notes(said)]


def test_a_bracket_that_holds_content_stays() -> None:
    assert any("(6)" in c for _, _, c in _notes("My daughter Wren (6) is obsessed with dinosaurs"))


@pytest.mark.parametrize(("said", "note"), [
    ("我吃vegan快三年了", "用户是vegan"),
    ("我是pescatarian，海鲜可以", "用户是pescatarian"),
    ("我一直吃全素", "用户吃全素"),
])
def test_a_diet_regime_named_in_english_inside_chinese_is_a_diet(said: str, note: str) -> None:
    assert ("user_constraint", "diet", note) in _notes(said)


@pytest.mark.parametrize(("said", "note"), [
    ("我是宁夏人，现在在西宁读兽医的研究生", "用户在西宁读兽医的研究生"),
    ("现在在洛阳读高中", "用户在洛阳读高中"),
])
def test_the_city_the_user_studies_in_is_kept_with_what_they_study(said: str, note: str) -> None:
    assert ("user_profile", "education", note) in _notes(said)
    assert not [c for t, a, c in _notes(said) if a == "occupation"]  # "现在在…读研究生" is no bare job title
