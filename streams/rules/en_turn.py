"""Reading an English user turn: sentences, clauses, and whom each clause is about.

- A hypothetical or sarcastic sentence (`mood`) states nothing about the user.
- A question keeps only the statements before its question part
  ("As a florist, how do I…?" -> "As a florist").
- Clauses are cut at ";", ", " (not inside "1,200"), " but ", dashes, and
  " and " / " so " before a new first-person subject.
- Subject tracking, clause by clause: "I …" / "my …" is the user; a clause
  that starts with a verb ("Just moved to Tucson", "… but moved to Cork")
  inherits the user as subject; "a/an <job>" after a name is an apposition
  ("I'm Priya, a data engineer"); "As a <job>" states the user's role; a
  leading "it" is the previous clause's object in the same turn, or the clause
  is dropped (a dangling pronoun); he/she/they clauses are about someone else;
  "my sister lives …" is kept as the user's family fact when it is stative.
- Role tails: "I'm a midwife working weekends", "I'm an accountant at Unilever",
  "I work at Siemens as a QA lead" give the role and the rest as separate facts.
- Leftovers: first-person informative clauses no rule matched (events
  included: "I went to a chess meetup yesterday"), in the third person,
  one per clause.
- Narrative chat (`narrative`): fronted time phrases, dropped subjects before
  a past verb or a plan, event notes (past/perfect first-person clauses are
  kept even in a sentence that names a moment), values, motives, experiences
  through the object ("Painting helped me …"), shared photos; phatic clauses
  (greetings, thanks, compliments, wishes) give nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from engram.core.text import EN_STOPWORDS
from engram.core.domains import WHEREABOUTS
from engram.schemas.memory import MemoryType as T

from .common import Draft, entities_in, sentences
from .asides import is_wish_request, statements_around
from .clauses import is_dangling_opinion, is_self_intro, is_vent, telegraphic, verb_first
from .degree import en_graded
from .irony import ironic_turn, praises
from .tense import en_deadline, is_future, is_lasting, planned
from .en import _JOBS, match_clause, strip_lead
from .mood import is_hypothetical, is_momentary, is_sarcastic
from .narrative import (dated, dropped_subject, front_time, is_event, is_gerund_subject, is_phatic,
                        is_presentative, is_task, narrative_draft)
from .person import _objects, third_person
from .quantities import en_bare_age, en_embedded_age, en_measured, en_turning

_I = re.IGNORECASE
_CLAUSE_SPLIT = re.compile(
    r"\s*;\s*|(?<!\d):\s+|\s+but\s+|,\s+(?:and\s+|so\s+|because\s+|but\s+)?|\s+[—–]\s+|\s+-\s+"
    r"|\s+(?:and|so|because)\s+(?=(?:i|i'm|i've|i'd|my|we|we're|we've)\b)(?!i\s+(?:are|were)\b)"
    r"|\s+and\s+(?=(?:then\s+|now\s+|also\s+)?(?:joined|moved|started|switched|quit|left|took|became|relocated)\b)"
    r"|\s+and\s+(?=(?:also\s+|now\s+|really\s+)?(?:want|plan|hope|need|intend|would like|'d like|'d love)\s+to\b)",
    _I,
)
_FIRST = re.compile(r"^(?:i|i'm|i've|i'd|i'll|we|we're|we've|my|our)\b", _I)
_ADDRESS_ME = re.compile(r"^(?:hey,?\s+|so,?\s+|small thing\s*[-–—,]?\s*)*(?:could|can|would|will)\s+you\s+(?:please\s+)?"
                         r"(?P<ask>call me\s+[^\W\d_][\w'-]*(?:\s+(?:instead|from now on|now))*)(?:\s+please)?\s*[?.!]*$", _I)
"""A request to be called by a name ("could you call me Theo instead?") states the name."""
_WITH_SOMEONE = re.compile(r"^(?:my|our)\s+[\w-]+\s+and\s+(?:i|me)\b", _I)
"""A subject of the user and someone close ("my brother and I"): a statement about the user too."""
_FIRST_SUBJECT = re.compile(r"^(?:i|i'm|i've|i'd|i'll|we|we're|we've)\b", _I)
_OTHER = re.compile(r"^(?:he|she|they|his|her|their|they're|he's|she's|that's|this is|these|those|you|your)\b", _I)
_IT = re.compile(r"^it(?:'s|\s+is|\s+was)?\b\s*", _I)
_DROPPED_SUBJECT = re.compile(
    r"^(?:(?:just|recently|finally|also|then|now|currently|mostly|still)\s+)*"
    r"(?P<verb>moved|relocated|live|living|work|working|worked|started|joined|switched|quit|left|took|teach|"
    r"teaching|love|hate|prefer|became|studying|learning|trying|planning|based|doing|[a-z]{3,}ing)\b",
    _I,
)
_JOB_CHANGE = re.compile(r"\b(?:left|quit|joined|new job|switched jobs|changed jobs|laid off|resigned|"
                         r"start(?:ing)? (?:at|with)|joining)\b", _I)
_BARE_AT = re.compile(r"^(?:(?:currently|now|still|for now)\s+)*(?:at|with)\s+(?P<v>(?-i:[A-Z])\S*(?:\s+(?-i:[A-Z])\S*)*)$", _I)
"""In a turn about changing jobs, "currently still at Vodafone" is the employer now."""
_SHARED_IM = re.compile(r"^(?P<h>(?:i'm|i am)\s+[\w-]+)\s+and\s+(?P<g>[a-z]{3,}ing\b.*)$", _I)
"""Mechanism (shared "I'm"): "I'm vegan and learning to bake" is two facts, "and" sharing the "I'm"."""
_SHARED_I = re.compile(r"^(?P<h>(?:i'm|i am)\s+(?:\d{1,3}|(?:an?\s+)?(?:[\w-]+\s+){0,3}[\w-]+))\s+and\s+"
                       r"(?P<v>(?:only|also|usually|often|never|always|still|mostly|rarely|sometimes|just|recently|now)\s+[a-z]{2,}\b.*)$", _I)
"""Mechanism (shared "I"): "I'm a busy surgeon and only read on my commute", "I'm 62 and just retired": the
second conjunct, opened by an adverb and a verb, is the user's own clause."""
_NOW_AT = re.compile(r"^i'?m\s+(?:now\s+)?at\s+(?P<v>(?-i:[A-Z])\S*(?:\s+(?-i:[A-Z])\S*)*)$", _I)
_APPOSITION = re.compile(r"^(?:a|an)\s+\S", _I)
_AS_ROLE = re.compile(rf"^(?:as|being)\s+(?P<v>(?:a|an)\s+(?!(?:result|matter|whole|rule|side|reminder|bonus|"
                      rf"joke|treat|favou?r|courtesy|start|test|example|heads)\b)(?:[\w+#./-]+\s*){{1,4}})$", _I)
