"""The answer metric of the recall benchmarks: is every content word of the gold answer in the context?

A context that points at the right turn but drops what was said in it does not
help the model answer; this checks the words themselves. Rules:

- Words are runs of Latin letters and digits (NFKC, lower-cased; an apostrophe
  splits, so "Charlotte's" gives "charlotte" and "s"); each CJK character is a word.
- Both sides are folded the same way: a plural "-s"/"-ies" is dropped
  ("sunsets" meets "sunset"), and the number words zero to twenty become digits
  ("two" meets "2").
- Content words are the words not in `STOPWORDS`: articles, pronouns,
  prepositions and conjunctions, auxiliary verbs, and the hedges and polarity
  words of inferred answers ("likely", "yes", "no") that a context cannot hold.
- A date in the answer is one unit, found when the context spells it either as
  ISO ("2023-05-07") or as "7 May 2023" (or "May 7, 2023"); a month and year
  ("June 2023") also as "2023-06", a day and month ("13 August") also as "-08-13".
- An answer with no content word ("Yes.") cannot be checked: `answer_found`
  returns None and the benchmarks count such questions apart.

Nothing here knows a data set; the same rules score every system of a run.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from engram.core.text import estimate_tokens

STOPWORDS = frozenset(
    """a an the and or but nor so yet if then than as of in on at by for with from to into onto over under
    about around before after since until during between through per via
    i me my mine you your yours he him his she her hers it its we us our ours they them their theirs
    myself yourself himself herself itself ourselves yourselves themselves
    this that these those there here who whom whose which what when where why how
    is are was were be been being am do does did done have has had will would shall should can could
    may might must s t d ll re ve m not no yes likely probably maybe perhaps also just very too only
    some any all each both either neither other another such same own more most much many""".split()
)

_NUMBER_WORDS = {w: str(n) for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH_RE = (r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
             r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_ORD = r"(?:st|nd|rd|th)?"
_DATE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("ymd", re.compile(r"\b(\d{4})[-/](\d{1,2})[-/](\d{1,2})\b")),
    ("dmy", re.compile(rf"\b(\d{{1,2}}){_ORD}\s+(?:of\s+)?{_MONTH_RE}\.?,?\s*(\d{{4}})\b")),
    ("mdy", re.compile(rf"\b{_MONTH_RE}\.?\s+(\d{{1,2}}){_ORD},?\s*(\d{{4}})\b")),
    ("dm", re.compile(rf"\b(\d{{1,2}}){_ORD}\s+(?:of\s+)?{_MONTH_RE}\b")),
    ("md", re.compile(rf"\b{_MONTH_RE}\.?\s+(\d{{1,2}}){_ORD}\b(?![:\d])")),
    ("my", re.compile(rf"\b{_MONTH_RE}[.,]?\s*(\d{{4}})\b")),
)
_WORD_RE = re.compile(r"[a-z0-9]+|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]")


@dataclass(frozen=True)
class AnswerUnit:
    """One thing the context must hold: a folded word, or a date with the spellings that count."""

    word: str = ""
    date_spellings: tuple[str, ...] = ()

    def found_in(self, words: frozenset[str], flat: str) -> bool:
        if self.word:
            return self.word in words
        return any(_spelled(s).search(flat) for s in self.date_spellings)


def fold(word: str) -> str:
    """A word as both sides are compared: number words as digits, a plural ending dropped."""
    word = _NUMBER_WORDS.get(word, word)
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")) and word.isalpha():
        return word[:-1]
    return word


def words_of(text: str) -> list[str]:
    return _WORD_RE.findall(unicodedata.normalize("NFKC", text).lower())


def answer_units(answer: Any) -> list[AnswerUnit]:
    """The dates of the gold answer, then its content words (each once, in order)."""
    text = unicodedata.normalize("NFKC", str(answer)).lower()
    units: list[AnswerUnit] = []
    for kind, pattern in _DATE_PATTERNS:
        for match in pattern.finditer(text):
            spellings = _date_spellings(kind, match.groups())
            if spellings:
                units.append(AnswerUnit(date_spellings=spellings))
        text = pattern.sub(" ", text)
    seen: set[str] = set()
    for word in words_of(text):
        if word in STOPWORDS or fold(word) in seen:
            continue
        seen.add(fold(word))
        units.append(AnswerUnit(word=fold(word)))
    return units


def answer_found(answer: Any, context: str) -> bool | None:
    """Every content unit of `answer` in `context`; None when the answer has no content word."""
    units = answer_units(answer)
    if not units:
        return None
    words = frozenset(fold(w) for w in words_of(context))
    flat = " ".join(unicodedata.normalize("NFKC", context).lower().replace(",", " ").split())
    return all(u.found_in(words, flat) for u in units)


def _date_spellings(kind: str, groups: Sequence[str]) -> tuple[str, ...]:
    if kind == "ymd":
        year, month, day = int(groups[0]), int(groups[1]), int(groups[2])
    elif kind == "dmy":
        day, month, year = int(groups[0]), _month(groups[1]), int(groups[2])
    elif kind == "mdy":
        month, day, year = _month(groups[0]), int(groups[1]), int(groups[2])
    elif kind == "dm":
        day, month, year = int(groups[0]), _month(groups[1]), 0
    elif kind == "md":
        month, day, year = _month(groups[0]), int(groups[1]), 0
    else:
        month, year, day = _month(groups[0]), int(groups[1]), 0
    if not 1 <= month <= 12 or day > 31:
        return ()
    name = _MONTHS[month - 1]
    if day and year:
        return (f"{year:04d}-{month:02d}-{day:02d}", f"{day} {name} {year}", f"{name} {day} {year}")
    if day:
        return (f"-{month:02d}-{day:02d}", f"{day} {name}", f"{name} {day}")
    return (f"{year:04d}-{month:02d}", f"{name} {year}")


def _month(token: str) -> int:
    return next(n for n, name in enumerate(_MONTHS, start=1) if name.startswith(token[:3]))


def _spelled(spelling: str) -> re.Pattern[str]:
    left = r"(?<![0-9a-z])" if spelling[0].isalnum() else r"(?<=\d)"
    return re.compile(left + re.escape(spelling) + r"(?![0-9a-z])")


# -- context size ----------------------------------------------------------------------------------------

def context_size(sizes: Iterable[int], budget: int) -> dict[str, Any]:
    """Mean and max context size in tokens beside the budget, and how many contexts exceeded it."""
    values = list(sizes)
    if not values:
        return {"budget": budget, "mean_tokens": None, "max_tokens": None, "over_budget": 0}
    return {"budget": budget, "mean_tokens": round(sum(values) / len(values), 1), "max_tokens": max(values),
            "over_budget": sum(1 for v in values if v > budget)}


def fitting_text(texts: Sequence[str], budget: int) -> tuple[list[int], str]:
    """The longest prefix of `texts`, one per line, whose joined text fits `budget` tokens (the walk stops at
    the first that does not fit): the indices taken and the context they make."""
    taken: list[int] = []
    used = 0
    for n, text in enumerate(texts):
        cost = estimate_tokens(text + "\n")
        if used + cost > budget:
            break
        used += cost
        taken.append(n)
    return taken, "\n".join(texts[n] for n in taken)


def rate(flags: Iterable[bool | None]) -> float | None:
    """Share of True among the flags that are not None (None: not scorable)."""
    scored = [f for f in flags if f is not None]
    return round(sum(scored) / len(scored), 4) if scored else None
