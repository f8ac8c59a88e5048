"""The one retry helper of the Kafka adapters (`engram.distributed.kafka_retry`), without a broker.

The step is a plain callable that raises `KafkaException`s carrying the codes a broker
answers in its transient states; a fake clock makes the deadline exact.
"""

from __future__ import annotations

import asyncio

import pytest

from tests.services import import_client

confluent_kafka = import_client("confluent_kafka", "kafka")  # fails under CI=true instead of skipping

from confluent_kafka import KafkaError, KafkaException  # noqa: E402

from engram.distributed.kafka_retry import (  # noqa: E402
    Backoff, KafkaUnavailable, RetryPolicy, is_transient, retrying,
)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def failing(codes: list[int], result: str = "ok") -> tuple[list[int], object]:
    """A step raising KafkaException(code) for each of `codes` in turn, then returning `result`."""
    calls: list[int] = []

    def step() -> str:
        calls.append(1)
        if len(calls) <= len(codes):
            raise KafkaException(KafkaError(codes[len(calls) - 1], "broker says no"))
        return result

    return calls, step


@pytest.mark.parametrize("code", [
    KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE, KafkaError.UNKNOWN_TOPIC_OR_PART,
    KafkaError.COORDINATOR_LOAD_IN_PROGRESS, KafkaError._TRANSPORT, KafkaError._TIMED_OUT,
    KafkaError._ALL_BROKERS_DOWN, KafkaError.NOT_COORDINATOR,
])
def test_a_transient_error_is_retried_until_the_step_succeeds(code: int) -> None:
    clock = Clock()
    calls, step = failing([code, code, code])
    assert retrying(step, "reading watermarks", sleep=clock.sleep, clock=clock) == "ok"  # type: ignore[arg-type]
    assert len(calls) == 4
    assert clock.sleeps == [0.05, 0.1, 0.2]  # exponential backoff


def test_an_error_librdkafka_flags_retriable_is_transient() -> None:
    error = KafkaError(KafkaError.INVALID_CONFIG, "flagged", retriable=True)
    assert is_transient(KafkaException(error))
    assert not is_transient(KafkaException(KafkaError(KafkaError.INVALID_CONFIG, "not flagged")))
    assert not is_transient(ValueError("not Kafka"))


def test_a_permanent_error_is_raised_at_once() -> None:
    clock = Clock()
    calls, step = failing([KafkaError.TOPIC_AUTHORIZATION_FAILED])
    with pytest.raises(KafkaException) as raised:
        retrying(step, "listing topics", sleep=clock.sleep, clock=clock)  # type: ignore[arg-type]
    assert raised.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert len(calls) == 1 and clock.sleeps == []


def test_other_exceptions_pass_through_untouched() -> None:
    def step() -> None:
        raise KeyError("mine")

    with pytest.raises(KeyError):
        retrying(step, "x", sleep=lambda _: None)


def test_the_backoff_is_capped_and_the_deadline_ends_in_a_clear_error() -> None:
    clock = Clock()
    calls, step = failing([KafkaError.NOT_LEADER_FOR_PARTITION] * 1000)
    policy = RetryPolicy(deadline=10.0, first=0.5, cap=2.0)
    with pytest.raises(KafkaUnavailable) as raised:
        retrying(step, "reading high watermarks", policy, sleep=clock.sleep, clock=clock)  # type: ignore[arg-type]
    assert max(clock.sleeps) == 2.0
    assert clock.now <= 10.0  # bounded: never sleeps past the deadline
    assert clock.sleeps[:3] == [0.5, 1.0, 2.0]
    message = str(raised.value)
    assert "reading high watermarks" in message and "NOT_LEADER_FOR_PARTITION" in message
    assert f"{len(calls)} attempt(s)" in message
    assert isinstance(raised.value.__cause__, KafkaException)


def test_a_zero_deadline_tries_once() -> None:
    calls, step = failing([KafkaError._TRANSPORT])
    with pytest.raises(KafkaUnavailable):
        retrying(step, "x", RetryPolicy(deadline=0.0), sleep=lambda _: None)  # type: ignore[arg-type]
    assert len(calls) == 1


def test_the_backoff_drives_an_async_retry_loop_too() -> None:
    async def produce() -> int:
        backoff = Backoff("producing", RetryPolicy(deadline=5.0, first=0.001))
        tries = 0
        while True:
            tries += 1
            try:
                if tries < 3:
                    raise KafkaException(KafkaError(KafkaError._UNKNOWN_PARTITION))
                return tries
            except KafkaException as exc:
                await asyncio.sleep(backoff.failed(exc))

    assert asyncio.run(produce()) == 3
