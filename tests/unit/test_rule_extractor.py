from __future__ import annotations

from datetime import datetime, timezone

import pytest

from engram.schemas.events import TurnRecorded
from engram.schemas.memory import Candidate, MemoryType
from engram.streams.rule_extractor import RuleExtractor
from engram.streams.rules import FALLBACK_CONFIDENCE

T = MemoryType
EXTRACTOR = RuleExtractor()


def turn(content: str, role: str = "user", **metadata: str) -> TurnRecorded:
    return TurnRecorded(
        event_id="evt-1", occurred_at=datetime(2026, 2, 1, tzinfo=timezone.utc), tenant_id="t1",
        user_id="u1", agent_id="a1", session_id="s1", message_id="m-42", role=role,  # type: ignore[arg-type]
        content=content, metadata=metadata,
    )


def extract(content: str, role: str = "user", **metadata: str) -> list[Candidate]:
    return list(EXTRACTOR.extract(turn(content, role, **metadata)).candidates)


def only(content: str, role: str = "user") -> Candidate:
    (candidate,) = extract(content, role)
    return candidate


def test_golden_1_one_message_becomes_profile_goal_and_constraint() -> None:
    cands = extract("我是 Java 开发工程师，最近准备 3 个月内跳槽，晚上 8 点后才有时间学习。")
    assert [c.type for c in cands] == [T.USER_PROFILE, T.USER_GOAL, T.USER_CONSTRAINT]
    profile, goal, constraint = cands
    assert profile.slot == "user_profile.occupation" and "Java" in profile.content
    assert "跳槽" in goal.content
    assert "8" in constraint.content
    assert all(c.source_message_ids == ("m-42",) for c in cands)


def test_golden_3_preference_and_standing_wish_stay_chinese() -> None:
    like, wish = extract("我喜欢java编程，我希望你以后对话推送java知识")
    assert like.type is T.USER_PREFERENCE and "java" in like.content and like.topic == "java"
    assert wish.type in (T.USER_PREFERENCE, T.USER_GOAL) and "推送java知识" in wish.content
    assert like.content.startswith("用户") and wish.content.startswith("用户")


def test_golden_6_and_10_occupation_and_name_are_different_slots() -> None:
    backend, frontend = only("我是后端开发"), only("我是前端开发")
    assert backend.slot == frontend.slot == "user_profile.occupation"
    assert "后端" in backend.content and "前端" in frontend.content
    job, name = only("我是Java开发"), only("我叫八千代")
    assert job.slot == "user_profile.occupation"
    assert name.slot == "user_profile.name" and "八千代" in name.content and "八千代" in name.entities


def test_golden_7_negated_preference_shares_the_topic() -> None:
    like, dislike = only("我喜欢Java"), only("我不喜欢Java了")
    assert like.topic == dislike.topic == "java"
    assert not like.negated and dislike.negated
    assert dislike.type is T.USER_PREFERENCE and "不喜欢" in dislike.content


def test_golden_8_more_specific_preference_has_the_same_topic() -> None:
    plain, specific = only("我喜欢Java"), only("我喜欢Java编程")
    assert plain.topic == specific.topic == "java"
    assert plain.content in specific.content


def test_golden_9_not_eating_coriander_is_a_negated_statement() -> None:
    cand = only("我不吃香菜")
    assert cand.type in (T.USER_PREFERENCE, T.USER_CONSTRAINT)
    assert cand.negated and cand.topic == "香菜" and "香菜" in cand.content


def test_golden_22_english_occupation_and_preference_reversal() -> None:
    job = only("I'm a backend engineer")
    assert job.slot == "user_profile.occupation" and "backend engineer" in job.content
    love = only("I love Go")
    assert love.topic == "go" and not love.negated
    dislike, prefer = extract("Actually I don't like Go anymore, I prefer Rust")
    assert dislike.type is T.USER_PREFERENCE and dislike.topic == "go" and dislike.negated
    assert prefer.type is T.USER_PREFERENCE and prefer.topic == "rust" and not prefer.negated


