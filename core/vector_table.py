"""A growable matrix of unit vectors keyed by id, with O(1) add, replace and remove."""

from __future__ import annotations

import numpy as np


class VectorTable:
    """Rows of a float32 matrix addressed by id; `scores(v)` is one matrix product."""

    def __init__(self, dimensions: int, capacity: int = 16) -> None:
        self._matrix = np.zeros((capacity, dimensions), dtype=np.float32)
        self._ids: list[str] = []
        self._rows: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._ids)

    @property
    def ids(self) -> list[str]:
        return self._ids

    def put(self, key: str, vector: np.ndarray) -> None:
        row = self._rows.get(key)
        if row is None:
            row = len(self._ids)
            if row == len(self._matrix):
                self._matrix = np.concatenate([self._matrix, np.zeros_like(self._matrix)])
            self._ids.append(key)
            self._rows[key] = row
        self._matrix[row] = vector

    def remove(self, key: str) -> None:
        row = self._rows.pop(key, None)
        if row is None:
            return
        last = len(self._ids) - 1
        if row != last:
            moved = self._ids[last]
            self._matrix[row] = self._matrix[last]
            self._ids[row] = moved
            self._rows[moved] = row
        self._ids.pop()

    def scores(self, vector: np.ndarray) -> np.ndarray:
        """Dot product of every row with `vector`, in `ids` order."""
        return self._matrix[: len(self._ids)] @ vector