_FAMILY = (
    r"(?:sister|brother|wife|husband|partner|girlfriend|boyfriend|mom|mum|mother|dad|father|parents|son|"
    r"daughter|kids|children|child|baby|grandma|grandmother|grandpa|grandfather|twins?|fianc[ée]e?|family)"
)
_RELATIVE = re.compile(
    rf"^(?:my|our)\s+(?:(?:older|younger|little|big|elder|oldest|youngest)\s+)?(?P<rel>{_FAMILY})\b", _I
)
_SOMEONE = re.compile(
    r"^(?:my|our)\s+(?:best\s+)?(?:friend|boss|manager|colleague|coworker|co-worker|roommate|neighbou?r|team|teacher|"
    r"doctor|landlord|client|advisor|supervisor|lead|mentor)s?\b", _I
)
_STATIVE = re.compile(
    r"^(?:is|are|was|lives|live|works|work|has|have|likes|loves|hates|studies|goes to|attends|speaks|just turned|"
    r"turned|is allergic)\b", _I
)
_ROLE_TAIL = re.compile(
    rf"^(?P<head>(?:i'm|i am|i work as|i'm working as)\s+(?:currently\s+|now\s+)?(?:a|an)\s+(?:[\w+#./-]+\s+){{0,3}}?"
    rf"{_JOBS}s?)\s+(?P<tail>(?:at|for|with|working|doing|on|mostly|mainly)\b.*|(?:based\s+)?(?:in|from)\s+(?-i:[A-Z]).*)$",
    _I,
)
_WORK_AS = re.compile(rf"^(?P<head>i\s+(?:\w+\s+)?work\s+(?:at|for)\s+.+?)\s+as\s+(?P<job>(?:a|an)\s+.+)$", _I)
_QUESTION_CLAUSE = re.compile(
    r"^(?:what|what's|whats|how|how's|why|where|when|who|which|do|does|did|can|could|would|should|is|are|will|"
    r"shall|any|anything|is there|any idea)\b",
    _I,
)
_REQUEST = re.compile(
    r"^(?:please\s+)?(?:can you|could you|would you|will you|help me|tell me|show me|give me|let me know|"
    r"write|explain|translate|summari[sz]e|create|generate|list|find|fix|compare|describe|draft|make|plan|"
    r"recommend|suggest|review|check)\b",
    _I,
)


