"""Degree kept with what it grades: "mildly allergic", "kind of likes", "不太能熬夜", "特别讨厌".

Mechanism (degree lifting): a degree word right after the subject is taken
out, the clause without it is read by the ordinary rules, and the word is put
back into the note in front of the predicate ("User is mildly allergic to …",
"用户不太能熬夜"). A weakener changes what a helper should do with the fact (a
splash of milk is fine for someone slightly lactose intolerant), so it is never
dropped; the common intensifiers that change nothing ("really", "just",
"totally") are not lifted, so they stay out of the note as before.

- English: the word follows "I", "I'm", "I am" or "we" ("I mildly dislike",
  "I'm slightly afraid of spiders", "I kind of like").
- Chinese: the word follows the (possibly dropped) subject ("特别讨厌排队",
  "有点怕打针"); a negated degree ("不太能", "不怎么喝") is read as the plain
  negation ("不能", "不喝") and restored on the negation ("用户不太能熬夜").
  A weakener is always kept ("用户比较喜欢…"), and so is a strong intensifier
  ("特别", "非常", "超级", "极其", "十分": "用户特别喜欢吃烧烤"); "很" and "挺" only
  when the clause reads nothing without them lifted, since "很喜欢" says no
  more than "喜欢".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from .common import Draft

_I = re.IGNORECASE
_EN_DEGREE = (
    r"a little bit|a little|a bit|kind of|kinda|sort of|mildly|slightly|somewhat|moderately|fairly|quite|rather|"
    r"severely|extremely|seriously|deeply|very|highly|terribly"
)
_EN_LIFT = re.compile(rf"^(?P<subj>i|i'm|i am|we|we're|we are)\s+(?P<deg>{_EN_DEGREE})\s+(?=\w)", _I)
_ZH_LIFT = re.compile(r"^(?P<subj>我们|我)?(?P<deg>特别|非常|超级|极其|十分|严重|有点儿|有点|有些|稍微|轻微|轻度|比较|挺|不太|不怎么|不是很)(?=\S)")
_ZH_NEGATED = ("不太", "不怎么", "不是很")
_ZH_WEAKENERS = frozenset({"有点儿", "有点", "有些", "稍微", "轻微", "轻度", "比较", "不太", "不怎么", "不是很"})
_ZH_STRONG = frozenset({"特别", "非常", "超级", "极其", "十分", "严重"})
"""Intensifiers that grade ("特别喜欢吃烧烤" is more than a liking); "很" and "挺" are filler and stay out."""
_EN_SKIP = re.compile(r"^User(?:'s| and others)\b")


def en_lift(clause: str) -> tuple[str, str]:
    """`(clause without its degree word, degree word)`, or `(clause, "")` when it has none."""
    m = _EN_LIFT.match(clause)
    if m is None:
        return clause, ""
    return f"{m.group('subj')} {clause[m.end():]}", m.group("deg").lower()


def zh_lift(body: str) -> tuple[str, str]:
    """The Chinese clause body without its degree word; a negated degree leaves its negation ("不太能" -> "不能")."""
    m = _ZH_LIFT.match(body)
    if m is None:
        return body, ""
    degree = m.group("deg")
    rest = body[m.end():]
    if degree in _ZH_NEGATED:
        rest = "不" + rest
    return (m.group("subj") or "") + rest, degree


def en_restore(draft: Draft, degree: str) -> Draft:
    """The note with its degree word back in front of the predicate ("User is mildly allergic to …")."""
    content = draft.content
    if not degree or _EN_SKIP.match(content) or not content.startswith("User "):
        return draft
    rest = content[len("User "):]
    if rest.startswith("is "):
        content = f"User is {degree} {rest[3:]}"
    else:
        content = f"User {degree} {rest}"
    return replace(draft, content=content)


def zh_restore(draft: Draft, degree: str) -> Draft:
    """The note with its degree back after "用户" (a negated degree replaces the plain "不")."""
    content = draft.content
    if not degree or not content.startswith("用户") or content.startswith("用户的"):
        return draft
    rest = content[2:]
    if degree in _ZH_NEGATED:
        if not rest.startswith("不"):
            return draft
        rest = rest[1:]
    return replace(draft, content=f"用户{degree}{rest}")


def en_graded(clause: str, match: Callable[[str], Draft | None]) -> Draft | None:
    """`match` on the clause with its degree lifted and restored; the plain clause when that finds nothing."""
    lifted, degree = en_lift(clause)
    if degree:
        draft = match(lifted)
        if draft is not None:
            return en_restore(draft, degree)
    return match(clause)


def zh_graded(body: str, match: Callable[[str], tuple[Draft, ...]]) -> tuple[Draft, ...]:
    """A weakener is lifted first (so it is kept); otherwise `match` on the body as it is, then lifted."""
    lifted, degree = zh_lift(body)
    if (degree in _ZH_WEAKENERS or degree in _ZH_STRONG) and len(lifted) >= 2:
        drafts = tuple(zh_restore(d, degree) for d in match(lifted))
        if drafts:
            return drafts
    drafts = match(body)
    if drafts or not degree or len(lifted) < 2:
        return drafts
    return tuple(zh_restore(d, degree) for d in match(lifted))
