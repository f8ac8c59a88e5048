"""The wire models of the access layer, shared by the HTTP app, the MCP server and the client.

Requests forbid unknown fields (a typo is a 422, not a silent default);
responses ignore them, so an older client keeps working against a newer server.
Memories and cards travel as the core `MemoryRecord` and `GlobalCard` models.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

from engram.schemas.base import Identifier, check_utf8
from engram.schemas.inputs import TurnInput
from engram.schemas.memory import GlobalCard, MemoryRecord

DEFAULT_TENANT = "default"
"""The tenant of the local doors (Python, CLI) when none is given; the network doors require one."""
DEFAULT_AGENT = "assistant"
DEFAULT_SESSION = "default"
MAX_QUESTION_CHARS = 4000
MAX_TEXT_CHARS = 2000
RATINGS = {"none": 0, "good": 1, "bad": 2}

__all__ = [
    "CardAgents", "CardCreate", "CardUpdate", "ChatMessage", "ControlResult", "CorrectionBody",
    "ErrorBody", "FeedbackRequest", "FeedbackResult", "ForgetBody", "GlobalCard", "HealthInfo",
    "IngestResult", "LineageStep", "MemoryChange", "MemoryRecord", "MetricsInfo", "RecallQuery",
    "ProfileEntry", "ProfileResponse", "RecallResponse", "RecalledMemory", "SearchMatch", "SearchQuery", "SearchResponse", "TurnBatch", "TurnInput", "UserScope",
]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _valid_utf8(cls, data: Any) -> Any:
        """Every text of a request must be encodable as UTF-8 (a lone surrogate is refused here, not
        met later by a hash, a log append or a JSON encoder)."""
        for where, text in _texts(data, ()):
            try:
                check_utf8(text)
            except ValueError as exc:
                path = ".".join(where).encode("utf-8", "backslashreplace").decode("utf-8")
                raise ValueError(f"{path or 'value'} {exc}") from None
        return data


def _texts(value: Any, where: tuple[str, ...]) -> list[tuple[tuple[str, ...], str]]:
    """Every string in a JSON-like value (keys included), with its path."""
    if isinstance(value, str):
        return [(where, value)]
    if isinstance(value, dict):
        found = [(where, k) for k in value if isinstance(k, str)]
        for key, item in value.items():
            found += _texts(item, (*where, str(key)))
        return found
    if isinstance(value, (list, tuple)):
        return [hit for i, item in enumerate(value) for hit in _texts(item, (*where, str(i)))]
    return []


class _Response(BaseModel):
    model_config = ConfigDict(extra="ignore")


class UserScope(_Request):
    """Every request names its tenant and user; a key scoped to another tenant is refused."""

    tenant: Identifier
    user: Identifier


class TurnBatch(_Request):
    """Several turns in one request (they may belong to several users of one tenant)."""

    turns: list[dict[str, Any]] = Field(
        min_length=1, json_schema_extra={"items": {"$ref": "#/components/schemas/TurnInput"}},
        description="the turns (each a TurnInput); an invalid one is named in a 422 `invalid_turns` (its index "
                    "and why) and the valid ones are recorded")

    @model_validator(mode="before")
    @classmethod
    def _valid_utf8(cls, data: Any) -> Any:
        return data  # each turn is validated on its own (TurnInput refuses what cannot be encoded)


class IngestResult(_Response):
    received: int
    appended: int
    duplicates: int
    events: dict[str, int] = Field(default_factory=dict, description="events produced, by type")
    warnings: list[str] = Field(default_factory=list,
                                description="turns recorded with a change, e.g. a `ts` in the future clamped")


class RecallQuery(UserScope):
    """Ask for the memory context of the next LLM call."""

    agent: Identifier = DEFAULT_AGENT
    session: Identifier = DEFAULT_SESSION
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    message_id: str = Field(default="", max_length=128)
    memory_enabled: bool = True
    token_budget: int | None = Field(default=None, ge=1, le=32_000)
    limit: int | None = Field(default=None, ge=1, le=100)
    deadline_ms: float | None = Field(default=None, gt=0, le=10_000,
                                      description="defaults to the configured recall deadline (300 ms)")
    system_prompt: str = Field(default="", max_length=32_000,
                               description="your system prompt; `messages` then carries it with the memory")


class RecalledMemory(_Response):
    """One recalled item. Its id is `memory_id` for a memory or profile entry, `card_id` for a global card,
    `summary_id` for a summary, `message_id` for a turn (quoted from the conversation), and `item_id`
    whatever the kind."""

    kind: Literal["global", "profile", "memory", "turn", "summary"]
    item_id: str = Field(description="the id of the memory, card or summary (see `kind`)")
    memory_id: str | None = Field(default=None, description="set for kind memory and profile")
    card_id: str | None = Field(default=None, description="set for kind global")
    summary_id: str | None = Field(default=None, description="set for kind summary")
    message_id: str | None = Field(default=None, description="set for kind turn: the quoted turn's message id")
    id: str = Field(description="deprecated: the same as item_id (the first release's name)",
                    json_schema_extra={"deprecated": True})
    text: str
    score: float
    tokens: int
    source_message_ids: list[str] = Field(default_factory=list)
    conflict: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)


class ChatMessage(_Response):
    role: str
    content: str


class RecallFreshness(_Response):
    """Whether the recall's reads held every write of this user made before it (read your own write)."""

    runtime: Literal["embedded", "distributed"] = "embedded"
    current: bool = Field(default=True, description="every write of this user acknowledged before the recall "
                          "began is in what it read (always true on the embedded runtime)")
    behind: int | None = Field(default=0, description="records of the user's Kafka partition (other users of it "
                               "included) not yet processed and projected when the recall began; 0 when current, "
                               "null when it could not be told")
    partition: int | None = Field(default=None, description="the user's Kafka partition (distributed runtime)")
    checked_ms: float = Field(default=0.0, description="what telling it cost the recall")


