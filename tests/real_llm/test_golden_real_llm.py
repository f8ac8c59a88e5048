"""Acceptance cases 1, 3, 4, 6, 7, 22 and 23 (numbered as in tests/golden) on the embedded runtime, with a real model.

The model is whatever `ENGRAM_LLM_*` names (by default the local Qwen2.5
1.5B of `deploy/local/llm`), reached through the `openai` client like any
user's endpoint. Assertions are on meaning: the memory types and the key
terms a careful reader expects, never the model's exact wording.
"""

from __future__ import annotations

import re

import pytest

from engram.schemas.events import LLMCallRecorded, MemoryChanged, MemoryProposed
from engram.schemas.memory import MemoryRecord, MemoryType
from tests.drivers import Driver, turn, user_turns

from .conftest import RealFactory

pytestmark = pytest.mark.real_llm

CASE1 = "我是 Java 开发工程师，最近准备 3 个月内跳槽，晚上 8 点后才有时间学习。"
CASE3 = "我喜欢java编程，我希望你以后对话推送java知识"
CASE4 = ("微服务架构整体扩展性更好，单体架构后期不好扩容，不过单体开发简单、上线快。综合来看，"
         "我这边建议你直接采用微服务架构。另外项目整体预算尽量控制在 10 万元以内会更合理。")
_NEGATION = re.compile(r"不|没|别|no longer|don't|do not|doesn't|does not|not |never|anymore|dislike|stopped", re.I)


def _of(engram: Driver, *types: MemoryType) -> list[MemoryRecord]:
    return [m for m in engram.memories("t1", "u1") if m.type in types]


def _calls(engram: Driver) -> list[LLMCallRecorded]:
    return [e for e in engram.events(("LLMCallRecorded",)) if isinstance(e, LLMCallRecorded)]


def _extractors(engram: Driver) -> set[str]:
    return {e.extractor for e in engram.events(("MemoryProposed",)) if isinstance(e, MemoryProposed)}


def _model_answered(engram: Driver) -> None:
    """Every extraction was the model's (no fallback), and every call was recorded as ok."""
    assert _extractors(engram) == {"llm"}, [(c.outcome, c.error) for c in _calls(engram)]
    extract = [c for c in _calls(engram) if c.task == "extract"]
    assert extract and all(c.outcome == "ok" and c.tokens_out > 0 for c in extract), extract


def _contents(records: list[MemoryRecord]) -> str:
    return " | ".join(f"{m.type.value}: {m.content}" for m in records)


def test_case01_one_message_gives_occupation_goal_and_time_limit(real_engram: RealFactory) -> None:
    engram = real_engram()
    engram.ingest(user_turns(CASE1))
    everything = engram.memories("t1", "u1")
    assert len(everything) >= 3, _contents(everything)
    assert any("java" in m.content.lower() for m in _of(engram, MemoryType.USER_PROFILE)), _contents(everything)
    assert any("跳槽" in m.content for m in _of(engram, MemoryType.USER_GOAL)), _contents(everything)
    assert any(re.search(r"8|八", m.content) for m in _of(engram, MemoryType.USER_CONSTRAINT)), _contents(everything)
    _model_answered(engram)


def test_case03_preference_and_the_wish_for_java_content(real_engram: RealFactory) -> None:
    engram = real_engram()
    engram.ingest(user_turns(CASE3))
    everything = engram.memories("t1", "u1")
    prefs = _of(engram, MemoryType.USER_PREFERENCE)
    assert any("java" in m.content.lower() for m in prefs), _contents(everything)
    wish = [m for m in _of(engram, MemoryType.USER_PREFERENCE, MemoryType.USER_GOAL)
            if "java" in m.content.lower() and re.search(r"推送|知识|对话", m.content)]
    assert wish, _contents(everything)
    _model_answered(engram)


def test_case04_assistant_reply_keeps_the_conclusions_not_the_reasoning(real_engram: RealFactory) -> None:
    engram = real_engram()
    engram.ingest([turn(CASE4, role="assistant")])
    everything = engram.memories("t1", "u1")
    assert any("微服务" in m.content for m in _of(engram, MemoryType.ASSISTANT_DECISION)), _contents(everything)
    budget = [m for m in everything if re.search(r"10\s*万", m.content)]
    assert budget and all(m.type.is_assistant for m in budget), _contents(everything)
    assert any(m.type == MemoryType.ASSISTANT_CONSTRAINT for m in budget), _contents(everything)
    assert not any(re.search(r"扩展性|扩容|上线快", m.content) for m in everything), _contents(everything)
    _model_answered(engram)


