"""The one relevance scorer shared by recall, merge and eviction. Pure: `now` is passed in."""

from __future__ import annotations

from datetime import datetime

from .config import RecallWeights
from .text import bigram_overlap, contains_score


def match_score(query: str, text: str, weights: RecallWeights) -> float:
    """`bigram·bigram_overlap + contains·contains`, in [0, 1]."""
    return weights.bigram * bigram_overlap(query, text) + weights.contains * contains_score(
        query, text
    )


def decay_factor(last_seen: datetime, now: datetime, half_life_hours: float) -> float:
    """`0.5 ** (Δt / half_life)` with Δt in whole hours; never above 1."""
    hours = max(0, int((now - last_seen).total_seconds() // 3600))
    return 0.5 ** (hours / half_life_hours)


def combined_score(match: float, decay: float, importance: float, weights: RecallWeights) -> float:
    """`match_w·match + decay_w·decay + importance_w·importance`."""
    return weights.match * match + weights.decay * decay + weights.importance * importance


def relevance(
    query: str,
    text: str,
    *,
    importance: float,
    last_seen: datetime,
    now: datetime,
    weights: RecallWeights,
    half_life_hours: float,
) -> float:
    """Full score of one memory text for one query."""
    return combined_score(
        match_score(query, text, weights),
        decay_factor(last_seen, now, half_life_hours),
        importance,
        weights,
    )
