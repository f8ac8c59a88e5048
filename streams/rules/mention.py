"""A compact note of a statement in a turn the other rules leave empty.

The subject rules keep what a turn says about the user. A turn that says
nothing about the user can still carry a fact the chat will come back to:
the answer to the other person's question ("It was Matt Patterson, he is so
talented"), a place, a title, a date, a scene. Such a turn used to leave no
trace but its raw text (which recall does not inject by default).
When a whole English turn gave no note, its first statements (at most
`MAX_MENTIONS`) are kept compactly as "User mentioned: …" with low
confidence: not a fact about the user (no profile slot, no preference), only a
findable record that it was said. A statement qualifies from its first clause
that names something (a capitalised word inside the clause, or a number) or
has `MIN_CONTENT_WORDS` words beyond small talk without a bare pronoun as
its subject.

Never kept: questions, requests, greetings/thanks/compliments, clauses
addressed to the other person ("you", "your"), first-person clauses (the
subject rules' business), hypotheticals and sarcasm, Chinese turns (their
rules cover third-person statements their own way).
"""

from __future__ import annotations

import re

from engram.core.domains import MENTION_PREFIX
from engram.schemas.memory import MemoryType as T

from .common import Draft, entities_in, sentences, shorten
from .en import strip_lead
from .en_turn import is_request
from .mood import is_hypothetical, is_sarcastic
from .narrative import is_phatic, is_task

MENTION_CONFIDENCE = 0.4
"""Below the verbatim fallback's 0.45: a mention is the weakest note the extractor writes."""
MAX_MENTION_CHARS = 160
MAX_MENTIONS = 2
"""Per turn: a reply that names several things is noted twice at most."""
MAX_TURN_CHARS = 400
"""A longer turn is pasted material (an article, a log) more often than something the user said. (Line breaks
are gone by now: `common.prepare` folds all whitespace, so length and code markers are what is left to see.)"""

_I = re.IGNORECASE
_CUT = re.compile(r"\s*;\s*|(?<!\d):\s+|,\s+|\s+[—–-]\s+")
_ADDRESSED = re.compile(r"\b(?:you|your|you're|you've|yours|ya|y'all)\b", _I)
_FIRST = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|we|we're|we've|us|our)\b", _I)
_QUESTION_OR_REQUEST = re.compile(
    r"^(?:what|what's|how|how's|why|where|when|who|which|do|does|did|can|could|would|should|will|shall|any|"
    r"anything|is there|please|let's|let me|tell|show|give)\b", _I)
_CALENDAR = (r"(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day|January|February|March|April|May|June|July|August|"
             r"September|October|November|December")
_NAMED = re.compile(rf"(?<=\s)(?!I\b|I'|(?:{_CALENDAR})\b)[A-Z][\w'-]+|\d")
"""A capitalised word inside the clause (a name, a title), or a number; a weekday or month alone is a time, not
a name ("He promised it for Tuesday" names nothing)."""
MIN_CONTENT_WORDS = 3
"""A clause that names nothing is kept with this many content words, unless a bare pronoun is its subject (what
"she" or "it" is, the turn does not say)."""
_PRONOUN_SUBJECT = re.compile(r"^(?:he|she|they|it|this|that|these|those|him|her|them)\b", _I)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_LIGHT = frozenset(
    """the a an and or but so it it's its is was are were be been this that these those there here he she
    they them his her their he's she's they're has have had just really so very too also all some
    thanks thank wow awesome great cool nice amazing glad happy sorry congrats hey hi hello yeah yes sure
    totally definitely sounds good fun lovely sweet true omg haha lol hope pretty super right okay cute
    beautiful wonderful incredible fantastic exciting excited look looks looked like seems""".split()
)


_PASTED = re.compile(
    r"`|Traceback \(most recent call last\)|\b[A-Z]\w*(?:Error|Exception)\b:|^\s*(?:def|class|import|from\s+\S+\s+import|"
    r"function|const|let|var|return|#include|SELECT)\b|[{};]\s*$|</?[a-z][\w-]*[^<>]*>|=>|==|\w\(\S*\)",
    re.MULTILINE,
)
"""Code, a traceback or markup: text pasted for the assistant to work on, not a statement of the user's."""


def is_mention(draft: Draft) -> bool:
    """A note written by `mention_drafts` (the summarizer reads such a turn as one that gave no draft)."""
    return draft.confidence == MENTION_CONFIDENCE and draft.content.startswith(MENTION_PREFIX)


def mention_drafts(text: str) -> list[Draft]:
    """At most `MAX_MENTIONS` "User mentioned: …" notes for a turn that gave no other note.

    None for a task given to the assistant ("Explain …", "Make it shorter") or for pasted material (code, a
    log, a long text): what is pasted is not something the user said.
    """
    if len(text) > MAX_TURN_CHARS or _PASTED.search(text):
        return []
    split = sentences(text)
    if any(_is_request(strip_lead(sentence)) for sentence, _ in split):
        return []
    out: list[Draft] = []
    for sentence, is_question in split:
        if is_question or is_hypothetical(sentence) or is_sarcastic(sentence):
            continue
        clause = _named_statement(sentence)
        if clause:
            content = MENTION_PREFIX + shorten(clause, MAX_MENTION_CHARS)
            out.append(Draft(T.USER_FACT, content, MENTION_CONFIDENCE, None, None, False,
                             entities_in(clause, prose=True)))
        if len(out) >= MAX_MENTIONS:
            break
    return out


def _named_statement(sentence: str) -> str:
    """The sentence's clauses from the first named one on, without the vocative and small-talk pieces."""
    kept: list[str] = []
    for piece in _CUT.split(sentence.strip().rstrip(".!…")):
        body = strip_lead(piece.strip(" ,.;:!…\"'"))
        if not body or is_phatic(body) or _ADDRESSED.search(body) or _FIRST.search(body):
            continue
        if _QUESTION_OR_REQUEST.match(body) or _content(body) < 2:
            continue
        if kept or _names(body) or _content(body) >= MIN_CONTENT_WORDS and not _dangling(body):
            kept.append(body)
    return ", ".join(kept)


def _is_request(sentence: str) -> bool:
    """The subject rules' own reading of a task given to the assistant (`en_turn`, `narrative.is_task`)."""
    return is_task(sentence) or is_request(sentence)


def _dangling(body: str) -> bool:
    """ "He promised it for Tuesday": whom "he" is, the turn does not say."""
    return _PRONOUN_SUBJECT.match(body) is not None


def _names(body: str) -> bool:
    return _NAMED.search(" " + body[1:] if body[:1].isupper() else " " + body) is not None


def _content(text: str) -> int:
    return sum(1 for w in _WORD.findall(text) if len(w) > 2 and w.lower() not in _LIGHT)
