"""Single-valued aspects of the user besides where they live (`recall.home_slot`): what they do for a living,
the rate they charge, an activity dropped, a relationship ended. Pure.

- The job is one slot: a change of job (`job_claim`: a new job, a job quit, a lay-off, a business of one's
  own opened, 换工作, 跳槽, 入职, 离职, 辞职) takes out the older entries about the user's work
  (`about_job`: the employer, the shifts, the occupation stated: "User is a pharmacist", "用户是收银员")
  and the older changes of job.
- The rate is one slot: the newest amount charged per unit of work (`rate_claim`: "€40 an hour", "$55/h",
  千字220元, 每小时300元) takes out the older rate statements that do not name its amount (`rate_amounts`). A
  budget ("$200 a month") is no rate: a month is no unit of work.
- An activity dropped ("quit judo", "stopped violin", "不学书法了", "画画不学了", "不踢 rugby 了") ends
  every older entry that names it (`ended_activities`), whoever it was about.
- A relationship ended ("we broke up", "split up with Jonas", 分手了, 离婚了) ends every older entry that
  names the partner (`ended_partners`) or, when no name is said, the partner's role ("boyfriend", 男朋友).
"""

from __future__ import annotations

import re

from engram.core.domains import cue_domains
from engram.core.text import VERBATIM_FRAME, terms

from .home_slot import CLAUSE_EDGE, clause_start, moved_here, not_done_before

_JOB_CHANGE = re.compile(
    r"\b(?:(?:took|accepted|got|landed|start(?:ed|ing|s)|began|begin(?:s|ning)?) (?:the|a|an|my|this|their|her|his)? ?"
    r"(?:(?-i:[A-Z])[\w&'’-]* ){0,3}(?:new )?(?:job|role|position)|new (?:job|role|position|employer)|first day at|made the leap|resign(?:ed|ing)|"
    r"(?:was|were|got|been|being) (?:laid off|let go|made redundant|fired)|laid off|"
    r"(?:left|quit|quitting|leaving) (?:my|the|their|her|his|a) (?:job|role|position|company)|changed jobs|"
    r"switched jobs|went freelance|retired|open(?:ed|s|ing)? (?:my|their|her|his|a|an) (?:own )?"
    r"(?:caf[eé]|bakery|shop|store|business|restaurant|studio|practice|firm|company|bar|salon)|"
    r"start(?:ed|ing)? (?:my|their|her|his|a) own (?:business|company|firm|practice))\b|"
    r"换工作|换了(?:份|个)?工作|跳槽|辞职|辞了|离职|入职|被裁|裁员|新工作|新公司|新单位|调到|"
    r"(?:自己)?开了(?:一)?(?:家|个)|创业|退休了", re.IGNORECASE)
"""A change of what the user does for a living; "started a new job", "laid off", 跳槽, 自己开了一家…"""
_EMPLOYMENT = re.compile(r"\b(?:job|jobs|works? (?:at|for|as)|employer|employed|shifts?|boss|colleagues?|"
                         r"coworkers?)\b|公司|上班|工作|单位|值班|夜班|白班|老板|同事", re.IGNORECASE)
_SPEAKER = r"^(?:User said:\s*|用户说[:：]\s*)?"
_OCCUPATION_EN = re.compile(
    _SPEAKER + r"(?:User|I)(?: is|'m| am) (?:an? |the )?(?:[\w-]+ ){0,2}"
    r"(?:[\w-]+(?:er|or|ist|ian|ant|ent|man|woman|nurse|chef|cook|clerk|teller|agent|officer|analyst|"
    r"pilot|doctor|surgeon|lawyer|solicitor|barista|cashier|tutor)|nurse|chef|clerk|pilot|tutor)\b", re.IGNORECASE)
