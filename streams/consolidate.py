"""Consolidation: find -> filter -> judge -> apply, per user, one candidate at a time.

State is the user's active memories (plus the archived ones governance may
still delete). Every decision becomes a MemoryChanged event with before/after,
the relation, who judged and why. User controls and governance ticks are
applied here too, because this processor owns the user's memory state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import BaseModel, Field, PrivateAttr

from engram.core.embedding import Embedder, embed_text
from engram.core.vector_table import VectorTable
from engram.core.ports import Judgement, LLMCall
from engram.core.text import strip_control, terms
from engram.schemas.base import Event, derive_id
from engram.schemas.events import (
    ChangeKind, CorrectionRequested, ForgetRequested, GovernanceTick, Judge, MemoryChanged, MemoryProposed,
    PinRequested, Relation,
)
from engram.core.domains import profile_layer
from engram.schemas.memory import Candidate, MemoryRecord, MemoryType, is_single_valued

from .forget import select_forget_targets
from .govern import plan_evictions
from .llm_calls import llm_call_events
from .merge_rules import is_verbatim, judge_by_rules, restates, topics_match
from .switch import parse_switch, switch_replaces
from .processor import ProcessorContext
from .rules.common import keywords_of
from .rules.corrections import corrected_candidate, holds_value, latest_holding, parse_correction_note
from .rules.repeats import ORDINARY_CONFIDENCE, ordinary_note, parse_repeat_note, restated_memory, shares_terms
from .rules.value_shapes import latest_shaped

MAX_PROVENANCE = 50
RELATION_PRIORITY = ("same", "replace", "conflict", "append", "skip")


class UserMemories(BaseModel):
    """Active memories of one user, by id (plus an unpersisted vector table per type).

    `archived` holds the memories governance archived and has not deleted yet:
    out of recall and matching, but still the user's until a later tick or a forget.
    """

    memories: dict[str, MemoryRecord] = Field(default_factory=dict)
    archived: dict[str, MemoryRecord] = Field(default_factory=dict)
    _tables: dict[MemoryType, VectorTable] | None = PrivateAttr(default=None)

    def vectors(self, embedder: Embedder) -> dict[MemoryType, VectorTable]:
        """Per-type vector tables of the active memories, built once and then kept in step."""
        private = self.__pydantic_private__  # read directly: pydantic's private-attribute lookup is slow
        tables = private.get("_tables") if private else None
        if tables is None:
            tables = {}
            for record in self.memories.values():
                _table(tables, record.type, embedder).put(record.memory_id, embed_text(embedder, record.content))
            self._tables = tables
        return tables


def _table(tables: dict[MemoryType, VectorTable], memory_type: MemoryType, embedder: Embedder) -> VectorTable:
    table = tables.get(memory_type)
    if table is None:
        table = tables[memory_type] = VectorTable(embedder.dimensions)
    return table


@dataclass(frozen=True)
class _Related:
    record: MemoryRecord
    cosine: float
    judgement: Judgement


class ConsolidateProcessor:
    """Merges candidates into a user's memory; also applies user controls."""

    name = "consolidate"
    consumes = frozenset({"MemoryProposed", "ForgetRequested", "PinRequested", "CorrectionRequested",
                          "GovernanceTick"})
    state_type = UserMemories

    def state_key(self, event: Event) -> str:
        return event.partition_key

    def process(
        self, state: UserMemories | None, event: Event, ctx: ProcessorContext
    ) -> tuple[UserMemories, list[Event]]:
        state = state if state is not None else UserMemories()
        if isinstance(event, MemoryProposed):
            changes, calls = _consolidate(state, event, ctx)
            return state, _to_events(event, changes) + llm_call_events(
                event, self.name, calls, agent_id=event.agent_id, session_id=event.session_id)
        elif isinstance(event, ForgetRequested):
            changes = _forget(state, event, ctx)
        elif isinstance(event, PinRequested):
            changes = _pin(state, event, ctx)
        elif isinstance(event, CorrectionRequested):
            changes = _correct(state, event, ctx)
        elif isinstance(event, GovernanceTick):
            changes = _govern(state, event, ctx)
        else:
            changes = []
        return state, _to_events(event, changes)


