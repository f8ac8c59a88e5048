"""Standing facts the subject rules missed, kept in the user's own words.

A profile needs what a user says about their life in passing: "My daughter Mila turns 6 in two weeks",
"New place is in Ballard, Seattle", "我家柯基可乐今天又拆家了", "from now on could you answer me in
Spanish?". The subject rules read sentences of known shapes; a sentence of another shape left no note.
Here every statement of a user turn is read once more, and kept verbatim (as "User said: …" / "用户说：…")
when all of these hold:

- it is a statement (not a question nor a hypothetical), or a standing wish about how to be answered
  ("from now on", "always", "以后", "每次" with a word about answering);
- it is about a specific life domain (`core.domains`: food, health, family, pets, home, work, money, …)
  or names something (a capitalised word inside it, a number);
- it speaks of the user's own life (a first-person word; in Chinese, where the subject is often left
  unsaid, any statement) or names something, or names two things ("Osaka, April 3rd to 14th");
- the notes already drawn from the turn do not hold most of its terms and every name in it (nothing said
  twice).

General by construction: only sentence shape, the shared domain vocabulary and the turn's other notes
decide, nothing about a particular sentence.
"""

from __future__ import annotations

import re

from engram.core.domains import GENERIC_DOMAINS, domains_of
from engram.core.text import terms
from engram.schemas.memory import MemoryType as T

from .common import CJK, Draft, entities_in, sentences, shorten
from .mood import is_hypothetical, is_sarcastic

STANDING_CONFIDENCE = 0.42
"""Between a mention (0.4) and the verbatim fallback (0.45): the sentence is kept, not understood."""
MAX_NOTES = 2
MAX_NOTE_CHARS = 200
COVERED_SHARE = 0.6
"""A sentence whose terms are this much in the turn's other notes is already noted."""
PREFIX_EN = "User said: "
PREFIX_ZH = "用户说："

_I = re.IGNORECASE
_FIRST_EN = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|we|we're|we've|us|our|ours)\b", _I)
_FIRST_ZH = re.compile(r"我|咱")
_WISH = re.compile(r"from now on|going forward|in (?:the )?future|always|every time|each time|^please\b|以后|今后|"
                   r"从现在起|每次|一律|总是|^请", _I)
_ANSWERING = re.compile(r"\b(?:answer|reply|replies|respond|response|write|explain|keep|use|speak|put)\w*|"
                        r"回答|回复|用中文|用英文|说中文|说英文|简短|简洁|详细|解释|写", _I)
_ZH_QUESTION = re.compile(r"(?:吗|呢|么|啥|什么|怎么|哪儿|哪里|多少)\s*[~～。!！]*$")
_NAMED = re.compile(r"(?<=\s)[A-Z][\w'-]+|\d|[一二三四五六七八九十百千万两半]+(?:岁|个?月|年|万|千|块|元|分钟|小时|点|号|天|周)|"
                    r"周[一二三四五六日末]|星期.")
_LEAD_TRIM = re.compile(r"^(?:ok|okay|so|well|oh|lol|haha|yep|yeah|hmm|btw|anyway|guess what)[,!. ]+", _I)


def standing_notes(text: str, drafts: list[Draft]) -> list[Draft]:
    """At most `MAX_NOTES` verbatim notes of the turn's standing facts that `drafts` do not already hold."""
    known = {t for d in drafts for t in terms(d.content)}
    out: list[Draft] = []
    for sentence, is_question in sentences(text):
        body = _LEAD_TRIM.sub("", sentence.strip()).strip()
        if not body or not _qualifies(body, is_question):
            continue
        own = set(terms(body))
        names = {t for e in entities_in(body, prose=True) for t in terms(e)}
        if not own or (len(own & known) / len(own) >= COVERED_SHARE and names <= known):
            continue
        known |= own
        chinese = bool(CJK.search(body))
        content = (PREFIX_ZH if chinese else PREFIX_EN) + shorten(body, MAX_NOTE_CHARS)
        out.append(Draft(T.USER_FACT, content, STANDING_CONFIDENCE, None, None, False,
                         entities_in(body, prose=True)))
        if len(out) >= MAX_NOTES:
            break
    return out


def _qualifies(body: str, is_question: bool) -> bool:
    if _WISH.search(body) and _ANSWERING.search(body):
        return True
    if is_question or _ZH_QUESTION.search(body) or is_hypothetical(body) or is_sarcastic(body):
        return False
    chinese = bool(CJK.search(body))
    if len(CJK.findall(body)) < 5 if chinese else len(body.split()) < 4:
        return False
    found = domains_of(body)
    named = _NAMED.findall(" " + body)
    specific = bool(found - GENERIC_DOMAINS) or ("schedule" in found and bool(named))
    if chinese:  # a Chinese statement often leaves its subject (the user) unsaid
        return specific
    own = bool(_FIRST_EN.search(body))
    return (specific and (own or bool(named))) or (bool(named) and own) or len(named) >= 2
