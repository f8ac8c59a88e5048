"""Acceptance cases 4, 23 and the merge cases 6-8, 22 (numbered as in tests/golden) with the scripted model, through the normal ingest path."""

from __future__ import annotations

import pytest

from engram.core.config import DEFAULT_CONFIG
from engram.core.embedding import HashingEmbedder, cosine
from engram.schemas.events import LLMCallRecorded, MemoryChanged, MemoryProposed
from engram.schemas.memory import MemoryType
from engram.streams.merge_rules import judge_by_rules
from tests.drivers import Driver, turn, user_turns

from .conftest import EXTRACT, JUDGE, DriverFactory
from .models import echo_extractor, judge_pair, memories, stance_judge
from .scripted_server import Reply, ScriptedServer

pytestmark = pytest.mark.llm

CASE4 = ("微服务架构整体扩展性更好，单体架构后期不好扩容，不过单体开发简单、上线快。综合来看，"
         "我这边建议你直接采用微服务架构。另外项目整体预算尽量控制在 10 万元以内会更合理。")
CASE1 = "我是 Java 开发工程师，最近准备 3 个月内跳槽，晚上 8 点后才有时间学习。"


def _calls(engram: Driver) -> list[LLMCallRecorded]:
    return [e for e in engram.events(("LLMCallRecorded",)) if isinstance(e, LLMCallRecorded)]


def _of_type(engram: Driver, memory_type: MemoryType, tenant: str = "t1", user: str = "u1"):
    return [m for m in engram.memories(tenant, user) if m.type == memory_type]


def test_case04_assistant_turn_keeps_only_the_two_conclusions(llm_engram: Driver, llm_server: ScriptedServer) -> None:
    llm_server.queue(EXTRACT, memories(
        {"type": "assistant_decision", "content": "确认采用微服务架构", "confidence": 0.95, "topic": "微服务架构"},
        {"type": "assistant_constraint", "content": "项目预算不超过10万元", "confidence": 0.95, "topic": "预算"},
    ))
    llm_engram.ingest([turn(CASE4, role="assistant")])
    memories_now = llm_engram.memories("t1", "u1")
    assert any("微服务" in m.content for m in _of_type(llm_engram, MemoryType.ASSISTANT_DECISION))
    assert any("10万" in m.content or "10 万" in m.content
               for m in _of_type(llm_engram, MemoryType.ASSISTANT_CONSTRAINT))
    assert len(memories_now) == 2
    assert not any(word in m.content for m in memories_now for word in ("扩展性", "单体", "扩容", "上线快"))
    request = llm_server.requests_for(EXTRACT)[0]
    assert "assistant_decision" in request.system and "user_profile" not in request.system
    assert request.body.get("response_format") == {"type": "json_object"}
    proposed = [e for e in llm_engram.events(("MemoryProposed",)) if isinstance(e, MemoryProposed)]
    assert {p.extractor for p in proposed} == {"llm"}
    [call] = _calls(llm_engram)
    assert (call.task, call.model, call.outcome, call.attempt) == ("extract", EXTRACT, "ok", 1)
    assert call.tokens_in > 0 and call.tokens_out > 0 and call.latency_ms > 0


def test_case23_malformed_then_timeout_falls_back_to_rules(llm_driver: DriverFactory,
                                                           llm_server: ScriptedServer, tmp_path) -> None:
    engram = llm_driver()
    llm_server.queue(EXTRACT, Reply.malformed(), Reply.slow(2.0))
    engram.ingest(user_turns(CASE1))
    stored = sorted((m.type, m.content) for m in engram.memories("t1", "u1"))
    assert len(stored) >= 3  # the rule result, not lost
    proposed = [e for e in engram.events(("MemoryProposed",)) if isinstance(e, MemoryProposed)]
    assert {p.extractor for p in proposed} == {"rule"}
    first, second = _calls(engram)
    assert (first.attempt, first.outcome) == (1, "retried") and "malformed" in first.error
    assert (second.attempt, second.outcome) == (2, "fallback") and "timeout" in second.error
    assert first.causation_ids == second.causation_ids == (proposed[0].causation_ids[0],)
    assert first.session_id == "s1" and first.agent_id == "a1" and first.processor == "extract"
    rules_only = llm_driver(extract_model=None)
    rules_only.ingest(user_turns(CASE1))
    assert sorted((m.type, m.content) for m in rules_only.memories("t1", "u1")) == stored


def _decisions(engram: Driver) -> list[MemoryChanged]:
    return [e for e in engram.events(("MemoryChanged",)) if isinstance(e, MemoryChanged)]


def _rules_defer(engram: Driver, existing: str, new: str) -> bool:
    """Recompute, from the log, what the rules said about the pair the judge was asked about."""
    candidate = next(e.candidate for e in engram.events(("MemoryProposed",))
                     if isinstance(e, MemoryProposed) and e.candidate.content == new)
    record = next(e.after for e in _decisions(engram) if e.after is not None and e.after.content == existing)
    embedder = HashingEmbedder(DEFAULT_CONFIG.embedder.dimensions)
    cos = cosine(embedder.embed_one(new), embedder.embed_one(existing))
    return judge_by_rules(candidate, record, cos, DEFAULT_CONFIG.merge) is None


