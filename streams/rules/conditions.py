"""A health condition the user lives with is a constraint on what suits them, not a passing fact.

Mechanism (condition as constraint): a note about the user ("User has got type 2 diabetes", "用户自己有高血压",
"用户乳糖不耐", "User has a bad knee") that names a lasting condition - a chronic illness, an intolerance, a
pregnancy, a joint or back that does not work well - is kept as a `user_constraint`: advice about food,
exercise or travel must respect it. A note about someone else ("User's mum has diabetes", "用户的老伴有糖尿病")
stays a fact about that person.
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


def as_constraint(draft: Draft) -> Draft:
    """The draft as a `user_constraint` when it is a plain fact about a condition the user lives with."""
    if draft.type is not T.USER_FACT or draft.attribute or not _ABOUT_USER.match(draft.content) \
            or not _CONDITION.search(draft.content):
        return draft
    return Draft(T.USER_CONSTRAINT, draft.content, draft.confidence, None, draft.topic, draft.negated,
                 draft.entities, draft.keywords)
