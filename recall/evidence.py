"""One ranking over notes and turns, each piece of evidence shown with its words and its date.

Memories (notes) are ranked by the shared scorer; every recorded turn, user and assistant alike, is
searched by keywords beside them. The two rankings are fused by reciprocal rank fusion: a piece of
evidence scores `sum(1 / (k + rank))` over the rankings it appears in. A note and its own source turn
are one piece of evidence: the turn's rank adds to the note's, and the note carries the sentence(s) of
that turn holding the specifics (names, numbers, dates, titles), which extraction may have dropped. A
turn with no note among the memories is shown on its own, as a dated quote of its best sentences.
Nothing here knows a data set: it uses the question's terms, the turns' text and the log's provenance.

A turn is what the user said, unfiltered: a quoted sentence passes the same sensitive gate as a memory
(`core.sensitive.may_show`: a health condition, religion, sexuality, debt is quoted only to a question
sharing a specific domain with it), and a turn behind a fact that was superseded or replaced is not
shown on its own (it would bring the old fact back).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from engram.core.domains import domains_of
from engram.core.sensitive import may_show
from engram.core.text import clip_tokens, estimate_tokens, terms
from engram.core.text_caches import registered
from engram.projections.ports import MemoryStore, RecentTurn, TurnHit
from engram.schemas.memory import MemoryRecord

from .context import RecalledItem
from .turn_ranking import rank_turns

_SENTENCE_RE = re.compile(r"(?<=[.!?;。！？；])\s+|\n+")
_SPECIFIC_RE = re.compile(r"\d|(?<=\s)[A-Z][a-z]")
SESSION_SHARE = 0.5
"""A piece of evidence also scores this much of the best other score of its session (its other notes and
turns in the fused ranking): a conversation several of whose turns match the question is likelier the one
it asks about than a single stray match elsewhere."""
SESSION_TOP = 1
"""How many of the session's other scores lift it: only the best, so a long session is not lifted for
its length."""


@dataclass(frozen=True)
class FusionInput:
    tenant: str
    user: str
    question: str
    hidden: frozenset[str]
    """Message ids the context shows anyway (the request's own turn, the short-term window)."""
    turn_candidates: int
    k: float
    evidence_tokens: int
    turn_weight: float = 1.0
    evidence_top: int = 5
    """The best this many items quote up to `evidence_tokens`; the rest half as much (more distinct
    evidence fits the budget)."""
    withheld: frozenset[str] = frozenset()
    """Message ids never shown on their own: the source turns of superseded or replaced facts."""
    vector: np.ndarray | None = None
    """The question's vector: turns are found by cosine too (keywords only without it)."""
    related_cosine: float = 0.0
    """A turn found by its vector alone counts from this cosine on (as a memory found by its vector)."""


def fuse(store: MemoryStore, ask: FusionInput, memories: Sequence[tuple[RecalledItem, str]],
         limit: int | None = None) -> list[RecalledItem]:
    """Memory items (each with its session id) in their ranked order, and the turns found for the question,
    as one ranking of distinct evidence, best first: the first `limit` of it (all without), only those
    quoted and their source turns read."""
    quoted = ask.hidden | {m for item, _ in memories for m, _ in item.context_turns}  # shown already
    found = store.search_turns(ask.tenant, ask.user, ask.question, ask.turn_candidates, ask.vector) \
        if ask.turn_candidates else []
    hits = [h for h in rank_turns(found, ask.k, ask.related_cosine) if h.turn.message_id not in quoted]
    owner = _source_owner(memories)
    asked = domains_of(ask.question)
    scores: dict[int, float] = {n: 1.0 / (ask.k + n + 1) for n in range(len(memories))}
    turn_rank: dict[int, int] = {}
    loose: list[tuple[float, int, TurnHit]] = []
    for rank, hit in enumerate(hits):
        share = ask.turn_weight / (ask.k + rank + 1)
        n = owner.get(hit.turn.message_id)
        if n is None:
            shown = _showable_hit(hit, asked) if hit.turn.message_id not in ask.withheld else None
            if shown is not None:
                loose.append((share, rank, shown))
        elif n not in turn_rank:
            turn_rank[n] = rank
            scores[n] += share
    entries = [(scores[n], n, memories[n][1]) for n in range(len(memories))] \
        + [(share, len(memories) + rank, hit.turn.session_id) for share, rank, hit in loose]
    order = sorted(session_scores(entries, SESSION_SHARE, SESSION_TOP), key=lambda e: (-e[0], e[1]))
    order = order[:limit] if limit is not None else order
    kept = [memories[n] for _, n in order if n < len(memories)]
    sources = _source_texts(store, ask, kept, {h.turn.message_id: h.turn for h in hits})
    focus = frozenset(terms(ask.question))
    by_rank = {len(memories) + rank: (share, rank, hit) for share, rank, hit in loose}
    out = []
    for place, (_, n) in enumerate(order):
        limit_tokens = ask.evidence_tokens if place < ask.evidence_top else ask.evidence_tokens // 2
        if n >= len(memories):
            share, rank, hit = by_rank[n]
            out.append(turn_item(hit, rank, share, focus, limit_tokens))
            continue
        item = memories[n][0]
        details = {**item.details, "fusion": round(scores[n], 6), "memory_rank": n + 1}
        if n in turn_rank:
            details["turn_rank"] = turn_rank[n] + 1
        out.append(_with_evidence(replace(item, details=details), sources, focus, asked, limit_tokens, ask.withheld))
    return out


def session_scores(entries: Sequence[tuple[float, int, str]], share: float, top: int
                   ) -> list[tuple[float, int]]:
    """Each (score, place, session) entry's score plus `share` of the `top` best other scores of its session
    (its notes and its turns in the fused ranking). An entry without a session keeps its score."""
    best: dict[str, list[float]] = {}
    for score, _, session in entries:
        if session and share:
            best.setdefault(session, []).append(score)
    for scores in best.values():
        scores.sort(reverse=True)
        del scores[top + 1:]
    out = []
    for score, n, session in entries:
        others = list(best.get(session, ()))
        if score in others:
            others.remove(score)
        elif others:
            others.pop()  # the entry is not among its session's best: they all count
        out.append((score + share * sum(others[:top]), n))
    return out


def _source_owner(memories: Sequence[tuple[RecalledItem, str]]) -> dict[str, int]:
    """Each source turn's message id -> the best-ranked memory drawn from it."""
    owner: dict[str, int] = {}
    for n, (item, _) in enumerate(memories):
        for message_id in item.source_message_ids:
            owner.setdefault(message_id, n)
    return owner


def _source_texts(store: MemoryStore, ask: FusionInput, memories: Sequence[tuple[RecalledItem, str]],
                  found: dict[str, RecentTurn]) -> dict[str, RecentTurn]:
    """The source turns of the memories (those found by the turn search, the rest read in one call)."""
    wanted = [(session, m) for item, session in memories for m in item.source_message_ids[:1]
              if m and m not in found and m not in ask.hidden]
    out = dict(found)
    if wanted:
        out.update((t.message_id, t) for t in store.source_turns(ask.tenant, ask.user, wanted))
    return out


def showable(text: str, asked: frozenset[str]) -> str:
    """`text` without the sentences stating a sensitive fact the question (its domains `asked`) does not
    reach: the gate memories pass (`may_show`), sentence by sentence ("" when none is left)."""
    sentences = _sentences(text)
    kept = [s for s in sentences if may_show(asked, s)]
    if len(kept) == len(sentences):
        return text
    return " ".join(kept)


def _showable_hit(hit: TurnHit, asked: frozenset[str]) -> TurnHit | None:
    """The hit with its turn's text as `showable` lets it be shown (None: nothing of it may be)."""
    text = showable(hit.turn.content, asked)
    if not text.strip():
        return None
    return hit if text is hit.turn.content else replace(hit, turn=replace(hit.turn, content=text))


def _with_evidence(item: RecalledItem, sources: dict[str, RecentTurn], focus: frozenset[str],
                   asked: frozenset[str], limit: int, withheld: frozenset[str] = frozenset()) -> RecalledItem:
    """The memory with the sentence(s) of its source turn that hold its specifics, quoted beside it (not a
    `withheld` turn: beside another note of it, it would bring its superseded fact back all the same)."""
    source = next((sources[m] for m in item.source_message_ids[:1] if m in sources), None)
    if source is None or source.message_id in withheld:
        return item
    own = frozenset(terms(item.text))
    quote = best_sentences(showable(source.content, asked), focus | own, limit, skip=own)
    if not quote or _covered(quote, own):
        return item
    quoted = ((source.message_id, quote), *item.context_turns)
    details = {**item.details, "evidence": {"message_id": source.message_id, "text": quote}}
    return replace(item, context_turns=quoted, details=details,
                   tokens=estimate_tokens(item.text) + sum(estimate_tokens(t) for _, t in quoted))


def turn_item(hit: TurnHit, rank: int, share: float, focus: frozenset[str], limit: int) -> RecalledItem:
    """A turn with no note, shown as a dated quote of its sentences closest to the question."""
    turn = hit.turn
    text = best_sentences(turn.content, focus, limit) or clip_tokens(turn.content, limit)
    details: dict[str, object] = {"role": turn.role, "session_id": turn.session_id, "turn_rank": rank + 1,
                                  "keyword": round(hit.keyword_score, 6), "vector": round(hit.vector_score, 6),
                                  "fusion": round(share, 6),
                                  "event_time": turn.occurred_at.isoformat()}
    return RecalledItem("turn", turn.message_id, text, share, estimate_tokens(text),  # type: ignore[arg-type]
                        (turn.message_id,), turn.occurred_at, details=details, event_time=turn.occurred_at)


def best_sentences(text: str, focus: Iterable[str], limit: int, skip: frozenset[str] = frozenset()) -> str:
    """The sentences of `text` sharing the most of `focus` (terms), specifics (numbers, names) breaking
    ties, kept in their order, within `limit` tokens; "" when none shares a term not in `skip`."""
    wanted = frozenset(focus)
    scored = []
    for n, sentence in enumerate(_sentences(text)):
        words = frozenset(terms(sentence))
        shared = len(words & wanted)
        fresh = len(words - skip) if skip else 1
        if shared and fresh:
            scored.append((shared + 0.1 * len(_SPECIFIC_RE.findall(" " + sentence)), n, sentence))
    if not scored:
        return ""
    chosen: list[tuple[int, str]] = []
    used = 0
    for _, n, sentence in sorted(scored, key=lambda s: (-s[0], s[1])):
        cost = estimate_tokens(sentence) + 1
        if chosen and used + cost > limit:
            continue
        chosen.append((n, sentence))
        used += cost
    return clip_tokens(" … ".join(s for _, s in sorted(chosen)), limit)


@registered
@lru_cache(maxsize=16384)
def _sentences(text: str) -> tuple[str, ...]:
    """The non-empty sentences of `text`, in order (a turn is split again by every recall quoting it)."""
    return tuple(s for s in (part.strip() for part in _SENTENCE_RE.split(text)) if s)


def _covered(quote: str, own: frozenset[str]) -> bool:
    """The quote says nothing the note does not (every term of it is in the note)."""
    return frozenset(terms(quote)) <= own


def without_turns(items: Sequence[RecalledItem], shown: set[str]) -> list[RecalledItem]:
    """The items without turns the context shows anyway (the short-term window): no turn item of them,
    and a memory quotes none of them."""
    if not shown:
        return list(items)
    out = []
    for item in items:
        if item.kind == "turn" and item.item_id in shown:
            continue
        if any(m in shown for m, _ in item.context_turns):
            quoted = tuple((m, t) for m, t in item.context_turns if m not in shown)
            details = {k: v for k, v in item.details.items()
                       if k != "evidence" or not isinstance(v, dict) or v.get("message_id") not in shown}
            item = replace(item, context_turns=quoted, details=details,
                           tokens=estimate_tokens(item.text) + sum(estimate_tokens(t) for _, t in quoted))
        out.append(item)
    return out


def withheld_turns(gone: set[str], records: list[MemoryRecord], replaced: list[MemoryRecord]) -> frozenset[str]:
    """The source turns of facts no longer held: entries a later change superseded (`gone`, among `records`)
    and memories consolidation `replaced`. Shown on their own they would bring the old fact back (a
    forgotten memory's turns are withdrawn from the store itself)."""
    stale = [r for r in records if r.memory_id in gone] + replaced
    return frozenset(m for r in stale for m in r.source_message_ids if m)