def _judge_only_where_rules_defer(engram: Driver, server: ScriptedServer) -> int:
    asked = [judge_pair(r) for r in server.requests_for(JUDGE)]
    assert all(_rules_defer(engram, existing, new) for existing, new in asked)
    llm_judged = [d for d in _decisions(engram) if d.judge == "llm"]
    assert bool(llm_judged) == bool(asked)
    return len(asked)


@pytest.fixture
def bare_model(llm_server: ScriptedServer) -> ScriptedServer:
    """A model that answers like the rules but without topics: the judge gets the open pairs."""
    llm_server.route(EXTRACT, echo_extractor(bare=True))
    llm_server.route(JUDGE, stance_judge)
    return llm_server


@pytest.fixture
def unlabelled(llm_driver: DriverFactory) -> Driver:
    """An Engram that keeps the model's candidates unlabelled (no topic filled in by the rules)."""
    return llm_driver(label_with_rules=False)


def test_case06_occupation_slot_is_replaced_by_rule_without_the_judge(llm_engram: Driver,
                                                                       bare_model: ScriptedServer) -> None:
    llm_engram.ingest(user_turns("我是后端开发", "我是前端开发"))
    active = _of_type(llm_engram, MemoryType.USER_PROFILE)
    assert [m.content for m in active if m.slot == "user_profile.occupation"] == ["用户是前端开发"]
    replaced = llm_engram.memories("t1", "u1", ("replaced",))
    assert any("后端" in m.content for m in replaced)
    assert bare_model.requests_for(JUDGE) == []
    assert {d.judge for d in _decisions(llm_engram)} == {"rule"}


def test_case07_judge_decides_the_reversal_rules_leave_open(unlabelled: Driver, bare_model: ScriptedServer) -> None:
    llm_engram = unlabelled
    llm_engram.ingest(user_turns("我喜欢Java", "我喜欢Python", "我不喜欢Java了"))
    prefs = sorted(m.content for m in _of_type(llm_engram, MemoryType.USER_PREFERENCE))
    assert prefs == ["用户不喜欢Java", "用户喜欢Python"]
    assert _judge_only_where_rules_defer(llm_engram, bare_model) >= 1
    replace = [d for d in _decisions(llm_engram) if d.relation == "replace" and d.change == "replaced"]
    assert [(d.before.content, d.judge) for d in replace] == [("用户喜欢Java", "llm")]  # type: ignore[union-attr]
    assert "opposite stance" in replace[0].reason


def test_case08_more_specific_statement_is_same_by_rule(llm_engram: Driver, bare_model: ScriptedServer) -> None:
    llm_engram.ingest(user_turns("我喜欢Java", "我喜欢Java编程"))
    prefs = _of_type(llm_engram, MemoryType.USER_PREFERENCE)
    assert [m.content for m in prefs] == ["用户喜欢Java编程"]
    assert bare_model.requests_for(JUDGE) == []


def test_case22_english_reversal_judged_where_rules_defer(unlabelled: Driver, bare_model: ScriptedServer) -> None:
    llm_engram = unlabelled
    llm_engram.ingest(user_turns("I'm a backend engineer", "I love Go",
                                 "Actually I don't like Go anymore, I prefer Rust"))
    occupation = [m.content for m in _of_type(llm_engram, MemoryType.USER_PROFILE)]
    assert any("backend engineer" in c for c in occupation)
    prefs = sorted(m.content for m in _of_type(llm_engram, MemoryType.USER_PREFERENCE))
    assert prefs == ["User no longer likes Go", "User prefers Rust"]
    assert _judge_only_where_rules_defer(llm_engram, bare_model) >= 1
    assert any(d.judge == "llm" and d.relation == "replace" for d in _decisions(llm_engram))


@pytest.mark.parametrize("bare", [False, True], ids=["model-topics", "rule-labels"])
def test_with_topics_the_rules_settle_case07_and_the_judge_is_never_asked(llm_engram: Driver,
                                                                          llm_server: ScriptedServer,
                                                                          bare: bool) -> None:
    llm_server.route(EXTRACT, echo_extractor(bare=bare))
    llm_server.route(JUDGE, stance_judge)
    llm_engram.ingest(user_turns("我喜欢Java", "我喜欢Python", "我不喜欢Java了"))
    prefs = sorted(m.content for m in _of_type(llm_engram, MemoryType.USER_PREFERENCE))
    assert prefs == ["用户不喜欢Java", "用户喜欢Python"]
    assert llm_server.requests_for(JUDGE) == []
    judge_calls = [c for c in _calls(llm_engram) if c.task == "judge"]
    assert judge_calls == []


def test_judge_failure_keeps_both_memories_and_records_the_calls(unlabelled: Driver,
                                                                 bare_model: ScriptedServer) -> None:
    llm_engram = unlabelled
    bare_model.queue(JUDGE, Reply.server_error(), Reply.server_error(503))
    llm_engram.ingest(user_turns("我喜欢Java", "我不喜欢Java了"))
    prefs = sorted(m.content for m in _of_type(llm_engram, MemoryType.USER_PREFERENCE))
    assert prefs == ["用户不喜欢Java", "用户喜欢Java"]
    judge_calls = [c for c in _calls(llm_engram) if c.task == "judge"]
    assert [(c.outcome, c.processor) for c in judge_calls] == [("retried", "consolidate"), ("fallback", "consolidate")]
    created = [d for d in _decisions(llm_engram) if d.change == "created"][-1]
    assert created.judge == "rule" and "model judge failed" in created.reason
