"""Consolidation on its own: find -> filter -> judge -> apply, and user controls."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from engram.core.ports import Judgement
from engram.schemas.base import stable_id
from engram.schemas.events import ForgetRequested, MemoryChanged, MemoryProposed, PinRequested, CorrectionRequested
from engram.schemas.memory import Candidate, MemoryRecord, MemoryType
from engram.streams.consolidate import ConsolidateProcessor, UserMemories
from engram.streams.processor import ProcessorContext

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
CTX = ProcessorContext()
PROC = ConsolidateProcessor()


def _proposal(n: int, content: str, memory_type: MemoryType = MemoryType.USER_PREFERENCE, *,
              attribute: str | None = None, topic: str | None = None, negated: bool = False,
              confidence: float = 0.8, importance: float = 0.5) -> MemoryProposed:
    candidate = Candidate(type=memory_type, attribute=attribute, content=content, confidence=confidence,
                          topic=topic, negated=negated, source_message_ids=(f"m{n}",))
    return MemoryProposed(event_id=stable_id("p", str(n)), occurred_at=T0 + timedelta(hours=n),
                          tenant_id="t", user_id="u", agent_id="a", session_id="s",
                          candidate=candidate, importance=importance)


def _run(events, ctx: ProcessorContext = CTX) -> tuple[UserMemories, list[MemoryChanged]]:
    state, out = None, []
    for event in events:
        state, produced = PROC.process(state, event, ctx)
        out.extend(produced)
    return state, out  # type: ignore[return-value]


def test_first_candidate_creates_a_memory_with_provenance() -> None:
    state, changes = _run([_proposal(1, "用户喜欢猫", topic="猫")])
    assert [c.change for c in changes] == ["created"]
    record = changes[0].after
    assert record is not None and record.source_message_ids == ("m1",) and record.layer == "L3"  # a user preference is a standing-profile entry
    assert changes[0].causation_ids == (stable_id("p", "1"),)
    assert list(state.memories) == [record.memory_id]


def test_exact_repeat_reinforces_instead_of_inserting() -> None:
    state, changes = _run([_proposal(i, "用户不吃香菜", topic="香菜", negated=True) for i in (1, 2, 3)])
    assert [c.change for c in changes] == ["created", "reinforced", "reinforced"]
    (record,) = state.memories.values()
    assert record.source_count == 3 and record.importance > 0.5
    assert record.source_message_ids == ("m1", "m2", "m3")
    assert record.last_seen_at == T0 + timedelta(hours=3)


def test_single_valued_slot_replaces_and_records_before_after() -> None:
    state, changes = _run([
        _proposal(1, "用户是后端开发", MemoryType.USER_PROFILE, attribute="occupation"),
        _proposal(2, "用户是前端开发", MemoryType.USER_PROFILE, attribute="occupation"),
    ])
    assert [c.change for c in changes] == ["created", "replaced", "created"]
    replaced = changes[1]
    assert replaced.before is not None and replaced.before.status == "active"
    assert replaced.after is not None and replaced.after.status == "replaced"
    assert replaced.relation == "replace" and replaced.judge == "rule" and replaced.reason
    (active,) = state.memories.values()
    assert "前端" in active.content and active.layer == "L3"


def test_reversal_of_a_topic_replaces_the_old_stance() -> None:
    state, _ = _run([
        _proposal(1, "用户喜欢Java", topic="java"),
        _proposal(2, "用户喜欢Python", topic="python"),
        _proposal(3, "用户不喜欢Java", topic="java", negated=True),
    ])
    contents = sorted(m.content for m in state.memories.values())
    assert contents == ["用户不喜欢Java", "用户喜欢Python"]


def test_tentative_reversal_is_kept_as_a_linked_conflict() -> None:
    state, changes = _run([
        _proposal(1, "User likes coffee", topic="coffee", confidence=0.9),
        _proposal(2, "User maybe does not like coffee", topic="coffee", negated=True, confidence=0.3),
    ])
    assert len(state.memories) == 2
    new = next(m for m in state.memories.values() if m.negated)
    old = next(m for m in state.memories.values() if not m.negated)
    assert new.conflict_with == (old.memory_id,) and old.conflict_with == (new.memory_id,)
    assert {c.relation for c in changes[1:]} == {"conflict"}


def test_containment_keeps_the_more_specific_text() -> None:
    state, changes = _run([_proposal(1, "用户喜欢Java", topic="java"), _proposal(2, "用户喜欢Java编程", topic="java编程")])
    (record,) = state.memories.values()
    assert record.content == "用户喜欢Java编程" and changes[-1].change == "updated"


def test_unrelated_types_never_merge() -> None:
    state, _ = _run([_proposal(1, "用户喜欢Java", topic="java"),
                     _proposal(2, "用户喜欢Java", MemoryType.USER_GOAL)])
    assert len(state.memories) == 2


class _AlwaysAppend:
    def __init__(self) -> None:
        self.calls = 0

    def judge(self, candidate: Candidate, existing: MemoryRecord) -> Judgement | None:
        self.calls += 1
        return Judgement("append", "complementary detail", "llm")


def test_model_judge_is_asked_only_when_rules_cannot_decide() -> None:
    judge = _AlwaysAppend()
    ctx = ProcessorContext(judge=judge)
    _, changes = _run([
        _proposal(1, "User works on payment systems at a bank"),
        _proposal(2, "User works on payment systems for card fraud"),
        _proposal(3, "User works on payment systems at a bank"),
    ], ctx)
    assert judge.calls == 1
    assert changes[1].relation == "append" and changes[1].judge == "llm"
    assert changes[2].change == "reinforced" and changes[2].judge == "rule"


def test_processing_is_deterministic() -> None:
    events = [_proposal(i, text, topic=topic) for i, (text, topic) in
              enumerate([("用户喜欢猫", "猫"), ("用户喜欢狗", "狗"), ("用户不喜欢猫", "猫")])]
    first = _run(events)
    second = _run(events)
    assert first[1] == second[1] and first[0].memories == second[0].memories


def _command(cls, n: int, **fields):
    return cls(event_id=stable_id("cmd", str(n)), occurred_at=T0 + timedelta(days=1, hours=n),
               tenant_id="t", user_id="u", **fields)


def test_forget_pin_and_correct() -> None:
    state, changes = _run([_proposal(1, "用户喜欢猫", topic="猫"), _proposal(2, "用户住在上海", MemoryType.USER_FACT,
                                                                     attribute="location")])
    cat = next(m for m in state.memories.values() if "猫" in m.content)
    state, pinned = PROC.process(state, _command(PinRequested, 1, memory_id=cat.memory_id), CTX)
    assert pinned[0].change == "pinned" and state.memories[cat.memory_id].pinned
    state, corrected = PROC.process(state, _command(CorrectionRequested, 2, memory_id=cat.memory_id,
                                                    content="用户喜欢橘猫"), CTX)
    assert corrected[0].after is not None and corrected[0].after.content == "用户喜欢橘猫"
    state, forgotten = PROC.process(state, _command(ForgetRequested, 3, topic_text="猫"), CTX)
    assert [c.change for c in forgotten] == ["deleted"] and len(state.memories) == 1
    state, everything = PROC.process(state, _command(ForgetRequested, 4, everything=True), CTX)
    assert len(everything) == 1 and state.memories == {}


def test_opposite_stances_on_overlapping_topics_are_linked_as_a_conflict() -> None:
    state, changes = _run([
        _proposal(1, "用户喜欢看中文电影", topic="看中文电影"),
        _proposal(2, "用户不喜欢看电影", topic="看电影", negated=True),
    ])
    assert [c.relation for c in changes] == ["new", "conflict", "conflict"]
    old, new = sorted(state.memories.values(), key=lambda r: r.created_at)
    assert old.conflict_with == (new.memory_id,) and new.conflict_with == (old.memory_id,)
    assert old.status == new.status == "active"


def test_the_same_value_said_again_in_a_single_valued_slot_reinforces() -> None:
    state, changes = _run([
        _proposal(1, "User is vegetarian", MemoryType.USER_CONSTRAINT, attribute="diet", topic="diet"),
        _proposal(2, "User is vegetarian", MemoryType.USER_CONSTRAINT, attribute="diet", topic="diet"),
        _proposal(3, "User is vegan", MemoryType.USER_CONSTRAINT, attribute="diet", topic="diet"),
    ])
    assert [c.change for c in changes] == ["created", "reinforced", "replaced", "created"]
    (record,) = state.memories.values()
    assert record.content == "User is vegan"
