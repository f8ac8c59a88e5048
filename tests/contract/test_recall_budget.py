"""The token budget bounds the whole rendered context, on every store back end.

Random memories (English, Chinese, mixed), a global card, a session summary and the recent window, recalled
with budgets from 10 to 4,000 tokens: the context's estimate never exceeds the budget, `tokens` reports it,
and the context is empty only when nothing was recalled or no recalled item fits the budget alone.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.core.config import EngramConfig
from engram.core.embedding import HashingEmbedder
from engram.core.text import estimate_tokens
from engram.projections.ports import MemoryStore, RecentTurn
from engram.recall.budget import pack
from engram.recall.context import RecalledItem, render_memory_section, without_context_turns
from engram.recall.service import RecallRequest, RecallService
from engram.schemas.events import SummarySnapshotted
from engram.schemas.memory import GlobalCard, MemoryRecord, MemoryType, SummarySections
from tests.contract.test_store_contract import opened_store

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
EMBED = HashingEmbedder()
WORDS = {
    "en": ["tea", "kayak", "Berlin", "violin", "sister", "marathon", "garden", "Python", "piano", "recipe",
           "December", "2023", "bakery", "lake", "novel", "Emma"],
    "zh": ["茶", "皮划艇", "柏林", "小提琴", "姐姐", "马拉松", "花园", "钢琴", "食谱", "面包店", "湖", "小说"],
}


@pytest.fixture(scope="module", params=["embedded", pytest.param("weaviate", marks=pytest.mark.weaviate)])
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryStore]:
    folder = tmp_path_factory.mktemp("budget")
    with opened_store(request.param, request, folder, f"budget{uuid.uuid4().hex[:8]}") as opened:
        yield opened


def _sentence(draw: st.DrawFn, language: str) -> str:
    words = draw(st.lists(st.sampled_from(WORDS[language]), min_size=1, max_size=40))
    if language == "zh":
        return "用户" + "".join(words)
    return "User " + " ".join(words) + draw(st.sampled_from(["", ".", " (since May)", " — \"quoted\""]))


@st.composite
def histories(draw: st.DrawFn) -> dict[str, object]:
    languages = st.sampled_from(["en", "zh", "mixed"])
    memories = []
    for n in range(draw(st.integers(0, 30))):
        language = draw(languages)
        text = _sentence(draw, language) if language != "mixed" else _sentence(draw, "en") + _sentence(draw, "zh")
        memories.append((f"m{n}", text, draw(st.sampled_from(list(MemoryType))), draw(st.integers(0, 400))))
    question_language = draw(languages)
    question = " ".join(draw(st.lists(st.sampled_from(WORDS["en"] + WORDS["zh"]), min_size=1, max_size=6)))
    if question_language == "zh":
        question = "我的" + question
    return {"memories": memories, "question": question, "card": draw(st.booleans()),
            "summary": draw(st.booleans()), "budget": draw(st.integers(10, 4000))}


def _fill(store: MemoryStore, user: str, history: dict[str, object]) -> None:
    for memory_id, text, memory_type, hours in history["memories"]:  # type: ignore[attr-defined]
        at = T0 + timedelta(hours=hours)
        record = MemoryRecord(memory_id=memory_id, tenant_id="t", user_id=user, type=memory_type,
                              slot=memory_type.value, layer="L1", content=text, confidence=0.8, importance=0.5,
                              status="active", source_message_ids=(f"turn-{memory_id}",), session_id="s1",
                              version=1, created_at=at, updated_at=at, last_seen_at=at)
        store.upsert_memory("t", user, record, EMBED.embed_one(text))
    store.add_turn("t", user, RecentTurn("s1", "w1", "user", "Tell me about my week", T0, 0))
    if history["card"]:
        store.upsert_card("t", user, GlobalCard(card_id="c1", tenant_id="t", user_id=user, name="Sam",
                                                profile="A violin teacher in Berlin who bakes on weekends",
                                                created_at=T0, updated_at=T0))
    if history["summary"]:
        store.upsert_summary("t", user, SummarySnapshotted(
            event_id=f"e-{user}", occurred_at=T0, tenant_id="t", user_id=user, session_id="s1",
            summary_id=f"sum-{user}", version=1, range_start_message_id="w1", range_end_message_id="w1",
            source_message_count=1, total_message_count=1,
            sections=SummarySections(current_topic=("the week's plans, 本周计划",))))
    store.flush()


def _alone(item: RecalledItem, question: str) -> int:
    return estimate_tokens(render_memory_section([without_context_turns(item)], question))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(history=histories())
def test_the_budget_bounds_the_whole_context(store: MemoryStore, history: dict[str, object]) -> None:
    user = f"u-{uuid.uuid4().hex[:12]}"
    _fill(store, user, history)
    service = RecallService(store, EMBED, EngramConfig())
    question, budget = str(history["question"]), int(history["budget"])  # type: ignore[call-overload]
    result = service.recall(RecallRequest("t", user, "a", "s1", question, T0 + timedelta(days=30),
                                          token_budget=budget, limit=100))
    assert estimate_tokens(result.memory_section) == result.tokens <= budget
    assert estimate_tokens(result.memory_section) >= len(result.memory_section) / 4
    assert (result.memory_section == "") == (not result.items)
    if not result.items:  # nothing recalled, or nothing recalled fits the budget on its own
        assert all(_alone(item, question) > budget for item in result.left_out)


@given(budget=st.integers(10, 4000), sizes=st.lists(st.integers(1, 300), max_size=40), zh=st.booleans())
def test_pack_keeps_priority_order_and_skips_only_what_does_not_fit(budget: int, sizes: list[int],
                                                                    zh: bool) -> None:
    word = "茶" if zh else "tea "
    items = [RecalledItem("memory", f"m{n}", word * size, 1.0, 0, details={"type": f"t{n % 3}"},
                          event_time=T0) for n, size in enumerate(sizes)]
    question = "茶?" if zh else "tea?"
    packing = pack(items, question, budget)
    assert packing.tokens == estimate_tokens(packing.section) <= budget
    assert [i.item_id for i in packing.kept] == [i.item_id for i in items if i.item_id in
                                                  {k.item_id for k in packing.kept}]
    assert len(packing.kept) + len(packing.left_out) == len(items)
    if items and not packing.kept:
        assert all(_alone(i, question) > budget for i in items)
