"""Corrections that resolve against their slot, repeats that reinforce, commitments against options.

Every sentence here is written for these tests: rules read it, consolidation merges what they read, and the
user's active memories are asserted (old values retired or linked, counts raised, no second copy).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from engram.schemas.base import stable_id
from engram.schemas.events import MemoryProposed
from engram.schemas.memory import Candidate, MemoryRecord, MemoryType as T
from engram.streams.consolidate import ConsolidateProcessor, UserMemories
from engram.streams.merge_rules import comparable, restates
from engram.streams.processor import ProcessorContext
from engram.streams.rules import extract_drafts
from engram.streams.rules.corrections import correction_drafts, cued_correction
from engram.streams.rules.value_shapes import has_shape, same_shape_values
from engram.streams.rules.zh import user_drafts as zh_user_drafts
from engram.streams.rules.en import match_clause

from .rule_helpers import contents, notes

T0 = datetime(2026, 3, 1, 8, 0, tzinfo=timezone.utc)
PROC = ConsolidateProcessor()


def remember(*turns: str) -> list[MemoryRecord]:
    """The user's active memories after each turn is read by the rules and consolidated, an hour apart."""
    state: UserMemories | None = None
    n = 0
    for turn_no, text in enumerate(turns):
        for draft in extract_drafts("user", text):
            n += 1
            candidate = Candidate(type=draft.type, attribute=draft.attribute, content=draft.content,
                                  confidence=draft.confidence, topic=draft.topic, negated=draft.negated,
                                  entities=draft.entities, keywords=draft.keywords,
                                  source_message_ids=(f"m{turn_no}",))
            event = MemoryProposed(event_id=stable_id("t", str(n)), occurred_at=T0 + timedelta(hours=turn_no),
                                   tenant_id="t", user_id="u", agent_id="a", session_id="s",
                                   candidate=candidate, importance=0.5)
            state, _ = PROC.process(state, event, ProcessorContext())
    return list(state.memories.values()) if state is not None else []


def holding(memories: list[MemoryRecord], *words: str) -> list[MemoryRecord]:
    return [m for m in memories if all(w.lower() in m.content.lower() for w in words)]


# value shapes


def test_a_value_finds_earlier_values_of_its_own_shape_only() -> None:
    assert same_shape_values("User is flying to Oslo on the 9th", "16th") == ["9th"]
    assert same_shape_values("User's rent is about €950 a month, 3 rooms", "€1,100") == ["€950"]
    assert same_shape_values("用户家有2条金鱼和3只乌龟", "4只") == ["3只"]
    assert same_shape_values("User's rent is about €950 a month", "£900") == []  # another currency
    assert not has_shape("Trondheim") and has_shape("7:30 pm") and has_shape("Thursday")


# corrections inside longer sentences


def test_a_cued_clause_frame_names_both_values_and_leaves_the_rest() -> None:
    old, new, rest = cued_correction("纠正一下，不是打网球，是打羽毛球，周末都去") or ("", "", "")
    assert (old, new) == ("打网球", "打羽毛球") and "周末都去" in rest
    assert cued_correction("Quick correction: the workshop is in Ghent, not Bruges") == ("Bruges", "Ghent",
                                                                                           "the workshop is in Ghent")


def test_without_a_cue_no_clause_is_read_as_a_correction() -> None:
    assert cued_correction("The workshop is in Ghent, not Bruges, and it runs two days") is None
    assert correction_drafts("我不是39岁，是40岁")[1] == []  # a statement with its own subject, for the rules


def test_an_unnamed_correction_leaves_the_old_value_to_its_shape() -> None:
    text, drafts = correction_drafts("oops, sorry, it's the 16th. I mixed up the dates")
    assert [d.content for d in drafts] == ['User corrected a value to "16th"']
    assert "16th" not in text
    zh_text, zh_drafts = correction_drafts("更新一下，现在是4只了，昨天又捡了一只")
    assert [d.content for d in zh_drafts] == ["用户更正：→4只"] and "昨天又捡了一只" in zh_text


def test_the_latest_earlier_value_of_that_shape_is_rewritten() -> None:
    memories = remember("I'm driving to Oslo on the 9th with my cousin.", "wait no, sorry, it's the 16th.")
    assert holding(memories, "Oslo", "16th") and not holding(memories, "9th")


def test_a_retracted_amount_is_replaced_by_the_next_of_its_currency() -> None:
    memories = remember("My budget for the bike is about €600.",
                        "Forget the €600 figure — I sold my old bike so I can spend €850.")
    assert holding(memories, "budget", "€850") and not holding(memories, "€600")


