"""Shared helpers for the rule-mechanism tests: notes of one message, as (type, content, negated)."""

from __future__ import annotations

from engram.schemas.memory import MemoryType
from engram.streams.filters import has_decision_signal
from engram.streams.rules import extract_drafts


def notes(text: str, role: str = "user") -> list[tuple[MemoryType, str, bool]]:
    signal = role != "assistant" or has_decision_signal(text)
    return [(d.type, d.content, d.negated) for d in extract_drafts(role, text, signal)]  # type: ignore[arg-type]


def contents(text: str, role: str = "user") -> list[str]:
    return [content for _, content, _ in notes(text, role)]
