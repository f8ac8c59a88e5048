"""The recall service: reads the projections only and assembles the memory context.

Order: global memory -> long-term (the L3 standing profile, pushed, recall/profile.py; then L1) -> session summary (L2)
-> short-term window -> the question. A deadline bounds the whole call; past
it the service returns what it has: with a `RecallPool` the parts run as futures
and the call returns by the deadline whatever the store does (recall/deadline.py). Every recall yields a RecallServed event.

Long-term memories are ranked by the S1 score, then ordered for diversity of
source: a memory whose source turns are already behind a chosen memory ranks
as if its score were `source_repeat_factor` lower per such turn (several notes
extracted from one turn would otherwise fill a token budget with one moment).
The best `context_turns_top` memories carry the turns around their source turn
(`store.turn_neighbours`): the question a note answers and the reply, verbatim
(redacted), counted in the item's tokens. Both are general: they use only the
log's turn order and provenance, nothing about a data set.
"""

from __future__ import annotations

import heapq
import logging
import time
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager
from concurrent.futures import Executor
from dataclasses import dataclass, field
from functools import partial
from datetime import datetime
from typing import Any

import numpy as np

from engram.recall.freshness import CURRENT, Freshness
from engram.core.config import EngramConfig
from engram.core.domains import domain_overlap, domains_of
from engram.core.sensitive import gate_domains, may_show
from engram.core.embedding import Embedder, embed_text
from engram.core.scoring import ScoreParts, decay_factor, lexical_score, match_scores, rarity_weights, score_parts
from engram.core.text import clip_tokens, estimate_tokens, terms
from engram.projections.hybrid_index import searchable_text
from engram.projections.ports import MemoryStore, SearchHit
from engram.schemas.base import stable_id
from engram.schemas.events import RecallServed
from engram.schemas.memory import MemoryRecord

from .budget import pack, ranked_within
from .evidence import FusionInput, fuse, showable, verbatim_echoes, withheld_turns, without_turns
from .context import RecalledItem, build_messages
from .current_view import as_outcomes
from .deadline import PARTS, PartMissed, RecallPool, gather
from .global_cards import select_cards
from .profile import left_profile, profile_and_members, profile_budget, select_profile, superseded

log = logging.getLogger("engram.recall")
Guard = Callable[[float], AbstractContextManager[object]]


@dataclass(frozen=True)
class RecallRequest:
    tenant: str
    user: str
    agent: str
    session: str
    question: str
    now: datetime
    message_id: str = ""
    memory_enabled: bool = True
    token_budget: int | None = None
    limit: int | None = None


@dataclass
class RecallResult:
    """The assembled context and everything needed to explain it."""

    request: RecallRequest
    memory_section: str
    items: list[RecalledItem]
    recent: list[dict[str, str]]
    retrieval_ms: float
    build_ms: float
    deadline_exceeded: bool
    observation: RecallServed
    retrieved_ids: list[str] = field(default_factory=list)
    user_known: bool = True
    """False: nothing was ever recorded for this user (a new user): the context is empty."""
    session_known: bool = True
    """False: the session has no turn yet (a new session): long-term memory only, no summary or window."""
    missed: list[str] = field(default_factory=list)
    """The parts (recall/deadline.py `PARTS`) not ready by the deadline: the context lacks them."""
    tokens: int = 0
    """The size of `memory_section` by `estimate_tokens`: never more than the request's token budget."""
    left_out: list[RecalledItem] = field(default_factory=list)
    """Items recalled but left out of the context by the token budget, in priority order."""
    freshness: Freshness = CURRENT
    """Whether the reads held every write of the user made before the recall (the runtime sets it)."""

    def messages(self, system_prompt: str = "") -> list[dict[str, str]]:
        return build_messages(system_prompt, self.memory_section, self.recent, self.request.question)


class _Deadline:
    def __init__(self, ms: float) -> None:
        self.start = time.perf_counter()
        self.ms = ms

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.start) * 1000

    def passed(self) -> bool:
        return self.elapsed_ms() > self.ms

    def remaining_s(self) -> float:
        return max(0.0, (self.ms - self.elapsed_ms()) / 1000)


