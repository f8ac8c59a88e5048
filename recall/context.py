"""Rendering of the memory context. Pure: what goes into the system prompt, in order.

Long-term memories are grouped by type: the stored form's `[type]` tag is
written once above its group instead of on every line (on a 1,000-token
budget the repeated tag was a fifth of every line), and each line is the
memory's content ending with its event date, `(2023-05-08)`, so a model
reading the context can answer questions about when something happened.
Within a group, lines keep the recall order. The best few memories are followed
by the turns around their source turn, quoted (`  > "…"`): the question a note
answers and the reply, in the user's own words, which extraction rewrote.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Literal

from engram.core.text import estimate_tokens, has_cjk

from .dates import spell_out

ItemKind = Literal["global", "profile", "memory", "turn", "summary"]

REFERENCE_CLAUSE_EN = (
    "The memory below is for reference only. If it conflicts with what the user says now, "
    "the user wins."
)
REFERENCE_CLAUSE_ZH = "以下记忆仅供参考；如与用户当前所说的内容冲突，以用户当前所说为准。"
HEADINGS = {
    "en": {"global": "Global memory", "long": "Long-term memory", "turns": "Earlier conversation",
           "summary": "Session summary", "conflict": "conflicting memories"},
    "zh": {"global": "全局记忆", "long": "长期记忆", "turns": "以往对话", "summary": "会话摘要",
           "conflict": "存在冲突的记忆"},
}


@dataclass(frozen=True)
class RecalledItem:
    """One piece of recalled memory with its score and provenance."""

    kind: ItemKind
    item_id: str
    text: str
    score: float
    tokens: int
    source_message_ids: tuple[str, ...] = ()
    created_at: datetime | None = None
    conflict_note: str = ""
    details: dict[str, object] = field(default_factory=dict)
    event_time: datetime | None = None
    """When what the memory says was first said (its source turn's event time)."""
    context_turns: tuple[tuple[str, str], ...] = ()
    """(message id, redacted text) of the turns shown beside the memory: the one before its source turn
    (what it answers) and the one after (the reply). Only the best few memories carry them."""


def without_context_turns(item: RecalledItem) -> RecalledItem:
    """The item without the turns quoted beside it (when only the memory itself fits the budget); its
    details no longer list them either (neither `context_turns` nor the quoted `evidence`)."""
    details = {k: v for k, v in item.details.items() if k not in ("context_turns", "evidence")}
    return replace(item, context_turns=(), tokens=estimate_tokens(item.text), details=details)


def reference_clause(question: str) -> str:
    return REFERENCE_CLAUSE_ZH if has_cjk(question) else REFERENCE_CLAUSE_EN


SECTIONS = {"global": "global", "profile": "long", "memory": "long", "turn": "turns", "summary": "summary"}
"""The section of the context each kind of item is rendered in, in rendering order."""


def section_words(question: str) -> dict[str, str]:
    """The headings in the question's language."""
    return HEADINGS["zh" if has_cjk(question) else "en"]


def section_heading(section: str, words: dict[str, str]) -> str:
    """What opens a section: the blank line after what precedes it and the `## heading` line."""
    return f"\n\n## {words.get(section, section)}\n"


def item_line(item: RecalledItem, words: dict[str, str]) -> str:
    """One item as the context shows it (a summary is its text, every other item a `- ` line)."""
    if item.kind == "summary":
        return item.text
    if item.kind in ("profile", "memory"):
        return _memory_line(item, words["conflict"])
    if item.kind == "turn":
        return _turn_line(item)
    return f"- {item.text}"


def group_tag(item: RecalledItem) -> str:
    """The `[type]` line above a long-term item's group ("" when the item is in no group)."""
    type_name = str(item.details.get("type", "")) if SECTIONS.get(item.kind) == "long" else ""
    return f"[{type_name}]" if type_name else ""


def render_memory_section(items: Sequence[RecalledItem], question: str) -> str:
    """The memory block for the system prompt; empty when nothing was recalled."""
    if not items:
        return ""
    words = section_words(question)
    parts = [reference_clause(question)]
    cards = [i for i in items if i.kind == "global"]
    long_term = [i for i in items if i.kind in ("profile", "memory")]
    summaries = [i for i in items if i.kind == "summary"]
    turns = [i for i in items if i.kind == "turn"]
    if cards:
        parts.append(f"## {words['global']}\n" + "\n".join(item_line(i, words) for i in cards))
    if long_term:
        parts.append(f"## {words['long']}\n" + "\n".join(_long_term_lines(long_term, words["conflict"])))
    if turns:
        parts.append(f"## {words['turns']}\n" + "\n".join(_turn_line(i) for i in turns))
    for summary in summaries:
        parts.append(f"## {words['summary']}\n{summary.text}")
    return "\n\n".join(parts)


def _long_term_lines(items: Sequence[RecalledItem], conflict_word: str) -> list[str]:
    """`[type]` once, then that type's memories in recall order; types in order of first appearance."""
    groups: dict[str, list[RecalledItem]] = {}
    for item in items:
        groups.setdefault(str(item.details.get("type", "")), []).append(item)
    lines: list[str] = []
    for type_name, members in groups.items():
        if type_name:
            lines.append(f"[{type_name}]")
        lines.extend(_memory_line(i, conflict_word) for i in members)
    return lines


def _memory_line(item: RecalledItem, conflict_word: str) -> str:
    """`- text (YYYY-MM-DD)`: the date lets the reader answer "when did…" and order what changed."""
    line = f"- {spell_out(item.text, item.event_time)}"
    if item.kind == "memory" and item.event_time is not None:
        line += f" ({item.event_time:%Y-%m-%d})"
    if item.conflict_note:
        line += f"  ({conflict_word}: {item.conflict_note})"
    for _, text in item.context_turns:
        line += f'\n  > "{spell_out(text, item.event_time)}"'
    return line


def _turn_line(item: RecalledItem) -> str:
    """`- role (YYYY-MM-DD): "what was said"`: a turn no note was drawn from, quoted with its date."""
    role = str(item.details.get("role", "")) or "turn"
    date = f" ({item.event_time:%Y-%m-%d})" if item.event_time is not None else ""
    return f'- {role}{date}: "{spell_out(item.text, item.event_time)}"'


def build_messages(
    system_prompt: str, memory_section: str, recent: Sequence[dict[str, str]], question: str
) -> list[dict[str, str]]:
    """Chat messages for the next LLM call: memory inside the one system prompt, never extra ones."""
    system = "\n\n".join(part for part in (system_prompt.strip(), memory_section) if part)
    messages = [{"role": "system", "content": system}] if system else []
    return [*messages, *recent, {"role": "user", "content": question}]
