"""The one relevance scorer shared by recall, merge and eviction. Pure: `now` is passed in.

`score = w_match·match + w_decay·decay + w_importance·importance` with
`match = w_lexical·lexical + w_semantic·semantic` (the two channels, each in
[0, 1]: `lexical = w_bm25·BM25 + (1 − w_bm25)·phrase`, `phrase =
w_bigram·bigram_overlap + w_contains·contains`, `semantic` the embedder's
cosine scaled to the best candidate), raised to `w_domain·domain` when the memory is in a domain the
question implies (`core.domains`: a question about dinner lifts the diet without naming it), and
`decay = floor + (1 − floor)·0.5 ** (Δt / half_life)`, Δt in whole hours.

Terms are Latin words and CJK character bigrams (`core.text.terms`), so
`bigram_overlap` is the share of the query's adjacent term pairs that the text
also has (phrases in English, character runs in Chinese), and `contains` is
the share of the query's terms the text contains, each term weighted by how
rare it is among the texts being compared (uniform when no weights are given).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
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


def decay_factor(last_seen: datetime, now: datetime, half_life_hours: float, floor: float = 0.0) -> float:
    """`floor + (1 − floor)·0.5 ** (Δt / half_life)` with Δt in whole hours; in [floor, 1].

    A floor keeps an old fact of a long history within reach: age lowers its
    score by at most `w_decay·(1 − floor)`, whatever its age.
    """
    hours = max(0, int((now - last_seen).total_seconds() // 3600))
    return floor + (1.0 - floor) * 0.5 ** (hours / half_life_hours)


@dataclass(frozen=True)
class ScoreParts:
    """One memory's score and the components it was made of (what `--json` and the API report)."""

    lexical: float
    semantic: float
    match: float
    decay: float
    importance: float
    score: float
    domain: float = 0.0

    def as_details(self) -> dict[str, float]:
        return {name: round(getattr(self, name), 4)
                for name in ("lexical", "semantic", "domain", "match", "decay", "importance")}


def lexical_score(bm25: float, phrase: float, weights: RecallWeights) -> float:
    """`bm25·BM25 + (1 − bm25)·phrase`, both already in [0, 1]."""
    return weights.bm25 * bm25 + (1.0 - weights.bm25) * phrase


def fused_match(lexical: float, semantic: float, weights: RecallWeights) -> float:
    """`match = lexical_w·lexical + semantic_w·semantic`: the two channels in one [0, 1] score."""
    return weights.lexical * lexical + weights.semantic * semantic


def score_parts(lexical: float, semantic: float, decay: float, importance: float,
                weights: RecallWeights, domain: float = 0.0) -> ScoreParts:
    """The S1 score of fused channels, with its components. `domain` in [0, 1]: how far the memory is in
    a domain the question implies; it raises `match` to at least `w_domain·domain`."""
    match = max(fused_match(lexical, semantic, weights), weights.domain * domain)
    return ScoreParts(lexical, semantic, match, decay, importance,
                      combined_score(match, decay, importance, weights), domain)


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
