"""Rewrite an English first-person clause in the third person ("I only have" -> "User only has")."""

from __future__ import annotations

import re

_I = re.IGNORECASE
_FIXED: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, _I), replacement)
    for pattern, replacement in (
        (r"^i\s+wanna\b", "User wants to"),
        (r"^i\s*'\s*m\s+gonna\b|^i am gonna\b", "User is going to"),
        (r"^i\s*'\s*m\b|^i am\b", "User is"),
        (r"^i\s*'\s*ve\b|^i have\b", "User has"),
        (r"^i\s*'\s*ll\b|^i will\b", "User will"),
        (r"^i\s*'\s*d\b|^i would\b", "User would"),
        (r"^i was\b", "User was"),
        (r"^(?:my|our)\s+(?P<who>[\w-]+)\s+and\s+i\b", r"User and their \g<who>"),  # "my brother and I are …"
        (r"^my\b", "User's"),
        (r"^our\b", "User's"),
        (r"^i (?:don't|do not|dont)\b", "User doesn't"),
        (r"^i (?:can't|cannot|can not)\b", "User can't"),
        (r"^i (?:won't|will not)\b", "User won't"),
        (r"^we\s*'\s*re\b|^we are\b", "User and others are"),
        (r"^we\s*'\s*ve\b", "User and others have"),
        (r"^we\b", "User and others"),
    )
)
_LEADING_VERB = re.compile(r"^i\s+(?P<adv>(?:(?:only|really|also|still|just|usually|always|often|never|sometimes|"
                           r"normally|typically|regularly|mostly|generally|actually|now|finally|recently|even|once|first|already|"
                           r"totally|eventually|both|all|hardly|hardly ever|rarely|seldom|barely|almost|almost never|quite|rather|kind of|sort of|"
                           r"mildly|slightly|somewhat|genuinely|honestly|occasionally|frequently|constantly|ever)\s+)*)(?P<verb>[a-z]+)\b", _I)
"""Adverbs before the verb are skipped: "I hardly ever drink" -> "User hardly ever drinks"."""
_MODALS = frozenset("can could should would will must might may shall".split())
_BASE_IN_ED = frozenset("need feed bleed breed speed proceed succeed exceed heed seed weed embed shed wed".split())
"""Base verbs that end in "ed" like a past form ("I need" -> "User needs")."""
_IRREGULAR = {"have": "has", "do": "does", "go": "goes", "be": "is", "am": "is"}
_PAST = frozenset(
    """went was were had got made took saw did said came gave found knew thought told became left felt
    brought began kept held wrote stood heard let meant met ran paid sat spoke led read grew lost fell
    sent built understood drew broke spent cut drove bought wore chose ate drank sang won taught caught
    fought threw flew forgot slept rode shot hit quit put swam rang knew blew tore swore stole froze woke rose
    bit hid slid lit fed fled sold bound wound ground sought dealt knelt swept wept lent bent burnt learnt dreamt
    spat shook forgave sank stank shrank""".split()
)
_OBJECT_FORMS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bmyself\b", _I), "themselves"),
    (re.compile(r"\bmy\b", _I), "their"),
    (re.compile(r"\bmine\b", _I), "theirs"),
    (re.compile(r"\bourselves\b", _I), "themselves"),
    (re.compile(r"\bour\b", _I), "their"),
    (re.compile(r"\bme\b", _I), "them"),
    (re.compile(r"\bI'm\b"), "they're"),
    (re.compile(r"\bI\b"), "they"),
)


def conjugate(verb: str) -> str:
    """Third-person singular present of a base verb; past forms and modals unchanged."""
    low = verb.lower()
    if low in _MODALS or low in _PAST or low.endswith("ed") and low not in _BASE_IN_ED:
        return verb
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(low) > 1 and low.endswith("y") and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def third_person(clause: str) -> str:
    """`I ...` -> `User ...`, with the verb agreed and later my/me/I rewritten."""
    text = clause.strip()
    for pattern, replacement in _FIXED:
        new = pattern.sub(replacement, text, count=1)
        if new != text:
            return _objects(new)
    m = _LEADING_VERB.match(text)
    if m is not None:
        verb = m.group("verb") if text[m.end():].startswith("'t") else conjugate(m.group("verb"))
        text = f"User {m.group('adv')}{verb}{text[m.end():]}"
    return _objects(text)


def _objects(text: str) -> str:
    for pattern, replacement in _OBJECT_FORMS:
        text = pattern.sub(replacement, text)
    return text
