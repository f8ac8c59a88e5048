"""In-process index of one user's recorded turns (user and assistant, redacted): BM25 on Engram's terms,
the same ranking as the memories' keyword channel, and each turn's vector, so a turn no note was extracted
from is still found by what was said in it and by what it meant. A turn is also found by the turn it
answers (the one just before it in its session, said by the other role): "28. Kg3 would be my move" by the
question about move 27, as a memory is found by the turn it answers.

The index only grows: a turn is appended as a row (its postings, length and vector), and a withdrawn turn
(the source of a forgotten memory) becomes a tombstone, its row dead and its key never indexed again, even
when the turn is applied again (replay, redelivery). The turn that answers a withdrawn turn is re-appended
without the withdrawn words (its old row dies). One writer appends; any number of readers search a
`TurnView`, a frozen prefix of the rows with the tombstones as they were, without a lock: a row below a
view's length, and its postings and vector, never change once written, and the writer only appends past it.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from engram.core.text import terms
from engram.core.vector_table import SPARSE_SHARE, _blocked_product

from .hybrid_index import BM25_B, BM25_K1
from .ports import RecentTurn, TurnEmbedder, TurnHit

MIN_COLUMNS = 64
FEW_DIMENSIONS = 32
"""A query vector with at most this many non-zero dimensions (the hashing embedder's) is scored a
dimension at a time over contiguous rows."""


def turn_key(session: str, message_id: str) -> str:
    return f"{session}\x1f{message_id}"


class TurnIndex:
    """The turns of one (tenant, user): one writer appends and withdraws; readers search `view()`s."""

    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions
        self._turns: list[RecentTurn] = []
        """Row -> turn (a turn re-indexed without a withdrawn turn's words has a second row)."""
        self._row_of: dict[str, int] = {}
        """Key -> the turn's live row."""
        self._seen: set[str] = set()
        self._withdrawn: frozenset[str] = frozenset()
        self._dead = np.zeros(MIN_COLUMNS, dtype=np.bool_)
        self._lengths: array[float] = array("d")
        self._positions: array[int] = array("q")
        self._postings: dict[str, tuple[array[int], array[float]]] = {}
        self._columns = np.zeros((dimensions, MIN_COLUMNS), dtype=np.float32)
        self._live = 0
        self._total_length = 0.0
        self._last: dict[str, tuple[RecentTurn, bool, tuple[str, ...]]] = {}
        """The latest turn of each session by position, whether it is withdrawn, and its terms."""
        self._answered_by: dict[str, str] = {}
        self._view: TurnView | None = None
        """Key of a turn -> key of the turn indexed with its words (the one answering it)."""

    def __len__(self) -> int:
        return self._live

    @property
    def rows(self) -> int:
        return len(self._turns)

    # -- the writer's side ---------------------------------------------------------------------------
    def put(self, turn: RecentTurn, vector: np.ndarray | None, withdrawn: bool = False) -> None:
        """Index a turn once (a turn applied again is the same turn; a withdrawn one stays withdrawn)."""
        key = turn_key(turn.session_id, turn.message_id)
        if key in self._seen:
            return
        self._seen.add(key)
        self._view = None
        withdrawn = withdrawn or key in self._withdrawn
        if withdrawn:
            self._withdrawn = self._withdrawn | {key}
        own = terms(turn.content)
        last = self._last.get(turn.session_id)
        answered = None if last is None or last[1] else answered_turn(last[0], turn)
        if last is None or turn.position > last[0].position:
            self._last[turn.session_id] = (turn, withdrawn, own)
        if withdrawn:
            return
        if answered is not None and last is not None:
            self._answered_by[turn_key(answered.session_id, answered.message_id)] = key
            self._append(key, turn, own + own + last[2], vector)  # = terms(searchable_turn(turn, answered))
        else:
            self._append(key, turn, own + own, vector)

    def withdraw(self, keys: list[tuple[str, str]]) -> None:
        """Those (session, message id) turns are evidence no more, now and if they are applied again; the
        turn answering one is indexed by its own words only."""
        gone = {turn_key(session, message_id) for session, message_id in keys}
        self._withdrawn = self._withdrawn | gone
        self._view = None
        for key in gone:
            row = self._row_of.get(key)
            if row is not None:
                turn = self._turns[row]
                self._kill(key, row)
                last = self._last.get(turn.session_id)
                if last is not None and last[0] == turn:
                    self._last[turn.session_id] = (turn, True, ())
            answer = self._answered_by.pop(key, None)
            answer_row = self._row_of.get(answer) if answer is not None else None
            if answer is not None and answer_row is not None:
                answer_turn, vector = self._turns[answer_row], self._columns[:, answer_row].copy()
                self._kill(answer, answer_row)
                self._append(answer, answer_turn, terms(searchable_turn(answer_turn, None)), vector)

    def view(self) -> TurnView:
        """What readers search: the rows so far, the tombstones as they are now (the same view until the
        next change: what a view computes once, its BM25 norms, is computed once per change)."""
        n = len(self._turns)
        if self._view is None:
            self._view = TurnView(self, n, self._dead[:n].copy(), self._withdrawn, self._live, self._total_length)
        return self._view

    def _append(self, key: str, turn: RecentTurn, doc_terms: tuple[str, ...], vector: np.ndarray | None) -> None:
        row = len(self._turns)
        if row == self._columns.shape[1]:
            self._grow(2 * row)
        if vector is not None:
            self._columns[:, row] = vector
        for term, count in Counter(doc_terms).items():
            posting = self._postings.get(term)
            if posting is None:
                posting = (array("q"), array("d"))
            posting[0].append(row)
            posting[1].append(count)
            self._postings[term] = posting
        self._lengths.append(len(doc_terms))
        self._positions.append(turn.position)
        self._total_length += len(doc_terms)
        self._live += 1
        self._row_of[key] = row
        self._turns.append(turn)  # last: a reader's view never reaches a row still being written

    def _kill(self, key: str, row: int) -> None:
        del self._row_of[key]
        self._dead[row] = True
        self._live -= 1
        self._total_length -= self._lengths[row]

    def _grow(self, capacity: int) -> None:
        """New arrays (views already handed out keep the old ones, whose rows are all they read)."""
        columns = np.zeros((self.dimensions, capacity), dtype=np.float32)
        columns[:, : self._columns.shape[1]] = self._columns
        dead = np.zeros(capacity, dtype=np.bool_)
        dead[: len(self._dead)] = self._dead
        self._columns, self._dead = columns, dead


@dataclass(frozen=True)
class TurnView:
    """A reader's frozen look at a `TurnIndex`: its first `n` rows, `dead` and `withdrawn` as they were."""

    index: TurnIndex
    n: int
    dead: np.ndarray
    withdrawn: frozenset[str]
    live: int
    total_length: float

    def __len__(self) -> int:
        return self.live

    def turn(self, session: str, message_id: str) -> RecentTurn | None:
        key = turn_key(session, message_id)
        if key in self.withdrawn or key not in self.index._seen:
            return None
        row = self.index._row_of.get(key)
        if row is not None and row < self.n and not self.dead[row]:
            return self.index._turns[row]
        return self._older_row(key)

    def _older_row(self, key: str) -> RecentTurn | None:
        """A turn the writer re-indexed or withdrew after this view: its row live here, if any."""
        for row in range(self.n):
            turn = self.index._turns[row]
            if not self.dead[row] and turn_key(turn.session_id, turn.message_id) == key:
                return turn
        return None

    def search(self, query: str, vector: np.ndarray | None, limit: int) -> list[TurnHit]:
        """The union of the best `limit` by BM25 (scaled to its best) and the best `limit` by cosine."""
        if not self.live or limit <= 0:
            return []
        sparse = self._keyword_rows(query, limit)
        dense = self._vector_rows(vector, limit) if vector is not None else {}
        turns = self.index._turns
        hits = [TurnHit(turns[row], sparse.get(row, 0.0), dense.get(row, 0.0)) for row in set(sparse) | set(dense)]
        return ranked_turns(hits)

    @cached_property
    def _norms(self) -> np.ndarray:
        """BM25's `k1·(1 − b + b·len/avgdl)` per row (computed once per view: a view never changes)."""
        lengths = np.frombuffer(self.index._lengths[: self.n], dtype=np.float64)
        return BM25_K1 * (1 - BM25_B + BM25_B * lengths / (self.total_length / self.live or 1.0))

    @cached_property
    def _positions(self) -> np.ndarray:
        return np.frombuffer(self.index._positions[: self.n], dtype=np.int64)

    @cached_property
    def _any_dead(self) -> bool:
        return bool(self.dead.any())

    def _keyword_rows(self, query: str, limit: int) -> dict[int, float]:
        n, postings, norms = self.n, self.index._postings, self._norms
        totals = np.zeros(n, dtype=np.float64)
        for term in set(terms(query)):
            posting = postings.get(term)
            if posting is None:
                continue
            rows = np.frombuffer(posting[0][:], dtype=np.int64)  # a slice is a copy made under the GIL
            tfs = np.frombuffer(posting[1][:], dtype=np.float64)
            m = min(len(rows), len(tfs))
            cut = m if not m or rows[m - 1] < n else int(np.searchsorted(rows[:m], n))  # rows only grow
            rows, tfs = rows[:cut], tfs[:cut]
            if self._any_dead:
                keep = ~self.dead[rows]
                rows, tfs = rows[keep], tfs[keep]
            if not len(rows):
                continue
            idf = math.log(1 + (self.live - len(rows) + 0.5) / (len(rows) + 0.5))
            totals[rows] += idf * tfs * (BM25_K1 + 1) / (tfs + norms[rows])
        return self._best(totals, limit, scaled=True)

    def _vector_rows(self, vector: np.ndarray, limit: int) -> dict[int, float]:
        columns, n = self.index._columns, self.n
        query = np.asarray(vector, dtype=np.float32)
        nonzero = np.flatnonzero(query)
        if not len(nonzero) or not n:
            return {}
        if len(nonzero) <= FEW_DIMENSIONS:  # row by row: no gathered copy of the rows
            scores = np.zeros(n, dtype=np.float32)
            scratch = np.empty(n, dtype=np.float32)
            for dim in nonzero.tolist():
                np.multiply(columns[dim, :n], query[dim], out=scratch)
                scores += scratch
        elif len(nonzero) <= SPARSE_SHARE * self.index.dimensions:
            scores = _blocked_product(query[nonzero], columns[nonzero, :n])
        else:
            scores = _blocked_product(query, columns[:, :n])
        if self._any_dead:
            scores[self.dead] = 0.0
        return self._best(scores, limit, scaled=False)

    def _best(self, totals: np.ndarray, limit: int, scaled: bool) -> dict[int, float]:
        """The best `limit` rows with a score above 0 (scaled to the best one), ties by log position."""
        hits = np.flatnonzero(totals > 0)
        if not len(hits):
            return {}
        if len(hits) > limit:
            kth = np.partition(totals[hits], len(hits) - limit)[len(hits) - limit]
            hits = hits[totals[hits] >= kth]
        best = hits[np.lexsort((self._positions[hits], -totals[hits]))][:limit]
        top = float(totals[best[0]]) if scaled else 1.0
        return {int(row): float(totals[row]) / top for row in best}


def ranked_turns(hits: list[TurnHit]) -> list[TurnHit]:
    """Best first by the sum of the channels' scores (as the memories' hybrid search), ties by log position."""
    return sorted(hits, key=lambda h: (-(h.keyword_score + h.vector_score), h.turn.position, h.turn.message_id))


def turn_vectors(embed: TurnEmbedder | None, texts: list[str]) -> list[np.ndarray | None]:
    """The texts' vectors in one embedder call; when that call fails, one call per text, and a text the
    embedder still fails on has none (its turn is found by keywords only: a turn is never lost to it)."""
    if embed is None or not texts:
        return [None] * len(texts)
    try:
        return list(np.asarray(embed(texts), dtype=np.float32))
    except Exception:  # noqa: BLE001 - any embedder failure: retried text by text below
        out: list[np.ndarray | None] = []
        for text in texts:
            try:
                out.append(np.asarray(embed([text]), dtype=np.float32)[0])
            except Exception:  # noqa: BLE001
                out.append(None)
        return out


def answered_turn(previous: RecentTurn | None, turn: RecentTurn) -> RecentTurn | None:
    """The turn `turn` answers: the previous turn of its session when the other role said it."""
    if previous is None or previous.role == turn.role or previous.position > turn.position:
        return None
    return previous


def searchable_turn(turn: RecentTurn, answered: RecentTurn | None) -> str:
    """What a turn is found by: its own text, counted twice so that it outranks the turn that answers it,
    and the text of the turn it answers."""
    own = f"{turn.content} {turn.content}"
    return own if answered is None else f"{own} {answered.content}"