def is_request(sentence: str) -> bool:
    """A request to the assistant ("explain …", "can you …"), not a presentative ("Let me tell you about …")."""
    return _REQUEST.match(sentence) is not None and not is_presentative(sentence)


_WORD = re.compile(r"[A-Za-z][A-Za-z'+#-]*")
_SMALL_TALK = frozenset(
    """thanks thank wow awesome great cool nice amazing glad happy sorry congrats congratulations hey hi
    hello yeah yes totally definitely sounds good fun lovely sweet true agree omg haha lol hope pretty
    super sure right okay cute beautiful wonderful incredible fantastic exciting excited enjoy hear
    care take bye see soon talk later chat catch let know glad things thing stuff lot keep doing going
    good bad best feel feels felt awesome makes make made totally absolutely especially wait believe
    imagine proud luck wish appreciate sounds miss tell know guess think mean user""".split()
)


@dataclass
class _Turn:
    """What the clauses of one turn have established so far."""

    subject: str = ""
    """"user", "other" or "" (not yet known)."""
    antecedent: str = ""
    """The object of the last draft, for a following "it"."""
    named: bool = False
    job_change: bool = False
    """The turn says the user changed jobs ("I left X", "joined"): "now I'm at Y" is the new employer."""
    task: bool = False
    described: bool = False
    """A self-description heading ("About me:") opened the turn: bare noun phrases after it are the user's."""
    """The turn asks the assistant for help: side events are context, not notes."""


def user_drafts(text: str, leftovers: list[str]) -> list[Draft]:
    """Drafts from an English user turn; unmatched first-person statements go to `leftovers`."""
    out: list[Draft] = []
    split = sentences(text)
    task = any(is_task(strip_lead(sentence)) for sentence, _ in split)
    ironic = len(split) > 1 and ironic_turn([sentence for sentence, _ in split])  # one sentence: is_sarcastic
    introduced = _Turn()  # a name or heading opens a self-description that runs on into the next sentences
    for sentence, is_question in split:
        if is_hypothetical(sentence) or is_sarcastic(sentence) or (ironic and praises(sentence)):
            continue
        address = _ADDRESS_ME.match(strip_lead(sentence)) if is_question else None
        clauses = [address.group("ask")] if address else _clauses(sentence)  # how to address the user is a fact
        if not address and (is_question or is_request(strip_lead(sentence))):
            clauses = statements_around(clauses, _statements_before_question(clauses))
        momentary = is_momentary(sentence) and not is_future(sentence)
        turn = _Turn(job_change=bool(_JOB_CHANGE.search(text)), task=task or is_vent(sentence),
                     named=introduced.named, described=introduced.described)
        for clause in clauses:
            _clause(clause, turn, out, leftovers, momentary)
        introduced = turn
    return out


def _clauses(sentence: str) -> list[str]:
    parts = _CLAUSE_SPLIT.split(sentence.strip().rstrip(".!?…"))
    clauses = [c.strip(" ,.;:!?…\"'") for c in parts if c and c.strip(" ,.;:!?…\"'")]
    return [part for clause in clauses for part in _shared_im(clause)]


_NAME_FROM = re.compile(r"^(?P<h>(?:i'm|i am)\s+(?-i:[A-Z][a-z]+))\s+(?P<f>from\s+(?-i:[A-Z]).*)$", _I)
"""Mechanism (name and origin): "I'm Tom from Austin" is a name and where the user is from."""


def _shared_im(clause: str) -> list[str]:
    named = _NAME_FROM.match(clause)
    if named:
        return [named.group("h"), f"I'm {named.group('f')}"]
    m = _SHARED_IM.match(clause)
    if m:
        return [m.group("h"), f"I'm {m.group('g')}"]
    m = _SHARED_I.match(clause)
    return [m.group("h"), f"I {m.group('v')}"] if m else [clause]


def _statements_before_question(clauses: list[str]) -> list[str]:
    kept = []
    for clause in clauses[:-1]:
        body = strip_lead(clause)
        if _QUESTION_CLAUSE.match(body) or _REQUEST.match(body):
            break
        kept.append(clause)
    return kept


