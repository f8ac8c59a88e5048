"""Events -> analytics rows, in the column order of `deploy/clickhouse/schema.sql`.

Pure functions, one per event type; each returns `(table, row)` pairs. Free
text (turn content, memory content, questions, remarks, errors, raw dead
letters) goes through `engram.core.pii.redact`, so no secret reaches a row.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

from engram.core.pii import redact
from engram.core.text_caches import registered
from engram.schemas.base import Event
from engram.schemas.events import (
    DeadLettered, ErasureRecorded, FeedbackGiven, GuardFired, LLMCallRecorded, MemoryChanged, MemoryProposed, RecallServed,
    SummarySnapshotted, TurnRecorded, TurnSkipped,
)
from engram.schemas.memory import MemoryRecord

Row = tuple[Any, ...]
Rows = list[tuple[str, Row]]

COLUMNS: dict[str, tuple[str, ...]] = {
    "event_log": ("event_id", "type", "schema_version", "occurred_at", "tenant_id", "user_id",
                  "causation_ids", "correlation_id"),
    "turns": ("event_id", "occurred_at", "tenant_id", "user_id", "agent_id", "session_id", "message_id",
              "parent_id", "role", "content", "content_chars", "redacted", "metadata", "correlation_id"),
    "skipped_turns": ("event_id", "occurred_at", "tenant_id", "user_id", "session_id", "message_id", "role",
                      "reason", "causation_ids"),
    "memory_proposals": ("event_id", "occurred_at", "tenant_id", "user_id", "agent_id", "session_id",
                         "memory_type", "slot", "topic", "negated", "content", "confidence", "importance",
                         "extractor", "source_message_ids", "causation_ids", "correlation_id"),
    "memory_changes": (
        "event_id", "occurred_at", "tenant_id", "user_id", "memory_id", "change", "relation", "judge", "reason",
        "memory_type", "layer", "slot", "topic", "agent_id", "session_id",
        "before_status", "after_status", "before_content", "after_content", "before_version", "after_version",
        "before_confidence", "after_confidence", "before_importance", "after_importance",
        "before_source_count", "after_source_count", "before_pinned", "after_pinned",
        "before_conflict_with", "after_conflict_with", "source_message_ids", "source_event_ids",
        "memory_created_at", "causation_ids", "correlation_id"),
    "summary_snapshots": (
        "event_id", "occurred_at", "tenant_id", "user_id", "agent_id", "session_id", "summary_id", "version",
        "range_start_message_id", "range_end_message_id", "source_message_count", "total_message_count",
        "source_message_ids", "current_topic", "confirmed_facts", "todo_items", "user_constraints",
        "open_questions", "latency_ms", "status", "error", "summarizer", "causation_ids"),
    "guard_audit": ("event_id", "occurred_at", "tenant_id", "user_id", "session_id", "message_id", "rule",
                    "action", "memory_type", "original_sha256", "detail", "causation_ids"),
    "recalls": (
        "event_id", "occurred_at", "tenant_id", "user_id", "agent_id", "session_id", "message_id", "recall_id",
        "question", "memory_enabled", "memory_injected", "retrieved_count", "injected_count", "retrieved_ids",
        "injected_ids", "retrieval_latency_ms", "context_build_latency_ms", "recent_message_count",
        "long_term_count", "global_count", "summary_present", "top_relevance", "avg_relevance",
        "deadline_exceeded", "correlation_id"),
    "feedback": ("event_id", "occurred_at", "tenant_id", "user_id", "recall_id", "rating", "reason", "remark",
                 "causation_ids"),
    "llm_calls": ("event_id", "occurred_at", "tenant_id", "user_id", "agent_id", "session_id", "processor",
                  "task", "model", "attempt", "outcome", "tokens_in", "tokens_out", "latency_ms", "error",
                  "dropped_items", "causation_ids", "correlation_id"),
    "dead_letters": ("event_id", "occurred_at", "tenant_id", "user_id", "source_topic", "reason", "raw",
                     "raw_chars", "raw_sha256", "causation_ids"),
    "erasures": ("event_id", "occurred_at", "tenant_id", "user_id", "request_id", "scope", "requested_by",
                 "memories_erased", "memory_ids", "keys_destroyed", "causation_ids"),
}
"""Fact tables and their insert columns (the DDL's column order)."""


@registered
@lru_cache(maxsize=16_384)
def clean(text: str) -> str:
    """Redacted text. Cached: memory contents and reasons repeat across before/after and changes."""
    return redact(text).text if text else text


def _turn(e: TurnRecorded) -> Rows:
    red = redact(e.content)
    meta = {k: clean(v) for k, v in e.metadata.items()}
    return [("turns", (e.event_id, e.occurred_at, e.tenant_id, e.user_id, e.agent_id, e.session_id,
                       e.message_id, e.parent_id or "", e.role, red.text, len(e.content), red.changed, meta,
                       e.correlation_id))]


def _skipped(e: TurnSkipped) -> Rows:
    return [("skipped_turns", (e.event_id, e.occurred_at, e.tenant_id, e.user_id, e.session_id, e.message_id,
                               e.role, e.reason, e.causation_ids))]


def _proposed(e: MemoryProposed) -> Rows:
    c = e.candidate
    return [("memory_proposals", (
        e.event_id, e.occurred_at, e.tenant_id, e.user_id, e.agent_id, e.session_id, c.type.value, c.slot,
        c.topic or "", c.negated, clean(c.content), c.confidence, e.importance, e.extractor,
        c.source_message_ids, e.causation_ids, e.correlation_id))]


def _side(r: MemoryRecord | None) -> Row:
    """status, content, version, confidence, importance, source_count, pinned, conflict_with."""
    if r is None:
        return ("", "", 0, 0.0, 0.0, 0, False, ())
    return (r.status, clean(r.content), r.version, r.confidence, r.importance, r.source_count, r.pinned,
            r.conflict_with)


def _changed(e: MemoryChanged) -> Rows:
    ref = e.after or e.before
    b, a = _side(e.before), _side(e.after)
    ident: Row = (
        (ref.type.value, ref.layer, ref.slot, ref.topic or "", ref.agent_id, ref.session_id) if ref
        else ("", "", "", "", "", ""))
    sources: Row = ((ref.source_message_ids, ref.source_event_ids, ref.created_at) if ref
                    else ((), (), e.occurred_at))
    paired = tuple(x for pair in zip(b, a) for x in pair)
    return [("memory_changes", (
        e.event_id, e.occurred_at, e.tenant_id, e.user_id, e.memory_id, e.change, e.relation, e.judge,
        clean(e.reason), *ident, *paired, *sources, e.causation_ids, e.correlation_id))]


def _summary(e: SummarySnapshotted) -> Rows:
    s = e.sections
    sections = tuple(tuple(clean(x) for x in items) for items in (
        s.current_topic, s.confirmed_facts, s.todo_items, s.user_constraints, s.open_questions))
    return [("summary_snapshots", (
        e.event_id, e.occurred_at, e.tenant_id, e.user_id, e.agent_id, e.session_id, e.summary_id, e.version,
        e.range_start_message_id, e.range_end_message_id, e.source_message_count, e.total_message_count,
        e.source_message_ids, *sections, e.latency_ms, e.status, clean(e.error), e.summarizer,
        e.causation_ids))]


def _guard(e: GuardFired) -> Rows:
    return [("guard_audit", (e.event_id, e.occurred_at, e.tenant_id, e.user_id, e.session_id, e.message_id,
                             e.rule, e.action, e.memory_type, e.original_sha256, clean(e.detail),
                             e.causation_ids))]


def _recall(e: RecallServed) -> Rows:
    return [("recalls", (
        e.event_id, e.occurred_at, e.tenant_id, e.user_id, e.agent_id, e.session_id, e.message_id, e.recall_id,
        clean(e.question), e.memory_enabled, e.memory_injected, e.retrieved_count, e.injected_count,
        e.retrieved_ids, e.injected_ids, e.retrieval_latency_ms, e.context_build_latency_ms,
        e.recent_message_count, e.long_term_count, e.global_count, e.summary_present, e.top_relevance,
        e.avg_relevance, e.deadline_exceeded, e.correlation_id))]


def _feedback(e: FeedbackGiven) -> Rows:
    return [("feedback", (e.event_id, e.occurred_at, e.tenant_id, e.user_id, e.recall_id, e.rating,
                          clean(e.reason), clean(e.remark), e.causation_ids))]


def _llm(e: LLMCallRecorded) -> Rows:
    return [("llm_calls", (
        e.event_id, e.occurred_at, e.tenant_id, e.user_id, e.agent_id, e.session_id, e.processor, e.task,
        e.model, e.attempt, e.outcome, e.tokens_in, e.tokens_out, e.latency_ms, clean(e.error),
        e.dropped_items, e.causation_ids, e.correlation_id))]


def _dead(e: DeadLettered) -> Rows:
    digest = hashlib.sha256(e.raw.encode("utf-8", "surrogatepass")).hexdigest()
    return [("dead_letters", (e.event_id, e.occurred_at, e.tenant_id, e.user_id, e.source_topic,
                              clean(e.reason), clean(e.raw), len(e.raw), digest, e.causation_ids))]


def _erasure(e: ErasureRecorded) -> Rows:
    return [("erasures", (e.event_id, e.occurred_at, e.tenant_id, e.user_id, e.request_id, e.scope,
                          e.requested_by, e.memories_erased, e.memory_ids, e.keys_destroyed, e.causation_ids))]


ROW_BUILDERS: dict[str, Callable[[Any], Rows]] = {
    "TurnRecorded": _turn, "TurnSkipped": _skipped, "MemoryProposed": _proposed, "MemoryChanged": _changed,
    "SummarySnapshotted": _summary, "GuardFired": _guard, "RecallServed": _recall,
    "FeedbackGiven": _feedback, "LLMCallRecorded": _llm, "DeadLettered": _dead, "ErasureRecorded": _erasure,
}
"""Event type -> builder of its fact rows. Every event also gets one `event_log` row."""


def rows_for(event: Event) -> Rows:
    """All analytics rows of one event: its `event_log` row and its fact rows."""
    rows: Rows = [("event_log", (event.event_id, event.type, event.schema_version, event.occurred_at,
                                 event.tenant_id, event.user_id, event.causation_ids, event.correlation_id))]
    build = ROW_BUILDERS.get(event.type)
    if build is not None:
        rows.extend(build(event))
    return rows


def rows_for_all(events: Iterable[Event]) -> Rows:
    return [row for event in events for row in rows_for(event)]
