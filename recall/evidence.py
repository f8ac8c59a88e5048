"""One ranking over notes and turns, each piece of evidence shown with its words and its date.

Memories (notes) are ranked by the shared scorer; every recorded turn, user and assistant alike, is
searched by keywords beside them. The two rankings are fused by reciprocal rank fusion: a piece of
evidence scores `sum(1 / (k + rank))` over the rankings it appears in. A note and its own source turn
are one piece of evidence: the turn's rank adds to the note's, and the note carries the sentence(s) of
that turn holding the specifics (names, numbers, dates, titles), which extraction may have dropped. A
turn with no note among the memories is shown on its own, as a dated quote of its best sentences; a user
turn and the reply to it, both found, are one round (one item, both turns' shares, both as provenance).
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

from engram.core.sensitive import gate_domains, may_show
from engram.core.text import VERBATIM_PREFIXES, clip_tokens, estimate_tokens, terms
from engram.core.text_caches import registered
from engram.projections.ports import MemoryStore, RecentTurn, TurnHit
from engram.schemas.memory import MemoryRecord

from .context import RecalledItem
from .turn_ranking import rank_turns

_SENTENCE_RE = re.compile(r"(?<=[.!?;。！？；])\s+|\n+")
_SPECIFIC_RE = re.compile(r"\d|(?<=\s)[A-Z][a-z]")


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
    session_share: float = 0.5
    """Each piece also scores this share of the best `session_top` other scores of its session."""
    session_top: int = 1


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
    asked = gate_domains(ask.question)  # only the sensitive gate reads it here
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
    rounds = _rounds(loose)
    entries = [(scores[n], n, memories[n][1]) for n in range(len(memories))] \
        + [(share, len(memories) + rank, hit.turn.session_id) for share, rank, hit, _ in rounds]
    order = sorted(session_scores(entries, ask.session_share, ask.session_top), key=lambda e: (-e[0], e[1]))
    order = order[:limit] if limit is not None else order
    kept = [memories[n] for _, n in order if n < len(memories)]
    sources = _source_texts(store, ask, kept, {h.turn.message_id: h.turn for h in hits})
    focus = frozenset(terms(ask.question))
    by_rank = {len(memories) + rank: (share, rank, hit, partner) for share, rank, hit, partner in rounds}
    out = []
    for place, (_, n) in enumerate(order):
        limit_tokens = ask.evidence_tokens if place < ask.evidence_top else ask.evidence_tokens // 2
        if n >= len(memories):
            share, rank, hit, partner = by_rank[n]
            if partner is None and place < ask.evidence_top:
                partner = _round_partner(store, ask, hit, quoted, asked)
            out.append(turn_item(hit, rank, share, focus, limit_tokens, partner))
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


def _rounds(loose: Sequence[tuple[float, int, TurnHit]]) -> list[tuple[float, int, TurnHit, TurnHit | None]]:
    """The loose turns with each round found whole made one: a user turn and the reply right after it in its
    session (the other role, the next position), both found, are one piece of evidence scoring the sum of
    their shares, as one document of a question and its answer would match the words of both. It takes the
    better rank; the other turn is its partner (None for a turn found alone)."""
    at = {(hit.turn.session_id, hit.turn.position): n for n, (_, _, hit) in enumerate(loose)}
    partner: dict[int, int] = {}
    for n, (_, _, hit) in enumerate(loose):
        reply = at.get((hit.turn.session_id, hit.turn.position + 1))
        if hit.turn.role == "user" and reply is not None and loose[reply][2].turn.role == "assistant":
            partner[n], partner[reply] = reply, n
    out: list[tuple[float, int, TurnHit, TurnHit | None]] = []
    for n, (share, rank, hit) in enumerate(loose):
        other = partner.get(n)
        if other is None:
            out.append((share, rank, hit, None))
        elif rank < loose[other][1]:
            out.append((share + loose[other][0], rank, hit, loose[other][2]))
    return out


def _round_partner(store: MemoryStore, ask: FusionInput, hit: TurnHit, quoted: frozenset[str],
                   asked: frozenset[str]) -> TurnHit | None:
    """The other turn of the hit's round, read from the store: the reply to a user turn, the user turn an
    assistant turn answers (None: no such turn, or one shown anyway or withheld)."""
    turn = hit.turn
    for near in store.turn_neighbours(ask.tenant, ask.user, turn.session_id, turn.message_id):
        after = near.position > turn.position
        if near.role != turn.role and after == (turn.role == "user") and near.message_id not in quoted \
                and near.message_id not in ask.withheld:
            return _showable_hit(TurnHit(near, 0.0), asked)
    return None


def turn_item(hit: TurnHit, rank: int, share: float, focus: frozenset[str], limit: int,
              partner: TurnHit | None = None) -> RecalledItem:
    """A turn with no note, shown as a dated quote of its sentences closest to the question; with its
    `partner`, the round (the user turn and the reply to it) quoted as one text, in the order said."""
    turn = hit.turn
    said = sorted((t.turn for t in (hit, partner) if t is not None), key=lambda t: t.position)
    content = "\n".join(t.content for t in said)
    text = best_sentences(content, focus, limit) or clip_tokens(content, limit)
    details: dict[str, object] = {"role": " and ".join(t.role for t in said), "session_id": turn.session_id,
                                  "turn_rank": rank + 1,
                                  "keyword": round(hit.keyword_score, 6), "vector": round(hit.vector_score, 6),
                                  "fusion": round(share, 6),
                                  "event_time": turn.occurred_at.isoformat()}
    return RecalledItem("turn", turn.message_id, text, share, estimate_tokens(text),  # type: ignore[arg-type]
                        tuple(t.message_id for t in said), turn.occurred_at, details=details,
                        event_time=turn.occurred_at)


def best_sentences(text: str, focus: Iterable[str], limit: int, skip: frozenset[str] = frozenset()) -> str:
    """The sentences of `text` sharing the most of `focus` (terms), specifics (numbers, names) breaking
    ties, then the sentence just after each of them and the one just before while they fit, kept in their
    order, within `limit` tokens; "" when none shares a term not in `skip`.

    A question's words and its answer are often in neighbouring sentences ("I picked the Lindqvist agency. They
    place children with single parents."): the neighbours of a matching sentence fill what the
    limit leaves, before a sentence farther away. A gap between quoted sentences is marked with " … "."""
    wanted = frozenset(focus)
    sentences = _sentences(text)
    scored = []
    fresh: set[int] = set()
    for n, sentence in enumerate(sentences):
        words = frozenset(terms(sentence))
        if not skip or words - skip:
            fresh.add(n)
        shared = len(words & wanted)
        if shared and n in fresh:
            scored.append((shared + 0.1 * len(_SPECIFIC_RE.findall(" " + sentence)), n))
    if not scored:
        return ""
    chosen: set[int] = set()
    used = 0

    def take(n: int) -> None:
        nonlocal used
        cost = estimate_tokens(sentences[n]) + 1
        if n in chosen or n not in fresh or (chosen and used + cost > limit):
            return
        chosen.add(n)
        used += cost

    best = [n for _, n in sorted(scored, key=lambda s: (-s[0], s[1]))]
    for n in best:
        take(n)
    for step in (1, -1):
        for n in [n for n in best if n in chosen]:
            if 0 <= n + step < len(sentences):
                take(n + step)
    return clip_tokens(_joined(sentences, sorted(chosen)), limit)


def _joined(sentences: Sequence[str], picked: Sequence[int]) -> str:
    """The picked sentences in order: neighbours joined by a space, a gap marked with " … "."""
    out = ""
    for place, n in enumerate(picked):
        if place:
            out += " " if n == picked[place - 1] + 1 else " … "
        out += sentences[n]
    return out


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


def verbatim_echoes(records: list[MemoryRecord], replaced: list[MemoryRecord]) -> set[str]:
    """The notes kept in the user's own words (`VERBATIM_PREFIXES`) of a turn a `replaced` memory was drawn from: the
    statement whose fact a newer one replaced, quoted ("User said: from now on please reply in English" once
    the reply language changed), would bring the old fact back."""
    stale = {m for r in replaced for m in r.source_message_ids if m}
    return {r.memory_id for r in records
            if r.content.startswith(VERBATIM_PREFIXES) and stale.intersection(r.source_message_ids)}