def test_a_zh_count_update_rewrites_the_count() -> None:
    memories = remember("我家养了3只乌龟，都挺能吃的", "更新一下，现在是4只了，昨天又捡了一只")
    assert holding(memories, "4只乌龟") and not holding(memories, "3只")


def test_subject_is_new_not_old_corrects_the_kind() -> None:
    memories = remember("我家鹦鹉叫阿绿，两岁了", "哦对了纠正一下，阿绿是八哥不是鹦鹉😅 打错字了")
    assert holding(memories, "阿绿", "八哥") and not holding(memories, "鹦鹉")


def test_a_later_slot_value_retires_the_earlier_one_without_naming_it() -> None:
    memories = remember("I'm 44 btw, for the pension calculator", "sorry, I'm actually 45.")
    ages = [m for m in memories if m.slot == "user_profile.age"]
    assert [m.content for m in ages] == ["User is 45 years old"]
    employers = remember("我在网易做测试", "抱歉说错了，我现在是在美团做测试，网易是上一家")
    assert [m.content for m in employers if m.slot == "user_profile.company"] == ["用户在美团工作"]


def test_a_request_to_be_called_by_a_name_states_the_name() -> None:
    assert notes("hey, could you call me Theodore instead?") == [(T.USER_PROFILE, "User's name is Theodore", False)]


# reinforcement


def test_comparable_drops_who_wrote_the_note() -> None:
    assert comparable("用户说：我每周三晚上去游泳。") == comparable("用户每周三晚上去游泳")
    assert comparable("User said: I use emacs every day") .startswith(comparable("User uses emacs"))
    assert restates("用户说：我每周三晚上去游泳。", "用户每周三晚上去游泳")
    assert not restates("User said: I like it", "User likes it a lot")  # too short to restate anything
    assert not restates("User said: I swim on Wednesdays", "User mentioned: I swim on Wednesdays")  # both verbatim
    assert not restates("用户说：周末在一家花店帮忙，每周大概十个小时", "用户每周大概十个小时")  # says much more
    assert not restates("用户每周三晚上去游泳", "用户每周三晚上去游泳吧")  # two rule notes: the containment rule's job


def test_a_verbatim_note_of_a_noted_statement_reinforces_it_and_keeps_its_wording() -> None:
    memories = remember("我每周三晚上去游泳。", "我每周三晚上去游泳。")
    swims = holding(memories, "游泳")
    assert len(swims) == 1 and not swims[0].content.startswith("用户说")


def test_one_habit_read_as_a_fact_and_as_a_preference_is_one_memory() -> None:
    memories = remember("我习惯用 emacs，别推荐别的编辑器了", "I use emacs")
    emacs = holding(memories, "emacs")
    assert len(emacs) == 1 and emacs[0].source_count == 2


# long self-introductions


def test_a_compound_subject_with_the_user_keeps_the_whole_fact() -> None:
    assert contents("my husband and I are driving to Tromsø on the 3rd, what should we bring?") == [
        "User and their husband are driving to Tromsø on the 3rd"]


def test_zh_role_at_an_employer_after_emphatic_shi() -> None:
    drafts = zh_user_drafts("我现在是在美团做测试", [])
    assert ("company", "用户在美团工作") in [(d.attribute, d.content) for d in drafts]
    assert match_clause("I'm 52 btw") is not None


# assistant turns


def test_assistant_commitments_are_kept_and_options_or_deferrals_are_not() -> None:
    assert notes("好的，以后我都会先列出步骤再给代码。", "assistant")[0][0] is T.ASSISTANT_ACTION
    assert notes("Noted — no bullet points in anything I send you from now on.", "assistant") == [
        (T.ASSISTANT_CONSTRAINT, "No bullet points in anything I send you from now on", False)]
    assert notes("Decision: we'll use Redis — it is already in the stack.", "assistant")[0] == (
        T.ASSISTANT_DECISION, "Use Redis", False)
    assert notes("好的，你也可以考虑用 Redis 或者 Memcached，看你的意思。", "assistant") == []
    assert notes("Sure, it depends on what your finance team says; I'll order it after that.", "assistant") == []


def test_a_plan_header_makes_its_clauses_plan_items_and_a_recurring_commitment_a_plan() -> None:
    kinds = notes("行，就这么定：周二周四跑步，周六游泳。每周一我会帮你回顾一次。", "assistant")
    assert [k for k, _, _ in kinds] == [T.ASSISTANT_PLAN] * 3
    assert any("周六游泳" in c for _, c, _ in kinds)


