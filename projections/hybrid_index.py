"""In-process hybrid index of one user's active memories: dense vectors plus BM25."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from engram.core.text import terms
from engram.core.vector_table import VectorTable
from engram.schemas.memory import MemoryRecord

BM25_K1 = 1.2
BM25_B = 0.75


def searchable_text(record: MemoryRecord) -> str:
    """What the keyword channel indexes: content, entities and keywords."""
    return " ".join((record.content, *record.entities, *record.keywords))


class UserIndex:
    """Vectors and an inverted index for one (tenant, user). Not thread-safe."""

    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions
        self.records: dict[str, MemoryRecord] = {}
        self._vectors: dict[str, np.ndarray] = {}
        self._postings: dict[str, dict[str, int]] = defaultdict(dict)
        self._lengths: dict[str, int] = {}
        self._table = VectorTable(dimensions)
        self._versions: dict[str, int] = {}
        self.persona: dict[str, MemoryRecord] = {}

    def __len__(self) -> int:
        return len(self.records)

    def put(self, record: MemoryRecord, vector: np.ndarray) -> None:
        """Index a record version; an older version than the one seen is ignored."""
        if self._versions.get(record.memory_id, 0) >= record.version:
            return
        self._versions[record.memory_id] = record.version
        self.remove(record.memory_id)
        if record.status != "active":
            return
        self.records[record.memory_id] = record
        if record.layer == "L3":
            self.persona[record.memory_id] = record
        self._vectors[record.memory_id] = vector
        self._table.put(record.memory_id, vector)
        counts: dict[str, int] = defaultdict(int)
        doc_terms = terms(searchable_text(record))
        for term in doc_terms:
            counts[term] += 1
        for term, count in counts.items():
            self._postings[term][record.memory_id] = count
        self._lengths[record.memory_id] = len(doc_terms)

    def forget(self, memory_id: str) -> None:
        """Remove a deleted memory for good (a later re-creation starts from version 1)."""
        self._versions.pop(memory_id, None)
        self.remove(memory_id)

    def remove(self, memory_id: str) -> None:
        old = self.records.pop(memory_id, None)
        if old is None:
            return
        self.persona.pop(memory_id, None)
        del self._vectors[memory_id]
        self._table.remove(memory_id)
        del self._lengths[memory_id]
        for term in set(terms(searchable_text(old))):
            postings = self._postings.get(term)
            if postings is not None:
                postings.pop(memory_id, None)
                if not postings:
                    del self._postings[term]

    def vector_of(self, memory_id: str) -> np.ndarray | None:
        return self._vectors.get(memory_id)

    def vector_search(self, vector: np.ndarray, limit: int) -> dict[str, float]:
        if not self.records:
            return {}
        scores = self._table.scores(vector)
        ids = self._table.ids
        k = min(limit, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        return {ids[i]: float(scores[i]) for i in top}

    def keyword_search(self, query: str, limit: int) -> dict[str, float]:
        """BM25 scores normalised to [0, 1] by the best hit."""
        n = len(self.records)
        if not n:
            return {}
        avgdl = sum(self._lengths.values()) / n or 1.0
        scores: dict[str, float] = defaultdict(float)
        for term in set(terms(query)):
            postings = self._postings.get(term)
            if not postings:
                continue
            idf = math.log(1 + (n - len(postings) + 0.5) / (len(postings) + 0.5))
            for memory_id, tf in postings.items():
                norm = tf + BM25_K1 * (1 - BM25_B + BM25_B * self._lengths[memory_id] / avgdl)
                scores[memory_id] += idf * tf * (BM25_K1 + 1) / norm
        if not scores:
            return {}
        best = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
        top = best[0][1]
        return {memory_id: score / top for memory_id, score in best}
