"""User text in Weaviate is sealed under the owner's key: raw objects hold no canary, the store reads
the text back, and after the owner's key is destroyed the store skips their objects (real Weaviate)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import pytest

from engram.core.crypto import FieldCipher
from engram.core.embedding import HashingEmbedder
from engram.core.keystore import MemoryKeyStore
from engram.projections.ports import RecentTurn
from engram.projections.weaviate_schema import COLLECTIONS, TURNS
from engram.projections.weaviate_store import WeaviateStore
from engram.schemas.events import SummarySnapshotted
from engram.schemas.memory import GlobalCard, MemoryRecord, MemoryType, SummarySections
from engram.schemas.profile import ProfileDocument, ProfileItem

pytestmark = pytest.mark.weaviate
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
EMBED = HashingEmbedder()
CANARY_A = "zebracanaryalpha"
CANARY_B = "zebracanarybravo"


@pytest.fixture
def sealed(weaviate_endpoint: Any) -> Iterator[tuple[WeaviateStore, FieldCipher]]:
    cipher = FieldCipher(MemoryKeyStore())
    store = WeaviateStore(weaviate_endpoint.connect(), EMBED.model_id, f"wvseal{uuid.uuid4().hex[:8]}",
                          index_master=b"m" * 32, cipher=cipher)
    yield store, cipher
    store.drop()
    store.close()


def _memory(user: str, canary: str) -> MemoryRecord:
    return MemoryRecord(memory_id=f"m-{user}", tenant_id="t", user_id=user, type=MemoryType.USER_PREFERENCE,
                        slot="user_preference", layer="L3", content=f"User likes {canary} tea",
                        topic=canary, keywords=(canary,), confidence=0.8, importance=0.5, status="active",
                        version=1, created_at=T0, updated_at=T0, last_seen_at=T0)


def _summary(user: str, canary: str) -> SummarySnapshotted:
    return SummarySnapshotted(
        event_id=f"e-{user}", occurred_at=T0, tenant_id="t", user_id=user, session_id="s", summary_id=f"sum-{user}",
        version=1, range_start_message_id="m1", range_end_message_id="m9", source_message_count=9,
        total_message_count=9, sections=SummarySections(current_topic=(f"talk about {canary}",)))


def _card(user: str, canary: str) -> GlobalCard:
    return GlobalCard(card_id=f"c-{user}", tenant_id="t", user_id=user, name=canary, version=1,
                      created_at=T0, updated_at=T0)


def _write(store: WeaviateStore, user: str, canary: str) -> None:
    store.upsert_memory("t", user, _memory(user, canary), EMBED.embed_one(f"User likes {canary} tea"))
    store.add_turn("t", user, RecentTurn("s", f"msg-{user}", "user", f"my secret is {canary}", T0, 0))
    store.upsert_summary("t", user, _summary(user, canary))
    store.upsert_card("t", user, _card(user, canary))
    store.put_profile("t", user, _profile(user))
    store.flush()


def _profile(user: str) -> ProfileDocument:
    return ProfileDocument(tenant_id="t", user_id=user, version=1, revision=1,
                           entries=(ProfileItem(memory_id=f"m-{user}", slot="user_preference", domains=("food",),
                                                sensitive=("mental",)),))


def _raw(store: WeaviateStore) -> str:
    """Every property of every object of the store, read straight through the client (not the store)."""
    out = []
    for name in COLLECTIONS:
        coll = store._client.collections.get(store.prefix + name)
        for tenant in coll.tenants.get():
            for obj in coll.with_tenant(tenant).iterator():
                out.append(json.dumps(obj.properties, default=str))
    return "\n".join(out)


def test_text_is_sealed_in_weaviate_and_reads_back(sealed: tuple[WeaviateStore, FieldCipher]) -> None:
    store, _cipher = sealed
    _write(store, "a", CANARY_A)
    raw = _raw(store)
    assert raw.count("_sealed_text") >= 4  # memory record, summary payload, card payload, turn content
    assert CANARY_A not in raw and "secret" not in raw and "likes" not in raw
    assert store.get_memory("t", "a", "m-a") == _memory("a", CANARY_A)
    assert [t.content for t in store.recent_turns("t", "a", "s", 5)] == [f"my secret is {CANARY_A}"]
    assert store.recorded_turns("t", [("a", "s", "msg-a")]) == {("a", "s", "msg-a"): ("user", f"my secret is {CANARY_A}")}
    assert store.latest_summary("t", "a", "s") == _summary("a", CANARY_A)
    assert store.list_cards("t", "a") == [_card("a", CANARY_A)]
    assert store.profile_document("t", "a") == _profile("a") and '"mental"' not in raw  # labels sealed too
    hits = store.search_memories("t", "a", f"{CANARY_A} tea", EMBED.embed_one(f"{CANARY_A} tea"), 5)
    assert [h.record.memory_id for h in hits] == ["m-a"] and hits[0].keyword_score > 0


def test_a_sealed_text_is_bound_to_its_object(sealed: tuple[WeaviateStore, FieldCipher]) -> None:
    store, _cipher = sealed
    _write(store, "a", CANARY_A)
    coll = store._client.collections.get(store.prefix + TURNS).with_tenant("t")
    obj = next(iter(coll.iterator()))
    other = uuid.uuid4()
    coll.data.insert(properties=dict(obj.properties, message_id="copied"), uuid=other)  # same ciphertext elsewhere
    assert store.text.opened(TURNS, coll.query.fetch_object_by_id(other), "content") is None
    assert store.text.opened(TURNS, obj, "content") == f"my secret is {CANARY_A}"


def test_a_destroyed_key_makes_the_owners_objects_read_as_gone(sealed: tuple[WeaviateStore, FieldCipher]) -> None:
    store, cipher = sealed
    _write(store, "a", CANARY_A)
    _write(store, "b", CANARY_B)
    before = store.state_hash()
    assert cipher.forget_owner("t", "a") >= 1
    assert store.get_memory("t", "a", "m-a") is None
    assert store.list_memories("t", "a", ("active", "superseded", "deleted")) == []
    assert store.persona_memories("t", "a") == []
    assert store.search_memories("t", "a", f"{CANARY_A} tea", EMBED.embed_one(f"{CANARY_A} tea"), 5) == []
    assert store.recent_turns("t", "a", "s", 5) == []
    assert store.recorded_turns("t", [("a", "s", "msg-a")]) == {}
    assert store.latest_summary("t", "a", "s") is None
    assert store.list_cards("t", "a") == []
    assert store.profile_document("t", "a") is None and store.profile_document("t", "b") == _profile("b")
    # B is untouched, and the state hash (left without A's objects) is computed without error
    assert store.get_memory("t", "b", "m-b") == _memory("b", CANARY_B)
    assert [t.content for t in store.recent_turns("t", "b", "s", 5)] == [f"my secret is {CANARY_B}"]
    assert store.list_cards("t", "b") == [_card("b", CANARY_B)]
    assert store.state_hash() != before
    memories, summaries, cards, turns, _sessions, _profiles = store.canonical_sections()
    for section in (memories, summaries, cards, turns):  # A's objects are left out, B's are opened
        assert {row[1] for row in section} == {"b"} and CANARY_B in str(section)


def test_without_a_cipher_nothing_is_sealed(weaviate_endpoint: Any) -> None:
    store = WeaviateStore(weaviate_endpoint.connect(), EMBED.model_id, f"wvplain{uuid.uuid4().hex[:8]}",
                          index_master=None)
    try:
        _write(store, "a", CANARY_A)
        raw = _raw(store)
        assert "_sealed_text" not in raw and CANARY_A in raw
        assert store.get_memory("t", "a", "m-a") == _memory("a", CANARY_A)
    finally:
        store.drop()
        store.close()
