"""Retrying transient Kafka errors: one policy for every admin, consumer, producer and read-back call.

A broker in a transient state is not a failure: right after a topic is
created its partitions may still be electing a leader (NOT_LEADER_FOR_PARTITION,
LEADER_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PART), a group coordinator may still be
loading (COORDINATOR_LOAD_IN_PROGRESS), and a restarting broker refuses
connections for a few seconds (_TRANSPORT, _TIMED_OUT, _ALL_BROKERS_DOWN).
`retrying(step, what)` runs `step` again after such an error, with exponential
backoff (capped) until a deadline, and then raises `KafkaUnavailable` naming
the operation, the attempts, the seconds spent and the last error. Any other
error is raised at once. Every step given to it must be safe to repeat (reads,
idempotent admin requests, commits of the same offsets).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from confluent_kafka import KafkaError, KafkaException

log = logging.getLogger("engram.distributed.retry")

T = TypeVar("T")

TRANSIENT_CODES: frozenset[int] = frozenset({
    KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE, KafkaError.UNKNOWN_TOPIC_OR_PART,
    KafkaError._UNKNOWN_PARTITION, KafkaError._UNKNOWN_TOPIC, KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
    KafkaError.COORDINATOR_NOT_AVAILABLE, KafkaError.NOT_COORDINATOR, KafkaError._WAIT_COORD,
    KafkaError.NOT_CONTROLLER, KafkaError.REQUEST_TIMED_OUT, KafkaError.NETWORK_EXCEPTION,
    KafkaError.NOT_ENOUGH_REPLICAS, KafkaError.NOT_ENOUGH_REPLICAS_AFTER_APPEND, KafkaError.KAFKA_STORAGE_ERROR,
    KafkaError.FENCED_LEADER_EPOCH, KafkaError.UNKNOWN_LEADER_EPOCH, KafkaError.OFFSET_NOT_AVAILABLE,
    KafkaError.REBALANCE_IN_PROGRESS, KafkaError._TRANSPORT, KafkaError._TIMED_OUT, KafkaError._ALL_BROKERS_DOWN,
    KafkaError._RESOLVE,
})
"""Codes that mean "the broker is not ready yet", whether or not librdkafka flags them retriable."""


class KafkaUnavailable(RuntimeError):
    """A Kafka operation still failed with a transient error when its retry deadline passed."""

    def __init__(self, what: str, attempts: int, seconds: float, last: BaseException) -> None:
        super().__init__(f"{what}: Kafka still failing after {attempts} attempt(s) over {seconds:.1f}s "
                         f"(last error: {last}); is the broker up and reachable?")
        self.what, self.attempts, self.seconds, self.last = what, attempts, seconds, last


@dataclass(frozen=True)
class RetryPolicy:
    """How long and how often to retry: `first` s after the first failure, doubling up to `cap`, for `deadline` s."""

    deadline: float = 90.0
    first: float = 0.05
    cap: float = 2.0

    def delay(self, attempt: int) -> float:
        return float(min(self.cap, self.first * 2 ** (attempt - 1)))


DEFAULT_POLICY = RetryPolicy()
"""Long enough to ride out a broker restart (a KRaft broker is back within ~10-20 s on these machines)."""


def kafka_error(exc: BaseException) -> KafkaError | None:
    """The KafkaError inside a KafkaException (None for anything else)."""
    if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], KafkaError):
        return exc.args[0]
    return None


def is_transient(exc: BaseException) -> bool:
    """True for a KafkaException whose error is retriable (librdkafka's flag or a known transient code)."""
    error = kafka_error(exc)
    if error is None:
        return False
    return bool(error.retriable()) or error.code() in TRANSIENT_CODES


class Backoff:
    """The attempts of one retried operation: after each transient failure, how long to wait (or give up)."""

    def __init__(self, what: str, policy: RetryPolicy = DEFAULT_POLICY,
                 transient: Callable[[BaseException], bool] = is_transient,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.what, self.policy, self.transient, self.clock = what, policy, transient, clock
        self.start = clock()
        self.attempt = 0

    def failed(self, exc: BaseException) -> float:
        """The delay before the next attempt; raises `exc` itself if not transient, `KafkaUnavailable` when due."""
        self.attempt += 1
        if not self.transient(exc):
            raise exc
        waited = self.clock() - self.start
        delay = self.policy.delay(self.attempt)
        if waited + delay > self.policy.deadline:
            raise KafkaUnavailable(self.what, self.attempt, waited, exc) from exc
        level = logging.WARNING if self.attempt in (3, 10) or self.attempt % 30 == 0 else logging.DEBUG
        log.log(level, "%s: transient Kafka error (attempt %d, %.1fs): %s; retrying",
                self.what, self.attempt, waited, exc)
        return delay


def retrying(step: Callable[[], T], what: str, policy: RetryPolicy = DEFAULT_POLICY,
             transient: Callable[[BaseException], bool] = is_transient,
             sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic) -> T:
    """Run `step`; after a transient error wait and run it again, until `policy.deadline` s have passed.

    Raises the step's own error when it is not transient, `KafkaUnavailable` (from the last
    error) when the deadline passes. `step` must be safe to repeat.
    """
    backoff = Backoff(what, policy, transient, clock)
    while True:
        try:
            return step()
        except Exception as exc:  # noqa: BLE001 - `failed` re-raises what is not transient
            sleep(backoff.failed(exc))
