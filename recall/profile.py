"""The standing profile pushed into every recall: which entries, in which order, within which budget. Pure.

The profile is the user's L3 memories: who they are, where they live now, the people and pets around them,
standing constraints (diet, allergies, health limits, schedule, budget, rules at work) and how they want to
be answered (`core.domains.profile_layer` decides membership when a memory is consolidated; a single-valued slot holds
one value, so a superseded fact leaves the profile when its replacement arrives).

Every recall starts with it, asked for or not, within `profile_share` of the token budget: entries the
question's domain or words touch first, then the rest by importance and recency (the shared S1 score with
its `domain` component). A sensitive entry (health, mental health, religion, sexuality, debts: its words
or its extraction mark say so) is shown only when the question's domains reach its own (`core.sensitive`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import lru_cache
from typing import NamedTuple

from engram.core.config import RecallConfig
from engram.core.domains import domains_of
from engram.core.sensitive import may_show
from engram.core.scoring import ScoreParts
from engram.core.text import estimate_tokens, terms
from engram.core.text_caches import registered
from engram.projections.ports import profile_order
from engram.schemas.memory import MemoryRecord

_MOVE_VERB = re.compile(r"\b(?:mov(?:e|es|ed|ing)|relocat(?:e|es|ed|ing|ion))\b", re.IGNORECASE)
_MOVE_CUE = re.compile(
    r"\b(?:new (?:place|flat|apartment|house|home)|signed a lease)\b|"
    r"搬(?!东西|运|砖|桌|椅|箱|货)|新家|新房子|租的房子|去\S{1,4}发展|到\S{1,6}(?:一周|几天|一个月|半个月|半年)了",
    re.IGNORECASE)
_CLAUSE_END = re.compile(r"[.!?;,:()\n]")
_WORD = re.compile(r"[\w'’-]+")
_NOT_MOVED = frozenset({"on", "by", "up", "forward", "ahead"})
"""Words after the verb that make it no move of home: "move on", "moved by the film", "moved up a slot"."""
_OBJECT_WORDS = frozenset({"the", "a", "an", "my", "our", "your", "his", "her", "their", "its", "it", "them",
                           "this", "that", "these", "those", "some"})
_HOME_OBJECTS = frozenset({"house", "houses", "home", "homes", "family", "stuff", "things", "belongings",
                           "furniture", "everything", "apartment", "apartments", "flat", "flats", "place",
                           "kids", "in", "out"})
_DESTINATION = frozenset({"to", "into", "from", "till", "until"})
_FILLER = frozenset({"the", "a", "an", "next", "new", "our", "my", "their", "this", "that"})
_PASSIVE = frozenset({"was", "were", "been", "be", "got", "get", "gets", "is", "are", "being"})
_NOT_HOME = frozenset({"schedule", "work"})
"""What is moved or where to when a move is a rescheduling (a meeting, a call, to Friday) or a job's."""
_DIET_REGIME = re.compile(r"(?<![a-z])(?:vegetarian|vegan|pescatarian|keto|paleo|low-carb|carnivore)(?![a-z])|"
                          r"吃素|素食|生酮|断食", re.IGNORECASE)
_DIET_CHANGE = re.compile(
    r"\b(?:no longer|not \w+ anymore|quit|stopped|gave up|back (?:on|to)|adding \w+ back|eating \w+ again|"
    r"started eating)\b|不再|不吃素|开始吃|恢复|放弃|不玩了|戒了", re.IGNORECASE)
_JOB_CHANGE = re.compile(
    r"\b(?:(?:took|accepted|got|landed|start(?:ed|ing)|began) (?:the|a|my|this)? ?(?:new )?(?:job|role|position)|"
    r"new (?:job|role|position|employer)|first day at|made the leap|resigned|laid off|left my job|"
    r"changed jobs|switched jobs)\b|换工作|跳槽|辞职了|辞了|离职了|入职|新工作|新公司|新单位|调到", re.IGNORECASE)
