from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.core.pii import redact
from engram.core.ports import Extraction
from engram.schemas.base import derive_id
from engram.schemas.events import GuardFired, MemoryProposed, TurnRecorded, TurnSkipped
from engram.schemas.memory import Candidate, MemoryType
from engram.streams.extract import ExtractProcessor
from engram.streams.guard import score_importance
from engram.streams.processor import ProcessorContext

T0 = datetime(2026, 2, 1, 9, 30, tzinfo=timezone.utc)
PROCESSOR = ExtractProcessor()
CTX = ProcessorContext()


def turn(content: str, role: str = "user", n: int = 1, correlation: str = "trace-1") -> TurnRecorded:
    return TurnRecorded(
        event_id=f"turn-{n}", occurred_at=T0 + timedelta(minutes=n), tenant_id="tenant-a",
        user_id="user-1", agent_id="agent-x", session_id="sess-9", message_id=f"msg-{n}",
        role=role, content=content, correlation_id=correlation,  # type: ignore[arg-type]
    )


def run(source: TurnRecorded, ctx: ProcessorContext = CTX) -> list:
    state, events = PROCESSOR.process(None, source, ctx)
    assert state is None
    return events


def test_processor_contract_is_stateless_and_consumes_turns() -> None:
    assert PROCESSOR.name == "extract" and PROCESSOR.consumes == frozenset({"TurnRecorded"})
    assert PROCESSOR.state_type is None and PROCESSOR.state_key(turn("我喜欢Java")) is None


def test_golden_1_three_proposals_with_derived_envelopes() -> None:
    source = turn("我是 Java 开发工程师，最近准备 3 个月内跳槽，晚上 8 点后才有时间学习。")
    events = run(source)
    assert [type(e) for e in events] == [MemoryProposed] * 3
    assert [e.candidate.type for e in events] == [
        MemoryType.USER_PROFILE, MemoryType.USER_GOAL, MemoryType.USER_CONSTRAINT
    ]
    for i, event in enumerate(events):
        assert event.event_id == derive_id("turn-1", "extract", i)
        assert event.occurred_at == source.occurred_at
        assert (event.tenant_id, event.user_id) == ("tenant-a", "user-1")
        assert (event.agent_id, event.session_id) == ("agent-x", "sess-9")
        assert event.causation_ids == ("turn-1",) and event.correlation_id == "trace-1"
        assert event.extractor == "rule" and 0 < event.importance <= 1
        assert event.candidate.source_message_ids == ("msg-1",)


def test_correlation_defaults_to_the_turn_id() -> None:
    (event,) = run(turn("哈哈", correlation=""))
    assert event.correlation_id == "turn-1"


def test_golden_2_each_chit_chat_turn_is_skipped_with_its_reason() -> None:
    reasons = []
    for n, text in enumerate(["哈哈", "好的", "继续", "这是什么意思？", "thanks", "ok"]):
        (event,) = run(turn(text, n=n))
        assert isinstance(event, TurnSkipped) and event.message_id == f"msg-{n}"
        reasons.append(event.reason)
    assert reasons == ["too_short", "too_short", "too_short", "no_signal", "chit_chat", "too_short"]


def test_golden_5_assistant_without_decision_signal_is_skipped() -> None:
    (short,) = run(turn("你好，我是AI助手", "assistant"))
    assert short.reason == "too_short"
    long = "你好，我是AI助手。" * 15
    (event,) = run(turn(long, "assistant"))
    assert isinstance(event, TurnSkipped) and event.reason == "no_decision_signal"


def test_user_turn_with_nothing_to_keep_is_counted_as_nothing_extracted() -> None:
    (event,) = run(turn("我该怎么学Rust？有没有好的入门书推荐？"))
    assert isinstance(event, TurnSkipped) and event.reason == "nothing_extracted"


def test_golden_11_no_event_holds_the_phone_number_and_the_rule_is_audited() -> None:
    events = run(turn("我的电话是13800138000，以后有事打给我"))
    assert all("13800138000" not in e.model_dump_json() for e in events)
    fired = [e for e in events if isinstance(e, GuardFired)]
    assert ("pii.phone", "redacted") in {(e.rule, e.action) for e in fired}
    assert ("empty_after_redaction", "rejected") in {(e.rule, e.action) for e in fired}
    original_importance = score_importance(MemoryType.USER_FACT, "用户的电话是13800138000", "contact", 0.85)
    assert all(f"importance={original_importance}" in e.detail for e in fired)
    assert [e.event_id for e in events] == [derive_id("turn-1", "extract", i) for i in range(len(events))]


