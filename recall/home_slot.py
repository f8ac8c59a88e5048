"""Where the user lives is one slot. Pure.

A statement that the user lives, arrived or moved somewhere (`home_claim`: a move of residence, an arrival
"just arrived in …", "刚到…", "搬来…", "来…工作了", a home bought, "lives in …", "based out of … now") claims
the slot. The newest claim takes out the older entries about where the user lives, its weather or its area
(`about_where`), older claims included, that name another place (`named_places`): "it rains every day in
Vancouver" leaves once "just arrived in Toronto" is said, "Toronto winters are long" stays. A change of home
(`moved_here`: a move, an arrival, a home bought) also takes out the older such entries that name no place
("winters here are endless"); a residence merely restated ("lives in …") does not. A claim that names no
place ("we moved house") takes out all of them. Where a relative lives is no claim on the user's home, an
entry about a relative is not the user's home, and where the user comes from is not where they live. An
arrival for a trip (a purpose that ends: a conference, a week of meetings, on business, 出差; or a stated
return: "back on Friday", "明天回") is no change of home either.
"""

from __future__ import annotations

import re
from functools import lru_cache

from engram.core.domains import ARRIVAL, HOME_PLACE, NOT_PLACES, WHEREABOUTS, ZH_WHEREABOUTS, cue_domains, domains_of
from engram.core.text_caches import registered

_MOVE_VERB = re.compile(r"\b(?:mov(?:e|es|ed|ing)|relocat(?:e|es|ed|ing|ion))\b", re.IGNORECASE)
_MOVE_CUE = re.compile(
    r"\b(?:new (?:place|flat|apartment|house|home)|signed a lease)\b|"
    r"搬(?!东西|运|砖|桌|椅|箱|货)|新家|新房子|租的房子|去\S{1,4}发展|到\S{1,6}(?:一周|几天|一个月|半个月|半年)了",
    re.IGNORECASE)
_CLAUSE_END = re.compile(r"[.!?;,:()\n]")
_WORD = re.compile(r"[\w'’-]+")
_NOT_MOVED = frozenset({"on", "by", "up", "forward", "ahead"})
"""Words after the verb that make it no move of home: "move on", "moved by the film", "moved up a slot"."""
_OBJECT_WORDS = frozenset({"the", "a", "an", "my", "our", "your", "his", "her", "their", "its", "it", "them",
                           "this", "that", "these", "those", "some"})
_HOME_OBJECTS = frozenset({"house", "houses", "home", "homes", "family", "stuff", "things", "belongings",
                           "furniture", "everything", "apartment", "apartments", "flat", "flats", "place",
                           "kids", "in", "out"})
_DESTINATION = frozenset({"to", "into", "from", "till", "until"})
_FILLER = frozenset({"the", "a", "an", "next", "new", "our", "my", "their", "this", "that"})
_PASSIVE = frozenset({"was", "were", "been", "be", "got", "get", "gets", "is", "are", "being"})
_NOT_HOME = frozenset({"schedule", "work"})
"""What is moved or where to when a move is a rescheduling (a meeting, a call, to Friday) or a job's."""


NOT_DONE = re.compile(
    r"\b(?:plan\w*|want\w*|hop(?:e|es|ed|ing)|think\w*|consider\w*|might|may|will|would|could|should|shall|"
    r"going to|about to|need\w*|decid\w*|if|whether|maybe|perhaps|wish\w*|never|not|\w+n['’]t)\b|['’]ll\b|"
    r"打算|准备|计划|想|要|考虑|可能|也许|或许|将|会|希望|明年|下个月|下月|下周|下半年|年底|即将|如果|要是|没|不|别",
    re.IGNORECASE)
"""Before a change in its clause: it is not made (yet): a plan, a wish, a maybe, a negation."""
CLAUSE_EDGE = re.compile(r"[,.;!?，。；！？\n]")


def clause_start(text: str, at: int) -> int:
    """Where the clause of `text` that holds position `at` begins (after the last `CLAUSE_EDGE` before it)."""
    edges = [m.end() for m in CLAUSE_EDGE.finditer(text, 0, at)]
    return edges[-1] if edges else 0


def not_done_before(text: str, at: int) -> bool:
    """Whether the clause of `text` before `at` says what follows is not done (yet): a plan, a wish, a maybe, a
    negation (`NOT_DONE`: "plans to move", 打算…搬)."""
    return bool(NOT_DONE.search(text, clause_start(text, at), at))


def is_move(text: str) -> bool:
    """Whether `text` tells of a move of residence: a move verb with no object, a place or home for object
    or destination ("we moved to Tucson", "moving back home", "moved house"), or a move cue (a new flat, a
    lease, 搬家). Not a rescheduling or a job's move (what is moved, or where to, is a time, a meeting or
    work: "moving the meeting to Friday"), not "moved by" or "move on", not a thing's passive move."""
    if _MOVE_CUE.search(text):
        return True
    return any(_moves_home(text[:m.start()], m.group(0).lower(), text[m.end():]) for m in _MOVE_VERB.finditer(text))


