"""English rules for one user clause (the turn-level reading is in `en_turn`).

Each clause is tried against the specific rules in order; the first match
wins. A rule is only tried when the lower-cased clause contains one of its
literals, which skips most regex calls.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from engram.schemas.memory import MemoryType as T

from .common import Draft, first_draft, en_object, entities_in, topic_of
from .person import third_person

_I = re.IGNORECASE
_LEAD = re.compile(
    r"^(?:(?:actually|also|and|but|so|well|oh|yeah|yes|yep|no|nah|honestly|btw|by the way|anyway|"
    r"anyways|plus|ok|okay|hmm+|um+|uh+|to be honest|tbh|fyi|just so you know|in fact|now|lately|"
    r"recently|these days|currently|for now|for the time being|at the moment|still|though|because|since)\b[,!.]?\s*)+",
    _I,
)
_SUBJ = r"^(?:i|we)(?:\s*'\s*(?:m|ve|d|re)|\s+(?:am|are|have|had))?\s+(?:been\s+)?"
_ADV = (
    r"(?:(?:really|also|still|just|actually|definitely|absolutely|totally|truly|do|genuinely|kind of|"
    r"kinda|sort of|now|currently|usually|generally|mostly|honestly|personally|always|very|much)\s+)*"
)
_NOT_OBJECT = re.compile(
    r"^(?:it|that|this|those|these|how|when|what|where|the way|you|your|him|her|them|us|seeing|being)\b", _I
)
_JOBS = (
    r"(?:engineer|developer|dev|programmer|coder|designer|teacher|doctor|nurse|student|manager|scientist|"
    r"analyst|writer|author|lawyer|consultant|architect|researcher|artist|musician|chef|cook|accountant|"
    r"professor|founder|entrepreneur|freelancer|photographer|counselor|therapist|journalist|editor|"
    r"marketer|salesperson|administrator|sysadmin|tester|intern|pilot|driver|mechanic|electrician|"
    r"plumber|pharmacist|dentist|veterinarian|vet|firefighter|officer|soldier|librarian|cashier|barista|"
    r"waiter|waitress|actor|actress|singer|dancer|painter|translator|tutor|coach|trainer|ceo|cto|cfo|pm|"
    r"lecturer|postdoc|undergrad|specialist|technician|clerk|secretary|banker|investor|economist|"
    r"physicist|chemist|biologist|psychologist|social worker|caregiver|youtuber|streamer|blogger|"
    r"carpenter|farmer|baker|nutritionist|retiree|sre|devops|paramedic|surgeon|physician|midwife|receptionist|"
    r"hairdresser|stylist|realtor|broker|auditor|actuary|recruiter|paralegal|attorney|judge|police officer|"
    r"courier|nanny|swe|qa|ux designer|data scientist|entrepreneur|homemaker|stay-at-home (?:mom|dad|parent))"
)
_TIME = (
    r"\b(?:\d{1,2}(?::\d\d)?\s*(?:am|pm|o'clock)|weekends?|weekdays?|evenings?|mornings?|nights?|"
    r"afternoons?|(?:mon|tues|wednes|thurs|fri|satur|sun)days?|lunch)\b"
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


def _occupation(m: re.Match[str]) -> Draft:
    job = en_object(m.group("v"))
    content = f"User is {m.group('art').lower()} {job}"
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
    """The language a preference is about ("answers in English" -> "english"), if any."""
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
    """ "I'm scared of dogs": something to spare the user, a negative preference like "怕狗"."""
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
    """A plan; "I've been going to a choir" is a habit, not a plan (left to the event notes)."""
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
    key, value = m.group("k").lower(), en_object(m.group("v"))
    if not value or _NOT_OBJECT.match(value):
        return None
    content = f"User's {key} {m.group('is').lower()} {value}"
    if _CONTACT.search(key):
        return Draft(T.USER_FACT, content, 0.85, "contact", topic_of(key), False, ())
    attribute = "birthday" if "birthday" in key else None
    return Draft(T.USER_FACT, content, 0.8, attribute, topic_of(key), False, entities_in(value))


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


# (leads, literals, pattern, builder). Leads say which clause openings the rule can
# match (i = "I/we ...", m = "my ...", o = anything else); the pattern is only tried
# when the lower-cased clause contains one of the literals, which skips most regex calls.
_Rule = tuple[tuple[str, ...], re.Pattern[str], Builder]
_RULES: tuple[tuple[str, tuple[str, ...], re.Pattern[str], Builder], ...] = (
    ("imo", ("name", "call", "go by"),
     re.compile(rf"^(?:my name is|my name's|(?:the\s+)?name's|i'm called|i am called|(?:you can |please )?call me|people call me|i go by)\s+(?P<v>[^\W\d_][\w'-]*(?:\s+(?-i:[A-Z])[\w'-]*){{0,2}})(?:\s+(?:from now on|please|instead|now|by the way|btw))*$", _I), _name),
    ("o", (" here",),
     re.compile(r"^(?P<v>(?-i:[A-Z][a-z]{1,14}))\s+here$", _I), _name),
    ("i", ("i'm", "i am", "this is"),
     re.compile(r"^(?:i'm|i am|this is)\s+(?P<v>(?-i:[A-Z][a-z]+)(?:\s+(?-i:[A-Z][a-z]+))?)(?:\s+(?:by the way|btw|here))?$", _I), _name),
    ("i", ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9"),
     re.compile(r"^(?:i'm|i am|i just turned|i turned|i'll be|i will be)\s+(?P<v>\d{1,3})(?:\s*(?:years?|yrs?)(?:\s+old)?|\s*y/?o)?$", _I), _age),
    ("i", (" a ", " an "),
     re.compile(rf"^(?:i'm|i am|i work as|i'm working as|i've been working as|i have been working as)\s+(?:currently\s+|now\s+|still\s+)?(?P<art>a|an|the)\s+(?P<v>(?:[\w+#./-]+\s+){{0,3}}?{_JOBS}s?(?:\s+(?:in|of)\s+(?-i:[a-z])[^,;]*)?)(?:\s+(?:now|these days|by the way|btw|here|there))?$", _I), _occupation),
    ("i", ("teach",),
     re.compile(rf"{_SUBJ}{_ADV}(?:teach|teaching)\s+(?P<v>[^,;]+)$", _I), _teaches),
    ("i", ("shift", "nights", "days", "weekends", "evenings"),
     re.compile(rf"{_SUBJ}{_ADV}(?:work|working|do|doing|switched to|moved to|changed to|on)\s+(?:the\s+|a\s+)?(?:(?P<v>night|day|evening|morning|weekend|late|early|graveyard|overnight|swing)\s+shifts?|(?P<v2>nights|days|weekends|evenings)$)", _I), _shift),
    ("i", ("joined", "job at", "started at", "starting at"),
     re.compile(rf"{_SUBJ}{_ADV}(?:joined|took a (?:new |full-time |part-time )?job (?:at|with)|got a (?:new |full-time |part-time )?job (?:at|with)|started (?:a new job |working )?at|am starting at|'m starting at)\s+(?P<v>[^,;]+)$", _I), _joined),
    ("i", ("left", "quit my job", "no longer work", "not working"),
     re.compile(rf"{_SUBJ}{_ADV}(?:left|quit my job at|no longer work (?:at|for)|am not working (?:at|for))\s+(?P<v>[^,;]+?)(?:\s+anymore)?$", _I), _left),
    ("i", ("work",),
     re.compile(rf"{_SUBJ}{_ADV}(?:work|working|worked)\s+(?P<prep>at|for|in)\s+(?P<v>[^,;]+)$", _I), _works_in),
    ("i", ("live", "living", "lived", "moved", "relocated", "based", "located", "resid", "staying"),
     re.compile(rf"{_SUBJ}{_ADV}(?P<verb>live|living|lived|moved|relocated|based|located|reside|residing|staying)\s+(?:in|to|at)\s+(?P<v>[^,;]+)$", _I), _location),
    ("i", ("been in",),
     re.compile(r"^(?:i|we)(?:'ve|\s+have)\s+been\s+(?P<verb>)in\s+(?P<v>(?-i:[A-Z])[^,;]*?)\s+(?:for|since)\s+\S.*$", _I), _location),
    ("i", ("from", "grew up"),
     re.compile(r"^(?:i'm|i am|i come|we're|we are)\s+(?:originally\s+)?from\s+(?P<v>[^,;]+)$|^(?:i|we)\s+grew up in\s+(?P<v2>[^,;]+)$", _I), _hometown),
    ("i", ("afraid", "scared", "terrified", "frightened"),
     re.compile(r"^(?:i'm|i am)\s+(?:really\s+|very\s+|so\s+)?(?:afraid|scared|terrified|frightened)\s+of\s+(?P<v>[^,;]+)$", _I), _fear),
    ("i", ("allergic",),
     re.compile(r"^(?:i'm|i am)\s+(?:(?:very|severely|really|still|also|now|quite)\s+)*allergic to\s+(?P<v>[^,;]+)$", _I), _allergy),
    ("i", ("vegan", "vegetarian", "pescatarian", "intolerant", "diabetic", "free", "celiac", "coeliac", "asthmatic", "epileptic", "teetotal", "keto", "halal", "kosher"),
     re.compile(r"^(?:i'm|i am)\s+(?:now\s+|also\s+|still\s+)?(?:a\s+)?(?:strict\s+)?(?P<v>vegan|vegetarian|pescatarian|lactose intolerant|gluten intolerant|gluten[- ]free|dairy[- ]free|celiac|coeliac|asthmatic|epileptic|(?:type\s*[12]\s+)?diabetic|teetotal|keto|halal|kosher)\b(?:\s+(?:now|these days|nowadays|too|as well|actually|just so you know|by the way|btw))*$", _I), _diet),
    ("i", ("n't", "not", "no longer", "never", "cannot"),
     re.compile(rf"^(?:i|we)\s+{_ADV}(?P<neg>don't|do not|dont|no longer|never|can't|cannot|won't)\s+{_ADV}(?P<verb>like|love|enjoy|eat|drink|use|care for)\s+(?P<v>[^,;]+)$", _I), _dislike),
    ("i", ("quit",),
     re.compile(rf"^(?:i|we)\s+{_ADV}(?P<neg>quit)(?P<verb>)\s+(?P<v>(?!my job)[^,;]+?)(?:\s+(?:last|this|a)\s+\w+(?:\s+ago)?)?$", _I), _dislike),
    ("i", ("hate", "dislike", "detest", "stand"),
     re.compile(rf"^(?:i|we)\s+{_ADV}(?P<neg>)(?P<verb>hate|dislike|detest|can't stand)\s+(?P<v>[^,;]+)$", _I), _dislike),
    ("i", ("stopped",),
     re.compile(rf"^(?:i|we)\s+(?P<neg>stopped)\s+(?P<verb>like|eat|drink|use)(?:ing)?\s+(?P<v>[^,;]+)$", _I), _dislike),
    ("i", ("not", "no longer"),
     re.compile(r"^(?:i'm|i am)\s+(?:not|no longer)\s+(?:a\s+(?:big\s+|huge\s+)?fan of|into|interested in|keen on)\s+(?P<v>[^,;]+)$", _I), _not_fan),
    ("i", ("used to",),
     re.compile(rf"^(?:i|we)\s+{_ADV}used to\s+(?P<verb>like|love|enjoy|prefer|adore)\s+(?P<v>[^,;]+)$", _I), _used_to),
    ("i", ("switched to", "moved to", "changed to"),
     re.compile(rf"{_SUBJ}{_ADV}(?:switched|moved|changed)(?:\s+over)?\s+to\s+(?P<v>(?-i:[A-Z])[^,;]*|[^,;]*\b(?:tea|coffee|decaf|water)\b[^,;]*)$", _I), _switched),
    ("m", ("favorite", "favourite"),
     re.compile(r"^my\s+(?:all[- ]time\s+)?favou?rite\s+(?P<k>[\w ]{1,24}?)\s+(?:is|are)\s+(?P<v>[^,;]+)$", _I), _favorite),
    ("i", ("like", "love", "enjoy", "prefer", "adore"),
     re.compile(rf"^(?:i|we)\s+{_ADV}(?P<verb>like|love|enjoy|prefer|adore)\s+(?P<v>[^,;]+)$", _I), _like),
    ("i", ("into", "fan of", "passionate", "obsessed"),
     re.compile(rf"^(?:i'm|i am)\s+{_ADV}(?P<verb>into|a (?:big |huge )?fan of|passionate about|obsessed with)\s+(?P<v>[^,;]+)$", _I), _like),
    ("o", ("favorite", "favourite"),
     re.compile(r"^(?P<v>(?!it\b|that\b|this\b)[^,;]{1,30}?)\s+(?:is|are)\s+my\s+(?:all[- ]time\s+)?favou?rite\s+(?P<k>[^,;]{1,40})$", _I), _their_favorite),
    ("i", ("know", "speak", "use", "write", "code in", "program in"),
     re.compile(rf"^(?:i|we)\s+{_ADV}(?:already\s+|mainly\s+|mostly\s+|also\s+|only\s+|fluently\s+)*(?P<verb>know|speak|use|write|code in|program in)\s+(?P<v>(?!how\b|what\b|that\b|you\b|it\b)[^,;]+)$", _I), _skill),
    ("m", ("goal", "dream", "aim", "objective"),
     re.compile(r"^my\s+(?:main\s+|current\s+|long[- ]term\s+|biggest\s+|ultimate\s+)?(?:goal|dream|aim|objective)"
                r"(?P<when>\s+(?:for\s+)?(?:this|next)\s+(?:year|month|week|season|summer|winter|spring|autumn|fall|quarter)"
                r"|\s+for\s+\d{4})?\s+is\s+(?P<v>[^;]+)$", _I), _main_goal),
    ("o", ("always", "never", "from now on", "in the future", "going forward", "every time"),
     re.compile(r"^(?:please\s+)?(?P<when>always|never|from now on|in the future|going forward|every time)\b[,\s]*(?:please\s+)?(?P<v>[^;]+)$", _I), _standing_wish),
    ("o", ("from now on", "going forward", "in the future"),
     re.compile(r"^(?:please\s+)?(?P<v>(?!call me\b)[^;]+?)\s+(?P<when>from now on|going forward|in the future)$", _I), _standing_wish),
    ("i", ("have time", "free", "available", "busy", "only"),
     re.compile(rf"^(?=.*\b(?:have time|free|available|busy|only)\b)(?=.*{_TIME})(?:i|we)\b[^;]+$", _I), _availability),
    ("imo", ("budget",),
     re.compile(r"\bbudget\b(?:\s+(?:for|on)\s+(?P<for>[^,;]+?))?(?:\s+(?:is|of|was|will be|would be|at))?\s+(?P<v>(?:[^,;]|(?<=\d),(?=\d))*\d(?:[^,;]|(?<=\d),(?=\d))*)$", _I), _budget),
    ("i", ("want", "wanna", "plan", "hope", "hoping", "intend", "aim", "going to", "gonna", "trying", "preparing", "like to", "love to", "learning", "studying", "saving", "dream", "working towards", "looking to", "need to", "thinking", "applying"),
     re.compile(rf"{_SUBJ}{_ADV}(?:want to|wanna|plan to|planning to|plan on|hope to|hoping to|intend to|aim to|going to|gonna|trying to|preparing to|would like to|'d like to|would love to|'d love to|like to|learning|studying|saving (?:up )?for|dreaming of|dream of|working towards|looking to|need to|thinking about|thinking of|applying (?:to|for))\s+(?P<v>[^;]+)$", _I), _goal),
    ("i", ("can", "must", "have to", "got to", "not allowed", "should", "want to", "refuse"),
     re.compile(rf"^(?:i|we)\s+{_ADV}(?P<verb>can only|can't|cannot|must not|mustn't|must|have to|'ve got to|have got to|am not allowed to|shouldn't|should not|don't want to|do not want to|refuse to)\s+(?P<v>[^;]+)$", _I), _must),
    ("m", (" is ", " are ", " was ", "'s "),
     re.compile(r"^my\s+(?P<k>[\w' ]{1,24}?)\s+(?P<is>is|are|was|'s)\s+(?P<v>[^;]+)$", _I), _my_thing),
    ("i", ("have", "'ve got", "own"),
     re.compile(rf"^(?:i|we)(?:\s+have|'ve got|\s+own|\s+have got)\s+(?P<v>(?:a|an|one|two|three|four|five|six|\d+|some|several|many)\s+[^;]+)$", _I), _has),
    ("i", (" a ", " an "),
     re.compile(r"^(?:i'm|i am)\s+(?P<v>(?:a|an)\s+(?!(?:bit|little|lot|fan|big|huge|few|total|complete)\b)[\w'-]+(?:\s+[\w'-]+){0,3})$", _I), _identity),
    ("i", ("usually", "always", "often", "regularly", "normally", "typically", "never"),
     re.compile(r"^(?:i|we)\s+(?:usually|always|often|regularly|normally|typically|never)\s+[^;]+$", _I), _habit),
)



_BY_LEAD: dict[str, tuple[_Rule, ...]] = {
    lead: tuple((lits, pattern, build) for leads, lits, pattern, build in _RULES if lead in leads)
    for lead in "imo"
}


def _mentions(low: str, literals: tuple[str, ...]) -> bool:
    for literal in literals:
        if literal in low:
            return True
    return False


def _lead(clause: str) -> str:
    head = clause[:3].lower()
    if head.startswith(("i ", "i'", "i’", "we ", "we'")) or head == "i":
        return "i"
    return "m" if head == "my " else "o"


def match_clause(clause: str) -> Draft | None:
    """The draft of the first specific rule that matches one clause (no lead words, no end punctuation)."""
    low = clause.lower()
    rules = ((pattern, build) for literals, pattern, build in _BY_LEAD[_lead(clause)] if _mentions(low, literals))
    return first_draft(rules, clause)


def strip_lead(clause: str) -> str:
    """The clause without discourse openers ("Actually, so, btw …")."""
    return _LEAD.sub("", clause.strip())