class _Reads:
    """The independent store reads of one recall. A store over the network offers a `read_pool`: they
    all start on it at once and overlap their round trips; on an in-process store each runs when asked."""

    def __init__(self, store: MemoryStore, req: RecallRequest, recent_limit: int, pool: Executor | None) -> None:
        t, u, s = req.tenant, req.user, req.session
        self._calls: dict[str, Callable[[], Any]] = {
            "cards": lambda: store.list_cards(t, u),
            "summary": lambda: store.latest_summary(t, u, s),
            "recent": lambda: store.recent_turns(t, u, s, recent_limit),
            "user": lambda: store.has_user(t, u), "session": lambda: store.has_session(t, u, s),
        }
        self._futures = {name: pool.submit(call) for name, call in self._calls.items()} if pool else {}
        self._read: dict[str, Any] = {}

    def get(self, name: str) -> Any:
        """Each read runs once a recall (a second part asking for it gets the same answer)."""
        future = self._futures.get(name)
        if future is not None:
            return future.result()
        if name not in self._read:
            self._read[name] = self._calls[name]()
        return self._read[name]


class RecallService:
    """Assembles memory context from a MemoryStore with the shared scorer."""

    def __init__(self, store: MemoryStore, embedder: Embedder, config: EngramConfig,
                 parts: RecallPool | None = None, guard: Guard | None = None) -> None:
        """`parts`: run the retrieval parts on this bounded pool and return by the deadline with the
        parts ready (recall/deadline.py); without it they run in turn on the caller's thread.
        `guard(timeout_s)`: held around each part's reads (raises PartMissed when it cannot be had)."""
        self.store = store
        self.embedder = embedder
        self.config = config
        self.failures = 0
        self._pool: Executor | None = getattr(store, "read_pool", None)
        self._parts = parts
        self._guard = guard

    def safe_recall(self, request: RecallRequest) -> RecallResult:
        """`recall`, but a failure is logged and counted and yields an empty context."""
        try:
            return self.recall(request)
        except Exception:
            log.exception("recall failed for %s/%s", request.tenant, request.user)
            self.failures += 1
            return self._empty(request)

    def _empty(self, request: RecallRequest) -> RecallResult:
        observation = self._observe(request, [], [], [], 0.0, 0.0, False)
        return RecallResult(request, "", [], [], 0.0, 0.0, False, observation)

    def recall(self, request: RecallRequest) -> RecallResult:
        deadline = _Deadline(self.config.recall.deadline_ms)
        gathered: list[RecalledItem] = []
        retrieved: list[str] = []
        recent: list[dict[str, str]] = []
        missed: list[str] = []
        user_known = session_known = True
        if request.memory_enabled:
            if self._parts is not None:
                parts, missed = self._retrieve_parallel(request, deadline, self._parts)
            else:
                parts, missed = self._retrieve_in_turn(request, deadline)
            user_known, session_known = parts.get("known", (True, True))
            for name in self._wanted(user_known, session_known):
                if name in parts and name != "recent":
                    items, ids = parts[name]
                    gathered.extend(items)
                    retrieved.extend(ids)
            if session_known and "recent" in parts:
                recent = [{"role": t.role, "content": t.content} for t in parts["recent"]]
                gathered = without_turns(gathered, {t.message_id for t in parts["recent"]})
            gathered = ranked_within(gathered, request.limit or self.config.recall.result_limit)
            gathered = as_outcomes(gathered, request.question)
        retrieval_ms = deadline.elapsed_ms()
        build_start = time.perf_counter()
        packing = pack(gathered, request.question, request.token_budget or self.config.recall.token_budget)
        items, section = packing.kept, packing.section
        build_ms = (time.perf_counter() - build_start) * 1000
        exceeded = bool(missed) or deadline.passed()
        observation = self._observe(request, items, retrieved, recent, retrieval_ms, build_ms, exceeded)
        return RecallResult(request, section, items, recent, retrieval_ms, build_ms, exceeded,
                            observation, retrieved, user_known, session_known, missed,
                            packing.tokens, packing.left_out)

    def _calls(self, request: RecallRequest, reads: _Reads, deadline: _Deadline | None) -> dict[str, Callable[[], Any]]:
        """One call per part (`PARTS`); with a `deadline`, a part not started by then is missed unread,
        and under the store's `guard` (the embedded runtime's lock), if any."""
        def stage(run: Callable[..., None]) -> Callable[[], tuple[list[RecalledItem], list[str]]]:
            def call() -> tuple[list[RecalledItem], list[str]]:
                out: list[RecalledItem] = []
                ids: list[str] = []
                run(request, out, ids, reads)
                return out, ids
            return call

        def known() -> tuple[bool, bool]:
            user = bool(reads.get("user"))
            return user, user and bool(reads.get("session"))

        calls: dict[str, Callable[[], Any]] = {
            "known": known, "cards": stage(self._global), "memories": stage(self._long_term),
            "summary": stage(self._summary), "recent": lambda: self._recent(request, reads)}
        return {name: self._bounded(call, deadline) for name, call in calls.items()} if deadline else calls

    def _bounded(self, call: Callable[[], Any], deadline: _Deadline) -> Callable[[], Any]:
        def run() -> Any:
            if deadline.passed():
                raise PartMissed("not started before the deadline")
            if self._guard is None:
                return call()
            with self._guard(deadline.remaining_s()):
                return call()
        return run

    def _retrieve_in_turn(self, request: RecallRequest, deadline: _Deadline) -> tuple[dict[str, Any], list[str]]:
        """The parts one after the other; past the deadline the rest are missed (a running read is not
        interrupted: an in-process store without a pool)."""
        reads = _Reads(self.store, request, 2 * self.config.recall.recent_rounds + 1, self._pool)
        calls = self._calls(request, reads, None)
        parts: dict[str, Any] = {"known": calls["known"]()}
        user_known, session_known = parts["known"]
        wanted = self._wanted(user_known, session_known)
        missed: list[str] = []
        for name in PARTS[1:]:
            if name not in wanted:
                continue
            if deadline.passed():
                missed.append(name)
                continue
            parts[name] = calls[name]()
        return parts, missed

    def _retrieve_parallel(self, request: RecallRequest, deadline: _Deadline,
                           pool: RecallPool) -> tuple[dict[str, Any], list[str]]:
        """Every part at once on the bounded pool; at the deadline the parts ready (see recall/deadline.py)."""
        reads = _Reads(self.store, request, 2 * self.config.recall.recent_rounds + 1, None)
        futures = pool.try_run(self._calls(request, reads, deadline))
        if futures is None:  # saturated: degrade now rather than queue
            return {}, list(PARTS)
        parts, missed = gather(futures, deadline.remaining_s())
        user_known, session_known = parts.get("known", (True, True))
        wanted = {"known", *self._wanted(user_known, session_known)}
        return parts, [name for name in missed if name in wanted]

    @staticmethod
    def _wanted(user_known: bool, session_known: bool) -> tuple[str, ...]:
        """A new user has no memory (only cards set up ahead, if any); a new session has no summary yet."""
        if not user_known:
            return ("cards",)
        if not session_known:
            return ("cards", "memories")
        return ("cards", "memories", "summary", "recent")

    # -- stages -------------------------------------------------------------------
    def _global(self, req: RecallRequest, out: list[RecalledItem], retrieved: list[str], reads: _Reads) -> None:
        cards = reads.get("cards")
        for chosen in select_cards(cards, req.agent, req.question, embedder=self.embedder,
                                   config=self.config.global_memory):
            retrieved.append(chosen.card.card_id)
            text = chosen.card.text()
            out.append(RecalledItem("global", chosen.card.card_id, text, chosen.score,
                                    estimate_tokens(text), details={"reason": chosen.reason}))

    def _long_term(self, req: RecallRequest, out: list[RecalledItem], retrieved: list[str], reads: _Reads) -> None:
        cfg = self.config.recall
        wanted = req.limit or cfg.result_limit
        vector = embed_text(self.embedder, req.question)
        profile_read = partial(profile_and_members, self.store, req.tenant, req.user, cfg.profile_candidates, vector)
        replaced_read = partial(self.store.list_memories, req.tenant, req.user, ("replaced",))
        pending = self._pool.submit(profile_read) if self._pool is not None else None  # beside the search
        replaced_pending = self._pool.submit(replaced_read) if self._pool is not None else None
        # a request for more results than the configured candidates searches that much deeper
        hits = self.store.search_memories(req.tenant, req.user, req.question, vector,
                                          max(cfg.candidate_limit, wanted))
        asked = domains_of(req.question)
        gate = gate_domains(req.question)  # what a sensitive fact may be shown to (its own trip, not others')
        profile, members = pending.result() if pending is not None else profile_read()
        retrieved.extend(r.memory_id for r in profile)
        retrieved.extend(h.record.memory_id for h in hits)
        related = float(getattr(self.embedder, "related_cosine", cfg.semantic_match_cosine))
        found = [h for h in hits if h.keyword_score > 0 or h.vector_score >= related
                 or (cfg.weights.domain and domain_overlap(asked, domains_of(h.record.content)) >= 1.0)]
        replaced: list[MemoryRecord] = replaced_pending.result() if replaced_pending is not None else replaced_read()
        scores = self._scores(req, found, profile)
        considered = [*profile, *(h.record for h in found)]
        gone = superseded(considered) | left_profile(found, members) | verbatim_echoes(considered, replaced)
        eligible = [h for h in found if h.record.memory_id not in gone and may_show(gate, h.record.content, h.record.sensitive)
                    and scores[h.record.memory_id].score >= cfg.min_score]
        chosen = self._diverse(eligible, scores, wanted)
        ranked = {h.record.memory_id for h, _ in chosen}
        # the profile as if the question had found none of it: an entry the question finds keeps its slot
        # and is shown once, ranked among the memories if the ranking and the budget keep it there, else
        # in its slot (recall/budget.py); the other entries' own source turns are that same evidence
        pushed = select_profile([r for r in profile if r.memory_id not in gone], scores, gate,
                                profile_budget(cfg, req.token_budget), cfg.profile_limit)
        shown = {m for h, _ in chosen for m in h.record.source_message_ids} | {req.message_id}
        if cfg.context_turns_top and any(h.record.session_id == req.session for h, _ in chosen[:cfg.context_turns_top]):
            shown |= self._window_ids(req, reads)  # the short-term window already shows those turns
        memories = []
        for n, (hit, repeats) in enumerate(chosen):
            turns = self._context_turns(req, hit.record, shown, gate) if n < cfg.context_turns_top else ()
            memories.append((self._item("memory", hit.record, scores[hit.record.memory_id], req, repeats, turns),
                             hit.record.session_id))
        hidden = {req.message_id} | {m for r in pushed if r.memory_id not in ranked
                                              for m in r.source_message_ids}
        ask = FusionInput(req.tenant, req.user, req.question, frozenset(hidden),
                          cfg.turn_candidates, cfg.fusion_k, cfg.evidence_tokens, cfg.turn_weight,
                          cfg.evidence_top, withheld_turns(gone, considered, replaced),
                          vector=vector, related_cosine=related,
                          session_share=cfg.session_share, session_top=cfg.session_top)
        # deeper by the window's size: its turns leave the ranking once the window is read (`recall`), and
        # this part does not wait on that read (the parts are independent under the deadline)
        fused = fuse(self.store, ask, memories, wanted + 2 * cfg.recent_rounds)
        retrieved.extend(i.item_id for i in fused if i.kind == "turn")
        out.extend(fused)
        out.extend(self._item("profile", record, scores[record.memory_id]) for record in pushed)

    def _context_turns(self, req: RecallRequest, record: MemoryRecord, shown: set[str],
                       asked: frozenset[str]) -> tuple[tuple[str, str], ...]:
        """The turns around the memory's source turns in its session, not already in the context
        (as a memory's source or shown beside an earlier one): what it answers and what answered it
        (without a sensitive sentence the question does not reach, `evidence.showable`)."""
        sources = [m for m in record.source_message_ids if m]
        out: list[tuple[str, str]] = []
        for source in dict.fromkeys(sources[:1] + sources[-1:]):
            for turn in self.store.turn_neighbours(req.tenant, req.user, record.session_id, source):
                text = showable(turn.content, asked)
                if turn.message_id not in shown and text.strip():
                    shown.add(turn.message_id)
                    out.append((turn.message_id, clip_tokens(text, self.config.recall.context_turn_tokens)))
        return tuple(out)

    def _diverse(self, hits: list[SearchHit], scores: dict[str, ScoreParts],
                 wanted: int) -> list[tuple[SearchHit, int]]:
        """Best first, but a memory drawn from turns already behind a chosen memory ranks as if its score
        were `source_repeat_factor` times lower per such turn (lazy greedy, ties by id); near-duplicates go.
        Several notes extracted from one turn otherwise fill the context with one moment of the history.
        The order changes, never the S1 score: each item reports `source_repeats` beside its components."""
        factor = self.config.recall.source_repeat_factor
        limit = self.config.recall.near_duplicate_cosine
        heap = [(-scores[h.record.memory_id].score, h.record.memory_id, 0, n) for n, h in enumerate(hits)]
        heapq.heapify(heap)
        seen: Counter[str] = Counter()
        chosen: list[tuple[SearchHit, int]] = []
        vectors = _Vectors(min(wanted, len(hits)))  # the chosen ones' (unit) vectors, for one product each
        while heap and len(chosen) < wanted:
            _, memory_id, counted, n = heapq.heappop(heap)
            hit = hits[n]
            repeats = sum(1 for m in set(hit.record.source_message_ids) if seen[m])
            if repeats != counted and factor < 1.0:
                heapq.heappush(heap, (-scores[memory_id].score * factor ** repeats, memory_id, repeats, n))
                continue
            if hit.vector is not None and vectors.nearest(hit.vector) >= limit:
                continue
            chosen.append((hit, repeats))
            vectors.add(hit.vector)
            seen.update(set(hit.record.source_message_ids))
        return chosen

    def _scores(self, req: RecallRequest, hits: list[SearchHit], extra: list[MemoryRecord]) -> dict[str, ScoreParts]:
        """The shared scorer over the fused channels, each scaled to the best candidate.

        Lexical: the store's BM25 (already scaled to its best hit) with the phrase score
        (bigram/contains, term rarity measured among these candidates, so any back end gives
        the same scores). Semantic: the embedder's cosine. `extra` records (the profile) come
        without search scores: their lexical part is the phrase score alone.
        """
        cfg = self.config.recall
        w = cfg.weights
        found = {h.record.memory_id for h in hits}
        records = [h.record for h in hits] + [r for r in extra if r.memory_id not in found]
        known = {h.record.memory_id: h.terms for h in hits if h.terms is not None}
        documents = {r.memory_id: known.get(r.memory_id) or terms(searchable_text(r)) for r in records}
        question = terms(req.question)
        weight = rarity_weights(documents.values(), only=question)
        phrases = dict(zip(documents, match_scores(question, documents.values(), w, weight)))
        best_phrase = max(phrases.values(), default=0.0) or 1.0
        bm25 = {h.record.memory_id: h.keyword_score for h in hits}
        cosines = {h.record.memory_id: max(0.0, h.vector_score) for h in hits}
        best_cosine = max(cosines.values(), default=0.0) or 1.0
        asked = domains_of(req.question)
        return {
            r.memory_id: score_parts(
                lexical_score(bm25.get(r.memory_id, 0.0), phrases[r.memory_id] / best_phrase, w),
                cosines.get(r.memory_id, 0.0) / best_cosine,
                decay_factor(r.last_seen_at, req.now, cfg.half_life_hours, cfg.decay_floor),
                r.importance, w, domain_overlap(asked, domains_of(r.content)))
            for r in records
        }

    def _item(self, kind: str, record: MemoryRecord, parts: ScoreParts,
              req: RecallRequest | None = None, source_repeats: int = 0,
              context_turns: tuple[tuple[str, str], ...] = ()) -> RecalledItem:
        note = self._conflict_note(record, req) if record.conflict_with and req else ""
        details: dict[str, object] = {"type": record.type.value, "slot": record.slot, **parts.as_details(),
                                      "event_time": record.created_at.isoformat()}
        if kind == "memory":
            details["source_repeats"] = source_repeats
        if context_turns:
            details["context_turns"] = [{"message_id": m, "text": t} for m, t in context_turns]
        tokens = estimate_tokens(record.content) + sum(estimate_tokens(t) for _, t in context_turns)
        return RecalledItem(kind, record.memory_id, record.content, parts.score,  # type: ignore[arg-type]
                            tokens, record.source_message_ids,
                            record.created_at, note, details, record.created_at, context_turns)

    def _conflict_note(self, record: MemoryRecord, req: RecallRequest) -> str:
        notes = [f"{record.content} ({record.last_seen_at:%Y-%m-%d})"]
        for other_id in record.conflict_with:
            other = self.store.get_memory(req.tenant, req.user, other_id)
            if other is not None and other.status == "active":
                notes.append(f"{other.content} ({other.last_seen_at:%Y-%m-%d})")
        return " vs ".join(notes) if len(notes) > 1 else ""

    def _summary(self, req: RecallRequest, out: list[RecalledItem], retrieved: list[str], reads: _Reads) -> None:
        snapshot = reads.get("summary")
        if snapshot is None:
            return
        retrieved.append(snapshot.summary_id)
        text = snapshot.sections.render()
        out.append(RecalledItem("summary", snapshot.summary_id, text, 1.0, estimate_tokens(text),
                                snapshot.source_message_ids, snapshot.occurred_at,
                                details={"version": snapshot.version}))

    def _recent(self, req: RecallRequest, reads: _Reads) -> list[Any]:
        return self._window(req, reads)

    def _window(self, req: RecallRequest, reads: _Reads) -> list[Any]:
        """The short-term window: the session's last turns, without the request's own."""
        limit = 2 * self.config.recall.recent_rounds
        return [t for t in reads.get("recent") if t.message_id != req.message_id][-limit:]

    def _window_ids(self, req: RecallRequest, reads: _Reads) -> set[str]:
        """The message ids the short-term window shows ("recent" is read once a recall, then shared)."""
        try:
            return {t.message_id for t in self._window(req, reads)}
        except Exception:  # the window's own part reports a failing read; the quotes just do not dedupe
            log.warning("recent turns unreadable for %s/%s", req.tenant, req.user, exc_info=True)
            return set()

    def _observe(self, req: RecallRequest, items: list[RecalledItem], retrieved: list[str],
                 recent: list[dict[str, str]], retrieval_ms: float, build_ms: float,
                 exceeded: bool) -> RecallServed:
        long_term = [i for i in items if i.kind in ("profile", "memory")]
        scores = [i.score for i in long_term]
        recall_id = stable_id("recall", req.tenant, req.user, req.session, req.message_id,
                              req.question, req.now.isoformat())
        return RecallServed(
            event_id=recall_id, recall_id=recall_id, occurred_at=req.now, tenant_id=req.tenant,
            user_id=req.user, agent_id=req.agent, session_id=req.session, message_id=req.message_id,
            question=req.question, memory_enabled=req.memory_enabled, memory_injected=bool(items),
            retrieved_count=len(retrieved), injected_count=len(items),
            retrieved_ids=tuple(retrieved), injected_ids=_injected_ids(items),
            retrieval_latency_ms=retrieval_ms, context_build_latency_ms=build_ms,
            recent_message_count=len(recent), long_term_count=len(long_term),
            global_count=sum(1 for i in items if i.kind == "global"),
            summary_present=any(i.kind == "summary" for i in items),
            top_relevance=max(scores, default=0.0),
            avg_relevance=sum(scores) / len(scores) if scores else 0.0, deadline_exceeded=exceeded,
        )


class _Vectors:
    """Up to `size` unit vectors, and the largest cosine of one more with any of them."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._rows: np.ndarray | None = None
        self._count = 0

    def add(self, vector: np.ndarray | None) -> None:
        if vector is None:
            return
        if self._rows is None:
            self._rows = np.empty((self._size, vector.shape[0]), dtype=vector.dtype)
        self._rows[self._count] = vector
        self._count += 1

    def nearest(self, vector: np.ndarray) -> float:
        if self._rows is None or not self._count:
            return -1.0
        return float(np.max(self._rows[:self._count] @ vector))


def _injected_ids(items: list[RecalledItem]) -> tuple[str, ...]:
    """What the context shows, for the audit: the items' ids, then the message ids of the raw turns quoted
    beside them (opt-in `context_turns_top`), each once."""
    quoted = [m for i in items for m, _ in i.context_turns]
    return tuple(dict.fromkeys([*(i.item_id for i in items), *quoted]))