def test_case06_new_occupation_replaces_the_old_one(real_engram: RealFactory) -> None:
    engram = real_engram()
    engram.ingest(user_turns("我是后端开发", "我是前端开发"))
    everything = engram.memories("t1", "u1")
    jobs = [m for m in _of(engram, MemoryType.USER_PROFILE) if "开发" in m.content]
    assert len(jobs) == 1 and "前端" in jobs[0].content, _contents(everything)
    assert any("后端" in m.content for m in engram.memories("t1", "u1", ("replaced",))), _contents(everything)
    _model_answered(engram)


def _stances(engram: Driver, topic: str) -> tuple[list[str], list[str]]:
    prefs = [m.content for m in _of(engram, MemoryType.USER_PREFERENCE) if topic.lower() in m.content.lower()]
    return [p for p in prefs if not _NEGATION.search(p)], [p for p in prefs if _NEGATION.search(p)]


def test_case07_reversed_preference_leaves_dislike_java_and_like_python(real_engram: RealFactory) -> None:
    engram = real_engram()
    engram.ingest(user_turns("我喜欢Java", "我喜欢Python", "我不喜欢Java了"))
    everything = engram.memories("t1", "u1")
    likes_java, dislikes_java = _stances(engram, "java")
    likes_python, _ = _stances(engram, "python")
    assert dislikes_java and not likes_java, _contents(everything)
    assert likes_python, _contents(everything)
    replaced = [d for d in engram.events(("MemoryChanged",)) if isinstance(d, MemoryChanged)
                and d.change == "replaced" and d.before is not None and "java" in d.before.content.lower()]
    assert replaced, "the old 'likes Java' was not retired"
    _model_answered(engram)


def test_case22_english_occupation_and_reversed_preference(real_engram: RealFactory) -> None:
    engram = real_engram()
    engram.ingest(user_turns("I'm a backend engineer", "I love Go",
                             "Actually I don't like Go anymore, I prefer Rust"))
    everything = engram.memories("t1", "u1")
    assert any("backend" in m.content.lower() for m in _of(engram, MemoryType.USER_PROFILE)), _contents(everything)
    likes_go, dislikes_go = _stances(engram, "go")
    likes_rust, _ = _stances(engram, "rust")
    assert dislikes_go and not likes_go, _contents(everything)
    assert likes_rust, _contents(everything)
    _model_answered(engram)


def _fell_back_to_rules(engram: Driver, rules_only: Driver, error: str) -> None:
    stored = sorted((m.type, m.content) for m in engram.memories("t1", "u1"))
    assert len(stored) >= 3  # the rule result, not lost
    assert stored == sorted((m.type, m.content) for m in rules_only.memories("t1", "u1"))
    assert _extractors(engram) == {"rule"}
    first, second = [c for c in _calls(engram) if c.task == "extract"]
    assert (first.attempt, first.outcome) == (1, "retried") and error in first.error, first
    assert (second.attempt, second.outcome) == (2, "fallback") and error in second.error, second


def test_case23_answers_cut_off_by_the_token_limit_fall_back_to_rules(real_engram: RealFactory) -> None:
    engram = real_engram(max_output_tokens=16, retries=1)
    engram.ingest(user_turns(CASE1))
    _fell_back_to_rules(engram, _rules_only(real_engram), "malformed")


def test_case23_a_timed_out_model_falls_back_to_rules(real_engram: RealFactory) -> None:
    engram = real_engram(timeout_s=0.3, retries=1, backoff_s=0.0)
    engram.ingest(user_turns(CASE1))
    _fell_back_to_rules(engram, _rules_only(real_engram), "timeout")


def _rules_only(real_engram: RealFactory) -> Driver:
    rules = real_engram(extract_model=None, judge_model=None, summarize_model=None)
    rules.ingest(user_turns(CASE1))
    return rules
