"""Forget-everything reaches every projection, and a rebuild from the log agrees."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from engram.recall.service import RecallRequest
from engram.runtime.engine import EmbeddedRuntime
from engram.schemas.events import ForgetRequested
from tests.drivers import T0, turn

FACTS = ["I prefer green tea in the morning", "My name is Ana Lima", "I work as a nurse in Lisbon",
         "I love hiking in the mountains on weekends", "I plan to learn Rust this year",
         "I don't like coffee at all", "I live in Porto", "I always run before breakfast",
         "I need vegetarian recipes for dinner", "I prefer short answers with examples"]


def _forget_everything(runtime: EmbeddedRuntime, user: str) -> None:
    runtime.append([ForgetRequested(event_id=f"forget-{user}", occurred_at=datetime(2026, 2, 1, tzinfo=timezone.utc),
                                    tenant_id="t1", user_id=user, everything=True)])


def test_forget_everything_clears_memories_summaries_and_the_window_of_that_user_only(tmp_path: Path) -> None:
    with EmbeddedRuntime(tmp_path / "r") as runtime:
        runtime.ingest([turn(f, user=u) for u in ("u1", "u2") for f in FACTS])
        assert runtime.store.latest_summary("t1", "u1", "s1") is not None
        _forget_everything(runtime, "u1")
        store = runtime.store
        assert store.list_memories("t1", "u1") == [] and store.latest_summary("t1", "u1", "s1") is None
        assert store.recent_turns("t1", "u1", "s1", 10) == [] and store.has_session("t1", "u1", "s1")
        assert len(store.list_memories("t1", "u2")) >= 8 and store.latest_summary("t1", "u2", "s1") is not None
        result = runtime.recall(RecallRequest("t1", "u1", "a1", "s1", "What tea do I like?", T0))
        assert result.memory_section == "" and result.recent == []
        before = store.state_hash()
        assert runtime.replay() == before


def test_turns_after_forget_everything_are_remembered_again(tmp_path: Path) -> None:
    with EmbeddedRuntime(tmp_path / "r") as runtime:
        runtime.ingest([turn(f) for f in FACTS[:3]])
        _forget_everything(runtime, "u1")
        runtime.ingest([turn("I prefer oolong tea", at=datetime(2026, 3, 1, tzinfo=timezone.utc))])
        assert [m.content for m in runtime.store.list_memories("t1", "u1")] == ["User prefers oolong tea"]
        assert [t.content for t in runtime.store.recent_turns("t1", "u1", "s1", 10)] == ["I prefer oolong tea"]
        assert runtime.replay() == runtime.store.state_hash()


def _found(runtime: EmbeddedRuntime, user: str, words: str) -> list[str]:
    return [h.turn.content for h in runtime.store.search_turns("t1", user, words, 10)]


def test_the_turn_index_forgets_with_the_memories(tmp_path: Path) -> None:
    with EmbeddedRuntime(tmp_path / "r") as runtime:
        runtime.ingest([turn(f, user=u) for u in ("u1", "u2") for f in FACTS])
        assert _found(runtime, "u1", "nurse Lisbon") == ["I work as a nurse in Lisbon"]
        nurse = next(m for m in runtime.store.list_memories("t1", "u1") if "nurse" in m.content)
        runtime.append([ForgetRequested(event_id="forget-nurse", occurred_at=datetime(2026, 2, 1, tzinfo=timezone.utc),
                                        tenant_id="t1", user_id="u1", memory_ids=(nurse.memory_id,))])
        assert _found(runtime, "u1", "nurse Lisbon") == [] and _found(runtime, "u1", "Porto") == ["I live in Porto"]
        result = runtime.recall(RecallRequest("t1", "u1", "a1", "s2", "Where do I work as a nurse?", T0))
        assert "nurse" not in result.memory_section
        _forget_everything(runtime, "u1")
        assert _found(runtime, "u1", "Porto") == [] and _found(runtime, "u2", "Porto") == ["I live in Porto"]
        assert runtime.replay() == runtime.store.state_hash()