_EMPLOYMENT = re.compile(r"\b(?:job|jobs|works? (?:at|for|as)|employer|shifts?|clinic|hospital|ward|office|icu)\b|"
                         r"公司|上班|工作|单位|值班|加班|夜班|白班", re.IGNORECASE)
_ENGAGEMENT_CHANGE = re.compile(
    r"\bnew (?:project|client|account|team)\b|(?:project|client|项目|客户|团队)\s*换了|换了?(?:个|新)?\s*(?:project|client|"
    r"项目|客户|团队)|新\s*(?:project|client|项目|客户|团队)", re.IGNORECASE)
_ENGAGEMENT = re.compile(r"\b(?:project|client|account)s?\b|项目|客户", re.IGNORECASE)
_RESCHEDULE = re.compile(
    r"\b(?:moved|changed|switched|pushed|rescheduled|shifted) (?:\w+ ){0,3}(?:to|until)\b|\bnow (?:on|at|every)\b|"
    r"\binstead\b|改到|改成|改在|改为|挪到|换到|推迟到|提前到", re.IGNORECASE)

_SPEAKER = re.compile(r"^(?:User said: |用户说：|User |用户)")


def is_move(text: str) -> bool:
    """Whether `text` tells of a move of residence: a move verb with no object, a place or home for object
    or destination ("we moved to Seattle", "moving back home", "moved house"), or a move cue (a new flat, a
    lease, 搬家). Not a rescheduling or a job's move (what is moved, or where to, is a time, a meeting or
    work: "moving the meeting to Friday"), not "moved by" or "move on", not a thing's passive move."""
    if _MOVE_CUE.search(text):
        return True
    return any(_moves_home(text[:m.start()], m.group(0).lower(), text[m.end():]) for m in _MOVE_VERB.finditer(text))


def _moves_home(before: str, verb: str, after: str) -> bool:
    previous = _WORD.findall(before.lower())[-1:]
    if previous and (domains_of(previous[0]) & _NOT_HOME or (verb.endswith("ed") and previous[0] in _PASSIVE)):
        return False
    words = _WORD.findall(_CLAUSE_END.split(after, maxsplit=1)[0].lower())
    if not words:
        return True
    first = words[0]
    if first in _NOT_MOVED:
        return False
    if first in _OBJECT_WORDS:
        return bool(_HOME_OBJECTS.intersection(words[1:4]))
    if first in _DESTINATION or first in _HOME_OBJECTS:
        return _home_destination(words)
    return not domains_of(first) & _NOT_HOME and _home_destination(words)


def _home_destination(words: list[str]) -> bool:
    """No "to/from <a time, a meeting, work>" in the clause ("moved to Seattle" is one; "to 10am" is not)."""
    for n, word in enumerate(words):
        if word in _DESTINATION:
            target = next((w for w in words[n + 1:] if w not in _FILLER), "")
            if not target or target[0].isdigit() or domains_of(target) & _NOT_HOME:
                return False
    return True


class Supersession(NamedTuple):
    """A later entry that is a `change` in `domain` replaces the earlier entries of that domain that match
    `replaced` (any, when None) and, when `same_subject`, share a word with it."""

    change: Callable[[str], object]
    domain: str
    replaced: re.Pattern[str] | None
    same_subject: bool = False


SUPERSESSIONS = (Supersession(is_move, "home", None), Supersession(_DIET_CHANGE.search, "food", _DIET_REGIME),
                 Supersession(_JOB_CHANGE.search, "work", _EMPLOYMENT),
                 Supersession(_ENGAGEMENT_CHANGE.search, "work", _ENGAGEMENT),
                 Supersession(_RESCHEDULE.search, "schedule", None, same_subject=True))
"""A move of residence replaces where the user lived before; a change of diet the diet regime held before;
a new job the old employer, role and shifts; a new project or client the one before; a schedule moved to
another time the earlier time of the same thing (the two name it: "video call with my parents")."""


