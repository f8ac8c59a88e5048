"""A growable matrix of unit vectors keyed by id, with O(1) add, replace and remove.

Vectors are stored as columns (`dimensions × capacity`, C order): one
dimension of every vector is one contiguous row. A query that is zero on most
dimensions (the hashing embedder's: 12–40 of 256 are set) then reads only the
rows it needs — about a tenth of the matrix — instead of all of it; a dense
query (a model's) is one matrix-vector product as before.

The products are cut into blocks of at most `BLOCK_ELEMENTS` matrix cells.
OpenBLAS runs a matrix-vector product on several threads above ~460,000
cells, and on a shared two-core machine waiting for the second thread is what
makes the latency tail (milliseconds, against ~0.2 ms for the product itself);
below that size it stays on the calling thread, whatever the BLAS settings.
"""

from __future__ import annotations

import numpy as np

BLOCK_ELEMENTS = 1 << 18
SPARSE_SHARE = 0.5
"""A query with non-zeros on at most this share of the dimensions reads only those rows."""


class VectorTable:
    """Vectors addressed by id; `scores(v)` is their dot products with `v`, in `ids` order."""

    def __init__(self, dimensions: int, capacity: int = 16) -> None:
        self.dimensions = dimensions
        self._columns = np.zeros((dimensions, capacity), dtype=np.float32)
        self._ids: list[str] = []
        self._rows: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._ids)

    def copy(self) -> VectorTable:
        """An independent copy (the matrix copied at its used width, plus room to grow)."""
        twin = VectorTable(self.dimensions, max(16, len(self._ids)))
        twin._columns[:, : len(self._ids)] = self._columns[:, : len(self._ids)]
        twin._ids = list(self._ids)
        twin._rows = dict(self._rows)
        return twin

    @property
    def ids(self) -> list[str]:
        return self._ids

    def put(self, key: str, vector: np.ndarray) -> None:
        slot = self._rows.get(key)
        if slot is None:
            slot = len(self._ids)
            if slot == self._columns.shape[1]:
                grown = np.zeros((self.dimensions, 2 * slot), dtype=np.float32)
                grown[:, :slot] = self._columns
                self._columns = grown
            self._ids.append(key)
            self._rows[key] = slot
        self._columns[:, slot] = vector

    def remove(self, key: str) -> None:
        slot = self._rows.pop(key, None)
        if slot is None:
            return
        last = len(self._ids) - 1
        if slot != last:
            moved = self._ids[last]
            self._columns[:, slot] = self._columns[:, last]
            self._ids[slot] = moved
            self._rows[moved] = slot
        self._ids.pop()

    def vector(self, key: str) -> np.ndarray | None:
        """A copy of the stored vector, or None."""
        slot = self._rows.get(key)
        return None if slot is None else self._columns[:, slot].copy()

    def scores(self, vector: np.ndarray) -> np.ndarray:
        """Dot product of every stored vector with `vector` (float32), in `ids` order."""
        n = len(self._ids)
        query = np.asarray(vector, dtype=np.float32)
        nonzero = np.flatnonzero(query)
        if len(nonzero) <= SPARSE_SHARE * self.dimensions:
            if not len(nonzero):
                return np.zeros(n, dtype=np.float32)
            return _blocked_product(query[nonzero], self._columns[nonzero, :n])
        return _blocked_product(query, self._columns[:, :n])

    def top(self, vector: np.ndarray, limit: int) -> list[tuple[str, float]]:
        """The `limit` best (id, score) pairs, best first, equal scores by id. Of the vectors tied with
        the `limit`-th score, the smallest ids are taken, so the choice does not depend on the order the
        vectors were stored in (an index rebuilt after a restart picks the same ones)."""
        n = len(self._ids)
        if not n or limit <= 0:
            return []
        scores = self.scores(vector)
        if limit >= n:
            chosen = np.arange(n)
        else:
            kth = np.partition(scores, n - limit)[n - limit]
            above = np.flatnonzero(scores > kth)
            tied_all = np.flatnonzero(scores == kth)
            tied = np.array(sorted(tied_all.tolist(), key=lambda i: self._ids[i])[: limit - len(above)], dtype=np.int64)
            chosen = np.concatenate([above, tied])
        ids = self._ids
        pairs = [(ids[i], s) for i, s in zip(chosen.tolist(), scores[chosen].tolist())]
        pairs.sort(key=lambda p: (-p[1], p[0]))
        return pairs


def _blocked_product(query: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """`query @ columns`, a block of columns at a time (each block below OpenBLAS's threading size)."""
    rows, n = columns.shape
    step = max(1, BLOCK_ELEMENTS // max(1, rows))
    if n <= step:
        return query @ columns
    out = np.empty(n, dtype=np.float32)
    for start in range(0, n, step):
        np.matmul(query, columns[:, start:start + step], out=out[start:start + step])
    return out
