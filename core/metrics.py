"""Thread-safe monotonic counters by name (the access layer's requests and recalls, a runtime adapter's own)."""

from __future__ import annotations

import threading
from collections import Counter


class Metrics:
    """Monotonic counters by name; `snapshot` is what GET /v1/metrics serves."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()

    def add(self, name: str, value: int = 1) -> None:
        with self._lock:
            self._counts[name] += value

    def get(self, name: str) -> int:
        with self._lock:
            return self._counts[name]

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)
