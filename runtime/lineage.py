"""The lineage of one memory: every change, the candidate behind it, back to the L0 turns."""

from __future__ import annotations

from dataclasses import dataclass, field

from engram.core.pii import redact
from engram.schemas.events import MemoryChanged, MemoryProposed, TurnRecorded

from .log import EventLog


@dataclass(frozen=True)
class LineageStep:
    change: MemoryChanged
    proposal: MemoryProposed | None
    turns: tuple[TurnRecorded, ...] = field(default_factory=tuple)

    def as_dict(self) -> dict[str, object]:
        c = self.change
        return {
            "event_id": c.event_id, "at": c.occurred_at.isoformat(), "change": c.change,
            "relation": c.relation, "judge": c.judge, "reason": c.reason,
            "before": c.before.content if c.before else None,
            "after": c.after.content if c.after else None,
            "status": c.after.status if c.after else "deleted",
            "candidate": self.proposal.candidate.model_dump(mode="json") if self.proposal else None,
            "turns": [
                {"event_id": t.event_id, "message_id": t.message_id, "session_id": t.session_id,
                 "role": t.role, "at": t.occurred_at.isoformat(), "content": redact(t.content).text}
                for t in self.turns
            ],
        }


def memory_lineage(log: EventLog, tenant: str, user: str, memory_id: str) -> list[LineageStep]:
    """Every MemoryChanged of the memory in order, with its causing proposal and turns."""
    steps = []
    for event in log.for_key(f"{tenant}/{user}", ("MemoryChanged",)):
        if not isinstance(event, MemoryChanged) or event.memory_id != memory_id:
            continue
        proposal = _first(log, event.causation_ids)
        if not isinstance(proposal, MemoryProposed):
            steps.append(LineageStep(event, None))
            continue
        turns = tuple(t for t in (log.get(i) for i in proposal.causation_ids) if isinstance(t, TurnRecorded))
        steps.append(LineageStep(event, proposal, turns))
    return steps


def _first(log: EventLog, ids: tuple[str, ...]) -> object | None:
    return log.get(ids[0]) if ids else None
