"""In-process hybrid index of one user's active memories: dense vectors plus BM25."""

from __future__ import annotations

import math
from array import array
from collections import Counter

import numpy as np

from engram.core.text import terms
from engram.core.vector_table import VectorTable
from engram.schemas.memory import MemoryRecord
from engram.projections.ports import profile_order

BM25_K1 = 1.2
BM25_B = 0.75


def searchable_text(record: MemoryRecord, context: str = "") -> str:
    """What the keyword channel indexes: content, entities (the speaker among them), keywords and
    the context it was said in (the neighbouring turn it answers). Search returns the memory itself."""
    return " ".join((record.content, *record.entities, *record.keywords, *((context,) if context else ())))


class KeywordIndex:
    """BM25 over documents given as term tuples; postings are arrays scored with numpy.

    A document keeps its row for life (freed rows are reused), so a write
    touches only its own postings. Scores are the same floats, term by term,
    as the textbook per-document loop.
    """

    def __init__(self) -> None:
        self._rows: dict[str, int] = {}
        self._ids: list[str | None] = []
        self._free: list[int] = []
        self._lengths = np.zeros(16, dtype=np.float64)
        self._total_length = 0
        self._postings: dict[str, tuple[array[int], array[float]]] = {}
        self._norms: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self._rows)

    def copy(self) -> KeywordIndex:
        """An independent copy (the postings' arrays copied): changing one leaves the other as it was."""
        twin = KeywordIndex()
        twin._rows = dict(self._rows)
        twin._ids = list(self._ids)
        twin._free = list(self._free)
        twin._lengths = self._lengths.copy()
        twin._total_length = self._total_length
        twin._postings = {term: (array("q", rows), array("d", tfs)) for term, (rows, tfs) in self._postings.items()}
        return twin

    def add(self, doc_id: str, doc_terms: tuple[str, ...]) -> None:
        row = self._free.pop() if self._free else self._new_row()
        self._rows[doc_id] = row
        self._ids[row] = doc_id
        for term, count in Counter(doc_terms).items():
            posting = self._postings.get(term)
            if posting is None:
                posting = self._postings[term] = (array("q"), array("d"))
            posting[0].append(row)
            posting[1].append(count)
        self._lengths[row] = len(doc_terms)
        self._total_length += len(doc_terms)
        self._norms = None

    def discard(self, doc_id: str, doc_terms: tuple[str, ...]) -> None:
        row = self._rows.pop(doc_id, None)
        if row is None:
            return
        for term in set(doc_terms):
            rows, tfs = self._postings[term]
            slot, last = rows.index(row), len(rows) - 1
            rows[slot], tfs[slot] = rows[last], tfs[last]
            rows.pop()
            tfs.pop()
            if not rows:
                del self._postings[term]
        self._total_length -= len(doc_terms)
        self._lengths[row] = 0
        self._ids[row] = None
        self._free.append(row)
        self._norms = None

    def search(self, query: str, limit: int) -> dict[str, float]:
        """BM25 scores of the best `limit` documents, normalised to [0, 1] by the best hit."""
        n = len(self._rows)
        if not n:
            return {}
        norms = self._length_norms(n)
        totals = np.zeros(len(self._ids), dtype=np.float64)
        for term in set(terms(query)):
            posting = self._postings.get(term)
            if posting is None:
                continue
            # copies, not views: a live view would block the next append to the posting
            rows = np.array(posting[0], dtype=np.int64)
            tfs = np.array(posting[1], dtype=np.float64)
            df = len(rows)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            totals[rows] += idf * tfs * (BM25_K1 + 1) / (tfs + norms[rows])
        return self._best(totals, limit)

    def _best(self, totals: np.ndarray, limit: int) -> dict[str, float]:
        hits = np.flatnonzero(totals)
        if not len(hits) or limit <= 0:
            return {}
        if len(hits) > limit:  # keep every document tied with the limit-th score: ids break ties below
            kth = np.partition(totals[hits], len(hits) - limit)[len(hits) - limit]
            hits = hits[totals[hits] >= kth]
        scored = [(self._ids[row] or "", float(totals[row])) for row in hits.tolist()]
        best = sorted(scored, key=lambda kv: (-kv[1], kv[0]))[:limit]
        top = best[0][1]
        return {doc_id: score / top for doc_id, score in best}

    def _length_norms(self, n: int) -> np.ndarray:
        """`k1·(1 − b + b·len/avgdl)` per row, recomputed after a write."""
        if self._norms is None:
            avgdl = self._total_length / n or 1.0
            self._norms = BM25_K1 * (1 - BM25_B + BM25_B * self._lengths[: len(self._ids)] / avgdl)
        return self._norms

    def _new_row(self) -> int:
        row = len(self._ids)
        if row == len(self._lengths):
            self._lengths = np.concatenate([self._lengths, np.zeros_like(self._lengths)])
        self._ids.append(None)
        return row


class UserIndex:
    """Vectors and an inverted index for one (tenant, user). Not thread-safe."""

    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions
        self.records: dict[str, MemoryRecord] = {}
        self.terms: dict[str, tuple[str, ...]] = {}
        self._vectors: dict[str, np.ndarray] = {}
        self._keywords = KeywordIndex()
        self._table = VectorTable(dimensions)
        self._versions: dict[str, int] = {}
        self.persona: dict[str, MemoryRecord] = {}
        self._profile_order: list[MemoryRecord] | None = None

    def profile_top(self, limit: int) -> list[MemoryRecord]:
        """The best `limit` L3 entries by `profile_order`, sorted once per change of the profile."""
        if self._profile_order is None:
            self._profile_order = sorted(self.persona.values(), key=profile_order)
        return self._profile_order[:limit]

    def __len__(self) -> int:
        return len(self.records)

    def copy(self) -> UserIndex:
        """An independent copy for copy-on-write snapshots: records and vectors are shared (never
        changed in place), the tables that `put` and `remove` change are copied."""
        twin = UserIndex(self.dimensions)
        twin.records = dict(self.records)
        twin.terms = dict(self.terms)
        twin._vectors = dict(self._vectors)
        twin._keywords = self._keywords.copy()
        twin._table = self._table.copy()
        twin._versions = dict(self._versions)
        twin.persona = dict(self.persona)
        return twin

    def put(self, record: MemoryRecord, vector: np.ndarray, context: str = "") -> None:
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
            self._profile_order = None
        self._vectors[record.memory_id] = vector
        self._table.put(record.memory_id, vector)
        doc_terms = terms(searchable_text(record, context))
        self.terms[record.memory_id] = doc_terms
        self._keywords.add(record.memory_id, doc_terms)

    def forget(self, memory_id: str) -> None:
        """Remove a deleted memory for good (a later re-creation starts from version 1)."""
        self._versions.pop(memory_id, None)
        self.remove(memory_id)

    def remove(self, memory_id: str) -> None:
        old = self.records.pop(memory_id, None)
        if old is None:
            return
        if self.persona.pop(memory_id, None) is not None:
            self._profile_order = None
        del self._vectors[memory_id]
        self._table.remove(memory_id)
        self._keywords.discard(memory_id, self.terms.pop(memory_id))

    def vector_of(self, memory_id: str) -> np.ndarray | None:
        return self._vectors.get(memory_id)

    def vector_search(self, vector: np.ndarray, limit: int) -> dict[str, float]:
        """The `limit` best cosines, best first (one blocked matrix-vector product over the user's vectors)."""
        return dict(self._table.top(vector, limit))

    def keyword_search(self, query: str, limit: int) -> dict[str, float]:
        """BM25 scores normalised to [0, 1] by the best hit."""
        return self._keywords.search(query, limit)
