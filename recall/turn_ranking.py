"""One ranking of the turns a search found by keywords and by vector.

The two channels' scores are on different scales (BM25 scaled to its best hit, a cosine), and a store's
BM25 is not exactly another's (Weaviate counts its statistics over the tenant), so the turns are ranked
by reciprocal rank fusion of the channels' rankings: a turn scores `sum(1 / (k + rank))` over the
channels that found it. Only ranks count, so both stores rank alike when their channels order alike.
A turn counts in the vector channel from the cosine a memory needs to count as related.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from engram.projections.ports import TurnHit


def rank_turns(hits: Sequence[TurnHit], k: float, related_cosine: float) -> list[TurnHit]:
    """The hits found by either channel, best first by reciprocal rank fusion; ties by log position."""
    def ordered(score: Callable[[TurnHit], float], floor: float) -> list[TurnHit]:
        found = [h for h in hits if score(h) > 0 and score(h) >= floor]
        return sorted(found, key=lambda h: (-score(h), h.turn.position, h.turn.message_id))

    fused: dict[tuple[str, str], float] = {}
    kept: dict[tuple[str, str], TurnHit] = {}
    for ranking in (ordered(lambda h: h.keyword_score, 0.0), ordered(lambda h: h.vector_score, related_cosine)):
        for rank, hit in enumerate(ranking):
            key = (hit.turn.session_id, hit.turn.message_id)
            fused[key] = fused.get(key, 0.0) + 1.0 / (k + rank + 1)
            kept.setdefault(key, hit)
    return sorted(kept.values(), key=lambda h: (-fused[(h.turn.session_id, h.turn.message_id)], h.turn.position,
                                                h.turn.message_id))
