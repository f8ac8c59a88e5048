"""A memory's quote of its own source turn is the same piece of evidence as the memory; a neighbour's is not."""

from __future__ import annotations

from bench.recall_items import ranked_items
from engram.core.text import estimate_tokens
from engram.recall.context import RecalledItem


def test_a_quote_of_the_own_source_turn_joins_the_memory_and_a_neighbour_quote_follows_it() -> None:
    item = RecalledItem("memory", "m1", "User adopted a dog", 1.0, 0, ("d1",),
                        context_turns=(("d1", "We adopted Biscuit in May"), ("d2", "What a lovely name!")))
    ranked = ranked_items([item])
    assert [sorted(r.provenance) for r in ranked] == [["d1"], ["d2"]]
    assert "Biscuit" in ranked[0].text
    assert ranked[0].tokens == estimate_tokens("User adopted a dog") + estimate_tokens("We adopted Biscuit in May")
