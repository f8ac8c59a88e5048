"""Health is reached by travel only on the user's own trip, not by an event they organise for others or a
message they write to them."""

from __future__ import annotations

import pytest

from engram.core.sensitive import gate_domains, may_show

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
