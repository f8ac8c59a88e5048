"""The recall deadline: parts on a bounded pool, assembled from what is ready (recall/deadline.py).

A store double (of our own MemoryStore port) blocks chosen reads on an Event: the deadline passes,
the recall returns with the other parts and names the missed ones; nothing here asserts speed.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engram.core.config import EngramConfig
from engram.recall.deadline import PARTS, RecallPool
from engram.recall.service import RecallRequest, RecallResult, RecallService
from engram.runtime.engine import EmbeddedRuntime
from engram.runtime_port import with_deadline
from tests.drivers import T0, user_turns

FACTS = ("I prefer green tea in the morning", "My name is Ana Lima", "I work as a nurse in Lisbon",
         "I love hiking in the mountains on weekends", "I live in Porto", "I don't like coffee at all")
PATIENT = 3000.0
"""ms: ample for the unblocked reads on a loaded machine; a blocked read waits this long, once."""
READS = {"cards": "list_cards", "memories": "search_memories", "summary": "latest_summary",
         "recent": "recent_turns", "known": "has_user"}


class BlockingStore:
    """Our MemoryStore port over a real store; the named reads wait on `release` (a test double)."""

    def __init__(self, inner: Any, blocked: set[str]) -> None:
        self._inner = inner
        self.blocked = blocked
        self.release = threading.Event()
        self.entered = threading.Semaphore(0)
        self.finished: list[str] = []

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if name not in self.blocked:
            return attr

        def blocked(*args: Any, **kwargs: Any) -> Any:
            self.entered.release()
            self.release.wait(30)
            try:
                return attr(*args, **kwargs)
            finally:
                self.finished.append(name)
        return blocked


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedRuntime]:
    rt = EmbeddedRuntime(tmp_path_factory.mktemp("deadline"))
    rt.ingest(user_turns(*FACTS, at=None))
    rt.ingest(user_turns("What should I cook tonight?", "Something with rice, please", "I need vegetarian recipes",
                         "I always run before breakfast", "I plan to learn Rust this year"))
    yield rt
    rt.close()


def _request() -> RecallRequest:
    return RecallRequest("t1", "u1", "a1", "s1", "What should I drink in the morning?", T0, message_id="q1")


def _config(rt: EmbeddedRuntime, deadline_ms: float) -> EngramConfig:
    return with_deadline(rt.ctx.config, deadline_ms)


def _kinds(result: RecallResult) -> set[str]:
    return {i.kind for i in result.items}


def _same(a: RecallResult, b: RecallResult) -> None:
    assert [(i.kind, i.item_id, i.score, i.text) for i in a.items] == [(i.kind, i.item_id, i.score, i.text)
                                                                       for i in b.items]
    assert (a.memory_section, a.recent, a.retrieved_ids) == (b.memory_section, b.recent, b.retrieved_ids)
    assert (a.deadline_exceeded, a.missed, a.user_known, a.session_known) == (b.deadline_exceeded, b.missed,
                                                                               b.user_known, b.session_known)


def test_without_a_breach_the_pooled_recall_is_identical_to_the_one_in_turn(runtime: EmbeddedRuntime) -> None:
    config = _config(runtime, 60_000)
    in_turn = RecallService(runtime.store, runtime.ctx.embedder, config).recall(_request())
    pooled = RecallService(runtime.store, runtime.ctx.embedder, config, RecallPool(8)).recall(_request())
    assert {"memory", "summary"} <= _kinds(in_turn) and in_turn.recent and not in_turn.missed
    _same(in_turn, pooled)
    for question, user, session in (("What do I like?", "nobody", "s1"), ("What do I like?", "u1", "new")):
        request = RecallRequest("t1", user, "a1", session, question, T0)
        _same(RecallService(runtime.store, runtime.ctx.embedder, config).recall(request),
              RecallService(runtime.store, runtime.ctx.embedder, config, RecallPool(8)).recall(request))


@pytest.mark.parametrize("part", ["summary", "memories", "recent"])
def test_a_blocked_read_is_missed_at_the_deadline_and_the_other_parts_are_there(runtime: EmbeddedRuntime,
                                                                                  part: str) -> None:
    full = RecallService(runtime.store, runtime.ctx.embedder, _config(runtime, 60_000)).recall(_request())
    store = BlockingStore(runtime.store, {READS[part]})
    pool = RecallPool(8)
    try:
        result = RecallService(store, runtime.ctx.embedder, _config(runtime, PATIENT), pool).recall(_request())  # type: ignore[arg-type]
        assert result.deadline_exceeded and result.missed == [part]
        assert store.finished == []  # the caller came back while the read still waits
        expected_kinds = _kinds(full) - {"summary" if part == "summary" else "memory"}
        if part == "memories":
            expected_kinds -= {"profile"}
        assert _kinds(result) == (expected_kinds if part != "recent" else _kinds(full))
        assert bool(result.recent) == (part != "recent")
        assert pool.in_flight == 1  # the late read holds its slot until it ends
    finally:
        store.release.set()
    pool.close()


def test_a_saturated_pool_degrades_a_new_recall_at_once(runtime: EmbeddedRuntime) -> None:
    store = BlockingStore(runtime.store, {"has_user", "list_cards"})
    pool = RecallPool(len(PARTS) + 1)
    config = _config(runtime, 60_000)
    first: list[RecallResult] = []
    worker = threading.Thread(target=lambda: first.append(
        RecallService(store, runtime.ctx.embedder, config, pool).recall(_request())))  # type: ignore[arg-type]
    try:
        worker.start()
        assert store.entered.acquire(timeout=30)  # the first recall's reads are in flight
        second = RecallService(store, runtime.ctx.embedder, config, pool).recall(_request())  # type: ignore[arg-type]
        assert second.deadline_exceeded and second.missed == list(PARTS) and second.items == []
        assert second.recent == [] and "list_cards" not in store.finished
    finally:
        store.release.set()
        worker.join(30)
    assert first and not first[0].missed and first[0].items
    pool.close()


def test_late_reads_never_exceed_the_pool(runtime: EmbeddedRuntime) -> None:
    store = BlockingStore(runtime.store, {"latest_summary"})
    pool = RecallPool(len(PARTS) + 1)
    config = _config(runtime, PATIENT)
    try:
        results = [RecallService(store, runtime.ctx.embedder, config, pool).recall(_request())  # type: ignore[arg-type]
                   for _ in range(4)]
        assert [r.missed for r in results[:2]] == [["summary"], ["summary"]]
        assert all(r.missed == list(PARTS) for r in results[2:])  # two late reads hold all the room left
        assert pool.in_flight == 2
    finally:
        store.release.set()
    pool.close()


def test_a_slot_frees_when_the_late_read_ends(runtime: EmbeddedRuntime) -> None:
    pool = RecallPool(len(PARTS))
    store = BlockingStore(runtime.store, {"recent_turns"})
    config = _config(runtime, PATIENT)
    assert RecallService(store, runtime.ctx.embedder, config, pool).recall(_request()).missed == ["recent"]  # type: ignore[arg-type]
    assert RecallService(runtime.store, runtime.ctx.embedder, config, pool).recall(_request()).missed == list(PARTS)
    store.release.set()
    for _ in range(300):
        if pool.in_flight == 0:
            break
        threading.Event().wait(0.1)
    assert pool.in_flight == 0
    again = RecallService(runtime.store, runtime.ctx.embedder, _config(runtime, 60_000), pool).recall(_request())
    assert not again.missed and again.items
    pool.close()


def test_a_store_path_is_not_needed(tmp_path: Path) -> None:
    """A recall of a fresh folder through the pool: nothing known, nothing missed."""
    rt = EmbeddedRuntime(tmp_path)
    try:
        result = RecallService(rt.store, rt.ctx.embedder, rt.ctx.config, RecallPool(5)).recall(_request())
        assert (result.user_known, result.missed, result.items) == (False, [], [])
    finally:
        rt.close()
