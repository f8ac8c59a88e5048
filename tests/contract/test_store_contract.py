"""One contract for every MemoryStore back end (embedded now; Weaviate joins with its adapter)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from engram.core.embedding import HashingEmbedder
from engram.projections.embedded_store import EmbeddedStore
from engram.projections.ports import MemoryStore, RecentTurn
from engram.runtime.log import open_database
from engram.schemas.events import SummarySnapshotted
from engram.schemas.memory import GlobalCard, MemoryRecord, MemoryType, SummarySections

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
EMBED = HashingEmbedder()


class CommittedStore:
    """The embedded store as the runtime uses it: each write through the writer store in its own committed
    transaction (announced to the snapshots), each read on the reader's own connection and snapshots."""

    WRITES = frozenset({"upsert_memory", "delete_memory", "upsert_summary", "upsert_card", "add_turn",
                        "forget_context", "clear", "withdraw_turns", "forget_cache", "embed_turns_with",
                        "put_profile"})

    def __init__(self, path: Path) -> None:
        from engram.projections.embedded_reader import EmbeddedReader
        from engram.projections.snapshots import Published

        self.db = open_database(path)
        self.writer = EmbeddedStore(self.db, EMBED.dimensions)
        self.published = Published()
        self.reader = EmbeddedReader(path, EMBED.dimensions, self.published)

    def __getattr__(self, name: str) -> object:
        if name not in self.WRITES:
            return getattr(self.reader, name)
        from engram.runtime.engine import _Tx

        def write(*args: object, **kwargs: object) -> object:
            with _Tx(self.db, self.writer.forget_cache, self.writer.changes, self.published):
                result = getattr(self.writer, name)(*args, **kwargs)
                self.writer.flush()
            return result
        return write

    def close(self) -> None:
        self.reader.close()
        self.db.close()


@contextmanager
def opened_store(kind: str, request: pytest.FixtureRequest, folder: Path, prefix: str,
                 clear: bool = False) -> Iterator[MemoryStore]:
    """A store of `kind` (embedded, embedded-reader, weaviate, weaviate-sealed), closed after use. A
    Weaviate store has collections of its own (`prefix`): another test process clearing the shared ones
    cannot pull them away mid-test; it drops them at the end."""
    if kind.startswith("weaviate"):
        from engram.core.crypto import FieldCipher
        from engram.core.keystore import MemoryKeyStore
        from engram.projections.weaviate_store import WeaviateStore

        endpoint = request.getfixturevalue("weaviate_endpoint")
        # sealed: the user text under per-owner keys, as the distributed runtime with encryption on stores it
        cipher = FieldCipher(MemoryKeyStore()) if kind == "weaviate-sealed" else None
        weaviate_store = WeaviateStore(endpoint.connect(), EMBED.model_id, prefix, cipher=cipher)
        if clear:
            weaviate_store.clear()
        yield weaviate_store
        weaviate_store.drop()
        weaviate_store.close()
        return
    if kind == "embedded-reader":
        split = CommittedStore(folder / "store.db")
        yield split  # type: ignore[misc]
        split.close()
        return
    db = open_database(folder / "store.db")
    yield EmbeddedStore(db, EMBED.dimensions)
    db.close()


