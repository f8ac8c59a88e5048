"""The SharedWaiter's cause index stays within its byte bound, dropping the oldest causes first."""

from __future__ import annotations

from collections import OrderedDict

import pytest

from engram.distributed import applied
from engram.distributed.applied import SharedWaiter


def _index() -> SharedWaiter:
    waiter = SharedWaiter.__new__(SharedWaiter)  # the index only: no Kafka behind it
    waiter._by_cause = OrderedDict()
    waiter._indexed_bytes = 0
    return waiter


def _add(waiter: SharedWaiter, cause: str, size: int) -> None:
    waiter._by_cause.setdefault(cause, []).append((("t", 0), 0, f"e-{cause}", b"x" * size))
    waiter._indexed_bytes += size


def test_the_oldest_causes_go_when_the_bytes_exceed_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(applied, "FOLLOW_BYTES", 1000)
    waiter = _index()
    for n in range(12):
        _add(waiter, f"c{n}", 100)
    waiter._drop_oldest()
    assert list(waiter._by_cause) == [f"c{n}" for n in range(2, 12)]
    assert waiter._indexed_bytes == 1000


def test_a_cause_with_several_records_frees_all_their_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(applied, "FOLLOW_BYTES", 500)
    waiter = _index()
    for _ in range(4):
        _add(waiter, "busy", 100)
    _add(waiter, "late", 200)
    waiter._drop_oldest()
    assert list(waiter._by_cause) == ["late"] and waiter._indexed_bytes == 200
