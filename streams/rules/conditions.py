"""A health condition the user lives with is a constraint on what suits them, not a passing fact.

Mechanism (condition as constraint): a note about the user ("User has got coeliac disease", "用户自己有哮喘",
"用户乳糖不耐", "User has a bad knee") that names a lasting condition - a chronic illness, an intolerance, a
pregnancy, a joint or back that does not work well - is kept as a `user_constraint`: advice about food,
exercise or travel must respect it. A note about someone else ("User's mum has diabetes", "用户的老伴有糖尿病")
stays a fact about that person.

Mechanism (topic frame): a condition named as the subject of work or talk ("a thesis on chronic fatigue",
"researching asthma", "一篇关于糖尿病的论文", "研究痛风") is what the user works on, not what they live with: a
note whose every condition sits in such a frame stays a fact.
"""

from __future__ import annotations

import re

from engram.schemas.memory import MemoryType as T

from .common import Draft

_CONDITION = re.compile(
    r"\b(?:(?:type\s*[12]\s+)?diabet(?:es|ic)|asthma(?:tic)?|arthritis|coeliac|celiac|ibs|crohn'?s|migraines?|epilep(?:sy|tic)|"
    r"hypertension|high blood pressure|gout|pregnant|pregnancy|intoleran(?:t|ce)|bad (?:knee|back|hip|shoulder)s?|"
    r"(?:knee|back|hip) (?:injury|problems?|pain)|chronic \w+)\b"
    r"|糖尿病|高血压|高血脂|哮喘|痛风|关节炎|胃病|胃溃疡|偏头痛|癫痫|不耐|怀孕|孕期|腰不好|腰椎|颈椎|膝盖不好|膝盖有伤", re.IGNORECASE)
_ABOUT_USER = re.compile(r"^(?:User(?!'s\s+(?!knee|back|hip|shoulder)\w)(?!\s+(?:said|mentioned):)|用户(?!的|说：|提到))")
"""The note is about the user: not "User's mum …" (but "User's knee …" is the user's own)."""


_EN_TOPIC_FRAME = re.compile(
    r"(?:\b(?:paper|thesis|essay|article|talk|lecture|book|study|studies|report|dissertation|presentation|course|"
    r"class|podcast|documentary|project|review|chapter|seminar|workshop|piece|blog post|research)\s+"
    r"(?:on|about|into|regarding|of)"
    r"|\b(?:research(?:es|ed|ing)?|study(?:ing)?|studies|writing about|reading(?: up)? (?:about|on)|talking about|"
    r"learning about|lecturing on|teaching about|specialis(?:e|es|ed|ing) in|specializ(?:e|es|ed|ing) in))"
    r"\s+(?:[\w'-]+\s+){0,2}$", re.IGNORECASE)
_ZH_TOPIC_BEFORE = re.compile(r"(?:关于|有关|研究|调研|专攻)[^,，。；;]{0,8}$")
_ZH_TOPIC_AFTER = re.compile(r"^[^,，。；;]{0,4}?的?(?:论文|综述|文章|报告|课题|研究|讲座|项目|书|课程)")


def _talked_about(content: str, m: re.Match[str]) -> bool:
    """The condition is the topic of the user's work or talk, not one of theirs."""
    before, after = content[:m.start()], content[m.end():]
    return bool(_EN_TOPIC_FRAME.search(before) or _ZH_TOPIC_BEFORE.search(before) or _ZH_TOPIC_AFTER.match(after))


def as_constraint(draft: Draft) -> Draft:
    """The draft as a `user_constraint` when it is a plain fact about a condition the user lives with."""
    if draft.type is not T.USER_FACT or draft.attribute or not _ABOUT_USER.match(draft.content) \
            or all(_talked_about(draft.content, m) for m in _CONDITION.finditer(draft.content)):
        return draft
    return Draft(T.USER_CONSTRAINT, draft.content, draft.confidence, None, draft.topic, draft.negated,
                 draft.entities, draft.keywords)
