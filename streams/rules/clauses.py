"""Clause-level repairs that keep every fact of a long turn.

Mechanisms:

- verb-first clause: in a list of facts about the user, a clause that opens
  with a bare verb and a possessive ("water my plants every evening", "run our
  family shop") or with a plan verb ("… and hope to switch to teaching")
  has dropped its "I"; the subject is put back. Words that open
  clauses without being verbs (prepositions, conjunctions, adverbs) never count.
- telegraphic self-description: after the user has started describing
  themselves ("Name's Henrik, 47, early-shift baker from Ghent, big fan
  of chess"), a verbless noun phrase is read with the user as subject: a role ending in a known job word
  ("I'm an early-shift baker from Ghent"), a fandom ("I'm a big fan of
  chess"), or what they have ("I have two grown kids"); in Chinese a place
  clause about the user's own company, school or home ("公司在无锡") is the user's.
- self-description heading: "About me:", "Quick bio -", "说一下我的情况：" make
  the user the subject of the clauses that follow, so a list of bare phrases
  after it is read as the user's.
- dangling opinion: "I think it's overrated" names nothing to remember.
- vent: a sentence opened by a groan ("Ugh, …") tells passing mishaps, so its
  events are context, not notes (its stative facts are still read).
- learning how (Chinese): "想学怎么…" is a goal whose 怎么 is part of the object,
  not a question.
- telegraphic self-description (Chinese): after the user began describing
  themselves, a bare "女", "湖南人", "程序员", "90后" is theirs.
- employer by kind (Chinese): "在西安一家物流公司做会计" is the city, the
  employer and the role, three notes.
- emphatic 是 (Chinese): "我是在合肥工作的" says where the user works, like "我在合肥工作", and
  "我是真的爱下围棋" is a liking like "我真的爱下围棋".
- repetition for emphasis ("really, really", "loathe, loathe, LOATHE") is one word,
  and a Chinese "still" (还是, 依然) before a fact is dropped, so a repeated
  fact is recognised as the same one.
- reminder frame: a statement wrapped in a reminder ("Just a reminder that I
  still dislike mushrooms", "As I said, I'm vegan", "再说一遍，我吃素") is the
  statement itself, so it reinforces the memory it repeats instead of being
  lost in the wrapper.
"""

from __future__ import annotations

import re

from engram.schemas.memory import MemoryType as T

from .common import Draft, entities_in, topic_of, zh_object
from .en import _JOBS

_I = re.IGNORECASE
_VERB_FIRST = re.compile(r"^(?P<v>[a-z]{3,})\s+(?:my|our)\s+\w|^(?P<plan>want|plan|hope|need|intend|aim|would like|would love)"
                         r"\s+to\s+\w", _I)
_NOT_VERB = frozenset(
    """about above across after against along among around at before behind below beside between beyond but by
    despite down during except for from inside into like near off onto out outside over past since than through
    throughout till toward towards under until upon with within without and also then just only even still
    plus both all including especially mostly mainly not never always sometimes usually often because though
    although while whereas unless once where when what which who whose how why thanks thank tell ask see
    love miss hope wish""".split()
)
_EN_REMINDER = re.compile(
    r"(?:^|(?<=[.!?]\s)|(?<=,\s))(?:(?:just|again|once again|quick|friendly)\s+)*(?:a\s+)?(?:(?:friendly|quick)\s+)?"
    r"(?:reminder|remember|recall|note)(?:\s*[:,-]\s*|\s+that\s+|\s+(?=i(?:'m)?\b))"
    r"|(?:^|(?<=[.!?]\s))(?:(?:just|and|please)\s+)?(?:(?:don't|do not|never) forget|remember)(?:\s*[:,-]\s*|\s+that\s+|\s+(?=i(?:'m)?\b))"
    r"|(?:^|(?<=[.!?]\s))(?:as|like)\s+i\s+(?:said|mentioned|told you|wrote)(?:\s+(?:before|earlier|last time|already))?\s*[,:]?\s*"
    r"|(?:^|(?<=[.!?]\s))i\s+(?:already\s+)?(?:told you|said|mentioned)(?:\s+(?:before|earlier|last time))?\s*(?:[,:]\s*|\s+that\s+)"
    r"|(?:^|(?<=[.!?]\s))(?:and\s+)?(?:once\s+)?again\s*,\s*",
    _I,
)
_MAY_REMIND = re.compile(r"remind|rememb|recall|note|said|mentioned|told|wrote|again|forget|说|强调|提醒", _I)
_ZH_REMINDER = re.compile(r"(?:^|(?<=[。！？]))(?:再说一遍|再说一次|再强调一下|再强调一遍|再提醒一下|提醒一下|我说过了?|之前说过了?|跟你说过了?|我之前说过)[,，:：]?\s*")


