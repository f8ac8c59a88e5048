"""A correction replaces what a memory is found by: the old text's words no longer find or forget it, and
control characters of the correction are not stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram import Memory
from engram.access.errors import BadRequest


def test_a_corrected_memory_is_no_longer_found_or_forgotten_by_its_old_words(tmp_path: Path) -> None:
    with Memory(tmp_path / "data") as memory:
        [java] = memory.record(user="ana", messages="I am a Java developer")
        assert [m.memory.memory_id for m in memory.search(user="ana", query="Java")] == [java.memory_id]
        memory.correct("ana", java.memory_id, "User is a Go\x00 developer\x1b[31m")
        [record] = memory.memories(user="ana")
        assert record.content == "User is a Go developer[31m"
        assert "java" not in " ".join((record.topic or "", *record.keywords, *record.entities)).lower()
        assert memory.search(user="ana", query="Java") == []
        assert [m.memory.memory_id for m in memory.search(user="ana", query="Go developer")] == [java.memory_id]
        assert memory.forget(user="ana", topic="Java") == []
        assert [m.memory_id for m in memory.memories(user="ana")] == [java.memory_id]
        with pytest.raises(BadRequest, match="visible"):
            memory.correct("ana", java.memory_id, "\u200b\x07")
