"""Wiring as data: who writes which topic, which processor reads and writes which, what each projection reads.

Three kinds of writers:

- edges (`EDGES`): the doors and the runtimes append what comes from outside —
  turns, commands, recall observations — and the erasure and governance records;
- processor stages (`build_topology`): pure processors, run by the embedded
  runtime in one process or by `engram worker` on Kafka; the runner that drives
  a stage also dead-letters an input the processor fails on (so every stage
  writes `engram.dead-letters`), and the stages that may call a model record
  each call (`engram.llm-calls`);
- projections (`PROJECTIONS`) only read: the current-memory store (the embedded
  store, or Weaviate) and the analytics store (ClickHouse / chDB).

`engram topology` prints it; `engram topology --markdown` prints the tables
ARCHITECTURE.md carries. A test runs every stage and checks that each type it
emits goes to one of its declared outputs.
"""

from __future__ import annotations

from dataclasses import dataclass

from engram.schemas import topics as t

from .cards import CardsProcessor
from .consolidate import ConsolidateProcessor
from .extract import ExtractProcessor
from .processor import Processor
from .profile import ProfileProcessor
from .summarize import SummarizeProcessor


@dataclass(frozen=True)
class Stage:
    processor: Processor  # type: ignore[type-arg]
    inputs: tuple[t.Topic, ...]
    outputs: tuple[t.Topic, ...]


@dataclass(frozen=True)
class Edge:
    """A writer outside the processors: what it appends and where."""

    name: str
    outputs: tuple[t.Topic, ...]
    what: str


@dataclass(frozen=True)
class Projection:
    name: str
    inputs: tuple[t.Topic, ...]
    store: str


RUNNER = (t.DEAD_LETTERS,)
"""Written by the runner of every stage: the input a processor failed on, with the error."""


def build_topology() -> tuple[Stage, ...]:
    """The processing stages of both runtimes, in dependency order."""
    return (
        Stage(ExtractProcessor(), (t.TURNS,), (t.AUDIT, t.CANDIDATES, t.LLM_CALLS, *RUNNER)),
        Stage(ConsolidateProcessor(), (t.CANDIDATES, t.COMMANDS), (t.MEMORY_CHANGES, t.LLM_CALLS, *RUNNER)),
        Stage(ProfileProcessor(), (t.MEMORY_CHANGES,), (t.PROFILES, *RUNNER)),
        Stage(SummarizeProcessor(), (t.TURNS, t.COMMANDS), (t.SUMMARIES, t.LLM_CALLS, *RUNNER)),
        Stage(CardsProcessor(), (t.COMMANDS,), (t.CARDS, *RUNNER)),
    )


EDGES: tuple[Edge, ...] = (
    Edge("doors", (t.TURNS, t.COMMANDS, t.RECALLS),
         "chat turns and summary triggers; user and admin commands (correct, pin, forget, cards); recall "
         "observations and feedback (HTTP, MCP, the CLI, engram.Memory, the producer SDK)"),
    Edge("governance timer", (t.COMMANDS,),
         "a GovernanceTick per user (`engram govern`, or the consolidation worker's timer)"),
    Edge("erasure", (t.AUDIT,),
         "an ErasureRecorded once a forget has erased everything and destroyed the keys it should"),
)

PROJECTIONS: tuple[Projection, ...] = (
    Projection("current-memory", (t.TURNS, t.MEMORY_CHANGES, t.PROFILES, t.SUMMARIES, t.COMMANDS, t.CARDS),
               "the embedded store (SQLite + vectors) or Weaviate: what recall and the doors read"),
    Projection("analytics", t.CATALOGUE,
               "ClickHouse (chDB by default): one event_log row per event and fact tables for SQL, "
               "lineage and erasure records"),
)


def describe() -> str:
    lines = []
    for edge in EDGES:
        lines.append(f"{edge.name} --> {', '.join(topic.name for topic in edge.outputs)}")
    for stage in build_topology():
        ins = ", ".join(topic.name for topic in stage.inputs)
        outs = ", ".join(topic.name for topic in stage.outputs)
        types = ", ".join(sorted(stage.processor.consumes))
        lines.append(f"{ins} --[{stage.processor.name}: {types}]--> {outs}")
    for projection in PROJECTIONS:
        lines.append(f"{', '.join(topic.name for topic in projection.inputs)} --> projection {projection.name}")
    return "\n".join(lines)


def markdown() -> str:
    """The topics, writers, stages and projections as Markdown tables (ARCHITECTURE.md carries this)."""
    out = ["| topic | event types | kept |", "|---|---|---|"]
    for topic in t.CATALOGUE:
        kept = "compacted" if topic.compacted else ("forever" if topic.retention_ms < 0
                                                    else f"{topic.retention_ms // t.WEEK_MS} weeks")
        out.append(f"| `{topic.name}` | {', '.join(topic.event_types)} | {kept} |")
    out += ["", "| writer | writes | what |", "|---|---|---|"]
    for edge in EDGES:
        out.append(f"| {edge.name} | {_names(edge.outputs)} | {edge.what} |")
    out += ["", "| stage | reads | handles | writes |", "|---|---|---|---|"]
    for stage in build_topology():
        handles = ", ".join(sorted(stage.processor.consumes))
        out.append(f"| `{stage.processor.name}` | {_names(stage.inputs)} | {handles} | {_names(stage.outputs)} |")
    out += ["", "| projection | reads | store |", "|---|---|---|"]
    for projection in PROJECTIONS:
        out.append(f"| {projection.name} | {_names(projection.inputs)} | {projection.store} |")
    return "\n".join(out) + "\n"


def _names(topics: tuple[t.Topic, ...]) -> str:
    return ", ".join(f"`{topic.name}`" for topic in topics)


if __name__ == "__main__":
    print(describe())
