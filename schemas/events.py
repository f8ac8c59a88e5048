"""The concrete Engram events. Each is frozen, versioned and self-describing."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal, Union

from pydantic import Field, field_validator

from .base import Event, Frozen, Identifier, utc
from .memory import Candidate, GlobalCard, MemoryRecord, MemoryType, Role, SummarySections
from .profile import ProfileItem, ProfileRemoval

MAX_CONTENT_CHARS = 32_000


class TurnRecorded(Event):
    """L0: one chat message, appended once and never changed. Source of truth."""

    type: Literal["TurnRecorded"] = "TurnRecorded"
    schema_version: Literal[2] = 2
    agent_id: Identifier
    session_id: Identifier
    message_id: Identifier
    parent_id: str | None = None
    role: Role
    content: str = Field(max_length=MAX_CONTENT_CHARS)
    metadata: dict[str, str] = Field(default_factory=dict)


class SummaryRequested(Event):
    """Ask the summarizer to check its trigger for one session (edge or timer)."""

    type: Literal["SummaryRequested"] = "SummaryRequested"
    schema_version: Literal[1] = 1
    agent_id: str = ""
    session_id: Identifier


SkipReason = Literal[
    "too_short", "no_signal", "chit_chat", "nothing_extracted", "no_decision_signal"
]


class TurnSkipped(Event):
    """A turn that produced no candidate, and why (counted, never silent)."""

    type: Literal["TurnSkipped"] = "TurnSkipped"
    schema_version: Literal[1] = 1
    session_id: str
    message_id: str
    role: Role
    reason: SkipReason


class MemoryProposed(Event):
    """A candidate that passed the guard; consolidation decides what it becomes. (v2: the candidate's
    `sensitive` mark.)"""

    type: Literal["MemoryProposed"] = "MemoryProposed"
    schema_version: Literal[2] = 2
    agent_id: str
    session_id: str
    candidate: Candidate
    importance: float = Field(ge=0.0, le=1.0)
    extractor: Literal["rule", "llm"] = "rule"


GuardAction = Literal["redacted", "rejected"]


class GuardFired(Event):
    """Audit of one guard rule. Holds a hash of the original, never the secret."""

    type: Literal["GuardFired"] = "GuardFired"
    schema_version: Literal[1] = 1
    session_id: str
    message_id: str
    rule: str
    action: GuardAction
    original_sha256: str
    memory_type: str = ""
    detail: str = ""


ChangeKind = Literal[
    "created", "updated", "reinforced", "replaced", "retired",
    "pinned", "unpinned", "corrected", "deleted", "archived", "discarded",
]
Relation = Literal["new", "same", "append", "replace", "skip", "conflict", "user", "decay"]
Judge = Literal["rule", "llm", "user", "system"]


class MemoryChanged(Event):
    """One change to one memory, with the state before and after and who decided. (v2: the records'
    `sensitive` mark.)"""

    type: Literal["MemoryChanged"] = "MemoryChanged"
    schema_version: Literal[2] = 2
    memory_id: str
    change: ChangeKind
    before: MemoryRecord | None = None
    after: MemoryRecord | None = None
    relation: Relation
    judge: Judge
    reason: str = ""


class ProfileChanged(Event):
    """One change of a user's standing profile document (`engram.streams.profile`): the entries added,
    updated and removed, derived from the memory changes named in `source_memory_ids` (the events are
    `causation_ids`). `profile_version` counts the user's profile changes from 1.

    No user text: entries name memories (their text stays sealed in the memory events); the entries'
    domain labels, derived from that text, are sealed with it (`added`, `updated`).
    """

    type: Literal["ProfileChanged"] = "ProfileChanged"
    schema_version: Literal[1] = 1
    profile_version: int = Field(ge=1)
    added: tuple[ProfileItem, ...] = ()
    updated: tuple[ProfileItem, ...] = ()
    removed: tuple[ProfileRemoval, ...] = ()
    source_memory_ids: tuple[str, ...] = ()
    entry_count: int = Field(default=0, ge=0)
    """How many entries the profile holds after this change."""


class SummarySnapshotted(Event):
    """L2: one versioned session summary and the message range it covers."""

    type: Literal["SummarySnapshotted"] = "SummarySnapshotted"
    schema_version: Literal[1] = 1
    agent_id: str = ""
    session_id: str
    summary_id: str
    version: int
    range_start_message_id: str
    range_end_message_id: str
    source_message_count: int
    total_message_count: int
    source_message_ids: tuple[str, ...] = ()
    sections: SummarySections
    latency_ms: float = 0.0
    status: Literal["ok", "failed"] = "ok"
    error: str = ""
    summarizer: Literal["extractive", "llm"] = "extractive"


class GlobalCardSaved(Event):
    """A global card created or changed by its owner (full new state)."""

    type: Literal["GlobalCardSaved"] = "GlobalCardSaved"
    schema_version: Literal[1] = 1
    card: GlobalCard


class GlobalCardDeleted(Event):
    """A global card deleted logically."""

    type: Literal["GlobalCardDeleted"] = "GlobalCardDeleted"
    schema_version: Literal[1] = 1
    card_id: str


CardRejection = Literal["version_conflict", "card_exists", "unknown_card"]


class GlobalCardRequested(Event):
    """A command on one global card, decided by the cards processor (`engram.streams.cards`) with a version check.

    `expected_version` is the card version the change was computed on (0: the card
    must not exist yet). `card` is the full new state of a save; `base` is the card
    as the requester read it, taken by the processor only when it has no record of
    the card (cards saved before commands were decided by the processor).
    """

    type: Literal["GlobalCardRequested"] = "GlobalCardRequested"
    schema_version: Literal[1] = 1
    card_id: Identifier
    action: Literal["create", "save", "delete"]
    expected_version: int = Field(ge=0)
    card: GlobalCard | None = None
    base: GlobalCard | None = None
    label: str = ""
    """What the change is, in words (created, updated, enabled, bound, ...): counters and audit."""


class GlobalCardRejected(Event):
    """A card command the cards processor refused, and why (the card is unchanged)."""

    type: Literal["GlobalCardRejected"] = "GlobalCardRejected"
    schema_version: Literal[1] = 1
    request_id: str
    card_id: str
    reason: CardRejection
    expected_version: int
    current_version: int


class RecallServed(Event):
    """Observation of one recall: what was asked, retrieved and injected, how fast (for analysts)."""

    type: Literal["RecallServed"] = "RecallServed"
    schema_version: Literal[1] = 1
    recall_id: str
    agent_id: str
    session_id: str
    message_id: str = ""
    question: str
    memory_enabled: bool = True
    memory_injected: bool
    retrieved_count: int
    injected_count: int
    retrieved_ids: tuple[str, ...] = ()
    injected_ids: tuple[str, ...] = ()
    retrieval_latency_ms: float
    context_build_latency_ms: float
    recent_message_count: int
    long_term_count: int
    global_count: int = 0
    summary_present: bool
    top_relevance: float = 0.0
    avg_relevance: float = 0.0
    deadline_exceeded: bool = False


class FeedbackGiven(Event):
    """A user's verdict on one recall: 0 none, 1 good, 2 bad."""

    type: Literal["FeedbackGiven"] = "FeedbackGiven"
    schema_version: Literal[1] = 1
    recall_id: str
    rating: Literal[0, 1, 2]
    reason: str = ""
    remark: str = ""


