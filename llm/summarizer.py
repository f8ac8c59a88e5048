"""Incremental session summaries through a chat model.

The model sees the previous sections and only the new messages. Its answer
must have the five sections exactly (as a JSON object, or as the bracketed
text form `[CURRENT_TOPIC] - item ...`); anything else is malformed and
retried once. A summary that still fails is returned as failed, with the
error and latency, so the processor records a failed snapshot and tries
again on the next trigger.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from engram.core.config import SummaryConfig
from engram.core.ports import SummaryMessage, SummaryResult
from engram.core.text import compact
from engram.schemas.memory import SECTION_HEADINGS, SummarySections

from .client import ModelClient
from .parsing import AnswerError, load_json
from .prompts import SUMMARY_SCHEMA, summary_messages

_HEADING_RE = re.compile(r"^\s*\[([A-Z_]+)\]\s*$", re.MULTILINE)
_NONE = {"(none)", "none", "无", "(无)", "n/a", "-"}
FIELDS = tuple(name for _, name in SECTION_HEADINGS)


class AnsweredSummary(BaseModel):
    """The five sections, exactly: a missing or an extra section is an invalid answer."""

    model_config = ConfigDict(extra="forbid")

    current_topic: list[str]
    confirmed_facts: list[str]
    todo_items: list[str]
    user_constraints: list[str]
    open_questions: list[str]

    @field_validator("*", mode="before")
    @classmethod
    def _items(cls, value: Any) -> list[str]:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            raise ValueError("a section is a list of strings")
        items = (str(v).strip().lstrip("-•* ").strip() for v in value if v is not None)
        return [item for item in items if item and item.lower() not in _NONE]


class LLMSummarizer:
    """Summarizer port over a chat model; failures come back as failed results, never raised."""

    name = "llm"

    def __init__(self, client: ModelClient, model: str, config: SummaryConfig | None = None) -> None:
        self.client = client
        self.model = model
        self.config = config or SummaryConfig()

    def summarize(self, previous: SummarySections | None,
                  new_messages: Sequence[SummaryMessage]) -> SummaryResult:
        messages = summary_messages(previous, new_messages, self.client.prompt_budget)
        answer = self.client.ask("summarize", self.model, messages, self._parse, on_failure="error",
                                 schema=SUMMARY_SCHEMA)
        if answer.value is None:
            return SummaryResult(sections=previous or SummarySections(), summarizer="llm", error=answer.error,
                                 latency_ms=answer.latency_ms, ok=False, calls=answer.calls)
        return SummaryResult(sections=answer.value, summarizer="llm", latency_ms=answer.latency_ms,
                             calls=answer.calls)

    def _parse(self, text: str) -> tuple[SummarySections, int]:
        raw = _sections_of(text)
        try:
            answered = AnsweredSummary.model_validate(raw)
        except ValidationError as exc:
            fields = ", ".join(sorted({str(e["loc"][0]) for e in exc.errors() if e["loc"]}))
            raise AnswerError(f"summary sections invalid: {fields or exc.errors()[0]['msg']}") from exc
        return SummarySections(**{f: self._bounded(getattr(answered, f)) for f in FIELDS}), 0

    def _bounded(self, items: list[str]) -> tuple[str, ...]:
        limit, kept, keys = self.config.max_item_chars, [], set()
        for item in items:
            key = compact(item)
            if key in keys:
                continue
            keys.add(key)
            kept.append(item if len(item) <= limit else item[: limit - 1].rstrip() + "…")
        return tuple(kept[-self.config.max_items_per_section:])


def _sections_of(text: str) -> dict[str, Any]:
    """The sections as a dict: from a JSON object, else from the bracketed text form."""
    try:
        value = load_json(text)
    except AnswerError:
        return _bracketed(text)
    if not isinstance(value, dict):
        raise AnswerError("expected a JSON object with the five sections")
    inner = value.get("summary")
    value = inner if isinstance(inner, dict) else value
    return {str(k).strip().strip("[]").lower().replace(" ", "_"): v for k, v in value.items()}


def _bracketed(text: str) -> dict[str, Any]:
    marks = list(_HEADING_RE.finditer(text or ""))
    if not marks:
        raise AnswerError("no summary sections in answer")
    out: dict[str, Any] = {}
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        key = mark.group(1).lower()
        if key in out:
            raise AnswerError(f"section {mark.group(1)} appears twice")
        out[key] = [line.strip() for line in text[mark.end():end].splitlines() if line.strip()]
    return out
