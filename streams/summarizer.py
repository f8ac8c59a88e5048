"""The extractive (no-LLM) session summarizer.

It fills the same five sections an LLM would, from the previous sections and
only the new messages, by sorting sentences with Chinese and English cue
words. It is pure and deterministic: the same input always gives the same
summary, so a replay reproduces every snapshot.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from engram.core.config import SummaryConfig
from engram.core.ports import SummaryMessage, SummaryResult
from engram.core.text import compact, terms
from engram.schemas.memory import SummarySections

_SENTENCE_RE = re.compile(r"[^。！？!?；;\n]+[。！？!?；;]*")
_EN_SENTENCE_BREAK = re.compile(r"(?<=\.)\s+")
_STRIP = " \t\r\n-*•·,，、。.;；:：" + "\u3000"

_QUESTION_RE = re.compile(r"[?？]\s*$|[吗呢么]\s*[。.]?\s*$")
_CONSTRAINT_RE = re.compile(
    r"只|不要|不能|不想|不用|别再|必须|务必|一定要|预算|不超过|以内|至少|最多|禁止|避免|限制|要求|截止"
    r"|\b(?:only|must|don'?t|do not|never|budget|at most|at least|no more than|within|without"
    r"|avoid|can'?t|cannot|required?|deadline|limit)\b",
    re.IGNORECASE,
)
_TODO_RE = re.compile(
    r"需要|计划|打算|准备|待办|接下来|下一步|稍后|回头|记得|还要|要先|我要|我们要|要把|将会"
    r"|\b(?:will|need to|needs to|todo|to-do|plan to|planning to|going to|next step|remember to"
    r"|follow up|let's|i'll|we'll)\b",
    re.IGNORECASE,
)
_DECISION_RE = re.compile(
    r"已确认|确认了|最终|确定|就按|采用|决定|选定|没问题|可以开始"
    r"|\b(?:confirmed|decided|agreed|we'll go with|go with|final|settled)\b",
    re.IGNORECASE,
)
_FIRST_PERSON_RE = re.compile(
    r"我|我们|\b(?:i|i'm|i am|my|we|we're|our)\b", re.IGNORECASE
)
_HEDGE_RE = re.compile(
    r"待定|不确定|还需要确认|看情况|再讨论|\b(?:not sure|unclear|depends|tbd|later)\b",
    re.IGNORECASE,
)
_MIN_SENTENCE_CHARS = 4
_MIN_TOPIC_CHARS = 10
_ANSWER_TERM_SHARE = 0.3


@dataclass
class _Extracted:
    """Items found in one batch of new messages, oldest first."""

    topic: str = ""
    facts: list[str] = field(default_factory=list)
    todos: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)


class ExtractiveSummarizer:
    """Summarizer without a model: cue-word extraction into the five sections.

    CURRENT_TOPIC is the latest user request; CONFIRMED_FACTS are user
    first-person statements and assistant decisions; TODO_ITEMS are plans;
    USER_CONSTRAINTS are the user's limits; OPEN_QUESTIONS are user questions
    no later assistant message has answered. Items are shortened, de-duplicated
    and bounded per section, newer items winning.
    """

    def __init__(self, config: SummaryConfig | None = None) -> None:
        self.config = config or SummaryConfig()

    def summarize(
        self, previous: SummarySections | None, new_messages: Sequence[SummaryMessage]
    ) -> SummaryResult:
        before = previous or SummarySections()
        found = _Extracted(questions=list(before.open_questions))
        self._extract(found, new_messages)
        sections = SummarySections(
            current_topic=(found.topic,) if found.topic else before.current_topic,
            confirmed_facts=self._merge(before.confirmed_facts, found.facts),
            todo_items=self._merge(before.todo_items, found.todos),
            user_constraints=self._merge(before.user_constraints, found.constraints),
            open_questions=self._merge((), found.questions),
        )
        return SummaryResult(sections=sections, summarizer="extractive", latency_ms=0.0)

    def _extract(self, found: _Extracted, messages: Sequence[SummaryMessage]) -> None:
        for message in messages:
            if message.role == "assistant":
                _close_answered(found, message.content)
            for sentence in split_sentences(message.content):
                self._classify(found, message.role, sentence)

    def _classify(self, found: _Extracted, role: str, sentence: str) -> None:
        item = self._shorten(sentence)
        if role == "user":
            _classify_user(found, sentence, item)
        elif _HEDGE_RE.search(sentence):
            return
        elif _DECISION_RE.search(sentence):
            found.facts.append(item)
        elif _TODO_RE.search(sentence):
            found.todos.append(item)

    def _shorten(self, text: str) -> str:
        text = " ".join(text.split()).strip(_STRIP)
        limit = self.config.max_item_chars
        return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"

    def _merge(self, previous: Sequence[str], new: Sequence[str]) -> tuple[str, ...]:
        """Previous then new items, de-duplicated (the newest copy wins), newest kept."""
        kept: list[str] = []
        keys: list[str] = []
        for item in reversed([*previous, *new]):
            key = compact(item)
            if not key or any(key in other for other in keys):
                continue
            kept.append(item)
            keys.append(key)
        return tuple(reversed(kept[: self.config.max_items_per_section]))


def _classify_user(found: _Extracted, sentence: str, item: str) -> None:
    if _QUESTION_RE.search(sentence):
        found.questions.append(item)
    elif _CONSTRAINT_RE.search(sentence):
        found.constraints.append(item)
    elif _TODO_RE.search(sentence):
        found.todos.append(item)
    elif _FIRST_PERSON_RE.search(sentence):
        found.facts.append(item)
    elif len(compact(sentence)) < _MIN_TOPIC_CHARS:
        return  # short chit-chat ("好的谢谢") does not change the topic
    found.topic = item


def _close_answered(found: _Extracted, reply: str) -> None:
    """An assistant reply answers the open questions it covers, unless it hedges."""
    if _HEDGE_RE.search(reply):
        return
    reply_terms = set(terms(reply))
    found.questions = [q for q in found.questions if not _covers(reply_terms, q)]


def _covers(reply_terms: set[str], question: str) -> bool:
    question_terms = set(terms(question))
    needed = max(1, math.ceil(_ANSWER_TERM_SHARE * len(question_terms)))
    return len(reply_terms & question_terms) >= needed


def split_sentences(text: str) -> list[str]:
    """Sentences of a Chinese or English text, keeping their end punctuation."""
    out: list[str] = []
    for chunk in _SENTENCE_RE.findall(text):
        for sentence in _EN_SENTENCE_BREAK.split(chunk):
            sentence = sentence.strip()
            if len(sentence.strip(_STRIP)) >= _MIN_SENTENCE_CHARS:
                out.append(sentence)
    return out