class RecallResponse(_Response):
    """The assembled context. `context` is empty when nothing was recalled: inject nothing then."""

    recall_id: str
    context: str
    tokens: int = Field(default=0, description="the size of `context` in estimated tokens (one per CJK character, "
                        "one per 4 other characters): never more than the request's `token_budget`")
    injected: bool
    items: list[RecalledMemory] = Field(default_factory=list)
    recent: list[ChatMessage] = Field(default_factory=list)
    messages: list[ChatMessage] = Field(default_factory=list)
    retrieval_ms: float = 0.0
    build_ms: float = 0.0
    deadline_exceeded: bool = False
    degraded: bool = Field(default=False, description="recall failed or ran out of time: the context is empty "
                           "or lacks the parts listed in `missed`")
    missed: list[str] = Field(default_factory=list, description="retrieval parts not ready by the deadline "
                              "(known, cards, memories, summary, recent): the context is assembled without them")
    user_known: bool = Field(default=True, description="false: nothing is recorded for this user yet (a new "
                             "user, not an error): the context is empty")
    session_known: bool = Field(default=True, description="false: the session has no turn yet (a new session, "
                                "not an error): long-term memory only, no summary and no recent window")
    freshness: RecallFreshness = Field(default_factory=RecallFreshness)

    @classmethod
    def empty(cls, query: RecallQuery, recall_id: str = "", *, deadline_exceeded: bool = False,
              missed: list[str] | None = None) -> RecallResponse:
        """Nothing recalled: the question alone (plus the caller's system prompt)."""
        system = [ChatMessage(role="system", content=query.system_prompt)] if query.system_prompt.strip() else []
        return cls(recall_id=recall_id, context="", injected=False, degraded=True,
                   deadline_exceeded=deadline_exceeded, missed=missed or [],
                   messages=[*system, ChatMessage(role="user", content=query.question)])


class SearchQuery(UserScope):
    """Search the user's active memories by meaning and keywords."""

    query: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    session: Identifier | None = Field(default=None, description="optional: only reported back as session_known")
    limit: int = Field(default=10, ge=1, le=100)


class SearchMatch(_Response):
    memory: MemoryRecord
    score: float = Field(description="vector plus keyword score")
    vector_score: float
    keyword_score: float


class SearchResponse(_Response):
    """Best matches first. A new user or session is not an error: see the two flags."""

    results: list[SearchMatch] = Field(default_factory=list)
    user_known: bool = True
    session_known: bool = True


class FeedbackRequest(UserScope):
    """A verdict on one recall: 0 none, 1 good, 2 bad (or the words none/good/bad)."""

    recall_id: str = Field(min_length=1, max_length=128)
    rating: Literal[0, 1, 2]
    reason: str = Field(default="", max_length=500)
    remark: str = Field(default="", max_length=MAX_TEXT_CHARS)

    @field_validator("rating", mode="before")
    @classmethod
    def _rating_words(cls, value: object) -> object:
        return RATINGS.get(value, value) if isinstance(value, str) else value


class FeedbackResult(_Response):
    feedback_id: str
    recall_id: str
    rating: int


class CorrectionBody(UserScope):
    content: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)


