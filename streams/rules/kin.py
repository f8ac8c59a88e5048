"""The people and pets around the user, by name: "our spaniel Pepper", "Pepper, our spaniel", "我家柴犬豆包".

A profile needs who is who: a plan for the family needs the children's names, a week away needs the dog
looked after. Such a name is often said in passing inside a sentence about the moment ("我家柴犬豆包今天
又拆家了"), which the statement rules leave as momentary; the relation itself lasts. Here each
"my/our <relation> <Name>" or "<Name>, my/our <relation>" (in Chinese "我(家|的)<relation><name>") gives
one note, "User's spaniel is called Pepper" / "用户家的柴犬叫豆包", unless the turn's notes already
hold the name. Only the relation words decide (people and common pets); nothing about a particular turn.
"""

from __future__ import annotations

import re

from engram.core.text import terms
from engram.schemas.memory import MemoryType as T

from .common import Draft

KIN_CONFIDENCE = 0.6
MAX_KIN_NOTES = 3

_RELATIONS_EN = (
    "daughter|son|wife|husband|partner|boyfriend|girlfriend|fiancée?|mom|mum|dad|mother|father|sister|brother|"
    "grandma|grandpa|grandmother|grandfather|cat|dog|puppy|kitten|rabbit|bunny|parrot|hamster|beagle|corgi|"
    "retriever|labrador|lab|poodle|terrier|greyhound|spaniel|husky|dachshund|collie|pug|tabby")
_RELATIONS_ZH = (
    "儿子|女儿|老婆|老公|妻子|丈夫|对象|男朋友|女朋友|妈妈|爸爸|哥哥|姐姐|弟弟|妹妹|外婆|外公|奶奶|爷爷|姥姥|姥爷|"
    "宝宝|猫咪|小猫|小狗|狗狗|猫|狗|柯基|金毛|泰迪|柴犬|哈士奇|边牧|拉布拉多|布偶|英短|美短|橘猫|兔子|鹦鹉|仓鼠")
_NAME_EN = r"[A-Z][a-z]+"
_EN_AFTER = re.compile(rf"\b(?:my|our) (?P<rel>{_RELATIONS_EN}),? (?P<name>{_NAME_EN})\b")
_EN_BEFORE = re.compile(rf"(?:^|[.!?]\s+|\s)(?P<name>{_NAME_EN}), (?:my|our) (?P<rel>{_RELATIONS_EN})\b")
_ZH = re.compile(rf"我(?:家|的|们家)?(?P<rel>{_RELATIONS_ZH})\s?(?P<name>[A-Z][a-z]+|[\u4e00-\u9fff]{{2}})"
                 r"(?=今|又|才|已|刚|最|也|都|在|很|太|是|特|这|那|每|总|还|,|，|。|!|！|\s|$)")
_NOT_NAMES = frozenset({"今天", "今年", "现在", "已经", "最近", "特别", "一直", "每天", "还是", "就是", "真的", "好像",
                        "The", "And", "But", "Is", "Was", "Has", "Had", "Who", "That", "This"})


def kin_notes(text: str, drafts: list[Draft]) -> list[Draft]:
    """A note per person or pet the turn names with their relation to the user, unless a note holds the name."""
    known = {t for d in drafts for t in terms(d.content)}
    out: list[Draft] = []
    for relation, name, chinese in _named_relations(text):
        if name in _NOT_NAMES or set(terms(name)) <= known:
            continue
        known |= set(terms(name))
        content = f"用户家的{relation}叫{name}" if chinese else f"User's {relation.lower()} is called {name}"
        out.append(Draft(T.USER_FACT, content, KIN_CONFIDENCE, None, None, False, (name,)))
        if len(out) >= MAX_KIN_NOTES:
            break
    return out


def _named_relations(text: str) -> list[tuple[str, str, bool]]:
    found = [(m.group("rel"), m.group("name"), False) for m in _EN_AFTER.finditer(text)]
    found += [(m.group("rel"), m.group("name"), False) for m in _EN_BEFORE.finditer(text)]
    found += [(m.group("rel"), m.group("name"), True) for m in _ZH.finditer(text)]
    return found
