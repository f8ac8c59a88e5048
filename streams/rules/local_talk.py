"""Where the user is, from how they talk about its weather and seasons. Pure.

People rarely say "I live in Wuhan"; they say "长沙这天气真的离谱", "合肥今年梅雨季特别长", "Oslo最近终于出太阳了",
"Calgary winters are no joke". A place that opens a statement about its weather or season, in the present
and not as a trip's destination ("要去昆明出差，那边天气怎么样"), is where the user is: one note, "用户在长沙" /
"User is in Calgary", of the same shape and slot as "我在昆明" gives (`zh_builders._here`), so the home slot
reads it like any other statement of where the user is.
"""

from __future__ import annotations

import re

from engram.core.domains import NOT_PLACES
from engram.schemas.memory import MemoryType as T

from .common import Draft

_ZH_PLACE = r"(?P<v>[\u4e00-\u9fff]{2,3}?|[A-Z][a-z]+(?: [A-Z][a-z]+)?)"
_ZH_WHEN = r"(?:这|这边|这里|今年|今天|最近|这几天|这两天|这周|这阵子|终于|总算|又|还|一直|真的|也|的|\s)*"
_ZH_WEATHER = r"(?:天气|梅雨季?|雾霾|回南天|雨季|冬天|夏天|秋天|春天|气温|下雪|下雨|出太阳|降温|升温|入冬|入秋)"
_ZH_FEEL = r"(?:温度|热死|冷死|太热|太冷|好热|好冷|又热|又冷|潮湿|干燥)"
"""How hot, cold or damp: said of a coffee, a room or a baby as well as of a place, so of a place only with
a time of its own ("长沙最近好热", not "咖啡太热", "办公室好冷")."""
_ZH_SPELL = r"(?:这|这边|这里)?(?:今年|今天|最近|这几天|这两天|这周|这阵子|这段时间|又|一直)"
_ZH_LOCAL = re.compile(r"(?:^|[。！？!?\n，,；;])\s*(?:我们|我)?(?:这边|这里)?" + _ZH_PLACE +
                       r"(?:" + _ZH_WHEN + _ZH_WEATHER + r"|" + _ZH_SPELL + _ZH_WHEN + _ZH_FEEL + r")")
_ZH_NOT_PLACE_END = ("室", "间", "房", "厅", "屋", "里", "机", "器", "调", "车", "箱", "宝", "子")
"""A room, a device, a child: what ends so is no place one lives in ("办公室", "热水器", "宝宝")."""
_ZH_NOT_PLACE = frozenset({
    "今年", "今天", "明天", "昨天", "最近", "这边", "这里", "那边", "那里", "外面", "家里", "北方", "南方", "老家", "我们",
    "你们", "他们", "上周", "周末", "每天", "室内", "室外", "早上", "晚上", "白天", "夜里", "山上", "海边", "国内", "国外",
    "今晚", "本周", "下周", "春天", "夏天", "秋天", "冬天", "这个", "那个", "今冬", "今夏", "现在", "这几", "这两",
    "昨晚", "前天", "后天", "上午", "下午", "中午", "凌晨", "天天", "一直", "突然", "终于", "居然", "果然",
    "感觉", "觉得", "发现", "听说", "好像", "看来", "外头"})
_ZH_FUNCTION = re.compile(r"[是跟和的在了也就还很真又我你他她它这那有没说去来要想会把被让给对]|都太|太都")
"""Characters of function words and verbs: a "place" holding one is a clause's words ("是跟天气"); not 都 nor
太 alone (成都, 太原 are places), only together ("都太热了")."""
_EN_LOCAL = (
    re.compile(r"(?:^|[.!?]\s+)(?P<v>[A-Z][a-z]+(?: [A-Z][a-z]+)?)(?:['’]s)? (?:weather|summers?|winters?|humidity|"
               r"heat|traffic|rain|snow|springs?|autumns?|falls?)\b(?! (?:next|this coming|tomorrow))"
               r"(?=\s+(?:is|are|was|were|has|have|had|can|could|will|won['’]t|gets?|got|feels?|felt|seems?|never|"
               r"always|really|just|keeps?|kept|here|this|these|lately|so|hits?|last|in|around)\b|\s*(?:[,.!?;:]|$))"),
    re.compile(r"\b(?:weather|heat|humidity|rain|snow) (?:here )?in (?P<v>[A-Z][a-z]+(?: [A-Z][a-z]+)?) "
               r"(?:is|has been|was)\b"))
_EN_NOT_PLACE = frozenset(NOT_PLACES.split("|")) | {
    "This", "That", "Your", "Their", "Last", "Next", "Summer", "Winter", "Spring", "Autumn", "Fall", "Today",
    "Tomorrow", "Yesterday", "It", "Its", "Here", "So", "And", "But", "Christmas", "Easter", "Thanksgiving",
    "Halloween", "Weekend", "Weekday", "Morning", "Evening", "Afternoon", "Night", "Tonight", "Holiday", "Rush",
    "Black Friday", "Commute"}
"""Words that open a sentence, days, months (`core.domains.NOT_PLACES`), times of day and of the year: what a
season or the traffic is of without a place."""
_ELSEWHERE = re.compile(
    r"\b(?:trip|travel\w*|visit\w*|going to|heading to|flying to|fly to|vacation|holiday|next week|next month|"
    r"forecast for)\b|要去|想去|打算去|准备去|计划去|出差|旅游|旅行|玩几天|下周去|下个月去|那边", re.IGNORECASE)
"""A place talked about as somewhere else: a trip, a visit, a forecast asked for a destination."""


def local_talk_notes(text: str, drafts: list[Draft]) -> list[Draft]:
    """"用户在<place>" / "User is in <place>" for the place whose weather or season the turn talks about as
    the user's own, when no draft of where the user is or is from names it already and the turn talks of no trip."""
    if _ELSEWHERE.search(text):
        return []
    found = [(place, True) for place in (m.group("v") for m in _ZH_LOCAL.finditer(text))
             if place not in _ZH_NOT_PLACE and not _ZH_FUNCTION.search(place) and not place.endswith(_ZH_NOT_PLACE_END)]
    found += [(m.group("v"), False) for pattern in _EN_LOCAL for m in pattern.finditer(text)
              if m.group("v") not in _EN_NOT_PLACE]
    if len({place for place, _ in found}) != 1:
        return []  # two places in one breath: which one is home cannot be told
    place, chinese = found[0]
    if any(place in d.content for d in drafts if d.attribute in ("location", "hometown")):
        return []
    content = f"用户在{place}" if chinese else f"User is in {place}"
    return [Draft(T.USER_FACT, content, 0.7, "location", None, False, (place,))]
