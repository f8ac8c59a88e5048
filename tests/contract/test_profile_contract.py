"""The standing profile on every store back end: the same entries pushed, the same ones held back."""

from __future__ import annotations

from datetime import timedelta

from engram.core.config import DEFAULT_CONFIG
from engram.projections.ports import MemoryStore
from engram.recall.service import RecallRequest, RecallService
from engram.schemas.memory import MemoryType
from tests.contract.test_store_contract import EMBED, T0, _put, _record, store  # noqa: F401 (the fixture)


def _recall(store: MemoryStore, question: str) -> str:  # noqa: F811
    service = RecallService(store, EMBED, DEFAULT_CONFIG)
    return service.recall(RecallRequest("t", "u", "a", "new-session", question, T0 + timedelta(days=3))).memory_section


def test_the_profile_is_pushed_and_gated_the_same_on_every_store(store: MemoryStore) -> None:  # noqa: F811
    _put(store, _record("diet", "User is lactose intolerant", layer="L3", memory_type=MemoryType.USER_CONSTRAINT))
    _put(store, _record("mood", "User has been dealing with depression", layer="L3", memory_type=MemoryType.USER_FACT))
    _put(store, _record("city", "用户住在苏州", layer="L3", memory_type=MemoryType.USER_FACT))
    store.flush()
    lunch = _recall(store, "Any ideas for a quick bite?")
    assert "lactose" in lunch and "苏州" in lunch and "depression" not in lunch
    assert store.delete_memory("t", "u", "diet")
    store.flush()
    assert "lactose" not in _recall(store, "Any ideas for a quick bite?")


def test_the_extraction_mark_is_kept_and_gates_the_same_on_every_store(store: MemoryStore) -> None:  # noqa: F811
    marked = _record("bed", "User keeps a strict bedtime at 9", layer="L3", memory_type=MemoryType.USER_FACT)
    _put(store, marked.model_copy(update={"sensitive": ("mental",)}))
    _put(store, _record("job", "User teaches chemistry at a college", layer="L3", memory_type=MemoryType.USER_PROFILE))
    store.flush()
    kept = store.get_memory("t", "u", "bed")
    assert kept is not None and kept.sensitive == ("mental",)
    persona = {r.memory_id: r.sensitive for r in store.persona_memories("t", "u")}
    assert "bed" in persona and persona["bed"] == ("mental",)
    resume = _recall(store, "Write a short bio for my teaching portfolio")
    assert "chemistry" in resume and "bedtime" not in resume
    assert "bedtime" in _recall(store, "I feel low and anxious lately, how do I cope?")
