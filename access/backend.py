"""The runtime behind the access layer: the port and its adapters, re-exported from their homes.

The port is `engram.runtime_port.MemoryRuntime` (`MemoryBackend` here is the
same protocol under its old name); the embedded adapter lives in
`engram.runtime.backend`, the distributed one in `engram.distributed.backend`;
`engram.runtime_port.open_runtime` picks one from ENGRAM_RUNTIME.
"""

from __future__ import annotations

from engram.runtime.backend import EmbeddedBackend
from engram.runtime_port import CommandFailed, DataDirBusy, MemoryRuntime, RuntimeUnavailable, open_runtime, \
    with_deadline

MemoryBackend = MemoryRuntime

__all__ = ["CommandFailed", "DataDirBusy", "EmbeddedBackend", "MemoryBackend", "MemoryRuntime",
           "RuntimeUnavailable", "open_runtime", "with_deadline"]