def _moves_home(before: str, verb: str, after: str) -> bool:
    previous = _WORD.findall(before.lower())[-1:]
    if previous and (domains_of(previous[0]) & _NOT_HOME or (verb.endswith("ed") and previous[0] in _PASSIVE)):
        return False
    words = _WORD.findall(_CLAUSE_END.split(after, maxsplit=1)[0].lower())
    if not words:
        return True
    first = words[0]
    if first in _NOT_MOVED:
        return False
    if first in _OBJECT_WORDS:
        return bool(_HOME_OBJECTS.intersection(words[1:4]))
    if first in _DESTINATION or first in _HOME_OBJECTS:
        return _home_destination(words)
    return not domains_of(first) & _NOT_HOME and _home_destination(words)


def _home_destination(words: list[str]) -> bool:
    """No "to/from <a time, a meeting, work>" in the clause ("moved to Tucson" is one; "to 10am" is not)."""
    for n, word in enumerate(words):
        if word in _DESTINATION:
            target = next((w for w in words[n + 1:] if w not in _FILLER), "")
            if not target or target[0].isdigit() or domains_of(target) & _NOT_HOME:
                return False
    return True




_PLACE_AFTER = re.compile(r"(?<![A-Za-z])(?:to|in|into|out of|at|near)\s+(?:(?:the|our|my|their|his|her)\s+)?"
                          r"(?!(?:" + NOT_PLACES + r")\b)([A-Z][a-zA-Z]+(?:\s[A-Z][a-zA-Z]+)?)")
"""A capitalised name after a preposition of place ("to Cardiff", "out of the Lagos office")."""
_ZH_TRIP_WORDS = r"出差|开会|旅游|旅行|度假|参会|培训|玩|办事|见客户|探亲"
"""What one goes somewhere for without living there: a business trip, a meeting, a holiday, a visit."""
_ZH_PLACE = re.compile(
    r"(?:刚到|刚来|初来|初到|来到|到了|搬到了?|搬来|搬去|搬回|住在|定居在?|落户|调到|来)([\u4e00-\u9fff]{2,4}?)"
    r"(?=[,，。.!！?？;；\s~]|了|啦|工作|上班|读书|上学|生活|定居|发展|这边|那边|之后|以后|的|" + _ZH_TRIP_WORDS + r"|$)")
"""The place after a Chinese verb of arrival or residence ("刚到西安，", "搬来青岛了", "来苏州工作了")."""
_NOT_ZH_PLACE = re.compile(r"^(?:公司|单位|学校|家|机场|医院|办公室|这|那|酒店|工位|楼|门口|现场|地方|国外|外地|老家|一|几|新)")
"""What follows an arrival without being a place one lives in (the office, home, the airport, "here")."""
_PURCHASE = re.compile(r"\b(?:closed on|bought|got the keys to) (?:a|the|our|my) (?:new )?"
                       r"(?:house|home|flat|apartment|condo)\b|买了房|买房了|新房交房|拿到(?:新房)?钥匙", re.IGNORECASE)
"""A home bought: where the user will live."""
_LIVES = re.compile(r"\b(?:lives?|living|based|settled)\s+(?:in|out of)\b|\bnow (?:live|living|based)\b|住在|定居",
                    re.IGNORECASE)
_NOW = re.compile(r"\b(?:now|these days|currently|for good)\b|现在|目前", re.IGNORECASE)
_BASED_NOW = re.compile(r"\b(?:based|working|living|staying) (?:out of|in|at)\b", re.IGNORECASE)
_LOCAL = re.compile(
    r"\b(?:weather|climate|rain(?:s|y|ing)?|snow(?:s|y|ing)?|humid(?:ity)?|winters?|summers?|local|nearby|around here|"
    r"neighbo(?:u)?rhood|our (?:part of|area)|my area|where (?:we|i) live|commut\w*|rent)\b|"
    r"天气|气候|下雨|下雪|潮湿|回南天|冬天|夏天|附近|周边|本地|当地|这边|那边|小区|通勤|房租", re.IGNORECASE)
"""Words of where one lives: its weather and seasons, its area, the way to work and the rent (not the home
as a thing: saving for a house or a flat's oven says nothing of where)."""
ORIGIN = re.compile(r"\b(?:originally|grew up|born|hometown|raised)\b|\b(?:User|I)(?: is|'m| am| comes?) (?:originally )?from\b|"
                    r"(?:用户|我)(?:也|本|原本)?(?:是[\u4e00-\u9fff]{2,4}人|来自)|长大|出生|老家|家乡|籍贯", re.IGNORECASE)
