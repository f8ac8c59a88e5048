"""Kafka names and specs of the distributed runtime, derived from the topic catalogue.

A `Namespace` places one deployment's topics: an optional prefix (tests use a
unique one per run, since Kafka data outlives a run) and a rebuild generation.
Source topics (L0 turns, commands, recalls) are shared by every generation;
derived topics and state changelogs are per generation, so `engram replay`
can rebuild everything from the beginning of the turns topic next to the live
generation and readers switch over when it has caught up.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engram.schemas import topics as t

SOURCE_TOPICS: tuple[t.Topic, ...] = (t.TURNS, t.COMMANDS, t.RECALLS)
"""Written by the edges (chat platform, users, recall service); never regenerated."""

ROLES: dict[str, tuple[str, ...]] = {
    "processors": ("extract", "consolidate", "profile", "summarize", "cards"),
    "extract": ("extract",),
    "consolidate": ("consolidate",),
    "profile": ("profile",),
    "summarize": ("summarize",),
    "cards": ("cards",),
}
"""Worker role -> the topology stages it runs (one faust app, one consumer group per role)."""

MAX_STATE_BYTES = 16 * 1024 * 1024
"""Largest state value (one user's memories) a changelog accepts."""


@dataclass(frozen=True)
class TopicSpec:
    """What `ensure_topics` creates: a name, a partition count and topic configs."""

    name: str
    partitions: int
    configs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Namespace:
    """Where one Engram deployment's topics live: a name prefix and a rebuild generation."""

    prefix: str = ""
    generation: int = 0

    def topic(self, topic: t.Topic | str) -> str:
        """Kafka name of a catalogue topic (by object or catalogue name)."""
        name = topic if isinstance(topic, str) else topic.name
        if self.generation and name not in _SOURCE_NAMES:
            name = f"{name}.g{self.generation}"
        return self.prefix + name

    def catalogue_name(self, kafka_name: str) -> str | None:
        """The catalogue name of one of this namespace's Kafka topics (None if not ours)."""
        for topic in t.CATALOGUE:
            if self.topic(topic) == kafka_name:
                return topic.name
        return None

    def app_id(self, role: str) -> str:
        """The faust app id (= consumer group) of a worker role."""
        suffix = f"-g{self.generation}" if self.generation else ""
        return f"{self.prefix}engram-{role}{suffix}"

    def changelog(self, role: str, stage: str) -> str:
        """The compacted changelog topic behind a stage's state table."""
        return f"{self.app_id(role)}-{stage}-state-changelog"

    def next_generation(self) -> Namespace:
        return Namespace(self.prefix, self.generation + 1)


_SOURCE_NAMES = frozenset(topic.name for topic in SOURCE_TOPICS)


def catalogue_specs(ns: Namespace) -> list[TopicSpec]:
    """Every catalogue topic in this namespace (L0 turns are kept forever: retention.ms=-1)."""
    return [TopicSpec(ns.topic(topic), topic.partitions, topic.kafka_configs()) for topic in t.CATALOGUE]


def changelog_specs(ns: Namespace, role: str) -> list[TopicSpec]:
    """Compacted changelogs of a role's stage tables (state and progress), co-partitioned with the turns."""
    configs = {"cleanup.policy": "compact", "retention.ms": "-1",
               "max.message.bytes": str(MAX_STATE_BYTES), "min.compaction.lag.ms": "0"}
    return [TopicSpec(ns.changelog(role, stage), t.TURNS.partitions, dict(configs)) for stage in ROLES[role]]


def all_specs(ns: Namespace, role: str = "processors") -> list[TopicSpec]:
    """The catalogue plus the changelogs of one worker role."""
    return catalogue_specs(ns) + changelog_specs(ns, role)
