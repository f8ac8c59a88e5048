"""Session summaries: trigger, incremental input, idempotency, redaction (acceptance cases 12-15)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from engram.core.config import EngramConfig, SummaryConfig
from engram.core.ports import SummaryMessage, SummaryResult
from engram.schemas.base import derive_id, stable_id
from engram.schemas.events import ForgetRequested, SummaryRequested, SummarySnapshotted, TurnRecorded
from engram.schemas.memory import SECTION_HEADINGS, SummarySections
from engram.streams.processor import ProcessorContext
from engram.streams.summarize import SessionSummaryState, SummarizeProcessor, UserSummaryState
from engram.streams.rules import extract_drafts
from engram.streams.summarizer import ExtractiveSummarizer, split_sentences

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)
FILLER = "微服务架构把系统按业务边界拆开，每个服务可以独立部署、独立扩展，团队也能并行开发和发布。"

FIRST_CONVERSATION: tuple[tuple[str, str], ...] = (
    ("user", "我是Java后端开发，在做一个B2C电商系统。"),
    ("assistant", "了解，电商系统通常包含用户、商品、订单和支付几个核心域。" + FILLER * 9),
    ("user", "我们的预算只有10万元，必须私有化部署。"),
    ("assistant", FILLER * 9 + "最终确定采用微服务架构，服务按业务域拆分。"),
    ("user", "下一步我需要设计订单服务的接口。"),
    ("assistant", FILLER * 9 + "接下来我们先梳理订单状态机。"),
    ("user", "缓存一致性应该怎么保证？"),
    ("assistant", "缓存一致性可以用先更新数据库再删除缓存的方式保证，必要时加延迟双删。" + FILLER * 8),
    ("user", "不要使用云服务，团队只熟悉Java技术栈。"),
    ("assistant", FILLER * 10),
    ("user", "我计划三个月内上线第一个版本。"),
    ("assistant", FILLER * 10),
    ("user", "我们的目标QPS是一万，高峰期在晚上。"),
    ("assistant", FILLER * 10),
    ("user", "分布式事务选TCC还是Saga？"),
)
SECOND_CONVERSATION: tuple[tuple[str, str], ...] = (
    ("assistant", "分布式事务这块我建议就按Saga模式实现，补偿逻辑更清晰。" + FILLER * 8),
    ("user", "好的，那支付服务也按Saga做。"),
    ("assistant", FILLER * 9),
    ("user", "我还要准备一份压测方案。"),
    ("assistant", FILLER * 10),
    ("user", "消息队列用Kafka还是RocketMQ？"),
    ("assistant", "这个还不确定，要看团队的运维经验。" + FILLER * 3),
)
THIRD_CONVERSATION: tuple[tuple[str, str], ...] = (
    ("user", "好的，我先看看。"),
    ("assistant", FILLER * 4),
    ("user", "订单号要不要带日期？"),
    ("assistant", FILLER * 3),
    ("user", "明白了谢谢。"),
    ("assistant", FILLER * 3),
)


@dataclass
class RecordingSummarizer:
    """Wraps the extractive summarizer and remembers every call it got."""

    calls: list[tuple[SummarySections | None, tuple[SummaryMessage, ...]]] = field(
        default_factory=list
    )

    def summarize(
        self, previous: SummarySections | None, new_messages: Sequence[SummaryMessage]
    ) -> SummaryResult:
        self.calls.append((previous, tuple(new_messages)))
        return ExtractiveSummarizer().summarize(previous, new_messages)


class FailingSummarizer:
    def summarize(
        self, previous: SummarySections | None, new_messages: Sequence[SummaryMessage]
    ) -> SummaryResult:
        raise TimeoutError("model did not answer in time")


class Session:
    """Drives the processor through one session, persisting its state as JSON between events."""

    def __init__(self, ctx: ProcessorContext | None = None, session_id: str = "s1") -> None:
        self.processor = SummarizeProcessor()
        self.ctx = ctx or ProcessorContext()
        self.session_id = session_id
        self.state_json: str | None = None
        self.sent = 0
        self.snapshots: list[SummarySnapshotted] = []

    def say(self, messages: Sequence[tuple[str, str]]) -> None:
        for role, content in messages:
            self.sent += 1
            self.turn(f"m{self.sent}", role, content)

    def turn(self, message_id: str, role: str, content: str) -> None:
        event = TurnRecorded(
            event_id=f"turn-{message_id}", occurred_at=T0 + timedelta(minutes=self.sent),
            tenant_id="t1", user_id="u1", agent_id="a1", session_id=self.session_id,
            message_id=message_id, role=role, content=content, correlation_id=f"trace-{message_id}",
        )
        assert self._run(event) == []

    def request(self, request_id: str | None = None) -> list[SummarySnapshotted]:
        event = SummaryRequested(
            event_id=request_id or f"req-{self.sent}", occurred_at=T0 + timedelta(hours=1),
            tenant_id="t1", user_id="u1", agent_id="a1", session_id=self.session_id,
            correlation_id="trace-req",
        )
        out = self._run(event)
        assert all(isinstance(e, SummarySnapshotted) for e in out)
        self.snapshots.extend(out)  # type: ignore[arg-type]
        return out  # type: ignore[return-value]

    @property
    def user_state(self) -> UserSummaryState:
        assert self.state_json is not None
        return UserSummaryState.model_validate_json(self.state_json)

    @property
    def state(self) -> SessionSummaryState:
        return self.user_state.sessions[self.session_id]

    def _run(self, event: TurnRecorded | SummaryRequested | ForgetRequested) -> list:
        state = None if self.state_json is None else self.user_state
        state, out = self.processor.process(state, event, self.ctx)
        assert state is not None
        self.state_json = state.model_dump_json()
        return out


def chars(messages: Sequence[tuple[str, str]]) -> int:
    return sum(len(content) for _, content in messages)


def test_the_golden_conversations_have_the_sizes_the_cases_describe() -> None:
    assert len(FIRST_CONVERSATION) == 15 and chars(FIRST_CONVERSATION) >= 3000
    assert len(SECOND_CONVERSATION) == 7 and 1400 <= chars(SECOND_CONVERSATION) <= 1600
    assert len(THIRD_CONVERSATION) == 6 and 400 <= chars(THIRD_CONVERSATION) < 1000


def test_fifteen_messages_make_summary_v1_covering_all_of_them_with_five_sections() -> None:
    session = Session()
    session.say(FIRST_CONVERSATION)
    [v1] = session.request("req-1")
    assert (v1.version, v1.status, v1.error) == (1, "ok", "")
    assert (v1.range_start_message_id, v1.range_end_message_id) == ("m1", "m15")
    assert v1.source_message_count == 15 and v1.total_message_count == 15
    assert v1.source_message_ids == tuple(f"m{i}" for i in range(1, 16))
    for heading, name in SECTION_HEADINGS:
        assert getattr(v1.sections, name), f"{heading} is empty"
        assert f"[{heading}]" in v1.sections.render()
    assert len(SECTION_HEADINGS) == 5


def test_snapshot_ids_and_envelope_derive_from_the_request() -> None:
    session = Session()
    session.say(FIRST_CONVERSATION)
    [v1] = session.request("req-1")
    assert v1.summary_id == stable_id("t1", "u1", "s1", "summary", "1")
    assert v1.event_id == derive_id("req-1", "summarize", 0)
    assert v1.causation_ids == ("req-1",) and v1.correlation_id == "trace-req"
    assert v1.occurred_at == T0 + timedelta(hours=1)
    assert (v1.tenant_id, v1.user_id, v1.agent_id, v1.session_id) == ("t1", "u1", "a1", "s1")


def test_seven_long_messages_make_v2_from_v1_and_only_those_seven() -> None:
    recorder = RecordingSummarizer()
    session = Session(ProcessorContext(summarizer=recorder))
    session.say(FIRST_CONVERSATION)
    [v1] = session.request()
    session.say(SECOND_CONVERSATION)
    [v2] = session.request()
    previous, messages = recorder.calls[-1]
    assert previous == v1.sections
    assert [m.message_id for m in messages] == [f"m{i}" for i in range(16, 23)]
    assert (v2.version, v2.range_start_message_id, v2.range_end_message_id) == (2, "m16", "m22")
    assert v2.source_message_count == 7 and v2.total_message_count == 22
    assert v2.summary_id == stable_id("t1", "u1", "s1", "summary", "2")


def test_six_short_messages_after_a_snapshot_make_no_new_summary() -> None:
    session = Session()
    session.say(FIRST_CONVERSATION)
    session.request()
    session.say(SECOND_CONVERSATION)
    session.request()
    session.say(THIRD_CONVERSATION)
    assert session.request() == []
    assert [s.version for s in session.snapshots] == [1, 2]
    assert len(session.state.pending) == 6


def test_ten_new_short_messages_trigger_a_snapshot() -> None:
    session = Session()
    session.say(FIRST_CONVERSATION)
    session.request()
    session.say([("user", f"第{i}条简短的消息。") for i in range(10)])
    [v2] = session.request()
    assert v2.version == 2 and v2.source_message_count == 10


def test_nine_short_messages_after_a_snapshot_do_not_trigger() -> None:
    session = Session()
    session.say(FIRST_CONVERSATION)
    session.request()
    session.say([("user", f"第{i}条简短的消息。") for i in range(9)])
    assert session.request() == []


def test_the_same_trigger_delivered_twice_makes_one_snapshot() -> None:
    session = Session()
    session.say(FIRST_CONVERSATION)
    first = session.request("req-same")
    second = session.request("req-same")
    assert len(first) == 1 and second == []


def test_repeated_triggers_without_new_messages_do_nothing() -> None:
    session = Session()
    session.say(FIRST_CONVERSATION)
    session.request()
    assert all(session.request(f"again-{i}") == [] for i in range(5))
    assert len(session.snapshots) == 1


def test_no_first_summary_below_ten_messages_however_long() -> None:
    session = Session()
    session.say([("user", "我是Java后端开发。" + FILLER * 10)] * 9)
    assert session.request() == []
    session.say([("user", "我们的预算只有10万元。")])
    [v1] = session.request()
    assert v1.source_message_count == 10


def test_a_message_id_seen_twice_counts_once() -> None:
    session = Session()
    for i in range(9):
        session.turn(f"m{i}", "user", "我是Java后端开发。")
    session.turn("m0", "user", "我是Java后端开发。")
    assert session.state.total_message_count == 9
    assert session.request() == []


def test_a_phone_number_never_reaches_the_summarizer_or_the_summary() -> None:
    recorder = RecordingSummarizer()
    session = Session(ProcessorContext(summarizer=recorder))
    session.say(FIRST_CONVERSATION[:9])
    session.say([("user", "我的电话是13800138000，以后有事打给我。")])
    [v1] = session.request()
    seen = " ".join(m.content for m in recorder.calls[0][1])
    assert "13800138000" not in seen and "打给我" in seen
    assert "13800138000" not in v1.model_dump_json()


def test_a_failed_summary_is_recorded_and_the_next_trigger_retries() -> None:
    session = Session(ProcessorContext(summarizer=FailingSummarizer()))
    session.say(FIRST_CONVERSATION)
    [failed] = session.request("req-1")
    assert (failed.status, failed.version) == ("failed", 1)
    assert "TimeoutError" in failed.error and failed.summarizer == "llm"
    assert len(session.state.pending) == 15 and session.state.version == 0
    session.ctx = ProcessorContext()
    [ok] = session.request("req-2")
    assert (ok.status, ok.version, ok.source_message_count) == ("ok", 1, 15)
    assert ok.summary_id == failed.summary_id


def test_replaying_the_same_events_gives_identical_snapshots() -> None:
    runs = []
    for _ in range(2):
        session = Session()
        session.say(FIRST_CONVERSATION)
        session.request()
        session.say(SECOND_CONVERSATION)
        session.request()
        runs.append([s.model_dump() for s in session.snapshots])
    assert runs[0] == runs[1] and len(runs[0]) == 2


def test_one_user_state_keeps_sessions_apart() -> None:
    processor = SummarizeProcessor()
    base = dict(occurred_at=T0, tenant_id="t1", user_id="u1", agent_id="a1")
    a = TurnRecorded(**base, event_id="e1", session_id="s1", message_id="m1", role="user", content="hi there")
    b = TurnRecorded(**base, event_id="e2", session_id="s2", message_id="m1", role="user", content="hello again")
    assert processor.state_key(a) == processor.state_key(b) == "t1/u1"
    state, _ = processor.process(None, a, ProcessorContext())
    state, _ = processor.process(state, b, ProcessorContext())
    assert state is not None and set(state.sessions) == {"s1", "s2"}
    assert [m.content for m in state.sessions["s2"].pending] == ["hello again"]


def _forget(**fields: object) -> ForgetRequested:
    return ForgetRequested(event_id=f"forget-{len(fields)}", occurred_at=T0 + timedelta(hours=2),
                           tenant_id="t1", user_id="u1", **fields)  # type: ignore[arg-type]


def test_forget_everything_empties_what_the_next_summary_builds_on() -> None:
    session = Session(ProcessorContext())
    session.say(FIRST_CONVERSATION)
    (v1,) = session.request()
    session.say(SECOND_CONVERSATION[:3])
    session._run(_forget(everything=True))
    assert session.state.pending == [] and session.state.sections is None
    session.say(SECOND_CONVERSATION[3:] + THIRD_CONVERSATION)
    (v2,) = session.request()
    earlier = " ".join(c for _, c in FIRST_CONVERSATION + SECOND_CONVERSATION[:3])
    assert v2.version == v1.version + 1
    assert not any(item and item in earlier for item in _items(v2))


def test_forget_by_topic_drops_matching_pending_messages_and_items() -> None:
    session = Session(ProcessorContext(config=EngramConfig(summary=SummaryConfig(first_snapshot_messages=2))))
    session.say([("user", "我计划学习Rust编程语言"), ("user", "我喜欢喝咖啡，每天两杯")])
    session.request()
    assert any("咖啡" in item for item in _items(session.snapshots[-1]))
    session.say([("user", "我每天早上都喝咖啡提神")])
    session._run(_forget(topic_text="咖啡"))
    assert all("咖啡" not in m.content for m in session.state.pending)
    assert session.state.sections is not None and all("咖啡" not in item for item in _section_items(session.state.sections))


def _section_items(sections: SummarySections) -> list[str]:
    return [item for _, field in SECTION_HEADINGS for item in getattr(sections, field)]


def _items(snapshot: SummarySnapshotted) -> list[str]:
    return _section_items(snapshot.sections)


def test_small_thresholds_come_from_config() -> None:
    config = EngramConfig(summary=SummaryConfig(first_snapshot_messages=2, new_messages=2))
    session = Session(ProcessorContext(config=config))
    session.say(FIRST_CONVERSATION[:2])
    assert len(session.request()) == 1


# --- the extractive summarizer -------------------------------------------------------


def summarize(messages: Sequence[tuple[str, str]], previous: SummarySections | None = None,
              config: SummaryConfig | None = None) -> SummarySections:
    batch = [
        SummaryMessage(f"m{i}", role, text)  # type: ignore[arg-type]
        for i, (role, text) in enumerate(messages)
    ]
    return ExtractiveSummarizer(config).summarize(previous, batch).sections


def joined(items: Sequence[str]) -> str:
    return " | ".join(items)


def test_extractive_sections_sort_sentences_by_their_cues() -> None:
    s = summarize(FIRST_CONVERSATION)
    assert "Java后端开发" in joined(s.confirmed_facts)
    assert "微服务架构" in joined(s.confirmed_facts)
    assert "订单服务的接口" in joined(s.todo_items)
    assert "预算" in joined(s.user_constraints) and "云服务" in joined(s.user_constraints)
    assert s.open_questions == ("分布式事务选TCC还是Saga？",)
    assert s.current_topic == ("分布式事务选TCC还是Saga？",)


def test_a_question_the_assistant_answered_is_not_open() -> None:
    s = summarize(FIRST_CONVERSATION)
    assert "缓存一致性" not in joined(s.open_questions)


def test_a_hedged_reply_leaves_the_question_open() -> None:
    s = summarize(SECOND_CONVERSATION)
    assert any("RocketMQ" in q for q in s.open_questions)


def test_v2_keeps_v1_items_and_answers_v1_open_questions() -> None:
    v1 = summarize(FIRST_CONVERSATION)
    v2 = summarize(SECOND_CONVERSATION, previous=v1)
    assert "Java后端开发" in joined(v2.confirmed_facts)
    assert "Saga模式" in joined(v2.confirmed_facts)
    assert "压测方案" in joined(v2.todo_items)
    assert "TCC" not in joined(v2.open_questions)
    assert "预算" in joined(v2.user_constraints)


def test_chit_chat_does_not_replace_the_topic() -> None:
    v1 = summarize([("user", "我想学习Kubernetes的服务发现机制。")])
    v2 = summarize([("user", "好的谢谢。")], previous=v1)
    assert v2.current_topic == v1.current_topic


def test_english_conversations_fill_the_sections() -> None:
    s = summarize([
        ("user", "I'm a data engineer working on a Spark pipeline."),
        ("user", "The budget must stay under 500 dollars a month."),
        ("user", "I need to migrate the jobs to Airflow next week."),
        ("assistant", "Confirmed: we'll go with managed Airflow on two workers."),
        ("user", "Should we partition the table by day or by hour?"),
    ])
    assert "data engineer" in joined(s.confirmed_facts) and "Airflow" in joined(s.confirmed_facts)
    assert "budget" in joined(s.user_constraints)
    assert "migrate the jobs" in joined(s.todo_items)
    assert s.open_questions == ("Should we partition the table by day or by hour?",)


def test_sections_are_bounded_deduplicated_and_short() -> None:
    config = SummaryConfig(max_items_per_section=3, max_item_chars=20)
    facts = [("user", f"我喜欢第{i}号球队的比赛，每一场都会看完。") for i in range(6)]
    s = summarize(facts + [facts[-1]], config=config)
    assert len(s.confirmed_facts) == 3
    assert all(len(item) <= 20 for item in s.confirmed_facts)
    assert "第5号" in s.confirmed_facts[-1] and not any("第0号" in f for f in s.confirmed_facts)
    assert len(set(s.confirmed_facts)) == 3


def test_sentences_split_on_chinese_and_english_punctuation() -> None:
    assert split_sentences("我是开发。你好吗？Sure. Next one!") == ["我是开发。", "你好吗？", "Sure.", "Next one!"]


def test_state_persists_as_json_without_the_seen_cache_and_still_dedups() -> None:
    state = SessionSummaryState()
    assert state.record("m1", "user", "你好世界。")
    dumped = state.model_dump_json()
    assert "seen" not in dumped
    restored = SessionSummaryState.model_validate_json(dumped)
    assert not restored.record("m1", "user", "你好世界。")
    assert restored.record("m2", "user", "再来一条。") and restored.total_message_count == 2


def test_the_summary_holds_normalised_facts_without_assistant_filler() -> None:
    s = summarize([
        ("user", "I'm a backend engineer and I live in Berlin."),
        ("assistant", "Got it, I'll keep that in mind! Let me know if there's anything else."),
        ("user", "我不吃香菜"),
    ])
    assert "User is a backend engineer" in s.confirmed_facts and "User lives in Berlin" in s.confirmed_facts
    assert "用户不吃香菜" in s.confirmed_facts
    assert not any("keep that in mind" in item for section in (s.confirmed_facts, s.todo_items) for item in section)


def test_a_newer_statement_drops_the_item_it_supersedes() -> None:
    v1 = summarize([("user", "I love Go."), ("user", "I live in Toronto.")])
    assert "User loves Go" in v1.confirmed_facts
    v2 = summarize([("user", "Actually I don't like Go anymore, I prefer Rust."),
                    ("user", "I live in Vancouver now.")], previous=v1)
    facts = joined(v2.confirmed_facts)
    assert "User loves Go" not in facts and "Toronto" not in facts
    assert "User no longer likes Go" in facts and "User lives in Vancouver" in facts


def test_a_mention_note_is_no_draft_for_the_summarizer() -> None:
    """A third-person sentence is sorted by its cues as before the mention rule: not filed as a confirmed fact."""
    assert extract_drafts("user", "The Lisbon flat must be near a metro stop.")[0].content.startswith(
        "User mentioned: ")
    s = summarize([("user", "The Lisbon flat must be near a metro stop."),
                   ("user", "The report for Dana needs to go out by Friday."),
                   ("user", "The old lighthouse keeper repaints the stairs every spring.")])
    assert s.user_constraints == ("The Lisbon flat must be near a metro stop",)
    assert s.todo_items == ("The report for Dana needs to go out by Friday",)
    assert s.confirmed_facts == ()
