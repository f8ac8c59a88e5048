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

import numpy as np

from engram.core.config import RecallConfig
from engram.core.domains import domains_of
from engram.core.sensitive import may_show
from engram.core.scoring import ScoreParts
from engram.core.text import estimate_tokens, terms
from engram.core.text_caches import registered
from engram.projections.ports import MemoryStore, SearchHit, profile_order
from engram.schemas.memory import MemoryRecord

from .home_slot import ORIGIN, about_where, home_claim, is_move, moved_here, named_places  # noqa: F401 (is_move: part of this API)
from .slots import about_job, ended_keys, job_claim, rate_amounts, rate_claim

_DIET_REGIME = re.compile(r"(?<![a-z])(?:vegetarian|vegan|pescatarian|keto|paleo|low-carb|carnivore)(?![a-z])|"
                          r"吃素|素食|生酮|断食", re.IGNORECASE)
_DIET_CHANGE = re.compile(
    r"\b(?:no longer|not \w+ anymore|quit|stopped|gave up|back (?:on|to)|adding \w+ back|eating \w+ again|"
    r"started eating)\b|不再|不吃素|开始吃|恢复|放弃|不玩了|戒了", re.IGNORECASE)
_ENGAGEMENT_CHANGE = re.compile(
    r"\bnew (?:project|client|account|team)\b|(?:project|client|项目|客户|团队)\s*换了|换了?(?:个|新)?\s*(?:project|client|"
    r"项目|客户|团队)|新\s*(?:project|client|项目|客户|团队)", re.IGNORECASE)
_ENGAGEMENT = re.compile(r"\b(?:project|client|account)s?\b|项目|客户", re.IGNORECASE)
_RESCHEDULE = re.compile(
    r"\b(?:moved|changed|switched|pushed|rescheduled|shifted) (?:\w+ ){0,3}(?:to|until)\b|\bnow (?:on|at|every)\b|"
    r"\binstead\b|改到|改成|改在|改为|挪到|换到|推迟到|提前到", re.IGNORECASE)

_SPEAKER = re.compile(r"^(?:User said: |用户说：|User |用户)")


class Supersession(NamedTuple):
    """A later entry that is a `change` in `domain` replaces the earlier entries of that domain that match
    `replaced` (any, when None) and, when `same_subject`, share a word with it (with `ended`, a word of
    what it says has ended: `Marked.values`). `about`, when given, says which entries are of the domain
    instead of its cue words. A `slot` holds one value: the latest change replaces the earlier changes too,
    and not the entries that name the value it names (`value_of`: the places of a home, the amount of a
    rate; none, when not given); an older entry that names no value leaves only when the newest change
    `sweeps` (a change of home does, a residence restated does not)."""

    change: Callable[[str], object]
    domain: str
    replaced: Callable[[str], object] | None
    same_subject: bool = False
    about: Callable[[str], object] | None = None
    slot: bool = False
    value_of: Callable[["Marked"], frozenset[str] | None] | None = None
    sweeps: Callable[["Marked"], bool] | None = None
    ended: bool = False


def _ends_something(text: str) -> bool:
    return bool(ended_keys(text))


def _anything(text: str) -> bool:
    return True


def _not_origin(text: str) -> bool:
    """An entry an end may take out: not where the user comes from (a move from Halifax leaves "User is from
    Halifax" true)."""
    return not ORIGIN.search(text)


SUPERSESSIONS = (Supersession(home_claim, "home", None, about=about_where, slot=True,
                              value_of=lambda e: e.places, sweeps=lambda e: e.moves_home),
                 Supersession(_DIET_CHANGE.search, "food", _DIET_REGIME.search),
                 Supersession(job_claim, "work", None, about=about_job, slot=True),
                 Supersession(_ENGAGEMENT_CHANGE.search, "work", _ENGAGEMENT.search),
                 Supersession(_RESCHEDULE.search, "schedule", None, same_subject=True),
                 Supersession(rate_claim, "money", None, about=rate_claim, slot=True, value_of=lambda e: e.values),
                 Supersession(_ends_something, "ended", _not_origin, same_subject=True, about=_anything, ended=True))
"""Where the user lives is one slot (`recall.home_slot`): the newest statement that they live, arrived or
moved somewhere replaces the older entries about where they live, its weather and its area, that name
another place. So are the job and the rate charged (`recall.slots`): a change of job replaces the old
employer, occupation and shifts, the newest rate the older ones that name another amount. An activity
dropped, a relationship ended or a place moved away from ends the older entries that name it
(`recall.slots.ended_keys`; where the user comes from stays). A change
of diet replaces the diet regime held before; a new project or client the one before; a schedule moved to
another time the earlier time of the same thing (the two name it: "video call with my parents")."""


Marks = tuple[tuple[bool, bool, bool], ...]
"""Per supersession: (the text is such a change, it is in the changed domain, it is of the replaced kind)."""


class Marked(NamedTuple):
    """What supersession reads of one entry: its id, creation time, `supersession_marks`, `subject_keys`,
    `place_keys` (None: not known, the entry was kept before its places were), whether it tells of a
    change of home (`home_slot.moved_here`), and `value_keys` (the amount of a rate, what has ended)."""

    memory_id: str
    created: datetime
    marks: Marks
    subject: frozenset[str]
    places: frozenset[str] | None = frozenset()
    moves_home: bool = False
    values: frozenset[str] = frozenset()


