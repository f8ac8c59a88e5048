"""Session-6 ingest fast paths: the same results as the plain code they replaced."""

from __future__ import annotations

import random
import sqlite3
import time
from datetime import datetime, timedelta, timezone

import numpy as np

from bench.cpu_sampler import CpuSampler
from engram.core.config import DEFAULT_CONFIG
from engram.core.embedding import embed_text
from engram.projections.embedded_store import EmbeddedStore
from engram.schemas.base import stable_id
from engram.schemas.events import MemoryProposed
from engram.schemas.memory import Candidate, MemoryRecord, MemoryType, is_single_valued
from engram.streams.consolidate import ConsolidateProcessor, UserMemories, _find
from engram.streams.merge_rules import topics_match
from engram.streams.processor import ProcessorContext
from engram.streams.switch import parse_switch, switch_replaces

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _record(memory_id: str, version: int, content: str, status: str = "active") -> MemoryRecord:
    return MemoryRecord(memory_id=memory_id, tenant_id="t", user_id="u", agent_id="a", session_id="s", layer="L1", slot="user_fact",
                        type=MemoryType.USER_FACT, content=content, confidence=0.5, importance=0.5,
                        version=version, status=status, created_at=T0, updated_at=T0, last_seen_at=T0)  # type: ignore[arg-type]


def _rows(db: sqlite3.Connection) -> list[tuple[object, ...]]:
    return db.execute("SELECT memory_id, version, status, payload, vector, context FROM proj_memories "
                      "ORDER BY memory_id").fetchall()


def test_buffered_versions_of_a_memory_end_as_written_one_by_one() -> None:
    """Several versions of one memory between two flushes: the row is the one the version guard keeps
    when each version is flushed on its own (highest version; of equal versions, the first)."""
    rnd = random.Random(3)
    for _ in range(30):
        steps = [(f"m{rnd.randint(1, 3)}", rnd.randint(1, 5), f"text {rnd.randint(0, 9)}", rnd.random())
                 for _ in range(rnd.randint(1, 12))]
        batched, single = sqlite3.connect(":memory:"), sqlite3.connect(":memory:")
        stores = EmbeddedStore(batched, 4), EmbeddedStore(single, 4)
        for memory_id, version, content, x in steps:
            record, vector = _record(memory_id, version, content), np.array([x, 0, 0, 0], dtype=np.float32)
            for store in stores:
                store.upsert_memory("t", "u", record, vector, context=content)
            stores[1].flush()
        stores[0].flush()
        assert _rows(batched) == _rows(single), steps


def test_a_delete_between_buffered_versions_keeps_its_place() -> None:
    db = sqlite3.connect(":memory:")
    store = EmbeddedStore(db, 4)
    vector = np.ones(4, dtype=np.float32)
    store.upsert_memory("t", "u", _record("m", 3, "old"), vector)
    store.delete_memory("t", "u", "m")
    store.upsert_memory("t", "u", _record("m", 1, "again"), vector)  # a new memory under the same id
    store.flush()
    assert [(r[0], r[1]) for r in _rows(db)] == [("m", 1)]


def _find_by_loop(state: UserMemories, event: MemoryProposed, ctx: ProcessorContext) -> list[tuple[MemoryRecord, float]]:
    """`_find` as it was: one Python test per stored record."""
    candidate = event.candidate
    table = state.vectors(ctx.embedder).get(candidate.type)
    if table is None or not len(table):
        return []
    cosines = table.scores(embed_text(ctx.embedder, candidate.content))
    single = is_single_valued(candidate.slot)
    threshold = ctx.config.merge.find_cosine
    switch = parse_switch(candidate.content) is not None
    found = []
    for memory_id, cos in zip(table.ids, cosines.tolist()):
        record = state.memories[memory_id]
        if cos >= threshold or (single and record.slot == candidate.slot) or (
            candidate.topic and topics_match(record.topic, candidate.topic)
        ) or (switch and switch_replaces(candidate, record)):
            found.append((record, cos))
    found.sort(key=lambda pair: (-pair[1], pair[0].memory_id))
    return found


def _proposal(n: int, content: str, topic: str | None = None) -> MemoryProposed:
    candidate = Candidate(type=MemoryType.USER_FACT, content=content, confidence=0.8, topic=topic,
                          source_message_ids=(f"m{n}",))
    return MemoryProposed(event_id=stable_id("p", str(n)), occurred_at=T0 + timedelta(minutes=n), tenant_id="t",
                          user_id="u", agent_id="a", session_id="s", candidate=candidate, importance=0.5)


WORDS = "I have a dog cat named Rex in Paris work at bank 我 有 一只 狗 在 北京 工作 银行".split()


def test_cosine_only_find_matches_the_record_loop_at_every_threshold() -> None:
    rnd = random.Random(11)
    state: UserMemories | None = None
    processor, ctx = ConsolidateProcessor(), ProcessorContext()
    for n in range(60):
        text = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(2, 6)))
        state, _ = processor.process(state, _proposal(n, text), ctx)
    assert state is not None and len(state.memories) > 5
    probes = [_proposal(1000 + i, " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, 6)))) for i in range(40)]
    table = state.vectors(ctx.embedder)[MemoryType.USER_FACT]
    # thresholds exactly at stored float32 cosines (the boundary case), and just beside them
    exact = [float(c) for p in probes[:5] for c in table.scores(embed_text(ctx.embedder, p.candidate.content))[:3]]
    thresholds = [0.0, 0.3, 0.55, 0.9, *exact, *(np.nextafter(x, 2.0) for x in exact)]
    for threshold in thresholds:
        merge = DEFAULT_CONFIG.merge.model_copy(update={"find_cosine": float(threshold)})
        at = ProcessorContext(config=DEFAULT_CONFIG.model_copy(update={"merge": merge}), embedder=ctx.embedder)
        for probe in probes:
            assert probe.candidate.topic is None and parse_switch(probe.candidate.content) is None
            assert _find(state, probe, at) == _find_by_loop(state, probe, at), (threshold, probe.candidate.content)


def test_cpu_sampler_finds_where_the_cpu_went() -> None:
    def busy_here() -> int:
        total, end = 0, time.process_time() + 0.3
        while time.process_time() < end:
            total += sum(range(200))
        return total

    with CpuSampler(interval=0.002) as sampler:
        busy_here()
    assert sampler.samples >= 10
    assert sampler.share("busy_here") > 0.8
    assert sampler.share("no_such_function") == 0.0
    assert "busy_here" in sampler.report(top=5)
