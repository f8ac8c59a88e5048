"""LongMemEval_S records as the benchmark uses them: turns with ids, sessions, dates and answer marks."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from functools import cached_property
from pathlib import Path
from typing import Any

from engram.core.text import strip_control

DATA_FILE = Path("shared/data/longmemeval/longmemeval_s_dev50.json")
TURN_SPACING = timedelta(seconds=5)
MAX_TURN_CHARS = 32_000
"""The longest turn the ingest path accepts; a few haystack turns are longer and are cut to it."""


def default_data_path() -> Path:
    """The dev split in the `shared/` folder the repository is cloned beside (looked for upwards)."""
    repo = Path(__file__).resolve().parents[1]
    for folder in repo.parents:
        if (folder / DATA_FILE).is_file():
            return folder / DATA_FILE
    return repo.parent / DATA_FILE


def parse_lme_date(value: str) -> datetime:
    """'2023/05/20 (Sat) 02:21' -> 2023-05-20 02:21 UTC."""
    day, _, clock = value.partition(")")
    return datetime.strptime(f"{day.split('(')[0].strip()} {clock.strip()}", "%Y/%m/%d %H:%M").replace(
        tzinfo=timezone.utc)


@dataclass(frozen=True)
class LmeTurn:
    message_id: str
    session: str
    role: str
    content: str
    ts: datetime
    has_answer: bool


@dataclass
class LmeQuestion:
    question_id: str
    question_type: str
    question: str
    answer: str
    asked_at: datetime
    evidence_sessions: frozenset[str]
    turns: list[LmeTurn]
    session_dates: dict[str, datetime]
    skipped_invisible: int = 0
    cut_long: int = 0
    _by_id: dict[str, LmeTurn] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._by_id = {t.message_id: t for t in self.turns}

    @property
    def tenant(self) -> str:
        return f"lme-{self.question_id}"

    @property
    def message_ids(self) -> frozenset[str]:
        return frozenset(self._by_id)

    @cached_property
    def answer_turns(self) -> frozenset[str]:
        return frozenset(t.message_id for t in self.turns if t.has_answer)

    def sessions_of(self, message_ids: Iterable[str]) -> set[str]:
        return {self._by_id[m].session for m in message_ids if m in self._by_id}

    def session_documents(self) -> list[tuple[str, str]]:
        """Each session as one document: its id and its turns as `role: content` lines."""
        grouped: dict[str, list[LmeTurn]] = {}
        for t in self.turns:
            grouped.setdefault(t.session, []).append(t)
        return [(session, "\n".join(f"{t.role}: {t.content}" for t in turns)) for session, turns in grouped.items()]

    def rounds(self) -> list[tuple[frozenset[str], str]]:
        """A user turn with the assistant reply right after it (an unanswered or unprompted turn alone),
        as `<date> user: …\\nassistant: …`."""
        out: list[tuple[frozenset[str], str]] = []
        turns = self.turns
        n = 0
        while n < len(turns):
            group = [turns[n]]
            if (turns[n].role == "user" and n + 1 < len(turns) and turns[n + 1].role == "assistant"
                    and turns[n + 1].session == turns[n].session):
                group.append(turns[n + 1])
            n += len(group)
            date = f"{self.session_dates[group[0].session]:%Y-%m-%d}"
            text = date + " " + "\n".join(f"{t.role}: {t.content}" for t in group)
            out.append((frozenset(t.message_id for t in group), text))
        return out


def load_questions(path: Path, limit: int | None = None) -> list[LmeQuestion]:
    raw = json.loads(path.read_text(encoding="utf-8"))
    return [to_question(r) for r in raw[:limit]]


def to_question(r: dict[str, Any]) -> LmeQuestion:
    turns: list[LmeTurn] = []
    dates: dict[str, datetime] = {}
    skipped = cut = 0
    for session, date, messages in zip(r["haystack_session_ids"], r["haystack_dates"], r["haystack_sessions"]):
        start = parse_lme_date(date)
        dates[session] = start
        for index, m in enumerate(messages):
            content = str(m.get("content") or "")
            if not strip_control(content).strip():
                skipped += 1
                continue
            if len(content) > MAX_TURN_CHARS:
                content, cut = content[:MAX_TURN_CHARS], cut + 1
            turns.append(LmeTurn(f"{session}:{index}", session, str(m["role"]), content,
                                 start + index * TURN_SPACING, bool(m.get("has_answer"))))
    return LmeQuestion(str(r["question_id"]), str(r["question_type"]), str(r["question"]), str(r["answer"]),
                       parse_lme_date(r["question_date"]), frozenset(r["answer_session_ids"]), turns, dates,
                       skipped, cut)