"""Where the user comes from ("User is from Cork", "用户是长沙人", "grew up in …"; not a roommate's "是德国人"):
no statement of where they live now."""
_NAMED_IN = re.compile(r"(?<![A-Za-z])(?:in|based in|out of|here in|around) (?!(?:" + NOT_PLACES + r")\b)([A-Z][a-z]+)")


_TRIP = re.compile(
    r"\bfor (?:a |an |the |two |three |a few |a couple of |one |this )?(?:conferences?|meetings?|weeks?|weekend|days|"
    r"nights|trip|visit|workshop|summit|vacation|holiday|wedding|talk|offsite|retreat|business)\b|"
    r"\bon (?:a |an )?(?:business|work trip|trip|vacation|holiday|layover)\b|\b(?:business|work) trip\b|"
    r"\b(?:back|home|return(?:ing)?|flying back|fly back|heading back|head back) (?:on|next|by|in|tomorrow|tonight)\b|"
    r"出差|(?:到|来|去)[\u4e00-\u9fff]{2,4}?(?:" + _ZH_TRIP_WORDS + r")|"
    r"(?:今天|明天|后天|下周|周末|过几天|过两天|月底|\d+号)(?:就)?回", re.IGNORECASE)
"""An arrival for a trip: a purpose that ends (a conference, a week of meetings, on business, 出差, 开会,
旅游) or a stated return ("back on Friday", "明天回去"). One does not live where one is on a trip."""
_ZH_TRIP_TAIL = re.compile(r"(?:" + _ZH_TRIP_WORDS + r")+$")


def claim_places(text: str) -> frozenset[str]:
    """The places a claim names as where the user now is (`_PLACE_AFTER`, `_ZH_PLACE`, a Chinese place
    without the trip said after it: "上海" of "刚到上海出差")."""
    found = {m.group(1) for m in _PLACE_AFTER.finditer(text)}
    zh = (_ZH_TRIP_TAIL.sub("", p) for p in _ZH_PLACE.findall(text))
    found |= {p for p in zh if len(p) >= 2 and not _NOT_ZH_PLACE.match(p)}
    return frozenset(found)


def _of_a_relative(text: str) -> bool:
    return "family" in cue_domains(text)


def _first_move(text: str) -> int:
    """Where the first word of moving or buying a home is in `text` (its end when none is)."""
    found = [m.start() for pattern in (_MOVE_VERB, _MOVE_CUE, _PURCHASE) for m in [pattern.search(text)] if m]
    return min(found, default=len(text))


def is_trip(text: str) -> bool:
    """Whether `text` tells of a stay with a purpose that ends or a stated return (`_TRIP`)."""
    return bool(_TRIP.search(text))


def home_claim(text: str) -> bool:
    """Whether `text` says where the user lives now: a move of residence (`is_move`), a home bought, or,
    said of the user and not of a relative, an arrival with its place that is no trip (`core.domains.ARRIVAL`:
    "arrived at the office", "刚到公司" name none; `is_trip`: "for a conference", "出差"), or that they live or are based somewhere with its place ("lives in
    Valparaiso", "based out of the Lagos office now")."""
    if is_move(text) or _PURCHASE.search(text):
        return not not_done_before(text, _first_move(text))
    places = claim_places(text)
    if not places:
        return False
    arrival = ARRIVAL.search(text)
    if arrival:  # who arrived is said before the arrival ("User's daughter just arrived in …")
        return not _of_a_relative(text[:arrival.start()]) and not is_trip(text)
    return not _of_a_relative(text) and bool(_LIVES.search(text) or (_BASED_NOW.search(text) and _NOW.search(text)))


def about_where(text: str) -> bool:
    """Whether an entry is about where the user lives (its place, its weather or its area), not about a
    relative nor where they come from: the entries a newer `home_claim` may take out."""
    if _of_a_relative(text) or ORIGIN.search(text):
        return False
    return bool(HOME_PLACE.search(text) or ARRIVAL.search(text) or WHEREABOUTS.search(text) or _LOCAL.search(text)
                or ZH_WHEREABOUTS.search(text) or is_move(text))


def named_places(text: str) -> frozenset[str]:
    """The places a text names: those of a claim on the slot (`claim_places`: where the user now is), or
    else any place it says something is in ("the buses in Dunedin", "here in Halifax", "用户住在苏州")."""
    if home_claim(text):
        return claim_places(text)
    return claim_places(text) | frozenset(_NAMED_IN.findall(text))


@registered
@lru_cache(maxsize=65536)
def moved_here(text: str) -> bool:
    """A claim that is a change of home (a move, an arrival, a home bought), not a residence restated: it
    takes out even the older entries about where the user lives that name no place."""
    return home_claim(text) and bool(is_move(text) or _PURCHASE.search(text) or ARRIVAL.search(text))
