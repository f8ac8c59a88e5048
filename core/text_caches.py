"""Process caches keyed by user text, emptied when a user's text is erased (a forgotten text must not survive in memory either).

Several hot paths memoise on the text itself (PII spans, rule drafts, search
terms, embeddings). They are performance only, but a forgotten user's text must
not outlive the forget in a long-running process either, so every such cache
registers here and `clear_text_caches()` empties them all when an erasure
completes (the next reads simply recompute).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

_FUNCTIONS: list[Callable[[], None]] = []
_INSTANCES: weakref.WeakSet[Any] = weakref.WeakSet()


def registered(cached: F) -> F:
    """Register an `lru_cache`-wrapped function; returns it unchanged (use under `@lru_cache`)."""
    _FUNCTIONS.append(cached.cache_clear)  # type: ignore[attr-defined]
    return cached


def register_owner(owner: Any) -> None:
    """Register an object with a `clear_text_cache()` method (held weakly: it may go away)."""
    _INSTANCES.add(owner)


def clear_text_caches() -> int:
    """Empty every registered cache; return how many were emptied."""
    for clear in _FUNCTIONS:
        clear()
    owners = list(_INSTANCES)
    for owner in owners:
        owner.clear_text_cache()
    return len(_FUNCTIONS) + len(owners)
