"""Engram: event-sourced long-term memory for AI agents.

    from engram import Memory
    m = Memory(data="./memory")
    m.record(user="ana", messages=[{"role": "user", "content": "I prefer green tea"}])
    m.recall(user="ana", question="What should I drink?").context
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from engram.memory import Memory, Remembered


def __getattr__(name: str) -> Any:
    """`Memory` and `Remembered` load on first use, so `import engram.<anything>` stays light."""
    if name in ("Memory", "Remembered"):
        from engram import memory

        return getattr(memory, name)
    raise AttributeError(f"module 'engram' has no attribute {name!r}")


__all__ = ["Memory", "Remembered", "__version__"]
