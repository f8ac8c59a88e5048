"""What clients send: a chat turn as the ingest edge accepts it.

Limits (every door: CLI, HTTP, the producer SDK): `content` 1-32,000 characters
after control characters are stripped (`core.text.strip_control`); `parent_id`
and `trace_id` are identifiers (at most 128 characters, no white space, '/' or
controls); `metadata` at most 32 entries, keys 1-64 characters, values at most
1,024 characters (controls stripped), 8,192 characters in all. Event time:
`ts` before 2000-01-01 is refused; `ts` more than five minutes ahead of the
ingest time is clamped to the ingest time, and the edge reports a warning (a
turn from the far future would otherwise never decay).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from engram.core.text import has_visible, strip_control

from .base import Identifier, stable_id, utc
from .events import MAX_CONTENT_CHARS, SummaryRequested, TurnRecorded
from .memory import Role

MAX_METADATA_ENTRIES = 32
MAX_METADATA_KEY_CHARS = 64
MAX_METADATA_VALUE_CHARS = 1_024
MAX_METADATA_CHARS = 8_192
EARLIEST_TS = datetime(2000, 1, 1, tzinfo=timezone.utc)
FUTURE_SKEW = timedelta(minutes=5)
"""How far ahead of the ingest time a client clock may be before its `ts` is clamped."""


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
    parent_id: Identifier | None = None
    trace_id: Identifier | None = None
    metadata: dict[str, str] = Field(default_factory=dict, max_length=MAX_METADATA_ENTRIES)

    @field_validator("content")
    @classmethod
    def _visible_content(cls, value: str) -> str:
        cleaned = strip_control(value)
        if not has_visible(cleaned):
            raise ValueError("has no visible characters (only white space, control or invisible formatting "
                             "characters)")
        return cleaned

    @field_validator("ts")
    @classmethod
    def _not_before_2000(cls, value: datetime | None) -> datetime | None:
        if value is not None and utc(value) < EARLIEST_TS:
            raise ValueError(f"{value.isoformat()} is before {EARLIEST_TS.date()}: not a chat turn's time")
        return value

    @field_validator("metadata")
    @classmethod
    def _bounded_metadata(cls, value: dict[str, str]) -> dict[str, str]:
        cleaned = {strip_control(k): strip_control(v) for k, v in value.items()}
        if any(not k or len(k) > MAX_METADATA_KEY_CHARS for k in cleaned) or len(cleaned) < len(value):
            raise ValueError(f"keys must be 1-{MAX_METADATA_KEY_CHARS} visible characters, each once")
        if any(len(v) > MAX_METADATA_VALUE_CHARS for v in cleaned.values()):
            raise ValueError(f"values must be at most {MAX_METADATA_VALUE_CHARS} characters")
        if sum(len(k) + len(v) for k, v in cleaned.items()) > MAX_METADATA_CHARS:
            raise ValueError(f"at most {MAX_METADATA_CHARS} characters of keys and values in all")
        return cleaned


def turn_event_id(tenant: str, user: str, session: str, message_id: str) -> str:
    """Re-sending the same message id yields the same event id, so it is logged once."""
    return stable_id("turn", tenant, user, session, message_id)


def event_time(ts: datetime | None, now: datetime) -> datetime:
    """The turn's event time: `ts` (default: now), clamped to `now` when beyond the allowed clock skew."""
    now = utc(now)
    if ts is None:
        return now
    at = utc(ts)
    return now if at > now + FUTURE_SKEW else at


def to_turn_event(turn: TurnInput, now: datetime) -> TurnRecorded:
    """Stamp a client turn into an L0 event (the edge is the only place that reads the clock)."""
    event_id = turn_event_id(turn.tenant, turn.user, turn.session, turn.message_id)
    return TurnRecorded(
        event_id=event_id,
        occurred_at=event_time(turn.ts, now),
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


# -- what an ingest call reports beyond counts ---------------------------------------------------------------
IssueKind = Literal["conflict", "too_large", "clamped", "invalid"]


@dataclass(frozen=True)
class IngestIssue:
    """A turn of an ingest call not taken as sent: `index` is its position in the call's input (0-based).

    `conflict`, `too_large` and `invalid` turns were not recorded (errors); a `clamped` turn was, with its
    time changed.
    """

    index: int
    kind: IssueKind
    message_id: str
    message: str

    @property
    def is_error(self) -> bool:
        return self.kind != "clamped"


def clamp_warning(index: int, turn: TurnInput, event: TurnRecorded) -> IngestIssue | None:
    """A warning when `to_turn_event` moved the turn's time (a `ts` too far in the future)."""
    if turn.ts is None or utc(turn.ts) == event.occurred_at:
        return None
    return IngestIssue(index, "clamped", turn.message_id,
                       f"ts {utc(turn.ts).isoformat()} is more than {int(FUTURE_SKEW.total_seconds() // 60)} minutes "
                       f"after the ingest time; recorded at {event.occurred_at.isoformat()} instead")


Fingerprint = tuple[str, str]
"""What makes a re-sent message id the same message: (role, content)."""


def exact(event: TurnRecorded) -> Fingerprint:
    return event.role, event.content


def screen(turns: Iterable[tuple[int, TurnRecorded]], recorded: Mapping[str, Fingerprint],
           seen: dict[str, Fingerprint], recorded_as: Callable[[TurnRecorded], Fingerprint] = exact,
           ) -> tuple[list[TurnRecorded], list[IngestIssue]]:
    """Split turns into those to append (new ones and same-content re-sends) and message-id conflicts.

    `recorded` holds what the log already has per event id (compared through
    `recorded_as`, e.g. redacted content); `seen` collects what this call sent
    so far (compared exactly) and is updated. The first version of a message
    always stays: L0 is never changed.
    """
    accepted: list[TurnRecorded] = []
    issues: list[IngestIssue] = []
    for index, event in turns:
        before = recorded.get(event.event_id)
        earlier = seen.get(event.event_id)
        if before is not None and before != recorded_as(event):
            issues.append(_conflict(index, event, "was already recorded"))
        elif earlier is not None and earlier != exact(event):
            issues.append(_conflict(index, event, "was sent earlier in this input"))
        else:
            seen.setdefault(event.event_id, exact(event))
            accepted.append(event)
    return accepted, issues


def _conflict(index: int, event: TurnRecorded, where: str) -> IngestIssue:
    return IngestIssue(index, "conflict", event.message_id,
                       f"message id {event.message_id!r} of session {event.session_id!r} {where} with different "
                       "content; the first version is kept (use a new message id for a new message)")
