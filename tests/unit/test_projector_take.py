"""The projector takes the records already fetched at once and waits only when there are none."""

from __future__ import annotations

from typing import Any

from engram.distributed.projector import take


class FakeConsumer:
    """A fetched-records queue; `poll(wait)` delivers the next arrival (as if it came within `wait`)."""

    def __init__(self, fetched: list[str], arriving: list[list[str]]) -> None:
        self.fetched = fetched
        self.arriving = arriving
        self.waits: list[float] = []

    def consume(self, limit: int, timeout: float) -> list[str]:
        self.waits.append(timeout)
        out, self.fetched = self.fetched[:limit], self.fetched[limit:]
        return out

    def poll(self, timeout: float) -> Any:
        self.waits.append(timeout)
        if not self.arriving:
            return None
        self.fetched = self.arriving.pop(0)
        return self.fetched.pop(0)


def test_records_already_fetched_are_taken_without_waiting() -> None:
    consumer = FakeConsumer(["a", "b", "c"], [])
    assert take(consumer, 2, 0.05) == ["a", "b"]  # type: ignore[arg-type]
    assert consumer.waits == [0]


def test_with_nothing_fetched_the_first_arrival_and_what_came_with_it_are_taken() -> None:
    consumer = FakeConsumer([], [["a", "b", "c"]])
    assert take(consumer, 10, 0.05) == ["a", "b", "c"]  # type: ignore[arg-type]
    assert consumer.waits == [0, 0.05, 0]  # one wait, for the first record only


def test_a_quiet_stream_waits_once_and_takes_nothing() -> None:
    consumer = FakeConsumer([], [])
    assert take(consumer, 10, 0.05) == []  # type: ignore[arg-type]
    assert consumer.waits == [0, 0.05]
