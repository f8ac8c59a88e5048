"""An in-memory harness: a list log, the processors, run-until-idle and fault injection.

It is the smallest possible runner of the pure processors, so processors can
be tested without a broker or a database, and other runtimes can be checked
against it (the same input must derive the same events).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from pydantic import BaseModel

from engram.schemas.base import Event, derive_id
from engram.schemas.codec import encode
from engram.schemas.events import DeadLettered
from engram.schemas.topics import topic_for

from .processor import Processor, ProcessorContext
from .topology import build_topology

FaultRule = Callable[[str, Event], bool]
"""(processor name, event) -> True to make that processor fail on that event."""


class InjectedFault(RuntimeError):
    """Raised by the harness when a fault rule fires."""


@dataclass
class Harness:
    """Processors driven over a Python list, in log order, until nothing is left to do."""

    ctx: ProcessorContext = field(default_factory=ProcessorContext)
    fault: FaultRule | None = None
    log: list[Event] = field(default_factory=list)
    states: dict[tuple[str, str], BaseModel | None] = field(default_factory=dict)
    _seen: set[str] = field(default_factory=set)
    _cursor: int = 0

    def __post_init__(self) -> None:
        self._routes: dict[str, list[Processor]] = {}  # type: ignore[type-arg]
        for stage in build_topology():
            for event_type in stage.processor.consumes:
                self._routes.setdefault(event_type, []).append(stage.processor)

    def append(self, events: Iterable[Event]) -> int:
        """Append events not seen before (by id); returns how many were new."""
        added = 0
        for event in events:
            if event.event_id not in self._seen:
                self._seen.add(event.event_id)
                self.log.append(event)
                added += 1
        return added

    def run_until_idle(self) -> list[Event]:
        """Process everything after the cursor, including what that derives; return the derived events."""
        start = len(self.log)
        while self._cursor < len(self.log):
            event = self.log[self._cursor]
            self._cursor += 1
            for processor in self._routes.get(event.type, ()):
                self.append(self._run(processor, event))
        return self.log[start:]

    def _run(self, processor: Processor, event: Event) -> list[Event]:  # type: ignore[type-arg]
        key = processor.state_key(event)
        slot = (processor.name, key) if key is not None else None
        state = self.states.get(slot) if slot is not None else None
        try:
            if self.fault is not None and self.fault(processor.name, event):
                raise InjectedFault(f"injected fault in {processor.name}")
            new_state, outputs = processor.process(state.model_copy(deep=True) if state else None, event, self.ctx)
        except Exception as exc:
            return [dead_letter(processor.name, event, exc)]
        if slot is not None:
            self.states[slot] = new_state
        return outputs

    def of_type(self, *types: str) -> list[Event]:
        return [e for e in self.log if e.type in types]


def dead_letter(processor: str, event: Event, exc: Exception) -> DeadLettered:
    return DeadLettered(
        event_id=derive_id(event.event_id, processor, "dead-letter"),
        occurred_at=event.occurred_at, tenant_id=event.tenant_id, user_id=event.user_id,
        causation_ids=(event.event_id,), correlation_id=event.correlation_id,
        source_topic=topic_for(event.type), reason=f"{processor} failed: {exc!r}"[:2000],
        raw=encode(event).decode(),
    )
