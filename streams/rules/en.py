"""English rules for user turns.

Sentences are cut into clauses at ";", " but " and commas that start a new
first-person clause ("..., I prefer Rust"). Each clause is tried against the
specific rules in order; the first match wins. Informative statements that
match nothing are handed back as leftovers for a low-confidence `user_fact`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from engram.core.text import EN_STOPWORDS
from engram.schemas.memory import MemoryType as T

from .common import Draft, first_draft, en_object, entities_in, sentences, topic_of
from .person import third_person

_I = re.IGNORECASE
_LEAD = re.compile(
    r"^(?:(?:actually|also|and|but|so|well|oh|yeah|yes|yep|no|nah|honestly|btw|by the way|anyway|"
    r"anyways|plus|ok|okay|hmm+|um+|uh+|to be honest|tbh|fyi|just so you know|in fact|now|lately|"
    r"recently|these days|currently|still|though|because|since)\b[,!.]?\s*)+",
    _I,
)
_CLAUSE_SPLIT = re.compile(
    r"\s*;\s*|\s+but\s+|,\s*(?:and\s+|so\s+|because\s+)?(?=(?:i|i'm|i've|i'd|my|we|we're|we've)\b)"
    r"|,\s*(?=(?:it|it's|that's|they|they're|which)\b)"
    r"|\s+(?:and|so)\s+(?=(?:i|i'm|i've|i'd|my|we|we're|we've)\b)",
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
    r"carpenter|farmer|baker|nutritionist|retiree|sre|devops)"
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


def _name(m: re.Match[str]) -> Draft:
    name = m.group("v")
    return Draft(T.USER_PROFILE, f"User's name is {name}", 0.9, "name", None, False, (name,))


def _age(m: re.Match[str]) -> Draft:
    return Draft(T.USER_PROFILE, f"User is {m.group('v')} years old", 0.85, "age")


def _occupation(m: re.Match[str]) -> Draft:
    job = en_object(m.group("v"))
    content = f"User is {m.group('art').lower()} {job}"
    return Draft(T.USER_PROFILE, content, 0.9, "occupation", topic_of(job), False, entities_in(job))


def _works_in(m: re.Match[str]) -> Draft | None:
    place = _place(m.group("v"))
    if not place:
        return None
    verb, entities = m.group("prep").lower(), entities_in(place)
    if verb == "in" and not entities:
        return Draft(T.USER_PROFILE, f"User works in {place}", 0.8, "occupation", topic_of(place))
    return Draft(T.USER_PROFILE, f"User works {verb} {place}", 0.85, "company", None, False, entities)


_PLACE_END = re.compile(r"\s+(?:with|for|since|because|and|but|now|right now|these days|at the moment)\b.*$", _I)


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
    verb = m.group("verb").lower()
    said = _SIMPLE_VERB.get(verb) or f"is {verb}"
    topic = topic_of(re.split(r"\s+(?:over|to|than|rather than|instead of)\s+", obj, maxsplit=1, flags=_I)[0])
    return Draft(T.USER_PREFERENCE, f"User {said} {obj}", 0.85, None, topic, False, entities_in(obj))


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


def _diet(m: re.Match[str]) -> Draft:
    diet = m.group("v").lower()
    return Draft(T.USER_CONSTRAINT, f"User is {diet}", 0.85, None, diet, False)


def _main_goal(m: re.Match[str]) -> Draft | None:
    obj = en_object(m.group("v"))
    if len(obj) < 3:
        return None
    content = f"User's goal is {obj}"
    return Draft(T.USER_GOAL, content, 0.85, "current", topic_of(obj), False, entities_in(obj))


def _goal(m: re.Match[str]) -> Draft | None:
    obj = en_object(m.group("v"))
    if len(obj) < 3 or _ONE_OFF.match(obj):
        return None
    return Draft(T.USER_GOAL, third_person(m.group(0)), 0.8, None, topic_of(obj), False, entities_in(obj))


def _availability(m: re.Match[str]) -> Draft:
    return Draft(T.USER_CONSTRAINT, third_person(m.group(0)), 0.85, None, "time", False)


def _budget(m: re.Match[str]) -> Draft | None:
    amount = en_object(m.group("v"))
    return Draft(T.USER_CONSTRAINT, f"User's budget is {amount}", 0.85, None, "budget") if amount else None


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
    content = f"User wants you to {when} {what}" if when in ("always", "never") else f"User wants you to {what} {when}"
    core = re.sub(r"^(?:don't|do not|stop)\s+", "", what, flags=_I)
    return Draft(T.USER_PREFERENCE, content, 0.8, None, topic_of(core), negated, entities_in(what))


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
     re.compile(rf"^(?:my name is|my name's|i'm called|i am called|(?:you can |please )?call me|people call me|i go by)\s+(?P<v>[^\W\d_][\w'-]*(?:\s+(?-i:[A-Z])[\w'-]*){{0,2}})$", _I), _name),
    ("i", ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9"),
     re.compile(r"^(?:i'm|i am|i just turned|i turned|i'll be|i will be)\s+(?P<v>\d{1,3})(?:\s*(?:years?|yrs?)(?:\s+old)?|\s*y/?o)?$", _I), _age),
    ("i", (" a ", " an "),
     re.compile(rf"^(?:i'm|i am|i work as|i'm working as|i've been working as|i have been working as)\s+(?:currently\s+|now\s+)?(?P<art>a|an)\s+(?P<v>(?:[\w+#./-]+\s+){{0,3}}?{_JOBS}s?(?:\s+(?:at|for|in)\s+[^,;]+)?)$", _I), _occupation),
    ("i", ("work",),
     re.compile(rf"{_SUBJ}{_ADV}(?:work|working)\s+(?P<prep>at|for|in)\s+(?P<v>[^,;]+)$", _I), _works_in),
    ("i", ("live", "living", "lived", "moved", "relocated", "based", "located", "resid", "staying"),
     re.compile(rf"{_SUBJ}{_ADV}(?P<verb>live|living|lived|moved|relocated|based|located|reside|residing|staying)\s+(?:in|to|at)\s+(?P<v>[^,;]+)$", _I), _location),
    ("i", ("from", "grew up"),
     re.compile(r"^(?:i'm|i am|i come|we're|we are)\s+(?:originally\s+)?from\s+(?P<v>[^,;]+)$|^(?:i|we)\s+grew up in\s+(?P<v2>[^,;]+)$", _I), _hometown),
    ("i", ("allergic",),
     re.compile(r"^(?:i'm|i am)\s+(?:very\s+|severely\s+|really\s+)?allergic to\s+(?P<v>[^,;]+)$", _I), _allergy),
    ("i", ("vegan", "vegetarian", "pescatarian", "intolerant", "diabetic", "teetotal"),
     re.compile(r"^(?:i'm|i am)\s+(?:a\s+)?(?P<v>vegan|vegetarian|pescatarian|lactose intolerant|gluten intolerant|diabetic|teetotal)$", _I), _diet),
    ("i", ("n't", "not", "no longer", "never", "cannot"),
     re.compile(rf"^(?:i|we)\s+{_ADV}(?P<neg>don't|do not|dont|no longer|never|can't|cannot|won't)\s+{_ADV}(?P<verb>like|love|enjoy|eat|drink|use|care for)\s+(?P<v>[^,;]+)$", _I), _dislike),
    ("i", ("hate", "dislike", "detest", "stand"),
     re.compile(rf"^(?:i|we)\s+{_ADV}(?P<neg>)(?P<verb>hate|dislike|detest|can't stand)\s+(?P<v>[^,;]+)$", _I), _dislike),
    ("i", ("stopped",),
     re.compile(rf"^(?:i|we)\s+(?P<neg>stopped)\s+(?P<verb>like|eat|drink|use)(?:ing)?\s+(?P<v>[^,;]+)$", _I), _dislike),
    ("i", ("not", "no longer"),
     re.compile(r"^(?:i'm|i am)\s+(?:not|no longer)\s+(?:a\s+(?:big\s+|huge\s+)?fan of|into|interested in|keen on)\s+(?P<v>[^,;]+)$", _I), _not_fan),
    ("m", ("favorite", "favourite"),
     re.compile(r"^my\s+(?:all[- ]time\s+)?favou?rite\s+(?P<k>[\w ]{1,24}?)\s+(?:is|are)\s+(?P<v>[^,;]+)$", _I), _favorite),
    ("i", ("like", "love", "enjoy", "prefer", "adore"),
     re.compile(rf"^(?:i|we)\s+{_ADV}(?P<verb>like|love|enjoy|prefer|adore)\s+(?P<v>[^,;]+)$", _I), _like),
    ("i", ("into", "fan of", "passionate", "obsessed"),
     re.compile(rf"^(?:i'm|i am)\s+{_ADV}(?P<verb>into|a (?:big |huge )?fan of|passionate about|obsessed with)\s+(?P<v>[^,;]+)$", _I), _like),
    ("m", ("goal", "dream", "aim", "objective"),
     re.compile(r"^my\s+(?:main\s+|current\s+|long[- ]term\s+|biggest\s+|ultimate\s+)?(?:goal|dream|aim|objective)\s+is\s+(?P<v>[^;]+)$", _I), _main_goal),
    ("o", ("always", "never", "from now on", "in the future", "going forward", "every time"),
     re.compile(r"^(?:please\s+)?(?P<when>always|never|from now on|in the future|going forward|every time)\b[,\s]*(?:please\s+)?(?P<v>[^;]+)$", _I), _standing_wish),
    ("i", ("have time", "free", "available", "busy", "only"),
     re.compile(rf"^(?=.*\b(?:have time|free|available|busy|only)\b)(?=.*{_TIME})(?:i|we)\b[^;]+$", _I), _availability),
    ("imo", ("budget",),
     re.compile(r"\bbudget\b(?:\s+(?:is|of|was|will be|at))?\s*(?P<v>[^,;]*\d[^,;]*)$", _I), _budget),
    ("i", ("want", "wanna", "plan", "hope", "hoping", "intend", "aim", "going to", "gonna", "trying", "preparing", "like to", "learning", "studying", "saving", "dream", "working towards", "looking to", "need to", "thinking"),
     re.compile(rf"{_SUBJ}{_ADV}(?:want to|wanna|plan to|planning to|plan on|hope to|hoping to|intend to|aim to|going to|gonna|trying to|preparing to|would like to|'d like to|learning|studying|saving (?:up )?for|dreaming of|dream of|working towards|looking to|need to|thinking about|thinking of)\s+(?P<v>[^;]+)$", _I), _goal),
    ("i", ("can", "must", "have to", "got to", "not allowed", "should", "want to", "refuse"),
     re.compile(rf"^(?:i|we)\s+{_ADV}(?P<verb>can only|can't|cannot|must not|mustn't|must|have to|'ve got to|have got to|am not allowed to|shouldn't|should not|don't want to|do not want to|refuse to)\s+(?P<v>[^;]+)$", _I), _must),
    ("m", (" is ", " are ", " was ", "'s "),
     re.compile(r"^my\s+(?P<k>[\w' ]{1,24}?)\s+(?P<is>is|are|was|'s)\s+(?P<v>[^;]+)$", _I), _my_thing),
    ("i", ("have", "'ve got", "own"),
     re.compile(rf"^(?:i|we)(?:\s+have|'ve got|\s+own|\s+have got)\s+(?P<v>(?:a|an|one|two|three|four|five|six|\d+|some|several|many)\s+[^;]+)$", _I), _has),
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


def _match(clause: str) -> Draft | None:
    low = clause.lower()
    rules = ((pattern, build) for literals, pattern, build in _BY_LEAD[_lead(clause)] if _mentions(low, literals))
    return first_draft(rules, clause)


def user_drafts(text: str, leftovers: list[str]) -> list[Draft]:
    """Drafts from an English user turn; unmatched informative statements go to `leftovers`.

    Informativeness is judged over the whole turn: short sentences that carry
    a name or a detail count together ("It was Matt Patterson! His songs were amazing.").
    """
    out: list[Draft] = []
    rest: list[str] = []
    words = 0
    for sentence, is_question in sentences(text):
        if is_question or _REQUEST.match(sentence):
            continue
        clauses = _sentence_clauses(sentence)
        unmatched = [c for c in clauses if not _take(c, out)]
        if unmatched:
            kept = sentence if len(unmatched) == len(clauses) else ", ".join(unmatched)
            count = content_words(kept)
            if count > 1 or (count and len(_WORD.findall(kept)) > 4):
                rest.append(kept)
                words += count
    if rest and words >= (2 if _FIRST_PERSON.search(text) else 4):
        leftovers.extend(rest)
    return out


_REQUEST = re.compile(
    r"^(?:please|can you|could you|would you|will you|help me|tell me|show me|give me|let me know|"
    r"write|explain|translate|summari[sz]e|create|generate|list|find|fix|compare|describe)\b",
    _I,
)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|our|us)\b", _I)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_SMALL_TALK = frozenset(
    """thanks thank wow awesome great cool nice amazing glad happy sorry congrats congratulations hey hi
    hello yeah yes totally definitely sounds good fun lovely sweet true agree omg haha lol hope pretty
    super sure right okay cute beautiful wonderful incredible fantastic exciting excited enjoy hear
    care take bye see soon talk later chat catch let know glad things thing stuff lot keep doing going
    good bad best feel feels felt awesome makes make made totally absolutely especially wait believe
    imagine proud luck wish appreciate sounds miss tell know guess think mean""".split()
)


def content_words(text: str) -> int:
    """How many words of `text` are neither stop words nor small talk."""
    count = 0
    for word in _WORD.findall(text):
        low = word.lower()
        if len(low) > 2 and low not in EN_STOPWORDS and low not in _SMALL_TALK:
            count += 1
    return count


def _sentence_clauses(sentence: str) -> list[str]:
    return [c for c in _CLAUSE_SPLIT.split(sentence.rstrip(".!…")) if c and c.strip()]


def _take(clause: str, out: list[Draft]) -> bool:
    body = _LEAD.sub("", clause.strip())
    draft = _match(body) if body else None
    if draft is None:
        return False
    out.append(draft)
    return True
