"""Time kept with tense: plans are not current facts, deadlines are constraints.

Three mechanisms:

- future as plan: a statement about the user's job, home or role that carries a
  future marker ("next month", "in September", "I'll be moving", "明年",
  "下个月", "即将") is a plan, so its note is a `user_goal` with the time
  kept ("User is joining Stripe in January"), never a profile value that would
  replace the current one. A past-tense clause ("I moved in January") is not
  future, whatever month it names.
- lasting state: a perfect clause with a long duration ("I've been a nurse
  for 12 years", "since 2015") is a fact about the user even where side events
  are left out (beside a request).
- deadline: a task with a due date ("The visa form is due on the 12th",
  "the deadline for the lab report is Tuesday", "报表周三前必须交", "报告月底截止")
  is a `user_constraint` that keeps the date.
- wish as plan (Chinese): a leftover "用户想<verb>…" ("想考公", "想跳到4万") is
  a goal; "想问", "想知道", "想起", "想法" and the like are not wishes.
- fronted time (Chinese): a time phrase before a subject-less clause
  ("下半年想转SRE") is lifted, the clause is read, and the time goes back after
  "用户" ("用户下半年想转SRE").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from engram.schemas.memory import MemoryType as T

from .common import Draft, clean, entities_in, topic_of
from .person import _objects

_I = re.IGNORECASE
_MONTH = r"(?:january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)"
_SEASON = r"(?:spring|summer|autumn|fall|winter)"
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_EN_FUTURE = re.compile(
    rf"\b(?:next\s+(?:week|month|year|term|semester|quarter|{_SEASON}|{_WEEKDAY})|(?:in|from|starting|this coming)\s+{_SEASON}|in\s+(?:a|two|three|a few|a couple of|\d+)\s+(?:weeks?|months?|years?)|"
    rf"soon|(?:'ll|will)\s+be\s+\w+ing|(?:'m|am|is|are|'re)\s+\w+ing\b.*\bin\s+the\s+{_SEASON}|(?:is|are|'m|am)\s+(?:about|going|set|due)\s+to|later this year|"
    rf"after (?:the )?(?:summer|holidays|new year)|(?:at|by|before|from)\s+the\s+(?:end|start|beginning)\s+of\s+"
    rf"(?:the|this|next)\s+(?:year|month|term|semester|quarter|summer))\b",
    _I,
)
_EN_MONTH_FUTURE = re.compile(rf"\b(?:in|from|starting)\s+{_MONTH}\b", _I)
_EN_PAST = re.compile(
    r"^(?:user|i)\s+(?:(?:just|recently|already|finally)\s+)*(?:\w+ed|was|were|had|went|left|got|took|became|began|"
    r"has\s+\w+|have\s+\w+)\b", _I)
_ZH_FUTURE = re.compile(r"明年|下个月|下月|下周|下星期|下半年|下学期|年底|年后|过完年|即将|马上就要|(?:月|年)(?:初|底)(?:就)?要|要入职|要去|将要|将会")
_PLANNABLE = frozenset({T.USER_FACT, T.USER_PROFILE})
_ZH_WISH = re.compile(r"^用户[\u4e00-\u9fff]{0,4}?(?:还|也|很|特别|一直)?想(?!问|知道|了解|请教|说|看看|试试|听|起|到|想|法|象|念|必|不|明白|清楚|你|您)"
                      r"[\u4e00-\u9fffA-Za-z]")

_EN_DATE = (
    rf"(?:(?:on|by|before|at|in|until|this|next)\s+)*(?:\d{{1,2}}(?::\d\d)?\s*(?:am|pm)\s+(?:on\s+)?)?(?:{_WEEKDAY}|{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?|"
    rf"(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)(?:\s+of\s+{_MONTH})?|\d{{1,2}}/\d{{1,2}}|tomorrow|tonight|midnight|noon|"
    rf"(?:the\s+)?end of (?:the |this |next )?(?:week|month|year|term|quarter)|next (?:week|month)|{_MONTH})"
)
_EN_DEADLINE = re.compile(
    rf"^(?:(?P<own>my|our|the)\s+)(?P<what>[\w' -]{{2,40}}?)\s+(?P<verb>is due|are due|closes|close|ends|expires|"
    rf"(?:has|have|needs?) to be (?:submitted|done|finished|filed|sent|in|paid)|must be (?:submitted|done|finished|in|paid))"
    rf"\s+(?P<when>{_EN_DATE}(?:\s+at\s+[\w:]+)?)$"
    rf"|^(?:(?P<own2>my|our|the)\s+)?deadline\s+(?:for|on)\s+(?P<what2>[\w' -]{{2,40}}?)\s+is\s+(?P<when2>{_EN_DATE})$",
    _I,
)
_ZH_DATE = (r"(?:下周|这周|本周|周|星期)[一二三四五六日天]|下周|月底|年底|月中|月初|\d{1,2}月\d{1,2}[日号]|\d{1,2}[日号]|"
            r"明天|后天|下个月|这个月|本月|周末|今晚|今天")
_ZH_DEADLINE = re.compile(
    rf"^(?P<what>[\u4e00-\u9fffA-Za-z]{{1,10}}?(?<![下这本上每]))(?:要|得|必须|需要)?(?P<when>{_ZH_DATE})(?P<before>之前|以前|前)?"
    rf"(?P<verb>(?:必须|一定要|要|得|需要)?(?:交|提交|完成|交付|上线|搞定|做完|写完|截止|交上去|到期))"
    rf"|^(?P<first>{_ZH_DATE})(?:之前|以前|前)?(?:必须|一定要|要|得|需要)?(?:交|提交|完成|交付|上线|搞定|做完|写完)"
    rf"[\u4e00-\u9fffA-Za-z]{{2,12}}$"
    rf"|^(?P<what2>[\u4e00-\u9fffA-Za-z]{{1,10}}?)的?(?:截止日期|截止时间|截止|deadline|ddl)(?:是|在|定在)(?P<when2>{_ZH_DATE})", _I)
_ZH_FRONT_TIME = re.compile(r"^(?P<t>明年|今年|下半年|上半年|下个月|年底|年后|过完年|下学期|下周|月底)(?=[\u4e00-\u9fff])")


_EN_LASTING = re.compile(r"\b(?:for\s+(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|many|several|a few|"
                         r"over|almost|nearly|about)\b[\w ]{0,12}?\b(?:years?|months?|decades?)|since\s+(?:\d{4}|i was|childhood))\b", _I)


def is_lasting(clause: str) -> bool:
    """A perfect or past clause with a long duration ("I've been a nurse for 12 years") states who the user is."""
    return _EN_LASTING.search(clause) is not None


def is_future(clause: str) -> bool:
    """The clause places what it says in the future (and is not itself past tense)."""
    if _ZH_FUTURE.search(clause):
        return True
    if _EN_PAST.match(clause):
        return False
    return bool(_EN_FUTURE.search(clause) or _EN_MONTH_FUTURE.search(clause))


def is_plan(note: str) -> bool:
    """A leftover note that is a plan: a future marker, or a Chinese wish to do something ("用户想考公")."""
    return is_future(note) or _ZH_WISH.match(note) is not None


def planned(draft: Draft, clause: str) -> Draft:
    """A job, home or role statement with a future marker becomes a plan (`user_goal`), the time kept."""
    if draft.type not in _PLANNABLE or draft.attribute in ("name", "age") or not is_future(clause):
        return draft
    return replace(draft, type=T.USER_GOAL, attribute=None)


def en_deadline(clause: str) -> Draft | None:
    """ "The visa form is due on the 12th" -> "User's visa form is due on the 12th"."""
    m = _EN_DEADLINE.match(clause.strip())
    if m is None:
        return None
    if m.group("what2"):
        what = _objects(clean(m.group("what2")))
        content = f"User's deadline for {what} is {clean(m.group('when2'))}"
    else:
        what = _objects(clean(m.group("what")))
        content = f"User's {what} {m.group('verb').lower()} {clean(m.group('when'))}"
    return Draft(T.USER_CONSTRAINT, content, 0.75, None, topic_of(what), False, entities_in(content, prose=True))


def zh_deadline(body: str) -> tuple[Draft, ...]:
    """ "报表周三前必须交" -> "用户的报表周三前必须交"."""
    m = _ZH_DEADLINE.match(body)
    if m is None:
        return ()
    if m.group("first"):
        return (Draft(T.USER_CONSTRAINT, clean(f"用户{body}"), 0.75, None, None, False, entities_in(body)),)
    what = m.group("what") or m.group("what2")
    if what.startswith(("你", "他", "她", "我")):
        return ()
    content = f"用户的{body.removeprefix('的')}" if m.group("what") else f"用户的{what}截止日期是{m.group('when2')}"
    return (Draft(T.USER_CONSTRAINT, clean(content), 0.75, None, topic_of(what), False, entities_in(what)),)


def zh_timed(body: str, match: Callable[[str], tuple[Draft, ...]]) -> tuple[Draft, ...]:
    """`match` on the body; failing that, with a fronted time lifted and put back after "用户"."""
    drafts = match(body)
    if drafts:
        return drafts
    m = _ZH_FRONT_TIME.match(body)
    if m is None or len(body) - m.end() < 2:
        return ()
    when = m.group("t")
    return tuple(replace(d, content=f"用户{when}{d.content[2:]}") if d.content.startswith("用户") else d
                 for d in match(body[m.end():]))
