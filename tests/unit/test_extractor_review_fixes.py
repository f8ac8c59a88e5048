"""Rule-extractor edge cases: marks kept through corrections, restatements that must really restate, negated
notes that are no restatement, long turns, corrections that find their target, conditions only talked about."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from engram.schemas.base import stable_id
from engram.schemas.events import MemoryProposed
from engram.schemas.memory import Candidate, MemoryRecord
from engram.streams.consolidate import ConsolidateProcessor, UserMemories
from engram.streams.processor import ProcessorContext
from engram.streams.rules import extract_drafts

T0 = datetime(2026, 5, 4, 9, 0, tzinfo=timezone.utc)
PROC = ConsolidateProcessor()


def proposed(n: int, turn_no: int, candidate: Candidate, session: str = "s1") -> MemoryProposed:
    return MemoryProposed(event_id=stable_id("t", "review", str(n)), occurred_at=T0 + timedelta(hours=turn_no),
                          tenant_id="t", user_id="u", agent_id="a", session_id=session,
                          candidate=candidate, importance=0.5)


def remember(*turns: str | tuple[str, str], marks: dict[int, tuple[str, ...]] | None = None) -> list[MemoryRecord]:
    """The user's active memories after each turn is read by the rules and consolidated, an hour apart;
    a turn is its text (session s1) or `(session, text)`; `marks` gives the sensitive domains the extract
    processor would put on a turn's candidates."""
    state: UserMemories | None = None
    n = 0
    for turn_no, said in enumerate(turns):
        session, text = said if isinstance(said, tuple) else ("s1", said)
        for draft in extract_drafts("user", text):
            n += 1
            candidate = Candidate(type=draft.type, attribute=draft.attribute, content=draft.content,
                                  confidence=draft.confidence, topic=draft.topic, negated=draft.negated,
                                  entities=draft.entities, keywords=draft.keywords,
                                  source_message_ids=(f"m{turn_no}",),
                                  sensitive=(marks or {}).get(turn_no, ()))
            state, _ = PROC.process(state, proposed(n, turn_no, candidate, session), ProcessorContext())
    return list(state.memories.values()) if state is not None else []


def holding(memories: list[MemoryRecord], *words: str) -> list[MemoryRecord]:
    return [m for m in memories if all(w.lower() in m.content.lower() for w in words)]


def test_a_corrected_memory_keeps_the_sensitive_mark_of_what_it_corrects() -> None:
    memories = remember("我有焦虑症，每周五上午10点去诊所做心理咨询。", "更新一下，现在是11点了",
                        marks={0: ("health",)})
    corrected = holding(memories, "11点")
    assert corrected and all("health" in m.sensitive for m in corrected)


def test_a_reminder_of_the_opposite_fact_is_no_confirmation() -> None:
    memories = remember("我不喝咖啡。", "再强调一遍，我喝咖啡。")
    assert all(m.source_count == 1 for m in holding(memories, "不喝咖啡"))
    assert [m for m in memories if "喝咖啡" in m.content and "不喝" not in m.content]  # the clause is kept as said


def test_a_reminder_of_another_fact_sharing_a_word_reinforces_nothing_and_is_kept() -> None:
    memories = remember("我每周四上午去游泳。", "提醒一下，明天上午十点去体检")
    assert [m.source_count for m in holding(memories, "游泳")] == [1]
    assert holding(memories, "体检")
    english = remember("I see the dentist every six months.", "reminder: tomorrow at 9 I have the dentist")
    assert [m.source_count for m in holding(english, "six months")] == [1]
    assert holding(english, "tomorrow", "dentist")


def test_a_real_restatement_still_reinforces_once() -> None:
    memories = remember("我吃素的，蛋奶也不碰。", "再强调一遍，我吃素的")
    assert [m.source_count for m in holding(memories, "吃素")] == [2]
    english = remember("I'm allergic to sesame.", "reminder I'm allergic to sesame")
    assert [m.source_count for m in holding(english, "sesame")] == [2]


def test_a_very_long_repeated_turn_is_extracted_without_error_and_within_the_content_limit() -> None:
    from engram.schemas.events import TurnRecorded
    from engram.streams.extract import ExtractProcessor

    limit = Candidate.model_fields["content"].metadata
    longest = next(m.max_length for m in limit if getattr(m, "max_length", None))
    for n, text in enumerate(["remember: " * 1000, "relocated to " * 1100, "I coach in Lisbon " * 600,
                             "reminder: " * 1000, "moved to " * 1100, "I teach in Boston " * 600]):
        said = TurnRecorded(event_id=f"long{n}", occurred_at=T0, tenant_id="t", user_id="u", agent_id="a",
                            session_id="s1", message_id=f"m{n}", role="user", content=text)
        _, events = ExtractProcessor().process(None, said, ProcessorContext())
        assert all(len(e.candidate.content) <= longest for e in events if isinstance(e, MemoryProposed))


def test_a_negated_note_does_not_restate_the_affirmed_one() -> None:
    from engram.streams.merge_rules import restates

    assert not restates("User said: I don't take the bus or the tram to the office on Mondays",
                        "User takes the bus or the tram to the office on Mondays")
    assert not restates("用户说：我不喜欢在周末早上去健身房锻炼", "用户喜欢在周末早上去健身房锻炼")
    assert not restates("用户说：我没有在周末早上去健身房锻炼", "用户在周末早上去健身房锻炼")
    assert not restates("User said: I never cycle to the office in the winter months",
                        "User cycles to the office in the winter months")
    assert restates("User said: I take the bus or the tram to the office on Mondays",
                    "User takes the bus or the tram to the office on Mondays")


def test_a_correction_naming_only_the_value_rewrites_the_value_said_last_in_this_session() -> None:
    memories = remember("I have 3 cats.", "My desk is in room 12.", ("s2", "reminder: I have 3 cats"),
                        "oops, sorry, it's 14.")
    assert holding(memories, "room 14") and not holding(memories, "room 12")
    assert holding(memories, "3 cats") and not holding(memories, "14 cats")


def test_a_correction_naming_only_the_value_finds_nothing_said_many_turns_before() -> None:
    memories = remember("My desk is in room 12.", "I love hiking in the Alps.", "I work as a nurse.",
                        "I'm learning Portuguese.", "My sister lives in Porto.", "oops, sorry, it's 14.")
    assert holding(memories, "room 12") and not holding(memories, "14")


def test_talking_about_a_condition_is_no_constraint_on_the_user() -> None:
    from engram.schemas.memory import MemoryType as T

    for said in ("I'm writing a paper on migraines in teenagers", "I'm giving a talk about asthma next month",
                 "我在写一篇关于高血压的综述", "我在研究痛风的发病机制"):
        assert all(d.type is not T.USER_CONSTRAINT for d in extract_drafts("user", said)), said
    assert any(d.type is T.USER_CONSTRAINT for d in extract_drafts("user", "I've got migraines, so keep screens dim"))
    assert any(d.type is T.USER_CONSTRAINT for d in extract_drafts("user", "我有高血压，饮食要清淡"))
