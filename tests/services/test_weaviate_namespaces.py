"""On a real Weaviate: look-alike deployment prefixes get separate collections (nothing leaks between them)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import datetime, timezone

import pytest

from tests.services import WeaviateEndpoint, import_client

import_client("weaviate", "weaviate")

from engram.core.embedding import HashingEmbedder  # noqa: E402
from engram.projections.weaviate_store import WeaviateStore  # noqa: E402
from engram.schemas.memory import MemoryRecord, MemoryType  # noqa: E402

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
EMBED = HashingEmbedder()


@pytest.fixture
def stores(weaviate_endpoint: WeaviateEndpoint) -> Iterator[dict[str, WeaviateStore]]:
    run = uuid.uuid4().hex[:6]
    prefixes = [f"probe{run}-a", f"probe{run}_a", f"probe{run}A"]
    opened = {p: WeaviateStore(weaviate_endpoint.connect(), EMBED.model_id, p) for p in prefixes}
    yield opened
    for store in opened.values():
        store.drop()
        store.close()


def test_look_alike_prefixes_are_separate_namespaces(stores: dict[str, WeaviateStore]) -> None:
    for prefix, store in stores.items():
        record = MemoryRecord(memory_id="m1", tenant_id="t", user_id="u", type=MemoryType.USER_PREFERENCE,
                              slot="user_preference", layer="L1", content=f"written under {prefix}",
                              confidence=0.8, importance=0.5, status="active", version=1,
                              created_at=T0, updated_at=T0, last_seen_at=T0)
        store.upsert_memory("t", "u", record, EMBED.embed_one(record.content))
        store.flush()
    for prefix, store in stores.items():
        store.forget_cache()
        found = store.get_memory("t", "u", "m1")
        assert found is not None and found.content == f"written under {prefix}"
    names = {store.prefix for store in stores.values()}
    assert len(names) == 3