Marks = tuple[tuple[bool, bool, bool], ...]
"""Per supersession: (the text is such a change, it is in the changed domain, it is of the replaced kind)."""


@registered
@lru_cache(maxsize=65536)
def supersession_marks(content: str) -> Marks:
    """What `SUPERSESSIONS` read in one entry's text (kept by the profile processor instead of the text)."""
    found = domains_of(content)
    return tuple((bool(rule.change(content)), rule.domain in found,
                  rule.replaced is None or bool(rule.replaced.search(content))) for rule in SUPERSESSIONS)


@registered
@lru_cache(maxsize=65536)
def subject_keys(content: str) -> frozenset[str]:
    """What an entry is about, for the same-subject rules: its words besides who said it, each as a short
    digest (the profile processor keeps these instead of the text)."""
    return frozenset(hashlib.blake2b(term.encode(), digest_size=6).hexdigest()
                     for term in terms(_SPEAKER.sub("", content)))


def superseded(records: Sequence[MemoryRecord]) -> set[str]:
    """Profile entries a later change replaced (a single-valued slot does this on its own; these facts are
    free-form): every earlier entry of the standing profile (L3) of the changed domain, or of its replaced
    kind, leaves the profile. A change told anywhere among `records` counts; only profile entries leave
    (an ordinary memory found by a search is no standing fact the change replaces)."""
    gone = superseded_marked([(r.memory_id, r.created_at, supersession_marks(r.content), subject_keys(r.content))
                              for r in records])
    return {r.memory_id for r in records if r.memory_id in gone and r.layer == "L3"}


def superseded_marked(marked: Sequence[tuple[str, datetime, Marks, frozenset[str]]]) -> set[str]:
    """`superseded` on (memory id, creation time, `supersession_marks`, `subject_keys`) of entries."""
    gone: set[str] = set()
    for n, rule in enumerate(SUPERSESSIONS):
        changes = [(created, subject) for _, created, m, subject in marked
                   if m[n][0] and (rule.replaced is None or m[n][1])]
        if not changes:
            continue
        latest = max(created for created, _ in changes)
        gone.update(memory_id for memory_id, created, m, subject in marked
                    if created < latest and m[n][1] and not m[n][0] and m[n][2]
                    and (not rule.same_subject or _shares_subject(created, subject, changes)))
    return gone


def _shares_subject(created: datetime, subject: frozenset[str],
                    changes: list[tuple[datetime, frozenset[str]]]) -> bool:
    """A later change names what the entry is about (a word in common besides who said it)."""
    return any(when > created and subject & words for when, words in changes)


def standing_profile(records: Sequence[MemoryRecord]) -> list[MemoryRecord]:
    """The profile as the user reads it: the current entries (no superseded one), in `profile_order`."""
    gone = superseded(records)
    return sorted((r for r in records if r.memory_id not in gone), key=profile_order)


def profile_budget(config: RecallConfig, token_budget: int | None) -> int:
    """The profile's tokens: `profile_share` of the request's budget (or the configured one)."""
    return int(config.profile_share * (token_budget or config.token_budget))


def select_profile(records: Sequence[MemoryRecord], scores: dict[str, ScoreParts], question_domains: frozenset[str],
                   budget_tokens: int, limit: int) -> list[MemoryRecord]:
    """The entries pushed (the caller leaves out the `superseded` ones and those ranked as memories): shown
    ones (sensitive only where the question's domains reach them), those the
    question touches (match above zero) first, then by S1 score, ties by id; while they fit the budget."""
    shown = [r for r in records if may_show(question_domains, r.content, r.sensitive)]
    ranked = sorted(shown, key=lambda r: (scores[r.memory_id].match <= 0, -scores[r.memory_id].score, r.memory_id))
    chosen: list[MemoryRecord] = []
    used = 0
    for record in ranked:
        if len(chosen) >= limit:
            break
        tokens = estimate_tokens(record.content)
        if used + tokens > budget_tokens:
            continue
        chosen.append(record)
        used += tokens
    return chosen
