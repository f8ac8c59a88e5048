"""Readers of the embedded store run beside the writer on snapshots (projections/snapshots.py)."""

from __future__ import annotations

import threading
from pathlib import Path

from engram.projections.hybrid_index import UserIndex
from engram.projections.snapshots import Published, StoreChanges
from tests.contract.test_store_contract import EMBED, CommittedStore, _put, _record


def test_a_commit_replaces_a_read_index_by_a_copy_and_leaves_the_old_one_as_it_was(tmp_path: Path) -> None:
    store = CommittedStore(tmp_path / "s.db")
    _put(store, _record("m1", "User likes green tea"))  # type: ignore[arg-type]
    before = store.reader._index("t", "u")
    _put(store, _record("m2", "User lives in Porto"))  # type: ignore[arg-type]
    after = store.reader._index("t", "u")
    assert after is not before and set(before.records) == {"m1"} and set(after.records) == {"m1", "m2"}
    assert store.reader._index("t", "u") is after  # cached until the next commit touching the user
    hits = store.search_memories("t", "u", "Porto", EMBED.embed_one("Porto"), 5)
    assert [h.record.memory_id for h in hits][0] == "m2"
    store.close()


def test_what_a_reader_built_while_a_commit_was_in_flight_is_not_kept() -> None:
    published = Published()
    changes = StoreChanges()
    changes.touch("t", "u")
    builds: list[str] = []

    def build_across_a_commit() -> UserIndex:
        builds.append("built")
        published.before_commit(changes)  # the writer commits while this reader is reading
        published.after_commit(changes)
        return UserIndex(4)

    stale = published.cached("index", ("t", "u"), build_across_a_commit)
    fresh = published.cached("index", ("t", "u"), lambda: UserIndex(4))
    assert fresh is not stale  # the first build was not installed: it may have missed the commit
    assert published.cached("index", ("t", "u"), lambda: UserIndex(4)) is fresh


def test_concurrent_readers_always_see_a_committed_state(tmp_path: Path) -> None:
    """Memories are written in pairs (one transaction each pair): a reader never sees half a pair."""
    store = CommittedStore(tmp_path / "s.db")
    seen: list[int] = []
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            seen.append(len(store.list_memories("t", "u")))
            seen.append(len(store.search_memories("t", "u", "tea", EMBED.embed_one("tea"), 1000)))

    readers = [threading.Thread(target=read) for _ in range(3)]
    for thread in readers:
        thread.start()
    from engram.runtime.engine import _Tx

    for pair in range(40):
        with _Tx(store.db, store.writer.forget_cache, store.writer.changes, store.published):
            for i in (2 * pair, 2 * pair + 1):
                _put(store.writer, _record(f"m{i}", f"User likes tea number {i}"))
            store.writer.flush()
    done.set()
    for thread in readers:
        thread.join()
    assert seen and all(n % 2 == 0 for n in seen)
    assert len(store.list_memories("t", "u")) == 80
    store.close()


def test_recall_on_the_reader_equals_recall_on_the_writer_store(tmp_path: Path) -> None:
    """Without concurrency the snapshots change nothing: the same items, scores and context."""
    from engram.recall.service import RecallRequest, RecallService
    from engram.runtime.engine import EmbeddedRuntime
    from tests.drivers import T0, turn

    facts = ["I prefer green tea in the morning", "I live in Porto", "I work as a nurse in Lisbon",
             "My daughter Mia loves dinosaurs", "I am allergic to peanuts", "I plan to learn Rust this year"]
    with EmbeddedRuntime(tmp_path / "d") as rt:
        rt.ingest([turn(f) for f in facts])
        for question in ("What should I drink?", "Where do I live?", "What is my job?", "Tell me about Mia"):
            request = RecallRequest("t1", "u1", "a1", "s1", question, T0.replace(hour=12))
            writer = RecallService(rt.store, rt.ctx.embedder, rt.ctx.config).recall(request)
            reader = RecallService(rt.reader, rt.ctx.embedder, rt.ctx.config).recall(request)
            assert [(i.item_id, round(i.score, 9)) for i in reader.items] == \
                   [(i.item_id, round(i.score, 9)) for i in writer.items]
            assert reader.memory_section == writer.memory_section and reader.recent == writer.recent
