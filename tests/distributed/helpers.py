"""Helpers of the distributed-runtime tests: edge events, the reference derivation, worker processes."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engram.runtime.context import default_context
from engram.schemas import topics as t
from engram.schemas.base import Event
from engram.schemas.codec import to_dict
from engram.schemas.inputs import summary_request_for, to_turn_event
from engram.streams.harness import Harness
from tests.generators import T0, conversations

DERIVED = (t.AUDIT, t.CANDIDATES, t.MEMORY_CHANGES, t.PROFILES, t.SUMMARIES, t.DEAD_LETTERS, t.LLM_CALLS)


def edge_events(seed: int, turns: int, users: int = 3, every: int = 7) -> list[Event]:
    """Turns in event-time order, with a summary request for the session after every `every`-th turn."""
    out: list[Event] = []
    for n, turn in enumerate(conversations(seed=seed, turns=turns, users=users)):
        event = to_turn_event(turn, T0)
        out.append(event)
        if n % every == every - 1:
            out.append(summary_request_for(event))
    return out


def reference(events: Sequence[Event]) -> dict[str, Event]:
    """What the pure processors derive from `events` (the harness is the reference semantics)."""
    harness = Harness(ctx=default_context())
    harness.append(events)
    return {e.event_id: e for e in harness.run_until_idle()}


def as_dicts(events: dict[str, Event]) -> dict[str, dict[str, object]]:
    return {event_id: to_dict(event) for event_id, event in events.items()}


def mismatch(expected: dict[str, Event], actual: dict[str, Event]) -> str:
    """A short description of how two derivations differ ('' when they are the same)."""
    missing = sorted(set(expected) - set(actual))
    extra = sorted(set(actual) - set(expected))
    changed = sorted(k for k in set(expected) & set(actual) if to_dict(expected[k]) != to_dict(actual[k]))
    if not (missing or extra or changed):
        return ""
    sample = [expected[k].type for k in missing[:5]], [actual[k].type for k in extra[:5]], \
        [(expected[k].type, _differing(to_dict(expected[k]), to_dict(actual[k]))) for k in changed[:3]]
    return f"missing {len(missing)}, extra {len(extra)}, changed {len(changed)}: {sample}"


def _differing(expected: dict[str, Any], actual: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    keys = sorted(set(expected) | set(actual))
    return [(k, expected.get(k), actual.get(k)) for k in keys if expected.get(k) != actual.get(k)][:3]


class WorkerProcess:
    """`engram worker` as a child process (so it can be SIGKILLed), with its log in a file."""

    def __init__(self, command: list[str], log_path: Path, env: dict[str, str] | None = None) -> None:
        self.command = command
        self.log_path = log_path
        # A test worker writes its own data folder's chDB, as the CLI of the test reads it; a
        # shared ENGRAM_CLICKHOUSE_DSN (exported by `deploy/local/services env`) would split them.
        inherited = {k: v for k, v in os.environ.items() if k != "ENGRAM_CLICKHOUSE_DSN"}
        self.env = {**inherited, **(env or {})}
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> WorkerProcess:
        log = open(self.log_path, "ab")  # noqa: SIM115 - handed to the child
        self.proc = subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT, env=self.env)  # noqa: S603
        log.close()
        self.starts += 1
        return self

    def kill(self) -> None:
        """SIGKILL: no shutdown hook, no flush, no commit."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def tail(self, lines: int = 40) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join([line for line in text.splitlines() if "BGQUEUE" not in line][-lines:])
