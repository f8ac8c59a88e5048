"""The processor contract shared by both runtimes.

A processor is a pure function `(state, event, ctx) -> (state, events)`: no I/O,
no clock, no randomness. Time comes from `event.occurred_at`, ids from
`derive_id`. The runner owns transport, offsets and persistence and never holds
business logic.

Ownership: a processor may update the state object it is given and return it,
so runners must treat the state they pass in as consumed and keep only the
returned one. States are pydantic models so runners can persist them as JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from pydantic import BaseModel

from engram.core.config import DEFAULT_CONFIG, EngramConfig
from engram.core.embedding import Embedder, HashingEmbedder
from engram.core.ports import Extractor, MergeJudge, Summarizer
from engram.schemas.base import Event

S = TypeVar("S", bound=BaseModel)


@dataclass(frozen=True)
class ProcessorContext:
    """Configuration and the (deterministic) adapters the processors may call."""

    config: EngramConfig = DEFAULT_CONFIG
    embedder: Embedder = field(default_factory=HashingEmbedder)
    extractor: Extractor | None = None
    judge: MergeJudge | None = None
    summarizer: Summarizer | None = None


class Processor(Protocol, Generic[S]):
    """One stream processor. `consumes` lists the event types it handles."""

    @property
    def name(self) -> str: ...

    @property
    def consumes(self) -> frozenset[str]:
        """The event types this processor handles."""
        ...

    @property
    def state_type(self) -> type[S] | None:
        """The pydantic model of its state (None for stateless processors)."""
        ...

    def state_key(self, event: Event) -> str | None:
        """Key of the state this event touches; None for stateless processors."""
        ...

    def process(self, state: S | None, event: Event, ctx: ProcessorContext) -> tuple[S | None, list[Event]]:
        """Handle one event; return the new state and the derived events."""
        ...
