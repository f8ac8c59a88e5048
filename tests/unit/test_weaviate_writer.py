"""The background writer of the Weaviate store: one write at a time, in order, retried, a failure sticky."""

from __future__ import annotations

import threading

import pytest

from engram.projections import weaviate_writer
from engram.projections.weaviate_writer import BackgroundWriter


def test_writes_run_one_at_a_time_in_the_order_handed_off() -> None:
    writer, done = BackgroundWriter(), list[int]()
    gate = threading.Event()

    def slow(rows: list[int]) -> None:
        gate.wait(5)
        done.extend(rows)

    writer.submit(slow, [1, 2])
    assert writer.busy
    gate.set()
    writer.submit(done.extend, [3])  # waits for the first write before it starts
    writer.wait()
    assert done == [1, 2, 3] and not writer.busy
    writer.close()


def test_a_write_that_fails_now_and_then_is_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(weaviate_writer.time, "sleep", lambda _s: None)
    writer, attempts = BackgroundWriter(), list[list[int]]()

    def flaky(rows: list[int]) -> None:
        attempts.append(rows)
        if len(attempts) < 3:
            raise ConnectionError("weaviate busy")

    writer.submit(flaky, [7]).result()
    writer.wait()
    assert attempts == [[7], [7], [7]]
    writer.close()


def test_a_failed_write_fails_every_later_wait_and_hand_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(weaviate_writer.time, "sleep", lambda _s: None)
    writer, later = BackgroundWriter(), list[int]()

    def broken(_rows: list[int]) -> None:
        raise ConnectionError("weaviate gone")

    writer.submit(broken, [1])
    for _ in range(2):
        with pytest.raises(RuntimeError, match="weaviate gone"):
            writer.wait()
    with pytest.raises(RuntimeError):
        writer.submit(later.extend, [2])  # nothing is written after a lost write
    assert later == []
    writer.close()