def test_assistant_decision_becomes_a_proposal() -> None:
    events = run(turn("已确认：我们采用微服务架构，项目预算控制在10万元以内。", "assistant"))
    kinds = {e.candidate.type for e in events if isinstance(e, MemoryProposed)}
    assert kinds == {MemoryType.ASSISTANT_DECISION, MemoryType.ASSISTANT_CONSTRAINT}


class ScriptedExtractor:
    def __init__(self, result: Extraction | Exception | None) -> None:
        self.result = result

    def extract(self, source: TurnRecorded) -> Extraction:
        if isinstance(self.result, Exception):
            raise self.result
        return self.result  # type: ignore[return-value]  # None: a badly behaved adapter


def test_configured_extractor_is_used_and_its_output_guarded() -> None:
    llm = Candidate(type=MemoryType.USER_PREFERENCE, content="用户偏好中文回答", confidence=0.92)
    leaky = Candidate(type=MemoryType.USER_FACT, content="用户邮箱是 x@y.com", confidence=0.9)
    ctx = ProcessorContext(extractor=ScriptedExtractor(Extraction((llm, leaky), "llm")))
    events = run(turn("以后请用中文回答我，我的邮箱是 x@y.com"), ctx)
    proposed = [e for e in events if isinstance(e, MemoryProposed)]
    assert [p.candidate.content for p in proposed] == ["用户偏好中文回答"]
    assert proposed[0].extractor == "llm" and proposed[0].candidate.source_message_ids == ("msg-1",)
    assert all("x@y.com" not in e.model_dump_json() for e in events)


def test_a_failing_extractor_falls_back_to_the_rules() -> None:
    for broken in (RuntimeError("model down"), None):
        ctx = ProcessorContext(extractor=ScriptedExtractor(broken))  # type: ignore[arg-type]
        (event,) = run(turn("我喜欢Java"), ctx)
        assert isinstance(event, MemoryProposed) and event.extractor == "rule"


FRAGMENTS = [
    "我是", "我喜欢", "不喜欢", "以后", "Java", "香菜", "我叫", "I'm a ", "I love ", "don't like ",
    "anymore", "13800138000", "11010519491231002X", "4111 1111 1111 1111", "a@b.co", "密码是x1",
    "sk-abcdefghijklmnop1234", "，", "。", "?", "!", " ", "哈哈", "thanks", "已确认采用", "we'll go with ",
    "预算", "10万", "8pm", "\n", "my name is ", "工程师", "了", "每天", "在", "工作", "住在",
]
contents = st.one_of(
    st.text(max_size=200),
    st.lists(st.sampled_from(FRAGMENTS), max_size=25).map("".join),
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=6)), max_size=15).map("".join),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(content=contents, role=st.sampled_from(["user", "assistant"]))
def test_processor_never_raises_and_is_deterministic(content: str, role: str) -> None:
    source = turn(content, role)
    first, second = run(source), run(source)
    assert first == second and first
    assert [e.event_id for e in first] == [derive_id("turn-1", "extract", i) for i in range(len(first))]
    proposed = [e for e in first if isinstance(e, MemoryProposed)]
    skipped = [e for e in first if isinstance(e, TurnSkipped)]
    assert (len(skipped) == 1) != bool(proposed)
    # Every span the PII rules find in the raw turn is absent from what was derived
    # (as a token: "1380013800" may still sit inside a longer, harmless number).
    leaks = [
        re.compile(rf"(?<![0-9A-Za-z]){re.escape(content[hit.start : hit.end])}(?![0-9A-Za-z])")
        for hit in redact(content).hits
        if hit.end - hit.start >= 6  # a one-character "password" would match timestamps
    ]
    for event in first:
        assert event.occurred_at == source.occurred_at and event.causation_ids == ("turn-1",)
        body = event.model_dump_json()
        assert not any(leak.search(body) for leak in leaks)
    if role == "assistant":
        assert all(p.candidate.type.is_assistant for p in proposed)
