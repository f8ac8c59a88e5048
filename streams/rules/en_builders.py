"""English rule builders: what a matched clause becomes (the patterns are in `en`, the turn reading in `en_turn`).

Each builder takes the match of one pattern of `en._RULES` and returns a draft, or None when the matched
value turns out not to be one (an object that is a pronoun, a one-off request).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from engram.schemas.memory import MemoryType as T

from .common import Draft, en_object, entities_in, topic_of
from .person import third_person

_I = re.IGNORECASE
_NOT_OBJECT = re.compile(
    r"^(?:it|that|this|those|these|how|when|what|where|the way|you|your|him|her|them|us|seeing|being)\b", _I
)
_ONE_OFF = re.compile(
    r"^(?:know|ask|see|check|say|tell|thank|confirm|clarify|make sure|get back|share|show|talk|chat|"
    r"hear|let you know|go|leave|run|sleep|head|be honest|help|understand|try (?:it|that|this)|"
    r"do (?:it|that|this)|wait|believe|imagine|admit|confess|stop|point out|mention|add)\b",
    _I,
)

Builder = Callable[[re.Match[str]], Draft | None]


def _name(m: re.Match[str]) -> Draft | None:
    name = m.group("v")
    if name.split()[0].lower() in _NOT_NAMES:
        return None
    return Draft(T.USER_PROFILE, f"User's name is {name}", 0.9, "name", None, False, (name,))


def _age(m: re.Match[str]) -> Draft:
    return Draft(T.USER_PROFILE, f"User is {m.group('v')} years old", 0.85, "age")


def _role_for(m: re.Match[str]) -> Draft:
    """ "I've been a welder for 12 years": the occupation, with how long it has lasted."""
    job = en_object(m.group("v"))
    content = f"User has been {m.group('art').lower()} {job} for {m.group('d')}"
    return Draft(T.USER_PROFILE, content, 0.9, "occupation", topic_of(job), False, entities_in(job))


def _occupation(m: re.Match[str]) -> Draft:
    job = en_object(m.group("v"))
    job = job if m.group("art") else job[:1].lower() + job[1:]
    article = m.group("art").lower() or ("an" if job[:1].lower() in "aeiou" else "a")  # "Retired nurse here"
    content = f"User is {article} {job}"
    return Draft(T.USER_PROFILE, content, 0.9, "occupation", topic_of(job), False, entities_in(job))


_NOT_NAMES = frozenset(
    """american british canadian chinese indian german french japanese korean spanish italian mexican
    australian russian brazilian dutch irish scottish english welsh swiss swedish polish turkish muslim
    nobody somebody someone anyone everyone everybody nothing all nowhere christian jewish catholic buddhist hindu vegan vegetarian sorry fine good ok okay here back done ready sure
    not so just also still happy glad excited tired busy free hungry new from in at on into currently
    really very always never""".split()
)
_LANGUAGES = (
    r"(?:English|Chinese|Mandarin|Cantonese|Spanish|French|German|Japanese|Korean|Portuguese|Italian|Russian|"
    r"Arabic|Hindi|Dutch|Swedish|Polish|Turkish|Vietnamese|Thai|Indonesian|中文|英文|英语|普通话|粤语|日语|韩语)"
)
_LANGUAGE_PREF = re.compile(
    rf"\b(?:in|using)\s+(?P<lang>{_LANGUAGES})\b|(?:用|说)(?P<zh>{_LANGUAGES})", _I
)


def _language_of(text: str) -> str | None:
    """The language a preference is about ("answers in Spanish" -> "spanish"), if any."""
    m = _LANGUAGE_PREF.search(text)
    return (m.group("lang") or m.group("zh")).lower() if m else None


def _company_name(value: str) -> str:
    called = re.search(r"\b(?:called|named)\s+(?P<n>.+)$", value, _I)
    return en_object(called.group("n")) if called else value


def _joined(m: re.Match[str]) -> Draft | None:
    org = _company_name(_place(m.group("v")))
    if not org or _NOT_OBJECT.match(org):
        return None
    return Draft(T.USER_PROFILE, f"User works at {org}", 0.85, "company", None, False, entities_in(org) or (org,))


def _left(m: re.Match[str]) -> Draft | None:
    org = _place(m.group("v"))
    if not org or not org[0].isupper():
        return None
    return Draft(T.USER_PROFILE, f"User no longer works at {org}", 0.8, "company", topic_of(org), True,
                 entities_in(org))


def _teaches(m: re.Match[str]) -> Draft | None:
    what = _place(m.group("v"))
    return Draft(T.USER_PROFILE, f"User teaches {what}", 0.85, "occupation", topic_of(what), False,
                 entities_in(what)) if what else None


def _shift(m: re.Match[str]) -> Draft:
    when = (m.group("v") or m.group("v2")).lower().rstrip("s")
    return Draft(T.USER_FACT, f"User works {when} shifts", 0.85, "schedule", "shift", False)


def _skill(m: re.Match[str]) -> Draft | None:
    what = en_object(m.group("v"))
    if not what or _NOT_OBJECT.match(what) or len(what.split()) > 8:
        return None
    verb = m.group("verb").lower()
    if verb == "speak":
        return Draft(T.USER_PROFILE, f"User speaks {what}", 0.85, "language", topic_of(what), False, entities_in(what))
    return Draft(T.USER_FACT, third_person(m.group(0)), 0.75, None, topic_of(what), False, entities_in(what))


def _their_favorite(m: re.Match[str]) -> Draft | None:
    obj = en_object(m.group("v"))
    if not obj or _NOT_OBJECT.match(obj):
        return None
    content = f"User's favorite {en_object(m.group('k')).lower()} is {obj}"
    return Draft(T.USER_PREFERENCE, content, 0.85, None, topic_of(obj), False, entities_in(obj))


def _works_in(m: re.Match[str]) -> Draft | None:
    place = _place(m.group("v"))
    if not place:
        return None
    verb, entities = m.group("prep").lower(), entities_in(place)
    if verb == "in" and not entities:
        return Draft(T.USER_PROFILE, f"User works in {place}", 0.8, "occupation", topic_of(place))
    if verb == "in":
        return Draft(T.USER_FACT, f"User works in {place}", 0.8, "location", None, False, entities)
    if not entities and not re.match(r"(?:a|an|the)\s+(?!home\b)\w", place, _I):
        return None
    return Draft(T.USER_PROFILE, f"User works at {place}", 0.85, "company", None, False, entities)


_PLACE_END = re.compile(
    r"\s+(?:with|for|since|because|and|but|now|right now|these days|at the moment|last|this|next|"
    r"a few|two|three|several|recently|lately|already|by the way|btw|lol)\b.*$", _I)


def _place(value: str) -> str:
    return en_object(_PLACE_END.sub("", value))


def _location(m: re.Match[str]) -> Draft | None:
    place = _place(m.group("v"))
    if not place or _NOT_OBJECT.match(place):
        return None
    verb = "moved to" if m.group("verb").lower().endswith(("moved", "relocated")) else "lives in"
    return Draft(T.USER_FACT, f"User {verb} {place}", 0.85, "location", None, False, entities_in(place) or (place,))


def _hometown(m: re.Match[str]) -> Draft | None:
    place = _place(m.group("v") or m.group("v2"))
    if not place or _NOT_OBJECT.match(place):
        return None
    return Draft(T.USER_FACT, f"User is from {place}", 0.85, "hometown", None, False, entities_in(place) or (place,))


_SIMPLE_VERB = {"like": "likes", "love": "loves", "enjoy": "enjoys", "prefer": "prefers", "adore": "adores"}


def _like(m: re.Match[str]) -> Draft | None:
    obj = en_object(m.group("v"))
    if not obj or _NOT_OBJECT.match(obj) or len(obj.split()) > 6:
        return None
    obj = re.sub(r"\bmy\b", "their", obj, flags=_I)  # the note is in the third person: "loves their job"
    verb = m.group("verb").lower()
    said = _SIMPLE_VERB.get(verb) or f"is {verb}"
    topic = topic_of(re.split(r"\s+(?:over|to|than|rather than|instead of)\s+", obj, maxsplit=1, flags=_I)[0])
    language = _language_of(obj)
    attribute = "language" if language else None
    return Draft(T.USER_PREFERENCE, f"User {said} {obj}", 0.85, attribute, language or topic, False, entities_in(obj))


def _used_to(m: re.Match[str]) -> Draft | None:
    """A liking said to be in the past ("I used to love coffee") is no longer current."""
    obj = en_object(m.group("v"))
    if not obj or _NOT_OBJECT.match(obj):
        return None
    content = f"User used to {m.group('verb').lower()} {obj}"
    return Draft(T.USER_PREFERENCE, content, 0.8, None, topic_of(obj), True, entities_in(obj))


def _switched(m: re.Match[str]) -> Draft | None:
    obj = _place(m.group("v"))
    if not obj or _NOT_OBJECT.match(obj):
        return None
    return Draft(T.USER_PREFERENCE, f"User switched to {obj}", 0.8, None, topic_of(obj), False, entities_in(obj))


def _favorite(m: re.Match[str]) -> Draft | None:
    obj = en_object(m.group("v"))
    if not obj:
        return None
    content = f"User's favorite {m.group('k').lower()} is {obj}"
    return Draft(T.USER_PREFERENCE, content, 0.85, None, topic_of(obj), False, entities_in(obj))


_NEG_FORM = {"eat": "eat", "drink": "drink", "use": "use", "stand": "stand", "care for": "care for"}


def _dislike(m: re.Match[str]) -> Draft | None:
    raw = m.group("v")
    obj = en_object(raw)
    if not obj or _NOT_OBJECT.match(obj) or len(obj.split()) > 6:
        return None
    neg, verb = m.group("neg").lower(), (m.group("verb") or "like").lower()
    if neg == "quit":
        return Draft(T.USER_PREFERENCE, f"User quit {obj}", 0.85, None, topic_of(obj), True, entities_in(obj))
    no_longer = neg in ("no longer", "stopped") or re.search(r"\b(?:anymore|any more)\b", raw, _I)
    if verb in ("hate", "dislike", "detest"):
        content = f"User {verb}s {obj}"
    elif verb == "can't stand":
        content = f"User can't stand {obj}"
    elif no_longer:
        content = f"User no longer {_SIMPLE_VERB.get(verb, verb + 's')} {obj}"
    else:
        content = f"User doesn't {_NEG_FORM.get(verb, verb)} {obj}"
    return Draft(T.USER_PREFERENCE, content, 0.85, None, topic_of(obj), True, entities_in(obj))


def _not_fan(m: re.Match[str]) -> Draft | None:
    obj = en_object(m.group("v"))
    if not obj or _NOT_OBJECT.match(obj):
        return None
    return Draft(T.USER_PREFERENCE, f"User is not into {obj}", 0.8, None, topic_of(obj), True, entities_in(obj))


def _allergy(m: re.Match[str]) -> Draft | None:
    obj = en_object(m.group("v"))
    return Draft(T.USER_CONSTRAINT, f"User is allergic to {obj}", 0.9, None, topic_of(obj), True, entities_in(obj))


_DIETS = frozenset({"vegan", "vegetarian", "pescatarian", "keto", "halal", "kosher"})


def _diet(m: re.Match[str]) -> Draft:
    diet = m.group("v").lower()
    attribute = "diet" if diet in _DIETS else None
    return Draft(T.USER_CONSTRAINT, f"User is {diet}", 0.85, attribute, "diet" if attribute else diet, False)


def _fear(m: re.Match[str]) -> Draft | None:
    """ "I'm scared of horses": something to spare the user, a negative preference like "怕马"."""
    obj = en_object(m.group("v"))
    if len(obj) < 3:
        return None
    return Draft(T.USER_PREFERENCE, third_person(m.group(0)), 0.8, None, topic_of(obj), True, entities_in(obj))


def _main_goal(m: re.Match[str]) -> Draft | None:
    obj = en_object(m.group("v"))
    if len(obj) < 3:
        return None
    when = (m.groupdict().get("when") or "").strip()
    content = f"User's goal {when} is {obj}" if when else f"User's goal is {obj}"  # time kept with the goal
    return Draft(T.USER_GOAL, content, 0.85, "current", topic_of(obj), False, entities_in(obj))


def _goal(m: re.Match[str]) -> Draft | None:
    """A plan; "I've been taking a pottery class" is a habit, not a plan (left to the event notes)."""
    obj = en_object(m.group("v"))
    if len(obj) < 3 or _ONE_OFF.match(obj) or re.search(r"\bbeen\s+(?:going to|gonna)\b", m.group(0), _I):
        return None
    return Draft(T.USER_GOAL, third_person(m.group(0)), 0.8, None, topic_of(obj), False, entities_in(obj))


def _availability(m: re.Match[str]) -> Draft:
    return Draft(T.USER_CONSTRAINT, third_person(m.group(0)), 0.85, "availability", "time", False)


def _budget(m: re.Match[str]) -> Draft | None:
    amount = en_object(m.group("v"))
    what = f" for {en_object(m.group('for'))}" if m.group("for") else ""
    return Draft(T.USER_CONSTRAINT, f"User's budget{what} is {amount}", 0.85, None, "budget") if amount else None


def _must(m: re.Match[str]) -> Draft | None:
    obj = en_object(m.group("v"))
    if len(obj) < 3 or _ONE_OFF.match(obj):
        return None
    negated = "n't" in m.group("verb") or " not" in m.group("verb").lower()
    return Draft(T.USER_CONSTRAINT, third_person(m.group(0)), 0.75, None, topic_of(obj), negated, entities_in(obj))


def _standing_wish(m: re.Match[str]) -> Draft | None:
    what = en_object(m.group("v"))
    if len(what) < 3:
        return None
    when = m.group("when").lower()
    negated = when == "never" or what.lower().startswith(("don't", "do not", "stop"))
    what = re.sub(r"^please\s+", "", what, flags=_I)
    content = f"User wants you to {when} {what}" if when in ("always", "never") else f"User wants you to {what} {when}"
    core = re.sub(r"^(?:don't|do not|stop)\s+", "", what, flags=_I)
    content = re.sub(r"\byou (\w+ )?please\s+", r"you \1", content)
    language = _language_of(what)
    return Draft(T.USER_PREFERENCE, content, 0.8, "language" if language else None, language or topic_of(core),
                 negated, entities_in(what))


_CONTACT = re.compile(r"phone|number|e-?mail|address|password|card|account|ssn|passport|\bid\b|wechat|whatsapp", _I)


def _my_thing(m: re.Match[str]) -> Draft | None:
    said, value = m.group("k"), en_object(m.group("v"))
    if not value or _NOT_OBJECT.match(value):
        return None
    key = said.lower()
    shown = said[:1].lower() + said[1:]  # a name in it keeps its capital ("granddaughter Aoife")
    content = f"User's {shown} {m.group('is').lower()} {value}"
    if _CONTACT.search(key):
        return Draft(T.USER_FACT, content, 0.85, "contact", topic_of(key), False, ())
    attribute = "birthday" if "birthday" in key else None
    return Draft(T.USER_FACT, content, 0.8, attribute, topic_of(key), False, entities_in(f"{said} {value}"))


def _identity(m: re.Match[str]) -> Draft:
    """Who the user is when it is not a job ("a night owl", "a new mom", "a diabetic")."""
    what = en_object(m.group("v"))
    return Draft(T.USER_FACT, f"User is {what}", 0.6, None, topic_of(what), False, entities_in(what))


def _has(m: re.Match[str]) -> Draft | None:
    obj = en_object(m.group("v"))
    if len(obj) < 3:
        return None
    return Draft(T.USER_FACT, third_person(m.group(0)), 0.8, None, topic_of(obj), False, entities_in(obj))


def _habit(m: re.Match[str]) -> Draft | None:
    said = en_object(m.group(0))
    return Draft(T.USER_FACT, third_person(said), 0.7, None, None, False, entities_in(said)) if len(said) > 8 else None
