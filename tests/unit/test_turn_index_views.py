"""The turn index only grows: readers search frozen views of it while the writer appends and withdraws."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path

from engram.projections.ports import RecentTurn
from engram.projections.turn_index import TurnIndex
from tests.contract.test_store_contract import EMBED, CommittedStore

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _turn(n: int, text: str, role: str = "user", session: str = "s1") -> RecentTurn:
    return RecentTurn(session, f"m{n}", role, text, T0 + timedelta(minutes=n), n)  # type: ignore[arg-type]


def _ids(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [h.turn.message_id for h in hits]


def test_a_view_keeps_what_it_saw_while_the_writer_appends_and_withdraws() -> None:
    index = TurnIndex(EMBED.dimensions)
    index.put(_turn(0, "We adopted a greyhound called Biscuit"), EMBED.embed_one("greyhound Biscuit"))
    before = index.view()
    index.put(_turn(1, "Another greyhound joined", "assistant"), EMBED.embed_one("greyhound"))
    index.withdraw([("s1", "m0")])
    after = index.view()
    assert _ids(before.search("greyhound", None, 5)) == ["m0"]
    assert before.turn("s1", "m0") is not None and before.turn("s1", "m1") is None
    assert _ids(after.search("greyhound", None, 5)) == ["m1"] and after.turn("s1", "m0") is None
    assert _ids(after.search("Biscuit", None, 5)) == [], "the reply is no longer found by the withdrawn words"
    assert _ids(before.search("Biscuit", None, 5)) == ["m0"]
    index.put(_turn(0, "We adopted a greyhound called Biscuit"), EMBED.embed_one("greyhound Biscuit"))
    assert _ids(index.view().search("Biscuit", EMBED.embed_one("Biscuit"), 5)) == []


def test_turns_are_found_by_vector_and_vector_hits_carry_the_cosine() -> None:
    index = TurnIndex(EMBED.dimensions)
    for n, text in enumerate(["I run every morning by the river", "My sister lives in Lisbon"]):
        index.put(_turn(n, text, session=f"s{n}"), EMBED.embed_one(text))
    hits = index.view().search("nothing shared here", EMBED.embed_one("my sister lives in Lisbon"), 5)
    assert hits[0].turn.message_id == "m1" and hits[0].keyword_score == 0 and hits[0].vector_score > 0.9


def test_a_commit_publishes_the_writers_index_to_readers_without_a_rebuild(tmp_path: Path) -> None:
    store = CommittedStore(tmp_path / "s.db")
    store.embed_turns_with(EMBED.embed)
    store.add_turn("t", "u", _turn(0, "I adopted a greyhound"))
    first = store.reader._turn_view("t", "u")
    assert first.index is store.writer._turn_indexes[("t", "u")]  # the writer's own, not read from the rows
    store.add_turn("t", "u", _turn(1, "The greyhound sleeps a lot", "assistant"))
    second = store.reader._turn_view("t", "u")
    assert second.index is first.index and (first.n, second.n) == (1, 2)
    assert sorted(_ids(store.search_turns("t", "u", "greyhound", 5))) == ["m0", "m1"]
    store.close()


def test_readers_search_while_the_writer_commits_turns(tmp_path: Path) -> None:
    """Turns are committed in pairs: a reader never sees half a pair, nor a withdrawn turn come back."""
    store = CommittedStore(tmp_path / "s.db")
    store.embed_turns_with(EMBED.embed)
    seen: list[int] = []
    errors: list[BaseException] = []
    done = threading.Event()

    def read() -> None:
        try:
            while not done.is_set():
                hits = store.search_turns("t", "u", "tea", 1000, EMBED.embed_one("tea"))
                seen.append(sum(1 for h in hits if h.keyword_score > 0))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    readers = [threading.Thread(target=read) for _ in range(3)]
    for thread in readers:
        thread.start()
    from engram.runtime.engine import _Tx

    for pair in range(60):
        with _Tx(store.db, store.writer.forget_cache, store.writer.changes, store.published):
            for k in range(2):
                store.writer.add_turn("t", "u", _turn(2 * pair + k, f"green tea number {pair}", session=f"s{pair}-{k}"))
            store.writer.flush()
    done.set()
    for thread in readers:
        thread.join()
    assert not errors and seen and all(n % 2 == 0 for n in seen)
    store.close()
