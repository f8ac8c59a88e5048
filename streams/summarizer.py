"""The extractive (no-LLM) session summarizer.

It fills the same five sections an LLM would, from the previous sections and
only the new messages. Facts, constraints and plans are the rule extractor's
normalised statements ("用户是Java后端开发", "User's budget is 500 dollars"),
not quoted sentences; a user sentence the rules cannot read falls back to
cue words, with its first person rewritten ("我还要…" -> "用户还要…").
Assistant text contributes only confirmed conclusions (no "Sure, I'll bear
that in mind"). A newer statement drops the item it supersedes: a new value
of a single-valued slot (location, occupation, name…) or a reversed stance on
the same topic ("User no longer likes Go" drops "User loves Go").

It is pure and deterministic: the same input always gives the same summary,
so a replay reproduces every snapshot.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from engram.core.config import SummaryConfig
from engram.core.ports import SummaryMessage, SummaryResult
from engram.core.text import compact, terms
from engram.core.text_caches import registered
from engram.schemas.memory import MemoryType, SummarySections, is_single_valued, slot_key

from .filters import has_decision_signal
from .rules import FALLBACK_CONFIDENCE, Draft, extract_drafts
from .rules.mention import is_mention
from .rules.standing import is_standing_note
from .rules.person import third_person

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
_HEDGE_RE = re.compile(
    r"待定|不确定|还需要确认|看情况|再讨论|\b(?:not sure|unclear|depends|tbd|later)\b",
    re.IGNORECASE,
)
_MIN_SENTENCE_CHARS = 4
_ANSWER_TERM_SHARE = 0.3


@dataclass
class _Extracted:
    """Items found in one batch of new messages, oldest first."""

    topic: str = ""
    goal: str = ""
    facts: list[str] = field(default_factory=list)
    todos: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    drafts: list[Draft] = field(default_factory=list)
    """The rule drafts behind this batch's items, to drop the older items they supersede."""


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
        topic = found.topic or found.goal
        sections = SummarySections(
            current_topic=(topic,) if topic else before.current_topic,
            confirmed_facts=self._merge(_unsuperseded(before.confirmed_facts, found.drafts), found.facts),
            todo_items=self._merge(_unsuperseded(before.todo_items, found.drafts), found.todos),
            user_constraints=self._merge(_unsuperseded(before.user_constraints, found.drafts), found.constraints),
            open_questions=self._merge((), found.questions),
        )
        return SummaryResult(sections=sections, summarizer="extractive", latency_ms=0.0)

    def _extract(self, found: _Extracted, messages: Sequence[SummaryMessage]) -> None:
        for message in messages:
            if message.role == "assistant":
                _close_answered(found, message.content)
                self._assistant(found, message.content)
                continue
            for sentence in split_sentences(message.content):
                self._user(found, sentence)

    def _assistant(self, found: _Extracted, text: str) -> None:
        """Confirmed conclusions only: decisions are facts, plans and actions are to-dos."""
        for draft in extract_drafts("assistant", text, has_decision_signal(text)):
            if draft.type in (MemoryType.ASSISTANT_PLAN, MemoryType.ASSISTANT_ACTION):
                found.todos.append(self._shorten(draft.content))
            else:
                found.facts.append(self._shorten(draft.content))

    def _user(self, found: _Extracted, sentence: str) -> None:
        if _QUESTION_RE.search(sentence):
            item = self._shorten(sentence)
            found.questions.append(item)
            found.topic = item
            return
        # a mention or a verbatim standing note is no note here: the sentence itself is the summary's material
        drafts = [d for d in extract_drafts("user", sentence) if not is_mention(d) and not is_standing_note(d)]
        if not drafts:
            _classify_user(found, sentence, self._shorten(_first_person_rewritten(sentence)))
            return
        for draft in drafts:
            if draft.attribute == "contact":
                continue  # a contact detail is redacted before it gets here: nothing left to note
            item = self._shorten(draft.content)
            _drop_superseded(found, draft)
            found.drafts.append(draft)
            if draft.confidence == FALLBACK_CONFIDENCE and draft.type is MemoryType.USER_FACT:
                _classify_user(found, sentence, item, default=found.facts)
            elif draft.type is MemoryType.USER_CONSTRAINT:
                found.constraints.append(item)
            elif draft.type is MemoryType.USER_GOAL:
                found.todos.append(item)
                found.goal = item
            else:
                found.facts.append(item)

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
        return tuple(reversed(_bounded(kept, self.config.max_items_per_section)))


