"""LoCoMo conversation files as the benchmark uses them: dated turns, scored questions with their answers.

Each conversation file (`*.json`, LoCoMo-10 layout) holds sessions of turns
(`dia_id`, speaker, text, optional image caption) with a `session_N_date_time`,
and questions with a category, evidence dia_ids and a gold answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

TURN_SPACING = timedelta(seconds=5)
CATEGORIES = (1, 2, 3, 4)
_SESSION_KEY = re.compile(r"session_(\d+)$")
_DIA_ID = re.compile(r"D:?(\d+):(\d+)")


@dataclass(frozen=True)
class LocomoTurn:
    dia_id: str
    session: str
    speaker: str
    content: str
    ts: datetime


@dataclass(frozen=True)
class Question:
    index: int
    text: str
    category: int
    evidence: frozenset[str]
    answer: str = ""


@dataclass
class Conversation:
    name: str
    turns: list[LocomoTurn]
    questions: list[Question]
    skipped_no_evidence: int = 0
    skipped_category_5: int = 0

    @property
    def user(self) -> str:
        return f"conv-{self.name}"

    @property
    def eval_time(self) -> datetime:
        return max(t.ts for t in self.turns) + timedelta(days=1)


# -- loading -------------------------------------------------------------------------------------------

def parse_session_time(value: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> 2023-05-08 13:56 UTC."""
    text = " ".join(value.replace(",", ", ").split()).replace(" ,", ",")
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y"):
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=timezone.utc)
        except ValueError:
            continue
    raise ValueError(f"unrecognised LoCoMo date {value!r}")


def normalise_evidence(raw: Iterable[str]) -> frozenset[str]:
    """Evidence lists hold ids like 'D3:7', sometimes 'D8:6; D9:17' or 'D:11:26'."""
    return frozenset(f"D{a}:{b}" for item in raw for a, b in _DIA_ID.findall(str(item)))


def load_conversation(path: Path) -> Conversation:
    data = json.loads(path.read_text(encoding="utf-8"))
    conv = data.get("conversation", data)  # the original locomo10.json nests it
    sessions = sorted(
        ((int(m.group(1)), key) for key in conv if (m := _SESSION_KEY.match(key)) and isinstance(conv[key], list)),
    )
    turns: list[LocomoTurn] = []
    for _, key in sessions:
        start = parse_session_time(conv[f"{key}_date_time"])
        for n, raw in enumerate(conv[key]):
            content = str(raw.get("text", "")).strip()
            caption = str(raw.get("blip_caption") or "").strip()
            if caption:
                content = f"{content} [image: {caption}]".strip()
            if not content:
                continue
            turns.append(LocomoTurn(raw["dia_id"], key, str(raw.get("speaker", "")), content,
                                    start + n * TURN_SPACING))
    questions: list[Question] = []
    no_evidence = cat5 = 0
    for index, qa in enumerate(data.get("qa", [])):
        category = int(qa.get("category", 0))
        if category not in CATEGORIES:
            cat5 += category == 5
            continue
        evidence = normalise_evidence(qa.get("evidence", []))
        if not evidence:
            no_evidence += 1
            continue
        questions.append(Question(index, str(qa["question"]), category, evidence, str(qa.get("answer", ""))))
    return Conversation(path.stem, turns, questions, no_evidence, cat5)


def load_folder(folder: Path, limit: int | None = None) -> list[Conversation]:
    files = sorted(folder.glob("*.json"), key=lambda p: (len(p.stem), p.stem))
    if not files:
        raise SystemExit(f"no *.json conversation files in {folder}")
    return [load_conversation(p) for p in files[:limit]]
