"""One ClickHouse target used by several processes: a projector worker writing, CLI commands reading.

A ClickHouse server takes any number of clients. A chDB directory does not:
the engine belongs to the one process that opened it, and a second process
fails to open it. So for a chDB target every user opens the engine only for
the duration of one piece of work, under an exclusive lock file beside the
directory, and closes it again. Opening an engine is not cheap (60 ms on an
empty directory, more with data, and it holds Python's GIL meanwhile), so a
busy projector keeps it open across inserts; a process that finds the lock
taken leaves a "wanted" file beside it, and the holder gives the engine back
at its next insert (`wanted`). `engram history` / `engram sql` therefore wait
about one insert interval, not until the projector is idle.
"""

from __future__ import annotations

import fcntl
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .clickhouse_client import ClickHouseTarget, Connection, open_connection

LOCK_SUFFIX = ".lock"
WANTED_SUFFIX = ".wanted"


def lock_path(target: ClickHouseTarget) -> Path | None:
    """The lock file of a chDB directory target (None for servers and in-memory engines)."""
    if not target.is_chdb or target.chdb_path == ":memory:":
        return None
    path = Path(target.chdb_path)
    return path.with_name(path.name + LOCK_SUFFIX)


def wanted(target: ClickHouseTarget) -> bool:
    """True if another process is waiting for this chDB target's engine (the holder should release it)."""
    path = lock_path(target)
    return path is not None and _wanted_path(path).exists()


def _wanted_path(lock: Path) -> Path:
    return lock.with_name(lock.name.removesuffix(LOCK_SUFFIX) + WANTED_SUFFIX)


@contextmanager
def exclusive(path: Path | None, timeout: float) -> Iterator[None]:
    """Hold an exclusive flock on `path` (no-op for None); TimeoutError after `timeout` seconds."""
    if path is None:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                _wanted_path(path).touch()
                if time.monotonic() >= deadline:
                    raise TimeoutError(f"ClickHouse engine {path.with_suffix('')} busy for {timeout}s "
                                       f"(held by another Engram process)") from None
                time.sleep(0.02)
        _wanted_path(path).unlink(missing_ok=True)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


@contextmanager
def shared_connection(target: ClickHouseTarget, create_database: bool = True,
                      timeout: float = 60.0) -> Iterator[Connection]:
    """A connection to `target` for one piece of work; for chDB, the engine is locked and released after."""
    with exclusive(lock_path(target), timeout):
        conn = open_connection(target, create_database=create_database)
        try:
            yield conn
        finally:
            conn.close()
