"""A small CPU sampler for the benches: where a run spends its CPU, without cProfile's distortion.

cProfile charges a fixed cost to every Python call, so code made of many small
calls (the stream processors) looks several times more expensive than it is,
and C calls (SQLite, pydantic-core, AES) look cheaper. This sampler instead
interrupts the process every `interval` CPU seconds (`ITIMER_PROF`, counting
user and system time of the whole process) and records the Python stack it
finds: a function's *inclusive* share is the share of samples with it anywhere
on the stack, its *own* share the samples with it on top (time in C functions
is charged to the Python function that called them). Unix only.
"""

from __future__ import annotations

import os
import signal
from collections import Counter
from types import FrameType
from typing import Any


class CpuSampler:
    """`with CpuSampler() as s: work()`, then `s.report()`."""

    def __init__(self, interval: float = 0.001) -> None:
        self.interval = interval
        self.samples = 0
        self.inclusive: Counter[str] = Counter()
        self.own: Counter[str] = Counter()
        self._previous: Any = None

    def _sample(self, signum: int, frame: FrameType | None) -> None:
        self.samples += 1
        seen: set[str] = set()
        top = True
        while frame is not None:
            code = frame.f_code
            name = f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}({code.co_name})"
            if top:
                self.own[name] += 1
                top = False
            if name not in seen:
                self.inclusive[name] += 1
                seen.add(name)
            frame = frame.f_back

    def __enter__(self) -> "CpuSampler":
        self._previous = signal.signal(signal.SIGPROF, self._sample)
        signal.setitimer(signal.ITIMER_PROF, self.interval, self.interval)
        return self

    def __exit__(self, *exc: object) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        signal.signal(signal.SIGPROF, self._previous or signal.SIG_DFL)

    def share(self, name_part: str, own: bool = False) -> float:
        """The share (0..1) of samples in functions whose name contains `name_part`."""
        counts = self.own if own else self.inclusive
        if not self.samples:
            return 0.0
        if own:
            return sum(v for k, v in counts.items() if name_part in k) / self.samples
        return max((v for k, v in counts.items() if name_part in k), default=0) / self.samples

    def report(self, top: int = 40) -> str:
        lines = [f"{self.samples} samples, one per {self.interval * 1000:g} ms of process CPU", "",
                 f"=== top {top} inclusive (share of samples with the function on the stack) ==="]
        lines += [f"{100 * v / max(1, self.samples):5.1f}%  {k}" for k, v in self.inclusive.most_common(top)]
        lines += ["", f"=== top {top} own (share of samples with the function on top; C calls included) ==="]
        lines += [f"{100 * v / max(1, self.samples):5.1f}%  {k}" for k, v in self.own.most_common(top)]
        return "\n".join(lines) + "\n"
