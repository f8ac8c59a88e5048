"""Named corrections (rules/corrections, applied by consolidation) and time kept with tense (rules/tense),
on sentences written for these tests."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from engram.schemas.base import stable_id
from engram.schemas.events import MemoryChanged, MemoryProposed
from engram.schemas.memory import Candidate, MemoryType as T
from engram.streams.consolidate import ConsolidateProcessor, UserMemories
from engram.streams.processor import ProcessorContext
from engram.streams.rules.corrections import named_correction
from engram.streams.rules.tense import is_future

from tests.unit.rule_helpers import contents, notes

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)


def test_named_corrections_give_the_wrong_and_the_right_value() -> None:
    assert named_correction("Oops, not Porto, I meant Braga.") == ("Porto", "Braga")
    assert named_correction("I meant Thursday, not Tuesday - sorry") == ("Tuesday", "Thursday")
    assert named_correction("打错了，不是网易，是百度。") == ("网易", "百度")
    assert named_correction("I'm not a chef, I'm a baker.") is None  # a subject of its own: ordinary rules
    assert contents("Sorry, not Porto, I meant Braga.") == ['User corrected "Porto" to "Braga"']


def _proposal(n: int, content: str, memory_type: T = T.USER_FACT, attribute: str | None = None) -> MemoryProposed:
    candidate = Candidate(type=memory_type, attribute=attribute, content=content, confidence=0.8,
                          source_message_ids=(f"m{n}",))
    return MemoryProposed(event_id=stable_id("p", str(n)), occurred_at=T0 + timedelta(hours=n), tenant_id="t",
                          user_id="u", agent_id="a", session_id="s", candidate=candidate, importance=0.5)


def _run(events: list[MemoryProposed]) -> tuple[UserMemories, list[MemoryChanged]]:
    state: UserMemories | None = None
    out: list[MemoryChanged] = []
    proc, ctx = ConsolidateProcessor(), ProcessorContext()
    for event in events:
        state, produced = proc.process(state, event, ctx)
        out.extend(e for e in produced if isinstance(e, MemoryChanged))
    assert state is not None
    return state, out


def test_consolidation_rewrites_the_memory_that_holds_the_wrong_value_in_its_slot() -> None:
    state, changes = _run([_proposal(1, "User lives in Porto", attribute="location"),
                           _proposal(2, 'User corrected "Porto" to "Braga"')])
    assert [c.change for c in changes] == ["created", "replaced", "created"]
    (record,) = state.memories.values()
    assert record.content == "User lives in Braga" and record.slot == "user_fact.location"


def test_a_correction_of_a_value_no_memory_holds_is_discarded() -> None:
    state, changes = _run([_proposal(1, "用户喜欢爬山", T.USER_PREFERENCE), _proposal(2, "用户更正：网易→百度")])
    assert [c.change for c in changes] == ["created", "discarded"]
    assert [m.content for m in state.memories.values()] == ["用户喜欢爬山"]


def test_future_job_and_home_statements_are_plans() -> None:
    assert notes("I'm starting at Airbus in October.") == [(T.USER_GOAL, "User is starting at Airbus in October", False)]
    assert notes("我下个月调去苏州分公司。")[0][0] is T.USER_GOAL
    assert not is_future("User moved to Porto in October")
    assert is_future("I'll be teaching in Kyoto next spring")


def test_deadlines_are_constraints_that_keep_their_date() -> None:
    assert notes("The tax return is due on April 15.") == [
        (T.USER_CONSTRAINT, "User's tax return is due on April 15", False)]
    assert notes("the deadline for the mural is the 12th")[0][1] == "User's deadline for the mural is the 12th"
    assert contents("标书下周三之前要提交。") == ["用户的标书下周三之前要提交"]


def test_a_fronted_chinese_time_is_kept_with_the_plan() -> None:
    assert contents("我做运维的，明年想考CKA。")[-1:] == ["用户明年想考CKA"]


def test_a_loved_plan_a_couple_of_years_out_is_a_goal() -> None:
    assert notes("I'd love to open a pottery studio in a couple of years.")[0][0] is T.USER_GOAL


def test_a_rejected_alternative_is_a_correction_of_the_users_own_statement() -> None:
    assert notes("Oh, I teach chemistry, not physics.")[-1] == (T.USER_FACT, 'User corrected "physics" to "chemistry"', False)
    assert "用户更正：研一→研二" in contents("我在读研二，不是研一。")
    assert not [c for c in contents("My cousin is a plumber, not an electrician.") if "corrected" in c]


def test_a_correction_whose_right_value_is_already_held_only_retires_the_wrong_one() -> None:
    state, changes = _run([_proposal(1, "User's recital is on Friday"), _proposal(2, "User's recital is Sunday"),
                           _proposal(3, 'User corrected "Friday" to "Sunday"')])
    assert [c.change for c in changes] == ["created", "created", "replaced"]
    assert [m.content for m in state.memories.values()] == ["User's recital is Sunday"]


def test_a_long_held_state_beside_a_request_is_kept() -> None:
    found = contents("Could you draft my bio? I've been a sommelier for 15 years and hope to open a wine bar.")
    assert found == ["User hopes to open a wine bar", "User has been a sommelier for 15 years"]
    assert contents("我的驾照下个月到期。") == ["用户的驾照下个月到期"]


def test_a_chinese_deadline_that_opens_with_its_date() -> None:
    assert contents("下周五交课程设计，还没开始。")[0] == "用户下周五交课程设计"