_NOT_OCCUPATION = re.compile(r"\b(?:vegetarian|vegan|pescatarian|allergic|years? old|\d+)\b", re.IGNORECASE)
_OCCUPATION_ZH = re.compile(
    _SPEAKER + r"(?:用户|我)(?:是|当|做|在\S{0,12}(?:当|做))(?:一名|一个|个)?\s*"
    r"[\u4e00-\u9fffA-Za-z ]{0,6}?(?:员|师|工|长|医生|护士|经理|主管|老板|设计|运营|开发|翻译|律师|会计|审计|销售|记者|编辑|"
    r"司机|厨师|老师|店长|nurse|designer|engineer|manager|developer)")
"""The user's occupation stated ("User is a pharmacist", "用户是收银员", "我在药店当店员")."""


def job_claim(text: str) -> bool:
    """Whether `text` tells of a change of the user's job (`_JOB_CHANGE`)."""
    return bool(_JOB_CHANGE.search(text))


def about_job(text: str) -> bool:
    """Whether an entry is about the user's work: their employer, shifts, colleagues, or occupation."""
    if _EMPLOYMENT.search(text) or _OCCUPATION_ZH.search(text):
        return True
    return bool(_OCCUPATION_EN.search(text)) and not _NOT_OCCUPATION.search(text)


_AMOUNT = r"(?:[€$£¥R]\s?\d[\d,.]*k?|\d[\d,.]*k?\s?(?:€|euros?|dollars?|pounds?|rand|元|块|欧|美元|刀)?)"
_WORK_UNIT = r"(?:an? |per |/ ?|each )(?:hour|hr|h|word|page|session|lesson|class|consult(?:ation)?)\b"
_CHARGE = r"\b(?:charg\w*|rates?|fees?|pric\w*|bill\w*|quot\w*)\b|收费|报价|价格|价钱|涨价|降价|费用"
_RATE = re.compile(
    _AMOUNT + r"\s?" + _WORK_UNIT + r"|(?:千字|每千字|每小时|一小时|每个小时|每节课|一节课|每课时|每字)\s?" + _AMOUNT +
    r"|" + _AMOUNT + r"\s?(?:/小时|一小时|每小时|/千字|每千字|一节课|每节课)|(?:" + _CHARGE + r")[^.。!?！？]{0,30}?"
    r"(?:[€$£¥]\s?\d[\d,.]*|\d[\d,.]*\s?(?:€|euros?|dollars?|元|块)|\bR\d[\d,.]*)", re.IGNORECASE)
"""An amount charged per unit of work ("€40 an hour", "$55/h", 千字220元, 每小时300元) or an amount after a
word of charging ("raised my fee to $90", "涨价到200元")."""


def rate_claim(text: str) -> bool:
    """Whether `text` states what the user charges (`_RATE`)."""
    return bool(_RATE.search(text))


def rate_amounts(text: str) -> frozenset[str]:
    """The words of the amounts a rate statement names (its words with a digit: "r800", "55", "180")."""
    if not rate_claim(text):
        return frozenset()
    return frozenset(t for m in _RATE.finditer(text) for t in terms(m.group(0)) if any(c.isdigit() for c in t))


_EN_STOP = re.compile(
    r"\b(?:quit|quitting|stopped|stopping|dropped|dropping|gave up|giving up|no longer (?:does|plays|takes|goes to))"
    r"\s+(?:(?:the|her|his|their|my|our|doing|playing|taking|going to)\s+)*([A-Za-z][\w-]+)", re.IGNORECASE)
_NOT_ACTIVITY = frozenset({"by", "at", "in", "on", "for", "to", "off", "over", "and", "it", "that", "this", "being",
                           "after", "before", "when", "because", "so", "there", "here", "job", "jobs", "role", "work"})
"""Words after a verb of stopping that name no activity ("stopped by", "quit my job": the job is its own slot)."""
_ZH_VERB = r"(?:学|踢|打|弹|练|上|玩|跳|游|画|下|拉|唱)"
_ZH_STOP_AFTER = re.compile(r"不(?:再)?" + _ZH_VERB + r"\s*([A-Za-z][\w-]+|[\u4e00-\u9fff]{2}?)\s*(?:课)?(?:了|啦)")
_ZH_STOP_BEFORE = re.compile(r"((?<![A-Za-z0-9_-])[A-Za-z][\w-]+|[\u4e00-\u9fff]{2})\s*(?:也)?不(?:再)?" + _ZH_VERB + r"(?:了|啦)")
_ZH_QUIT = re.compile(r"(?:退出了?|放弃了?|停了)\s*([A-Za-z][\w-]+|[\u4e00-\u9fff]{2})")


