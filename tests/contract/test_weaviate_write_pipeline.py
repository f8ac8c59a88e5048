"""The projector's Weaviate writes in flight and the remembered versions change nothing of what is stored.

`WeaviateStore.flush_async` writes a batch on the store's writer thread while the
next batch is applied (the distributed projector's loop), and the version guard
reads Weaviate only for uuids whose stored version it does not remember. Both
must store exactly what one synchronous flush per event stored.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from engram.core.embedding import HashingEmbedder
from engram.projections.projector import CurrentMemoryProjector
from engram.runtime.engine import EmbeddedRuntime
from engram.schemas.memory import MemoryRecord, MemoryType
from tests.generators import conversations

pytestmark = pytest.mark.weaviate

EMBED = HashingEmbedder()
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _store(endpoint: Any, prefix: str) -> Any:
    from engram.projections.weaviate_store import WeaviateStore

    return WeaviateStore(endpoint.connect(), EMBED.model_id, prefix)


@pytest.fixture()
def prefix(weaviate_endpoint: Any) -> Iterator[str]:
    name = f"wpipe-{uuid.uuid4().hex[:8]}"
    yield name
    cleaner = _store(weaviate_endpoint, name)
    cleaner.drop()
    cleaner.close()


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedRuntime]:
    rt = EmbeddedRuntime(Path(tmp_path_factory.mktemp("pipeline")) / "rt")
    rt.ingest(conversations(seed=5, turns=300, tenants=2, users=3, sessions=2))
    yield rt
    rt.close()


def test_batches_written_in_flight_store_what_one_flush_per_event_stored(
        weaviate_endpoint: Any, runtime: EmbeddedRuntime, prefix: str) -> None:
    events = list(runtime.log.scan())
    one_by_one = _store(weaviate_endpoint, prefix + "a")
    pipelined = _store(weaviate_endpoint, prefix + "b")
    try:
        projector = CurrentMemoryProjector(one_by_one, runtime.ctx.embedder)
        for seq, event in events:
            projector.apply(event, seq)
            one_by_one.flush()
        projector = CurrentMemoryProjector(pipelined, runtime.ctx.embedder)
        writes = []
        for start in range(0, len(events), 37):  # the projector's loop: apply a batch, start its write, go on
            for seq, event in events[start:start + 37]:
                projector.apply(event, seq)
            writes.append(pipelined.flush_async())
        for write in writes:
            write.result()
        assert sum(1 for _ in events) > 100
        assert pipelined.state_hash() == one_by_one.state_hash() == runtime.store.state_hash()
    finally:
        for store in (one_by_one, pipelined):
            store.drop()
            store.close()


def _record(version: int, content: str, memory_id: str = "m1") -> MemoryRecord:
    return MemoryRecord(memory_id=memory_id, tenant_id="t", user_id="u", type=MemoryType.USER_PREFERENCE,
                        slot=MemoryType.USER_PREFERENCE.value, layer="L1", content=content, confidence=0.8,
                        importance=0.5, version=version, created_at=T0, updated_at=T0, last_seen_at=T0)


def _put(store: Any, record: MemoryRecord) -> None:
    store.upsert_memory("t", "u", record, EMBED.embed_one(record.content))


def test_a_read_waits_for_the_write_in_flight(weaviate_endpoint: Any, prefix: str) -> None:
    store = _store(weaviate_endpoint, prefix)
    try:
        _put(store, _record(1, "User likes green tea"))
        store.flush_async()  # not waited for
        assert store.get_memory("t", "u", "m1") == _record(1, "User likes green tea")
    finally:
        store.close()


def test_an_older_version_never_overwrites_a_newer_one_another_writer_stored(
        weaviate_endpoint: Any, prefix: str) -> None:
    """After a rebalance (`forget_versions`), what another projector wrote is read again, not assumed."""
    mine, theirs = _store(weaviate_endpoint, prefix), _store(weaviate_endpoint, prefix)
    try:
        _put(mine, _record(2, "v2"))
        mine.flush()
        _put(theirs, _record(3, "v3"))
        theirs.flush()
        mine.forget_versions()
        _put(mine, _record(2, "v2 again"))
        mine.flush()
        assert mine.get_memory("t", "u", "m1") == _record(3, "v3")
    finally:
        mine.close()
        theirs.close()


def test_remembered_versions_guard_like_stored_ones(weaviate_endpoint: Any, prefix: str) -> None:
    store = _store(weaviate_endpoint, prefix)
    try:
        _put(store, _record(3, "v3"))
        store.flush()
        _put(store, _record(2, "v2, late"))  # older than what this store wrote: dropped without a read
        store.flush()
        assert store.get_memory("t", "u", "m1") == _record(3, "v3")
        assert store.delete_memory("t", "u", "m1")
        _put(store, _record(1, "v1 after the delete"))  # nothing stored any more: written, as before
        store.flush()
        assert store.get_memory("t", "u", "m1") == _record(1, "v1 after the delete")
    finally:
        store.close()
