"""Facts said beside a request (rules/asides) and the assistant's commitments, options and deferrals
(rules/commitments), on sentences written for these tests."""

from __future__ import annotations

from engram.schemas.memory import MemoryType as T
from engram.streams.filters import filter_turn
from engram.streams.rules.asides import is_aside
from engram.streams.rules.commitments import en_commitment, is_deferred, is_option

from tests.unit.rule_helpers import contents, notes


def test_first_person_statements_after_a_request_are_kept() -> None:
    found = contents("Write a farewell email to my team - I'm leaving after 9 years at Siemens.")
    assert found == ["User is leaving after 9 years at Siemens"]
    assert "User is a night-shift baker" in contents("Suggest a sleep schedule; I'm a night-shift baker.")


def test_the_request_itself_and_wishes_about_the_answer_are_not_notes() -> None:
    assert notes("Summarise this report, I need it by noon.") == []
    assert not is_aside("I want it in bullet points")
    assert not is_aside("I wonder if it fits")
    assert is_aside("I have two interviews this week")


def test_any_promise_with_a_doing_verb_is_an_action() -> None:
    assert notes("Okay, I'll book the meeting room for Tuesday.", "assistant") == [
        (T.ASSISTANT_ACTION, "I'll book the meeting room for Tuesday", False)]
    assert not en_commitment("I'll keep that in mind")
    assert not en_commitment("I'll think about it")


def test_a_confirmed_statement_and_a_joined_promise_are_two_notes() -> None:
    found = notes("Agreed, the launch date is March 3 and I'll draft the press note.", "assistant")
    assert found == [(T.ASSISTANT_DECISION, "The launch date is March 3", False),
                     (T.ASSISTANT_ACTION, "I'll draft the press note", False)]


def test_options_decide_nothing() -> None:
    assert is_option("you could go with Vue or stick with React")
    assert is_option("可以考虑Redis")
    assert notes("Okay, the options are Vercel or Netlify.", "assistant") == []


def test_a_decision_left_to_someone_else_records_nothing() -> None:
    assert is_deferred("That's your CFO's call")
    assert is_deferred("这个得等客户确认")
    assert notes("OK, once your designer signs off, we'll ship the new logo.", "assistant") == []
    assert notes("没问题，具体方案由你们主管决定。", "assistant") == []


def test_a_short_chinese_confirmation_is_long_enough_to_read() -> None:
    assert filter_turn("assistant", "没问题，已确认：周五下午发版。") is None
    assert filter_turn("assistant", "好的") is not None


def test_a_chinese_promise_to_take_a_task_on_is_an_action() -> None:
    assert notes("没问题，我来跟进物流单号。", "assistant") == [(T.ASSISTANT_ACTION, "我来跟进物流单号", False)]


def test_fixing_a_time_is_a_decision() -> None:
    assert [kind for kind, _, _ in notes("好的，评审就定在周四上午十点。", "assistant")] == [T.ASSISTANT_DECISION]


def test_a_wish_for_a_deliverable_is_a_request() -> None:
    assert notes("I'd like a short recap of chapter two, please.") == []
    assert notes("I need a template for my invoices.") == []
    assert [kind for kind, _, _ in notes("I'd like to learn the cello.")] == [T.USER_GOAL]


def test_taking_a_task_on_and_a_time_of_day_deadline() -> None:
    assert notes("好的，最终决定：搬家定在周六，我负责叫货车。", "assistant") == [
        (T.ASSISTANT_DECISION, "搬家定在周六", False), (T.ASSISTANT_ACTION, "我负责叫货车", False)]
    assert contents("The slides for the board have to be in by 9am Monday.") == [
        "User's slides for the board have to be in by 9am Monday"]
