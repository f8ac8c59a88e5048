"""LLM call records exposed by the adapters, turned into `LLMCallRecorded` events.

Processors call `llm_call_events` with the call records of whatever port
result they got (an extraction, judgements, a summary). Ids derive from the
source event, the processor and the call's position, so a replay of the same
answers yields the same events.
"""

from __future__ import annotations

from collections.abc import Sequence

from engram.core.ports import LLMCall
from engram.schemas.base import Event, derive_id
from engram.schemas.events import LLMCallRecorded

_MAX_ERROR_CHARS = 500


def llm_call_events(
    source: Event, processor: str, calls: Sequence[LLMCall], *, agent_id: str = "", session_id: str = ""
) -> list[Event]:
    """One `LLMCallRecorded` per call record, in order, caused by `source`."""
    return [_event(source, processor, i, call, agent_id, session_id) for i, call in enumerate(calls)]


def _event(source: Event, processor: str, index: int, call: LLMCall, agent_id: str, session_id: str) -> Event:
    return LLMCallRecorded(
        event_id=derive_id(source.event_id, f"{processor}/llm", index),
        occurred_at=source.occurred_at,
        tenant_id=source.tenant_id,
        user_id=source.user_id,
        causation_ids=(source.event_id,),
        correlation_id=source.correlation_id or source.event_id,
        agent_id=agent_id,
        session_id=session_id,
        processor=processor,
        task=call.task,
        model=call.model,
        attempt=max(1, call.attempt),
        outcome=call.outcome,
        tokens_in=max(0, call.tokens_in),
        tokens_out=max(0, call.tokens_out),
        latency_ms=max(0.0, call.latency_ms),
        error=call.error[:_MAX_ERROR_CHARS],
        dropped_items=max(0, call.dropped),
    )