def verb_first(clause: str) -> str | None:
    """ "water my plants every evening" -> "I water my plants every evening"; None when it does not open with a verb."""
    m = _VERB_FIRST.match(clause)
    if m is None or m.group("v") and m.group("v").lower() in _NOT_VERB:
        return None
    return "I " + clause[:1].lower() + clause[1:]


_REPEATED_WORD = re.compile(r"\b(?P<w>[A-Za-z']+)(?:\s*,\s*(?P=w)\b)+", _I)
_ZH_STILL = re.compile(r"^(?P<s>我们|我)?(?:还是|依然|仍然|照样|依旧)(?=[\u4e00-\u9fff]{2})")


def collapse_repeats(text: str) -> str:
    """ "I really, really can't stand…", "loathe, loathe, LOATHE" -> one word, so the clause is not cut at its commas."""
    parts = text.lower().split(",")
    if not any(_last_word(a) and _last_word(a) == _first_word(b) for a, b in zip(parts, parts[1:])):
        return text  # the common case, without a regex scan
    return _REPEATED_WORD.sub(lambda m: m.group("w"), text)


def _last_word(text: str) -> str:
    words = text.split()
    return words[-1] if words else ""


def _first_word(text: str) -> str:
    words = text.split()
    return words[0] if words else ""


_ZH_EMPHATIC_SHI = re.compile(r"^(?P<adv>现在|目前|一直)?是(?=在[^,，。]{1,12}?(?:工作|上班|住|生活|读书|上学|定居|实习)(?:的)?$"
                              r"|(?:真的|真心|确实|的确)(?:很|挺|非常|特别)?(?:喜欢|爱|讨厌|怕|不喜欢|不能|不吃|不喝))")


def zh_emphatic_shi(body: str) -> str:
    """ "是在合肥工作(的)" -> "在合肥工作", "是真的喜欢…" -> "真的喜欢…": emphatic 是 says what the plain clause says."""
    body = _ZH_EMPHATIC_SHI.sub(lambda m: m.group("adv") or "", body)
    return body[:-1] if body.endswith("工作的") or body.endswith("上班的") or body.endswith("住的") else body


def zh_without_still(body: str) -> str:
    """ "还是每周游泳" -> "每周游泳": "still" repeats a fact, it does not change it."""
    return _ZH_STILL.sub(lambda m: m.group("s") or "", body)


def restated(text: str) -> list[str]:
    """The clauses a reminder frame wraps ("reminder I can't have shellfish", "again, Celsius please", "再强调一遍，
    我吃素的"): what the user says again, each up to the end of its clause."""
    if not _MAY_REMIND.search(text):
        return []
    out = []
    for m in [*_EN_REMINDER.finditer(text), *_ZH_REMINDER.finditer(text)]:
        clause = _FINAL_PARTICLES.sub("", _CLAUSE_END.split(_PARTICLES.sub("", text[m.end():]), 1)[0].strip())
        if clause:
            out.append(clause)
    return out


_PARTICLES = re.compile(r"^[哈啊呀哦嗯啦喔]+[,，\s]*")
_FINAL_PARTICLES = re.compile(r"(?<=[\u4e00-\u9fff])[哈啊呀哦嗯啦喔]+$")
_CLAUSE_END = re.compile(r"[,;.!?，；。！？]|\s+so\s+")


def unwrap_reminders(text: str) -> str:
    """The turn with reminder frames taken off the statements they wrap."""
    if not _MAY_REMIND.search(text) or not _EN_REMINDER.search(text) and not _ZH_REMINDER.search(text):
        return text
    text = _ZH_REMINDER.sub("", _EN_REMINDER.sub("", text))
    return text[:1].upper() + text[1:] if text[:1] == "i" else text


_EN_ROLE_PHRASE = re.compile(rf"^(?:(?:a|an)\s+)?(?P<p>(?:[\w-]+\s+){{0,3}}{_JOBS}s?(?:\s+(?:from|in|at|for|with)\s+\S.*)?)$", _I)
_EN_FAN_PHRASE = re.compile(r"^(?:(?:a|an)\s+)?(?:big|huge|massive|lifelong|die-hard)\s+fan\s+of\s+\S.*$", _I)
_EN_OWNED = re.compile(r"^(?:one|two|three|four|five|six|\d)\s+(?:[\w-]+\s+)?(?:cats?|dogs?|kids|children|sons?|daughters?|"
                       r"grandchildren|grandkids|pets?|horses?|rabbits?)\b.*$", _I)