@pytest.mark.parametrize(
    ("text", "slot", "fragment"),
    [
        ("我住在北京", "user_fact.location", "北京"),
        ("我今年28岁", "user_profile.age", "28"),
        ("我在腾讯工作", "user_profile.company", "腾讯"),
        ("我老家在湖南", "user_fact.hometown", "湖南"),
        ("我的目标是成为架构师", "user_goal.current", "架构师"),
        ("My name is Alice", "user_profile.name", "Alice"),
        ("I live in Paris", "user_fact.location", "Paris"),
        ("I'm from Lisbon", "user_fact.hometown", "Lisbon"),
        ("I'm 34 years old", "user_profile.age", "34"),
        ("I work at Google", "user_profile.company", "Google"),
        ("My goal is to run a marathon", "user_goal.current", "marathon"),
    ],
)
def test_profile_attributes_fill_single_valued_slots(text: str, slot: str, fragment: str) -> None:
    cand = only(text)
    assert cand.slot == slot and fragment in cand.content


@pytest.mark.parametrize(
    ("text", "kind", "fragment"),
    [
        ("我的预算只有5000元", T.USER_CONSTRAINT, "5000"),
        ("我对花生过敏", T.USER_CONSTRAINT, "花生"),
        ("我计划3个月内学会Rust", T.USER_GOAL, "Rust"),
        ("我有两个孩子", T.USER_FACT, "两个孩子"),
        ("My budget is under $500", T.USER_CONSTRAINT, "$500"),
        ("I only have time after 8pm on weekdays", T.USER_CONSTRAINT, "8pm"),
        ("I want to learn Rust this year", T.USER_GOAL, "learn Rust"),
        ("I'm allergic to peanuts", T.USER_CONSTRAINT, "peanuts"),
        ("I have two kids and a dog named Max", T.USER_FACT, "two kids"),
        ("Always answer in English", T.USER_PREFERENCE, "English"),
    ],
)
def test_constraints_goals_and_facts(text: str, kind: MemoryType, fragment: str) -> None:
    cand = only(text)
    assert cand.type is kind and fragment in cand.content


def test_english_content_is_a_third_person_statement() -> None:
    assert only("I only have time on weekends").content == "User only has time on weekends"
    assert only("I love sushi").content == "User loves sushi"
    assert only("Actually I don't like tennis anymore").content == "User no longer likes tennis"


@pytest.mark.parametrize(
    "text",
    ["这是什么意思？", "我该怎么学Rust？", "帮我写一个排序算法", "What is the capital of France?",
     "Can you write me a poem about cats?", "thanks so much, that's great!", "Wow! Did you see that band?"],
)
def test_questions_requests_and_pleasantries_produce_nothing(text: str) -> None:
    assert extract(text) == []


def test_unmatched_first_person_statement_becomes_a_low_confidence_fact() -> None:
    text = "I went to a LGBTQ support group yesterday and it was so powerful."
    cand = only(text)
    assert cand.type is T.USER_FACT and cand.attribute is None
    # normalised, not a verbatim copy: third person, one statement
    assert cand.content == "User went to a LGBTQ support group yesterday and it was so powerful"
    assert cand.confidence == FALLBACK_CONFIDENCE
    assert "LGBTQ" in cand.entities and "support" in cand.keywords


def test_unmatched_chinese_first_person_statement_becomes_a_fact() -> None:
    cand = only("我昨天去了一个互助小组，感觉很有力量")
    assert cand.type is T.USER_FACT and cand.content.startswith("用户昨天去了")
    assert cand.confidence == FALLBACK_CONFIDENCE


def test_speaker_metadata_becomes_an_entity() -> None:
    cands = extract("I went hiking with my family last weekend and we saw a bear.", speaker="Caroline")
    assert cands and all(c.entities[0] == "Caroline" for c in cands)


def test_assistant_conclusions_need_confirmation_and_skip_the_reasoning() -> None:
    text = (
        "微服务架构整体扩展性更好，单体架构后期不好扩容，综合你的业务量和后续迭代需求，我这边建议你直接采用微服务架构。"
        "另外项目整体预算尽量控制在 10 万元以内会更合理，我简单给你分析下两种架构，单体优点是开发简单、上线快。"
    )
    cands = extract(text, "assistant")
    kinds = {c.type: c.content for c in cands}
    assert "微服务" in kinds[T.ASSISTANT_DECISION]
    assert "10万" in kinds[T.ASSISTANT_CONSTRAINT]
    assert not any("优点" in c.content or "扩展性更好" in c.content for c in cands)
    assert extract("你好，我是AI助手，有什么问题都可以问我哦，我会尽力回答你的问题。", "assistant") == []