def ended_spans(text: str) -> list[tuple[int, int]]:
    """Where `text` says an activity was dropped (the spans `ended_activities` reads its objects from)."""
    spans = [m.span() for m in _EN_STOP.finditer(text) if m.group(1).lower() not in _NOT_ACTIVITY]
    for pattern in (_ZH_STOP_AFTER, _ZH_QUIT):
        spans.extend(m.span() for m in pattern.finditer(text))
    spans.extend((_name_start(text, m.start()), m.end()) for m in _ZH_STOP_BEFORE.finditer(text))
    return sorted(spans)


_NAME_EDGE = frozenset("说的是了和跟与我你他她它们也都就还，,。；;：: ")


def _name_start(text: str, start: int, longest: int = 3) -> int:
    """Where the name of the activity ending at `start` + 2 begins: `_ZH_STOP_BEFORE` reads two characters
    of it ("小提琴不学了" → 提琴); up to `longest` more before them belong to it until a word that is no name."""
    while longest and start > 0 and "\u4e00" <= text[start - 1] <= "\u9fff" and text[start - 1] not in _NAME_EDGE:
        start -= 1
        longest -= 1
    return start


def ended_activities(text: str) -> frozenset[str]:
    """The activities `text` says were dropped: the object of quit/stopped/gave up, or of 不学/不踢/… 了
    before or after it ("不学书法了", "画画不学了", "不踢 rugby 了")."""
    found = {m.group(1).lower() for m in _EN_STOP.finditer(text) if m.group(1).lower() not in _NOT_ACTIVITY}
    for pattern in (_ZH_STOP_AFTER, _ZH_STOP_BEFORE, _ZH_QUIT):
        found |= {m.group(1).lower() for m in pattern.finditer(text)}
    return frozenset(w for w in found if w not in _NOT_ACTIVITY and w not in {"工作", "班了"})


_BREAKUP = re.compile(r"\b(?:broke up|break up|breaking up|split up|separated|divorced|divorcing|"
                      r"ex-?(?:boyfriend|girlfriend|husband|wife|partner|fianc[eé]e?))\b|分手|离婚|前男友|前女友|前夫|前妻",
                      re.IGNORECASE)
_NAME = re.compile(r"\b([A-Z][a-z]+)\b")
_NOT_NAME = frozenset({"User", "I", "We", "The", "Last", "This", "My", "Our", "And"})
_ZH_PARTNER = re.compile(r"(?:和|跟|与)([\u4e00-\u9fff]{2,3}?)(?:分手|离婚|分开)|([\u4e00-\u9fff]{2,3}?)(?:和|跟)我(?:分手|离婚)")
_ROLES = {"boyfriend": "boyfriend", "girlfriend": "girlfriend", "fiancé": "fiancé", "fiance": "fiance",
          "fiancée": "fiancée", "男朋友": "男朋", "女朋友": "女朋", "未婚夫": "未婚夫", "未婚妻": "未婚妻"}
"""A partner's role words and the word of each that names it (男朋友 by 男朋: 朋友 alone is any friend)."""


def ended_partners(text: str) -> frozenset[str]:
    """Who a relationship that `text` says ended was with: the names it says ("Priya and I broke up",
    "我和小林分手了"), or else the partner's roles (boyfriend, 男朋友): an older entry naming them leaves."""
    if not _BREAKUP.search(text):
        return frozenset()
    names = {m.group(1).lower() for m in _NAME.finditer(re.sub(_SPEAKER, "", text)) if m.group(1) not in _NOT_NAME}
    names |= {a or b for a, b in _ZH_PARTNER.findall(text)}
    if names:
        return frozenset(names)
    return frozenset(_ROLES.values())


