"""The extraction adapter and the client's retry policy, through the real openai client."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from engram.llm.client import ModelClient
from engram.llm.extractor import LLMExtractor, same_language
from engram.llm.judge import LLMJudge, parse_relation
from engram.llm.parsing import AnswerError, load_json
from engram.schemas.events import LLMCallRecorded, TurnRecorded
from engram.schemas.inputs import to_turn_event
from engram.schemas.memory import MemoryRecord, MemoryType
from engram.streams.rule_extractor import RuleExtractor
from tests.drivers import Driver, turn, user_turns

from .conftest import EXTRACT, JUDGE, DriverFactory, scripted_settings
from .models import memories
from .scripted_server import Reply, ScriptedServer

pytestmark = pytest.mark.llm

NOW = datetime(2026, 1, 5, tzinfo=timezone.utc)


def _turn(text: str, role: str = "user") -> TurnRecorded:
    return to_turn_event(turn(text, role=role), NOW)


def _extractor(server: ScriptedServer, **overrides: object) -> LLMExtractor:
    return LLMExtractor(ModelClient(scripted_settings(server, **overrides)), EXTRACT)


def test_a_chinese_turn_yields_chinese_memories(llm_engram: Driver, llm_server: ScriptedServer) -> None:
    llm_server.queue(EXTRACT, memories(
        {"type": "user_preference", "content": "用户喜欢用Java写后端", "confidence": 0.9, "topic": "Java"},
        {"type": "user_preference", "content": "User likes writing backends in Java", "confidence": 0.9},
    ))
    llm_engram.ingest(user_turns("我平时最喜欢用Java写后端服务"))
    assert [m.content for m in llm_engram.memories("t1", "u1")] == ["用户喜欢用Java写后端"]
    request = llm_server.requests_for(EXTRACT)[0]
    assert "user_profile" in request.system and "assistant_decision" not in request.system
    assert "我平时最喜欢用Java写后端服务" in request.prompt
    [call] = [e for e in llm_engram.events(("LLMCallRecorded",)) if isinstance(e, LLMCallRecorded)]
    assert call.dropped_items == 1  # the translation


def test_language_check_allows_quoted_latin_words_but_not_translations() -> None:
    assert same_language("我喜欢Java", "用户喜欢Java")
    assert same_language("我喜欢Java", "Java")
    assert not same_language("我喜欢Java", "User likes Java")
    assert not same_language("I like tea", "用户喜欢茶")
    assert same_language("I like tea", "User likes tea")


def test_code_fences_and_prose_around_the_json_are_tolerated(llm_server: ScriptedServer) -> None:
    answer = ('Sure! Here are the memories:\n```json\n{"memories": [{"type": "user_profile", "attribute": '
              '"occupation", "content": "用户是后端开发", "confidence": 0.9}]}\n```\nHope this helps.')
    llm_server.queue(EXTRACT, Reply.text(answer))
    extraction = _extractor(llm_server).extract(_turn("我是后端开发"))
    assert extraction.extractor == "llm"
    [candidate] = extraction.candidates
    assert (candidate.type, candidate.slot, candidate.content) == (
        MemoryType.USER_PROFILE, "user_profile.occupation", "用户是后端开发")


@pytest.mark.parametrize("text, expected", [
    ('[{"a": 1}]', [{"a": 1}]),
    ('prefix {"relation": "new"} suffix', {"relation": "new"}),
    ('<think>hmm [x]</think>{"ok": true}', {"ok": True}),
    ("```\n[]\n```", []),
])
def test_load_json_finds_the_first_json_value(text: str, expected: object) -> None:
    assert load_json(text) == expected


def test_load_json_refuses_text_without_json() -> None:
    with pytest.raises(AnswerError):
        load_json("I could not find anything worth remembering.")


def test_types_outside_the_whitelist_are_dropped_and_counted(llm_server: ScriptedServer) -> None:
    llm_server.queue(EXTRACT, memories(
        {"type": "assistant_decision", "content": "确认采用微服务架构", "confidence": 0.9},
        {"type": "user_preference", "content": "用户喜欢微服务", "confidence": 0.9},
        {"type": "opinion", "content": "微服务扩展性更好"},
        {"type": "assistant_constraint"},
        "not an object",
    ))
    extraction = _extractor(llm_server).extract(_turn("已确认：我们采用微服务架构，下周开始拆分服务。", "assistant"))
    assert [c.type for c in extraction.candidates] == [MemoryType.ASSISTANT_DECISION]
    [call] = extraction.calls
    assert (call.outcome, call.dropped) == ("ok", 4)
    assert extraction.notes == ("4 answered item(s) dropped by validation",)


def test_an_attribute_is_kept_only_for_a_single_valued_slot(llm_server: ScriptedServer) -> None:
    llm_server.queue(EXTRACT, memories(
        {"type": "user_preference", "attribute": "hobby", "content": "用户喜欢爬山"},
        {"type": "user_fact", "attribute": "Location", "content": "用户住在上海"},
    ))
    candidates = _extractor(llm_server).extract(_turn("我喜欢爬山，我住在上海")).candidates
    assert [c.slot for c in candidates] == ["user_preference", "user_fact.location"]


def test_an_empty_answer_means_nothing_to_remember(llm_engram: Driver, llm_server: ScriptedServer) -> None:
    llm_server.queue(EXTRACT, memories())
    llm_engram.ingest(user_turns("我今天想问一下这个函数怎么写比较好"))
    assert llm_engram.memories("t1", "u1") == []
    assert [e.reason for e in llm_engram.events(("TurnSkipped",))] == ["nothing_extracted"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("first", [Reply.rate_limited(0.05), Reply.server_error(), Reply.server_error(502),
                                   Reply.malformed(), Reply.slow(2.0)], ids=["429", "500", "502", "malformed", "slow"])
def test_one_failure_is_retried_and_the_second_answer_used(llm_server: ScriptedServer, first: Reply) -> None:
    llm_server.queue(EXTRACT, first, memories({"type": "user_goal", "content": "用户计划学习Rust"}))
    extraction = _extractor(llm_server).extract(_turn("我计划今年学习Rust"))
    assert extraction.extractor == "llm"
    assert [c.content for c in extraction.candidates] == ["用户计划学习Rust"]
    assert [(c.attempt, c.outcome) for c in extraction.calls] == [(1, "retried"), (2, "ok")]
    assert len(llm_server.requests_for(EXTRACT)) == 2


def test_429_retry_after_is_honoured(llm_server: ScriptedServer) -> None:
    llm_server.queue(EXTRACT, Reply.rate_limited(0.3), memories())
    _extractor(llm_server).extract(_turn("我计划今年学习Rust"))
    first, second = llm_server.requests_for(EXTRACT)
    assert second.received_at - first.received_at >= 0.29


@pytest.mark.parametrize("failures", [
    (Reply.server_error(), Reply.server_error()),
    (Reply.rate_limited(), Reply.rate_limited()),
    (Reply.malformed(), Reply.slow(2.0)),
], ids=["500x2", "429x2", "malformed+timeout"])
def test_two_failures_fall_back_to_the_rule_extractor(llm_server: ScriptedServer, failures: tuple[Reply, ...]) -> None:
    llm_server.queue(EXTRACT, *failures)
    turn_event = _turn("我是后端开发，我不吃香菜")
    extraction = _extractor(llm_server).extract(turn_event)
    assert extraction.extractor == "rule"
    assert extraction.candidates == RuleExtractor().extract(turn_event).candidates
    assert [c.outcome for c in extraction.calls] == ["retried", "fallback"]
    assert "rule extractor used" in extraction.notes[-1]


def test_a_client_error_is_not_retried(llm_server: ScriptedServer) -> None:
    llm_server.queue(EXTRACT, Reply.failure(401, "Incorrect API key provided"))
    extraction = _extractor(llm_server).extract(_turn("我是后端开发"))
    assert extraction.extractor == "rule"
    [call] = extraction.calls
    assert (call.outcome, call.error) == ("fallback", "http 401: Incorrect API key provided")
    assert len(llm_server.requests) == 1


def test_an_endpoint_without_json_mode_is_asked_again_without_it(llm_server: ScriptedServer) -> None:
    llm_server.queue(EXTRACT, Reply.failure(400, "response_format json_object is not supported by this model"),
                     Reply.malformed(), memories({"type": "user_fact", "content": "用户养了一只猫"}))
    extractor = _extractor(llm_server)
    extraction = extractor.extract(_turn("我养了一只猫，叫八千代"))
    assert [c.content for c in extraction.candidates] == ["用户养了一只猫"]
    assert [c.outcome for c in extraction.calls] == ["retried", "retried", "ok"]
    bodies = [r.body for r in llm_server.requests_for(EXTRACT)]
    assert "response_format" in bodies[0] and all("response_format" not in b for b in bodies[1:])
    assert extractor.client.json_mode is False


def test_with_retries_off_the_first_failure_falls_back(llm_server: ScriptedServer) -> None:
    llm_server.queue(EXTRACT, Reply.server_error())
    extraction = _extractor(llm_server, retries=0).extract(_turn("我是后端开发"))
    assert [c.outcome for c in extraction.calls] == ["fallback"]


def test_llm_call_events_have_ids_derived_from_the_turn(llm_driver: DriverFactory, llm_server: ScriptedServer) -> None:
    ids = []
    for _ in range(2):
        engram = llm_driver()
        llm_server.queue(EXTRACT, Reply.server_error(), memories({"type": "user_fact", "content": "用户养猫"}))
        engram.ingest([turn("我养了一只猫", message_id="m-fixed")])
        ids.append([e.event_id for e in engram.events(("LLMCallRecorded",))])
    assert len(ids[0]) == 2 and ids[0] == ids[1]


def _record(content: str) -> MemoryRecord:
    return MemoryRecord(memory_id="x", tenant_id="t", user_id="u", type=MemoryType.USER_PREFERENCE,
                        slot="user_preference", content=content, confidence=0.9, importance=0.5,
                        created_at=NOW, updated_at=NOW, last_seen_at=NOW)


def test_the_judge_returns_the_relation_and_reason(llm_server: ScriptedServer) -> None:
    from engram.schemas.memory import Candidate
    llm_server.queue(JUDGE, Reply.json({"relation": "maybe"}), Reply.json({"relation": "Replace", "reason": "相反"}))
    judge = LLMJudge(ModelClient(scripted_settings(llm_server)), JUDGE)
    candidate = Candidate(type=MemoryType.USER_PREFERENCE, content="用户不喜欢Java", confidence=0.9)
    judgement = judge.judge(candidate, _record("用户喜欢Java"))
    assert (judgement.relation, judgement.reason, judgement.judge) == ("replace", "相反", "llm")
    assert [c.outcome for c in judgement.calls] == ["retried", "ok"]
    body = llm_server.requests_for(JUDGE)[1].prompt
    assert "用户喜欢Java" in body and "用户不喜欢Java" in body and "user_preference" in body


@pytest.mark.parametrize("text, relation", [("same", "same"), ("Relation: append.", "append"),
                                            ('[{"relation": "skip", "reason": "noise"}]', "skip")])
def test_judge_answers_are_read_tolerantly(text: str, relation: str) -> None:
    (found, _), _ = parse_relation(text)
    assert found == relation


def test_a_judge_answer_naming_two_relations_is_malformed() -> None:
    with pytest.raises(AnswerError):
        parse_relation("either replace or append")


def test_missing_labels_are_filled_from_the_rule_candidate_saying_the_same(llm_server: ScriptedServer) -> None:
    llm_server.queue(EXTRACT, memories(
        {"type": "user_preference", "content": "用户不喜欢Java"},
        {"type": "user_profile", "content": "用户是后端开发"},
        {"type": "user_fact", "content": "用户周末爬山"},
    ))
    candidates = _extractor(llm_server).extract(_turn("我不喜欢Java了，我是后端开发")).candidates
    by_content = {c.content: c for c in candidates}
    pref, job, other = by_content["用户不喜欢Java"], by_content["用户是后端开发"], by_content["用户周末爬山"]
    assert (pref.topic, pref.negated) == ("java", True)
    assert (job.attribute, job.slot) == ("occupation", "user_profile.occupation")
    assert (other.topic, other.attribute) == (None, None)


def test_labelling_from_rules_can_be_turned_off(llm_server: ScriptedServer) -> None:
    llm_server.queue(EXTRACT, memories({"type": "user_preference", "content": "用户不喜欢Java"}))
    extractor = LLMExtractor(ModelClient(scripted_settings(llm_server)), EXTRACT, label_with_rules=False)
    [candidate] = extractor.extract(_turn("我不喜欢Java了")).candidates
    assert (candidate.topic, candidate.negated) == (None, False)


def test_a_repeated_message_is_answered_from_memory(llm_driver: DriverFactory, llm_server: ScriptedServer) -> None:
    llm_server.queue(EXTRACT, memories({"type": "user_constraint", "content": "用户不吃香菜", "topic": "香菜",
                                        "negated": True}))
    engram = llm_driver()
    engram.ingest([turn("我不吃香菜", session=f"s{i}", message_id=f"cilantro{i}") for i in range(3)])
    assert len(llm_server.requests_for(EXTRACT)) == 1
    [memory] = engram.memories("t1", "u1")
    assert memory.source_count == 3
    assert memory.source_message_ids == ("cilantro0", "cilantro1", "cilantro2")
    assert len(engram.events(("LLMCallRecorded",))) == 1  # one call, one record


def test_the_answer_memory_can_be_turned_off(llm_driver: DriverFactory, llm_server: ScriptedServer) -> None:
    llm_server.route(EXTRACT, lambda request: memories({"type": "user_constraint", "content": "用户不吃香菜"}))
    engram = llm_driver(answer_cache=0)
    engram.ingest([turn("我不吃香菜", message_id=f"c{i}") for i in range(2)])
    assert len(llm_server.requests_for(EXTRACT)) == 2
