"""The profile document on every store back end: folded from `ProfileChanged`, versioned, and what
`profile_entries` reads."""

from __future__ import annotations

from datetime import timedelta

from engram.projections.ports import MemoryStore
from engram.projections.projector import CurrentMemoryProjector
from engram.schemas.events import ProfileChanged
from engram.schemas.memory import MemoryType
from engram.schemas.profile import ProfileItem, ProfileRemoval
from tests.contract.test_store_contract import EMBED, T0, _put, _record, store  # noqa: F401 (the fixture)


def _item(memory_id: str, *, pinned: bool = False, domains: tuple[str, ...] = ("home",)) -> ProfileItem:
    return ProfileItem(memory_id=memory_id, slot="user_fact", domains=domains, pinned=pinned)


def _change(version: int, *, added: tuple[str, ...] = (), updated: tuple[ProfileItem, ...] = (),
            removed: tuple[str, ...] = ()) -> ProfileChanged:
    return ProfileChanged(event_id=f"p{version}", occurred_at=T0 + timedelta(hours=version), tenant_id="t",
                          user_id="u", profile_version=version, added=tuple(_item(m) for m in added),
                          updated=updated, removed=tuple(ProfileRemoval(memory_id=m, reason="superseded")
                                                         for m in removed))


def _apply(store: MemoryStore, *changes: ProfileChanged) -> None:  # noqa: F811
    projector = CurrentMemoryProjector(store, EMBED)
    for n, change in enumerate(changes):
        projector.apply(change, n)
    store.flush()


def test_the_document_is_the_fold_of_its_changes_and_an_old_change_again_changes_nothing(
        store: MemoryStore) -> None:  # noqa: F811
    assert store.profile_document("t", "u") is None
    _apply(store, _change(1, added=("a", "b")), _change(2, removed=("a",), updated=(_item("b", pinned=True),)),
           _change(1, added=("a", "z")))
    document = store.profile_document("t", "u")
    assert document is not None and (document.version, document.revision, document.last_event_id) == (2, 2, "p2")
    assert [(e.memory_id, e.pinned, e.domains) for e in document.entries] == [("b", True, ("home",))]
    assert store.profile_document("t", "someone else") is None and store.profile_document("t2", "u") is None


def test_another_first_change_starts_the_document_anew(store: MemoryStore) -> None:  # noqa: F811
    first = _change(1, added=("a",))
    _apply(store, first, _change(2, removed=("a",)), first)  # the same first change again: a redelivery
    assert store.profile_document("t", "u").version == 2  # type: ignore[union-attr]
    # the processor's state was erased with its owner's key: the profile restarts at version 1
    restart = _change(1, added=("n",)).model_copy(update={"event_id": "restart"})
    _apply(store, restart, restart)
    document = store.profile_document("t", "u")
    assert document is not None and (document.version, document.first_event_id) == (1, "restart")
    assert document.revision == 3  # the stores' write guard goes on counting
    assert [e.memory_id for e in document.entries] == ["n"]


def test_profile_entries_are_the_members_of_the_document(store: MemoryStore) -> None:  # noqa: F811
    for memory_id, text in (("a", "User lives in Lisbon"), ("b", "User has two kids"), ("c", "User has a dog")):
        _put(store, _record(memory_id, text, layer="L3", memory_type=MemoryType.USER_FACT))
    _put(store, _record("l1", "User liked the film", layer="L1"))
    store.flush()
    # no document yet (a log written before them): every L3 memory
    assert {r.memory_id for r in store.profile_entries("t", "u", 24)} == {"a", "b", "c"}
    _apply(store, _change(1, added=("a", "b", "l1")))
    vector = EMBED.embed_one("kids")
    for found in (store.profile_entries("t", "u", 24), store.profile_entries("t", "u", 24, vector)):
        assert {r.memory_id for r in found} == {"a", "b"}  # an L1 memory is never an entry
    one = store.profile_entries("t", "u", 1, vector)
    assert len(one) == 1 and one[0].memory_id in {"a", "b"}
    _apply(store, _change(2, removed=("a", "b", "l1")))
    assert store.profile_entries("t", "u", 24) == [] and store.profile_entries("t", "u", 24, vector) == []


def test_the_document_is_part_of_the_state_hash(store: MemoryStore) -> None:  # noqa: F811
    _put(store, _record("a", "User lives in Lisbon", layer="L3"))
    store.flush()
    before = store.state_hash()
    _apply(store, _change(1, added=("a",)))
    assert store.state_hash() != before