def test_a_condition_the_user_lives_with_is_a_constraint_and_someone_elses_is_not() -> None:
    assert (T.USER_CONSTRAINT, "User has got coeliac disease", False) in notes("I've got coeliac disease, so no bread")
    assert [k for k, _, _ in notes("我自己有痛风，海鲜吃不了")][:1] == [T.USER_CONSTRAINT]
    assert all(k is not T.USER_CONSTRAINT for k, _, _ in notes("My dad has gout."))


def test_a_judged_job_noun_is_no_occupation_and_a_job_here_is() -> None:
    assert all(d.attribute != "occupation" for d in extract_drafts("user", "I'm a hopeless gardener"))
    assert ("occupation", "User is a retired pharmacist") in [
        (d.attribute, d.content) for d in extract_drafts("user", "Retired pharmacist here, 71")]
    weekly = [(d.attribute, d.content) for d in extract_drafts("user", "I work part-time as a radiographer two days a week")]
    assert ("occupation", "User is a radiographer") in weekly and (None, "User works two days a week") in weekly


def test_an_employer_in_a_city_is_also_where_the_user_works() -> None:
    drafts = extract_drafts("user", "I work as a designer at a small agency in Leipzig.")
    assert ("location", "User works in Leipzig") in [(d.attribute, d.content) for d in drafts]
    zh = extract_drafts("user", "我在深圳腾讯做后端")
    assert {("company", "用户在腾讯工作"), ("location", "用户在深圳工作")} <= {(d.attribute, d.content) for d in zh}


def test_zh_intro_shapes_keep_their_facts() -> None:
    got = {(d.attribute, d.content) for d in extract_drafts("user", "坐标成都，老家德阳的，本科川大")}
    assert {("location", "用户住在成都"), ("hometown", "用户来自德阳"), ("education", "用户本科川大")} <= got
    assert ("name", "用户叫Nora") in {(d.attribute, d.content) for d in extract_drafts("user", "Hi 我是 Nora，今年30")}


def test_a_restatement_marker_reinforces_what_it_restates_once() -> None:
    memories = remember("I really prefer cycling routes without hills, can you plan one for Sunday?",
                        "thanks. and again, no hills please, my knees hate them")
    hills = holding(memories, "hills")
    assert len(hills) == 1 and hills[0].source_count == 2
    twice = remember("I'm allergic to kiwi.", "got a fruit box order coming, reminder I'm allergic to kiwi so check it")
    kiwi = holding(twice, "kiwi")
    assert len(kiwi) == 1 and kiwi[0].source_count == 2  # the rules and the marker do not count it twice
    assert not holding(remember("again, no hills please"), "repeated")  # a repeat of nothing is no memory


def test_teaching_or_studying_in_a_place_is_where_the_user_is_but_a_month_is_no_place() -> None:
    taught = {(d.attribute, d.content) for d in extract_drafts("user", "I'm 38 and I teach primary school maths in Dundee")}
    assert ("location", "User works in Dundee") in taught
    studied = {(d.attribute, d.content) for d in extract_drafts("user", "I'm a visiting student, studying design in Porto.")}
    assert ("location", "User studies in Porto") in studied
    assert all(d.attribute != "location" for d in extract_drafts("user", "I'm studying Italian in September"))


def test_statements_before_a_condition_hold_and_a_condition_first_states_nothing() -> None:
    assert contents("btw 我是夜猫子，如果影响你的建议的话就考虑一下") == ["用户是夜猫子"]
    assert contents("如果我是医生，我会早点睡") == []


def test_a_role_held_for_years_and_a_latin_job_in_chinese_are_occupations() -> None:
    assert [(d.attribute, d.content) for d in extract_drafts("user", "I've been a paralegal for 6 years")] == [
        ("occupation", "User has been a paralegal for 6 years")]
    assert ("occupation", "用户是pharmacist") in [(d.attribute, d.content) for d in extract_drafts("user", "我是pharmacist，周末也上班")]


def test_a_causal_since_is_no_lasting_fact_so_a_known_schedule_is_not_quoted_again() -> None:
    memories = remember("I work night shifts at a care home, any tips for sleeping in the daytime?",
                        "since I'm on night shifts, cooking proper meals has become really hard.")
    nights = holding(memories, "night")
    assert len(nights) == 1 and nights[0].source_count == 2