def _clause(clause: str, turn: _Turn, out: list[Draft], leftovers: list[str], momentary: bool) -> None:
    body = strip_lead(clause)
    if not body or is_phatic(body):
        return
    if is_wish_request(body):
        return
    if is_self_intro(body):
        turn.subject, turn.described = "user", True
        return
    body, when = front_time(body)
    noted = en_deadline(body) if turn.subject != "other" else None
    noted = noted or (en_bare_age(body) if turn.subject == "user" or turn.named else None) or en_turning(body)
    if noted is not None:
        out.append(noted)
        return
    if not _FIRST_SUBJECT.match(body) and turn.subject != "other":
        narrative = _embedded_preference(body) or narrative_draft(body, when)
        if narrative is not None:
            out.append(narrative)
            return
    if _WITH_SOMEONE.match(body):  # "my brother and I are driving to Krakow": the user is in the subject
        turn.subject = "user"
        if not momentary or is_event(body):
            _leftover(body, leftovers, when)
        return
    relative = _RELATIVE.match(body)
    if relative:
        turn.subject = "other"
        if _STATIVE.match(body[relative.end():].strip()):
            out.append(relative_draft(body))
        return
    body = _resolve(body, turn)
    if not body:
        return
    age = en_embedded_age(body)
    if age is not None:
        out.append(age)
    for part in _role_parts(body):
        draft = en_graded(part, match_clause)
        if draft is None:
            event = is_event(part)
            if turn.subject == "user" and _FIRST.match(part) and (not momentary or event) \
                    and not (turn.task and event and not is_lasting(part)):
                _leftover(part, leftovers, when)
            continue
        if momentary and draft.type is T.USER_GOAL:
            continue
        draft = planned(_with_when(draft, when), part)
        out.append(draft)
        out.extend(employer_city(draft))
        turn.named = turn.named or draft.attribute == "name"
        turn.antecedent = (draft.entities[0] if draft.entities else "") or turn.antecedent


_IN_PLACE = re.compile(r"\s+in\s+(?P<p>(?-i:[A-Z])[\w-]+(?:\s+(?-i:[A-Z])[\w-]+)?)$", _I)
_PLACED_ROLES = frozenset({"company", "occupation", "education"})
_PLACED_STUDY = re.compile(r"^User (?:is )?(?:studying|studies|teaches|teaching|works|working)\b")


def employer_city(draft: Draft) -> list[Draft]:
    """Mechanism (work or study in a place): "User works at a robotics lab in Aarhus", "User teaches primary
    school music in Galway", "User is studying law in Nairobi" also say where the user is, a
    location of its own (a month, a weekday or a language after "in" is no place)."""
    if draft.attribute not in _PLACED_ROLES and not _PLACED_STUDY.match(draft.content):
        return []
    at = _IN_PLACE.search(draft.content)
    if at is None or not WHEREABOUTS.search(f"in {at.group('p')}"):
        return []
    place = at.group("p")
    verb = "studies" if draft.attribute == "education" or re.search(r"\bstud(?:y|ies|ying)\b", draft.content) else "works"
    return [Draft(T.USER_FACT, f"User {verb} in {place}", 0.8, "location", None, False, (place,))]


def _with_when(draft: Draft, when: str) -> Draft:
    """Mechanism (time kept with its statement): a fronted time ("Starting next week, I'll …", "By the end of the
    year I want …") goes back to the end of the note the rules wrote from the rest of the clause."""
    if not when or when.lower() in draft.content.lower():
        return draft
    return replace(draft, content=f"{draft.content} {when}")


_EMBEDDED_LIKE = re.compile(r"\b(?:why|that|how much|because)\s+(?P<c>(?:i|we)\s+(?:really\s+|just\s+)?"
                            r"(?:love|enjoy|like|adore|prefer)\s+.+)$", _I)


def _embedded_preference(clause: str) -> Draft | None:
    """ "It reminds me why I love hiking": the embedded first-person liking is read on its own."""
    m = _EMBEDDED_LIKE.search(clause)
    return match_clause(m.group("c")) if m else None


def _resolve(body: str, turn: _Turn) -> str:
    """The clause with its subject made explicit, or "" when it is not about the user."""
    if _FIRST.match(body):
        if _SOMEONE.match(body):
            turn.subject = "other"
            return ""
        turn.subject = "user"
        at = _NOW_AT.match(body)
        return f"I work at {at.group('v')}" if at and turn.job_change else body
    if _IT.match(body) and not re.match(r"^it\s+(?:has|must|should|needs)\b", body, _I):
        return _it(body, turn)
    if _OTHER.match(body) or body.lower().startswith("not "):
        turn.subject = "other" if _OTHER.match(body) else turn.subject
        return ""
    return _implicit(body, turn)