def test_english_assistant_decision_constraint_and_action() -> None:
    text = "Confirmed: we'll go with PostgreSQL for storage. The budget is capped at $10k. I'll send you the migration plan tomorrow."
    kinds = [c.type for c in extract(text, "assistant")]
    assert kinds == [T.ASSISTANT_DECISION, T.ASSISTANT_CONSTRAINT, T.ASSISTANT_ACTION]


def test_extraction_is_deterministic() -> None:
    text = "我是 Java 开发工程师，最近准备 3 个月内跳槽。I love Go."
    assert extract(text) == extract(text)


def test_a_multi_fact_english_message_gives_each_fact_in_the_third_person() -> None:
    cands = extract("I'm a nurse working nights, and I live in Toronto.")
    by_slot = {c.slot: c.content for c in cands}
    assert by_slot["user_profile.occupation"] == "User is a nurse"
    assert by_slot["user_fact.schedule"] == "User works night shifts"
    assert by_slot["user_fact.location"] == "User lives in Toronto"


def test_third_parties_hypotheticals_and_sarcasm_are_not_the_users_facts() -> None:
    sister = extract("My sister lives in Paris and works as a lawyer.")
    assert [(c.slot, c.content) for c in sister] == [
        ("user_fact.family", "User's sister lives in Paris and works as a lawyer")]
    assert extract("If I were a doctor I'd probably work in a big city.") == []
    assert extract("Oh great, I just love waiting two hours for a bus.") == []
    assert extract("呵呵，我可太喜欢加班了。") == []
    assert extract("如果我是老板，我会让大家每周只上四天班。") == []


def test_a_dangling_pronoun_is_resolved_in_the_turn_or_dropped() -> None:
    (go, favourite) = extract("I love Go, it's my favourite language for services.")
    assert favourite.content == "User's favorite language for services is Go"
    assert extract("It's my favourite language for backend work.") == []


def test_code_switched_clauses_are_read_in_their_own_language() -> None:
    cands = extract("我是一名 data scientist，在 Shopee 工作。")
    assert {c.slot for c in cands} == {"user_profile.occupation", "user_profile.company"}
    (moved,) = extract("我 moved to Seattle last month。")
    assert moved.slot == "user_fact.location" and "Seattle" in moved.content


def test_a_statement_before_a_question_is_kept() -> None:
    (here,) = extract("我在广州，周末有什么好玩的地方推荐吗？")
    assert here.slot == "user_fact.location" and "广州" in here.content
    (role,) = extract("As a teacher, what's a good way to grade essays faster?")
    assert role.slot == "user_profile.occupation" and role.content == "User is a teacher"


def test_a_credential_is_never_written_down_however_it_is_phrased() -> None:
    assert extract("My password for the staging server is hunter2, and I'm the only admin there.") == [
        c for c in extract("I'm the only admin there.")]
    assert not any("密码" in c.content for c in extract("我的服务器密码是abc123，我是运维"))


def test_a_past_liking_is_not_a_current_one() -> None:
    (java, kotlin) = extract("我以前很喜欢 Java，但现在更喜欢 Kotlin。")
    assert java.negated and "以前" in java.content
    assert not kotlin.negated and "Kotlin" in kotlin.content
    (coffee,) = extract("I used to love coffee.")
    assert coffee.negated and coffee.content == "User used to love coffee"


def test_a_job_change_names_the_new_employer() -> None:
    cands = extract("I left Spotify last month and joined a startup called Fernhill.")
    assert [(c.slot, c.content) for c in cands] == [
        ("user_profile.company", "User no longer works at Spotify"),
        ("user_profile.company", "User works at Fernhill")]
    (_, netflix) = extract("I left Amazon, now I'm at Netflix.")
    assert netflix.content == "User works at Netflix"


def test_account_handles_are_left_out() -> None:
    assert extract("我的微信号是lina_1990") == []
    assert extract("My WhatsApp is +44 7700 900123") == []
