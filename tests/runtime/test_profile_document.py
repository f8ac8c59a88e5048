"""The versioned profile document on the embedded runtime: the controls change it, every door reads it,
replay rebuilds it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engram import Memory
from engram.access.models import ProfileResponse
from engram.schemas.events import ProfileChanged


@pytest.fixture
def m(tmp_path: Path) -> Iterator[Memory]:
    with Memory(data=tmp_path / "memory", env={"ENGRAM_EMBEDDER": "hashing"}) as memory:
        yield memory


def _said(m: Memory) -> ProfileResponse:
    m.record(user="ana", messages=["I'm lactose intolerant.", "I live in Lisbon.", "I have two kids."])
    profile = m.profile(user="ana")
    assert profile.version >= 1 and len(profile.entries) >= 3
    return profile


def _entry(profile: ProfileResponse, word: str) -> str:
    return next(e.memory_id for e in profile.entries if word in e.content)


def _changes(m: Memory) -> list[ProfileChanged]:
    runtime = m.runtime.runtime  # type: ignore[attr-defined]
    return [e for _, e in runtime.log.scan(types=("ProfileChanged",)) if isinstance(e, ProfileChanged)]


def test_a_correction_a_pin_and_a_forget_each_change_the_profile_version(m: Memory) -> None:
    profile = _said(m)
    lisbon = _entry(profile, "Lisbon")
    m.correct("ana", lisbon, "User lives in Porto")
    corrected = m.profile(user="ana")
    assert corrected.version == profile.version + 1
    assert any(e.memory_id == lisbon and "Porto" in e.content for e in corrected.entries)
    m.pin("ana", lisbon)
    pinned = m.profile(user="ana")
    assert pinned.version == corrected.version + 1 and pinned.entries[0].memory_id == lisbon  # pinned first
    m.forget("ana", lisbon)
    forgotten = m.profile(user="ana")
    assert forgotten.version == pinned.version + 1 and lisbon not in {e.memory_id for e in forgotten.entries}
    last = _changes(m)[-1]
    assert [(r.memory_id, r.reason) for r in last.removed] == [(lisbon, "forgotten")]
    assert last.source_memory_ids == (lisbon,) and last.causation_ids


def test_forgetting_everything_empties_the_profile_at_a_new_version(m: Memory) -> None:
    profile = _said(m)
    m.forget("ana", everything=True)
    emptied = m.profile(user="ana")
    # one change per memory forgotten (each names its memory change)
    assert emptied.entries == [] and emptied.version == profile.version + len(profile.entries)
    last = _changes(m)[-len(profile.entries):]
    assert {r.memory_id for e in last for r in e.removed} == {e.memory_id for e in profile.entries}
    assert {r.reason for e in last for r in e.removed} == {"forgotten"} and last[-1].entry_count == 0
    m.record(user="ana", messages=["I'm allergic to peanuts."])  # a new profile after the old key is gone
    runtime = m.runtime.runtime  # type: ignore[attr-defined]
    after = (m.profile(user="ana"), runtime.store.state_hash())
    assert [e.content for e in after[0].entries] == ["User is allergic to peanuts"]
    assert m.runtime.replay() == after[1] and m.profile(user="ana") == after[0]


def test_replaying_the_log_rebuilds_the_same_document(m: Memory) -> None:
    profile = _said(m)
    m.record(user="ana", messages=["I moved to Berlin last month."])
    m.pin("ana", _entry(profile, "kids"))
    runtime = m.runtime.runtime  # type: ignore[attr-defined]
    before = (m.profile(user="ana"), runtime.store.profile_document("default", "ana"), runtime.store.state_hash())
    assert "Lisbon" not in {e.content for e in before[0].entries}  # the move superseded it
    assert m.runtime.replay() == before[2]
    assert (m.profile(user="ana"), runtime.store.profile_document("default", "ana")) == before[:2]


def test_recall_pushes_only_the_document_entries(m: Memory) -> None:
    profile = _said(m)
    m.forget("ana", _entry(profile, "lactose"))
    recalled = m.recall(user="ana", question="Any ideas for a quick bite?", session="new")
    assert "lactose" not in recalled.context and "Lisbon" in recalled.context
