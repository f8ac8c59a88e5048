"""Raw-turn retrieval baselines for the LoCoMo benchmark: BM25, dense MiniLM and their RRF hybrid.

Each ranks ALL raw turns of one conversation for a question; a turn is one
item whose provenance is its own dia_id.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np

from engram.core.text import terms

RRF_K = 60


class BM25:
    """Okapi BM25 (k1 1.2, b 0.75) over Engram's own terms (stemmed Latin words, CJK bigrams)."""

    def __init__(self, docs: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.tfs = [Counter(terms(d)) for d in docs]
        self.lengths = [sum(tf.values()) for tf in self.tfs]
        self.avg = (sum(self.lengths) / len(self.lengths)) if self.lengths else 0.0
        df: Counter[str] = Counter()
        for tf in self.tfs:
            df.update(tf.keys())
        n = len(docs)
        self.idf = {t: math.log(1.0 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.postings: dict[str, list[int]] = {}
        for i, tf in enumerate(self.tfs):
            for t in tf:
                self.postings.setdefault(t, []).append(i)

    def scores(self, query: str) -> dict[int, float]:
        out: dict[int, float] = {}
        for t in set(terms(query)):
            idf = self.idf.get(t)
            if idf is None:
                continue
            for i in self.postings[t]:
                f = self.tfs[i][t]
                norm = f * (self.k1 + 1) / (f + self.k1 * (1 - self.b + self.b * self.lengths[i] / (self.avg or 1)))
                out[i] = out.get(i, 0.0) + idf * norm
        return out

    def rank(self, query: str) -> list[int]:
        """Documents with any matching term, best first (ties by position)."""
        scored = self.scores(query)
        return sorted(scored, key=lambda i: (-scored[i], i))


class Dense:
    """Cosine ranking over precomputed unit-length turn embeddings."""

    def __init__(self, doc_vectors: np.ndarray) -> None:
        self.vectors = doc_vectors

    def rank(self, query_vector: np.ndarray) -> list[int]:
        if len(self.vectors) == 0:
            return []
        sims = self.vectors @ query_vector
        return [int(i) for i in np.lexsort((np.arange(len(sims)), -sims))]


def rrf(*rankings: Sequence[int], k: int = RRF_K) -> list[int]:
    """Reciprocal rank fusion: sum of 1 / (k + rank) over the rankings, best first."""
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, doc in enumerate(ranking, start=1):
            fused[doc] = fused.get(doc, 0.0) + 1.0 / (k + rank)
    return sorted(fused, key=lambda d: (-fused[d], d))