@registered
@lru_cache(maxsize=65536)
def supersession_marks(content: str) -> Marks:
    """What `SUPERSESSIONS` read in one entry's text (kept by the profile processor instead of the text)."""
    found = domains_of(content)
    return tuple((bool(rule.change(content)),
                  bool(rule.about(content)) if rule.about is not None else rule.domain in found,
                  rule.replaced is None or bool(rule.replaced(content))) for rule in SUPERSESSIONS)


def _digests(words: Sequence[str]) -> frozenset[str]:
    return frozenset(hashlib.blake2b(term.encode(), digest_size=6).hexdigest() for term in words)


@registered
@lru_cache(maxsize=65536)
def subject_keys(content: str) -> frozenset[str]:
    """What an entry is about, for the same-subject rules: its words besides who said it, each as a short
    digest (the profile processor keeps these instead of the text)."""
    return _digests(terms(_SPEAKER.sub("", content)))


@registered
@lru_cache(maxsize=65536)
def place_keys(content: str) -> frozenset[str]:
    """The words of the places an entry names (`home_slot.named_places`), as `subject_keys` digests them."""
    return _digests([term for place in named_places(content) for term in terms(place)])


@registered
@lru_cache(maxsize=65536)
def value_keys(content: str) -> frozenset[str]:
    """The words of the values an entry's claims name (`slots.rate_amounts`, `slots.ended_keys`), digested as
    `subject_keys` are."""
    return _digests(sorted(rate_amounts(content) | ended_keys(content)))


def marked(record: MemoryRecord) -> Marked:
    content = record.content
    return Marked(record.memory_id, record.created_at, supersession_marks(content), subject_keys(content),
                  place_keys(content), moved_here(content), value_keys(content))


def superseded(records: Sequence[MemoryRecord]) -> set[str]:
    """Profile entries a later change replaced (a single-valued slot does this on its own; these facts are
    free-form): every earlier entry of the standing profile (L3) of the changed domain, or of its replaced
    kind, leaves the profile. A change told anywhere among `records` counts; only profile entries leave
    (an ordinary memory found by a search is no standing fact the change replaces)."""
    gone = superseded_marked([marked(r) for r in records])
    return {r.memory_id for r in records if r.memory_id in gone and r.layer == "L3"}


def superseded_marked(entries: Sequence[Marked]) -> set[str]:
    """`superseded` on what it reads of the entries (`Marked`)."""
    entries = [_padded(e) for e in entries]
    gone: set[str] = set()
    for n, rule in enumerate(SUPERSESSIONS):
        changes = [e for e in entries if e.marks[n][0] and (rule.replaced is None or e.marks[n][1])]
        if not changes:
            continue
        latest = max(e.created for e in changes)
        if rule.slot:
            gone.update(_slot_superseded(n, rule, entries, latest, [e for e in changes if e.created == latest]))
            continue
        later = [(e.created, e.values if rule.ended else e.subject) for e in changes]
        gone.update(e.memory_id for e in entries
                    if e.created < latest and e.marks[n][1] and not e.marks[n][0] and e.marks[n][2]
                    and (not rule.same_subject or _shares_subject(e.created, e.subject, later)))
    return gone


_UNMARKED = (False, False, False)


def _padded(entry: Marked) -> Marked:
    """An entry marked before the later rules were added: none of them read anything in it."""
    missing = len(SUPERSESSIONS) - len(entry.marks)
    return entry._replace(marks=entry.marks + (_UNMARKED,) * missing) if missing > 0 else entry


def _slot_superseded(n: int, rule: Supersession, entries: Sequence[Marked], latest: datetime,
                     newest: list[Marked]) -> set[str]:
    """The entries the newest claims on a one-value slot replace: the older ones of the slot, claims
    included, that name none of the values the newest claims name (`value_of`: a home's places, a rate's
    amount) but a value of their own, or any when one of the newest `sweeps` (a change of home); when the
    newest name no value, all of them; when their values were not kept (a state saved before), none."""
    found = [rule.value_of(e) for e in newest] if rule.value_of is not None else []
    if any(v is None for v in found):
        return set()  # what the newest claim holds was not kept: nothing can be told to differ
    values: frozenset[str] = frozenset().union(*(v for v in found if v is not None))
    sweeps = rule.sweeps is None or any(rule.sweeps(e) for e in newest)
    return {e.memory_id for e in entries
            if e.created < latest and (e.marks[n][1] or e.marks[n][0]) and e.marks[n][2]
            and (not values or (not values & e.subject and (sweeps or bool(_value(rule, e)))))}


def _value(rule: Supersession, entry: Marked) -> frozenset[str] | None:
    return rule.value_of(entry) if rule.value_of is not None else None


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


ProfileMembers = tuple[frozenset[str], datetime | None] | None
"""The members of the user's profile document and the time of the last change it took (None: no document)."""


def profile_and_members(store: MemoryStore, tenant: str, user: str, limit: int,
                         vector: np.ndarray) -> tuple[list[MemoryRecord], ProfileMembers]:
    """The profile entries to push, and the `ProfileMembers` of the user's profile document."""
    document = store.profile_document(tenant, user)
    return (store.profile_entries(tenant, user, limit, vector),
            (document.member_ids, document.updated_at) if document is not None else None)


def left_profile(found: list[SearchHit], members: ProfileMembers) -> set[str]:
    """The standing (L3) memories a search found that the profile document no longer holds though it has
    taken their last change: a change it was told, found by this question or not ("Tom quit judo" said
    in passing), superseded them. One newer than the document is not judged (the profile has not caught up)."""
    if members is None or members[1] is None:
        return set()
    held, as_of = members
    return {h.record.memory_id for h in found
            if h.record.layer == "L3" and h.record.memory_id not in held and h.record.updated_at <= as_of}
