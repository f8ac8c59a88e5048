"""The profile processor, pure: which memory changes change the profile document, and how."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from engram.core.crypto import FieldCipher
from engram.core.keystore import MemoryKeyStore
from engram.recall.profile import standing_profile
from engram.schemas.codec import decode, encode
from engram.schemas.events import ChangeKind, MemoryChanged, ProfileChanged, Relation
from engram.schemas.inputs import summary_request_for, to_turn_event
from engram.schemas.memory import MemoryRecord, MemoryType
from engram.streams.consolidate import UserMemories
from engram.streams.context import rule_context
from engram.streams.harness import Harness
from engram.streams.processor import ProcessorContext
from engram.streams.profile import ProfileProcessor, UserProfileState
from tests.generators import T0 as GEN_T0, conversations

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)
CTX = ProcessorContext()
_seq = iter(range(1, 10_000))


def _record(memory_id: str, content: str, *, layer: str = "L3", slot: str = "user_fact", version: int = 1,
            day: int = 0, status: str = "active", pinned: bool = False,
            memory_type: MemoryType = MemoryType.USER_FACT) -> MemoryRecord:
    at = T0 + timedelta(days=day)
    return MemoryRecord(memory_id=memory_id, tenant_id="t", user_id="u", type=memory_type, slot=slot, layer=layer,
                        content=content, confidence=0.9, importance=0.6, status=status,  # type: ignore[arg-type]
                        pinned=pinned, version=version, created_at=at, updated_at=at, last_seen_at=at)


def _changed(change: ChangeKind, before: MemoryRecord | None, after: MemoryRecord | None,
             relation: Relation = "new") -> MemoryChanged:
    record = after or before
    assert record is not None
    return MemoryChanged(event_id=f"e{next(_seq)}", occurred_at=record.updated_at, tenant_id="t", user_id="u",
                         memory_id=record.memory_id, change=change, before=before, after=after, relation=relation,
                         judge="rule")


def _run(events: list[MemoryChanged]) -> tuple[UserProfileState | None, list[ProfileChanged]]:
    processor, state, out = ProfileProcessor(), None, []
    for event in events:
        state, emitted = processor.process(state, event, CTX)
        out += [e for e in emitted if isinstance(e, ProfileChanged)]
    return state, out


def test_an_l3_memory_enters_with_its_labels_and_an_l1_memory_changes_nothing() -> None:
    diet = _record("diet", "User is lactose intolerant", memory_type=MemoryType.USER_CONSTRAINT,
                   slot="user_constraint")
    note = _record("note", "User mentioned: a film", layer="L1")
    created = _changed("created", None, diet)
    state, out = _run([_changed("created", None, note)])
    assert state is None and out == []
    state, [first] = _run([created])
    assert first.profile_version == 1 and first.entry_count == 1 and first.removed == ()
    [item] = first.added
    assert (item.memory_id, item.slot, item.domains, item.revision) == ("diet", "user_constraint", ("food",), 1)
    assert first.source_memory_ids == ("diet",) and first.causation_ids == (created.event_id,)
    _, [again] = _run([created])
    assert again.event_id == first.event_id  # derived from the source event: a replay derives the same id


def test_a_reinforcement_is_no_change_but_a_correction_and_a_pin_are() -> None:
    v1 = _record("home", "User lives in Lisbon")
    v2 = v1.model_copy(update={"version": 2})  # reinforced: same text
    v3 = v2.model_copy(update={"version": 3, "content": "User lives in Lisbon, in Alfama"})
    v4 = v3.model_copy(update={"version": 4, "pinned": True})
    _, out = _run([_changed("created", None, v1), _changed("reinforced", v1, v2, "same"),
                   _changed("corrected", v2, v3, "user"), _changed("pinned", v3, v4, "user")])
    assert [e.profile_version for e in out] == [1, 2, 3]
    assert [(e.updated[0].revision, e.updated[0].pinned) for e in out[1:]] == [(3, False), (3, True)]


def test_a_later_move_supersedes_where_the_user_lived_and_forgetting_it_brings_that_back() -> None:
    lisbon = _record("lisbon", "User lives in Lisbon")
    moved = _record("moved", "User moved to Porto last month", day=5)
    state, out = _run([_changed("created", None, lisbon), _changed("created", None, moved)])
    assert state is not None and set(state.document) == {"moved"}
    assert [(r.memory_id, r.reason) for r in out[-1].removed] == [("lisbon", "superseded")]
    _, after = _run([_changed("created", None, lisbon), _changed("created", None, moved),
                     _changed("deleted", moved, None, "user")])
    assert [(r.memory_id, r.reason) for r in after[-1].removed] == [("moved", "forgotten")]
    assert [i.memory_id for i in after[-1].added] == ["lisbon"]  # nothing supersedes it any more


def test_the_document_is_what_standing_profile_reads_from_the_l3_memories() -> None:
    records = [_record("a", "User lives in Lisbon"), _record("b", "User is vegetarian", day=1),
               _record("c", "User started eating fish again, no longer vegetarian", day=2),
               _record("d", "User has two kids", day=3), _record("e", "User relocated to Berlin", day=4)]
    state, _ = _run([_changed("created", None, r) for r in records])
    assert state is not None
    assert set(state.document) == {r.memory_id for r in standing_profile(records)} == {"c", "d", "e"}


def test_two_live_values_of_a_single_valued_slot_are_kept_and_marked() -> None:
    a = _record("a", "User's name is Ana", slot="user_profile.name", memory_type=MemoryType.USER_PROFILE)
    b = _record("b", "User's name is Anna", slot="user_profile.name", memory_type=MemoryType.USER_PROFILE, day=1)
    state, out = _run([_changed("created", None, a), _changed("created", None, b)])
    assert state is not None and state.document["a"].conflict_with == ("b",) and state.document["b"].conflict_with == ("a",)
    assert [i.memory_id for i in out[-1].updated] == ["a"] and [i.memory_id for i in out[-1].added] == ["b"]
    replaced = a.model_copy(update={"status": "replaced", "version": 2})
    _, out = _run([_changed("created", None, a), _changed("created", None, b), _changed("replaced", a, replaced)])
    assert [(r.memory_id, r.reason) for r in out[-1].removed] == [("a", "replaced")]
    assert out[-1].updated[0].conflict_with == ()


def test_the_labels_are_sealed_with_the_user_text_and_gone_with_the_key() -> None:
    cipher = FieldCipher(MemoryKeyStore())
    _, [event] = _run([_changed("created", None, _record("m", "User has been dealing with depression"))])
    raw = encode(event, cipher)
    assert b"mental" not in raw and b'"added":[]' in raw and event.event_id.encode() in raw
    assert decode(raw, cipher) == event
    cipher.forget_owner("t", "u")
    shredded = decode(raw, cipher)
    assert isinstance(shredded, ProfileChanged) and shredded.added == () and shredded.profile_version == 1


def test_over_a_generated_history_the_document_is_the_standing_profile_of_the_l3_memories() -> None:
    ctx = rule_context()
    harness = Harness(ctx=ctx)
    turns = [to_turn_event(t, GEN_T0) for t in conversations(seed=5, turns=400)]
    last = {(e.tenant_id, e.user_id, e.session_id): e for e in turns}
    harness.append([*turns, *(summary_request_for(e) for e in last.values())])
    harness.run_until_idle()
    profiles = harness.of_type("ProfileChanged")
    assert profiles
    checked = 0
    for (name, key), state in harness.states.items():
        if name != "consolidate" or not isinstance(state, UserMemories):
            continue
        l3 = [r for r in state.memories.values() if r.layer == "L3" and r.status == "active"]
        profile = harness.states.get(("profile", key))
        members = set(profile.document) if isinstance(profile, UserProfileState) else set()
        assert members == {r.memory_id for r in standing_profile(l3)}, key
        mine = [e for e in profiles if e.partition_key == key]
        assert [e.profile_version for e in mine] == list(range(1, len(mine) + 1))  # type: ignore[attr-defined]
        checked += bool(l3)
    assert checked
