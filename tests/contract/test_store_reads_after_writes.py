"""A read, then a write, then the same read sees the write, on every back end.

The embedded store keeps what recall reads (cards, the latest summary, the recent window,
known users and sessions) between queries; these cases fail if a write does not drop it.
"""

from __future__ import annotations

from datetime import timedelta

from engram.projections.ports import MemoryStore, RecentTurn
from engram.schemas.memory import GlobalCard
from tests.contract.test_store_contract import T0, _snapshot, store  # noqa: F401  (the parametrised fixture)


def test_cards_read_then_written_are_read_anew(store: MemoryStore) -> None:  # noqa: F811
    assert store.list_cards("t", "u") == []
    card = GlobalCard(card_id="c1", tenant_id="t", user_id="u", name="me", created_at=T0, updated_at=T0, version=1)
    store.upsert_card("t", "u", card)
    assert [c.name for c in store.list_cards("t", "u")] == ["me"]
    store.upsert_card("t", "u", card.model_copy(update={"name": "renamed", "version": 2}))
    store.list_cards("t", "u").clear()  # a caller's list is its own
    assert [c.name for c in store.list_cards("t", "u")] == ["renamed"]


def test_summary_and_window_read_then_written_are_read_anew(store: MemoryStore) -> None:  # noqa: F811
    assert store.latest_summary("t", "u", "s1") is None and store.recent_turns("t", "u", "s1", 3) == []
    assert not store.has_user("t", "u") and not store.has_session("t", "u", "s1")
    store.upsert_summary("t", "u", _snapshot(1))
    store.add_turn("t", "u", RecentTurn("s1", "m0", "user", "first", T0, 0))
    assert store.latest_summary("t", "u", "s1").version == 1  # type: ignore[union-attr]
    assert [t.message_id for t in store.recent_turns("t", "u", "s1", 3)] == ["m0"]
    assert store.has_user("t", "u") and store.has_session("t", "u", "s1")
    store.upsert_summary("t", "u", _snapshot(2))
    for i in range(1, 5):
        store.add_turn("t", "u", RecentTurn("s1", f"m{i}", "user", f"text {i}", T0 + timedelta(minutes=i), i))
    assert store.latest_summary("t", "u", "s1").version == 2  # type: ignore[union-attr]
    assert [t.message_id for t in store.recent_turns("t", "u", "s1", 3)] == ["m2", "m3", "m4"]
    assert [t.message_id for t in store.recent_turns("t", "u", "s1", 2)] == ["m3", "m4"]
    store.forget_context("t", "u")
    assert store.latest_summary("t", "u", "s1") is None and store.recent_turns("t", "u", "s1", 3) == []
    store.clear()
    assert not store.has_user("t", "u") and not store.has_session("t", "u", "s1")
