"""Wiring as data: which processor reads which topics and writes which.

`python -m engram.streams.topology` prints it.
"""

from __future__ import annotations

from dataclasses import dataclass

from engram.schemas import topics as t

from .consolidate import ConsolidateProcessor
from .cards import CardsProcessor
from .extract import ExtractProcessor
from .processor import Processor
from .summarize import SummarizeProcessor


@dataclass(frozen=True)
class Stage:
    processor: Processor  # type: ignore[type-arg]
    inputs: tuple[t.Topic, ...]
    outputs: tuple[t.Topic, ...]


def build_topology() -> tuple[Stage, ...]:
    """The processing stages of both runtimes, in dependency order."""
    return (
        Stage(ExtractProcessor(), (t.TURNS,), (t.AUDIT, t.CANDIDATES)),
        Stage(ConsolidateProcessor(), (t.CANDIDATES, t.COMMANDS), (t.MEMORY_CHANGES,)),
        Stage(SummarizeProcessor(), (t.TURNS, t.COMMANDS), (t.SUMMARIES,)),
        Stage(CardsProcessor(), (t.COMMANDS,), (t.CARDS,)),
    )


PROJECTIONS: tuple[tuple[str, tuple[t.Topic, ...]], ...] = (
    ("current-memory", (t.TURNS, t.MEMORY_CHANGES, t.SUMMARIES, t.COMMANDS, t.CARDS)),
)


def describe() -> str:
    lines = []
    for stage in build_topology():
        ins = ", ".join(topic.name for topic in stage.inputs)
        outs = ", ".join(topic.name for topic in stage.outputs)
        types = ", ".join(sorted(stage.processor.consumes))
        lines.append(f"{ins} --[{stage.processor.name}: {types}]--> {outs}")
    for name, inputs in PROJECTIONS:
        lines.append(f"{', '.join(topic.name for topic in inputs)} --> projection {name}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(describe())
