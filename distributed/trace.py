"""Per-hop timestamps of chosen records, for finding where a turn waits on its way to recall.

Off unless `ENGRAM_TRACE_FILE` is set (then `tracer()` is None and a hop costs
one `is None` check). With it, every process of the runtime that sees a record
whose Kafka key (`tenant/user`) starts with `ENGRAM_TRACE_KEYS` appends one
JSON line per hop to that file: `{"k": key, "h": hop, "t": wall-clock seconds,
"pid": process}`. Several processes may share the file: each line is one
`write` on a file opened for appending, which Linux keeps whole for lines this
short. Wall-clock time, because the hops of one record are in different
processes on one machine. The hops, in the order a turn passes them:

- `sdk.record` (`TurnProducer.record`), `sdk.key` (its owner's data key is
  here: at once for a known owner, after the key gate for a new one),
  `sdk.acked` (the broker acknowledged the record);
- `<stage>.took:<topic>` (the stage's agent took the batch holding it),
  `<stage>.computed:<topic>`, `<stage>.acked:<topic>` (the derived records of
  that batch acknowledged by the broker; the topic is the input record's);
- `projector.consumed:<topic>`, `projector.written:<topic>` (Weaviate flushed:
  what recall reads is there).

A benchmark (`bench.recall_freshness`) adds the recall hops and tabulates them.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable

import orjson

FILE_ENV = "ENGRAM_TRACE_FILE"
KEYS_ENV = "ENGRAM_TRACE_KEYS"


class Tracer:
    """Appends hop lines for keys under one prefix to one file (thread-safe)."""

    def __init__(self, path: str, prefix: str) -> None:
        self.prefix = prefix.encode()
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._lock = threading.Lock()
        self._pid = os.getpid()

    def wants(self, key: bytes | str | None) -> bool:
        if key is None:
            return False
        raw = key.encode() if isinstance(key, str) else key
        return raw.startswith(self.prefix)

    def hop(self, key: bytes | str | None, hop: str, at: float | None = None) -> None:
        if self.wants(key):
            self.hops([key], hop, at)

    def hops(self, keys: Iterable[bytes | str | None], hop: str, at: float | None = None) -> None:
        """One line per traced key (each key once) for `hop`, stamped `at` (default: now)."""
        when = time.time() if at is None else at
        chosen = dict.fromkeys(k.decode(errors="replace") if isinstance(k, bytes) else k
                               for k in keys if k is not None and self.wants(k))
        if not chosen:
            return
        lines = b"".join(orjson.dumps({"k": k, "h": hop, "t": when, "pid": self._pid}) + b"\n" for k in chosen)
        with self._lock:
            os.write(self._fd, lines)


_TRACER: Tracer | None = None
_CHECKED = False
_LOCK = threading.Lock()


def tracer() -> Tracer | None:
    """This process's tracer, or None when tracing is off (read from the environment once)."""
    global _TRACER, _CHECKED
    if _CHECKED:
        return _TRACER
    with _LOCK:
        if not _CHECKED:
            path = os.environ.get(FILE_ENV)
            _TRACER = Tracer(path, os.environ.get(KEYS_ENV, "")) if path else None
            _CHECKED = True
    return _TRACER


def read_hops(path: str) -> list[dict[str, object]]:
    """Every hop line of a trace file (a torn last line is skipped)."""
    out: list[dict[str, object]] = []
    try:
        with open(path, "rb") as handle:
            for line in handle:
                try:
                    out.append(orjson.loads(line))
                except orjson.JSONDecodeError:
                    continue
    except FileNotFoundError:
        pass
    return out
