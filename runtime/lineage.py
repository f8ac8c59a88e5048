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
    forgotten: bool = False
    """The user forgot this memory: its lineage says so, and when, but never shows its text."""

    def as_dict(self) -> dict[str, object]:
        if self.forgotten:
            return self._forgotten_dict()
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


    def _forgotten_dict(self) -> dict[str, object]:
        c = self.change
        return {
            "event_id": c.event_id, "at": c.occurred_at.isoformat(), "change": c.change,
            "relation": c.relation, "judge": c.judge,
            "reason": "forgotten at the user's request" if c.change == "deleted" else "",
            "before": None, "after": None, "status": c.after.status if c.after else "deleted",
            "candidate": None, "forgotten": True,
            "turns": [{"event_id": t.event_id, "message_id": t.message_id, "session_id": t.session_id,
                       "role": t.role, "at": t.occurred_at.isoformat(), "content": None} for t in self.turns],
        }


def memory_lineage(log: EventLog, tenant: str, user: str, memory_id: str) -> list[LineageStep]:
    """Every MemoryChanged of the memory in order, with its causing proposal and turns.

    A memory the user forgot keeps its steps (what happened and when) without any text.
    """
    steps = _steps(log, tenant, user, memory_id)
    if any(s.change.change == "deleted" and s.change.relation == "user" for s in steps):
        return [LineageStep(s.change, s.proposal, s.turns, forgotten=True) for s in steps]
    return steps


def _steps(log: EventLog, tenant: str, user: str, memory_id: str) -> list[LineageStep]:
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