class ForgetRequested(Event):
    """User control: forget given memories, memories matching a text, or everything."""

    type: Literal["ForgetRequested"] = "ForgetRequested"
    schema_version: Literal[1] = 1
    memory_ids: tuple[str, ...] = ()
    topic_text: str = ""
    everything: bool = False


ErasureScope = Literal["everything", "memories", "topic"]


class ErasureRecorded(Event):
    """What one forget erased: counts and ids, never content (for analysts and auditors).

    `keys_destroyed` > 0 means the owner's data key is gone: every sealed text
    of theirs in the log (and in every copy of it) is unreadable.
    """

    type: Literal["ErasureRecorded"] = "ErasureRecorded"
    schema_version: Literal[1] = 1
    request_id: str
    scope: ErasureScope
    requested_by: str = ""
    memories_erased: int = 0
    memory_ids: tuple[str, ...] = ()
    keys_destroyed: int = 0


class PinRequested(Event):
    type: Literal["PinRequested"] = "PinRequested"
    schema_version: Literal[1] = 1
    memory_id: str
    pinned: bool = True


class CorrectionRequested(Event):
    type: Literal["CorrectionRequested"] = "CorrectionRequested"
    schema_version: Literal[1] = 1
    memory_id: str
    content: str = Field(min_length=1, max_length=2000)


