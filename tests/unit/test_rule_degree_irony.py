"""Degree lifting (rules/degree) and irony by incongruity (rules/irony), on sentences written for these tests."""

from __future__ import annotations

from engram.schemas.memory import MemoryType as T
from engram.streams.rules.degree import en_lift, zh_lift
from engram.streams.rules.irony import ironic_turn, is_ironic

from tests.unit.rule_helpers import contents, notes


def test_english_weakener_is_kept_in_front_of_the_predicate() -> None:
    assert notes("I'm moderately allergic to birch pollen.") == [
        (T.USER_CONSTRAINT, "User is moderately allergic to birch pollen", True)]
    assert contents("I slightly prefer window seats.") == ["User slightly prefers window seats"]
    assert contents("I sort of enjoy crossword puzzles.") == ["User sort of enjoys crossword puzzles"]


def test_plain_intensifiers_are_not_lifted() -> None:
    assert contents("I really like crossword puzzles.") == ["User likes crossword puzzles"]


def test_chinese_degree_is_restored_and_a_negated_degree_keeps_its_negation() -> None:
    assert contents("我不太能喝咖啡。") == ["用户不太能喝咖啡"]
    assert notes("我超级讨厌填报销单。") == [(T.USER_PREFERENCE, "用户超级讨厌填报销单", True)]
    assert contents("有点怕打雷。") == ["用户有点怕打雷"]


def test_lift_functions_leave_clauses_without_degree_alone() -> None:
    assert en_lift("I like tea") == ("I like tea", "")
    assert en_lift("I'm a bit tired of it") == ("I'm tired of it", "a bit")
    assert zh_lift("不怎么吃甜食") == ("不吃甜食", "不怎么")


def test_praise_for_a_nuisance_with_a_cue_is_ironic() -> None:
    assert is_ironic("Oh lovely, the boiler broke again and I just love cold showers.")
    assert is_ironic("呵呵，又要通勤两小时，真开心。")
    assert notes("Perfect, gridlock on the ring road for an hour, I love my commute.") == []


def test_unmarked_praise_is_taken_at_face_value() -> None:
    assert not is_ironic("I love long train journeys.")
    assert contents("I enjoy debugging old code, it's like a puzzle.")[:1] == ["User enjoys debugging old code"]


def test_pronoun_praise_after_an_ironic_opening_is_part_of_the_irony() -> None:
    assert ironic_turn(["Fantastic, the printer jammed mid-report.", "I adore that machine."])
    assert notes("Brilliant, my laptop crashed before the demo. I adore it.") == []
    assert not ironic_turn(["The printer jammed.", "I adore my new keyboard."])


def test_an_irony_cue_with_a_mock_claim_is_sarcasm() -> None:
    assert is_ironic("Oh sure, because I have endless free evenings.")
    assert notes("Great, I clearly have time to iron forty shirts.") == []
    assert not is_ironic("Sure, I have a dentist appointment at four.")


def test_a_chinese_weakener_is_kept_even_where_a_rule_would_drop_it() -> None:
    assert contents("我有点喜欢下雨天。") == ["用户有点喜欢下雨天"]
    assert contents("我很喜欢下雨天。") == ["用户喜欢下雨天"]  # an intensifier adds nothing


def test_a_noun_ending_in_ba_keeps_it() -> None:
    assert contents("我特别讨厌网吧。") == ["用户特别讨厌网吧"]


def test_sarcasm_idioms_mark_their_turn() -> None:
    assert notes("I adore filling in expense reports. Said no one ever.") == []
    assert is_ironic("Nothing says romance like a flat tyre on the motorway.")
    assert notes("我最爱周末返工了。") == []
    assert contents("我最爱喝豆浆。") == ["用户爱喝豆浆"]
