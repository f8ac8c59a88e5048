"""Standing facts the subject rules missed, kept in the user's own words.

A profile needs what a user says about their life in passing: "My son Arlo turns 8 next month",
"New flat is in Kreuzberg, Berlin", "我家柴犬豆包今天又咬坏了拖鞋", "going forward please reply to me in
French". The subject rules read sentences of known shapes; a sentence of another shape left no note.
Here every statement of a user turn is read once more, and kept verbatim (as "User said: …" / "用户说：…")
when all of these hold:

- it is a statement (not a question nor a hypothetical), or a standing wish about how to be answered
  ("from now on", "always", "please", "以后", "每次" with a word for answering);
- it is about a specific life domain (`core.domains`: food, health, family, pets, home, work, money, …),
  or about a schedule and names a time;
- it speaks of the user's own life: a first-person word, and a life domain or a name (in Chinese, where
  the subject is often left unsaid, the life domain alone: "外公眼睛不太好");
- it does not correct what was said before (its quote would keep the wrong value beside the corrected one);
- it is not a task for the assistant, small talk, addressed to "you", about a bare "it" or "that" (what
  it is, the sentence does not say), nor in pasted material;
- nothing is said twice: when the subject rules understood the turn, only a sentence naming something
  their notes do not name is kept; otherwise one whose terms the turn's notes mostly hold is not.

General by construction: only sentence shape, the shared domain vocabulary and the turn's other notes
decide, nothing about a particular sentence.
"""

from __future__ import annotations

import re

from engram.core.domains import GENERIC_DOMAINS, MENTION_PREFIX, domains_of, stated_domains
from engram.core.text import VERBATIM_PREFIXES, terms
from engram.schemas.memory import MemoryType as T

from .common import CJK, Draft, entities_in, sentences, shorten
from .corrections import is_correction_cued
from .en import strip_lead
from .en_turn import is_request
from .mention import _ADDRESSED, _PASTED, _PRONOUN_SUBJECT, MAX_TURN_CHARS
from .mood import is_hypothetical, is_momentary, is_sarcastic
from .narrative import is_phatic, is_task
from .standing_parts import is_life_change, join_fragments, lasting_clauses

STANDING_CONFIDENCE = 0.42
"""Between a mention (0.4) and the verbatim fallback (0.45): the sentence is kept, not understood."""
MAX_NOTES = 2
MAX_NOTE_CHARS = 200
COVERED_SHARE = 0.6
"""A sentence whose terms are this much in the turn's other notes is already noted."""
PREFIX_EN, PREFIX_ZH = VERBATIM_PREFIXES

_I = re.IGNORECASE
_FIRST_EN = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|we|we're|we've|us|our|ours)\b", _I)
_FIRST_ZH = re.compile(r"我|咱")
_WISH = re.compile(r"from now on|going forward|in (?:the )?future|always|every time|each time|\bplease\b|以后|今后|"
                   r"从现在起|每次|一律|总是|^请", _I)
_ANSWERING = re.compile(r"\b(?:answers?|repl(?:y|ies)|respon(?:d|se|ses))\b|回答|回复|答复", _I)
_ZH_QUESTION = re.compile(r"(?:吗|呢|么|啥|什么|怎么|哪儿|哪里|多少)\s*[~～。!！]*$")
_NAMED = re.compile(r"(?<=\s)[A-Z][\w'-]+|\d|[一二三四五六七八九十百千万两半]+(?:岁|个?月|年|万|千|块|元|分钟|小时|点|号|天|周)|"
                    r"周[一二三四五六日末]|星期.")
_WHEN = re.compile(r"[一二三四五六七八九十两半\d]+[点号]|周[一二三四五六日末]|星期.|早上|上午|中午|下午|晚上|"
                   r"\b\d{1,2}(?::\d\d)? ?(?:am|pm)\b|\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b", _I)
"""A time or a day: what a changed schedule names that its notes may not."""
_PLACE_ATTRIBUTES = frozenset({"location", "hometown"})
"""A note of where the user lives or comes from: the turn's home is noted."""
_LASTING = re.compile(r"\b(?:for (?:\w+ )?years|since(?!\s+(?:i|i'm|i've|we|we're|you|he|she|they|it)\b)|always|every|never|rules?|chronic)\b|好几年|多年|"
                      r"[\d一二三四五六七八九十几两]+年了|一直|常年|长期|每(?:天|周|个月|年)|从不|规定|不许|不准", _I)
