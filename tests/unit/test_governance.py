"""Governance on its own: decay, archive-then-delete, the safety valve, idempotence, tick ids."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from engram.core.config import EngramConfig, GovernanceConfig
from engram.schemas.base import stable_id
from engram.schemas.codec import decode, encode
from engram.schemas.events import ForgetRequested, MemoryChanged, MemoryProposed, PinRequested
from engram.schemas.memory import Candidate, MemoryRecord, MemoryType
from engram.schemas.topics import topic_for
from engram.streams.consolidate import ConsolidateProcessor, UserMemories
from engram.streams.govern import governance_tick, plan_evictions, protected, strength, tick_bucket
from engram.streams.processor import ProcessorContext

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
CTX = ProcessorContext()
PROC = ConsolidateProcessor()
CFG = GovernanceConfig()
DAY = timedelta(days=1)


def _record(memory_type: MemoryType = MemoryType.ASSISTANT_ACTION, **overrides: object) -> MemoryRecord:
    fields: dict[str, object] = dict(
        memory_id="m1", tenant_id="t", user_id="u", type=memory_type, slot=memory_type.value,
        content="ran the migration", confidence=0.8, importance=0.5,
        created_at=T0, updated_at=T0, last_seen_at=T0)
    fields.update(overrides)
    return MemoryRecord(**fields)  # type: ignore[arg-type]


def _proposal(n: int, content: str, memory_type: MemoryType, importance: float = 0.5,
              attribute: str | None = None) -> MemoryProposed:
    candidate = Candidate(type=memory_type, attribute=attribute, content=content, confidence=0.8,
                          source_message_ids=(f"m{n}",))
    return MemoryProposed(event_id=stable_id("p", str(n)), occurred_at=T0 + timedelta(minutes=n),
                          tenant_id="t", user_id="u", agent_id="a", session_id="s",
                          candidate=candidate, importance=importance)


def _run(state: UserMemories | None, events: list, ctx: ProcessorContext = CTX  # type: ignore[type-arg]
         ) -> tuple[UserMemories, list[MemoryChanged]]:
    out = []
    for event in events:
        state, produced = PROC.process(state, event, ctx)
        out.extend(produced)
    assert state is not None
    return state, out  # type: ignore[return-value]


def _tick(at: datetime):  # type: ignore[no-untyped-def]
    return governance_tick("t", "u", at)


# -- the strength formula ------------------------------------------------------------------------
def test_strength_halves_every_lifetime_of_the_type() -> None:
    record = _record()  # assistant_action: 30-day lifetime
    assert strength(record, T0, CFG) == pytest.approx(0.5)
    assert strength(record, T0 + 30 * DAY, CFG) == pytest.approx(0.25)
    assert strength(record, T0 + 60 * DAY, CFG) == pytest.approx(0.125)


def test_preferences_outlive_task_context() -> None:
    action, preference = _record(), _record(MemoryType.USER_PREFERENCE)
    later = T0 + 90 * DAY
    assert strength(preference, later, CFG) > 0.4 > 0.1 > strength(action, later, CFG)


def test_repeats_slow_the_decay_and_conflicts_weaken() -> None:
    later = T0 + 60 * DAY
    once, repeated = _record(), _record(source_count=4)
    assert strength(repeated, later, CFG) == pytest.approx(0.5 * 0.5 ** (60 / 90))
    assert strength(repeated, later, CFG) > strength(once, later, CFG)
    assert strength(_record(conflict_with=("m2",)), T0, CFG) == pytest.approx(0.25)


def test_no_decay_before_the_memory_was_last_seen() -> None:
    assert strength(_record(), T0 - 10 * DAY, CFG) == pytest.approx(0.5)


# -- the safety valve ----------------------------------------------------------------------------
@pytest.mark.parametrize("overrides", [
    {"importance": 0.9}, {"pinned": True}, {"layer": "L3"},
    {"type": MemoryType.USER_PROFILE, "slot": "user_profile.name"},
])
def test_safety_valve_never_evicts(overrides: dict[str, object]) -> None:
    record = _record(**overrides)
    assert protected(record, CFG)
    assert plan_evictions([record], [], T0 + 100 * 365 * DAY, CFG) == []


def test_ordinary_memories_are_not_protected() -> None:
    assert not protected(_record(importance=0.89), CFG)


# -- archive, then delete ------------------------------------------------------------------------
def test_a_decayed_memory_is_archived_then_deleted_by_a_later_tick() -> None:
    state, created = _run(None, [_proposal(1, "ran the database migration", MemoryType.ASSISTANT_ACTION)])
    memory_id = created[0].memory_id
    state, early = _run(state, [_tick(T0 + 30 * DAY)])
    assert early == [] and memory_id in state.memories
    first = _tick(T0 + 100 * DAY)
    state, archived = _run(state, [first])
    assert [(c.change, c.relation, c.judge) for c in archived] == [("archived", "decay", "system")]
    change = archived[0]
    assert change.memory_id == memory_id and change.causation_ids == (first.event_id,)
    assert change.after is not None and change.after.status == "archived" and change.after.version == 2
    assert change.occurred_at == first.as_of and "strength" in change.reason
    assert memory_id not in state.memories and memory_id in state.archived
    state, deleted = _run(state, [_tick(T0 + 101 * DAY)])
    assert [(c.change, c.before.status if c.before else None, c.after) for c in deleted] == [
        ("deleted", "archived", None)]
    assert not state.memories and not state.archived


def test_archived_memories_wait_for_the_grace_period() -> None:
    ctx = ProcessorContext(config=EngramConfig(governance=GovernanceConfig(archive_grace_days=7)))
    state, _ = _run(None, [_proposal(1, "ran the database migration", MemoryType.ASSISTANT_ACTION)], ctx)
    state, archived = _run(state, [_tick(T0 + 100 * DAY)], ctx)
    state, kept = _run(state, [_tick(T0 + 106 * DAY)], ctx)
    state, deleted = _run(state, [_tick(T0 + 108 * DAY)], ctx)
    assert [c.change for c in archived + kept + deleted] == ["archived", "deleted"]


def test_only_the_weak_memories_of_a_user_are_evicted() -> None:
    state, _ = _run(None, [
        _proposal(1, "ran the database migration", MemoryType.ASSISTANT_ACTION),
        _proposal(2, "我喜欢喝乌龙茶", MemoryType.USER_PREFERENCE),
        _proposal(3, "deployed the release to production", MemoryType.ASSISTANT_ACTION, importance=0.95),
        _proposal(4, "我叫王小明", MemoryType.USER_PROFILE, attribute="name", importance=0.3),
    ])
    state, changes = _run(state, [_tick(T0 + 200 * DAY)])
    assert [(c.change, c.before.content if c.before else "") for c in changes] == [
        ("archived", "ran the database migration")]
    assert sorted(m.content for m in state.memories.values()) == [
        "deployed the release to production", "我叫王小明", "我喜欢喝乌龙茶"]


def test_a_pinned_memory_survives_any_tick() -> None:
    state, created = _run(None, [_proposal(1, "ran the database migration", MemoryType.ASSISTANT_ACTION)])
    pin = PinRequested(event_id="pin", occurred_at=T0 + DAY, tenant_id="t", user_id="u",
                       memory_id=created[0].memory_id)
    state, changes = _run(state, [pin, _tick(T0 + 3650 * DAY)])
    assert [c.change for c in changes] == ["pinned"]


def test_a_repeat_restarts_the_decay() -> None:
    state, _ = _run(None, [_proposal(1, "ran the database migration", MemoryType.ASSISTANT_ACTION)])
    repeat = _proposal(2, "ran the database migration", MemoryType.ASSISTANT_ACTION)
    repeat = repeat.model_copy(update={"occurred_at": T0 + 90 * DAY})
    state, changes = _run(state, [repeat, _tick(T0 + 100 * DAY)])
    assert [c.change for c in changes] == ["reinforced"]


def test_forgetting_everything_also_deletes_archived_memories() -> None:
    state, _ = _run(None, [_proposal(1, "ran the database migration", MemoryType.ASSISTANT_ACTION),
                           _proposal(2, "我喜欢喝乌龙茶", MemoryType.USER_PREFERENCE)])
    state, _ = _run(state, [_tick(T0 + 100 * DAY)])
    forget = ForgetRequested(event_id="f", occurred_at=T0 + 101 * DAY, tenant_id="t", user_id="u", everything=True)
    state, changes = _run(state, [forget])
    assert sorted(c.before.status for c in changes if c.before) == ["active", "archived"]
    assert not state.memories and not state.archived


# -- idempotence and determinism -------------------------------------------------------------------
def test_the_same_tick_twice_changes_nothing_the_second_time() -> None:
    state, _ = _run(None, [_proposal(1, "ran the database migration", MemoryType.ASSISTANT_ACTION)])
    tick = _tick(T0 + 100 * DAY)
    state, first = _run(state, [tick])
    before = state.model_dump_json()
    state, second = _run(state, [tick, _tick(T0 + 100 * DAY)])
    assert [c.change for c in first] == ["archived"] and second == []
    assert state.model_dump_json() == before


def test_replaying_the_same_events_derives_the_same_ids() -> None:
    events = [_proposal(1, "ran the database migration", MemoryType.ASSISTANT_ACTION),
              _tick(T0 + 100 * DAY), _tick(T0 + 200 * DAY)]
    _, a = _run(None, events)
    _, b = _run(None, events)
    assert [encode(e) for e in a] == [encode(e) for e in b]
    assert [c.change for c in a] == ["created", "archived", "deleted"]


def test_state_with_archived_memories_round_trips_as_json() -> None:
    state, _ = _run(None, [_proposal(1, "ran the database migration", MemoryType.ASSISTANT_ACTION),
                           _tick(T0 + 100 * DAY)])
    again = UserMemories.model_validate_json(state.model_dump_json())
    assert again.archived == state.archived and again.memories == state.memories


# -- the tick event --------------------------------------------------------------------------------
def test_a_tick_id_depends_only_on_tenant_user_and_time() -> None:
    at = datetime(2026, 3, 1, 12, tzinfo=timezone.utc)
    assert governance_tick("t", "u", at).event_id == governance_tick("t", "u", at.astimezone(
        timezone(timedelta(hours=8)))).event_id
    assert governance_tick("t", "u", at).event_id != governance_tick("t", "v", at).event_id
    assert governance_tick("t", "u", at).event_id != governance_tick("t", "u", at + DAY).event_id


def test_a_tick_is_a_versioned_command_that_round_trips() -> None:
    tick = governance_tick("t", "u", T0)
    assert topic_for("GovernanceTick") == "engram.commands"
    assert tick.schema_version == 1 and tick.occurred_at == tick.as_of == T0
    assert decode(encode(tick)) == tick


def test_timers_round_the_clock_down_to_their_interval() -> None:
    now = datetime(2026, 3, 1, 12, 34, 56, tzinfo=timezone.utc)
    assert tick_bucket(now, 3600) == datetime(2026, 3, 1, 12, tzinfo=timezone.utc)
    assert tick_bucket(now, 86400) == datetime(2026, 3, 1, tzinfo=timezone.utc)
    assert tick_bucket(now + timedelta(minutes=20), 3600) == tick_bucket(now, 3600)
