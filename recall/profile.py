"""The standing profile pushed into every recall: which entries, in which order, within which budget. Pure.

The profile is the user's L3 memories: who they are, where they live now, the people and pets around them,
standing constraints (diet, allergies, health limits, schedule, budget, rules at work) and how they want to
be answered (`core.domains.profile_layer` decides membership when a memory is consolidated; a single-valued slot holds
one value, so a superseded fact leaves the profile when its replacement arrives).

Every recall starts with it, asked for or not, within `profile_share` of the token budget: entries the
question's domain or words touch first, then the rest by importance and recency (the shared S1 score with
its `domain` component). A sensitive entry (health, mental health, religion, sexuality, debts) is shown
only when the question's domains include its own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

from engram.core.config import RecallConfig
from engram.core.domains import domains_of, may_show
from engram.core.scoring import ScoreParts
from engram.core.text import estimate_tokens, terms
from engram.projections.ports import profile_order
from engram.schemas.memory import MemoryRecord

_MOVE = re.compile(
    r"\b(?:moved|moving|relocat\w*|new (?:place|flat|apartment|house|home)|signed a lease)\b|"
    r"搬|新家|新房子|租的房子|去\S{1,4}发展|到\S{1,6}(?:一周|几天|一个月|半个月|半年)了", re.IGNORECASE)
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


class Supersession(NamedTuple):
    """A later entry of kind `change` in `domain` replaces the earlier entries of that domain that match
    `replaced` (any, when None) and, when `same_subject`, share a word with it."""

    change: re.Pattern[str]
    domain: str
    replaced: re.Pattern[str] | None
    same_subject: bool = False


SUPERSESSIONS = (Supersession(_MOVE, "home", None), Supersession(_DIET_CHANGE, "food", _DIET_REGIME),
                 Supersession(_JOB_CHANGE, "work", _EMPLOYMENT), Supersession(_ENGAGEMENT_CHANGE, "work", _ENGAGEMENT),
                 Supersession(_RESCHEDULE, "schedule", None, same_subject=True))
"""A move replaces where the user lived before; a change of diet the diet regime held before; a new job
the old employer, role and shifts; a new project or client the one before; a schedule moved to another
time the earlier time of the same thing (the two name it: "video call with my parents")."""

_SPEAKER = re.compile(r"^(?:User said: |用户说：|User |用户)")


@lru_cache(maxsize=65536)
def _changes(content: str) -> tuple[tuple[bool, bool, bool], ...]:
    """Per supersession: (the text is such a change, it is in the changed domain, it is of the replaced kind)."""
    found = domains_of(content)
    return tuple((bool(rule.change.search(content)), rule.domain in found,
                  rule.replaced is None or bool(rule.replaced.search(content))) for rule in SUPERSESSIONS)


@lru_cache(maxsize=65536)
def _subject_terms(content: str) -> frozenset[str]:
    return frozenset(terms(_SPEAKER.sub("", content)))


def superseded(records: Sequence[MemoryRecord]) -> set[str]:
    """Entries a later change replaced (a single-valued slot does this on its own; these facts are
    free-form): every earlier entry of the changed domain, or of its replaced kind, leaves the profile."""
    gone: set[str] = set()
    marks = [(r, _changes(r.content)) for r in records]
    for n, rule in enumerate(SUPERSESSIONS):
        changes = [r for r, m in marks if m[n][0] and (rule.replaced is None or m[n][1])]
        if not changes:
            continue
        latest = max(r.created_at for r in changes)
        gone.update(r.memory_id for r, m in marks
                    if r.created_at < latest and m[n][1] and not m[n][0] and m[n][2]
                    and (not rule.same_subject or _shares_subject(r, changes)))
    return gone


def _shares_subject(record: MemoryRecord, changes: list[MemoryRecord]) -> bool:
    """A later change names what `record` is about (a word in common besides who said it)."""
    own = _subject_terms(record.content)
    return any(c.created_at > record.created_at and own & _subject_terms(c.content) for c in changes)


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
    shown = [r for r in records if may_show(question_domains, r.content)]
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
