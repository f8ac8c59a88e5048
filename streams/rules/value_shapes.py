"""The shape of a value, so a correction that names only the right value finds the wrong one.

Mechanism (shape-matched correction): "hang on, my mistake, it's the 9th" or "更新一下，变成5条了" names
the right value and leaves the wrong one unsaid. The value it replaces is the one of the same shape the
user said last: a day of the month (14th -> 21st), an amount in the same currency (£800 -> £1,200), a count
of the same unit (2只 -> 3只), a weekday, a clock time, or a bare number (29 -> 31). Only the shape of the
right value decides which earlier value it can replace; a value of no known shape corrects nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from engram.schemas.memory import MemoryRecord

_I = re.IGNORECASE
_ZH_DIGITS = "一二三四五六七八九十两百千万"
_WEEKDAY_EN = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_WEEKDAY_ZH = r"(?:周|星期|礼拜)[一二三四五六日天]"
_CLOCK = r"\d{1,2}(?::\d\d)?\s?(?:am|pm)"

_ORDINAL = re.compile(r"\d{1,2}(?:st|nd|rd|th)", _I)
_MONEY = re.compile(r"(?P<sym>[£$€¥])\s?\d(?:[\d,.]*\d)?\s?k?", _I)
_ZH_COUNT = re.compile(rf"(?:\d+(?:\.\d+)?|[{_ZH_DIGITS}]+)(?P<unit>[\u4e00-\u9fff]{{1,2}})")
_LATIN_COUNT = re.compile(r"\d+(?:\.\d+)?\s?(?P<unit>[a-z]{1,12})", _I)
_BARE_NUMBER = re.compile(r"\d{1,4}")


def shape_of(value: str) -> re.Pattern[str] | None:
    """A pattern that finds values of the same shape as `value` in other text, or None for no known shape."""
    value = value.strip()
    if _ORDINAL.fullmatch(value):
        return re.compile(r"(?<![\w])\d{1,2}(?:st|nd|rd|th)\b", _I)
    if m := _MONEY.fullmatch(value):
        return re.compile(rf"{re.escape(m.group('sym'))}\s?\d(?:[\d,.]*\d)?(?:\s?k\b)?", _I)
    if re.fullmatch(_CLOCK, value, _I):
        return re.compile(rf"(?<![\w:]){_CLOCK}\b", _I)
    if re.fullmatch(_WEEKDAY_EN, value, _I):
        return re.compile(rf"\b{_WEEKDAY_EN}\b", _I)
    if re.fullmatch(_WEEKDAY_ZH, value):
        return re.compile(_WEEKDAY_ZH)
    if m := _ZH_COUNT.fullmatch(value):
        return re.compile(rf"(?<![\d.{_ZH_DIGITS}])(?:\d+(?:\.\d+)?|[{_ZH_DIGITS}]+){re.escape(m.group('unit'))}")
    if m := _LATIN_COUNT.fullmatch(value):
        return re.compile(rf"(?<![\w.,])\d+(?:\.\d+)?\s?{re.escape(m.group('unit'))}\b", _I)
    if _BARE_NUMBER.fullmatch(value):
        return re.compile(r"(?<![\w.,£$€¥])\d{1,4}(?![\w.,%])")
    return None


def has_shape(value: str) -> bool:
    """The value is of a shape `shape_of` knows."""
    return shape_of(value) is not None


def same_shape_values(text: str, value: str) -> list[str]:
    """The values in `text` of the same shape as `value`, other than `value` itself, in order."""
    pattern = shape_of(value)
    if pattern is None:
        return []
    return [m.group(0) for m in pattern.finditer(text) if _norm(m.group(0)) != _norm(value)]


RECENT_TURNS = 3
"""How many of the latest turns that left a memory a correction naming only the new value may reach back to."""


def latest_shaped(memories: Iterable[MemoryRecord], value: str, skip: Iterable[str] = (), session: str = ""
                  ) -> tuple[MemoryRecord, str] | None:
    """The user memory holding a value of `value`'s shape (and not `value`) that the user stated last, with that
    value; memories whose id is in `skip` (correction notes) are passed over.

    Mechanism (recent shaped value): "oops, it's 4" corrects what was just said, so the memory must have been
    created in one of the last `RECENT_TURNS` turns that left a memory - counted in the correction's session
    when that session holds such a memory, else across sessions - and among those the one created last wins.
    Creation time, not the last update: a value reinforced later is no more what the user just said.
    """
    skipped = set(skip)
    pool = [m for m in memories if not m.type.is_assistant and m.memory_id not in skipped]
    same_session = [m for m in pool if m.session_id == session]
    for group in (same_session, pool):
        found = _latest_recent(group, value)
        if found is not None:
            return found
    return None


def _latest_recent(memories: list[MemoryRecord], value: str) -> tuple[MemoryRecord, str] | None:
    recent = sorted({m.created_at for m in memories}, reverse=True)[:RECENT_TURNS]
    best: tuple[MemoryRecord, str] | None = None
    for memory in memories:
        if recent and memory.created_at < recent[-1]:
            continue
        found = same_shape_values(memory.content, value)
        if found and (best is None or (memory.created_at, memory.memory_id) > (best[0].created_at, best[0].memory_id)):
            best = (memory, found[-1])
    return best


def _norm(value: str) -> str:
    return re.sub(r"[\s,]", "", value).lower()