@dataclass(frozen=True)
class _Change:
    memory_id: str
    change: ChangeKind
    before: MemoryRecord | None
    after: MemoryRecord | None
    relation: Relation
    judge: Judge
    reason: str


def _to_events(source: Event, changes: list[_Change]) -> list[Event]:
    return [
        MemoryChanged(
            event_id=derive_id(source.event_id, "consolidate", i),
            occurred_at=source.occurred_at,
            tenant_id=source.tenant_id,
            user_id=source.user_id,
            causation_ids=(source.event_id,),
            correlation_id=source.correlation_id or source.event_id,
            memory_id=c.memory_id,
            change=c.change,
            before=c.before,
            after=c.after,
            relation=c.relation,
            judge=c.judge,
            reason=c.reason,
        )
        for i, c in enumerate(changes)
    ]


def _apply(state: UserMemories, embedder: Embedder, change: _Change) -> _Change:
    tables = state.vectors(embedder)
    after = change.after
    if after is not None and after.status == "active":
        state.memories[change.memory_id] = after
        _table(tables, after.type, embedder).put(after.memory_id, embed_text(embedder, after.content))
    else:
        old = state.memories.pop(change.memory_id, None)
        if old is not None:
            _table(tables, old.type, embedder).remove(old.memory_id)
    return change


def _consolidate(
    state: UserMemories, event: MemoryProposed, ctx: ProcessorContext
) -> tuple[list[_Change], tuple[LLMCall, ...]]:
    """The changes one candidate makes, and the model calls its judgements took."""
    named = parse_correction_note(event.candidate.content)
    if named is not None:
        return _named_correction(state, event, ctx, *named), ()
    said = parse_repeat_note(event.candidate.content)
    if said is not None:
        return _restated(state, event, ctx, said)
    related = _judged_related(state, event, ctx)
    calls = tuple(call for r in related for call in r.judgement.calls)
    return _decide(state, event, ctx, related), calls


def _decide(state: UserMemories, event: MemoryProposed, ctx: ProcessorContext, related: list[_Related]) -> list[_Change]:
    by_relation = {r: [x for x in related if x.judgement.relation == r] for r in RELATION_PRIORITY}
    if by_relation["same"]:
        return [_apply(state, ctx.embedder, _reinforce(event, by_relation["same"][0], ctx))]
    if by_relation["skip"] and not by_relation["replace"]:
        first = by_relation["skip"][0]
        return [_discard(event, first)]
    changes = [_apply(state, ctx.embedder, _retire(event, r)) for r in by_relation["replace"]]
    conflicts = by_relation["conflict"]
    created = _new_record(event, conflict_with=tuple(r.record.memory_id for r in conflicts))
    relation, judge, reason = _creation_reason(related, by_relation)
    changes.append(_apply(state, ctx.embedder, _Change(created.memory_id, "created", None, created, relation, judge, reason)))
    changes.extend(_apply(state, ctx.embedder, _link_conflict(r, created)) for r in conflicts)
    return changes


def _named_correction(state: UserMemories, event: MemoryProposed, ctx: ProcessorContext, old: str, new: str
                      ) -> list[_Change]:
    """A correction note rewrites the latest user memory holding the wrong value, in its type and slot; a note
    that leaves the wrong value unsaid rewrites the latest value of the right one's shape (`value_shapes`)."""
    if not old:
        notes = (m.memory_id for m in state.memories.values() if parse_correction_note(m.content) is not None)
        same_turn = (m.memory_id for m in state.memories.values()
                     if set(m.source_message_ids) & set(event.candidate.source_message_ids))
        shaped = latest_shaped(state.memories.values(), new, skip=[*notes, *same_turn],  # an earlier value
                               session=event.session_id)
        old = shaped[1] if shaped is not None else ""
        target = shaped[0] if shaped is not None else None
    else:
        target = latest_holding(state.memories.values(), old, new)
    if target is None:
        memory_id = derive_id(event.event_id, "consolidate", "memory")
        return [_Change(memory_id, "discarded", None, None, "skip", "rule", "a correction of a value no memory holds")]
    corrected = corrected_candidate(event.candidate, target, old, new)
    judgement = Judgement("replace", f"named correction: {old!r} is now {new!r}", "rule")
    if any(m.type == target.type and holds_value(m.content, new) for m in state.memories.values()):
        return [_apply(state, ctx.embedder, _retire(event, _Related(target, 1.0, judgement)))]  # right value already held
    return _decide(state, event.model_copy(update={"candidate": corrected}), ctx, [_Related(target, 1.0, judgement)])


