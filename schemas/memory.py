"""Memory value objects: types, slots, candidates and the current-state record."""

from __future__ import annotations

from datetime import datetime
from functools import cached_property
from enum import StrEnum
from typing import Literal

from pydantic import Field

from .base import Frozen, Identifier


class MemoryType(StrEnum):
    """The whitelist of memory categories: nothing outside it is remembered."""

    USER_PROFILE = "user_profile"
    USER_PREFERENCE = "user_preference"
    USER_GOAL = "user_goal"
    USER_CONSTRAINT = "user_constraint"
    USER_FACT = "user_fact"
    ASSISTANT_DECISION = "assistant_decision"
    ASSISTANT_PLAN = "assistant_plan"
    ASSISTANT_CONSTRAINT = "assistant_constraint"
    ASSISTANT_ACTION = "assistant_action"

    @property
    def is_assistant(self) -> bool:
        return self.value.startswith("assistant_")


USER_TYPES = frozenset(t for t in MemoryType if not t.is_assistant)
ASSISTANT_TYPES = frozenset(t for t in MemoryType if t.is_assistant)

SINGLE_VALUED_SLOTS = frozenset(
    {
        "user_profile.name",
        "user_profile.occupation",
        "user_profile.age",
        "user_profile.gender",
        "user_profile.language",
        "user_profile.company",
        "user_profile.education",
        "user_fact.location",
        "user_fact.hometown",
        "user_fact.birthday",
        "user_goal.current",
        "user_fact.schedule",
        "user_constraint.diet",
        "user_constraint.availability",
        "user_preference.language",
    }
)
"""Slots that hold one value: a new value replaces the old one."""

PERSONA_SLOTS = frozenset(s for s in SINGLE_VALUED_SLOTS if s.startswith("user_profile."))
"""Slots projected as L3 persona (recalled first, never evicted)."""


def slot_key(memory_type: MemoryType, attribute: str | None) -> str:
    """`type.attribute` for attributed memories, the bare type otherwise."""
    return f"{memory_type.value}.{attribute}" if attribute else memory_type.value


def is_single_valued(slot: str) -> bool:
    return slot in SINGLE_VALUED_SLOTS


Role = Literal["user", "assistant"]
MemoryLayer = Literal["L1", "L3"]
MemoryStatus = Literal["active", "replaced", "retired", "archived", "deleted"]


class Candidate(Frozen):
    """One extracted memory candidate, before guard and consolidation.

    `topic` names what the statement is about (e.g. "java" for "likes Java")
    and `negated` marks a negative statement about it ("no longer likes Java"),
    so consolidation can recognise a reversal of the same topic. `sensitive` names the sensitive domains
    (health, mental, religion, sexuality, money) of the statement it was drawn from
    (`core.sensitive.statement_sensitivity`): a note keeps its source's sensitivity though not its words.
    """

    type: MemoryType
    attribute: str | None = None
    content: str = Field(min_length=1, max_length=2000)
    confidence: float = Field(ge=0.0, le=1.0)
    entities: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    topic: str | None = None
    negated: bool = False
    source_message_ids: tuple[str, ...] = ()
    sensitive: tuple[str, ...] = ()

    @cached_property
    def slot(self) -> str:
        return slot_key(self.type, self.attribute)


class MemoryRecord(Frozen):
    """The current state of one memory (L1 atomic or L3 persona). `sensitive`: the sensitive domains its
    extraction marked (empty on a record made before marks were kept: its words alone are judged)."""

    memory_id: str
    tenant_id: Identifier
    user_id: Identifier
    agent_id: str = ""
    session_id: str = ""
    layer: MemoryLayer = "L1"
    type: MemoryType
    slot: str
    topic: str | None = None
    negated: bool = False
    content: str
    confidence: float
    importance: float
    source_count: int = 1
    status: MemoryStatus = "active"
    pinned: bool = False
    conflict_with: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    sensitive: tuple[str, ...] = ()
    source_message_ids: tuple[str, ...] = ()
    source_event_ids: tuple[str, ...] = ()
    created_at: datetime
    updated_at: datetime
    last_seen_at: datetime
    version: int = 1

    @property
    def stored_form(self) -> str:
        """`[type] content`, the form shown to the model."""
        return f"[{self.type.value}] {self.content}"


class SummarySections(Frozen):
    """The five sections of a session summary, exactly."""

    current_topic: tuple[str, ...] = ()
    confirmed_facts: tuple[str, ...] = ()
    todo_items: tuple[str, ...] = ()
    user_constraints: tuple[str, ...] = ()
    open_questions: tuple[str, ...] = ()

    def render(self) -> str:
        parts = []
        for heading, field in SECTION_HEADINGS:
            items = getattr(self, field)
            body = "\n".join(f"- {item}" for item in items) if items else "- (none)"
            parts.append(f"[{heading}]\n{body}")
        return "\n".join(parts)


SECTION_HEADINGS: tuple[tuple[str, str], ...] = (
    ("CURRENT_TOPIC", "current_topic"),
    ("CONFIRMED_FACTS", "confirmed_facts"),
    ("TODO_ITEMS", "todo_items"),
    ("USER_CONSTRAINTS", "user_constraints"),
    ("OPEN_QUESTIONS", "open_questions"),
)


class GlobalCard(Frozen):
    """A user-managed global memory card (recall puts enabled cards first)."""

    card_id: Identifier
    tenant_id: Identifier
    user_id: Identifier
    name: str = ""
    profile: str = ""
    long_term_goal: str = ""
    preferences: str = ""
    preferred_language: str = ""
    answer_style: str = ""
    extra_notes: str = ""
    tags: tuple[str, ...] = ()
    folder: str = ""
    agent_ids: tuple[str, ...] = ()
    enabled: bool = True
    deleted: bool = False
    created_at: datetime
    updated_at: datetime
    version: int = 1

    @property
    def mandatory(self) -> bool:
        """Cards with a profile or long-term goal are always recalled."""
        return bool(self.profile.strip() or self.long_term_goal.strip())

    def text(self) -> str:
        fields = (
            ("name", self.name), ("profile", self.profile),
            ("long-term goal", self.long_term_goal), ("preferences", self.preferences),
            ("preferred language", self.preferred_language),
            ("answer style", self.answer_style), ("notes", self.extra_notes),
        )
        return "; ".join(f"{label}: {value}" for label, value in fields if value.strip())