_EN_NOUN_PHRASE = re.compile(r"^(?:(?:a|an)\s+)?[a-z][a-z-]+(?:\s+[a-z][a-z-]+){0,3}$")
_NOT_IN_NOUN_PHRASE = frozenset(
    """i me my we our you your he she they them his her their it its this that these those is are was were be been
    am have has had do does did will would can could should may might must not no never very pretty so too quite
    really just also still of to in on at for with from by about into over than then and or but if as lots lot
    bit much many more most less some any all thanks thank please yes yeah okay ok sure well hi hello hey""".split()
)


_EN_CONDITION = re.compile(
    r"^(?:(?:type\s*(?:1|2|one|two|i|ii)|mildly|slightly|severely|very|pretty|quite|strictly|mostly|fully)\s+)?"
    r"(?:diabetic|vegan|vegetarian|pescatarian|celiac|coeliac|lactose[- ]intolerant|gluten[- ]free|asthmatic|epileptic|"
    r"colou?r[- ]?blind|deaf|hard of hearing|pregnant|sober|teetotal|left[- ]handed|halal|kosher|"
    r"allergic to\s+\S.*|intolerant to\s+\S.*|(?:a\s+)?(?:non-?)?smoker)$", _I)
"""A condition named on its own in a self-description ("61 years old, epileptic, …")."""


_EN_ORIGIN = re.compile(r"^(?:originally\s+)?from\s+(?-i:[A-Z])[\w .'-]*$", _I)


def telegraphic(clause: str, heading: bool = False) -> str | None:
    """A verbless noun phrase in a self-description, given back its "I" ("baker from Ghent" -> "I'm a …").

    After a self-description heading (or the user's name) any short noun phrase counts ("museum curator");
    otherwise only a phrase ending in a known job word does.
    """
    text = clause.strip()
    if _EN_CONDITION.match(text):
        return f"I'm {text[:1].lower() + text[1:]}"
    if _EN_ORIGIN.match(text):
        return f"I'm {text}"
    if _EN_OWNED.match(text):
        return f"I have {text}"
    if _EN_ROLE_PHRASE.match(text) or _EN_FAN_PHRASE.match(text) or heading and _noun_phrase(text):
        body = re.sub(r"^(?:a|an)\s+", "", text, flags=_I)
        article = "an" if body[:1].lower() in "aeiou" else "a"
        return f"I'm {article} {body}"
    return None


def _noun_phrase(text: str) -> bool:
    words = text.lower().split()
    if len(words) == 1 and words[0].endswith(("ed", "ly", "ing")):
        return False  # an adjective or adverb on its own ("divorced") is no thing the user is
    return _EN_NOUN_PHRASE.match(text) is not None and not any(w in _NOT_IN_NOUN_PHRASE for w in words[1:] + words[:1]
                                                                if w not in ("a", "an"))


_ZH_POSSESSED_PLACE = re.compile(r"^(?P<k>公司|单位|学校|工作地点|办公室|老家|家|店|工厂|实验室)(?:就|也|目前|现在)?(?:在|位于)(?P<v>[^,，。]{2,10})$")


def zh_possessed_place(body: str) -> str | None:
    """ "公司在无锡" said in a turn about the user -> "用户的公司在无锡"."""
    m = _ZH_POSSESSED_PLACE.match(body)
    return f"用户的{body}" if m else None


_EN_SELF_INTRO = re.compile(
    r"^(?:(?:a\s+(?:bit|little)|some\s+(?:context|background))\s+about\s+me|about\s+me|(?:quick\s+|short\s+|brief\s+)?"
    r"(?:intro|introduction|bio|background|context)(?:\s+(?:on|about)\s+me)?|me\s+in\s+(?:a\s+nutshell|brief)|me)"
    r"(?:\s+(?:so|first|before|for|to)\b[\w\s']{0,40})?$", _I)
"""A heading may say what it is for ("Context first so the advice fits:")."""
_ZH_SELF_INTRO = re.compile(r"(?:自我介绍|介绍(?:一)?下(?:我|自己)|说下我的情况|说一下我的情况|我的(?:基本)?情况|关于我|我的背景)")
_EN_DANGLING_OPINION = re.compile(
    r"^(?:i|user)\s+(?:think|thinks|guess|guesses|feel|feels|believe|believes|suppose|supposes|reckon|reckons|find|finds)"
    r"\s+(?:that\s+)?(?:it|this|that|they|these|those)(?:'s|'re|\s+is|\s+was|\s+are|\s+were|\s+looks?|\s+seems?)\b", _I)