def _restated(state: UserMemories, event: MemoryProposed, ctx: ProcessorContext, said: str
              ) -> tuple[list[_Change], tuple[LLMCall, ...]]:
    """A repeat note reinforces the memory it restates (`rules.repeats`); it is never stored itself. A clause no
    memory restates is an ordinary statement, unless the rules already noted something of it in this turn."""
    target = restated_memory(state.memories.values(), said)
    this_turn = set(event.candidate.source_message_ids)
    judgement = Judgement("same", "the user said it again", "rule")
    if target is None:
        noted = any(this_turn & set(m.source_message_ids) and shares_terms(said, m.content)
                    for m in state.memories.values())
        if not noted:
            content, negated = ordinary_note(said)
            candidate = event.candidate.model_copy(update={"content": content, "negated": negated,
                                                            "confidence": ORDINARY_CONFIDENCE, "keywords": ()})
            plain = event.model_copy(update={"candidate": candidate})
            related = _judged_related(state, plain, ctx)
            return _decide(state, plain, ctx, related), tuple(call for r in related for call in r.judgement.calls)
    if target is None or this_turn & set(target.source_message_ids):
        memory_id = derive_id(event.event_id, "consolidate", "memory")
        reason = "said again in a turn that already noted it" if target is not None else "a repeat the rules already noted"
        return [_Change(memory_id, "discarded", None, None, "skip", "rule", reason)], ()
    return [_apply(state, ctx.embedder, _reinforce(event, _Related(target, 1.0, judgement), ctx))], ()


def _judged_related(state: UserMemories, event: MemoryProposed, ctx: ProcessorContext) -> list[_Related]:
    """Rules first for every related memory; the model judge only if no rule found a match."""
    cfg = ctx.config.merge
    found = _find(state, event, ctx)[: cfg.max_candidates]
    by_rule = [(record, cos, judge_by_rules(event.candidate, record, cos, cfg)) for record, cos in found]
    settled = any(j is not None and j.relation == "same" for _, _, j in by_rule)
    return [_Related(record, cos, j or _undecided(event, record, ctx, settled)) for record, cos, j in by_rule]


def _undecided(event: MemoryProposed, record: MemoryRecord, ctx: ProcessorContext, settled: bool) -> Judgement:
    if not settled and ctx.judge is not None:
        judgement = ctx.judge.judge(event.candidate, record)
        if judgement is not None:
            return judgement
    return Judgement("new", "no rule settled it; kept as a separate memory", "rule")


def _find(state: UserMemories, event: MemoryProposed, ctx: ProcessorContext) -> list[tuple[MemoryRecord, float]]:
    """Same type (or slot), cosine above the recall-oriented threshold, or the same topic."""
    candidate = event.candidate
    table = state.vectors(ctx.embedder).get(candidate.type)
    if table is None or not len(table):
        return _across_types(state, candidate)
    cosines = table.scores(embed_text(ctx.embedder, candidate.content))
    single = is_single_valued(candidate.slot)
    threshold = ctx.config.merge.find_cosine
    switch = parse_switch(candidate.content) is not None  # without one, switch_replaces is None for every record
    if not (single or candidate.topic or switch):  # only the cosine can relate a record: test it in one go
        scores = cosines.tolist()
        ids, memories = table.ids, state.memories
        # float64 of each float32 cosine against the float threshold: the comparison the loop below makes
        hits = np.flatnonzero(cosines.astype(np.float64) >= threshold).tolist()
        found = [(memories[ids[i]], scores[i]) for i in hits]
        found.sort(key=lambda pair: (-pair[1], pair[0].memory_id))
        return found
    found = []
    for memory_id, cos in zip(table.ids, cosines.tolist()):
        record = state.memories[memory_id]
        if cos >= threshold or (single and record.slot == candidate.slot) or (
            candidate.topic and topics_match(record.topic, candidate.topic)
        ) or (switch and switch_replaces(candidate, record)):
            found.append((record, cos))
    found.extend(_across_types(state, candidate))
    found.sort(key=lambda pair: (-pair[1], pair[0].memory_id))
    return found


