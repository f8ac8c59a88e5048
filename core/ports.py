"""Ports the pure processors depend on. Adapters live beside the code that uses them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from engram.schemas.events import LLMOutcome, LLMTask, TurnRecorded
from engram.schemas.memory import Candidate, MemoryRecord, SummarySections

Progress = Callable[[int], None]
"""A long job's progress callback: told how many more items are done."""


@dataclass(frozen=True)
class LLMCall:
    """One request an adapter sent to a model endpoint, as the adapter saw it.

    `outcome`: ok (answered and usable), retried (failed, another attempt
    followed), fallback (failed, the rule path was used), error (failed, no
    fallback: e.g. a failed summary snapshot). `dropped` counts answer items
    discarded by validation (types outside the whitelist, invalid items).
    """

    task: LLMTask
    model: str
    attempt: int
    outcome: LLMOutcome
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms: float = 0.0
    error: str = ""
    dropped: int = 0


@dataclass(frozen=True)
class Extraction:
    """What an extractor made of one turn. `notes` explain fallbacks and drops."""

    candidates: tuple[Candidate, ...]
    extractor: Literal["rule", "llm"] = "rule"
    notes: tuple[str, ...] = ()
    calls: tuple[LLMCall, ...] = ()


class Extractor(Protocol):
    """Turns one (already filtered) chat turn into memory candidates."""

    def extract(self, turn: TurnRecorded) -> Extraction: ...


@dataclass(frozen=True)
class Judgement:
    relation: Literal["replace", "append", "same", "skip", "new", "conflict"]
    reason: str
    judge: Literal["rule", "llm"] = "llm"
    calls: tuple[LLMCall, ...] = ()


class MergeJudge(Protocol):
    """Decides the relation between a candidate and an existing memory that rules could not."""

    def judge(self, candidate: Candidate, existing: MemoryRecord) -> Judgement | None: ...


@dataclass(frozen=True)
class SummaryMessage:
    """A message as the summarizer sees it: already redacted."""

    message_id: str
    role: Literal["user", "assistant"]
    content: str


@dataclass(frozen=True)
class SummaryResult:
    sections: SummarySections
    summarizer: Literal["extractive", "llm"] = "extractive"
    error: str = ""
    latency_ms: float = 0.0
    ok: bool = True
    notes: tuple[str, ...] = field(default_factory=tuple)
    calls: tuple[LLMCall, ...] = ()


class Summarizer(Protocol):
    """Incremental summary: previous sections + only the new messages -> new sections."""

    def summarize(
        self, previous: SummarySections | None, new_messages: Sequence[SummaryMessage]
    ) -> SummaryResult: ...