class ForgetBody(UserScope):
    """Exactly one of: memory ids, a topic, or everything. `topic_text` is the deprecated name of `topic`."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    memory_ids: list[str] = Field(default_factory=list, max_length=1000)
    topic: str = Field(default="", max_length=500, validation_alias=AliasChoices("topic", "topic_text"),
                       description="forget every memory about this topic (`topic_text` is accepted too, deprecated)")
    everything: bool = False
    dry_run: bool = False
    """Only show what would be forgotten (the same matching as the real forget); change nothing."""

    @model_validator(mode="after")
    def _exactly_one(self) -> ForgetBody:
        given = sum((bool(self.memory_ids), bool(self.topic.strip()), self.everything))
        if given != 1:
            raise ValueError("give exactly one of memory_ids, topic or everything=true")
        return self


class MemoryChange(_Response):
    memory_id: str
    change: str
    before: str | None = None
    after: str | None = None


class ProfileEntry(_Response):
    """One entry of the standing profile: a memory, its life domains and whether it is sensitive."""

    memory_id: str
    type: str
    slot: str
    content: str
    domains: list[str] = Field(default_factory=list, description="life domains (food, family, home, ...)")
    sensitive: list[str] = Field(default_factory=list,
                                 description="sensitive domains: pushed only when a question touches them")
    pinned: bool = False
    importance: float
    conflict_with: list[str] = Field(default_factory=list)
    event_time: datetime


class ProfileResponse(_Response):
    """The user's standing profile, most important first: what every recall starts with (within
    `recall.profile_share` of its budget; a sensitive entry only when the question touches it).
    Correct, pin or forget an entry with the memory controls, by its `memory_id`."""

    tenant_id: str
    user_id: str
    version: int = Field(default=0, description="the profile document's version: how many times it changed "
                                                "(0: no profile document yet)")
    entries: list[ProfileEntry] = Field(default_factory=list)
    user_known: bool = True


class ControlResult(_Response):
    """What a user control really did: one entry per memory it changed."""

    affected: int
    changes: list[MemoryChange] = Field(default_factory=list)
    dry_run: bool = False


class LineageTurn(_Response):
    event_id: str
    message_id: str
    session_id: str
    role: str
    at: datetime
    content: str | None = Field(description="the turn's text; null once its user's memory was forgotten")


class LineageStep(_Response):
    event_id: str
    at: datetime
    change: str
    relation: str
    judge: str
    reason: str
    before: str | None = None
    after: str | None = None
    status: str
    candidate: dict[str, Any] | None = None
    turns: list[LineageTurn] = Field(default_factory=list)


Text = Field(default="", max_length=MAX_TEXT_CHARS)


class CardFields(_Request):
    """The hand-written content of a global card."""

    name: str = Field(default="", max_length=200)
    profile: str = Text
    long_term_goal: str = Text
    preferences: str = Text
    preferred_language: str = Field(default="", max_length=64)
    answer_style: str = Text
    extra_notes: str = Text
    tags: list[str] = Field(default_factory=list, max_length=50)
    folder: str = Field(default="", max_length=200)
    agent_ids: list[Identifier] = Field(default_factory=list, max_length=200)
    enabled: bool = True


class CardCreate(CardFields, UserScope):
    card_id: Identifier | None = Field(default=None, description="chosen by the server when omitted")


class CardVersion(UserScope):
    """A change of one card, optionally checked against the version it was computed on."""

    expected_version: int | None = Field(
        default=None, ge=1,
        description="the card version this change was computed on; if the card is at another version the "
                    "change is refused with 409 version_conflict. Omitted: the change is applied to the "
                    "current version (read again and retried when another change wins).")


class CardUpdate(CardVersion):
    """Only the fields given change."""

    name: str | None = Field(default=None, max_length=200)
    profile: str | None = Field(default=None, max_length=MAX_TEXT_CHARS)
    long_term_goal: str | None = Field(default=None, max_length=MAX_TEXT_CHARS)
    preferences: str | None = Field(default=None, max_length=MAX_TEXT_CHARS)
    preferred_language: str | None = Field(default=None, max_length=64)
    answer_style: str | None = Field(default=None, max_length=MAX_TEXT_CHARS)
    extra_notes: str | None = Field(default=None, max_length=MAX_TEXT_CHARS)
    tags: list[str] | None = Field(default=None, max_length=50)
    folder: str | None = Field(default=None, max_length=200)


class CardAgents(CardVersion):
    agent_ids: list[Identifier] = Field(min_length=1, max_length=200)


class HealthInfo(_Response):
    status: str
    runtime: str
    version: str
    auth: Literal["api-keys", "loopback-only"]


class MetricsInfo(_Response):
    counters: dict[str, int]


class ErrorDetail(_Response):
    code: str
    message: str


class ErrorBody(_Response):
    """Every error: `{"error": {"code": ..., "message": ...}}`."""

    error: ErrorDetail