def _implicit(body: str, turn: _Turn) -> str:
    if body.lower().endswith(" here") and match_clause(body) is not None:  # "Retired nurse here": a self-introduction
        turn.subject = "user"
        return body
    now_at = _BARE_AT.match(body) if turn.job_change else None
    if now_at:
        turn.subject = "user"
        return f"I work at {now_at.group('v')}"
    described = telegraphic(body) if turn.subject == "user" or turn.named else None
    if described is not None:
        turn.subject = "user"
        return described
    role = None if is_gerund_subject(body) else _AS_ROLE.match(body)
    if role:
        turn.subject = "user"
        return f"I'm {role.group('v')}"
    if turn.named and _APPOSITION.match(body):
        return f"I'm {body}"
    restored = dropped_subject(body) if turn.subject in ("", "user") else None
    if restored is not None:
        turn.subject = "user"
        return restored
    verb = _DROPPED_SUBJECT.match(body)
    if verb and turn.subject in ("", "user") and not is_gerund_subject(body):
        turn.subject = "user"
        return ("I'm " if verb.group("verb").lower().endswith("ing") or verb.group("verb").lower() == "based"
                else "I ") + body[:1].lower() + body[1:]
    restored = verb_first(body) if turn.subject == "user" else None
    restored = restored or (telegraphic(body, heading=True) if turn.described or turn.named else None)
    if restored is not None:
        return restored
    return body if turn.subject != "other" else ""


def _it(body: str, turn: _Turn) -> str:
    if turn.subject != "user" or not turn.antecedent:
        return ""  # a dangling pronoun: nothing in this turn says what "it" is
    rest = _IT.sub("", body, count=1)
    return f"{turn.antecedent} is {rest}"


_WEEKLY_TAIL = re.compile(r"\s+(?P<s>(?:one|two|three|four|five|six|\d)\s+(?:days?|nights?|shifts?)\s+a\s+week\b.*)$", _I)
_STUDENT = re.compile(r"\b(?:student|undergrad(?:uate)?|postgrad(?:uate)?|phd candidate|doctoral candidate|postdoc|fresher)\s*$", _I)


def _role_parts(body: str) -> list[str]:
    """A role and its tail as separate clauses ("I'm a midwife working weekends")."""
    schedule = _WEEKLY_TAIL.search(body)
    if schedule is not None:  # "… as a locksmith two mornings a week": the role, and how often
        return [*_role_parts(body[:schedule.start()]), f"I work {schedule.group('s')}"]
    work_as = _WORK_AS.match(body)
    if work_as:
        return [work_as.group("head"), f"I'm {work_as.group('job')}"]
    m = _ROLE_TAIL.match(body)
    if m is None:
        return [body]
    tail = m.group("tail")
    low = tail.lower()
    if low.startswith("based "):
        tail = f"I'm {tail}"
    elif low.startswith("at ") and _STUDENT.search(m.group("head")):
        return [body]  # "a geology student at Tartu": the school belongs with the role, it is no employer
    elif low.startswith(("at ", "for ", "with ", "in ")):
        tail = f"I work {tail}"
    elif low.startswith("from "):
        tail = f"I'm {tail}"
    else:
        tail = f"I'm {tail}"
    return [m.group("head"), tail]


def relative_draft(body: str) -> Draft:
    """A stative fact about a relative, as the user's family fact ("User's cousin lives in Quito")."""
    text = "User's " + _objects(re.sub(r"^(?:my|our)\s+", "", body, flags=_I))
    return Draft(T.USER_FACT, text, 0.7, "family", None, False, entities_in(text, prose=True))


_ADDRESSED = re.compile(r"^(?:[\w']+\W+){1,4}?(?:you|your|you're|ya)\b", _I)
"""A first-person clause addressed to the other person ("I'm proud of you", "I hope you…"); "you" further on,
in a relative clause ("I finished the book you recommended"), leaves the clause about the user."""


def _leftover(clause: str, leftovers: list[str], when: str = "") -> None:
    if _ADDRESSED.match(clause) or re.search(r"\byou\b", clause, _I) and not is_event(clause):
        return
    if is_dangling_opinion(clause):
        return
    count = content_words(clause)
    if count > 1 or (count and (len(_WORD.findall(clause)) > 4 or en_measured(clause))) or (when and is_event(clause)):
        leftovers.append(dated(third_person(clause), when))


def content_words(text: str) -> int:
    """How many words of `text` are neither stop words nor small talk."""
    count = 0
    for word in _WORD.findall(text):
        low = word.lower()
        if (len(low) > 2 or "+" in low or "#" in low) and low not in EN_STOPWORDS and low not in _SMALL_TALK:
            count += 1
    return count