@pytest.fixture(params=["embedded", "embedded-reader", pytest.param("weaviate", marks=pytest.mark.weaviate),
                        pytest.param("weaviate-sealed", marks=pytest.mark.weaviate)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryStore]:
    with opened_store(request.param, request, tmp_path, f"contract{os.getpid()}", clear=True) as opened:
        yield opened


def _record(memory_id: str, content: str, *, tenant: str = "t", user: str = "u", version: int = 1,
            status: str = "active", layer: str = "L1", memory_type: MemoryType = MemoryType.USER_PREFERENCE,
            keywords: tuple[str, ...] = ()) -> MemoryRecord:
    return MemoryRecord(memory_id=memory_id, tenant_id=tenant, user_id=user, type=memory_type,
                        slot=memory_type.value, layer=layer, content=content, confidence=0.8, importance=0.5,
                        status=status, keywords=keywords, version=version,  # type: ignore[arg-type]
                        created_at=T0, updated_at=T0, last_seen_at=T0)


def _put(store: MemoryStore, record: MemoryRecord) -> None:
    store.upsert_memory(record.tenant_id, record.user_id, record, EMBED.embed_one(record.content))


def test_upsert_then_get_returns_the_record(store: MemoryStore) -> None:
    record = _record("m1", "User likes green tea")
    _put(store, record)
    assert store.get_memory("t", "u", "m1") == record
    assert store.has_user("t", "u") and not store.has_user("t", "someone")


def test_an_older_version_never_overwrites_a_newer_one(store: MemoryStore) -> None:
    _put(store, _record("m1", "v2 text", version=2))
    _put(store, _record("m1", "v1 text", version=1))
    _put(store, _record("m1", "v2 again", version=2))
    assert store.get_memory("t", "u", "m1").content == "v2 text"  # type: ignore[union-attr]
    hits = store.search_memories("t", "u", "text", EMBED.embed_one("v2 text"), 5)
    assert [h.record.content for h in hits] == ["v2 text"]
    _put(store, _record("m1", "v3 text", version=3))
    assert store.get_memory("t", "u", "m1").content == "v3 text"  # type: ignore[union-attr]


def test_delete_really_deletes(store: MemoryStore) -> None:
    _put(store, _record("m1", "User likes green tea"))
    assert store.delete_memory("t", "u", "m1")
    assert store.get_memory("t", "u", "m1") is None
    assert store.search_memories("t", "u", "green tea", EMBED.embed_one("green tea"), 10) == []
    assert not store.delete_memory("t", "u", "m1")


def test_list_filters_by_status(store: MemoryStore) -> None:
    _put(store, _record("m1", "active one"))
    _put(store, _record("m2", "old one", status="replaced"))
    assert [r.memory_id for r in store.list_memories("t", "u")] == ["m1"]
    assert {r.memory_id for r in store.list_memories("t", "u", ("active", "replaced"))} == {"m1", "m2"}


def test_hybrid_search_finds_by_vector_and_by_keyword_and_skips_inactive(store: MemoryStore) -> None:
    _put(store, _record("tea", "User likes green tea in the morning"))
    _put(store, _record("code", "用户喜欢Java编程", keywords=("java",)))
    _put(store, _record("old", "User likes green tea a lot", status="replaced"))
    hits = store.search_memories("t", "u", "green tea", EMBED.embed_one("green tea"), 10)
    assert hits[0].record.memory_id == "tea" and hits[0].keyword_score > 0 and hits[0].vector_score > 0.3
    assert "old" not in {h.record.memory_id for h in hits}
    java = store.search_memories("t", "u", "java", EMBED.embed_one("java"), 10)
    assert java[0].record.memory_id == "code"


def test_search_and_reads_never_cross_tenants_or_users(store: MemoryStore) -> None:
    _put(store, _record("a", "User likes cats", tenant="A", user="u1"))
    _put(store, _record("b", "User likes cats too", tenant="B", user="u1"))
    _put(store, _record("c", "User likes cats as well", tenant="A", user="u2"))
    for tenant, user, own in (("A", "u1", "a"), ("B", "u1", "b"), ("A", "u2", "c")):
        hits = store.search_memories(tenant, user, "cats", EMBED.embed_one("cats"), 10)
        assert [h.record.memory_id for h in hits] == [own]
        assert [r.memory_id for r in store.list_memories(tenant, user)] == [own]
    assert store.get_memory("B", "u1", "a") is None


def test_a_record_cannot_be_written_under_another_owner(store: MemoryStore) -> None:
    record = _record("m1", "User likes cats", tenant="A")
    with pytest.raises(ValueError):
        store.upsert_memory("B", "u", record, EMBED.embed_one(record.content))


def test_persona_memories_are_the_active_l3_ones(store: MemoryStore) -> None:
    _put(store, _record("name", "用户叫八千代", layer="L3", memory_type=MemoryType.USER_PROFILE))
    _put(store, _record("pref", "用户喜欢猫"))
    assert [r.memory_id for r in store.persona_memories("t", "u")] == ["name"]


def _snapshot(version: int, session: str = "s1") -> SummarySnapshotted:
    return SummarySnapshotted(
        event_id=f"e{version}", occurred_at=T0, tenant_id="t", user_id="u", session_id=session,
        summary_id=f"sum{version}", version=version, range_start_message_id="m1", range_end_message_id="m9",
        source_message_count=9, total_message_count=9, sections=SummarySections(current_topic=(f"v{version}",)))


def test_latest_summary_is_the_highest_version(store: MemoryStore) -> None:
    for version in (1, 3, 2):
        store.upsert_summary("t", "u", _snapshot(version))
    assert store.latest_summary("t", "u", "s1").version == 3  # type: ignore[union-attr]
    assert store.latest_summary("t", "u", "other") is None
    assert store.latest_summary("t", "x", "s1") is None


def test_cards_upsert_with_version_guard(store: MemoryStore) -> None:
    card = GlobalCard(card_id="c1", tenant_id="t", user_id="u", name="me", created_at=T0, updated_at=T0, version=2)
    store.upsert_card("t", "u", card)
    store.upsert_card("t", "u", card.model_copy(update={"name": "older", "version": 1}))
    assert [c.name for c in store.list_cards("t", "u")] == ["me"]
    assert store.list_cards("t", "other") == []


def test_recent_turns_come_in_order_and_per_session(store: MemoryStore) -> None:
    for i in range(8):
        store.add_turn("t", "u", RecentTurn("s1", f"m{i}", "user", f"text {i}", T0 + timedelta(minutes=i), i))
    store.add_turn("t", "u", RecentTurn("s2", "x", "user", "elsewhere", T0, 100))
    recent = store.recent_turns("t", "u", "s1", 3)
    assert [t.message_id for t in recent] == ["m5", "m6", "m7"]
    assert store.has_session("t", "u", "s1") and not store.has_session("t", "u", "s3")
    assert store.session_users("t", "s1") == ["u"]


def test_clear_empties_everything_and_changes_the_hash(store: MemoryStore) -> None:
    empty = store.state_hash()
    _put(store, _record("m1", "User likes cats"))
    full = store.state_hash()
    assert full != empty
    store.clear()
    assert store.state_hash() == empty and store.list_memories("t", "u") == []


def test_forget_context_clears_summaries_and_turns_of_one_user_only(store: MemoryStore) -> None:
    store.upsert_summary("t", "u", _snapshot(1))
    for user in ("u", "other"):
        store.add_turn("t", user, RecentTurn("s1", "m1", "user", "hello there", T0, 1))
    assert store.forget_context("t", "u") == 2
    assert store.latest_summary("t", "u", "s1") is None and store.recent_turns("t", "u", "s1", 5) == []
    assert store.has_session("t", "u", "s1"), "a forgotten session is still a known one"
    assert [t.message_id for t in store.recent_turns("t", "other", "s1", 5)] == ["m1"]
    assert store.forget_context("t", "u") == 0


def test_turn_neighbours_are_the_turns_before_and_after_in_the_same_session(store: MemoryStore) -> None:
    for i, session in enumerate(["s1", "s2", "s1", "s1", "s2", "s1"]):
        store.add_turn("t", "u", RecentTurn(session, f"m{i}", "user", f"text {i}", T0 + timedelta(minutes=i), i))
    store.add_turn("t", "other", RecentTurn("s1", "m9", "user", "another user's", T0, 1))
    assert [t.message_id for t in store.turn_neighbours("t", "u", "s1", "m2")] == ["m0", "m3"]
    assert [t.content for t in store.turn_neighbours("t", "u", "s2", "m1")] == ["text 4"]
    assert [t.message_id for t in store.turn_neighbours("t", "u", "s1", "m5")] == ["m3"]
    assert store.turn_neighbours("t", "u", "s1", "unknown") == []
    assert store.turn_neighbours("t", "u", "s2", "m2") == [], "a turn is looked up in its own session"
    store.forget_context("t", "u")
    assert store.turn_neighbours("t", "u", "s1", "m2") == []


def test_turns_are_searchable_by_keywords_per_user_and_forgotten_with_the_context(store: MemoryStore) -> None:
    said = [("user", "I adopted a greyhound called Biscuit"), ("assistant", "Try the Lisbon tram 28 at dawn"),
            ("user", "The weather is nice today")]
    for i, (role, text) in enumerate(said):
        store.add_turn("t", "u", RecentTurn("s1", f"m{i}", role, text, T0 + timedelta(minutes=i), i))  # type: ignore[arg-type]
    store.add_turn("t", "other", RecentTurn("s9", "x", "user", "my greyhound Biscuit", T0, 9))
    hits = store.search_turns("t", "u", "which tram in Lisbon?", 5)
    assert [h.turn.message_id for h in hits] == ["m1", "m2"] and hits[0].keyword_score == 1.0 > hits[1].keyword_score
    assert hits[0].turn.role == "assistant" and hits[0].turn.content.startswith("Try the Lisbon")
    assert [h.turn.message_id for h in store.search_turns("t", "u", "greyhound", 5)] == ["m0", "m1"]
    assert [t.message_id for t in store.source_turns("t", "u", [("s1", "m2"), ("s1", "m0"), ("s1", "nope")])] \
        == ["m2", "m0"]
    # a turn is also found by the turn it answers (the other role's, just before it in its session)
    store.add_turn("t", "u", RecentTurn("s1", "m3", "assistant", "Sunny, 24 degrees", T0, 3))
    assert [h.turn.message_id for h in store.search_turns("t", "u", "weather", 5)] == ["m2", "m3"]
    assert [h.turn.message_id for h in store.search_turns("t", "u", "degrees", 5)] == ["m3"]
    store.forget_context("t", "u")
    assert store.search_turns("t", "u", "greyhound", 5) == [] and store.source_turns("t", "u", [("s1", "m0")]) == []
    assert [h.turn.message_id for h in store.search_turns("t", "other", "greyhound", 5)] == ["x"]


def _restarted(store: MemoryStore) -> None:
    """What a restarted projector's store keeps in memory: nothing (buffers, indexes, the sessions' last turns)."""
    store.forget_cache()  # type: ignore[attr-defined]


def test_a_withdrawn_turn_is_not_found_again_after_replay_or_redelivery(store: MemoryStore) -> None:
    said = [("user", "I adopted a greyhound called Biscuit"), ("assistant", "What a lovely name for a dog"),
            ("user", "Which tram goes to Belem?")]
    turns = [RecentTurn("s1", f"m{i}", role, text, T0 + timedelta(minutes=i), i)  # type: ignore[arg-type]
             for i, (role, text) in enumerate(said)]
    for turn in turns:
        store.add_turn("t", "u", turn)
    assert [h.turn.message_id for h in store.search_turns("t", "u", "greyhound Biscuit", 5)] == ["m0", "m1"]
    store.withdraw_turns("t", "u", [("s1", "m0")])
    # the reply is found by the words of the turn it answers: not by a withdrawn turn's words
    assert store.search_turns("t", "u", "greyhound Biscuit", 5) == []
    assert [h.turn.message_id for h in store.search_turns("t", "u", "lovely", 5)] == ["m1", "m2"]
    for cold in (False, True):  # redelivery to the running projector, then replay after a restart
        if cold:
            _restarted(store)
        for turn in turns:
            store.add_turn("t", "u", turn)
        store.flush()
        assert store.search_turns("t", "u", "greyhound Biscuit", 5) == [], f"restarted={cold}"
        assert store.source_turns("t", "u", [("s1", "m0")]) == []
        assert [h.turn.message_id for h in store.search_turns("t", "u", "lovely", 5)] == ["m1", "m2"]
    # the session's latest turn withdrawn: the turn that answers it, recorded later, is not found by its words
    store.withdraw_turns("t", "u", [("s1", "m2")])
    store.add_turn("t", "u", RecentTurn("s1", "m3", "assistant", "The 15E from the square", T0, 3))
    assert store.search_turns("t", "u", "tram Belem", 5) == []
    assert [h.turn.message_id for h in store.search_turns("t", "u", "square", 5)] == ["m3"]
    assert [t.message_id for t in store.recent_turns("t", "u", "s1", 5)] == ["m0", "m1", "m2", "m3"]
