"""The extract processor: TurnRecorded -> TurnSkipped | GuardFired* + MemoryProposed*.

Stateless and pure: filters, then the configured extractor (the rule
extractor by default), then the guard. Each proposal is marked with the sensitive domains of the statement
it was drawn from (`core.sensitive.statement_sensitivity`), whichever extractor wrote it; a note of who the
user is (`IDENTITY_SLOTS`: name, age, job, where they live, language) only with those of its own words. Every derived event takes its time from
the turn and its id from `derive_id(turn, "extract", i)`, with `i` counting the
outputs in order, so a replay yields the same events.
"""

from __future__ import annotations

from typing import Any, Literal

from engram.core.config import GuardConfig
from engram.core.ports import Extraction, Extractor
from engram.core.sensitive import statement_sensitivity
from engram.schemas.base import Event, derive_id
from engram.schemas.events import GuardFired, MemoryProposed, SkipReason, TurnRecorded, TurnSkipped
from engram.schemas.memory import PERSONA_SLOTS, Candidate

from .filters import filter_turn, has_decision_signal
from .guard import Admitted, Audit, Guard
from .llm_calls import llm_call_events
from .processor import ProcessorContext
from .rule_extractor import RuleExtractor

_RULES = RuleExtractor()

IDENTITY_SLOTS = PERSONA_SLOTS | {"user_fact.location", "user_fact.hometown", "user_fact.birthday",
                                  "user_preference.language"}
"""Slots of who the user is: said in the same breath as a condition ("I'm 58 and was diagnosed with …"),
they state the identity, not the condition, so they inherit no sensitivity from the statement."""


class ExtractProcessor:
    """Turns each chat turn into memory proposals, guard audits, or a counted skip."""

    name = "extract"
    consumes = frozenset({"TurnRecorded"})
    state_type = None

    def __init__(self, extractor: Extractor | None = None) -> None:
        self._extractor = extractor
        self._guards: dict[GuardConfig, Guard] = {}

    def state_key(self, event: Event) -> str | None:
        return None

    def process(self, state: None, event: Event, ctx: ProcessorContext) -> tuple[None, list[Event]]:
        if not isinstance(event, TurnRecorded):
            return None, []
        return None, self._events(event, ctx)

    def _events(self, turn: TurnRecorded, ctx: ProcessorContext) -> list[Event]:
        reason = filter_turn(turn.role, turn.content, ctx.config.filters)
        if reason is not None:
            return [_skipped(turn, reason, 0)]
        extraction = self._extract(turn, ctx)
        result = self._guard(ctx).check(extraction.candidates, turn.role, turn.content)
        events: list[Event] = [_fired(turn, audit, i) for i, audit in enumerate(result.audits)]
        for admitted in result.accepted:
            events.append(_proposed(turn, admitted, extraction.extractor, len(events)))
        if not result.accepted:
            events.append(_skipped(turn, _empty_reason(turn), len(events)))
        events.extend(llm_call_events(turn, self.name, extraction.calls, agent_id=turn.agent_id,
                                      session_id=turn.session_id))
        return events

    def _extract(self, turn: TurnRecorded, ctx: ProcessorContext) -> Extraction:
        extractor = self._extractor or ctx.extractor or _RULES
        if extractor is _RULES:
            return _RULES.extract(turn)
        try:
            extraction = extractor.extract(turn)
        except Exception:  # noqa: BLE001 - a broken adapter must not lose the turn
            return _RULES.extract(turn)
        return extraction if isinstance(extraction, Extraction) else _RULES.extract(turn)

    def _guard(self, ctx: ProcessorContext) -> Guard:
        config = ctx.config.guard
        guard = self._guards.get(config)
        if guard is None:
            guard = self._guards[config] = Guard(config)
        return guard


def _empty_reason(turn: TurnRecorded) -> SkipReason:
    if turn.role == "assistant" and not has_decision_signal(turn.content):
        return "no_decision_signal"
    return "nothing_extracted"


def _envelope(turn: TurnRecorded, index: int) -> dict[str, Any]:
    return {
        "event_id": derive_id(turn.event_id, "extract", index),
        "occurred_at": turn.occurred_at,
        "tenant_id": turn.tenant_id,
        "user_id": turn.user_id,
        "causation_ids": (turn.event_id,),
        "correlation_id": turn.correlation_id or turn.event_id,
    }


def _skipped(turn: TurnRecorded, reason: SkipReason, index: int) -> TurnSkipped:
    return TurnSkipped(
        **_envelope(turn, index), session_id=turn.session_id, message_id=turn.message_id,
        role=turn.role, reason=reason,
    )


def _fired(turn: TurnRecorded, audit: Audit, index: int) -> GuardFired:
    return GuardFired(
        **_envelope(turn, index), session_id=turn.session_id, message_id=turn.message_id,
        rule=audit.rule, action=audit.action, original_sha256=audit.original_sha256,
        memory_type=audit.memory_type, detail=audit.detail,
    )


def _proposed(
    turn: TurnRecorded, admitted: Admitted, extractor: Literal["rule", "llm"], index: int
) -> MemoryProposed:
    return MemoryProposed(
        **_envelope(turn, index), agent_id=turn.agent_id, session_id=turn.session_id,
        candidate=_sourced(admitted.candidate, turn), importance=admitted.importance,
        extractor=extractor,
    )


def _sourced(candidate: Candidate, turn: TurnRecorded) -> Candidate:
    """The candidate with its source message and the sensitive domains of its source statement."""
    update: dict[str, object] = {}
    if not candidate.source_message_ids:
        update["source_message_ids"] = (turn.message_id,)
    source = candidate.content if candidate.slot in IDENTITY_SLOTS else turn.content
    marked = statement_sensitivity(source, candidate.content).union(candidate.sensitive)
    if marked != set(candidate.sensitive):
        update["sensitive"] = tuple(sorted(marked))
    return candidate.model_copy(update=update) if update else candidate
