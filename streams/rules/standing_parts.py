"""The parts of a turn a standing fact is read from: fragments joined back, lasting clauses kept. Pure.

Chat states a standing fact in pieces and beside the moment it was said in:

- a verbless fragment continues the sentence before it: "We're finally taking our anniversary trip! Iceland,
  nine days in May." — the place belongs to the trip (`join_fragments`);
- a sentence bound to the moment may carry a lasting clause: "I'm a dental nurse at a practice in Leith, and
  today was four extractions in a row", "今天买的饼干都含芝麻，我芝麻过敏" — the clause in the first person
  that is not itself about the moment is kept (`lasting_clauses`);
- a change of life said for a day is still a lasting change: "first day at Halden Insurance tomorrow", "前天
  刚搬过来" (`LIFE_CHANGE`), so such a sentence is not dropped as momentary.

Only sentence shape decides: a short piece that opens on a name and a comma, clause separators, a
first-person word, the moment words of `mood.is_momentary`.
"""

from __future__ import annotations

import re

from .common import CJK
from .mood import is_momentary

FRAGMENT_WORDS = 6
"""At most this many words in a fragment that continues the sentence before it."""

_FRAGMENT = re.compile(r"^[A-Z][\w'-]+(?: [A-Z][\w'-]+)?, ")
_NOT_FRAGMENT = re.compile(r"^(?:I|I'm|Yes|No|Yeah|Yep|Nope|Ok|Okay|Well|So|Oh|Anyway|Also|Sure|Thanks|Hi|Hey|Honestly|"
                           r"Actually|Btw|Lol|Haha|Plus|Then|Now|Still|But|And)\b")
_CLAUSE_SPLIT = re.compile(r",\s*(?:and|but|so|though)\s+|[;；，]|:\s+")
_CLAUSE_SPLIT_ZH = re.compile(r"[,;:，；：]")  # a prepared turn has ASCII commas between Chinese clauses
_FIRST = re.compile(r"\b(?:i|i'm|i've|my|we|we're|our)\b|(?<![帮给诉让叫替请])我", re.IGNORECASE)
"""The user speaking of themselves ("帮我写…" is a request to the assistant, not that)."""
LIFE_CHANGE = re.compile(
    r"\b(?:first day at|start(?:ed|ing)? (?:at|my new|a new)|new job|moved (?:to|into)|moving (?:to|into)|"
    r"signed a lease)\b|入职|新工作|搬过来|搬到|搬去|搬家", re.IGNORECASE)
"""A change of job or home: lasting, even when told for today or tomorrow."""


def join_fragments(split: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """Each short statement that opens on a name and a comma ("Iceland, nine days in May.") joined to
    the statement before it."""
    out: list[tuple[str, bool]] = []
    for sentence, is_question in split:
        text = sentence.strip().lstrip("!?.。！？ ")
        if not text:  # "booked tickets!! Hanoi, …" leaves a lone "!" between the two
            continue
        if (out and not is_question and not out[-1][1] and _FRAGMENT.match(text) and not _NOT_FRAGMENT.match(text)
                and len(text.split()) <= FRAGMENT_WORDS):
            out[-1] = (f"{out[-1][0].rstrip()} {text}", False)
            continue
        out.append((sentence, is_question))
    return out


def lasting_clauses(split: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """A statement bound to the moment replaced by its first-person clauses that are not (none: kept as it
    is, for the rules after to judge); a change of job or home is kept whole."""
    out: list[tuple[str, bool]] = []
    for sentence, is_question in split:
        if is_question or not is_momentary(sentence) or LIFE_CHANGE.search(sentence):
            out.append((sentence, is_question))
            continue
        split_at = _CLAUSE_SPLIT_ZH if CJK.search(sentence) else _CLAUSE_SPLIT
        clauses = [c.strip() for c in split_at.split(sentence) if c and c.strip()]
        kept = [c for c in clauses if _FIRST.search(c) and not is_momentary(c)]
        if kept:
            out.extend((c if CJK.search(c) else c.rstrip(".!") + ".", False) for c in kept)
        else:
            out.append((sentence, is_question))
    return out


def is_life_change(sentence: str) -> bool:
    """A change of job or home (`LIFE_CHANGE`)."""
    return bool(LIFE_CHANGE.search(sentence))
