"""One event of every kind the analytics store, with secrets planted in every free-text field."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from engram.schemas.base import Event, derive_id
from engram.schemas.events import (
    DeadLettered, FeedbackGiven, GlobalCardDeleted, GuardFired, LLMCallRecorded, MemoryChanged, MemoryProposed,
    RecallServed, SummaryRequested, SummarySnapshotted, TurnRecorded, TurnSkipped,
)
from engram.schemas.memory import Candidate, MemoryType, SummarySections

from .seed import record

T = datetime(2026, 3, 31, 23, 59, tzinfo=timezone.utc)
PHONE, EMAIL, PASSWORD = "13812345678", "alice.secret@example.com", "hunter2pass"
API_KEY = "sk-abcdef1234567890abcdef1234567890"
SECRETS = (PHONE, EMAIL, PASSWORD, API_KEY)
LEAKY = f"call {PHONE} or mail {EMAIL}, password: {PASSWORD}, key {API_KEY}"


def _env(n: int, at: datetime = T, causes: tuple[str, ...] = ()) -> dict[str, object]:
    return {"event_id": derive_id("sample", "test", n), "occurred_at": at, "tenant_id": "t1", "user_id": "u1",
            "causation_ids": causes, "correlation_id": "trace-1"}


def every_kind() -> list[Event]:
    turn = TurnRecorded(**_env(1), agent_id="a1", session_id="s1", message_id="m1", role="user",  # type: ignore[arg-type]
                        content=LEAKY, metadata={"note": f"my password is {PASSWORD}", "k": "v"})
    cause = (turn.event_id,)
    later = T + timedelta(days=1)  # next month: a second partition
    mem = record("mem-1", MemoryType.USER_FACT, T, f"lives near {EMAIL}")
    sections = SummarySections(current_topic=(LEAKY,), confirmed_facts=("likes tea",))
    return [
        turn,
        TurnSkipped(**_env(2, causes=cause), session_id="s1", message_id="m1", role="user", reason="chit_chat"),  # type: ignore[arg-type]
        GuardFired(**_env(3, causes=cause), session_id="s1", message_id="m1", rule="pii.phone",  # type: ignore[arg-type]
                   action="redacted", original_sha256="ab" * 32, memory_type="user_fact", detail=LEAKY),
        MemoryProposed(**_env(4, causes=cause), agent_id="a1", session_id="s1", importance=0.5,  # type: ignore[arg-type]
                       candidate=Candidate(type=MemoryType.USER_FACT, content=LEAKY, confidence=0.8,
                                           source_message_ids=("m1",))),
        MemoryChanged(**_env(5, causes=(derive_id("sample", "test", 4),)), memory_id="mem-1",  # type: ignore[arg-type]
                      change="created", after=mem, relation="new", judge="rule", reason=LEAKY),
        SummaryRequested(**_env(6), agent_id="a1", session_id="s1"),  # type: ignore[arg-type]
        SummarySnapshotted(**_env(7), agent_id="a1", session_id="s1", summary_id="sum-1", version=1,  # type: ignore[arg-type]
                           range_start_message_id="m1", range_end_message_id="m1", source_message_count=1,
                           total_message_count=1, source_message_ids=("m1",), sections=sections, error=LEAKY),
        RecallServed(**_env(8, at=later), recall_id="r1", agent_id="a1", session_id="s1", question=LEAKY,  # type: ignore[arg-type]
                     memory_injected=True, retrieved_count=2, injected_count=1, retrieved_ids=("mem-1", "x"),
                     injected_ids=("mem-1",), retrieval_latency_ms=1.5, context_build_latency_ms=0.25,
                     recent_message_count=4, long_term_count=1, summary_present=True, top_relevance=0.9,
                     avg_relevance=0.9),
        FeedbackGiven(**_env(9, at=later), recall_id="r1", rating=2, reason=LEAKY, remark=LEAKY),  # type: ignore[arg-type]
        LLMCallRecorded(**_env(10, causes=cause), agent_id="a1", session_id="s1", processor="extract",  # type: ignore[arg-type]
                        task="extract", model="qwen-plus", attempt=2, outcome="retried", tokens_in=120,
                        tokens_out=30, latency_ms=812.5, error=LEAKY, dropped_items=1),
        DeadLettered(**_env(11), source_topic="engram.turns", reason=LEAKY, raw=LEAKY),  # type: ignore[arg-type]
        GlobalCardDeleted(**_env(12), card_id="card-1"),  # type: ignore[arg-type]
    ]
