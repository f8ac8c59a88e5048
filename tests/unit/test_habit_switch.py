"""Rule "habit-switch": an explicit switch replaces the habit it names, and only that one."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from engram.schemas.base import stable_id
from engram.schemas.events import MemoryChanged, MemoryProposed
from engram.schemas.memory import Candidate, MemoryType
from engram.streams.consolidate import ConsolidateProcessor, UserMemories
from engram.streams.processor import ProcessorContext
from engram.streams.rules import extract_drafts
from engram.streams.switch import parse_switch

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
PROC = ConsolidateProcessor()


def _proposal(n: int, content: str, *, negated: bool = False, memory_type: MemoryType = MemoryType.USER_FACT
              ) -> MemoryProposed:
    candidate = Candidate(type=memory_type, content=content, confidence=0.85, negated=negated,
                          source_message_ids=(f"m{n}",))
    return MemoryProposed(event_id=stable_id("p", str(n)), occurred_at=T0 + timedelta(hours=n),
                          tenant_id="t", user_id="u", agent_id="a", session_id="s", candidate=candidate,
                          importance=0.5)


def _run(*proposals: MemoryProposed) -> tuple[UserMemories, list[MemoryChanged]]:
    state, out = None, []
    for event in proposals:
        state, produced = PROC.process(state, event, ProcessorContext())
        out.extend(produced)
    return state, out  # type: ignore[return-value]


def _active(state: UserMemories) -> list[str]:
    return sorted(m.content for m in state.memories.values() if m.status == "active")


@pytest.mark.parametrize(("text", "content"), [
    ("改喝绿茶", "用户改喝绿茶"),
    ("我现在改喝绿茶了", "用户改喝绿茶"),
    ("我换成喝绿茶了", "用户改喝绿茶"),
    ("我不再喝咖啡，而是喝绿茶", "用户改喝绿茶（原来喝咖啡）"),
])
def test_chinese_switches_keep_their_subject_and_the_named_old_object(text: str, content: str) -> None:
    (draft,) = extract_drafts("user", text)
    assert draft.content == content and draft.type is MemoryType.USER_FACT


@pytest.mark.parametrize(("content", "verb", "new", "old"), [
    ("用户改喝绿茶", "喝", "绿茶", None),
    ("用户改喝绿茶（原来喝咖啡）", "喝", "绿茶", "咖啡"),
    ("User has switched from coffee to tea", None, "tea", "coffee"),
    ("User drinks tea now instead", "drinks", "tea", None),
    ("User now plays golf rather than tennis", "plays", "golf", "tennis"),
])
def test_switch_statements_are_parsed(content: str, verb: str | None, new: str, old: str | None) -> None:
    sw = parse_switch(content)
    assert sw is not None and (sw.verb, sw.new, sw.old) == (verb, new, old)


@pytest.mark.parametrize("content", ["用户每天喝咖啡", "User drinks coffee every morning", "User switched to Rust"])
def test_plain_statements_are_not_switches(content: str) -> None:
    assert parse_switch(content) is None


def test_a_switch_replaces_the_habit_with_the_same_verb_and_says_why() -> None:
    state, changes = _run(_proposal(1, "用户每天喝咖啡"), _proposal(2, "用户每天看新闻"), _proposal(3, "用户改喝绿茶"))
    assert _active(state) == ["用户改喝绿茶", "用户每天看新闻"]
    (replaced,) = [c for c in changes if c.change == "replaced"]
    assert replaced.before is not None and replaced.before.content == "用户每天喝咖啡"
    assert replaced.relation == "replace" and replaced.judge == "rule" and "habit-switch" in replaced.reason


def test_english_switch_from_names_the_old_object() -> None:
    state, changes = _run(_proposal(1, "User drinks coffee every morning"), _proposal(2, "User plays tennis on weekends"),
                          _proposal(3, "User has switched from coffee to tea"))
    assert _active(state) == ["User has switched from coffee to tea", "User plays tennis on weekends"]
    assert any(c.change == "replaced" and "coffee" in c.reason for c in changes)


def test_english_instead_replaces_by_verb() -> None:
    state, _ = _run(_proposal(1, "User drinks coffee every morning"), _proposal(2, "User drinks tea now instead"))
    assert _active(state) == ["User drinks tea now instead"]


def test_a_switch_leaves_negated_other_type_and_same_object_memories_alone() -> None:
    state, changes = _run(
        _proposal(1, "用户不喝酒", negated=True),
        _proposal(2, "用户喜欢喝咖啡", memory_type=MemoryType.USER_PREFERENCE),
        _proposal(3, "用户每天喝绿茶"),
        _proposal(4, "用户改喝绿茶"),
    )
    assert not [c for c in changes if c.change == "replaced"]
    assert "用户不喝酒" in _active(state) and "用户喜欢喝咖啡" in _active(state)


def test_a_switch_without_verb_or_from_replaces_nothing() -> None:
    state, _ = _run(_proposal(1, "User drinks coffee every morning"), _proposal(2, "User switched to green tea"))
    assert "User drinks coffee every morning" in _active(state)
