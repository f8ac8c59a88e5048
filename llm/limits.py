"""Client-side limits: requests in flight and a tokens-per-minute budget.

Both are shared by every adapter of one process. A request that cannot get a
slot or budget within the wait limit is not sent: the caller takes the rule
path and records why.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager

WINDOW_S = 60.0


class LimitExceeded(RuntimeError):
    """No slot or no token budget within the wait limit."""


class TokenBudget:
    """A sliding one-minute window of tokens spent; 0 tokens per minute means unlimited."""

    def __init__(self, tokens_per_minute: int, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.tokens_per_minute = tokens_per_minute
        self._clock = clock
        self._sleep = sleep
        self._spent: deque[list[float]] = deque()  # [time, tokens]
        self._lock = threading.Lock()

    def reserve(self, tokens: int, max_wait_s: float) -> list[float] | None:
        """Reserve `tokens` now, waiting up to `max_wait_s` for the window to free up."""
        if self.tokens_per_minute <= 0:
            return None
        tokens = min(tokens, self.tokens_per_minute)
        deadline = self._clock() + max_wait_s
        while True:
            with self._lock:
                wait = self._try(tokens)
                if wait is None:
                    entry = [self._clock(), float(tokens)]
                    self._spent.append(entry)
                    return entry
            if self._clock() + wait > deadline:
                raise LimitExceeded(f"tokens-per-minute budget {self.tokens_per_minute} exhausted")
            self._sleep(max(wait, 0.01))

    def settle(self, entry: list[float] | None, actual_tokens: int) -> None:
        """Replace a reservation's estimate by the tokens the endpoint reported."""
        if entry is not None and actual_tokens > 0:
            with self._lock:
                entry[1] = float(actual_tokens)

    def used(self) -> int:
        with self._lock:
            self._expire(self._clock())
            return int(sum(tokens for _, tokens in self._spent))

    def _try(self, tokens: int) -> float | None:
        """None if `tokens` fit now, else the seconds until enough of the window expires."""
        now = self._clock()
        self._expire(now)
        used = sum(t for _, t in self._spent)
        if used + tokens <= self.tokens_per_minute:
            return None
        freed = 0.0
        for at, spent in self._spent:
            freed += spent
            if used - freed + tokens <= self.tokens_per_minute:
                return at + WINDOW_S - now
        return WINDOW_S

    def _expire(self, now: float) -> None:
        while self._spent and self._spent[0][0] <= now - WINDOW_S:
            self._spent.popleft()


class Gate:
    """At most `concurrency` requests in flight, and the token budget."""

    def __init__(self, concurrency: int, budget: TokenBudget) -> None:
        self._slots = threading.BoundedSemaphore(concurrency)
        self.budget = budget

    @contextmanager
    def admit(self, estimated_tokens: int, max_wait_s: float) -> Iterator[list[float] | None]:
        """Hold a slot and a token reservation for one request."""
        if not self._slots.acquire(timeout=max_wait_s):
            raise LimitExceeded("too many model requests in flight")
        try:
            yield self.budget.reserve(estimated_tokens, max_wait_s)
        finally:
            self._slots.release()
