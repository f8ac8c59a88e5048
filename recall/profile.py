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
from datetime import datetime
from functools import lru_cache

from engram.core.config import RecallConfig
from engram.core.domains import domains_of, may_show
from engram.core.scoring import ScoreParts
from engram.core.text import estimate_tokens
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
SUPERSESSIONS = ((_MOVE, "home", None), (_DIET_CHANGE, "food", _DIET_REGIME))
"""(a change, the domain it changes, what in that domain it replaces: any entry when None): a move
replaces where the user lived before; a change of diet replaces the diet regime held before."""


Marks = tuple[tuple[bool, bool, bool], ...]
"""Per supersession: (the text is such a change, it is in the changed domain, it is of the replaced kind)."""


@lru_cache(maxsize=65536)
def supersession_marks(content: str) -> Marks:
    """What `SUPERSESSIONS` read in one entry's text (kept by the profile processor instead of the text)."""
    found = domains_of(content)
    return tuple((bool(change.search(content)), domain in found, replaced is None or bool(replaced.search(content)))
                 for change, domain, replaced in SUPERSESSIONS)


def superseded(records: Sequence[MemoryRecord]) -> set[str]:
    """Entries a later change replaced (a single-valued slot does this on its own; these facts are
    free-form): every earlier entry of the changed domain, or of its replaced kind, leaves the profile."""
    return superseded_marked([(r.memory_id, r.created_at, supersession_marks(r.content)) for r in records])


def superseded_marked(marked: Sequence[tuple[str, datetime, Marks]]) -> set[str]:
    """`superseded` on (memory id, creation time, `supersession_marks`) triples."""
    gone: set[str] = set()
    for n, (_, _, replaced) in enumerate(SUPERSESSIONS):
        changes = [created for _, created, m in marked if m[n][0] and (replaced is None or m[n][1])]
        if not changes:
            continue
        latest = max(changes)
        gone.update(memory_id for memory_id, created, m in marked
                    if created < latest and m[n][1] and not m[n][0] and m[n][2])
    return gone


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
