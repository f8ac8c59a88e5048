"""Seeded events with answers computed here, in plain Python, independently of ClickHouse."""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone

from engram.schemas.base import Event, derive_id
from engram.schemas.events import FeedbackGiven, MemoryChanged, RecallServed
from engram.schemas.memory import MemoryRecord, MemoryType

T0 = datetime(2026, 2, 27, 8, 0, tzinfo=timezone.utc)  # spans a month boundary (two partitions)
AGENTS = ("coder", "planner", "tutor")
BAD_REASONS = ("irrelevant", "outdated", "wrong person", "")


def percentile(values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default method)."""
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


@dataclass
class RecallSeed:
    """Recalls and feedback for three agents, and what the shipped SQL must answer."""

    events: list[Event] = field(default_factory=list)
    totals: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    retrievals: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    relevance: dict[str, list[tuple[float, float]]] = field(default_factory=lambda: defaultdict(list))
    enabled: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    enabled_empty: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    final_verdict: dict[str, tuple[str, int, str]] = field(default_factory=dict)

    def bad_reasons(self) -> dict[tuple[str, str], int]:
        counts: dict[tuple[str, str], int] = defaultdict(int)
        for agent, rating, reason in self.final_verdict.values():
            if rating == 2:
                counts[(agent, reason or "(no reason)")] += 1
        return dict(counts)


def seed_recalls(n: int = 240, seed: int = 11, tenant: str = "t1") -> RecallSeed:
    rnd = random.Random(seed)
    out = RecallSeed()
    for i in range(n):
        agent = AGENTS[i % 3] if i % 7 else AGENTS[0]
        event = _recall(rnd, i, agent, tenant)
        out.events.append(event)
        _expect_recall(out, event)
        _feedback(rnd, out, event)
    return out


def _recall(rnd: random.Random, i: int, agent: str, tenant: str) -> RecallServed:
    enabled = rnd.random() > 0.1
    long_term = rnd.choice((0, 0, 1, 2, 3, 5)) if enabled else 0
    scores = [round(rnd.uniform(0.2, 0.95), 4) for _ in range(long_term)]
    injected = long_term + (1 if enabled and rnd.random() < 0.3 else 0)
    rid = derive_id("seed-recall", "test", i)
    return RecallServed(
        event_id=rid, recall_id=rid, occurred_at=T0 + timedelta(hours=i), tenant_id=tenant,
        user_id=f"u{i % 5}", agent_id=agent, session_id=f"s{i % 11}", message_id=f"m{i}",
        question=f"question {i}?", memory_enabled=enabled, memory_injected=injected > 0,
        retrieved_count=injected + rnd.randint(0, 3), injected_count=injected,
        retrieved_ids=tuple(f"mem{j}" for j in range(injected)), injected_ids=tuple(f"mem{j}" for j in range(injected)),
        retrieval_latency_ms=round(rnd.lognormvariate(1.0, 0.6), 3),
        context_build_latency_ms=round(rnd.uniform(0.05, 2.0), 3), recent_message_count=rnd.randint(0, 10),
        long_term_count=long_term, global_count=injected - long_term, summary_present=rnd.random() < 0.4,
        top_relevance=max(scores, default=0.0), avg_relevance=sum(scores) / len(scores) if scores else 0.0,
        deadline_exceeded=rnd.random() < 0.05,
    )


def _expect_recall(out: RecallSeed, e: RecallServed) -> None:
    out.totals[e.agent_id].append(e.retrieval_latency_ms + e.context_build_latency_ms)
    out.retrievals[e.agent_id].append(e.retrieval_latency_ms)
    if e.memory_enabled:
        out.enabled[e.agent_id] += 1
        out.enabled_empty[e.agent_id] += not e.memory_injected
        if e.long_term_count:
            out.relevance[e.agent_id].append((e.avg_relevance, e.top_relevance))


def _feedback(rnd: random.Random, out: RecallSeed, recall: RecallServed) -> None:
    """0-3 verdicts per recall; the latest one counts."""
    for k in range(rnd.choice((0, 0, 1, 1, 2, 3))):
        rating = rnd.choice((0, 1, 2, 2))
        reason = rnd.choice(BAD_REASONS) if rating == 2 else ""
        out.events.append(FeedbackGiven(
            event_id=derive_id(recall.event_id, "feedback", k), occurred_at=recall.occurred_at + timedelta(minutes=k + 1),
            tenant_id=recall.tenant_id, user_id=recall.user_id, causation_ids=(recall.event_id,),
            recall_id=recall.recall_id, rating=rating, reason=reason, remark=f"remark {k}"))
        out.final_verdict[recall.recall_id] = (recall.agent_id, rating, reason)


# -- memory changes -----------------------------------------------------------------------
def record(memory_id: str, mtype: MemoryType, at: datetime, content: str, version: int = 1,
           status: str = "active") -> MemoryRecord:
    return MemoryRecord(memory_id=memory_id, tenant_id="t1", user_id="u1", type=mtype, slot=mtype.value,
                        content=content, confidence=0.9, importance=0.5, status=status,  # type: ignore[arg-type]
                        created_at=at, updated_at=at, last_seen_at=at, version=version)


def change(i: int, memory_id: str, kind: str, before: MemoryRecord | None, after: MemoryRecord | None,
           at: datetime, relation: str = "new") -> MemoryChanged:
    return MemoryChanged(event_id=derive_id("seed-change", "test", i), occurred_at=at, tenant_id="t1", user_id="u1",
                         memory_id=memory_id, change=kind, before=before, after=after,  # type: ignore[arg-type]
                         relation=relation, judge="rule", reason="seeded")  # type: ignore[arg-type]


def seed_changes(days: int = 6, seed: int = 5) -> list[MemoryChanged]:
    """Random creates, reinforcements, replacements, deletions and discards over several days."""
    rnd = random.Random(seed)
    types = (MemoryType.USER_PREFERENCE, MemoryType.USER_FACT, MemoryType.ASSISTANT_PLAN)
    live: dict[str, MemoryRecord] = {}
    events: list[MemoryChanged] = []
    for step in range(days * 12):
        at = T0 + timedelta(hours=2 * step)
        pick = rnd.random()
        if not live or pick < 0.4:
            mid = f"mem{step}"
            live[mid] = record(mid, rnd.choice(types), at, f"content {step}")
            events.append(change(step, mid, "created", None, live[mid], at))
            continue
        mid = rnd.choice(sorted(live))
        old = live[mid]
        if pick < 0.6:
            live[mid] = old.model_copy(update={"version": old.version + 1, "source_count": old.source_count + 1})
            events.append(change(step, mid, "reinforced", old, live[mid], at, "same"))
        elif pick < 0.75:
            gone = live.pop(mid).model_copy(update={"status": "replaced", "version": old.version + 1})
            events.append(change(step, mid, "replaced", old, gone, at, "replace"))
        elif pick < 0.88:
            live.pop(mid)
            events.append(change(step, mid, "deleted", old, None, at, "user"))
        else:
            events.append(change(step, f"never{step}", "discarded", old, None, at, "skip"))
    return events


def expected_growth(events: list[MemoryChanged]) -> dict[tuple[str, date], tuple[int, int]]:
    """(type, day) -> (created that day, active memories of that type at the end of the day), by folding."""
    created: dict[tuple[str, date], int] = defaultdict(int)
    for e in events:
        ref = e.after or e.before
        assert ref is not None
        created[(ref.type.value, e.occurred_at.date())] += e.change == "created"
    return {key: (n, _active_at_end(events, *key)) for key, n in created.items()}


def _active_at_end(events: list[MemoryChanged], mtype: str, day: date) -> int:
    status: dict[str, bool] = {}
    for e in sorted(events, key=lambda e: e.occurred_at):
        if e.occurred_at.date() > day or e.change == "discarded":
            continue
        ref = e.after or e.before
        if ref is not None and ref.type.value == mtype:
            status[e.memory_id] = e.after is not None and e.after.status == "active"
    return sum(status.values())