"""A fact said to last: a condition for years, a habit every week, a rule that always holds ("since" with a
subject after it is a reason, "since I'm on call", not a start)."""
_OTHERS_ZH = re.compile(r"^(?:他|她|它|他们|她们|它们|人家|别人|大家)")
"""A Chinese statement that opens on another person speaks of their life, not the user's."""
_OTHERS_EN = re.compile(r"^(?:he|she|they|it|this|that|these|those|his|her|their|its|you|your|there|here)\b", _I)
_SUBJECTLESS_DOMAINS = frozenset({"home", "family", "pets", "travel"})
"""Where an English statement with no first-person word is still the user's own: where they live, who they
live with, where they are going (the pronoun is the first word chat drops: "booked tickets!! Hanoi, …")."""
_LEAD_TRIM = re.compile(r"^(?:ok|okay|so|well|oh|lol|haha|yep|yeah|hmm|btw|anyway|guess what)[,!. ]+", _I)


def is_standing_note(draft: Draft) -> bool:
    """A note written by `standing_notes` (the summarizer reads its sentence as one that gave no draft)."""
    return draft.confidence == STANDING_CONFIDENCE and draft.content.startswith((PREFIX_EN, PREFIX_ZH))


def standing_notes(text: str, drafts: list[Draft]) -> list[Draft]:
    """At most `MAX_NOTES` verbatim notes of the turn's standing facts that `drafts` do not already hold.
    None in pasted material (code, a log); a task for the assistant is no note, but the facts told beside
    it are ("where can I rent a bouncy castle? My son Arlo turns 8 next month")."""
    if _PASTED.search(text) or len(text) > MAX_TURN_CHARS:
        return []
    split = lasting_clauses(join_fragments(sentences(text)))
    known = {t for d in drafts for t in terms(d.content)}
    facts = {t for d in drafts if not d.content.startswith(MENTION_PREFIX) for t in terms(d.content)}
    covered = {name for d in drafts for name in domains_of(d.content)} | GENERIC_DOMAINS
    if any(d.attribute in _PLACE_ATTRIBUTES for d in drafts):
        covered.add("home")
    understood = any(not d.content.startswith(MENTION_PREFIX) for d in drafts)
    out: list[Draft] = []
    for sentence, is_question in split:
        body = _LEAD_TRIM.sub("", sentence.strip()).strip()
        task = is_task(strip_lead(body)) or is_request(strip_lead(body))
        if task and body.rstrip().endswith(":") or task and ": " in body:
            break  # what follows "Summarize:" or "Translate this:" is the material, not the user's life
        if not body or not _qualifies(body, is_question, task) or is_correction_cued(body):
            continue  # a sentence that corrects what was said would keep the wrong value in its quote
        own = set(terms(body))
        seen = facts if is_life_change(body) else known  # a mention does not hold a change of job or home
        names = {t for e in [*entities_in(body, prose=True), *_WHEN.findall(body)] for t in terms(e)}
        wish = _is_answer_wish(body)  # the notes of a wish rarely hold its words: kept unless mostly covered
        # a lasting fact of a domain the notes miss ("我爸今年68了，痛风好几年" noted only as the age)
        missed = domains_of(body) - covered  # where the user lives now is news whenever it is said
        new_domain = bool(missed) and ("home" in missed or bool(_LASTING.search(body)))
        if not own or names <= seen and (understood and not (wish or new_domain)
                                         or len(own & seen) / len(own) >= COVERED_SHARE):
            continue
        known |= own
        chinese = bool(CJK.search(body))
        content = (PREFIX_ZH if chinese else PREFIX_EN) + shorten(body, MAX_NOTE_CHARS)
        out.append(Draft(T.USER_FACT, content, STANDING_CONFIDENCE, None, None, False,
                         entities_in(body, prose=True)))
        if len(out) >= MAX_NOTES:
            break
    return out


def _is_answer_wish(body: str) -> bool:
    return bool(_WISH.search(body) and _ANSWERING.search(body))


def _qualifies(body: str, is_question: bool, task: bool) -> bool:
    if _is_answer_wish(body):
        return True
    if task or is_question or _ZH_QUESTION.search(body) or is_hypothetical(body) or is_sarcastic(body) \
            or is_momentary(body) and not is_life_change(body):
        return False
    if is_phatic(body) or _ADDRESSED.search(body) or _PRONOUN_SUBJECT.match(body):
        return False
    chinese = bool(CJK.search(body))
    if len(CJK.findall(body)) < 5 if chinese else len(body.split()) < 4:
        return False
    found = domains_of(body)
    named = bool(_NAMED.search(body))
    specific = bool(found - GENERIC_DOMAINS) or ("schedule" in found and named)
    if chinese:  # a Chinese statement often leaves its subject (the user) unsaid
        return specific and not (_OTHERS_ZH.match(body) and not _FIRST_ZH.search(body))
    if _FIRST_EN.search(body):
        return specific or named
    # chat drops the subject ("New flat is in Kreuzberg, Berlin"): a named fact of a standing life domain
    return named and bool(stated_domains(body) & _SUBJECTLESS_DOMAINS) and not _OTHERS_EN.match(body)