_PROFILE_ITEM = re.compile(r"^(?:User is an? |User's name |User works at |用户是|用户叫|用户在\S+工作)")


def _bounded(newest_first: list[str], limit: int) -> list[str]:
    """The newest `limit` items, except that who the user is (role, name, employer) outlives the cap."""
    if len(newest_first) <= limit:
        return newest_first
    profile = [i for i in newest_first if _PROFILE_ITEM.match(i)][:limit]
    room = limit - len(profile)
    others = [i for i in newest_first if not _PROFILE_ITEM.match(i)][:room]
    return [i for i in newest_first if i in profile or i in others]


def _classify_user(found: _Extracted, sentence: str, item: str, default: list[str] | None = None) -> None:
    """Cue words for a user sentence no specific rule could read."""
    if _CONSTRAINT_RE.search(sentence):
        found.constraints.append(item)
    elif _TODO_RE.search(sentence):
        found.todos.append(item)
    elif default is not None:
        default.append(item)


def _first_person_rewritten(sentence: str) -> str:
    text = sentence.strip(_STRIP)
    if re.search(r"[\u4e00-\u9fff]", text):
        return re.sub(r"我们|我", "用户", text, count=1)
    return third_person(text) if re.match(r"(?:i|we)\b", text, re.IGNORECASE) else text


_NEGATION_RE = re.compile(r"\b(?:not|no longer|never|doesn't|don't|can't|hates?|quit)\b|n't\b|不|没|讨厌", re.IGNORECASE)


def _template(content: str) -> str:
    """The wording of a statement before its value: "User lives in ", "用户住在"."""
    if re.match(r"[\u4e00-\u9fff]", content):
        return content[:4]
    return " ".join(content.split()[:3]) + " "


def _supersedes(draft: Draft, item: str) -> bool:
    return _superseder(draft)(item)


class _Superseder:
    """`_supersedes(draft, ·)` with everything that depends on the draft alone computed once."""

    __slots__ = ("content", "template", "topic", "word", "negated")

    def __init__(self, draft: Draft) -> None:
        self.content = draft.content
        single = is_single_valued(slot_key(draft.type, draft.attribute))
        self.template = _template(draft.content) if single else None
        topic = draft.topic or ""
        self.topic = topic.lower() if len(topic) >= 2 else None
        self.word = (None if self.topic is None or re.fullmatch(r"[\u4e00-\u9fff]+", topic)
                     else re.compile(rf"\b{re.escape(topic)}\b", re.IGNORECASE))
        self.negated = draft.negated

    def __call__(self, item: str) -> bool:
        if item == self.content:
            return False
        if self.template is not None and item.startswith(self.template):
            return True
        if self.topic is None or self.topic not in item.lower():
            return False
        if self.word is not None and not self.word.search(item):
            return False
        return bool(_NEGATION_RE.search(item)) != self.negated


@registered
@lru_cache(maxsize=4096)
def _superseder(draft: Draft) -> _Superseder:
    return _Superseder(draft)


def _unsuperseded(items: Sequence[str], drafts: Sequence[Draft]) -> list[str]:
    tests = [_superseder(d) for d in drafts]
    return [item for item in items if not any(test(item) for test in tests)]


def _drop_superseded(found: _Extracted, draft: Draft) -> None:
    found.facts = _unsuperseded(found.facts, (draft,))
    found.todos = _unsuperseded(found.todos, (draft,))
    found.constraints = _unsuperseded(found.constraints, (draft,))


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
