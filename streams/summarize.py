"""L2 session summaries: incremental, triggered, idempotent.

Turns accumulate per session as pending messages; a `SummaryRequested`
checks the trigger and, when it fires, summarises the previous sections plus
only the pending messages into the next `SummarySnapshotted` version.

Turns are redacted as they are recorded, so neither the persisted state nor
the summarizer ever holds a secret (redaction of clean text is a cheap pre-check).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, cast

from pydantic import BaseModel, Field, model_validator

from engram.core.config import SummaryConfig
from engram.core.text import compact
from engram.core.pii import redact
from engram.core.ports import Summarizer, SummaryMessage, SummaryResult
from engram.schemas.base import Event, derive_id, stable_id
from engram.schemas.events import ForgetRequested, SummaryRequested, SummarySnapshotted, TurnRecorded
from engram.schemas.memory import SECTION_HEADINGS, Role, SummarySections
from engram.streams.forget import topic_of
from engram.streams.llm_calls import llm_call_events
from engram.streams.processor import ProcessorContext
from engram.streams.summarizer import ExtractiveSummarizer

_MAX_ERROR_CHARS = 500


class PendingMessage(NamedTuple):
    """A message not yet covered by a snapshot. `content` is redacted when summarised."""

    message_id: str
    role: str
    content: str
    chars: int


class SessionSummaryState(BaseModel):
    """Per-session summary state: the messages seen, the pending ones, the latest snapshot.

    `seen` mirrors `message_ids` as a set for O(1) duplicate checks; it is not
    persisted but rebuilt on load. (A plain field, not a private attribute:
    pydantic private attributes cost microseconds per access on this hot path.)
    """

    agent_id: str = ""
    message_ids: list[str] = []
    pending: list[PendingMessage] = []
    version: int = 0
    end_message_id: str = ""
    source_message_count: int = 0
    sections: SummarySections | None = None
    seen: set[str] = Field(default_factory=set, exclude=True, repr=False)

    @model_validator(mode="after")
    def _rebuild_seen(self) -> SessionSummaryState:
        self.seen.update(self.message_ids)
        return self

    @property
    def total_message_count(self) -> int:
        return len(self.message_ids)

    @property
    def pending_chars(self) -> int:
        return sum(m.chars for m in self.pending)

    def record(self, message_id: str, role: str, content: str) -> bool:
        """Add a message to the pending list; False if this id was already seen."""
        if message_id in self.seen:
            return False
        self.seen.add(message_id)
        self.message_ids.append(message_id)
        self.pending.append(PendingMessage(message_id, role, content, len(content)))
        return True


class UserSummaryState(BaseModel):
    """The summary state of every session of one user (so a user-wide forget reaches them all)."""

    sessions: dict[str, SessionSummaryState] = Field(default_factory=dict)

    def session(self, session_id: str) -> SessionSummaryState:
        state = self.sessions.get(session_id)
        if state is None:
            state = self.sessions[session_id] = SessionSummaryState()
        return state


class SummarizeProcessor:
    """Keeps pending messages per session and makes the next summary version on request."""

    name = "summarize"
    consumes = frozenset({"TurnRecorded", "SummaryRequested", "ForgetRequested"})
    state_type = UserSummaryState

    def state_key(self, event: Event) -> str | None:
        return event.partition_key

    def process(
        self, state: UserSummaryState | None, event: Event, ctx: ProcessorContext
    ) -> tuple[UserSummaryState | None, list[Event]]:
        state = state if state is not None else UserSummaryState()
        if isinstance(event, TurnRecorded):
            session = state.session(event.session_id)
            if session.record(event.message_id, event.role, redact(event.content).text) and not session.agent_id:
                session.agent_id = event.agent_id
            return state, []
        if isinstance(event, SummaryRequested):
            return state, self._on_request(state.session(event.session_id), event, ctx)
        if isinstance(event, ForgetRequested):
            for session in state.sessions.values():
                forget_in_session(session, event)
        return state, []

    def _on_request(
        self, state: SessionSummaryState, request: SummaryRequested, ctx: ProcessorContext
    ) -> list[Event]:
        if not should_summarize(state, ctx.config.summary):
            return []
        summarizer = ctx.summarizer or ExtractiveSummarizer(ctx.config.summary)
        result = _run(summarizer, state.sections, _redacted(state.pending))
        snapshot = _snapshot(state, request, result)
        if result.ok:
            _advance(state, snapshot)
        return [snapshot, *llm_call_events(request, self.name, result.calls, agent_id=snapshot.agent_id,
                                           session_id=request.session_id)]


def forget_in_session(state: SessionSummaryState, request: ForgetRequested) -> None:
    """Drop what a forget request names from what the next summary builds on.

    Forgetting everything empties the pending messages and the previous
    sections (the store drops the snapshots themselves); forgetting a topic
    drops the pending messages and section items that mention it.
    """
    if request.everything:
        state.pending = []
        state.sections = None
        return
    needle = compact(topic_of(request.topic_text))
    if not needle:
        return
    state.pending = [m for m in state.pending if needle not in compact(m.content)]
    if state.sections is not None:
        state.sections = SummarySections(**{
            field: tuple(item for item in getattr(state.sections, field) if needle not in compact(item))
            for _, field in SECTION_HEADINGS
        })


def should_summarize(state: SessionSummaryState, config: SummaryConfig) -> bool:
    """The summary trigger (enough new messages or characters), evaluated on the pending messages."""
    if not state.pending:
        return False  # the latest snapshot already ends at the last message
    if state.version == 0:
        return state.total_message_count >= config.first_snapshot_messages
    return (
        len(state.pending) >= config.new_messages
        or state.pending_chars >= config.new_characters
    )


def _redacted(pending: Sequence[PendingMessage]) -> list[SummaryMessage]:
    return [SummaryMessage(m.message_id, cast(Role, m.role), m.content) for m in pending]


def _run(
    summarizer: Summarizer, previous: SummarySections | None, messages: list[SummaryMessage]
) -> SummaryResult:
    """Call the summarizer; an exception becomes a failed result, never a crash."""
    try:
        return summarizer.summarize(previous, messages)
    except Exception as exc:  # noqa: BLE001 - any adapter failure is recorded, not raised
        error = f"{type(exc).__name__}: {exc}"[:_MAX_ERROR_CHARS]
        kind = "extractive" if isinstance(summarizer, ExtractiveSummarizer) else "llm"
        return SummaryResult(
            sections=previous or SummarySections(), summarizer=kind, error=error, ok=False
        )


def _snapshot(
    state: SessionSummaryState, request: SummaryRequested, result: SummaryResult
) -> SummarySnapshotted:
    version = state.version + 1
    pending = state.pending
    return SummarySnapshotted(
        event_id=derive_id(request.event_id, "summarize", 0),
        occurred_at=request.occurred_at,
        tenant_id=request.tenant_id,
        user_id=request.user_id,
        causation_ids=(request.event_id,),
        correlation_id=request.correlation_id,
        agent_id=request.agent_id or state.agent_id,
        session_id=request.session_id,
        summary_id=stable_id(
            request.tenant_id, request.user_id, request.session_id, "summary", str(version)
        ),
        version=version,
        range_start_message_id=pending[0].message_id,
        range_end_message_id=pending[-1].message_id,
        source_message_count=len(pending),
        total_message_count=state.total_message_count,
        source_message_ids=tuple(m.message_id for m in pending),
        sections=result.sections,
        latency_ms=result.latency_ms,
        status="ok" if result.ok else "failed",
        error=result.error[:_MAX_ERROR_CHARS],
        summarizer=result.summarizer,
    )


def _advance(state: SessionSummaryState, snapshot: SummarySnapshotted) -> None:
    """A successful snapshot becomes the latest; its messages are no longer pending."""
    state.version = snapshot.version
    state.end_message_id = snapshot.range_end_message_id
    state.source_message_count = snapshot.source_message_count
    state.sections = snapshot.sections
    state.pending = []
