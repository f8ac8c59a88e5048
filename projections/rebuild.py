"""Drop a current-memory store and rebuild it from a stream of logged events."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from engram.core.embedding import Embedder
from engram.schemas.base import Event

from .ports import MemoryStore
from .projector import CurrentMemoryProjector


def rebuild_store(
    store: MemoryStore,
    embedder: Embedder,
    events: Iterable[tuple[int, Event]],
    progress: Callable[[int], None] | None = None,
) -> str:
    """Clear `store`, project every (position, event) in order, flush; return the state hash."""
    store.clear()
    projector = CurrentMemoryProjector(store, embedder)
    for position, event in events:
        projector.apply(event, position)
        if progress is not None:
            progress(1)
    store.flush()
    return store.state_hash()