class GovernanceTick(Event):
    """Timer edge: "govern this user's memories as of `as_of`" (decay, archive, delete).

    Processors never read the clock, so the governance timer (or `engram govern`)
    stamps the time here. `occurred_at` equals `as_of`, and the id derives from
    tenant, user and `as_of` (see `engram.streams.govern.governance_tick`), so two
    timers, or a restarted one, emitting the same bucket emit the same event.
    """

    type: Literal["GovernanceTick"] = "GovernanceTick"
    schema_version: Literal[1] = 1
    as_of: datetime

    @field_validator("as_of")
    @classmethod
    def _as_of_utc(cls, value: datetime) -> datetime:
        return utc(value)


LLMTask = Literal["extract", "judge", "summarize", "embed"]
LLMOutcome = Literal["ok", "retried", "fallback", "error"]


class LLMCallRecorded(Event):
    """One request to a model endpoint made while handling the source event (for cost and latency analysis).

    One event per attempt: `outcome` says whether it answered (ok), failed and
    was retried, failed and the rule path took over (fallback), or failed with
    no fallback (error). The id derives from the source event (`causation_ids`).
    """

    type: Literal["LLMCallRecorded"] = "LLMCallRecorded"
    schema_version: Literal[1] = 1
    agent_id: str = ""
    session_id: str = ""
    processor: str
    task: LLMTask
    model: str
    attempt: int = Field(ge=1)
    outcome: LLMOutcome
    tokens_in: int = Field(default=0, ge=0)
    tokens_out: int = Field(default=0, ge=0)
    latency_ms: float = Field(default=0.0, ge=0.0)
    error: str = ""
    dropped_items: int = Field(default=0, ge=0)


class DeadLettered(Event):
    """An input that could not be processed, with the reason and its raw bytes."""

    type: Literal["DeadLettered"] = "DeadLettered"
    schema_version: Literal[1] = 1
    source_topic: str
    reason: str
    raw: str
    """The original payload, base64 if it was not valid UTF-8."""


AnyEvent = Annotated[
    Union[
        TurnRecorded, SummaryRequested, TurnSkipped, MemoryProposed, GuardFired,
        MemoryChanged, ProfileChanged, SummarySnapshotted, GlobalCardSaved, GlobalCardDeleted, GlobalCardRequested,
        GlobalCardRejected, RecallServed, FeedbackGiven, ForgetRequested, PinRequested,
        CorrectionRequested, DeadLettered, LLMCallRecorded, GovernanceTick, ErasureRecorded,
    ],
    Field(discriminator="type"),
]

EVENT_TYPES: dict[str, type[Event]] = {
    cls.model_fields["type"].default: cls
    for cls in (
        TurnRecorded, SummaryRequested, TurnSkipped, MemoryProposed, GuardFired,
        MemoryChanged, ProfileChanged, SummarySnapshotted, GlobalCardSaved, GlobalCardDeleted, GlobalCardRequested,
        GlobalCardRejected, RecallServed, FeedbackGiven, ForgetRequested, PinRequested,
        CorrectionRequested, DeadLettered, LLMCallRecorded, GovernanceTick, ErasureRecorded,
    )
}

__all__ = [
    "AnyEvent", "Candidate", "EVENT_TYPES", "GlobalCard", "MemoryRecord", "MemoryType",
    "SummarySections", "Frozen",
] + [name for name in EVENT_TYPES]