_CHANGE_VERB = r"(?:mov|relocat|switch|chang|transferr?|upgrad|downgrad|convert|migrat)ed"
"""A change made: the past of a verb of change ("moves", "switching", "movies", "a transfer" tell of none)."""
EN_FROM_TO = re.compile(
    r"\b(?P<verb>" + _CHANGE_VERB + r"(?:\s+(?!from\b)[\w'’-]+){0,3}?)\s+from\s+(?P<old>[^,.;:!?()]{1,60}?)\s+"
    r"(?P<to>to|into|over to)\b", re.IGNORECASE)
EN_FROM_AFTER_HERE = re.compile(
    r"\b(?P<verb>" + _CHANGE_VERB + r"(?:\s+(?:back|over|out))?\s+(?:here|there))\s+from\s+"
    r"(?P<old>(?:the\s+)?(?-i:[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*){0,3}))", re.IGNORECASE)
ZH_FROM = re.compile(r"从(?![不来没未])(?P<old>[^，,。；;！!？?从到就都也还不没]{1,15}?)(?P<verb>搬|迁|调|转|换|跳槽)"
                     r"(?=了?(?:到|去|来|往|回|成|为|过))")
"""A change from one value to another: "moved from Halifax to Moncton", "relocated here from Porto",
"switched from Angular to Svelte", 从长沙搬到厦门; `old` is the value left. In Chinese the verb goes on to
where the change went (搬到, 换成, 调去): "从家里转地铁" is a route, "从去年开始换工作" a time; `old` holds no
adverb nor 到 (从早到晚都在换…, 从小就想搬…), and 从不/从来/从没 are "never"."""


_HABIT = re.compile(r"\b(?:every|each|daily|weekly|monthly|usually|always|often|sometimes|whenever)\b|"
                    r"每天|每周|每月|每次|天天|经常|总是|通常|一般", re.IGNORECASE)
"""In a change's clause: it is made again and again (a route, a standing order), no value is left."""


def done_change(match: re.Match[str]) -> bool:
    """Whether a match of `EN_FROM_TO`, `EN_FROM_AFTER_HERE` or `ZH_FROM` tells of a change made once: no
    plan, wish or negation before it in its clause (`home_slot.not_done_before`: "plans to move from …", 打算从…搬到…), no
    habit in its clause (`_HABIT`: "every month", 每天)."""
    text = match.string
    after = CLAUSE_EDGE.search(text, match.end())
    clause = text[clause_start(text, match.start()):after.start() if after else len(text)]
    return not not_done_before(text, match.start()) and not _HABIT.search(clause)


def change_matches(text: str) -> list[re.Match[str]]:
    """The changes made once that `text` tells of (`done_change`)."""
    return [m for pattern in (EN_FROM_TO, EN_FROM_AFTER_HERE, ZH_FROM) for m in pattern.finditer(text)
            if done_change(m)]


def left_places(text: str) -> frozenset[str]:
    """The places the user's own change of home (`home_slot.moved_here`) says they left ("moved from Halifax to
    Moncton", 从长沙搬到厦门): what named them as where the user is ends."""
    if not moved_here(text):
        return frozenset()
    return frozenset(m.group("old") for m in change_matches(text) if not _someone_elses(text[:m.start()]))


_WITH_THE_USER = re.compile(r"\b(?:I|we|User(?!['’]s| said)|and I)\b|我", re.IGNORECASE)


def _someone_elses(before: str) -> bool:
    """Whether the words before a move say it is a relative's ("my sister moved …"), not the user's with
    them ("my husband and I moved …", "我和老公从…搬到…")."""
    said = VERBATIM_FRAME.sub("", before)
    return "family" in cue_domains(said) and not _WITH_THE_USER.search(said)


def ended_keys(text: str) -> frozenset[str]:
    """The words of what `text` says has ended (an activity dropped, a partner left, a place moved away
    from), as `terms` reads them."""
    ended = ended_activities(text) | ended_partners(text) | left_places(text)
    return frozenset(t for word in ended for t in terms(word))
