"""Weaviate fed the same log as the embedded store ends in the same state and recalls the same."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from engram.projections.projector import CurrentMemoryProjector
from engram.recall.service import RecallRequest, RecallService
from engram.runtime.engine import EmbeddedRuntime
from tests.generators import T0, conversations

pytestmark = pytest.mark.weaviate


@pytest.fixture(scope="module")
def both(weaviate_endpoint, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[EmbeddedRuntime, object]]:
    from engram.projections.weaviate_store import WeaviateStore

    runtime = EmbeddedRuntime(Path(tmp_path_factory.mktemp("parity")) / "rt")
    runtime.ingest(conversations(seed=21, turns=400, tenants=2, users=3, sessions=2))
    store = WeaviateStore(weaviate_endpoint.connect(), runtime.ctx.embedder.model_id)
    store.clear()
    projector = CurrentMemoryProjector(store, runtime.ctx.embedder)
    for seq, event in runtime.log.scan():
        projector.apply(event, seq)
    store.flush()
    yield runtime, store
    store.close()
    runtime.close()


def test_the_projected_state_hash_is_identical(both) -> None:
    runtime, store = both
    assert store.state_hash() == runtime.store.state_hash()


def test_replaying_the_log_again_changes_nothing(both) -> None:
    runtime, store = both
    before = store.state_hash()
    projector = CurrentMemoryProjector(store, runtime.ctx.embedder)
    for seq, event in runtime.log.scan():
        projector.apply(event, seq)
    store.flush()
    assert store.state_hash() == before


@pytest.mark.parametrize("question", ["我喜欢什么", "What do I like?", "我是做什么工作的", "Rust"])
def test_recall_returns_the_same_context_on_both_stores(both, question: str) -> None:
    runtime, store = both
    config = runtime.ctx.config
    for tenant, user in (("tenant0", "user0"), ("tenant1", "user2")):
        request = RecallRequest(tenant, user, "agent", "session0", question, T0 + timedelta(days=2))
        embedded = RecallService(runtime.store, runtime.ctx.embedder, config).recall(request)
        remote = RecallService(store, runtime.ctx.embedder, config).recall(request)  # type: ignore[arg-type]
        assert [i.item_id for i in remote.items] == [i.item_id for i in embedded.items]
        assert remote.memory_section == embedded.memory_section
        assert remote.recent == embedded.recent
