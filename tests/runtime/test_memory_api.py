"""`engram.Memory`, the in-process Python API, used the way a mem0 user would."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engram import Memory, Remembered
from engram.access.errors import BadRequest, NotFound
from engram.runtime_port import DataDirBusy


@pytest.fixture
def m(tmp_path: Path) -> Iterator[Memory]:
    with Memory(data=tmp_path / "memory", env={}) as memory:
        yield memory


def test_record_returns_what_was_remembered_and_a_retry_records_nothing(m: Memory) -> None:
    remembered = m.record(user="ana", messages=[{"role": "user", "content": "I prefer green tea",
                                                 "message_id": "m1"},
                                                {"role": "assistant", "content": "Noted!", "message_id": "m2"}])
    assert [(r.memory, r.event) for r in remembered] == [("User prefers green tea", "created")]
    assert m.record(user="ana", messages=[{"role": "user", "content": "I prefer green tea", "message_id": "m1"}]) == []
    assert [r.content for r in m.memories(user="ana")] == ["User prefers green tea"]
    changed = m.record(user="ana", messages="I live in Porto")
    assert changed == [Remembered(changed[0].memory_id, "User lives in Porto", "created")]


def test_a_chat_loop_that_recalls_first_has_memory_on_the_first_message_of_a_new_session(m: Memory) -> None:
    firsts = []
    for session, messages in (("monday", ["I prefer green tea", "I live in Porto"]),
                              ("tuesday", ["Which tea do I like?", "And where do I live?"])):
        for index, message in enumerate(messages):
            context = m.recall(user="ana", question=message, session=session)
            if index == 0:
                firsts.append(context)
            m.record(user="ana", session=session, messages=[message, {"role": "assistant", "content": "OK."}])
    assert (firsts[0].user_known, firsts[0].context) == (False, "")
    assert firsts[1].user_known and not firsts[1].session_known
    assert "User prefers green tea" in firsts[1].context and firsts[1].recent == []


def test_unknown_users_are_empty_not_errors(m: Memory) -> None:
    assert m.memories(user="nobody") == [] and m.search(user="nobody", query="tea") == []
    recalled = m.recall(user="nobody", question="hello?")
    assert (recalled.user_known, recalled.context, recalled.injected) == (False, "", False)


def test_search_correct_pin_and_forget_by_id_prefix(m: Memory) -> None:
    m.record(user="ana", messages=["I prefer green tea", "I live in Porto", "I work as a nurse in Lisbon"])
    [tea] = [hit.memory for hit in m.search(user="ana", query="tea")][:1]
    short = tea.memory_id[:8]
    corrected = m.correct("ana", short, "User prefers jasmine tea")
    assert [(c.memory, c.previous) for c in corrected] == [("User prefers jasmine tea", "User prefers green tea")]
    assert [c.event for c in m.pin("ana", short)] == ["pinned"]
    assert {r.memory_id: r.pinned for r in m.memories(user="ana")}[tea.memory_id] is True
    assert [s.change for s in m.history("ana", short)][-2:] == ["corrected", "pinned"]
    assert [c.memory for c in m.forget("ana", short)] == ["User prefers jasmine tea"]
    with pytest.raises(NotFound):
        m.forget("ana", short)
    assert len(m.forget("ana", everything=True)) == 2 and m.memories(user="ana") == []


def test_misuse_is_refused_in_plain_words(m: Memory, tmp_path: Path) -> None:
    with pytest.raises(BadRequest, match="role, content"):
        m.record(user="ana", messages=[{"text": "I prefer tea"}])
    with pytest.raises(BadRequest, match="exactly one"):
        m.forget("ana")
    with pytest.raises(DataDirBusy):
        Memory(data=tmp_path / "memory", env={})


def test_ids_are_named_memory_id_and_the_old_name_warns(m: Memory) -> None:
    [created] = m.record(user="ana", messages="I live in Porto")
    assert created.memory_id == m.memories(user="ana")[0].memory_id
    with pytest.warns(DeprecationWarning, match="memory_id"):
        assert created.id == created.memory_id
    recalled = m.recall(user="ana", question="Where do I live?").items
    assert [(i.kind, i.item_id, i.memory_id, i.card_id) for i in recalled] == [
        ("memory", created.memory_id, created.memory_id, None)]


def test_every_operation_of_the_other_doors_is_here_with_their_names(m: Memory) -> None:
    m.record(user="ana", session="s1", messages=["I prefer green tea", "I live in Porto"] * 6)
    [tea] = [hit.memory for hit in m.search("ana", "tea")][:1]
    assert m.memory("ana", tea.memory_id[:6]).content == "User prefers green tea"
    m.pin("ana", tea.memory_id)
    assert [c.event for c in m.unpin("ana", tea.memory_id)] == ["unpinned"]
    assert m.summary("ana", "s1").session_id == "s1"
    with pytest.raises(NotFound) as missing:
        m.summary("ana", "never")
    assert missing.value.code == "unknown_session"
    recalled = m.recall("ana", "Which tea do I like?")
    assert m.feedback("ana", recalled.recall_id, "good").rating == 1
    preview = m.forget("ana", topic="tea", dry_run=True)
    assert [r.memory for r in preview] == ["User prefers green tea"] and len(m.memories("ana")) == 2
    assert [r.content for r in m.memories("ana", status="all")] != []


def test_the_names_of_the_first_release_still_work_and_warn(m: Memory) -> None:
    [created] = m.record(user="ana", messages="I prefer green tea")
    with pytest.warns(DeprecationWarning, match="'text' is deprecated: use content"):
        m.correct("ana", created.memory_id, text="User prefers jasmine tea")
    with pytest.warns(DeprecationWarning, match="include_all"):
        assert [r.content for r in m.memories("ana", include_all=True)] == ["User prefers jasmine tea"]
    m.pin("ana", created.memory_id)
    with pytest.warns(DeprecationWarning, match="pinned"):
        assert [c.event for c in m.pin("ana", created.memory_id, pinned=False)] == ["unpinned"]
    with pytest.warns(DeprecationWarning, match="memory_id"):
        assert len(m.forget("ana", memory_id=created.memory_id)) == 1


def test_bad_arguments_are_refused_as_on_the_other_doors(m: Memory) -> None:
    [created] = m.record(user="ana", messages="I prefer green tea")
    with pytest.raises(BadRequest, match="limit must be between 1 and 100"):
        m.search("ana", "tea", limit=-1)
    with pytest.raises(BadRequest, match="empty"):
        m.search("ana", "  ")
    with pytest.raises(BadRequest, match="question"):
        m.recall("ana", "")
    with pytest.raises(BadRequest, match="too short") as short:
        m.memory("ana", created.memory_id[:3])
    assert short.value.code == "prefix_too_short"
    with pytest.raises(NotFound) as stranger:
        m.history("nobody", created.memory_id)
    assert stranger.value.code == "unknown_user"
