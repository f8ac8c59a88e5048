"""The topic catalogue: every topic, what it carries and how it is kept.

Every topic is keyed by `tenant_id/user_id` so one user's events are totally
ordered in one partition. The embedded log uses the same names.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Topic:
    name: str
    event_types: tuple[str, ...]
    partitions: int = 6
    retention_ms: int = -1
    compacted: bool = False
    description: str = ""
    configs: dict[str, str] = field(default_factory=dict)

    def kafka_configs(self) -> dict[str, str]:
        base = {"cleanup.policy": "compact" if self.compacted else "delete",
                "retention.ms": str(self.retention_ms)}
        return {**base, **self.configs}


WEEK_MS = 7 * 24 * 3600 * 1000

TURNS = Topic("engram.turns", ("TurnRecorded", "SummaryRequested"),
              description="L0 chat turns and summary triggers; kept forever (source of truth)")
AUDIT = Topic("engram.audit", ("TurnSkipped", "GuardFired", "ErasureRecorded"),
              description="skips, guard audit and erasure records")
CANDIDATES = Topic("engram.candidates", ("MemoryProposed",),
                   description="guarded memory candidates awaiting consolidation")
MEMORY_CHANGES = Topic("engram.memory-changes", ("MemoryChanged",),
                       description="every change to every memory, before/after")
PROFILES = Topic("engram.profiles", ("ProfileChanged",),
                 description="versioned standing-profile changes, derived from the memory changes")
SUMMARIES = Topic("engram.summaries", ("SummarySnapshotted",),
                  description="versioned session summaries")
COMMANDS = Topic("engram.commands",
                 ("GlobalCardRequested", "ForgetRequested",
                  "PinRequested", "CorrectionRequested", "GovernanceTick"),
                 description="user and admin actions, and governance ticks")
CARDS = Topic("engram.cards", ("GlobalCardSaved", "GlobalCardDeleted", "GlobalCardRejected"),
              description="global card decisions of the cards processor: saved, deleted, rejected (and why)")
LEGACY_TOPICS: dict[str, tuple[str, ...]] = {
    "GlobalCardSaved": ("engram.commands",), "GlobalCardDeleted": ("engram.commands",),
}
"""Event type -> topics it was written to before (still read: cards saved directly before the cards processor)."""
RECALLS = Topic("engram.recalls", ("RecallServed", "FeedbackGiven"),
                retention_ms=30 * WEEK_MS, description="recall observations and feedback")
DEAD_LETTERS = Topic("engram.dead-letters", ("DeadLettered",),
                     retention_ms=4 * WEEK_MS, description="inputs that could not be processed")
LLM_CALLS = Topic("engram.llm-calls", ("LLMCallRecorded",),
                  retention_ms=30 * WEEK_MS, description="every model call: task, model, tokens, latency, outcome")

CATALOGUE: tuple[Topic, ...] = (
    TURNS, AUDIT, CANDIDATES, MEMORY_CHANGES, PROFILES, SUMMARIES, COMMANDS, CARDS, RECALLS, DEAD_LETTERS,
    LLM_CALLS,
)

TOPIC_OF_TYPE: dict[str, str] = {
    event_type: topic.name for topic in CATALOGUE for event_type in topic.event_types
}


def topic_for(event_type: str) -> str:
    """The topic an event type is written to."""
    return TOPIC_OF_TYPE[event_type]
