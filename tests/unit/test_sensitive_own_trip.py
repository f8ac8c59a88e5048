"""Health is reached by travel only on the user's own trip, not by an event they organise for others or a
message they write to them."""

from __future__ import annotations

import pytest

from engram.core.domains import domains_of
from engram.core.sensitive import gate_domains, may_show, statement_sensitivity

CONDITION = "User has a heart condition and carries nitroglycerin"


@pytest.mark.parametrize("task", [
    "Write the invitation email for our team trip to Lisbon",
    "Draft a message to the guests about the weekend getaway",
    "帮我给同事写一封团建旅行的通知",
])
def test_a_trip_organised_for_others_or_written_to_them_does_not_reach_health(task: str) -> None:
    assert "travel" not in gate_domains(task)
    assert not may_show(gate_domains(task), CONDITION)


@pytest.mark.parametrize("task", [
    "Book a flight and hotel for my trip to Rome", "Help me plan our weekend trip", "帮我规划一次一个人的短途旅行。",
    "Write an email to the hotel about my trip next week",
])
def test_the_users_own_trip_still_reaches_health(task: str) -> None:
    assert "travel" in gate_domains(task)
    assert may_show(gate_domains(task), CONDITION)


def test_a_turn_the_user_calls_private_lends_its_sensitivity_to_every_note_drawn_from_it() -> None:
    said = "Between you and me: I have epilepsy, I take Keppra at night."
    assert statement_sensitivity(said, "User takes Keppra at night") == frozenset({"health"})
    zh = "跟你说个私事：我有抑郁症，我每天早上吃一片药。"
    assert "mental" in statement_sensitivity(zh, "用户每天早上吃一片药")


def test_without_a_word_of_privacy_a_clause_with_its_own_subject_stays_apart() -> None:
    said = "I have epilepsy, I love spicy noodles."
    assert statement_sensitivity(said, "User loves spicy noodles") == frozenset()


@pytest.mark.parametrize("task", ["下周去大理玩三天，要带什么？", "五一打算到青岛住两晚"])
def test_a_chinese_trip_said_by_its_destination_or_length_is_travel(task: str) -> None:
    assert "travel" in domains_of(task)
    assert may_show(gate_domains(task), CONDITION)


def test_a_visit_of_no_length_nor_purpose_is_no_trip() -> None:
    assert "travel" not in domains_of("明天去公司开会")


@pytest.mark.parametrize("said", ["My cardiologist wants me to cut back on salt", "User's rheumatologist moved the appointment",
                                  "下周要去看肿瘤科复查"])
def test_a_specialist_who_treats_the_user_tells_of_a_condition(said: str) -> None:
    assert "health" in statement_sensitivity(said, said)
