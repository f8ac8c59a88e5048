"""The data folder's lock: one process at a time opens an embedded data folder.

The embedded runtime keeps state in memory (processor states, caches) and writes from one
connection; a second process writing the same folder would work from a stale picture and meet
"database is locked". So every process that opens the folder — `engram serve`, `engram mcp`,
every CLI command, `engram.Memory` — takes an exclusive `flock` on `serve.lock` first and writes
who it is into it; another process is refused with a message naming that holder. The lock goes
with the process (a crash releases it).
"""

from __future__ import annotations

import fcntl
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import IO

from engram.runtime_port import DataDirBusy

LOCK_FILE = "serve.lock"


def lock_folder(folder: Path) -> IO[str]:
    """The held lock of `folder` (close the handle to release it); DataDirBusy naming the holder."""
    folder.mkdir(parents=True, exist_ok=True)
    handle = open(folder / LOCK_FILE, "a+", encoding="utf-8")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise DataDirBusy(f"the data folder {folder} is in use by {holder}: one process at a time opens an "
                          "embedded data folder. Stop it, or go through it (a server's HTTP API or MCP); "
                          "`engram serve --mcp` serves HTTP and MCP together") from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"process {os.getpid()} ({describe_command()}, since "
                 f"{datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M:%S UTC')})")
    handle.flush()
    return handle


def describe_command(argv: list[str] | None = None) -> str:
    """`engram serve --port 8700` for the CLI (however it was started), else the program and arguments."""
    args = list(sys.argv if argv is None else argv)
    program = Path(args[0]).name if args else "python"
    if program in ("engram", "main.py", "__main__.py"):
        program = "engram"
    return " ".join([program, *args[1:]])[:200]


@contextmanager
def folder_locked(folder: Path) -> Iterator[None]:
    """Hold the folder's lock for the block."""
    handle = lock_folder(folder)
    try:
        yield
    finally:
        handle.close()
