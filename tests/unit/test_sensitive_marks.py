"""Sensitive facts: marked at extraction from the whole statement, carried on the memory, and shown only
when the question's domains include the fact's sensitive domain or one of its named reach."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from engram.core.config import DEFAULT_CONFIG
from engram.core.crypto import SEALED_FIELDS
from engram.core.domains import domains_of
from engram.core.sensitive import REACH, may_show, sensitive_domains, statement_sensitivity
from engram.recall.service import RecallRequest
from engram.runtime.context import default_context
from engram.runtime.engine import EmbeddedRuntime
from engram.schemas.codec import decode, encode
from engram.schemas.events import MemoryChanged, MemoryProposed, TurnRecorded
from engram.schemas.memory import Candidate, MemoryType
from engram.streams.extract import ExtractProcessor
from engram.streams.processor import ProcessorContext
from tests.drivers import T0, turn


@pytest.mark.parametrize(("text", "domain"), [
    ("User takes sertraline every morning", "mental"),
    ("用户每天早上吃氟西汀", "mental"),
    ("User is on metformin now", "health"),
    ("用户在备孕", "health"),
    ("User keeps kosher at home", "religion"),
    ("用户是维吾尔族，只吃清真的", "religion"),
    ("用户斋戒期间白天不吃东西", "religion"),
    ("User goes to Friday prayers at the mosque", "religion"),
    ("User is in recovery and goes to a 12-step group", "recovery"),
    ("User sees a psychologist twice a month", "mental"),
    ("用户的花呗逾期了两个月", "money"),
    ("User has maxed out two credit cards", "money"),
])
def test_the_vocabulary_knows_medications_religious_practice_recovery_and_debts(text: str, domain: str) -> None:
    assert domain in sensitive_domains(text)


@pytest.mark.parametrize("text", ["下礼拜我们去爬山", "User loves Thai food", "User is recovering the old laptop's files"])
def test_ordinary_statements_are_not_sensitive(text: str) -> None:
    assert sensitive_domains(text) == frozenset()


def test_a_note_inherits_the_sensitivity_of_the_sentence_it_was_drawn_from() -> None:
    source = "My son has epilepsy, so we keep a strict bedtime at 8. I work as a welder in Ohio."
    assert statement_sensitivity(source, "User keeps a strict bedtime at 8") == {"health"}
    assert statement_sensitivity(source, "User works as a welder in Ohio") == frozenset()
    assert statement_sensitivity("我有抑郁症，每周三下午都要去一趟", "用户每周三下午都要去一趟") == {"mental"}
    assert statement_sensitivity("Nothing personal here.", "User owes the bank money") == {"money"}


def test_the_extractor_marks_each_proposal_with_its_statements_sensitive_domains() -> None:
    said = TurnRecorded(event_id="e0", occurred_at=T0, tenant_id="t1", user_id="u1", agent_id="a1", session_id="s1",
                        message_id="m1", role="user", content="I was diagnosed with bipolar disorder last year, so I keep a strict routine of bed by ten. "
                "I teach maths at a secondary school.")
    _, events = ExtractProcessor().process(None, said, ProcessorContext())
    proposals = [e for e in events if isinstance(e, MemoryProposed)]
    routine = [p for p in proposals if "bed by ten" in p.candidate.content]
    job = [p for p in proposals if "maths" in p.candidate.content]
    assert routine and all("mental" in p.candidate.sensitive for p in routine)
    assert job and all(p.candidate.sensitive == () for p in job)


def test_the_mark_rides_on_the_events_sealed_and_old_events_upcast_without_one() -> None:
    candidate = Candidate(type=MemoryType.USER_FACT, content="User keeps a strict bedtime", confidence=0.8,
                          sensitive=("health",))
    proposed = MemoryProposed(event_id="e1", occurred_at=T0, tenant_id="t1", user_id="u1", agent_id="a1",
                              session_id="s1", candidate=candidate, importance=0.5)
    assert decode(encode(proposed)) == proposed
    old = proposed.model_dump(mode="json")
    old["schema_version"] = 1
    del old["candidate"]["sensitive"]
    upcast = decode(old)
    assert isinstance(upcast, MemoryProposed) and upcast.schema_version == 2 and upcast.candidate.sensitive == ()
    changed_raw = {"type": "MemoryChanged", "schema_version": 1, "event_id": "e2", "occurred_at": T0.isoformat(),
                   "tenant_id": "t1", "user_id": "u1", "memory_id": "m1", "change": "deleted", "relation": "user",
                   "judge": "user"}
    assert isinstance(decode(changed_raw), MemoryChanged)
    assert "candidate.sensitive" in SEALED_FIELDS["MemoryProposed"]
    assert "after.sensitive" in SEALED_FIELDS["MemoryChanged"]


def test_the_gate_opens_for_the_sensitive_domain_and_its_named_reach_only() -> None:
    meetings = "User still goes to AA meetings on Tuesday evenings"
    assert not may_show(domains_of("Plan a Saturday out with my son"), meetings)
    assert not may_show(domains_of("Plan my week around the gym, the dentist and two calls"), meetings)
    assert may_show(domains_of("My coworkers invited me for drinks, how do I say no?"), meetings)
    knee = "User had knee surgery in March"
    assert may_show(domains_of("Plan a weekend hiking trip"), knee)
    assert may_show(domains_of("Plan a four-day trip to the coast"), knee)
    assert not may_show(domains_of("Write my team's quarterly summary"), knee)
    assert may_show(domains_of("What should I cook tonight?"), "User is diabetic")
    assert may_show(domains_of("Where should we go for dinner?"), "User only eats halal meat")
    therapy = "User sees a therapist for anxiety"
    assert not may_show(domains_of("What should I cook tonight?"), therapy)
    assert not may_show(domains_of("Plan a trip to Rome"), therapy)
    assert may_show(domains_of("I'm anxious about tomorrow's interview, any tips?"), therapy)
    assert REACH["mental"] == frozenset()


def test_the_gate_uses_the_extraction_mark_with_the_vocabulary() -> None:
    note = "User keeps a strict bedtime at 8"
    work = domains_of("Write a LinkedIn headline for me")
    assert may_show(work, note)
    assert not may_show(work, note, ("mental",))
    assert may_show(domains_of("I feel low and can't focus lately, ideas?"), note, ("mental",))


def test_a_note_that_lost_its_condition_is_not_pushed_into_a_work_task(tmp_path: Path) -> None:
    runtime = EmbeddedRuntime(tmp_path, ctx=default_context(DEFAULT_CONFIG, {"ENGRAM_EMBEDDER": "hashing"}))
    runtime.ingest([turn("我有双相情感障碍，每天晚上十点前一定要睡觉，雷打不动", at=T0),
                    turn("我在杭州做前端开发，主要写React", session="s2", at=T0 + timedelta(days=1))])
    result = runtime.recall(RecallRequest("t1", "u1", "a1", "fresh", "帮我写一段简历里的个人简介",
                                          T0 + timedelta(days=5)))
    assert "前端" in result.memory_section or "React" in result.memory_section
    assert "十点" not in result.memory_section and "双相" not in result.memory_section
    runtime.close()



def test_who_the_user_is_is_judged_by_its_own_words_not_by_the_condition_told_beside_it() -> None:
    said = TurnRecorded(event_id="e9", occurred_at=T0, tenant_id="t1", user_id="u1", agent_id="a1", session_id="s1",
                        message_id="m9", role="user", content="I'm 58 and I was diagnosed with Crohn's last spring")
    _, events = ExtractProcessor().process(None, said, ProcessorContext())
    marks = {p.candidate.slot: p.candidate.sensitive for p in events if isinstance(p, MemoryProposed)}
    assert marks["user_profile.age"] == ()
    assert "health" in marks["user_constraint"]  # a condition the user lives with is kept as a constraint


@pytest.mark.parametrize("text", ["User is stating the obvious", "User studies psychology at Leeds",
                                  "User builds lithium battery packs", "User does intermittent fasting for weight loss",
                                  "用户今天精神不错", "用户说：我自闭了，方案又被打回来"])
def test_words_that_only_look_like_a_condition_or_a_faith_are_not_sensitive(text: str) -> None:
    assert sensitive_domains(text) == frozenset()


@pytest.mark.parametrize("text", [
    "User is pairing with Owen on the parser", "User is reading a Churchill biography on the train",
    "User's teammate Christian reviews the pull requests", "User keeps a bee hive on the balcony",
    "User subscribes to the Houston Chronicle", "User has to diagnose why the nightly build hangs",
    "User catalogues the museum's collections", "User's advisor is Dr. Jain from physics",
    "User had lunch with Priya Jain", "User wrote a thank-you card to Mrs. Jain",
    "User only buys steroid-free beef", "User wrote about the customs seizure of counterfeit sneakers",
    "User's college runs on a trimester system",
    "用户说：这个项目逾期一周了", "用户说：老板又开始念经了", "用户是个慢性子", "用户说：帮我诊断一下这个报错",
    "用户说：我欠了老同学一个人情", "用户说：为这点小事伤了和气不值得", "用户说：团队正在孕育一款新产品",
])
def test_names_and_everyday_senses_of_a_cue_word_are_not_sensitive(text: str) -> None:
    assert sensitive_domains(text) == frozenset()


@pytest.mark.parametrize(("text", "domain"), [
    ("User owes her landlord two months of rent", "money"), ("User's account went to collections", "money"),
    ("User owed money to a payday lender", "money"), ("User is HIV positive", "health"),
    ("User goes to church on Sundays", "religion"), ("User is a devout Christian", "religion"),
    ("User grew up Jain and avoids root vegetables", "religion"), ("User's family is Orthodox Christian", "religion"),
    ("User is Jain.", "religion"), ("User has chronic migraines", "health"),
    ("User was diagnosed with lupus", "health"), ("User is tapering off steroids", "health"),
    ("User had a seizure at work last month", "health"), ("User is in her second trimester", "health"),
    ("User prays before every meal", "religion"),
    ("用户的信用卡账单逾期了", "money"), ("用户每天去寺里念经", "religion"), ("用户有慢性胃炎", "health"),
    ("用户被诊断出甲状腺结节", "health"), ("用户欠了银行十万", "money"), ("用户打球伤了膝盖", "health"),
    ("用户怀孕五个月了", "health"),
])
def test_the_same_cue_words_still_mark_what_they_state(text: str, domain: str) -> None:
    assert domain in sensitive_domains(text)


def test_a_reworded_note_with_no_statement_of_its_own_inherits_the_whole_turn() -> None:
    source = "I've had panic attacks for years, so I always take the aisle seat near the exit"
    assert statement_sensitivity(source, "User prefers sitting by the door on planes") == {"mental"}
    turn_of_two = "My husband is on insulin. We hike every Saturday morning."
    assert statement_sensitivity(turn_of_two, "User hikes every Saturday morning") == frozenset()


def test_a_clause_with_its_own_subject_after_a_comma_is_its_own_statement() -> None:
    assert statement_sensitivity("我有焦虑症，我最爱吃川菜", "用户最爱吃川菜") == frozenset()
    assert statement_sensitivity("I'm in recovery, I love salsa dancing", "User loves salsa dancing") == frozenset()
    assert statement_sensitivity("我有焦虑症，每次开会前都要先深呼吸", "用户每次开会前都要先深呼吸") == {"mental"}
