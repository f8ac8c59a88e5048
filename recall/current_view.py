"""A change shown as its outcome: what a note says *now* when the question looks ahead. Pure.

A note that tells of a change names the value it left: "User moved from Halifax to Moncton", "用户从海淀搬到了
朝阳", "Theo quit karate, he does climbing now". Pushed into a question that does not look back ("Find me
a pizza place for Friday"), the old value misleads as much as a superseded note would: the reader sees
"Halifax" next to "pizza". So a note is shown as its outcome:

- the origin of a change from one value to another is left out ("moved from Halifax to Moncton" → "moved to
  Moncton", "从长沙搬到厦门" → "搬到厦门", "switched from Angular to Svelte" → "switched to Svelte");
- a clause that only says something ended is left out when another clause of the note says what
  replaced it ("小提琴不学了,现在改学游泳" → "现在改学游泳"; "quit karate, does climbing now").

The note is kept whole when the question looks back (past tense, "before", "used to", 以前, 之前, 搬, …)
or names what would be left out: history is there when it is asked for. The stored note never changes;
only the line shown does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache
from typing import NamedTuple

from engram.core.text import VERBATIM_FRAME, estimate_tokens, terms
from engram.core.domains import NOT_PLACES
from engram.core.sensitive import WRITING_FOR_OTHERS, gate_domains, without_own_family, written_for_others
from engram.core.text_caches import registered

from .context import RecalledItem
from .slots import EN_FROM_AFTER_HERE, EN_FROM_TO, ZH_FROM, done_change, ended_keys, ended_spans

_CLAUSE = re.compile(r"[^,，;；]+[,，;；]?")
_DOING = (r"(?:does|do|doing|plays?|playing|learns?|learning|takes?|taking|goes to|going to|practi[cs](?:es?|ing)|"
          r"trains?|training|(?:is|'s|are|'re) into)")
_ZH_DOING = r"(?:学|踢|打|弹|练|玩|跳|游|画|下|拉|唱)"
_REPLACEMENT = re.compile(
    r"\b(?:instead|switched to|moved on to|took up|taking up|picked up|(?:started|starting|began) \w+ing|"
    + _DOING + r"\b[^,;.!?]{0,40}?\bnow|now (?:\w+ )?" + _DOING + r")\b|"
    r"改" + _ZH_DOING + r"|改成|换成|换了|(?:现在|开始|改为)(?:在|又)?" + _ZH_DOING, re.IGNORECASE)
"""A clause that says what replaced an activity: something taken up or done now ("he does climbing now",
"took up pottery", 现在改学游泳); "now I feel great" or 现在开始失眠 tell of no activity."""
_LOOKS_BACK = re.compile(
    r"\b(?:did|was|were|had|been|before|used to|previous(?:ly)?|former(?:ly)?|earlier|originally|old|"
    r"history|past|ago|last (?:year|month|time)|mov(?:e|ed|ing)|relocat\w*|quit|stopp?\w*|changed?)\b|"
    r"以前|之前|原来|原先|过去|曾经|当初|那时|搬|从哪|老家|上次|去年|不学|不踢|不打|放弃|换过", re.IGNORECASE)


def looks_back(question: str) -> bool:
    """Whether the question asks about the past, or about a change itself (then a note is shown whole)."""
    return bool(_LOOKS_BACK.search(question))


@registered
@lru_cache(maxsize=65536)
def outcome_view(text: str) -> tuple[str, frozenset[str]]:
    """`text` shown as the outcome of the changes it tells of, and the words of what was left out."""
    dropped: list[str] = []

    def cut(match: re.Match[str], keep: str) -> str:
        if not done_change(match):
            return match.group(0)
        dropped.append(match.group("old"))
        return keep.format(**match.groupdict())

    view = EN_FROM_TO.sub(lambda m: cut(m, "{verb} {to}"), text)
    view = EN_FROM_AFTER_HERE.sub(lambda m: cut(m, "{verb}"), view)
    view = ZH_FROM.sub(lambda m: cut(m, "{verb}"), view)
    view, ended = _without_ended_clauses(view)
    return view, frozenset(t for part in dropped for t in terms(part)) | ended


def _without_ended_clauses(text: str) -> tuple[str, frozenset[str]]:
    """`text` without the words that tell of an activity dropped (`slots.ended_spans`), when another of its
    clauses tells what replaced it, and the words of what ended (`slots.ended_keys`)."""
    clauses = [c for c in _CLAUSE.findall(text) if c.strip()]
    if len(clauses) < 2 or not any(_REPLACEMENT.search(c) and not ended_spans(c) for c in clauses):
        return text, frozenset()
    kept: list[str] = []
    gone: set[str] = set()
    for clause in clauses:
        spans = ended_spans(clause)
        if not spans or _REPLACEMENT.search(clause):
            kept.append(clause)
            continue
        gone |= ended_keys(clause)
        rest = _cut(clause, spans)
        if _WORDY.search(VERBATIM_FRAME.sub("", rest)):
            kept.append(rest)
        elif speaker := VERBATIM_FRAME.match(clause):
            kept.append(speaker.group(0))  # who said it stays with what else they said
    return (re.sub(r"\s{2,}", " ", "".join(kept)).strip(), frozenset(gone)) if gone else (text, frozenset())


_WORDY = re.compile(r"[A-Za-z]{2,}|[\u4e00-\u9fff]{2,}")


def _cut(clause: str, spans: list[tuple[int, int]]) -> str:
    """`clause` without `spans`, and without the word of saying they leave dangling ("糖糖说")."""
    out, last = [], 0
    for start, end in spans:
        out.append(clause[last:start])
        last = max(last, end)
    out.append(clause[last:])
    return re.sub(r"\s+([,，;；])", r"\1", re.sub(r"\s{2,}", " ", "".join(out)))


def as_outcomes(items: Sequence[RecalledItem], question: str) -> list[RecalledItem]:
    """The items with every note, quote and turn shown as `shown_text` shows it (tokens counted again)."""
    view = _view(question)
    if view.back and not view.for_others:
        return list(items)
    return [_as_outcome(item, view) for item in items]


class _View(NamedTuple):
    asked: frozenset[str]
    back: bool
    for_others: bool
    private: bool
    """Writing for others not about the family (`core.sensitive.WRITING_FOR_OTHERS`): no clause of it shown."""


def _as_outcome(item: RecalledItem, view: _View) -> RecalledItem:
    if item.kind not in ("profile", "memory", "turn"):
        return item
    text = _shown(item.text, view)
    quotes = tuple((m, _shown(t, view)) for m, t in item.context_turns)
    if text == item.text and quotes == item.context_turns:
        return item
    tokens = estimate_tokens(text) + sum(estimate_tokens(t) for _, t in quotes)
    return replace(item, text=text, context_turns=quotes, tokens=tokens,
                   details=_details_shown(item.details, dict(quotes)))


def _details_shown(details: dict[str, object], shown: dict[str, str]) -> dict[str, object]:
    """`details` with the quoted turns (`evidence`, `context_turns`) as `shown` shows them."""
    out = dict(details)
    evidence = details.get("evidence")
    if isinstance(evidence, dict):
        out["evidence"] = {**evidence, "text": shown.get(str(evidence.get("message_id")), evidence.get("text"))}
    quoted = details.get("context_turns")
    if isinstance(quoted, list):
        out["context_turns"] = [{**t, "text": shown.get(str(t.get("message_id")), t.get("text"))}
                                if isinstance(t, dict) else t for t in quoted]
    return out


def shown_text(text: str, question: str) -> str:
    """The line shown for a note: `outcome_view` of it, or the note whole when the question `looks_back`
    or names something the view would leave out; in writing for others, its confidential names masked."""
    return _shown(text, _view(question))


def _view(question: str) -> _View:
    return _View(frozenset(terms(question)), looks_back(question), written_for_others(question),
                 WRITING_FOR_OTHERS in gate_domains(question))


def _shown(text: str, view: _View) -> str:
    if view.private:
        text = without_own_family(text) or text
    if not view.back:
        outcome, dropped = outcome_view(text)
        if outcome != text and not dropped & view.asked:
            text = outcome
    return masked_confidential(text, view.asked) if view.for_others else text


_CONFIDENTIAL = re.compile(
    r"\b(?:NDA|confidential\w*|under wraps|off the record|(?:can'?t|cannot|not allowed to|must not|mustn'?t|"
    r"never) (?:say|share|disclose|name|mention|talk about|reveal)\w*)\b|"
    r"保密|不能(?:对外|向外|公开)?(?:透露|公开|说出?|提)|不得(?:对外)?(?:透露|公开)|不可以(?:透露|说)", re.IGNORECASE)
"""The user saying something may not be told (an NDA, "can't disclose", 保密, 不能对外透露)."""
_NAMED_EN = re.compile(
    r"\b(?:[Pp]roject|[Oo]peration|[Cc]odename|code-?named|called|named|call|client|customer|for|with|at|about|on)\s+(?:the\s+)?"
    r"(?P<name>[A-Z][\w&'’-]+(?:\s+[A-Z][\w&'’-]+)*)")
_NAMED_ZH = re.compile(r"(?<=[做给为帮跟和是的在对与])(?P<name>[^\W做给为帮跟和是的在对与\d]{1,6}?"
                       r"(?:集团|公司|银行|控股|科技|项目))")
_NOT_SECRET = frozenset({"User", "I", "NDA", "The", "This", "My", "Our", *NOT_PLACES.split("|")})
"""Capitalised words that name no client: the note's frame, days, months, languages (`core.domains.NOT_PLACES`)."""
MASK = {"en": "[confidential]", "zh": "[保密]"}


def masked_confidential(text: str, asked: frozenset[str] = frozenset()) -> str:
    """`text` with the names a confidentiality rule in it covers masked ("a client we call [confidential]",
    "在帮[保密]做审计"): the rule stays, the name stays out of what others will read. A name the question
    itself says is kept."""
    if not _CONFIDENTIAL.search(text):
        return text

    def mask(match: re.Match[str], word: str) -> str:
        name = match.group("name")
        if name in _NOT_SECRET or set(terms(name)) & asked:
            return match.group(0)
        return match.group(0).replace(name, word)

    text = _NAMED_EN.sub(lambda m: mask(m, MASK["en"]), text)
    return _NAMED_ZH.sub(lambda m: mask(m, MASK["zh"]), text)
