"""The store's own gRPC batches leave Weaviate holding exactly what the client's `insert_many` leaves
(every property, every vector, of every collection), for a projected synthetic chat (real Weaviate)."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from bench.synthetic import generate_turns
from engram.core.crypto import FieldCipher
from engram.core.embedding import HashingEmbedder
from engram.core.keystore import MemoryKeyStore
from engram.projections import weaviate_batch
from engram.projections.projector import PROJECTED_TYPES, CurrentMemoryProjector
from engram.projections.weaviate_schema import COLLECTIONS, MEMORIES
from engram.projections.weaviate_store import WeaviateStore
from engram.runtime.engine import EmbeddedRuntime
from engram.schemas.base import Event
from engram.schemas.codec import decode, encode
from engram.schemas.memory import MemoryRecord, MemoryType

pytestmark = pytest.mark.weaviate
EMBED = HashingEmbedder()
SEALED = {"record", "payload", "content"}
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


@pytest.fixture
def stores(weaviate_endpoint: Any) -> Iterator[tuple[WeaviateStore, WeaviateStore, FieldCipher]]:
    cipher = FieldCipher(MemoryKeyStore())
    made = [WeaviateStore(weaviate_endpoint.connect(), EMBED.model_id, f"wvbatch{kind}{uuid.uuid4().hex[:8]}",
                          index_master=None, cipher=cipher) for kind in ("own", "client")]
    yield made[0], made[1], cipher
    for store in made:
        store.drop()
        store.close()


def _event_log(turns: int, users: int) -> list[Event]:
    """What the embedded runtime logs for a synthetic chat of `users` users in 3 tenants."""
    with tempfile.TemporaryDirectory() as tmp:
        runtime = EmbeddedRuntime(Path(tmp) / "data", encryption=False, analytics="off")
        try:
            runtime.ingest(generate_turns(turns, seed=3, users=users, tenants=3))
            return [event for _seq, event in runtime.log.scan()]
        finally:
            runtime.close()


def _project(store: WeaviateStore, records: list[bytes], cipher: FieldCipher, batch: int = 40) -> None:
    projector = CurrentMemoryProjector(store, EMBED)
    for start in range(0, len(records), batch):
        for offset, event in enumerate((decode(r, cipher) for r in records[start:start + batch]), start):
            if event.type in PROJECTED_TYPES:
                projector.apply(event, offset)
        store.flush()


def _contents(store: WeaviateStore) -> dict[str, dict[str, Any]]:
    """uuid -> properties (sealed text opened) and vector, of every object of every collection."""
    out: dict[str, dict[str, Any]] = {}
    for name in COLLECTIONS:
        coll = store._client.collections.get(store.prefix + name)
        for tenant in coll.tenants.get():
            for obj in coll.with_tenant(tenant).iterator(include_vector=True):
                props = dict(obj.properties)
                for field in SEALED & props.keys():
                    props[field] = store.text.opened(name, obj, field)
                out[f"{name}/{obj.uuid}"] = {**props, "_vector": obj.vector.get("default")}
    return out


def test_own_batches_store_what_insert_many_stores(stores: tuple[WeaviateStore, WeaviateStore, FieldCipher],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    own, client, cipher = stores
    records = [encode(event, cipher) for event in _event_log(90, users=6)]
    tenants: list[int] = []  # Weaviate tenants in each flush's request
    real = weaviate_batch.insert

    def counted(groups: list[weaviate_batch.Group], chunk: int) -> list[tuple[str, str]]:
        tenants.append(len({coll.data._tenant for coll, _items in groups}))
        return real(groups, chunk)

    monkeypatch.setattr("engram.projections.weaviate_store.insert_batch", counted)
    _project(own, records, cipher)
    assert tenants and max(tenants) > 1
    monkeypatch.setattr(weaviate_batch, "batch_pb2", None)  # every object through the client's insert_many
    _project(client, records, cipher)
    mine, theirs = _contents(own), _contents(client)
    assert {key.split("/")[0] for key in mine} >= {"EngramMemory", "EngramTurn", "EngramSession", "EngramUser"}
    assert len({props["tenant_id"] for props in mine.values()}) == 3
    assert mine == theirs


def _record(tenant: str, memory_id: str, content: str) -> MemoryRecord:
    return MemoryRecord(memory_id=memory_id, tenant_id=tenant, user_id="u", type=MemoryType.USER_PREFERENCE,
                        slot="user_preference", layer="L3", content=content, confidence=0.8, importance=0.5,
                        status="active", version=1, created_at=T0, updated_at=T0, last_seen_at=T0)


def test_cached_tenant_handles_keep_tenants_apart_and_outlive_a_clear(
        stores: tuple[WeaviateStore, WeaviateStore, FieldCipher]) -> None:
    store = stores[0]
    for tenant in ("t-a", "t-b"):
        store.upsert_memory(tenant, "u", _record(tenant, f"m-{tenant}", f"likes {tenant}"), EMBED.embed_one(tenant))
    store.flush()
    assert [r.content for r in store.list_memories("t-a", "u")] == ["likes t-a"]
    assert [r.content for r in store.list_memories("t-b", "u")] == ["likes t-b"]
    raw = store._client.collections.get(store.prefix + MEMORIES)  # each in its own Weaviate tenant
    assert {t: [o.properties["tenant_id"] for o in raw.with_tenant(t).iterator()] for t in ("t-a", "t-b")} == \
        {"t-a": ["t-a"], "t-b": ["t-b"]}
    store.clear()  # collections dropped and made again: the handles kept name them, so they still work
    assert store.list_memories("t-a", "u") == []
    store.upsert_memory("t-b", "u", _record("t-b", "m-2", "likes tea"), EMBED.embed_one("tea"))
    store.flush()
    assert [r.memory_id for r in store.list_memories("t-b", "u")] == ["m-2"] and store.list_memories("t-a", "u") == []