_SAME_FACT_TYPES = frozenset({MemoryType.USER_FACT, MemoryType.USER_PREFERENCE})


def _across_types(state: UserMemories, candidate: Candidate) -> list[tuple[MemoryRecord, float]]:
    """Mechanism (one fact, two readings): "I use emacs" (a fact) and "我习惯用emacs" (a preference) are one habit
    read by two rules; a fact or preference finds the other type's memory of the same topic and stance, so the
    repeat reinforces it instead of standing beside it."""
    if is_verbatim(candidate.content):  # a note in the user's words restating a memory of any user type
        return [(record, 0.0) for record in state.memories.values()
                if record.type != candidate.type and not record.type.is_assistant and restates(candidate.content, record.content)]
    if candidate.type not in _SAME_FACT_TYPES or not candidate.topic:
        return []
    return [(record, 0.0) for record in state.memories.values()
            if record.type in _SAME_FACT_TYPES and record.type != candidate.type and record.negated == candidate.negated
            and topics_match(record.topic, candidate.topic)]


def _creation_reason(related: list[_Related], by_relation: dict[str, list[_Related]]) -> tuple[Relation, Judge, str]:
    for relation in ("replace", "conflict", "append"):
        if by_relation[relation]:
            j = by_relation[relation][0].judgement
            return relation, j.judge, j.reason  # type: ignore[return-value]
    if related:
        j = related[0].judgement
        return "new", j.judge, j.reason
    return "new", "rule", "no related memory"


def _new_record(event: MemoryProposed, conflict_with: tuple[str, ...] = ()) -> MemoryRecord:
    c = event.candidate
    return MemoryRecord(
        memory_id=derive_id(event.event_id, "consolidate", "memory"),
        tenant_id=event.tenant_id, user_id=event.user_id,
        agent_id=event.agent_id, session_id=event.session_id,
        layer="L3" if profile_layer(c.type, c.slot, c.content, c.sensitive) else "L1",
        type=c.type, slot=c.slot, topic=c.topic, negated=c.negated, content=c.content,
        confidence=c.confidence, importance=event.importance,
        conflict_with=conflict_with, entities=c.entities, keywords=c.keywords, sensitive=c.sensitive,
        source_message_ids=c.source_message_ids, source_event_ids=(event.event_id,),
        created_at=event.occurred_at, updated_at=event.occurred_at, last_seen_at=event.occurred_at,
    )


def _merge_ids(old: tuple[str, ...], new: tuple[str, ...]) -> tuple[str, ...]:
    merged = old + tuple(x for x in new if x not in old)
    return merged[-MAX_PROVENANCE:]


def _reinforce(event: MemoryProposed, related: _Related, ctx: ProcessorContext) -> _Change:
    old, c = related.record, event.candidate
    longer = len(c.content) > len(old.content) and related.cosine < ctx.config.merge.near_duplicate_cosine \
        and c.type == old.type \
        and not (is_verbatim(c.content) and not is_verbatim(old.content))  # a note in the user's words never
    # replaces one the rules understood: it only reinforces it
    updates: dict[str, object] = {
        "source_count": old.source_count + 1,
        "importance": min(1.0, max(old.importance, event.importance) + ctx.config.merge.importance_bump),
        "confidence": max(old.confidence, c.confidence),
        "source_message_ids": _merge_ids(old.source_message_ids, c.source_message_ids),
        "source_event_ids": _merge_ids(old.source_event_ids, (event.event_id,)),
        "last_seen_at": max(old.last_seen_at, event.occurred_at),
        "updated_at": event.occurred_at,
        "version": old.version + 1,
    }
    if set(c.sensitive) - set(old.sensitive):  # the same fact said again in a sensitive statement
        updates["sensitive"] = tuple(sorted(set(old.sensitive) | set(c.sensitive)))
    if longer:
        updates.update(content=c.content, topic=c.topic or old.topic,
                       entities=_merge_ids(old.entities, c.entities),
                       keywords=_merge_ids(old.keywords, c.keywords))
    after = old.model_copy(update=updates)
    j = related.judgement
    kind: ChangeKind = "updated" if longer else "reinforced"
    return _Change(old.memory_id, kind, old, after, "same", j.judge, j.reason)  # type: ignore[arg-type]


