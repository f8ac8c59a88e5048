"""The one relevance scorer shared by recall, merge and eviction. Pure: `now` is passed in.

`score = w_match·match + w_decay·decay + w_importance·importance` with
`match = w_bigram·bigram_overlap + w_contains·contains` and
`decay = 0.5 ** (Δt / half_life)`, Δt in whole hours.

Terms are Latin words and CJK character bigrams (`core.text.terms`), so
`bigram_overlap` is the share of the query's adjacent term pairs that the text
also has (phrases in English, character runs in Chinese), and `contains` is
the share of the query's terms the text contains, each term weighted by how
rare it is among the texts being compared (uniform when no weights are given).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from datetime import datetime

from .config import RecallWeights
from .text import terms

TermWeight = Callable[[str], float]


def _uniform(term: str) -> float:
    return 1.0


def bigram_overlap(query_terms: tuple[str, ...], text_terms: tuple[str, ...]) -> float:
    pairs = set(zip(query_terms, query_terms[1:]))
    if not pairs:
        return 0.0
    return len(pairs & set(zip(text_terms, text_terms[1:]))) / len(pairs)


def contains(query_terms: tuple[str, ...], text_terms: tuple[str, ...], weight: TermWeight = _uniform) -> float:
    wanted = set(query_terms)
    total = sum(weight(t) for t in wanted)
    if not total:
        return 0.0
    return sum(weight(t) for t in wanted.intersection(text_terms)) / total


def match_scores(
    query_terms: tuple[str, ...], documents: Iterable[tuple[str, ...]], weights: RecallWeights, weight: TermWeight
) -> list[float]:
    """`bigram·bigram_overlap + contains·contains` of each document: the same floats as
    `bigram_overlap` and `contains` one by one, with the query's pairs and weights computed once."""
    pairs = set(zip(query_terms, query_terms[1:]))
    wanted = set(query_terms)
    wanted_weight = {t: weight(t) for t in wanted}
    total = sum(wanted_weight[t] for t in wanted)
    out = []
    for doc in documents:
        overlap = len(pairs & set(zip(doc, doc[1:]))) / len(pairs) if pairs else 0.0
        contained = sum(wanted_weight[t] for t in wanted.intersection(doc)) / total if total else 0.0
        out.append(weights.bigram * overlap + weights.contains * contained)
    return out


def match_score(query: str, text: str, weights: RecallWeights, weight: TermWeight = _uniform) -> float:
    """`bigram·bigram_overlap + contains·contains`, in [0, 1]."""
    q, t = terms(query), terms(text)
    return weights.bigram * bigram_overlap(q, t) + weights.contains * contains(q, t, weight)


def rarity_weights(documents: Iterable[tuple[str, ...]], only: Iterable[str] | None = None) -> TermWeight:
    """BM25-style inverse document frequency over the given texts' terms.

    With `only`, document frequencies are counted for those terms alone (the
    weight of any other term is then that of a term no text has).
    """
    docs = list(documents)
    counted = None if only is None else set(only)
    frequency: dict[str, int] = {}
    for doc in docs:
        for term in set(doc) if counted is None else counted.intersection(doc):
            frequency[term] = frequency.get(term, 0) + 1
    n = len(docs)

    def weight(term: str) -> float:
        df = frequency.get(term, 0)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    return weight


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
    """Full score of one memory text for one query (uniform term weights)."""
    return combined_score(
        match_score(query, text, weights),
        decay_factor(last_seen, now, half_life_hours),
        importance,
        weights,
    )
