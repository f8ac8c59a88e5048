"""What clients send: a chat turn as the ingest edge accepts it."""

from __future__ import annotations

from datetime import datetime

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from .base import Identifier, stable_id, utc
from .events import MAX_CONTENT_CHARS, SummaryRequested, TurnRecorded
from .memory import Role


class TurnInput(BaseModel):
    """One chat message from the platform. `ts` is the event time (defaults to now)."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    tenant: Identifier = Field(validation_alias=AliasChoices("tenant", "tenant_id"))
    user: Identifier = Field(validation_alias=AliasChoices("user", "user_id"))
    agent: Identifier = Field(validation_alias=AliasChoices("agent", "agent_id"))
    session: Identifier = Field(validation_alias=AliasChoices("session", "session_id"))
    message_id: Identifier
    role: Role
    content: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS)
    ts: datetime | None = None
    parent_id: str | None = None
    trace_id: str | None = None
    metadata: dict[str, str] = Field(default_factory=dict)


def turn_event_id(tenant: str, user: str, session: str, message_id: str) -> str:
    """Re-sending the same message id yields the same event id, so it is logged once."""
    return stable_id("turn", tenant, user, session, message_id)


def to_turn_event(turn: TurnInput, now: datetime) -> TurnRecorded:
    """Stamp a client turn into an L0 event (the edge is the only place that reads the clock)."""
    event_id = turn_event_id(turn.tenant, turn.user, turn.session, turn.message_id)
    return TurnRecorded(
        event_id=event_id,
        occurred_at=utc(turn.ts or now),
        tenant_id=turn.tenant,
        user_id=turn.user,
        agent_id=turn.agent,
        session_id=turn.session,
        message_id=turn.message_id,
        parent_id=turn.parent_id,
        role=turn.role,
        content=turn.content,
        metadata=turn.metadata,
        correlation_id=turn.trace_id or event_id,
    )


def summary_request_for(last_turn: TurnRecorded) -> SummaryRequested:
    """The trigger check an edge appends after a batch of a session's turns."""
    return SummaryRequested(
        event_id=stable_id("summary-request", last_turn.event_id),
        occurred_at=last_turn.occurred_at,
        tenant_id=last_turn.tenant_id,
        user_id=last_turn.user_id,
        agent_id=last_turn.agent_id,
        session_id=last_turn.session_id,
        causation_ids=(last_turn.event_id,),
        correlation_id=last_turn.correlation_id,
    )


class SummaryTriggers:
    """The last turn of every session an ingest call touched: one summary request each, at the end."""

    def __init__(self) -> None:
        self._last: dict[tuple[str, str, str], TurnRecorded] = {}

    def saw(self, turn: TurnRecorded) -> None:
        self._last[(turn.tenant_id, turn.user_id, turn.session_id)] = turn

    def requests(self) -> list[SummaryRequested]:
        return [summary_request_for(turn) for turn in self._last.values()]
