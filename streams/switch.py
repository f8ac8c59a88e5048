"""Habit switches: an explicit switch replaces the habit it names (rule "habit-switch").

A switch statement, once normalised by the rules ("用户改喝绿茶", "用户改喝绿茶（原来喝咖啡）",
"User switched from running to cycling", "User cycles now instead of running"), names a
verb and a new object, or a from→to pair. It replaces an active memory of the same
type that is not negated and either
- uses the same verb with a different object ("用户每天喝咖啡" → verb 喝, object 咖啡), or
- names the "from" object.
A switch with neither a verb nor a "from" ("User switched to green tea") replaces nothing.
"""

from __future__ import annotations

import re
from functools import lru_cache
from dataclasses import dataclass

from engram.core.text_caches import registered
from engram.schemas.memory import Candidate, MemoryRecord

ZH_HABIT_VERBS = "喝|吃|用|玩|看|学|听|骑|坐|打|练|跑|抽"
_ZH = re.compile(
    rf"^用户(?:现在)?(?:改|换)(?:成|为)?(?P<verb>{ZH_HABIT_VERBS})(?P<new>[^（(]+?)"
    rf"(?:[（(]原来(?:{ZH_HABIT_VERBS})?(?P<old>[^）)]+)[）)])?$"
)
_EN_FROM = re.compile(r"^User (?:has |now )?(?:switched|changed|moved) from (?P<old>.+?) to (?P<new>.+)$")
_EN_VERB = re.compile(
    r"^User (?:now )?(?P<verb>[a-z]+) (?P<new>.+?) (?:now )?(?:instead(?: of (?P<old>.+?))?|rather than (?P<old2>.+?))(?: now)?$"
)
_ZH_CLAUSE_END = re.compile(r"[，,。；;（(]")


@dataclass(frozen=True)
class Switch:
    verb: str | None
    new: str
    old: str | None
    chinese: bool


@registered
@lru_cache(maxsize=16384)
def parse_switch(content: str) -> Switch | None:
    """The switch a normalised statement makes, if it is one."""
    text = content.strip().rstrip("。.")
    if m := _ZH.match(text):
        return Switch(m["verb"], m["new"], m["old"], True)
    if m := _EN_FROM.match(text):
        return Switch(None, m["new"], m["old"], False)
    if m := _EN_VERB.match(text):
        return Switch(m["verb"], m["new"], m["old"] or m["old2"], False)
    return None


def _stem(word: str) -> str:
    w = word.lower()
    for suffix in ("ing", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            return w[: -len(suffix)]
    return w


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9+#']+", text.lower())


def _has_phrase(text: str, phrase: str, chinese: bool) -> bool:
    if chinese:
        return phrase in text
    words, target = _words(text), _words(phrase)
    return bool(target) and any(words[i : i + len(target)] == target for i in range(len(words)))


def _object_after_verb(sw: Switch, content: str) -> str | None:
    """The object the old memory uses the switch's verb with, if it does."""
    if sw.verb is None:
        return None
    if sw.chinese:
        body = content.removeprefix("用户")
        at = body.find(sw.verb)
        return _ZH_CLAUSE_END.split(body[at + len(sw.verb) :])[0] or None if at >= 0 else None
    words = _words(content)
    for i, w in enumerate(words[:-1]):
        if _stem(w) == _stem(sw.verb):
            return " ".join(words[i + 1 :])
    return None


def switch_replaces(candidate: Candidate, existing: MemoryRecord) -> str | None:
    """The reason the candidate's switch replaces the existing memory, or None."""
    sw = parse_switch(candidate.content)
    if sw is None or existing.negated or existing.type != candidate.type:
        return None
    if _has_phrase(existing.content, sw.new, sw.chinese):
        return None  # already the new object: a repeat, not a switch
    if sw.old and _has_phrase(existing.content, sw.old, sw.chinese):
        return f"habit-switch: switched from {sw.old!r} to {sw.new!r}"
    old_obj = _object_after_verb(sw, existing.content)
    if old_obj:
        return f"habit-switch: {sw.verb!r} now takes {sw.new!r} instead of {old_obj!r}"
    return None