def is_self_intro(clause: str) -> bool:
    """A heading that opens a description of the user ("About me:", "Quick bio", "说一下我的情况")."""
    return _EN_SELF_INTRO.match(clause.strip()) is not None or _ZH_SELF_INTRO.search(clause) is not None


def is_dangling_opinion(clause: str) -> bool:
    """ "I think it's overrated": an opinion about something the clause does not name is nothing to remember."""
    return _EN_DANGLING_OPINION.match(clause.strip()) is not None


_EN_VENT = re.compile(r"^(?:ugh+|argh+|sigh|ffs|gah+|urgh+|oh man|man|jeez|geez|oh no|great|what a day)\b[,!.]?\s*", _I)
_ZH_LEARN_HOW = re.compile(r"(?:想学|在学|要学|学会|学习|想了解|研究)(?:一下)?(?:怎么|如何)")


def is_vent(sentence: str) -> bool:
    """A sentence opened by a groan ("Ugh, the kettle broke and I burnt the toast"): its mishaps are passing."""
    return _EN_VENT.match(sentence.strip()) is not None


def learns_how(body: str) -> bool:
    """ "想学怎么用Excel做预算": the 怎么 belongs to what is learnt, so the clause is a goal, not a question."""
    return _ZH_LEARN_HOW.search(body) is not None


ZH_EMPLOYER_KIND = re.compile(r"^(?:现在|目前)?在(?P<p>[\u4e00-\u9fffA-Za-z]{2,8}?)(?:的)?(?:一家|一个|家)(?P<org>[^,，。]{0,8}?"
                              r"(?:公司|工作室|企业|学校|银行|机构|外企|国企|事务所|餐厅|院|所|中心|厂|店|馆|社|台))"
                              r"(?:做|当|担任|上班|工作)(?P<v>[^,，。]{0,10})$")
"""An employer described by its kind ("在西安一家物流公司做会计"): the city, the employer and the role."""


def zh_employer_kind(m: re.Match[str]) -> tuple[Draft, ...]:
    place, org, role = m.group("p"), m.group("org"), zh_object(m.group("v")).removesuffix("的")
    out = [Draft(T.USER_FACT, f"用户在{place}工作", 0.8, "location", None, False, (place,)),
           Draft(T.USER_FACT, f"用户在{place}的一家{org}工作", 0.75, None, topic_of(org), False, entities_in(org))]
    if role:
        out.append(Draft(T.USER_PROFILE, f"用户是{role}", 0.8, "occupation", topic_of(role), False, entities_in(role)))
    return tuple(out)


_ZH_GENDER = re.compile(r"^(?:女|男|女生|男生|女的|男的)$")
_ZH_ORIGIN = re.compile(r"^(?:来自)?(?P<v>[\u4e00-\u9fff]{2,3})人$")
_ZH_NOT_ORIGIN = re.compile(r"^(?:很多|好多|一个|年轻|老实|家里|别|有|大|男|女|工|成年|老年|个|退休)|工$")
_ZH_COHORT = re.compile(r"^(?P<v>[5-9]0|00|10)后$")


def zh_telegraphic(body: str, job: re.Pattern[str]) -> Draft | None:
    """Mechanism (telegraphic self-description, Chinese): in a turn where the user describes themselves, a bare
    "女", "湖南人", "程序员" or "90后" is the user's gender, origin, occupation or generation."""
    if _ZH_GENDER.match(body):
        return Draft(T.USER_PROFILE, f"用户是{body.removesuffix('的').removesuffix('生')}性", 0.8, "gender")
    role = job.match(body)
    if role:
        return Draft(T.USER_PROFILE, f"用户是{role.group('v')}", 0.8, "occupation", topic_of(role.group("v")), False,
                     entities_in(role.group("v")))
    origin = _ZH_ORIGIN.match(body)
    if origin and not _ZH_NOT_ORIGIN.match(origin.group("v")):
        return Draft(T.USER_FACT, f"用户来自{origin.group('v')}", 0.75, "hometown", None, False, (origin.group("v"),))
    if _ZH_COHORT.match(body):
        return Draft(T.USER_PROFILE, f"用户是{body}", 0.75, None, None, False)
    return None
