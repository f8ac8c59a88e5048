"""Relative time in a quoted text, spelled out against the moment it was said.

"We flew back yesterday", said on 2023-05-08, is shown as "yesterday (2023-05-07)": the reader
of a recalled context sees when the turn was said, but not what "yesterday", "last Friday" or "last year"
meant then, and a question asks for that day, month or year. Only expressions with one exact reading are
spelled out (a day, a weekday before or after, a month or a year counted from the turn's date); vague ones
("recently", "a few weeks ago", "last weekend") are left as they are. English only: a text in another
language is returned unchanged.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from functools import lru_cache

from engram.core.text_caches import registered

_NUMBERS = {w: n for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())} | {"a": 1, "an": 1, "a couple of": 2}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY_RE = (r"(mon(?:day)?|tue(?:s(?:day)?)?|wed(?:nesday)?|thu(?:r(?:s(?:day)?)?)?|fri(?:day)?|"
               r"sat(?:urday)?|sun(?:day)?)")
_COUNT_RE = r"(\d{1,2}|a couple of|an?|" + "|".join(sorted(_NUMBERS, key=len, reverse=True)) + ")"
_RELATIVE_RE = re.compile(
    r"\b(?:(?P<day>the day before yesterday|yesterday|last night|tomorrow)"
    rf"|(?P<weekday_dir>last|next|this past|this coming) {_WEEKDAY_RE}\b\.?"
    rf"|(?P<count>{_COUNT_RE}) (?P<unit>days?|months?|years?) ago"
    r"|(?P<span_dir>last|next) (?P<span>month|year))\b",
    re.IGNORECASE)
_CUES = ("yesterday", "night", "tomorrow", "ago", "last", "next", "past", "coming")
"""Every expression holds one of these: a text without any is returned at once (most are; a context renders
each line more than once)."""


def spell_out(text: str, said: datetime | date | None) -> str:
    """`text` with each relative time expression followed by the date it meant when said at `said`:
    "yesterday (2023-05-07)", "last Fri (Friday 2023-07-14)", "next month (2023-06)", "last year (2022)"."""
    if said is None or not text:
        return text
    lowered = text.lower()
    if not any(cue in lowered for cue in _CUES):
        return text
    return _spelled_out(text, said.date() if isinstance(said, datetime) else said)


@registered
@lru_cache(maxsize=4096)
def _spelled_out(text: str, day: date) -> str:
    """`spell_out` on one day (a context renders each line more than once: to charge it, then to show it)."""

    def resolve(match: re.Match[str]) -> str:
        meant = _meaning(match, day)
        if meant is None:
            return match.group(0)
        closing = match.end() < len(match.string) and match.string[match.end()] == ")"
        return f"{match.group(0)}, {meant}" if closing else f"{match.group(0)} ({meant})"

    return _RELATIVE_RE.sub(resolve, text)


def _meaning(match: re.Match[str], day: date) -> str | None:
    """The date (or month, or year) the expression meant on `day`, as written in the context."""
    found = {k: (v.lower() if v else v) for k, v in match.groupdict().items()}
    if found["day"]:
        offset = {"the day before yesterday": -2, "yesterday": -1, "last night": -1, "tomorrow": 1}[found["day"]]
        return (day + timedelta(days=offset)).isoformat()
    if found["weekday_dir"]:
        weekday = _weekday(match.group(0).split()[-1])
        backwards = found["weekday_dir"] in ("last", "this past")
        step = (day.weekday() - weekday) % 7 or 7 if backwards else (weekday - day.weekday()) % 7 or 7
        meant = day - timedelta(days=step) if backwards else day + timedelta(days=step)
        return f"{_WEEKDAYS[weekday].capitalize()} {meant.isoformat()}"
    if found["count"]:
        count = int(found["count"]) if found["count"].isdigit() else _NUMBERS[found["count"]]
        unit = found["unit"].rstrip("s")
        if unit == "day":
            return (day - timedelta(days=count)).isoformat()
        if unit == "month":
            return _month(day, -count)
        return str(day.year - count)
    sign = -1 if found["span_dir"] == "last" else 1
    return _month(day, sign) if found["span"] == "month" else str(day.year + sign)


def _weekday(word: str) -> int:
    word = word.lower().rstrip(".")
    return next(n for n, name in enumerate(_WEEKDAYS) if name.startswith(word[:3]))


def _month(day: date, offset: int) -> str:
    months = day.year * 12 + day.month - 1 + offset
    return f"{months // 12:04d}-{months % 12 + 1:02d}"