def _retire(event: MemoryProposed, related: _Related) -> _Change:
    old = related.record
    after = old.model_copy(update={"status": "replaced", "updated_at": event.occurred_at, "version": old.version + 1})
    j = related.judgement
    return _Change(old.memory_id, "replaced", old, after, "replace", j.judge, j.reason)  # type: ignore[arg-type]


def _discard(event: MemoryProposed, related: _Related) -> _Change:
    j = related.judgement
    memory_id = derive_id(event.event_id, "consolidate", "memory")
    return _Change(memory_id, "discarded", related.record, None, "skip", j.judge, j.reason)  # type: ignore[arg-type]


def _link_conflict(related: _Related, created: MemoryRecord) -> _Change:
    old = related.record
    after = old.model_copy(update={
        "conflict_with": old.conflict_with + (created.memory_id,),
        "updated_at": created.created_at, "version": old.version + 1,
    })
    j = related.judgement
    return _Change(old.memory_id, "updated", old, after, "conflict", j.judge, j.reason)  # type: ignore[arg-type]


def _forget(state: UserMemories, event: ForgetRequested, ctx: ProcessorContext) -> list[_Change]:
    """Active and archived memories alike: an archived memory is still remembered until deleted."""
    targets = select_forget_targets([*state.memories.values(), *state.archived.values()], event,
                                    ctx.embedder, ctx.config)
    for r in targets:
        state.archived.pop(r.memory_id, None)
    return [
        _apply(state, ctx.embedder, _Change(r.memory_id, "deleted", r, None, "user", "user", "forgotten at the user's request"))
        for r in targets
    ]


def _govern(state: UserMemories, tick: GovernanceTick, ctx: ProcessorContext) -> list[_Change]:
    """Archive the active memories that decayed below the threshold; delete archived ones still below it."""
    changes = []
    for e in plan_evictions(state.memories.values(), state.archived.values(), tick.as_of, ctx.config.governance):
        if e.after is not None:
            state.archived[e.before.memory_id] = e.after
        else:
            state.archived.pop(e.before.memory_id, None)
        changes.append(_apply(state, ctx.embedder, _Change(
            e.before.memory_id, e.kind, e.before, e.after, "decay", "system", e.reason)))
    return changes


def _pin(state: UserMemories, event: PinRequested, ctx: ProcessorContext) -> list[_Change]:
    old = state.memories.get(event.memory_id)
    if old is None or old.pinned == event.pinned:
        return []
    after = old.model_copy(update={"pinned": event.pinned, "updated_at": event.occurred_at, "version": old.version + 1})
    kind: ChangeKind = "pinned" if event.pinned else "unpinned"
    return [_apply(state, ctx.embedder, _Change(old.memory_id, kind, old, after, "user", "user", f"{kind} by the user"))]


def _correct(state: UserMemories, event: CorrectionRequested, ctx: ProcessorContext) -> list[_Change]:
    old = state.memories.get(event.memory_id)
    if old is None:
        return []
    content = strip_control(event.content).strip() or old.content
    after = old.model_copy(update={
        "content": content, "confidence": 1.0, "updated_at": event.occurred_at,
        "version": old.version + 1, "source_event_ids": _merge_ids(old.source_event_ids, (event.event_id,)),
        **corrected_keys(old, content),
    })
    return [_apply(state, ctx.embedder, _Change(old.memory_id, "corrected", old, after, "user", "user", "corrected by the user"))]


def corrected_keys(old: MemoryRecord, content: str) -> dict[str, Any]:
    """What a memory is found by after a correction: keywords of the new text, and only the entities and
    topic the new text still names (the old text's words must neither find nor forget it)."""
    said = set(terms(content))
    kept = tuple(e for e in old.entities if set(terms(e)) <= said and terms(e))
    topic = old.topic if old.topic and terms(old.topic) and set(terms(old.topic)) <= said else None
    return {"keywords": keywords_of(content, topic), "entities": kept, "topic": topic}
